//! Which stencils fuse their steps in z sums (2 columns a thread, a box's
//! in-plane sums summed along the slowest axis), and the checks of such a
//! plan.

use super::planes::in_one_plane;
use super::{Plan, radius};
use crate::ir::{Access, Dtype, Stencil, Strategy, Version};

/// Columns a thread owns (its `vector`).
pub const COLUMNS: usize = 2;

/// Blocks a multiprocessor keeps resident at least, as the kernel's second
/// launch bound on CUDA: 128 registers a thread for blocks of 256 threads,
/// which the hand-written kernel took without spilling (j3d27pt; j3d17pt
/// spilled 8 bytes).
pub const RESIDENT_BLOCKS: usize = 2;

/// Why `st`'s steps cannot fuse in z sums, or `None` where they can.
pub fn unsuited(st: &Stencil) -> Option<String> {
    if st.dims() != 3 || st.statements.len() != 1 {
        return Some("it fuses 3-D stencils of one [[update]]".into());
    }
    if st.boundary != crate::ir::Boundary::Fixed {
        return Some("it fuses grids with a fixed boundary".into());
    }
    if st.dtype != Dtype::F32 {
        return Some(
            "it holds 2 columns of f32 cells a thread; f64 cells take the registers of 4".into(),
        );
    }
    let s = &st.statements[0];
    if st.fields[s.target].has_prev() {
        return Some("it fuses fields of one time level, not leapfrogs".into());
    }
    let Some((terms, _)) = crate::ir::weighted_sum(&s.expr) else {
        return Some(
            "its update must be a weighted sum of cells (no product or function of grid values)"
                .into(),
        );
    };
    let own = |a: &Access| a.slot.field == s.target && a.slot.version == Version::Start;
    if !terms.iter().all(|(a, _)| own(a)) {
        return Some("its update must read only the field it updates".into());
    }
    let r = radius(st);
    if r[0] != 1 || r[1] > 1 || r[2] > 1 {
        return Some("its update must reach one cell along the slowest axis and at most one along the others".into());
    }
    None
}

/// Whether `st`'s steps can fuse in z sums ([`unsuited`]).
pub fn suits(st: &Stencil) -> bool {
    unsuited(st).is_none()
}

/// Whether `st`'s default `temporal` plan runs z sums: the stencils it suits
/// that read in-plane neighbours in more than one plane (the boxes).
pub fn by_default(st: &Stencil) -> bool {
    suits(st) && !in_one_plane(st)
}

/// Whether `plan` runs `st` in z sums: a 3-D `temporal` plan of
/// [`COLUMNS`] columns a thread for a stencil it [`suits`].
pub fn plan_runs(plan: &Plan, st: &Stencil) -> bool {
    st.dims() == 3 && plan.strategy == Strategy::Temporal && plan.vector == COLUMNS && suits(st)
}

/// Whether `plan`'s rows of cells fit the bit masks of a thread (32 cells).
pub fn check(plan: &Plan, st: &Stencil, d: &super::super::Dialect) -> Result<(), String> {
    if plan.coarsen * COLUMNS > 32 {
        return Err(format!(
            "`temporal` with `vector = {COLUMNS}` gives each thread of `{}` {COLUMNS} columns of `coarsen` rows, at most 32 cells; \
             lower `coarsen` to at most {} in [tiling.{}]",
            st.name,
            32 / COLUMNS,
            d.name
        ));
    }
    Ok(())
}
