//! A step whose interior is computed while the halos travel: where a box
//! on a GPU is split from its neighbours along the slowest axis only, its
//! owned planes are stepped as a grid of their own as soon as the slabs it
//! sends are packed (the launch is queued, and the device computes while
//! MPI moves the halos), and the planes next to each halo after the halos
//! arrived, each rim from a part of its own that reaches into the halo.
//!
//! Why the parts make the step: a part steps as a grid of its own, leaving
//! its first and last `RADIUS` planes as they are, and a cell `RADIUS` or
//! more inside a part reads only the part's cells. The interior part, the
//! owned planes `[h, n - h)`, computes `[h + R, n - h - R)` from owned cells
//! alone; a rim part, `[0, 3h)` by a low halo, computes `[h, 2h)` (with one
//! step an exchange `h` is `HALO`, which is `RADIUS`). The parts write
//! disjoint planes of the next level and cover every owned one.

use super::{Layout, Stencil};

/// A box's parts for one step: the interior, computed while the halos
/// travel, and the rims, after.
#[derive(Clone, Debug, PartialEq)]
pub struct Parts {
    /// The owned planes of the slowest axis.
    pub interior: [usize; 2],
    /// The part by each side that has a halo.
    pub rims: Vec<[usize; 2]>,
}

/// The parts of a box of `layout` for `stencil`, stepped one step an
/// exchange (`steps_per_exchange`); `None` where the box cannot step in
/// parts: a boundary other than fixed (a part would wrap its reads onto
/// itself), a halo wider than the reach (a statement reads off its cell
/// what an earlier one updated: a part's values near its ends would be
/// wrong where it writes them), more steps an exchange, neighbours along
/// another axis than the slowest, or a box too thin for its parts.
pub fn parts<T>(stencil: &Stencil<T>, layout: &Layout, steps_per_exchange: u64) -> Option<Parts> {
    let dims = stencil.axes.len();
    let single_axis = (1..dims).all(|a| (0..2).all(|side| layout.neighbour(a, side).is_none()));
    if stencil.boundary != "fixed"
        || stencil.halo != stencil.radius
        || steps_per_exchange != 1
        || !single_axis
    {
        return None;
    }
    let n = layout.local_shape()[0];
    let [lo, hi] = layout.halo[0];
    let (h, least) = (stencil.halo[0], stencil.min_shape[0]);
    let interior = [lo, n - hi];
    let rims: Vec<[usize; 2]> = [
        (lo > 0).then_some([0, 3 * h]),
        (hi > 0).then(|| [n - 3 * h, n]),
    ]
    .into_iter()
    .flatten()
    .collect();
    // Every part a grid the kernels take, and the rims inside the box.
    let fits = interior[1] - interior[0] >= least.max(2 * h + 1)
        && 3 * h >= least
        && n >= 4 * h
        && !rims.is_empty();
    fits.then_some(Parts { interior, rims })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StencilError;
    use crate::host::Workspace;

    fn run(
        _: &mut Workspace<f64>,
        _: &mut [&mut [f64]],
        _: &[usize],
        _: &[f64],
        _: u64,
    ) -> Result<(), StencilError> {
        Ok(())
    }

    /// A 2-D stencil of reach 1 (`halo`: its `HALO`) with `boundary`.
    fn stencil(boundary: &'static str, halo: &'static [usize]) -> Stencil<f64> {
        Stencil {
            name: "s",
            axes: &["y", "x"],
            grids: &["u"],
            params: &[],
            radius: &[1, 1],
            halo,
            min_shape: &[3, 3],
            boundary,
            regions: &[],
            inputs: &[],
            run,
            device: None,
        }
    }

    #[test]
    fn a_box_split_along_the_slowest_axis_steps_its_owned_planes_then_its_rims() {
        let fixed = stencil("fixed", &[1, 1]);
        // The middle of three ranks along y: 10 owned rows and a halo row by each side.
        let middle = Layout::new(&[30, 9], &[3, 1], 1, &[1, 1], false, None).unwrap();
        let middle = parts(&fixed, &middle, 1).unwrap();
        assert_eq!(middle.interior, [1, 11]);
        assert_eq!(middle.rims, vec![[0, 3], [9, 12]]);
        // The first rank: the grid's frame below, a rim above only.
        let first = Layout::new(&[30, 9], &[3, 1], 0, &[1, 1], false, None).unwrap();
        let first = parts(&fixed, &first, 1).unwrap();
        assert_eq!((first.interior, first.rims), ([0, 10], vec![[8, 11]]));
    }

    #[test]
    fn boxes_that_cannot_step_in_parts_have_none() {
        let fixed = stencil("fixed", &[1, 1]);
        let rows = Layout::new(&[30, 9], &[3, 1], 1, &[1, 1], false, None).unwrap();
        let columns = Layout::new(&[9, 30], &[1, 3], 1, &[1, 1], false, None).unwrap();
        assert!(parts(&fixed, &columns, 1).is_none());
        assert!(parts(&fixed, &rows, 2).is_none());
        assert!(parts(&stencil("periodic", &[1, 1]), &rows, 1).is_none());
        assert!(parts(&stencil("fixed", &[2, 2]), &rows, 1).is_none());
        let one = Layout::new(&[30, 9], &[1, 1], 0, &[1, 1], false, None).unwrap();
        assert!(parts(&fixed, &one, 1).is_none());
        let thin = Layout::new(&[6, 9], &[3, 1], 1, &[1, 1], false, None).unwrap();
        assert!(parts(&fixed, &thin, 1).is_none());
    }
}
