//! [`Levels`]: the time levels of one state field on the host, rotated each
//! step instead of copied.

/// The time levels of one state field: the caller's buffers and scratch
/// buffers, rotated each step instead of copied; [`Levels::finish`] moves
/// every level back into the buffer the caller passed for it.
pub struct Levels<'a, T> {
    /// Physical buffers: `[prev,] cur, next[, spare]` at turn 0.
    bufs: Vec<&'a mut [T]>,
    /// Time levels the field keeps: 1, or 2 with `prev`.
    levels: usize,
    turn: usize,
}

/// One statement's view of the levels of the field it writes.
pub struct Io<'b, T> {
    /// The previous level (the current one for fields of one level).
    pub prev: &'b [T],
    /// The level at the start of the step.
    pub cur: &'b [T],
    /// The level being computed.
    pub next: &'b mut [T],
}

/// A fused launch's view of a two-level field's buffers
/// ([`Levels::with_spare`]): it reads `prev` and `cur` and leaves the
/// launch's last two levels in `aux` (the one before the last) and `out`.
pub struct Fused<'b, T> {
    /// The level before `cur`.
    pub prev: &'b [T],
    /// The level at the start of the launch.
    pub cur: &'b [T],
    /// Receives the level one step before the launch's last.
    pub aux: &'b mut [T],
    /// Receives the launch's last level.
    pub out: &'b mut [T],
}

impl<'a, T> Levels<'a, T> {
    /// `bufs` in order `[prev,] cur, next`, all of one length: two or three.
    pub fn new(bufs: Vec<&'a mut [T]>) -> Self {
        assert!(
            (2..=3).contains(&bufs.len()),
            "a field has two or three buffers"
        );
        let levels = bufs.len() - 1;
        Levels {
            bufs,
            levels,
            turn: 0,
        }
    }

    /// `bufs` in order `prev, cur, next, spare`, all of one length: a
    /// two-level field with room for [`Levels::fused`] launches, which
    /// write two levels at once.
    pub fn with_spare(bufs: Vec<&'a mut [T]>) -> Self {
        assert_eq!(bufs.len(), 4, "a field with a spare buffer has four");
        Levels {
            bufs,
            levels: 2,
            turn: 0,
        }
    }

    fn physical(&self, level: usize) -> usize {
        (level + self.turn) % self.bufs.len()
    }

    /// The level computed this step (valid once its statement ran).
    pub fn next(&self) -> &[T] {
        self.bufs[self.physical(self.levels)]
    }

    /// The level at the start of the step.
    pub fn cur(&self) -> &[T] {
        self.bufs[self.physical(self.levels - 1)]
    }

    /// The previous level (the current one for fields of one level).
    pub fn prev(&self) -> &[T] {
        self.bufs[self.physical(0)]
    }

    /// Borrows the buffers at logical positions `read` (shared) and
    /// `write` (exclusive), all distinct but where two reads coincide.
    fn split<const R: usize, const W: usize>(
        &mut self,
        read: [usize; R],
        write: [usize; W],
    ) -> ([&[T]; R], [&mut [T]; W]) {
        let read = read.map(|l| self.physical(l));
        let write = write.map(|l| self.physical(l));
        let mut shared: [Option<&[T]>; R] = [None; R];
        let mut exclusive: [Option<&mut [T]>; W] = std::array::from_fn(|_| None);
        for (i, b) in self.bufs.iter_mut().enumerate() {
            if let Some(w) = write.iter().position(|&p| p == i) {
                exclusive[w] = Some(&mut **b);
            } else {
                let b: &[T] = b;
                for (r, &p) in read.iter().enumerate() {
                    if p == i {
                        shared[r] = Some(b);
                    }
                }
            }
        }
        (
            shared.map(|b| b.expect("levels hold every buffer read")),
            exclusive.map(|b| b.expect("levels hold every buffer written")),
        )
    }

    /// Borrows the levels for the statement that writes this field.
    pub fn io(&mut self) -> Io<'_, T> {
        let levels = self.levels;
        let ([prev, cur], [next]) = self.split([0, levels - 1], [levels]);
        Io { prev, cur, next }
    }

    /// Borrows the buffers of a fused launch of a field made
    /// [`Levels::with_spare`]; [`Levels::advance_fused`] then ends it.
    pub fn fused(&mut self) -> Fused<'_, T> {
        assert_eq!(self.bufs.len(), 4, "fused launches need a spare buffer");
        let ([prev, cur], [aux, out]) = self.split([0, 1], [2, 3]);
        Fused {
            prev,
            cur,
            aux,
            out,
        }
    }

    /// Ends a step: the next level becomes current.
    pub fn advance(&mut self) {
        self.turn += 1;
    }

    /// Ends a fused launch: `aux` becomes the previous level, `out` the current one.
    pub fn advance_fused(&mut self) {
        self.turn += 2;
    }

    /// Copies every level back into the buffer the caller passed for it
    /// (the scratch buffers' values are then of no use).
    pub fn finish(mut self)
    where
        T: Copy + Send + Sync,
    {
        // (to, from) pairs: level `j` belongs in buffer `j`. A buffer is
        // written only once no pending move reads it; a scratch buffer is
        // never a destination, so the moves hold no cycle.
        let mut moves: Vec<(usize, usize)> = (0..self.levels)
            .map(|j| (j, self.physical(j)))
            .filter(|&(to, from)| to != from)
            .collect();
        while let Some(k) = moves
            .iter()
            .position(|&(to, _)| moves.iter().all(|&(_, from)| from != to))
        {
            let (to, from) = moves.remove(k);
            let (lo, hi) = self.bufs.split_at_mut(to.max(from));
            let (dst, src) = if to < from {
                (&mut *lo[to], &*hi[0])
            } else {
                (&mut *hi[0], &*lo[from])
            };
            super::parallel::copy(dst, src);
        }
        debug_assert!(moves.is_empty(), "the moves back hold no cycle");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps of `next = cur + prev` through three levels: the values a
    /// leapfrog computes, back in the caller's buffers after any count.
    #[test]
    fn rotation_returns_levels_to_the_callers_buffers() {
        for steps in 0..7 {
            let (mut prev, mut cur, mut scratch) = (vec![0u64], vec![1u64], vec![0u64]);
            let mut levels = Levels::new(vec![&mut prev[..], &mut cur[..], &mut scratch[..]]);
            for _ in 0..steps {
                let io = levels.io();
                io.next[0] = io.cur[0] + io.prev[0];
                levels.advance();
            }
            levels.finish();
            let fib = |n: usize| (0..n).fold((0u64, 1u64), |(a, b), _| (b, a + b));
            assert_eq!((prev[0], cur[0]), fib(steps), "{steps} steps");
        }
    }

    /// Single steps and fused launches of two steps mixed, through a
    /// spare buffer: the same values in the caller's buffers after any
    /// order.
    #[test]
    fn fused_launches_and_single_steps_return_levels_to_the_callers_buffers() {
        let fib = |n: usize| (0..n).fold((0u64, 1u64), |(a, b), _| (b, a + b));
        for plan in 0u32..64 {
            let (mut prev, mut cur) = (vec![0u64], vec![1u64]);
            let (mut s1, mut s2) = (vec![7u64], vec![9u64]);
            let mut levels =
                Levels::with_spare(vec![&mut prev[..], &mut cur[..], &mut s1[..], &mut s2[..]]);
            let mut steps = 0;
            // Bit k of `plan` picks the k-th round: a fused launch of two
            // steps (1) or a single step (0); 6 rounds.
            for k in 0..6 {
                if plan >> k & 1 == 1 {
                    let f = levels.fused();
                    f.aux[0] = f.cur[0] + f.prev[0];
                    f.out[0] = f.aux[0] + f.cur[0];
                    levels.advance_fused();
                    steps += 2;
                } else {
                    let io = levels.io();
                    io.next[0] = io.cur[0] + io.prev[0];
                    levels.advance();
                    steps += 1;
                }
            }
            levels.finish();
            assert_eq!((prev[0], cur[0]), fib(steps), "plan {plan:06b}");
        }
    }

    #[test]
    fn one_level_fields_see_cur_as_prev() {
        let (mut cur, mut scratch) = (vec![5u8], vec![0u8]);
        let mut levels = Levels::new(vec![&mut cur[..], &mut scratch[..]]);
        let io = levels.io();
        assert_eq!(io.prev, io.cur);
        io.next[0] = 6;
        levels.advance();
        assert_eq!(levels.cur(), &[6]);
        assert_eq!(levels.next(), &[5]);
        levels.finish();
        assert_eq!(cur, [6]);
    }
}
