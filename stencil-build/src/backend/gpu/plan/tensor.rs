//! The `tensor` kernel's fixed shape: blocks of 16 warps over 32 x 32
//! tiles of a plane, and whether its update reads grids beside the one it
//! sums in-plane.

use crate::codegen::names::slot_name;
use crate::ir::{Access, PLANE_SUM, PlaneSum, Slot, Stencil, plane_sum};

/// Threads of a `tensor` block: 16 warps of 8 x 8 cells.
pub const THREADS: usize = 512;

/// Cells of a block's tile along `y` and `x`.
pub const TILE: usize = 32;

// One warp for each 8 x 8 cells of the tile.
const _: () = assert!(THREADS == (TILE / 8) * (TILE / 8) * 32);

/// Whether `st`'s update reads no other grid than the one it sums in-plane:
/// then its `tensor` launcher runs warps of 16 x 8 cells where rows are of
/// an even number of cells (`Shape::wide`).
pub fn reads_one_grid(st: &Stencil) -> bool {
    let name = |a: &Access| slot_name(st, a.slot);
    plane_sum(&st.statements[0], &name).is_ok_and(|sum| other_reads(&sum).is_empty())
}

/// The reads of grids other than the in-plane one in `sum`'s update: each
/// grid with its plane offset, read at the lanes' cells.
pub fn other_reads(sum: &PlaneSum) -> Vec<(Slot, i64)> {
    let mut others: Vec<(Slot, i64)> = Vec::new();
    sum.expr.for_each_read(&mut |a| {
        if a.slot != sum.slot && a.slot != PLANE_SUM && !others.contains(&(a.slot, a.offset[0])) {
            others.push((a.slot, a.offset[0]));
        }
    });
    others
}
