//! Whole-grid copies and fills spread over the machine's cores: a run's
//! setup and its last level's copy back would otherwise stream a grid
//! through one core, which on a many-core machine takes longer than the
//! steps of a short run.

use std::mem::MaybeUninit;

/// Values below which one thread does the work: starting threads costs
/// more than it saves.
const SERIAL: usize = 1 << 18;

/// The threads to share `len` values among.
fn threads(len: usize) -> usize {
    if len < SERIAL {
        return 1;
    }
    cores().min(len / (SERIAL / 4)).max(1)
}

/// The cores this process may run on.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Rows of a frame's copy a thread takes at least: such a copy touches
/// both ends of every row, a few cache lines, and one thread walks some
/// thousands of rows in the time threads take to start. On 16 cores,
/// runs of a step a call on 512^3 grids (262144 rows) ran 1.04x-1.49x as
/// fast with the frame copied over the cores as with one thread; j2d5pt on
/// 8192^2 (8192 rows) 0.81x-0.95x, so such grids keep one thread.
const FRAME_ROWS_A_THREAD: usize = 8192;

/// Runs `work` on pieces of `dst`, one thread a piece, each with the
/// index its piece starts at.
fn spread<D: Send>(dst: &mut [D], work: impl Fn(&mut [D], usize) + Sync) {
    let n = threads(dst.len());
    spread_over(dst, 1, n, work);
}

/// Runs `work` on pieces of `dst`, a grid of rows of `row` values, each a
/// piece of whole rows, over the cores where the rows are many
/// ([`FRAME_ROWS_A_THREAD`] a thread): a frame's copy.
pub(super) fn spread_frame<D: Send>(
    dst: &mut [D],
    row: usize,
    work: impl Fn(&mut [D], usize) + Sync,
) {
    let rows = dst.len() / row.max(1);
    let n = cores().min(rows / FRAME_ROWS_A_THREAD).max(1);
    spread_over(dst, row.max(1), n, work);
}

/// Runs `work` on `n` pieces of `dst` of whole rows of `row` values, one
/// thread a piece, each with the index its piece starts at.
fn spread_over<D: Send>(
    dst: &mut [D],
    row: usize,
    n: usize,
    work: impl Fn(&mut [D], usize) + Sync,
) {
    if n <= 1 {
        return work(dst, 0);
    }
    let piece = (dst.len() / row).div_ceil(n) * row;
    std::thread::scope(|scope| {
        let work = &work;
        for (k, d) in dst.chunks_mut(piece).enumerate() {
            scope.spawn(move || work(d, k * piece));
        }
    });
}

/// `dst.copy_from_slice(src)`, over the cores for large grids.
pub fn copy<T: Copy + Send + Sync>(dst: &mut [T], src: &[T]) {
    assert_eq!(dst.len(), src.len(), "a copy between grids of one size");
    spread(dst, |d, at| d.copy_from_slice(&src[at..at + d.len()]));
}

/// `dst.fill(value)`, over the cores for large grids.
pub fn fill<T: Copy + Send + Sync>(dst: &mut [T], value: T) {
    spread(dst, |d, _| d.fill(value));
}

/// Grows `grid` to `len` values, the new ones `value`, written over the
/// cores: each page is first touched by a thread of the run that uses it.
pub fn resize<T: Copy + Send + Sync>(grid: &mut Vec<T>, len: usize, value: T) {
    if len <= grid.len() {
        grid.truncate(len);
        return;
    }
    let old = grid.len();
    grid.reserve_exact(len - old);
    spread(&mut grid.spare_capacity_mut()[..len - old], |d, _| {
        d.fill(MaybeUninit::new(value))
    });
    // SAFETY: the `len - old` values after the first `old` were written just
    // above, and the capacity holds them (`reserve_exact`).
    unsafe { grid.set_len(len) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_copies_fills_and_growth_match_the_serial_ones() {
        let len = 3 * SERIAL + 17;
        let src: Vec<u32> = (0..len as u32).collect();
        let mut dst = vec![0u32; len];
        copy(&mut dst, &src);
        assert_eq!(dst, src);
        fill(&mut dst, 7);
        assert!(dst.iter().all(|&v| v == 7));
        let mut grid = vec![1u32; 5];
        resize(&mut grid, len, 9);
        assert_eq!(grid.len(), len);
        assert_eq!(&grid[..6], [1, 1, 1, 1, 1, 9]);
        assert!(grid[5..].iter().all(|&v| v == 9));
        resize(&mut grid, 3, 0);
        assert_eq!(grid, [1, 1, 1]);
        let mut small = [0u8; 4];
        copy(&mut small, &[1, 2, 3, 4]);
        assert_eq!(small, [1, 2, 3, 4]);
    }
}
