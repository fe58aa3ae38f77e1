//! The shape of a ring kernel's block ([`Rings`]: two fused steps of f32
//! vectors in shared rings, for stencils that read other grids at the
//! cell), its defaults and checks.

use super::{Dialect, Plan, radius};
use crate::codegen::names::slot_name;
use crate::ir::{Access, Boundary, Dtype, GpuTiling, Stencil, Strategy, Version};

/// Planes of the stepped grid in flight (copies started ahead of the plane
/// computed; at most `r_z - 1`: a copy must not land in a slot a slower
/// warp still reads).
pub const AHEAD: usize = 2;

/// The largest plane (cells of the two fast axes) on which the session runs
/// two single steps instead of the ring kernel where the single step moves
/// 16-byte vectors (`Gen::rings_preferred`).
pub const VECTOR_PLANE: usize = 458752;

/// The same where the single step's rows are not whole vectors.
pub const SCALAR_PLANE: usize = 32768;

/// Lanes of a warp, and rows of the level-1 tile.
pub const LANES: usize = 32;

/// Cells of the contiguous axis a lane computes: one 16-byte vector of f32.
pub const CELLS: usize = 4;

/// Cells of the contiguous axis a tile stores.
pub const TILE_X: usize = 32;

/// Whether a 3-D `temporal` kernel of vectors for `st` is this module's: a
/// star whose update also reads grids other than the one it steps.
pub fn suits(st: &Stencil) -> bool {
    st.dims() == 3 && super::reads_inputs(st)
}

/// The shape of a block, from the radius of one step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rings {
    /// Radius along each axis.
    pub r: [usize; 3],
    /// Rows of the stored tile (`32 - 2 r_y`).
    pub ty: usize,
    /// Level-1 warps (the tile grown by the radius: 32 rows of `W1` column groups).
    pub w1: usize,
    /// Level-2 warps (the stored tile).
    pub w2: usize,
    /// Floats between rows of a ring plane: at least the copied tile's
    /// width, 4 modulo 8, so that 8 rows of 16-byte loads hit distinct banks.
    pub pitch: usize,
    /// Rows a copying pass of the block covers.
    pub pass_rows: usize,
    /// Passes of the block over a copied plane.
    pub passes: usize,
    /// Whether level 1 is stored too (a leapfrog's `out_prev`).
    pub both: bool,
}

impl Rings {
    /// The shape for `st`'s radius; `both`: level 1 is stored too.
    pub fn new(st: &Stencil, both: bool) -> Rings {
        let rr = radius(st);
        let r = [rr[0], rr[1], rr[2]];
        let ty = LANES.saturating_sub(2 * r[1]);
        let w1 = (TILE_X + 2 * r[2]) / CELLS;
        let w2 = TILE_X / CELLS * ty / LANES;
        let ux = TILE_X + 4 * r[2];
        let pitch = ux + (12 - ux % 8) % 8;
        let threads = LANES * (w1 + w2);
        let pairs = ux / 2;
        let uy = ty + 4 * r[1];
        let passes = uy.div_ceil((threads / pairs).max(1));
        Rings {
            r,
            ty,
            w1,
            w2,
            pitch,
            pass_rows: uy.div_ceil(passes),
            passes,
            both,
        }
    }

    /// Planes of a window, and slots of each ring.
    pub fn window(&self) -> usize {
        2 * self.r[0] + 1
    }

    /// Threads of a block.
    pub fn threads(&self) -> usize {
        LANES * (self.w1 + self.w2)
    }

    /// Rows and columns of the copied tile (grown by `2 r`).
    pub fn copied(&self) -> [usize; 2] {
        [self.ty + 4 * self.r[1], TILE_X + 4 * self.r[2]]
    }

    /// Floats of a staged plane: `ty` rows of `TILE_X + 4`.
    pub fn staged(&self) -> usize {
        self.ty * (TILE_X + 4)
    }

    /// Levels staged (2 for a leapfrog, whose level 1 is stored too).
    pub fn stored_levels(&self) -> usize {
        1 + usize::from(self.both)
    }

    /// Dynamic shared memory of a block, in bytes: both rings and the
    /// double-buffered staging planes.
    pub fn shared_bytes(&self) -> usize {
        let slot = |rows: usize| rows * self.pitch;
        let rings = self.window() * (slot(self.copied()[0]) + slot(LANES));
        4 * (rings + 2 * self.stored_levels() * self.staged())
    }
}

/// `[tiling]` of a ring kernel: 2 steps, blocks of the shape's threads.
pub fn defaults(t: &GpuTiling, st: &Stencil) -> Plan {
    let sh = Rings::new(st, true);
    Plan {
        strategy: Strategy::Temporal,
        block: vec![1, sh.w1 + sh.w2, LANES],
        chunk: t.chunk.unwrap_or(128),
        coarsen: 1,
        vector: t.vector.unwrap_or(CELLS),
        time_block: t.time_block.unwrap_or(2),
        occupancy: None,
        chosen: false,
    }
}

/// Whether `plan` suits `st`; the error says what to change.
pub fn check(plan: &Plan, st: &Stencil, d: &Dialect) -> Result<(), String> {
    let name = &st.name;
    let fix = format!(
        "remove `vector` from [tiling.{}] (the kernel without vectors fuses any steps)",
        d.name
    );
    let refuse = |why: String| {
        Err(format!(
            "`vector` of `temporal` for `{name}`, a stencil that reads other grids than the one it steps, computes two steps in shared rings: {why}; {fix}"
        ))
    };
    if !d.async_copies {
        return refuse(format!(
            "its copies are CUDA's `cp.async`, which {} has no counterpart for",
            d.title
        ));
    }
    if st.dtype != Dtype::F32 || plan.vector != CELLS {
        return refuse(format!(
            "it takes f32 cells, {CELLS} a thread (`vector = {CELLS}`)"
        ));
    }
    if plan.time_block != 2 {
        return refuse(format!(
            "it fuses 2 steps, not {} (`time_block = 2`)",
            plan.time_block
        ));
    }
    if st.boundary != Boundary::Fixed || st.statements.len() != 1 {
        return refuse("it takes one update with a fixed boundary".into());
    }
    if let Some(why) = super::vectors::diagonal(st) {
        return refuse(why);
    }
    if let Some(a) = off_cell_read(st) {
        return refuse(format!(
            "it reads the other grids at the cell only, and `{}` is read at {:?}",
            slot_name(st, a.slot),
            a.offset
        ));
    }
    let r = radius(st);
    if !(r[0] > AHEAD
        && [r[1], r[2]]
            .iter()
            .all(|&r| r % 4 == 0 && (4..=8).contains(&r)))
    {
        return refuse(format!(
            "it needs a radius of at least {} along `{}` and of 4 or 8 along `{}` and `{}`, not {r:?}",
            AHEAD + 1,
            st.axes[0],
            st.axes[1],
            st.axes[2]
        ));
    }
    let sh = Rings::new(st, true);
    if sh.shared_bytes() > d.shared_max {
        return refuse(format!(
            "its rings take {} KiB of shared memory, more than the {} KiB {} allows",
            sh.shared_bytes().div_ceil(1024),
            d.shared_max / 1024,
            d.title
        ));
    }
    Ok(())
}

/// A read of another grid than the stepped one away from the cell, if any.
pub fn off_cell_read(st: &Stencil) -> Option<Access> {
    let s = &st.statements[0];
    let mut found = None;
    s.expr.for_each_read(&mut |a| {
        let stepped = a.slot.field == s.target && a.slot.version == Version::Start;
        if !stepped && a.offset.iter().any(|&d| d != 0) {
            found.get_or_insert_with(|| a.clone());
        }
    });
    found
}
