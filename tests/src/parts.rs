//! A GPU session's parts (runs of planes of the slowest axis stepped as
//! grids of their own, as a distributed session's overlap steps them)
//! against its whole step.

use stencil_rt::gpu::{DeviceGrids, Devices};

use crate::harness::{Entry, Real, compare, inputs, tolerance};

/// One step of two parts that meet in the middle of the slowest axis, their
/// levels turned once, against one step of the whole grid, on a session of
/// `devices`; `exact`: the stencil's parts compute every cell they write
/// (`HALO == RADIUS`, a fixed boundary, no regions: a part would place them
/// from its own edges), else nothing is checked. The parts
/// of a plan that cannot step them (`persistent`) are not checked either;
/// to prove the check can fail, the first part alone must differ. A part
/// past the grid must be refused, whatever the plan.
pub fn check_parts<T: Real>(e: &Entry<T>, devices: Devices<T>, radius: usize, exact: bool) {
    if !exact {
        return;
    }
    let min = e.min_shape;
    let n0 = 2 * min[0] + 2 * radius + 3;
    let shape: Vec<usize> = std::iter::once(n0)
        .chain(min[1..].iter().enumerate().map(|(a, &m)| m + 3 + 2 * a))
        .collect();
    let middle = n0 / 2;
    let halves = [[0, middle + radius], [middle - radius, n0]];
    let mut session = must(e, (devices.grids)(&shape));
    let (_, params) = inputs(e, &shape);
    assert!(
        session.step_part(&params, [0, n0 + 1]).is_err(),
        "{}: a part past the grid was taken",
        e.name
    );
    let Some(want) = stepped(e, devices, &shape, &[]) else {
        return;
    };
    let Some(got) = stepped(e, devices, &shape, &halves) else {
        return;
    };
    let tol = tolerance::<T>(e.flops, 1);
    let (err, at) = compare(e, &got, &want);
    assert!(
        err <= tol,
        "{}: parts {halves:?} of {shape:?}: difference {err:.3e} > tolerance {tol:.3e} at {at}",
        e.name
    );
    let half = stepped(e, devices, &shape, &halves[..1]).expect("the plan steps parts");
    let (err, _) = compare(e, &half, &want);
    assert!(
        err > tol,
        "{}: the first part alone is within tolerance of the whole step; the check could not fail",
        e.name
    );
}

/// The grids after one step of `parts` (none: the whole grid), on random
/// grids of `shape`; `None` where the plan cannot step parts.
fn stepped<T: Real>(
    e: &Entry<T>,
    devices: Devices<T>,
    shape: &[usize],
    parts: &[[usize; 2]],
) -> Option<Vec<Vec<T>>> {
    let (mut grids, params) = inputs(e, shape);
    let mut session: Box<dyn DeviceGrids<T>> = must(e, (devices.grids)(shape));
    let views: Vec<&[T]> = grids.iter().map(Vec::as_slice).collect();
    must(e, session.upload_grids(&views));
    if parts.is_empty() {
        must(e, session.step_grids(&params, 1));
    } else {
        for &planes in parts {
            if !must(e, session.step_part(&params, planes)) {
                return None;
            }
        }
        session.finish_parts();
    }
    let mut views: Vec<&mut [T]> = grids.iter_mut().map(Vec::as_mut_slice).collect();
    must(e, session.download_grids(&mut views));
    Some(grids)
}

/// `result`'s value, or a panic that names the stencil.
fn must<T, V>(e: &Entry<T>, result: Result<V, stencil_rt::StencilError>) -> V {
    result.unwrap_or_else(|err| panic!("{}: {err}", e.name))
}
