//! The kernels a plan's file carries beside its own: the single step a
//! fused plan launches for one step, the small grids' and small planes'
//! kernels of `auto`'s single steps, and the scalar twins of kernels of
//! vectors. Each is a plan of its own, settled by the same [`resolve`].

use super::model::{deep_blocks, planes_stream, single_step, vector_stream};
use super::{Dialect, Plan, resolve, temporal};
use crate::ir::{GpuTiling, Stencil, Strategy};

/// The plans of the kernels a plan's file carries beside its own.
pub struct Companions {
    /// The other single-step kernel: the one a fused launch of one step
    /// runs instead ([`step_plan`]), or the one `auto`'s single steps run
    /// on small grids ([`small_plan`]).
    pub step: Option<Plan>,
    /// The small planes' kernel of `step` where that is `planes_stream`'s
    /// ([`small_planes_plan`]).
    pub step_small: Option<Plan>,
    /// `auto`'s single steps on small grids ([`naive_plan`]).
    pub naive: Option<Plan>,
    /// The scalar twins of a 3-D `temporal` kernel of vectors
    /// ([`temporal::scalar_twin`]).
    pub scalar: Option<Plan>,
    /// The scalar twins of 3-D `stream` kernels of vectors ([`scalar_stream`]).
    pub defaults: Option<Plan>,
}

impl Companions {
    /// The companions of `plan` for `st` on `d`.
    pub fn of(plan: &Plan, st: &Stencil, d: &Dialect) -> Self {
        let step = step_plan(plan, st, d).or_else(|| small_plan(plan, st, d));
        Companions {
            step_small: step
                .as_ref()
                .and_then(|step| small_planes_plan(step, st, d)),
            step,
            naive: naive_plan(plan, st, d),
            scalar: temporal::scalar_twin(plan, st, d),
            defaults: scalar_stream(st, d),
        }
    }
}

/// The plan of the kernel a fused strategy launches for one step
/// ([`single_step`], marching 64 planes where `auto`'s do where steps do
/// not fuse, [`deep_blocks`], resolved): a fused launch of one level recomputes its
/// tiles' overlap for nothing, and measured 0.24x-0.77x the single step on
/// the suite (H100). [`planes_stream`]'s
/// plan keeps its kernel of small planes ([`Plan::vector_planes`]).
/// `None` for the single-step strategies and for `temporal` of one step a
/// launch, whose launches are all of one step.
pub fn step_plan(plan: &Plan, st: &Stencil, d: &Dialect) -> Option<Plan> {
    if !plan.fuses_steps() {
        return None;
    }
    let single = single_step(st, d);
    // The blocks `auto` runs where steps do not fuse, marching 64 planes
    // ([`deep_blocks`]); but a ring kernel's single steps keep the blocks its
    // choice of grids was measured against (`Gen::rings_preferred`). A 2-D
    // periodic grid's keep `stream` too: `naive`'s rows of vectors, which
    // `auto` runs where steps do not fuse (`model::periodic_rows`), ran
    // 0.87x-0.92x its `stream` as this kernel (H200, 16384^2, the periodic
    // stars and cahn_hilliard2d, in turn twice), in one kernel that tests
    // each thread's place where `auto`'s own runs the interior and the
    // frame apart.
    let rings = temporal::rings_plan(plan, st);
    let single = if rings {
        single
    } else {
        deep_blocks(st, d, &single)
    };
    let planes = single == planes_stream(st);
    // A ring kernel's single steps also run the grids of small planes, where
    // 16-byte vectors ran fastest (`Gen::rings_preferred`).
    let single = if rings && single.vector.unwrap_or(1) == 1 {
        vector_stream(st, d)
    } else {
        single
    };
    let step = resolve(&single, st, d).ok()?;
    Some(Plan {
        chosen: planes,
        ..step
    })
}

/// The plan of the kernel that `auto`'s single steps run on small grids
/// where they have one ([`Plan::small_grids`]): [`vector_stream`].
/// `None` for the other plans.
pub fn small_plan(plan: &Plan, st: &Stencil, d: &Dialect) -> Option<Plan> {
    if !plan.small_grids() {
        return None;
    }
    resolve(&vector_stream(st, d), st, d).ok()
}

/// The kernel [`planes_stream`]'s plan runs on planes of fewer than
/// [`SMALL_PLANES`](crate::backend::gpu::plan::model::SMALL_PLANES) cells ([`small_plan`]); `None` for the other plans.
pub fn small_planes_plan(plan: &Plan, st: &Stencil, d: &Dialect) -> Option<Plan> {
    small_plan(plan, st, d).filter(|_| plan.vector_planes())
}

/// The plan of the kernel `auto`'s single steps run on small grids, those of
/// fewer than [`small_step_cells`](crate::backend::gpu::plan::model::small_step_cells) cells per multiprocessor: `naive`, one
/// cell a thread. On the H100 with graphs (`naive` and the single-step
/// kernels timed in one run) `naive`
/// was the fastest single step on 48^3 and 512^2 (110k-262k cells) for 12
/// of 14 stencil and dtype pairs, where `auto`'s `stream` in 16-byte vectors
/// ran 0.70x-0.94x it: blocks that march 4 planes or rows, with rows of
/// vectors mostly idle on narrow grids, leave too few warps to hide the
/// latency. On 100^3 and 1024^2 (1M cells) `auto`'s kernels beat `naive` on
/// most stencils. The small-grid kernel of `tensor` and
/// [`planes_stream`] ([`small_plan`]) then runs on the grids between this
/// rule and theirs.
/// `None` for strategies named in the spec, `naive`, and fused plans without
/// a single-step kernel.
pub fn naive_plan(plan: &Plan, st: &Stencil, d: &Dialect) -> Option<Plan> {
    let steps_alone = !plan.fuses_steps() || step_plan(plan, st, d).is_some();
    if !plan.chosen || plan.strategy == Strategy::Naive || !steps_alone {
        return None;
    }
    // One cell a thread: more threads where the grid is small.
    let naive = GpuTiling {
        vector: Some(1),
        ..GpuTiling::model(Strategy::Naive)
    };
    resolve(&naive, st, d).ok()
}

/// The plan of the scalar twins of a 3-D `stream` kernel of vectors, which
/// run the grids whose rows are not whole vectors: `stream`'s defaults (one
/// cell a thread, blocks of `[1, 8, 32]` threads on CUDA), their chunk of
/// planes the launcher's, at most 64 (`Gen::shortens_chunk`). On the
/// H200, on 300 x 994 x 750 (f32) and 300 x 994 x 749 (f64), the twin of
/// `[1, 2, 64]` threads and chunks of 4 planes ran 0.79x-0.91x `stream`'s
/// defaults on 12 of the suite's 16 3-D stencil and dtype pairs, 0.95x-1.07x
/// on the others (j3d7pt, j3d13pt, wave3d); `auto`'s single steps ran it,
/// star3d25 f32 at 0.83x and the ring kernels' single steps of acoustic25
/// f32 at 0.81x. `None` in 2-D,
/// where the twin of `[1, 64]` threads ran 0.83x-1.15x the defaults'.
pub fn scalar_stream(st: &Stencil, d: &Dialect) -> Option<Plan> {
    (st.dims() == 3)
        .then(|| resolve(&GpuTiling::model(Strategy::Stream), st, d).ok())
        .flatten()
}
