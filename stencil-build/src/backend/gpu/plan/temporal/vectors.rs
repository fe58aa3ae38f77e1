//! The defaults and checks of 3-D fused kernels of vectors (threads of
//! `vector` cells of a row), and the plan of their scalar twins.

use super::planes::Planes;
use super::{Dialect, Plan, radius, reads_inputs};
use crate::ir::{GpuTiling, Stencil, Strategy};

/// Most iterations between a ring plane's publication and its read
/// (star3d25 f32, 2 steps, GCells/s: 216.6 at 1, 230.0 at 2, 247.8 at 3,
/// 249.9 at 4; H100). A window holds
/// the plane it publishes up to `radius + 1` iterations ahead.
pub const MAX_LEAD: usize = 4;

/// Cells of the contiguous axis a default tile spans: 64 (16-byte vectors
/// of 16 threads in f32).
pub const TILE_WIDTH: usize = 64;

/// Threads a default block has along the middle axis, one row each, at most.
pub const ROWS: usize = 32;

/// 32-bit registers of a multiprocessor, which a block's threads share.
pub const REGISTER_FILE: usize = 65536;

/// Registers a thread takes besides its windows and its in-plane
/// neighbours: indices, masks, the plane ahead (fitted to ptxas 13.0 on
/// sm_90: j3d13pt f64, 2 steps, spilled at 64 registers and took 78 at 85;
/// star3d25 f32, 2 steps, took 126 of 128).
pub const OVERHEAD: usize = 16;

/// The registers a thread of `v`-cell vectors takes for `st` with `steps`
/// fused: a window of `2 r + 1` planes per level below the last, the
/// in-plane neighbours of one level (whole vectors along the contiguous
/// axis, rows along the middle one) and [`OVERHEAD`].
pub fn registers(st: &Stencil, v: usize, steps: usize) -> usize {
    let r = radius(st);
    let vectors = steps * (2 * r[0] + 1) + 2 * (r[2] / v) + 2 * r[1];
    vectors * v * st.dtype.size() / 4 + OVERHEAD
}

/// The rows of `bx` threads whose registers for `steps` fused steps fit
/// the register file, in eights (the tilings measured: 24 and 32), at most
/// [`ROWS`].
pub fn rows(st: &Stencil, v: usize, steps: usize, bx: usize) -> usize {
    let fit = REGISTER_FILE / (registers(st, v, steps) * bx);
    (fit / 8 * 8).min(ROWS)
}

/// `[tiling]` of a 3-D `temporal` stencil of vectors with the defaults
/// filled in: tiles [`TILE_WIDTH`] cells wide and as many rows as the
/// threads' registers allow ([`rows`], at most [`ROWS`]), a row per
/// thread, chunks of 128 planes, and the most steps, up to 3, whose tiles
/// store at least half their cells along each fast axis (H100,
/// star3d25 f32 2 steps in 32
/// rows; j3d13pt f64 2 steps in 24 rows, 232.1 GCells/s against 221.1 in
/// 32, which spilled). Where the rings of such tiles do not fit dialect
/// `d`'s shared memory even with a lead of 1 (HIP's 64 KiB, in f64), the
/// default tiles narrow until they do.
pub fn defaults(t: &GpuTiling, st: &Stencil, d: &Dialect) -> Plan {
    if super::rings::suits(st) {
        return super::rings::defaults(t, st);
    }
    let v = t.vector.unwrap_or(1);
    let r = radius(st);
    let bx = (TILE_WIDTH / v).max(1);
    let block = |steps: usize| {
        t.block
            .clone()
            .unwrap_or_else(|| vec![1, rows(st, v, steps, bx).max(8), bx])
    };
    let stores_half = |steps: usize| {
        let b = block(steps);
        4 * r[1] * steps <= b[1] * t.coarsen.unwrap_or(1) && 4 * r[2] * steps <= b[2] * v
    };
    let time_block = t
        .time_block
        .unwrap_or_else(|| (1..=3).rev().find(|&s| stores_half(s)).unwrap_or(1));
    let mut plan = Plan {
        strategy: Strategy::Temporal,
        chunk: t.chunk.unwrap_or(128),
        coarsen: t.coarsen.unwrap_or(1),
        vector: v,
        time_block,
        occupancy: None,
        chosen: false,
        block: block(time_block),
    };
    let rings = |plan: &Plan| {
        let sh = Planes::new(plan, st, d.shared_max);
        Planes { lead: 1, ..sh }.shared_bytes(st.dtype.size())
    };
    while t.block.is_none() && plan.block[2] > 1 && rings(&plan) > d.shared_max {
        plan.block[2] /= 2;
    }
    plan
}

/// Why `st` cannot take a kernel of vectors, if it cannot: its update must
/// read only the field it updates, along one axis at a time.
pub fn unsuited(st: &Stencil) -> Option<String> {
    if st.boundary == crate::ir::Boundary::Periodic {
        return Some(format!(
            "`{}` is periodic, whose fused steps wrap each cell's loads (one cell a row)",
            st.name
        ));
    }
    if reads_inputs(st) {
        return Some(format!(
            "the update of `{}` reads other grids than the one it updates",
            st.name
        ));
    }
    diagonal(st)
}

/// Why `st` is not a star, if it is not: a read off the axes through the cell.
pub fn diagonal(st: &Stencil) -> Option<String> {
    let s = &st.statements[0];
    let mut diagonal = None;
    s.expr.for_each_read(&mut |a| {
        if a.offset.iter().filter(|&&o| o != 0).count() > 1 {
            diagonal.get_or_insert_with(|| a.offset.clone());
        }
    });
    diagonal.map(|o| {
        format!(
            "`{}` reads the neighbour at {o:?}, off the axes through the cell (a star reads along one axis at a time)",
            st.name
        )
    })
}

/// Whether `plan`'s vectors suit `st`: a star that reads only the field it
/// updates, a row per thread, vectors of at most 16 bytes that divide the
/// radius along the contiguous axis, and a scalar twin that fits where it
/// has one.
pub fn check(plan: &Plan, st: &Stencil, d: &Dialect) -> Result<(), String> {
    let v = plan.vector;
    let name = &st.name;
    let fix = format!("remove `vector` from [tiling.{}]", d.name);
    if let Some(why) = unsuited(st) {
        // `vector = 2` also asks for z sums: say why those do not take it either.
        let sums = match super::sums::unsuited(st) {
            Some(no) if v == super::sums::COLUMNS => {
                format!(" (or, in z sums of 2 columns, for weighted sums of radius 1: {no})")
            }
            _ => String::new(),
        };
        return Err(format!(
            "`vector = {v}` of `temporal` computes a vector of cells per thread for stars that read only the field they update{sums}; {why}; {fix}"
        ));
    }
    let bytes = v * st.dtype.size();
    if bytes > 16 {
        return Err(format!(
            "`vector = {v}` makes vectors of {bytes} bytes for `{name}`, more than the 16 a load can move; set `vector = {}` or less in [tiling.{}]",
            16 / st.dtype.size(),
            d.name
        ));
    }
    let r = radius(st)[2];
    if r % v != 0 {
        return Err(format!(
            "`vector = {v}` of `temporal` needs vectors that divide the radius of `{name}` along `{}` ({r}), so that a vector is wholly in the region or out of it; \
             set `vector` to a divisor of {r}, or {fix}",
            st.axes[2]
        ));
    }
    if plan.coarsen != 1 {
        return Err(format!(
            "`vector = {v}` of `temporal` gives each thread one row of `{}`: set `coarsen = 1` or {fix}",
            st.axes[1]
        ));
    }
    if super::splits_steps(plan, st) {
        return Ok(());
    }
    super::planes::check(&scalar_twin(plan, st, d), st, d)
        .map_err(|e| format!("the scalar kernel for grids whose rows are not whole vectors: {e}"))
}

/// The plan of the scalar kernel that runs the grids a kernel of vectors
/// cannot: `plan`'s steps and chunk in [`super::planes`]'s default tiles.
pub fn scalar_twin(plan: &Plan, st: &Stencil, d: &Dialect) -> Plan {
    let t = GpuTiling {
        time_block: Some(plan.time_block),
        chunk: Some(plan.chunk),
        ..GpuTiling::model(Strategy::Temporal)
    };
    super::planes::defaults(&t, st, d)
}
