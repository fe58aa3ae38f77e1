//! What the generated host code calls: argument checks before anything runs,
//! the time levels of the reference and OpenMP runs ([`Levels`]) and the
//! scratch grids they reuse ([`Workspace`]), periodic wrapping, integer
//! powers, the copy of a fixed boundary's frame, and whole-grid copies and
//! fills over the cores.

mod levels;
mod parallel;
mod workspace;

pub use levels::{Fused, Io, Levels};
pub use parallel::{copy, fill};
pub use workspace::Workspace;

use crate::StencilError;

/// Checks `shape` against the stencil's smallest extents (`min`, per axis
/// named in `axes`) and returns its cell count, which fits in `isize`.
pub fn cells(
    stencil: &'static str,
    axes: &[&'static str],
    shape: &[usize],
    min: &[usize],
) -> Result<usize, StencilError> {
    for ((&axis, &extent), &min) in axes.iter().zip(shape).zip(min) {
        if extent < min {
            return Err(StencilError::ShapeTooSmall {
                stencil,
                axis,
                extent,
                min,
            });
        }
    }
    shape
        .iter()
        .try_fold(1usize, |n, &e| n.checked_mul(e))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or(StencilError::ShapeOverflow { stencil })
}

/// Checks that grid `field` holds one value per cell: `actual == expected`.
pub fn check_len(
    stencil: &'static str,
    field: &'static str,
    expected: usize,
    actual: usize,
) -> Result<(), StencilError> {
    if expected == actual {
        Ok(())
    } else {
        Err(StencilError::LengthMismatch {
            stencil,
            field,
            expected,
            actual,
        })
    }
}

/// The coordinate `i + d` wrapped onto `0..n`.
#[inline]
pub fn wrap(i: usize, d: isize, n: usize) -> usize {
    (i as isize + d).rem_euclid(n as isize) as usize
}

/// The coordinate `i + d` mirrored about the edge cell it passed (`-k`
/// reads `k`, `n - 1 + k` reads `n - 1 - k`): a reflecting boundary.
#[inline]
pub fn reflect(i: usize, d: isize, n: usize) -> usize {
    let x = i as isize + d;
    let last = n as isize - 1;
    (if x < 0 {
        -x
    } else if x > last {
        2 * last - x
    } else {
        x
    }) as usize
}

/// `x^n` by repeated multiplication, the way every backend computes it (so
/// that the reference rounds as the kernels do).
#[inline]
pub fn powi<T>(x: T, n: i32) -> T
where
    T: Copy + std::ops::Mul<Output = T> + std::ops::Div<Output = T> + From<f32>,
{
    let mut r = T::from(1.0);
    for _ in 0..n.unsigned_abs() {
        r = r * x;
    }
    if n < 0 { T::from(1.0) / r } else { r }
}

/// Copies the cells within `radius` (per axis) of an edge of a grid of
/// `shape` from `src` to `dst`: the frame a fixed boundary keeps, which a
/// step does not write. Grids of many rows share them among the cores
/// (`parallel::spread_frame`): the frame holds both ends of every row.
pub fn copy_frame<T: Copy + Send + Sync>(
    src: &[T],
    dst: &mut [T],
    shape: &[usize],
    radius: &[usize],
) {
    let n = shape[shape.len() - 1];
    parallel::spread_frame(dst, n, |rows, at| {
        copy_frame_rows(src, rows, at / n.max(1), shape, radius)
    });
}

/// [`copy_frame`] for the rows `dst` holds, the first of them row `first`
/// of the grid.
fn copy_frame_rows<T: Copy>(
    src: &[T],
    dst: &mut [T],
    first: usize,
    shape: &[usize],
    radius: &[usize],
) {
    let (rows, last) = shape.split_at(shape.len() - 1);
    let (n, r) = (last[0], radius[radius.len() - 1]);
    for (k, out) in dst.chunks_exact_mut(n.max(1)).enumerate() {
        let mut rest = first + k;
        let mut edge = false;
        for (a, &extent) in rows.iter().enumerate().rev() {
            let i = rest % extent;
            rest /= extent;
            edge |= i < radius[a] || i >= extent - radius[a];
        }
        let base = (first + k) * n;
        if edge {
            out.copy_from_slice(&src[base..base + n]);
        } else {
            out[..r].copy_from_slice(&src[base..base + r]);
            out[n - r..].copy_from_slice(&src[base + n - r..base + n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_checks_each_axis_then_the_count() {
        assert_eq!(cells("s", &["y", "x"], &[3, 4], &[3, 3]), Ok(12));
        assert_eq!(
            cells("s", &["y", "x"], &[3, 2], &[3, 3]),
            Err(StencilError::ShapeTooSmall {
                stencil: "s",
                axis: "x",
                extent: 2,
                min: 3
            })
        );
        assert_eq!(
            cells("s", &["y", "x"], &[usize::MAX / 2, 3], &[3, 3]),
            Err(StencilError::ShapeOverflow { stencil: "s" })
        );
        assert!(check_len("s", "u", 12, 11).is_err());
        assert!(check_len("s", "u", 12, 12).is_ok());
    }

    #[test]
    fn wrap_and_powi() {
        assert_eq!(wrap(0, -1, 5), 4);
        assert_eq!(wrap(4, 2, 5), 1);
        assert_eq!(powi(2.0f64, 3), 8.0);
        assert_eq!(powi(2.0f32, -2), 0.25);
        assert_eq!(powi(7.0f64, 0), 1.0);
    }

    #[test]
    fn copy_frame_copies_only_the_frame() {
        let shape = [4, 5];
        let src: Vec<u32> = (0..20).collect();
        let mut dst = vec![99; 20];
        copy_frame(&src, &mut dst, &shape, &[1, 1]);
        for i in 0..4 {
            for j in 0..5 {
                let frame = i == 0 || i == 3 || j == 0 || j == 4;
                assert_eq!(dst[i * 5 + j] == src[i * 5 + j], frame, "({i}, {j})");
            }
        }
    }

    #[test]
    fn a_large_grid_s_frame_is_copied_over_the_cores_as_one_thread_would() {
        // 2 x 8192 rows and more, so that they are shared out (among 2
        // threads at least where the machine has 2 cores), unevenly.
        let (shape, radius) = ([83, 203, 31], [2, 1, 3]);
        let cells: usize = shape.iter().product();
        let src: Vec<u32> = (0..cells as u32).collect();
        let mut dst = vec![u32::MAX; cells];
        copy_frame(&src, &mut dst, &shape, &radius);
        for (c, (&d, &s)) in dst.iter().zip(&src).enumerate() {
            let at = [c / (203 * 31), c / 31 % 203, c % 31];
            let frame = (0..3).any(|a| at[a] < radius[a] || at[a] >= shape[a] - radius[a]);
            assert_eq!(d == s, frame, "{at:?}");
            assert!(frame || d == u32::MAX, "{at:?}");
        }
    }
}
