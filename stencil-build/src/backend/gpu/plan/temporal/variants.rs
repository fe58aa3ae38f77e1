//! The variants a fused plan's kernels are written in, each chosen by a
//! rule measured on NVIDIA GPUs (on a dialect the model was not measured
//! on, `Dialect::tuned` off, the generic variant): unrolled row loops,
//! selected levels, literals passed by value, launch bounds. Emitters ask
//! these; they decide none.

use super::planes::{Planes, RESIDENT_THREADS};
use super::{MAX_UNROLLED_POINTS, reads_inputs, splits, sums};
use crate::backend::gpu::{Dialect, Plan};
use crate::ir::{Dtype, Slot, Stencil, Strategy, Version};

/// Whether a 2-D `temporal` warp tile function unrolls its loop over the
/// rows by the window's rows: where the stencil reads at most
/// [`MAX_UNROLLED_POINTS`] cells of the field it steps. A leapfrog's is
/// unrolled only in the copy without checks (`EDGE`, f32), since unrolling
/// both took wave2d f32 from 157 to 201 registers, 2 blocks a
/// multiprocessor instead of 3 (0.78x-0.91x), and f64 leapfrogs (no such
/// copy) measured 0.83x-0.91x. Not in `persistent`, where it ran
/// 0.92x-1.12x in f32 and, in f64, lost to the literals and selection
/// without it (j2d9pt 0.77x-0.91x with both), nor on HIP (hipcc, clang,
/// leaves a loop of shuffles as it is and warns).
pub fn unrolls_rows(plan: &Plan, st: &Stencil, d: &Dialect) -> bool {
    let s = &st.statements[0];
    let streamed = Slot {
        field: s.target,
        version: Version::Start,
    };
    d.tuned
        && plan.strategy == Strategy::Temporal
        && s.offsets(streamed).len() <= MAX_UNROLLED_POINTS
}

/// Whether a 2-D fused level computes its update at every cell and
/// selects it (no branch): in kernels without a copy without checks
/// (f64, [`splits`]) where every read comes from the windows (not a
/// leapfrog's previous level or an input grid, read from global
/// memory). With the literals in constant memory, `temporal` ran j2d5pt
/// f64 1.14x-1.33x, j2d9pt-gol f64 1.36x-1.55x, j2d25pt f64 1.25x-1.44x
/// (H100), `persistent` j2d5pt f64
/// 1.39x-1.58x, j2d9pt-gol 1.16x-1.40x, j2d25pt 1.09x-1.30x and j2d9pt
/// 0.94x-1.35x. The f32 kernels' checked copies lost with
/// it (j2d5pt 0.60x-0.86x); HIP was not measured.
pub fn selects_levels(plan: &Plan, st: &Stencil, d: &Dialect) -> bool {
    d.tuned && plan.strategy.fuses_steps() && !splits(st) && !reads_inputs(st)
}

/// Whether the update reads its literals from a table passed by value
/// (the emitter's `Banked`): 2-D fused f64 kernels on CUDA. In `temporal`, j2d5pt's
/// loop fell from 983 to 658 instructions for 3 rows and ran 1.09x-1.15x
/// (H100); with the selection
/// ([`selects_levels`]) `persistent` gained too. The
/// 3-D kernels keep their literals inline: there the table ran j3d7pt
/// f64 0.87x-0.89x and j3d27pt 0.78x-0.81x, poisson 1.07x.
pub fn banks_literals(plan: &Plan, st: &Stencil, d: &Dialect) -> bool {
    st.dims() == 2 && plan.strategy.fuses_steps() && st.dtype == Dtype::F64 && d.tuned
}

/// The blocks a multiprocessor keeps resident at least, as the second
/// launch bound: enough for [`RESIDENT_THREADS`], for an unrolled f32
/// 3-D fused kernel in CUDA with 32-bit indices whose windows take at
/// most [`BOUNDED_WINDOWS`](crate::backend::gpu::plan::temporal::planes::BOUNDED_WINDOWS) registers. Not in HIP, whose second bound
/// means something else, nor where the bound made ptxas spill: in f64,
/// with 64-bit indices, with larger windows (8 rows over 4 steps).
/// `wide`: a kernel of 64-bit indices.
pub fn resident_blocks(plan: &Plan, st: &Stencil, d: &Dialect, wide: bool) -> Option<usize> {
    let candidate = st.dims() == 3
        && plan.strategy.fuses_steps()
        && st.dtype == Dtype::F32
        && d.min_blocks_bound
        && !wide;
    let sums = sums::plan_runs(plan, st) && plan.vector == sums::COLUMNS;
    if candidate && sums {
        return Some(sums::RESIDENT_BLOCKS);
    }
    if !candidate || plan.vector != 1 {
        return None;
    }
    let sh = Planes::new(plan, st, d.shared_max);
    (sh.unrolled() && sh.bounded()).then(|| RESIDENT_THREADS.div_ceil(plan.threads()))
}
