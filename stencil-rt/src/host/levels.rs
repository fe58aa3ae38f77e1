//! [`Levels`]: the time levels of one state field on the host, rotated each
//! step instead of copied.

/// The time levels of one state field: the caller's buffers and scratch
/// buffers, rotated each step instead of copied; [`Levels::finish`] moves
/// every level back into the buffer the caller passed for it.
pub struct Levels<'a, T> {
    /// Physical buffers: `[prev,] cur, next` at turn 0.
    bufs: Vec<&'a mut [T]>,
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

impl<'a, T> Levels<'a, T> {
    /// `bufs` in order `[prev,] cur, next`, all of one length: two or three.
    pub fn new(bufs: Vec<&'a mut [T]>) -> Self {
        assert!(
            (2..=3).contains(&bufs.len()),
            "a field has two or three buffers"
        );
        Levels { bufs, turn: 0 }
    }

    fn physical(&self, level: usize) -> usize {
        (level + self.turn) % self.bufs.len()
    }

    /// The level computed this step (valid once its statement ran).
    pub fn next(&self) -> &[T] {
        self.bufs[self.physical(self.bufs.len() - 1)]
    }

    /// The level at the start of the step.
    pub fn cur(&self) -> &[T] {
        self.bufs[self.physical(self.bufs.len() - 2)]
    }

    /// The previous level (the current one for fields of one level).
    pub fn prev(&self) -> &[T] {
        self.bufs[self.physical(0)]
    }

    /// Borrows the levels for the statement that writes this field.
    pub fn io(&mut self) -> Io<'_, T> {
        let len = self.bufs.len();
        let (p, c, n) = (
            self.physical(0),
            self.physical(len - 2),
            self.physical(len - 1),
        );
        let (mut prev, mut cur, mut next) = (None, None, None);
        for (i, b) in self.bufs.iter_mut().enumerate() {
            if i == n {
                next = Some(&mut **b);
            } else if i == c {
                cur = Some(&**b);
            } else if i == p {
                prev = Some(&**b);
            }
        }
        let cur = cur.expect("levels hold a current buffer");
        Io {
            prev: prev.unwrap_or(cur),
            cur,
            next: next.expect("levels hold a next buffer"),
        }
    }

    /// Ends a step: the next level becomes current.
    pub fn advance(&mut self) {
        self.turn += 1;
    }

    /// Copies every level back into the buffer the caller passed for it
    /// (the scratch buffer's values are then of no use).
    pub fn finish(mut self)
    where
        T: Copy + Send + Sync,
    {
        let len = self.bufs.len();
        // (to, from) buffer pairs, in an order that reads each buffer
        // before it is written.
        let moves: &[(usize, usize)] = match (len, self.turn % len) {
            (_, 0) => &[],
            (2, _) => &[(0, 1)],
            (_, 1) => &[(0, 1), (1, 2)],
            _ => &[(1, 0), (0, 2)],
        };
        for &(to, from) in moves {
            let (lo, hi) = self.bufs.split_at_mut(to.max(from));
            let (dst, src) = if to < from {
                (&mut *lo[to], &*hi[0])
            } else {
                (&mut *hi[0], &*lo[from])
            };
            super::parallel::copy(dst, src);
        }
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
