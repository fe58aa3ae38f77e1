//! The element types the cross-backend tests run, and the two loops the
//! harness runs over every cell of every grid: filling grids with random
//! values, and finding the worst difference from the reference.
//!
//! A crate of its own so that these loops build optimized while the tests'
//! crate of generated variants builds unoptimized (`[profile.test.package]`
//! in the workspace's manifest): each `Real` method is compiled here, for
//! `f32` and `f64`, whatever crate calls it.

use std::fmt::Debug;

/// The element types under test.
pub trait Real: Copy + Debug + PartialEq + Into<f64> + 'static {
    /// Machine epsilon.
    const EPSILON: f64;
    /// Rounds an f64.
    fn from_f64(v: f64) -> Self;
    /// Uniform values in [0.5, 1.5) from a fixed seed (splitmix64).
    fn random_grid(cells: usize, seed: u64) -> Vec<Self>;
    /// Worst difference over `got` vs `want`, relative to the largest |want|
    /// (at least 1), with the index where it occurs; a NaN on either side is
    /// an infinite difference.
    fn worst_difference(got: &[Self], want: &[Self]) -> (f64, usize);
}

// Each type's methods call the generic loops below, so that they are
// instantiated here: as default methods of the trait they would be generic
// over `Self`, and compiled (unoptimized) in whichever crate calls them.
impl Real for f32 {
    const EPSILON: f64 = f32::EPSILON as f64;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn random_grid(cells: usize, seed: u64) -> Vec<Self> {
        random_grid(cells, seed)
    }
    fn worst_difference(got: &[Self], want: &[Self]) -> (f64, usize) {
        worst_difference(got, want)
    }
}

impl Real for f64 {
    const EPSILON: f64 = f64::EPSILON;
    fn from_f64(v: f64) -> Self {
        v
    }
    fn random_grid(cells: usize, seed: u64) -> Vec<Self> {
        random_grid(cells, seed)
    }
    fn worst_difference(got: &[Self], want: &[Self]) -> (f64, usize) {
        worst_difference(got, want)
    }
}

fn random_grid<T: Real>(cells: usize, seed: u64) -> Vec<T> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    (0..cells)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            T::from_f64(0.5 + (z >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

fn worst_difference<T: Real>(got: &[T], want: &[T]) -> (f64, usize) {
    let scale = want.iter().map(|&w| w.into().abs()).fold(1.0, f64::max);
    got.iter()
        .zip(want)
        .enumerate()
        .map(|(i, (&g, &w))| {
            let (g, w): (f64, f64) = (g.into(), w.into());
            let d = if g.is_nan() || w.is_nan() {
                f64::INFINITY
            } else {
                (g - w).abs() / scale
            };
            (d, i)
        })
        .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_grids_are_seeded_and_in_range() {
        let a = f32::random_grid(1000, 7);
        assert_eq!(a, f32::random_grid(1000, 7));
        assert_ne!(a, f32::random_grid(1000, 8));
        assert!(a.iter().all(|&v| (0.5..1.5).contains(&v)));
        let b = f64::random_grid(1000, 7);
        assert!(b.iter().zip(&a).all(|(&d, &s)| d as f32 == s));
    }

    #[test]
    fn the_worst_difference_is_relative_and_nan_is_infinite() {
        let want = [1.0, -4.0, 2.0];
        assert_eq!(f64::worst_difference(&want, &want), (0.0, 0));
        // Relative to the largest magnitude, 4.
        assert_eq!(f64::worst_difference(&[1.0, -4.0, 3.0], &want), (0.25, 2));
        assert_eq!(
            f64::worst_difference(&[1.0, f64::NAN, 2.0], &want),
            (f64::INFINITY, 1)
        );
        // Below a magnitude of 1 the difference is absolute.
        assert_eq!(f32::worst_difference(&[0.5], &[0.25]), (0.25, 0));
    }
}
