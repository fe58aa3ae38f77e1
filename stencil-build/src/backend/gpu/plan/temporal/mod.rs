//! `temporal` and `persistent` plans: the model's defaults, the checks a
//! fused tiling must pass, and what a fused plan's kernel is (warp tiles in
//! 2-D; in 3-D planes in shared memory ([`planes`]), threads of vectors
//! ([`vectors`]), shared rings ([`rings`]) or z sums ([`sums`])).

pub mod planes;
pub mod rings;
pub mod sums;
pub mod variants;
pub mod vectors;

use super::{Dialect, Plan};
use crate::ir::{
    Access, Dtype, Expr, Func, GpuTiling, Op, Slot, Statement, Stencil, Strategy, Version,
};

/// Lanes of a warp tile: the width of every shuffle, which CUDA warps and
/// AMD wavefronts (of 32 or 64) all support.
pub const LANES: usize = 32;

/// Threads of a default `temporal` block: 4 warp tiles side by side.
pub const THREADS: usize = 128;

/// Most steps the 2-D model fuses: on j2d5pt f32, 10 steps measured 1261
/// GCells/s where 12 (the most the register budget allows) measured 1186
/// (chunks of 256; H100).
pub const MAX_TIME_BLOCK: usize = 10;

/// Most cells of the stepped field a 2-D `temporal` stencil reads for its
/// warp tile function to unroll the loop over the rows by the window's rows
/// (`Gen::row_unroll`), so that the windows move on without moving
/// registers (j2d5pt f32: 364 instructions a row, 76 of them moves, against
/// 288). Against the loop without (H100,
/// 16384^2 to 2048^2, all bit-identical): j2d5pt f32 1.08x on 16384^2
/// (0.97x-1.03x on smaller grids), f64 1.14x-1.18x; j2d9pt f32
/// 1.09x-1.15x, f64 1.01x-1.06x; j2d9pt-gol f32 1.04x-1.12x, f64
/// 1.08x-1.10x; wave2d f32 (the copy without checks only) 1.02x-1.07x. Not
/// j2d25pt's 25 cells: 0.88x-1.02x in f32, 0.95x-0.98x in f64.
pub const MAX_UNROLLED_POINTS: usize = 9;

/// Most 32-bit registers the model lets the windows of one thread keep from
/// one iteration to the next; less when steps are skewed, which leaves the
/// compiler more temporaries live at once ([`skewed_budget`]).
pub const REGISTER_WORDS: usize = 96;

/// Most flops a cell for [`lean`] stencils.
pub const LEAN_FLOPS: usize = 32;

/// `[tiling]` of a `temporal` stencil with the defaults filled in:
///
/// - 2-D: warps of 32 lanes along the contiguous axis, 4 cells per lane in
///   f32, 2 in f64, chunks of 256 rows, the best of the
///   variants measured on the H100;
///   `time_block`: the most steps, up to [`MAX_TIME_BLOCK`], that recompute
///   at most a quarter of the tile and keep the windows within the
///   register budget ([`chained_budget`], [`skewed_budget`]); with a
///   `time_block` from the spec, the default tiles widen to store at least
///   half their cells;
/// - 3-D: see [`planes::defaults`].
pub fn defaults(t: &GpuTiling, st: &Stencil, d: &super::Dialect) -> Plan {
    if st.dims() == 3 {
        return planes::defaults(t, st, d);
    }
    let (vector, chunk) = match st.dtype {
        Dtype::F32 => (4, 256),
        _ => (2, 256),
    };
    let block = t.block.clone().unwrap_or_else(|| vec![1, THREADS]);
    let time_block = t
        .time_block
        .unwrap_or_else(|| model_time_block(st, LANES * t.vector.unwrap_or(vector)));
    // A `time_block` the spec gives widens the default tiles to store at least half their cells.
    let r = radius(st)[1];
    let vector = t
        .vector
        .unwrap_or(vector.max((4 * r * time_block).div_ceil(LANES)));
    Plan {
        strategy: Strategy::Temporal,
        block,
        chunk: t.chunk.unwrap_or(chunk),
        coarsen: 1,
        vector,
        time_block,
        occupancy: None,
        chosen: false,
    }
}

/// Whether `plan` is a 3-D `temporal` kernel of vectors for `st` (its
/// threads hold `vector` cells of a row: [`vectors`], [`rings`]), not one of
/// z sums, whose threads hold 2 columns ([`sums_plan`]).
pub fn vector_plan(plan: &Plan, st: &Stencil) -> bool {
    st.dims() == 3
        && plan.strategy == Strategy::Temporal
        && plan.vector > 1
        && !sums::plan_runs(plan, st)
}

/// Whether `plan` fuses the steps of `st` in z sums, 2 columns a thread
/// ([`sums`]).
pub fn sums_plan(plan: &Plan, st: &Stencil) -> bool {
    sums::plan_runs(plan, st)
}

/// Whether `plan`'s kernel for `st` fuses its steps in shared rings
/// ([`rings`]: 3-D `temporal` of vectors for stencils that read other grids
/// at the cell).
pub fn rings_plan(plan: &Plan, st: &Stencil) -> bool {
    vector_plan(plan, st) && rings::suits(st)
}

/// Whether `plan`'s kernel for `st` is a 3-D `temporal` kernel of vectors
/// with no scalar twin: on the grids it cannot take, the session runs one
/// step a launch (the single-step kernel), asking the launcher's
/// `<symbol>_fuses` first. So are the stencils whose steps `auto` would not
/// fuse without vectors ([`auto_fuses`](crate::backend::gpu::plan::model::auto_fuses)): on 513^3 (rows of no whole
/// vectors), star3d25 f32's scalar twin ran 76.4 GCells/s against
/// `stream`'s 180.0 (0.42x; H100),
/// and a leapfrog's ring kernel's 0.57x (acoustic25 f32). j3d13pt
/// keeps its twin: 1.04x (f32) and 1.22x (f64) the best single step there.
pub fn splits_steps(plan: &Plan, st: &Stencil) -> bool {
    vector_plan(plan, st) && !super::model::auto_fuses(st)
}

/// Whether a statement of `st` updates a field of two time levels (a leapfrog).
pub fn leapfrog(st: &Stencil) -> bool {
    st.statements.iter().any(|s| st.fields[s.target].has_prev())
}

/// Whether `plan` fuses the steps of leapfrog field `field` (two time levels,
/// updated by a statement): its launches also write the level before the
/// last, the next launch's previous level.
pub fn fused_leapfrog(st: &Stencil, plan: &Plan, field: usize) -> bool {
    plan.strategy.fuses_steps()
        && st.fields[field].has_prev()
        && st.statements.iter().any(|s| s.target == field)
}

/// The reads of grids other than the field it steps at the start of the
/// step (input grids, a leapfrog's previous level) in fused update `s`, each
/// once, in the order of the expression: the fused kernels load them an
/// iteration ahead, like the stepped field.
pub fn input_reads(s: &Statement) -> Vec<Access> {
    let streamed = Slot {
        field: s.target,
        version: Version::Start,
    };
    let mut reads: Vec<Access> = Vec::new();
    s.expr.for_each_read(&mut |a| {
        if a.slot != streamed && !reads.contains(a) {
            reads.push(a.clone());
        }
    });
    reads
}

/// Whether the fused update of `st` reads grids other than the field it
/// steps at the start of the step (input grids, a leapfrog's previous level).
pub fn reads_inputs(st: &Stencil) -> bool {
    !input_reads(&st.statements[0]).is_empty()
}

/// Whether `a`, one of [`input_reads`] of fused update `s` in `plan`, reads
/// the previous level of the leapfrog field `s` steps, which only the first
/// level that steps loads.
pub fn reads_own_prev(st: &Stencil, plan: &Plan, s: &Statement, a: &Access) -> bool {
    let prev = Slot {
        field: s.target,
        version: Version::Prev,
    };
    fused_leapfrog(st, plan, s.target) && a.slot == prev
}

/// Whether 2-D warp tiles wholly inside the region run a copy of their loop
/// without checks (`EDGE`, `Gen::warp_tile_function`): in f32, where it
/// lifted j2d5pt from 1412 to 1536 GCells/s (both with 32-bit indices; in
/// the suite, with them, j2d9pt went from 487 to 774); not
/// in f64 (skewed), where the second copy's registers cost occupancy:
/// j2d9pt f64 328 with it, 404 without (j2d5pt f64: 628 and 611; H100).
pub fn splits(st: &Stencil) -> bool {
    !skewed(st)
}

/// Whether the fused steps of `st` are skewed (see the module documentation):
/// in f64, whose arithmetic has twice the latency, independent steps
/// measured 587 instead of 531 GCells/s on j2d5pt (6 steps); in f32 the
/// registers are worth more as further fused steps (chained, 12 steps: 1247,
/// skewed, 8 steps: 1139; H100).
pub fn skewed(st: &Stencil) -> bool {
    st.dtype == Dtype::F64
}

/// The model's `time_block` (see [`defaults`]) for 2-D warp tiles `tile` cells wide.
pub fn model_time_block(st: &Stencil, tile: usize) -> usize {
    let r = radius(st);
    let words = st.dtype.size() / 4;
    // Rows each step's window keeps from one iteration to the next.
    let (planes, budget) = if skewed(st) {
        (2 * r[0] + 1, skewed_budget(st))
    } else {
        (2 * r[0], chained_budget(st))
    };
    let fits = |t: usize| 2 * r[1] * t * 4 <= tile && t * planes * tile / LANES * words <= budget;
    (1..=MAX_TIME_BLOCK).rev().find(|&t| fits(t)).unwrap_or(1)
}

/// The register budget of chained (f32) steps: [`REGISTER_WORDS`], seven
/// eighths for an update that is a weighted sum whose columns along the
/// rows are full ([`full_along`](crate::ir::full_along): a box), each row
/// it reads bringing its neighbours across the lanes, live beside the
/// windows. On the H100 (16384^2, 100 steps, the median of 3, two rounds
/// in one lease, 2026-12-06), one step fewer than the whole budget's ran
/// AN5D's box2d2r (25 reads) at 483.3 GCells/s against 449.1 (1.08x, 5
/// steps; AN5D's kernel 480.5) and the suite's j2d25pt 1.07x; the boxes of
/// radius 3 and 4 keep single steps either way. Stencils that are not
/// boxes did not follow one rule: one step fewer ran the stars j2d9pt and
/// star2d2r 0.97x-0.98x (5 steps for 6), star2d4r 0.97x (2 for 3), and
/// the leapfrogs with a coefficient grid wave2d_r2 0.98x (5 for 6),
/// wave2d_r3 1.08x (3 for 4) and wave2d_r4 1.01x (2 for 3).
pub fn chained_budget(st: &Stencil) -> usize {
    match &st.statements[..] {
        // A box: full columns, and more than one (a column alone reads
        // nothing across the lanes).
        [s] if radius(st)[1] > 0 && crate::ir::full_along(&s.expr, 0) => REGISTER_WORDS * 7 / 8,
        _ => REGISTER_WORDS,
    }
}

/// The register budget of skewed (f64) steps: seven eighths of
/// [`REGISTER_WORDS`] for [`lean`] stencils, three quarters for the others.
/// On the H200 (`stencil-tune`, 8192^2, 200 steps, 2026-12-03), lean stars
/// and boxes ran 1.01x-1.14x as fast at 7 steps as at three quarters' 6
/// (radius 1: j2d9pt-gol, box2d1r, star2d1r, upwind2d_r1) and 1.32x-1.37x
/// at 4 as at 3 (radius 2: j2d9pt, star2d2r, upwind2d_r2), while one more
/// step than three quarters' ran 0.79x-0.96x on stencils that read input
/// grids or a previous level (varcoef2d_k2, varcoef2d_k3, wave2d_r1) and
/// 0.84x on one with a square root and a division (gradient2d). On the
/// H100, where the model was first fitted, j2d5pt f64 ran 493 GCells/s at
/// the full budget's 8 steps and 587 at three quarters' 6.
pub fn skewed_budget(st: &Stencil) -> usize {
    if lean(st) {
        REGISTER_WORDS * 7 / 8
    } else {
        REGISTER_WORDS * 3 / 4
    }
}

/// Whether `st` is one update that reads only the field it updates, in
/// additions, subtractions, multiplications and divisions by constants,
/// at most [`LEAN_FLOPS`] a cell: its fused steps need registers for the
/// field's windows and little else.
pub fn lean(st: &Stencil) -> bool {
    let [s] = &st.statements[..] else {
        return false;
    };
    !reads_inputs(st) && !costly(&s.expr) && crate::analysis::flops(&s.expr) <= LEAN_FLOPS
}

/// Whether `e` calls a function other than `min`, `max`, `abs` and `fma`,
/// or divides by anything but a literal.
fn costly(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) | Expr::Param(_) | Expr::Read(_) => false,
        Expr::Neg(x) => costly(x),
        Expr::PowI(x, n) => *n < 0 || costly(x),
        Expr::Bin(op, a, b) => {
            (*op == Op::Div && !matches!(**b, Expr::Lit(_))) || costly(a) || costly(b)
        }
        Expr::Call(f, args) => {
            !matches!(f, Func::Min | Func::Max | Func::Abs | Func::Fma) || args.iter().any(costly)
        }
    }
}

/// The reach of one step along each axis: the largest offset at which the
/// update reads the field it updates (input grids do not change, so their
/// reads do not spread).
pub fn radius(st: &Stencil) -> Vec<usize> {
    let s = &st.statements[0];
    let mut r = vec![0; st.dims()];
    s.expr.for_each_read(&mut |a| {
        if a.slot.field == s.target {
            for (r, d) in r.iter_mut().zip(&a.offset) {
                *r = (*r).max(d.unsigned_abs() as usize);
            }
        }
    });
    r
}

/// The plan of the scalar twins of `plan`'s kernel where it is a 3-D
/// `temporal` kernel of vectors ([`vectors::scalar_twin`]), but one that
/// runs single steps instead ([`splits_steps`]).
pub fn scalar_twin(plan: &Plan, st: &Stencil, d: &super::Dialect) -> Option<Plan> {
    (vector_plan(plan, st) && !splits_steps(plan, st)).then(|| vectors::scalar_twin(plan, st, d))
}

/// Whether `plan`'s tiles keep cells to store after recomputing their
/// overlap (and, in 3-D, fit the shared memory of dialect `d`); the error
/// says what to change.
pub fn check(plan: &Plan, st: &Stencil, d: &super::Dialect) -> Result<(), String> {
    if st.dims() == 3 {
        return planes::check(plan, st, d);
    }
    let backend = d.name;
    if plan.block[1] % LANES != 0 {
        return Err(format!(
            "`{}` blocks are warps of {LANES} lanes along `{}`: the `block` extent there must be a multiple of {LANES}, \
             not {}; e.g. block = [1, 128] in [tiling.{backend}]",
            plan.strategy.name(),
            st.axes[1],
            plan.block[1]
        ));
    }
    let t = plan.time_block;
    let r = radius(st)[1];
    let cells = LANES * plan.vector;
    if 2 * r * t >= cells {
        return Err(overlap_error(plan, st, 1, r, cells, "vector", backend));
    }
    Ok(())
}

/// The error for `plan`'s tiles of `cells` along `axis` that recompute them all.
pub fn overlap_error(
    plan: &Plan,
    st: &Stencil,
    axis: usize,
    r: usize,
    cells: usize,
    key: &str,
    backend: &str,
) -> String {
    let t = plan.time_block;
    format!(
        "`{}` with `time_block = {t}` recomputes {} cells along `{}` (radius {r} x {t} steps on each side) \
         of tiles {cells} cells wide, which leaves none to store for `{}`; lower `time_block` or raise `{key}` in [tiling.{backend}]",
        plan.strategy.name(),
        2 * r * t,
        st.axes[axis],
        st.name
    )
}
