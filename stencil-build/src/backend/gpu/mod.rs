//! The GPU kernel generator, shared by CUDA and HIP: one generator, a
//! [`Dialect`] for what differs (headers, runtime API names, warp width).
//!
//! One kernel per `[[update]]`, its strategy and block shape compile-time
//! constants:
//!
//! - `naive`: one thread per cell, reads through `const __restrict__` pointers;
//! - `tiled`: each block stages the tile it computes plus its halo in shared
//!   memory, for every grid read at non-zero offsets, then computes from there;
//! - `stream` (2.5-D): a block owns a tile of the fast axes and marches along
//!   the slowest axis through `chunk` cells, `coarsen` cells per iteration,
//!   each thread `vector` cells of the contiguous axis. Per grid and row
//!   offset the statement reads (a row group), each thread keeps a window of
//!   the planes it reads in registers: every value is loaded once, as one
//!   vector for the thread's own cells, and reused for every output that
//!   reads it at another offset along the slowest axis. In-plane neighbours
//!   come through the read-only data cache, where the neighbouring threads'
//!   loads put them: no shared memory and no barrier. Blocks whose chunk
//!   takes one iteration (`chunk <= coarsen`) fill the window once; the
//!   others move it `coarsen` planes per iteration, the next iteration's
//!   planes loaded before this one computes (software pipelining).
//!
//! Each kernel has an `extern "C"` launcher returning the runtime's error
//! code, and the file has the few runtime calls the Rust side needs.

mod dialect;
mod literals;
mod persistent;
mod temporal;
mod tensor;

use std::collections::BTreeSet;

pub use dialect::{CUDA, Dialect, GraphUpdate, HIP};
pub use temporal::{fused_leapfrog, splits_steps};
pub use tensor::reads_one_grid;

use super::{CExpr, CWriter};
use crate::analysis::{Analysis, StatementInfo};
use crate::codegen::expr;
use crate::codegen::index::{linear_index, offset_index, wrapped_index};
use crate::codegen::names::{slot_name, statement_name};
use crate::ir::{Access, Boundary, Dtype, GpuTiling, Slot, Statement, Stencil, Strategy};

/// A strategy with every choice made: what the kernels are generated from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// `Naive`, `Tiled`, `Stream` or `Temporal`.
    pub strategy: Strategy,
    /// Threads per block per axis, in axis order (`block[0] == 1` for
    /// `stream` and `temporal`).
    pub block: Vec<usize>,
    /// Cells of the slowest axis per block (`stream`, `temporal`; 1 otherwise).
    pub chunk: usize,
    /// Cells of the slowest axis each `stream` thread computes per iteration;
    /// rows of the middle axis of a 3-D `temporal` thread (1 otherwise).
    pub coarsen: usize,
    /// Cells of the contiguous axis each `stream` thread computes, loaded and
    /// stored as one vector; cells of a 2-D `temporal` lane (1 otherwise).
    pub vector: usize,
    /// Steps fused per launch (`temporal`; 1 otherwise).
    pub time_block: usize,
    /// The most blocks per multiprocessor a `persistent` launch keeps
    /// resident (`None`: as many as fit, and for the other strategies).
    pub occupancy: Option<usize>,
    /// `auto` chose this plan (the spec did not name the strategy): see
    /// [`Self::small_grids`], [`Self::measures`] and [`naive_plan`].
    pub chosen: bool,
}

impl Resolved {
    /// `auto`'s single steps that run another kernel on small grids,
    /// `stream` in 16-byte vectors of blocks of `[1, 2, 64]` threads
    /// marching 4 planes ([`small_plan`]): `tensor`, on the grids where its
    /// blocks would compute too little ([`tensor::SMALL_GRID_EFFICIENCY`]),
    /// and [`Self::vector_planes`], on planes of fewer than [`SMALL_PLANES`]
    /// cells. False for the other plans and for strategies named in the
    /// spec.
    pub fn small_grids(&self) -> bool {
        self.chosen && (self.strategy == Strategy::Tensor || self.vector_planes())
    }

    /// `auto`'s single steps of [`planes_stream`]: `stream` of 16-byte
    /// vectors marching chunks of [`crate::ir::STREAM_CHUNK`] planes (its
    /// other `stream` plans march 2 or 4 planes, or compute one cell a
    /// thread).
    pub fn vector_planes(&self) -> bool {
        self.chosen
            && self.strategy == Strategy::Stream
            && self.vector > 1
            && self.chunk == crate::ir::STREAM_CHUNK
    }

    /// A fused strategy (`temporal` of several steps a launch, `persistent`)
    /// as `auto`'s choice: each session times a fused launch against as many
    /// launches of the single-step kernel on its grids, and keeps the faster
    /// (the generated Rust's `Fusion::Measure`). On the H100
    /// neither won on every grid: fused launches lost up to 9x on small
    /// grids and won up to 2.7x on large ones, the crossing depending on the
    /// stencil (BENCHMARKS.md, 2026-11-26, session 26). False for single-step
    /// plans and for strategies named in the spec.
    pub fn measures(&self) -> bool {
        self.chosen && self.fuses_steps()
    }

    /// Whether a launch runs several steps: `temporal` of more than one step
    /// a launch, and `persistent`.
    pub fn fuses_steps(&self) -> bool {
        match self.strategy {
            Strategy::Temporal => self.time_block > 1,
            Strategy::Persistent => true,
            _ => false,
        }
    }

    /// Threads per block.
    pub fn threads(&self) -> usize {
        self.block.iter().product()
    }
}

/// Settles `auto` and the defaults with the documented model, which follows
/// what measured fastest on the H100 (BENCHMARKS.md, 2026-11-22):
///
/// - `auto` is single-pass `stream` where it beat `naive` there: 2-D f32
///   `coarsen = chunk = 4`, `vector = 4`, blocks `[1, 64]` (90% of the
///   cudaMemcpy bound, 1.6x naive); 2-D f64 `coarsen = chunk = 4`, blocks
///   `[1, 256]` (98%, 1.1x); 3-D `coarsen = chunk = 2`, 16-byte vectors,
///   blocks `[1, 2, 64]`, 32-bit indices. Its values sit in registers, so a
///   stencil whose footprint needs more than [`AUTO_REGISTER_WORDS`] of them
///   per thread (wide or multi-grid stencils) gets [`wide_stream`] instead
///   (one update), `naive` otherwise, as do 1-D stencils;
/// - otherwise blocks hold 256 threads, the contiguous axis a multiple of the
///   warp (32 lanes for CUDA, 64 for HIP): `[256]`, `[8, 32]`, `[2, 4, 32]`;
///   `stream` blocks are `[1, 256]` (2-D) or `[1, 8, 32]` (3-D) and march 64
///   cells, one per iteration, one per thread along the contiguous axis;
/// - on CUDA, `auto`'s single step is `tensor` for f64 3-D stencils whose
///   in-plane sum matrix products can take, reaching 3 cells or more
///   ([`tensor::auto_tensor`]);
/// - `auto` is `temporal` (with [`temporal::defaults`]) where
///   [`temporal::auto_fuses`] says the steps fuse and it measured faster,
///   and `persistent` where [`temporal::auto_persists`] says that one launch
///   of every step measured faster still, on the suite's grids; on smaller
///   ones single steps can win, so each session of such a plan times the
///   two on its own grids and keeps the faster ([`Resolved::measures`]).
///
/// `persistent` takes `temporal`'s tiling (the same model fills in what the
/// spec leaves out).
pub fn resolve(t: &GpuTiling, st: &Stencil, d: &Dialect) -> Result<Resolved, String> {
    let dims = st.dims();
    let chosen = t.strategy == Strategy::Auto;
    let model;
    let t = if chosen {
        model = auto(st, d);
        &model
    } else {
        t
    };
    let strategy = match t.strategy {
        Strategy::Temporal => {
            return Ok(Resolved {
                chosen,
                ..temporal::defaults(t, st, d)
            });
        }
        Strategy::Tensor => {
            return Ok(Resolved {
                strategy: Strategy::Tensor,
                block: vec![1, tensor::THREADS / d.warp, d.warp],
                chunk: t.chunk.unwrap_or(crate::ir::TENSOR_CHUNK),
                coarsen: 1,
                vector: 1,
                time_block: 1,
                occupancy: None,
                chosen,
            });
        }
        Strategy::Persistent => {
            return Ok(Resolved {
                strategy: Strategy::Persistent,
                occupancy: t.occupancy,
                chosen,
                ..temporal::defaults(t, st, d)
            });
        }
        s => s,
    };
    let block = t
        .block
        .clone()
        .unwrap_or_else(|| default_block(strategy, dims, d.warp));
    let (chunk, coarsen, vector) = if strategy == Strategy::Stream {
        (
            t.chunk.unwrap_or(crate::ir::STREAM_CHUNK),
            t.coarsen.unwrap_or(1),
            t.vector.unwrap_or(1),
        )
    } else {
        (1, 1, 1)
    };
    Ok(Resolved {
        strategy,
        block,
        chunk,
        coarsen,
        vector,
        time_block: 1,
        occupancy: None,
        chosen,
    })
}

/// The most values a single-pass `stream` thread may hold in registers for
/// `auto` to pick it (in 32-bit words; the rest of 255 goes to addresses and
/// in-flight sums, and more cost occupancy).
pub const AUTO_REGISTER_WORDS: usize = 48;

/// `auto`, settled for `st` (see [`resolve`]).
fn auto(st: &Stencil, d: &Dialect) -> GpuTiling {
    if d.async_copies && temporal::auto_rings(st, d) {
        return GpuTiling {
            vector: Some(4),
            ..GpuTiling::model(Strategy::Temporal)
        };
    }
    if let Some(v) = temporal::auto_vector(st, d) {
        return GpuTiling {
            vector: Some(v),
            ..GpuTiling::model(Strategy::Temporal)
        };
    }
    if temporal::auto_fuses(st) {
        return GpuTiling::model(if temporal::auto_persists(st) {
            Strategy::Persistent
        } else {
            Strategy::Temporal
        });
    }
    single_step(st, d)
}

/// `auto`'s single-step kernel for `st` (see [`resolve`]): what it picks
/// where steps do not fuse, and what the fused strategies launch for one
/// step ([`step_plan`]).
fn single_step(st: &Stencil, d: &Dialect) -> GpuTiling {
    if d.tensor_cores && tensor::auto_tensor(st) {
        if tensor::reads_one_grid(st) {
            return GpuTiling::model(Strategy::Tensor);
        }
        return planes_stream(st);
    }
    if d.tuned && wide_planes(st) {
        return planes_stream(st);
    }
    let naive = GpuTiling::model(Strategy::Naive);
    let (block, c, v) = match (st.dims(), st.dtype) {
        (2, Dtype::F32) => (vec![1, 64.max(d.warp)], 4, 4),
        (2, Dtype::F64) => (vec![1, 256], 4, 1),
        (3, dtype) => (vec![1, 2, 64.max(d.warp)], 2, 16 / dtype.size()),
        _ => return naive,
    };
    if register_words(st, c, c, v) > AUTO_REGISTER_WORDS {
        // A window moved through chunks of planes (3-D) or rows (2-D) beat
        // `naive` on every such suite stencil: 3-D in f32 (1.02x to 1.67x)
        // and in f64 on the geometric mean (1.11x: 1.20x to 1.43x on poisson,
        // star3d25 and acoustic25, 0.93x to 0.99x on j3d13pt, j3d17pt and
        // j3d27pt; H100, BENCHMARKS.md, 2026-11-23); 2-D j2d9pt and j2d25pt
        // 1.12x to 2.10x (2026-11-25, session 15). Multi-update stencils
        // (unmeasured) stay `naive`.
        if st.dims() > 1 && st.statements.len() == 1 {
            return wide_stream(st, d);
        }
        return naive;
    }
    GpuTiling {
        strategy: Strategy::Stream,
        block: Some(block),
        coarsen: Some(c),
        chunk: Some(c),
        vector: Some(v),
        ..naive
    }
}

/// The plan of the kernel a fused strategy launches for one step
/// ([`single_step`], resolved): a fused launch of one level recomputes its
/// tiles' overlap for nothing, and measured 0.24x-0.77x the single step on
/// the suite (H100, BENCHMARKS.md, 2026-11-25, session 14). [`planes_stream`]'s
/// plan keeps its kernel of small planes ([`Resolved::vector_planes`]).
/// `None` for the single-step strategies and for `temporal` of one step a
/// launch, whose launches are all of one step.
pub fn step_plan(plan: &Resolved, st: &Stencil, d: &Dialect) -> Option<Resolved> {
    if !plan.fuses_steps() {
        return None;
    }
    let single = single_step(st, d);
    let planes = single == planes_stream(st);
    // A ring kernel's single steps also run the grids of small planes, where
    // 16-byte vectors ran fastest (`Gen::rings_preferred`).
    let single = if temporal::rings_plan(plan, st) && single.vector.unwrap_or(1) == 1 {
        vector_stream(st, d)
    } else {
        single
    };
    let step = resolve(&single, st, d).ok()?;
    Some(Resolved {
        chosen: planes,
        ..step
    })
}

/// Whether `auto`'s single step on CUDA for an f32 stencil is
/// [`planes_stream`]'s: 3-D, one update, reaching [`WIDE_PLANES_REACH`]
/// cells along the plane's axes, as star3d25 and acoustic25 (wider stencils
/// are unmeasured, and their windows of vectors would hold more registers).
/// On the H200 their launches of one step ran 1.03x-1.10x as fast as with
/// [`wide_stream`]'s blocks marching 4 planes, which they ran before, on
/// planes of 512 x 512 cells (512^3, 128 x 512 x 512; star3d25 1.06x on 300
/// x 448 x 448, acoustic25 0.98x), and 1.17x-1.44x on rows of 750 cells
/// (8-byte pairs, where the scalar twin ran before); on planes under
/// [`SMALL_PLANES`] (256^3, where the blocks marching 64 planes ran
/// 0.92x-0.99x) its launcher runs the blocks marching 4
/// (`benchmarks/experiments/wide-planes`, session 42; `planes-stream`,
/// session 41).
fn wide_planes(st: &Stencil) -> bool {
    let r = temporal::radius(st);
    st.dims() == 3
        && st.dtype == Dtype::F32
        && st.statements.len() == 1
        && r[1].max(r[2]) == WIDE_PLANES_REACH
}

/// The in-plane reach of [`wide_planes`]' stencils.
pub const WIDE_PLANES_REACH: usize = 4;

/// Cells of a plane under which [`planes_stream`]'s launcher runs `stream`
/// in 16-byte vectors of blocks of `[1, 2, 64]` threads marching 4 planes
/// ([`small_plan`]). On the H200 (`benchmarks/experiments/tensor-m16`,
/// session 40) that kernel ran acoustic25 f64 0.97x-1.01x as fast as the best
/// of [`planes_stream`]'s blocks marching 4, 8, 16 or 64 planes on planes of
/// up to 256 x 256 cells (cubes of 128 to 256, 129 x 131 x 133; `naive` ran
/// 100^3 1.21x faster), while on planes of 416 x 416 cells and more the
/// chunks of 64 ran 1.05x-1.12x `tensor`, which it ran before. On the H100
/// (session 25) it ran 1.04x-2.33x `tensor` on planes of up to 384 x 384
/// cells, 0.79x-0.96x from 416 x 416 on.
pub const SMALL_PLANES: usize = 400 * 400;

/// `auto`'s single step on CUDA for a stencil `tensor` could compute
/// ([`tensor::auto_tensor`]) whose update reads other grids at the cell than
/// the one it sums in-plane (acoustic25 f64: the previous level and the
/// velocity): `stream`'s blocks of `[1, 8, 32]` threads marching 64 planes,
/// each thread 16 bytes of a row. On the H200 they ran acoustic25 f64
/// 1.05x-1.12x as fast as `tensor` on every grid measured of planes of 416 x
/// 416 cells or more (cubes of 416 and 512, 300 x 448 x 448, 128 x 512 x
/// 512, 64 x 994 x 750, the suite's 300 x 994 x 750;
/// `benchmarks/experiments/tensor-m16`, session 40); small planes run
/// [`small_plan`]'s kernel ([`SMALL_PLANES`]), the smallest grids `naive`
/// ([`SMALL_STEP_CELLS_MORE_GRIDS`]).
fn planes_stream(st: &Stencil) -> GpuTiling {
    GpuTiling {
        vector: Some(16 / st.dtype.size()),
        ..GpuTiling::model(Strategy::Stream)
    }
}

/// The plan of the kernel that `auto`'s single steps run on small grids
/// where they have one ([`Resolved::small_grids`]): [`vector_stream`].
/// `None` for the other plans.
pub fn small_plan(plan: &Resolved, st: &Stencil, d: &Dialect) -> Option<Resolved> {
    if !plan.small_grids() {
        return None;
    }
    resolve(&vector_stream(st, d), st, d).ok()
}

/// The kernel [`planes_stream`]'s plan runs on planes of fewer than
/// [`SMALL_PLANES`] cells ([`small_plan`]); `None` for the other plans.
pub fn small_planes_plan(plan: &Resolved, st: &Stencil, d: &Dialect) -> Option<Resolved> {
    small_plan(plan, st, d).filter(|_| plan.vector_planes())
}

/// Cells per multiprocessor under which `auto`'s single steps run `naive`'s
/// kernel ([`naive_plan`]): 541k cells on the H100's 132.
pub const SMALL_STEP_CELLS: usize = 4096;

/// [`SMALL_STEP_CELLS`] for [`planes_stream`]'s plan, whose small grids
/// otherwise run `stream` in 16-byte vectors ([`SMALL_PLANES`]): 1.08M cells
/// on the H100. There acoustic25 f64 ran `naive` 1.07x-1.11x faster than
/// that `stream` on 100^3 (1M cells) in three sessions (30-32), and 0.98x as
/// fast on 128^3 (2.1M; BENCHMARKS.md, 2026-11-27, session 30), when
/// `auto` ran `tensor` on its large planes; on the H200, 1.21x on 100^3 and
/// 0.97x on 128^3 (session 40).
pub const SMALL_STEP_CELLS_MORE_GRIDS: usize = 8192;

/// The plan of the kernel `auto`'s single steps run on small grids, those of
/// fewer than [`small_step_cells`] cells per multiprocessor: `naive`, one
/// cell a thread. On the H100 with graphs (`naive` and the single-step
/// kernels timed in one run; BENCHMARKS.md, 2026-11-27, session 32) `naive`
/// was the fastest single step on 48^3 and 512^2 (110k-262k cells) for 12
/// of 14 stencil and dtype pairs, where `auto`'s `stream` in 16-byte vectors
/// ran 0.70x-0.94x it: blocks that march 4 planes or rows, with rows of
/// vectors mostly idle on narrow grids, leave too few warps to hide the
/// latency. On 100^3 and 1024^2 (1M cells) `auto`'s kernels beat `naive` on
/// most stencils (session 31). The small-grid kernel of `tensor` and
/// [`planes_stream`] ([`small_plan`]) then runs on the grids between this
/// rule and theirs.
/// `None` for strategies named in the spec, `naive`, and fused plans without
/// a single-step kernel.
pub fn naive_plan(plan: &Resolved, st: &Stencil, d: &Dialect) -> Option<Resolved> {
    let steps_alone = !plan.fuses_steps() || step_plan(plan, st, d).is_some();
    if !plan.chosen || plan.strategy == Strategy::Naive || !steps_alone {
        return None;
    }
    resolve(&GpuTiling::model(Strategy::Naive), st, d).ok()
}

/// Cells per multiprocessor under which `plan`'s single steps run `naive`'s
/// kernel where [`naive_plan`] has one: [`SMALL_STEP_CELLS_MORE_GRIDS`] for
/// [`planes_stream`]'s plan ([`Resolved::vector_planes`]), else
/// [`SMALL_STEP_CELLS`].
pub fn small_step_cells(plan: &Resolved) -> usize {
    if plan.vector_planes() {
        SMALL_STEP_CELLS_MORE_GRIDS
    } else {
        SMALL_STEP_CELLS
    }
}

/// The most values a `stream` thread of [`wide_stream`]'s 16-byte vectors
/// may hold in registers (32-bit words): star3d25's window in f32 (a star of
/// radius 4, 1.30x the defaults); in f64 its window takes 264 words and the
/// vectors measured 0.98x-0.99x the defaults.
pub const WIDE_REGISTER_WORDS: usize = 184;

/// `auto`'s `stream` for a 2-D or 3-D stencil of one update too wide for the
/// compact single-pass blocks. If its window fits [`WIDE_REGISTER_WORDS`]:
/// blocks of `[1, 64]` (2-D) or `[1, 2, 64]` (3-D) threads, each with 16
/// bytes of the contiguous axis (4 cells in f32, 2 in f64), marching chunks
/// of 4 rows or planes one at a time. On the H100 they beat `stream`'s
/// defaults on every such suite stencil: 3-D in f32 (1.30x star3d25 to 1.63x
/// j3d13pt) and in f64 (1.13x to 1.29x; BENCHMARKS.md, 2026-11-24, session
/// 9); 2-D j2d9pt and j2d25pt 1.11x to 1.36x (and `naive` 1.12x to 2.10x);
/// the leapfrogs, which read two more grids, wave3d 1.11x (f32) and 1.04x
/// (f64), wave2d f32 1.04x (2026-11-25, session 15). Otherwise `stream`'s
/// defaults, chunks of 64 planes or rows, one cell per thread: the windows
/// over the budget measured slower with the vectors (star3d25 f64, 264
/// words: 0.98x-0.99x; acoustic25, 200 and 280 words: 0.79x in f32, 0.81x
/// in f64, on 300 x 994 x 750, where the f32 vectors ran their scalar twin,
/// then of their own blocks and chunks ([`scalar_stream`] since session 37);
/// on 512^3 they ran 1.25x in f32, 0.83x in f64, session 23).
fn wide_stream(st: &Stencil, d: &Dialect) -> GpuTiling {
    if register_words(st, 4, 1, 16 / st.dtype.size()) <= WIDE_REGISTER_WORDS {
        return vector_stream(st, d);
    }
    GpuTiling::model(Strategy::Stream)
}

/// `stream` in 16-byte vectors ([`wide_stream`]'s): blocks of `[1, 64]`
/// (2-D) or `[1, 2, 64]` (3-D) threads, chunks of 4 rows or planes.
fn vector_stream(st: &Stencil, d: &Dialect) -> GpuTiling {
    let block = if st.dims() == 2 {
        vec![1, 64.max(d.warp)]
    } else {
        vec![1, 2, 64.max(d.warp)]
    };
    GpuTiling {
        block: Some(block),
        chunk: Some(4),
        coarsen: Some(1),
        vector: Some(16 / st.dtype.size()),
        ..GpuTiling::model(Strategy::Stream)
    }
}

/// The plan of the scalar twins of a 3-D `stream` kernel of vectors, which
/// run the grids whose rows are not whole vectors: `stream`'s defaults (one
/// cell a thread, blocks of `[1, 8, 32]` threads on CUDA), their chunk of
/// planes the launcher's, at most 64 ([`Gen::shortens_chunk`]). On the
/// H200, on 300 x 994 x 750 (f32) and 300 x 994 x 749 (f64), the twin of
/// `[1, 2, 64]` threads and chunks of 4 planes ran 0.79x-0.91x `stream`'s
/// defaults on 12 of the suite's 16 3-D stencil and dtype pairs, 0.95x-1.07x
/// on the others (j3d7pt, j3d13pt, wave3d); `auto`'s single steps ran it,
/// star3d25 f32 at 0.83x and the ring kernels' single steps of acoustic25
/// f32 at 0.81x (BENCHMARKS.md, 2026-11-28, session 37). `None` in 2-D,
/// where the twin of `[1, 64]` threads ran 0.83x-1.15x the defaults'.
fn scalar_stream(st: &Stencil, d: &Dialect) -> Option<Resolved> {
    (st.dims() == 3)
        .then(|| resolve(&GpuTiling::model(Strategy::Stream), st, d).ok())
        .flatten()
}

/// Static shared memory one block may use: CUDA's limit without opting in to
/// more (AMD's LDS holds 64 KiB).
pub const SHARED_BUDGET: usize = 48 * 1024;

/// Bytes of shared memory one block of `plan` needs for the most demanding
/// statement of `st`: `tiled` stages a tile plus halo of every grid read at
/// non-zero offsets; the other strategies use none.
pub fn shared_bytes(st: &Stencil, plan: &Resolved) -> usize {
    let per_statement = |s: &Statement| -> usize {
        let mut cells = 0;
        for slot in s.slots() {
            let mut reach = vec![0usize; st.dims()];
            s.expr.for_each_read(&mut |a| {
                if a.slot == slot {
                    for (r, d) in reach.iter_mut().zip(&a.offset) {
                        *r = (*r).max(d.unsigned_abs() as usize);
                    }
                }
            });
            if plan.strategy == Strategy::Tiled && reach.iter().any(|&r| r > 0) {
                cells += (0..st.dims())
                    .map(|a| plan.block[a] + 2 * reach[a])
                    .product::<usize>();
            }
        }
        cells * st.dtype.size()
    };
    st.statements.iter().map(per_statement).max().unwrap_or(0)
}

/// Makes `plan` fit [`SHARED_BUDGET`]: a default block is halved along its
/// slower axes until it fits; a block the spec gave (`explicit`) that does
/// not fit is an error saying what to change.
pub fn fit(
    mut plan: Resolved,
    explicit: bool,
    st: &Stencil,
    d: &Dialect,
) -> Result<Resolved, String> {
    if plan.strategy.fuses_steps() {
        temporal::check(&plan, st, d)?;
        return Ok(plan);
    }
    let vector_bytes = plan.vector * st.dtype.size();
    if vector_bytes > 16 {
        return Err(format!(
            "`vector = {}` makes vectors of {vector_bytes} bytes for `{}`, more than the 16 a load can move; \
             set `vector = {}` or less in [tiling.{}]",
            plan.vector,
            st.name,
            16 / st.dtype.size(),
            d.name
        ));
    }
    loop {
        let bytes = shared_bytes(st, &plan);
        if bytes <= SHARED_BUDGET {
            return Ok(plan);
        }
        let last = plan.block.len() - 1;
        let shrink = (0..last).find(|&a| plan.block[a] > 1);
        match shrink {
            Some(a) if !explicit => plan.block[a] /= 2,
            _ => {
                return Err(format!(
                    "strategy `{}` with blocks of {:?} threads needs {} KiB of shared memory per block for `{}`, more than the {} KiB budget; \
                     set a smaller `block` or another `strategy` in [tiling.{}]",
                    plan.strategy.name(),
                    plan.block,
                    bytes.div_ceil(1024),
                    st.name,
                    SHARED_BUDGET / 1024,
                    d.name
                ));
            }
        }
    }
}

fn default_block(strategy: Strategy, dims: usize, warp: usize) -> Vec<usize> {
    let rows = 256 / warp;
    match (strategy, dims) {
        (_, 1) => vec![256],
        (Strategy::Stream, 2) => vec![1, 256],
        (Strategy::Stream, _) => vec![1, rows, warp],
        (_, 2) => vec![rows, warp],
        _ => vec![2, rows / 2, warp],
    }
}

/// The kernel source of one stencil for dialect `d`.
pub fn source(st: &Stencil, an: &Analysis, plan: &Resolved, prefix: &str, d: &Dialect) -> String {
    let mut w = CWriter::default();
    let step = step_plan(plan, st, d).or_else(|| small_plan(plan, st, d));
    let step_small = step
        .as_ref()
        .and_then(|step| small_planes_plan(step, st, d));
    let naive = naive_plan(plan, st, d);
    let scalar = temporal::scalar_twin(plan, st, d);
    let defaults = scalar_stream(st, d);
    for (k, (s, info)) in st.statements.iter().zip(&an.statements).enumerate() {
        w.blank();
        let g = Gen {
            st,
            s,
            info,
            plan,
            d,
            sym: symbol(prefix, d, st, s),
            vector: plan.vector,
            wide: true,
            scalar: scalar.as_ref(),
            defaults: defaults.as_ref(),
            fallback: false,
            vectors_only: false,
            step: step.as_ref(),
            step_small: step_small.as_ref(),
            naive: naive.as_ref(),
            output: "out",
        };
        w.line(&format!(
            "/* Statement {} of {}: {} <- {} */",
            k + 1,
            st.statements.len(),
            st.fields[s.target].name,
            s.text
        ));
        twins(&mut w, &g);
        if let Some(single) = g.single_step() {
            let purpose = if plan.small_grids() {
                "small grids"
            } else {
                "launches of one step"
            };
            single_step_kernel(&mut w, &single, purpose);
            if let Some(small) = single.single_step() {
                single_step_kernel(&mut w, &small, "one step on small planes");
            }
        }
        if let Some(naive) = g.small_naive() {
            w.blank();
            w.line(&format!(
                "/* The kernel of single steps on small grids: `naive`, blocks of {} threads. */",
                join_x(&naive.plan.block)
            ));
            twins(&mut w, &naive);
        }
        w.blank();
        g.launcher(&mut w);
    }
    let body = w.finish();
    let mut w = CWriter::default();
    let residency = body.contains(RESIDENCY);
    header(&mut w, st, an, plan, step.as_ref(), residency, d);
    w.append(&body);
    w.finish()
}

/// The helper the launchers that size their grids by the device ask for
/// residency ([`Gen::residency`]).
const RESIDENCY: &str = "stencil_residency";

/// [`RESIDENCY`]: the device's multiprocessors and a kernel's resident
/// blocks, asked of the runtime once per device, kernel and launch shape
/// and kept in a table for the launches after. On the H100 the queries of
/// every launch held `auto`'s star3d25 and acoustic25 f64 on 64^3 (5 us a
/// step, the `stream` kernel of small grids) to 0.71x-0.94x that kernel
/// launched without them; cached, 1.00x (BENCHMARKS.md, session 25).
fn residency_helper(w: &mut CWriter, d: &Dialect) {
    w.blank();
    let text = RESIDENCY_HELPER
        .replace("{api}", d.api)
        .replace("{multiprocessors}", d.multiprocessors)
        .replace("{name}", RESIDENCY);
    for line in text.lines() {
        w.line(line);
    }
}

/// [`residency_helper`]'s C: `{name}` stands for [`RESIDENCY`], `{api}` and
/// `{multiprocessors}` for the dialect's spellings.
const RESIDENCY_HELPER: &str = r#"/* The current device's multiprocessors and the blocks of `kernel` (`threads` threads, `bytes` of dynamic
   shared memory) each keeps resident: asked of the runtime once per device, kernel and shape, then
   read from a table (a lock keeps it safe for launches from several host threads). */
static {api}Error_t {name}(const void *kernel, const int threads, const size_t bytes, int *multiprocessors, int *per_multiprocessor)
{
    struct Entry {
        const void *kernel;
        int device, threads;
        size_t bytes;
        int multiprocessors, per_multiprocessor;
    };
    static Entry table[64];
    static int used = 0;
    static std::mutex lock;
    int device = 0;
    {api}Error_t status = {api}GetDevice(&device);
    if (status != {api}Success)
        return status;
    {
        const std::lock_guard<std::mutex> guard(lock);
        for (int k = 0; k < used; ++k) {
            const Entry &e = table[k];
            if (e.kernel == kernel && e.device == device && e.threads == threads && e.bytes == bytes) {
                *multiprocessors = e.multiprocessors;
                *per_multiprocessor = e.per_multiprocessor;
                return {api}Success;
            }
        }
    }
    status = {api}DeviceGetAttribute(multiprocessors, {multiprocessors}, device);
    if (status == {api}Success)
        status = {api}OccupancyMaxActiveBlocksPerMultiprocessor(per_multiprocessor, kernel, threads, bytes);
    if (status != {api}Success)
        return status;
    const std::lock_guard<std::mutex> guard(lock);
    if (used < 64)
        table[used++] = Entry{kernel, device, threads, bytes, *multiprocessors, *per_multiprocessor};
    return {api}Success;
}"#;

/// The exported launcher of a statement's kernel.
pub fn symbol(prefix: &str, d: &Dialect, st: &Stencil, s: &Statement) -> String {
    format!(
        "{prefix}_{}__{}__{}",
        d.name,
        st.name,
        statement_name(st, s)
    )
}

/// The runtime calls of dialect `d` the generated Rust needs, shared by every stencil of a crate.
pub fn runtime_source(prefix: &str, d: &Dialect) -> String {
    let api = d.api;
    let mut w = CWriter::default();
    w.line(&format!(
        "/* {} runtime calls for the stencils of this crate, generated by stencil-build. */",
        d.title
    ));
    w.line(&format!("#include <{}>", d.header));
    w.line("#include <stddef.h>");
    w.blank();
    let functions: [(&str, &str, String); 16] = [
        (
            "malloc",
            "void **ptr, size_t bytes",
            format!("{api}Malloc(ptr, bytes)"),
        ),
        ("free", "void *ptr", format!("{api}Free(ptr)")),
        (
            "upload",
            "void *dst, const void *src, size_t bytes",
            format!("{api}Memcpy(dst, src, bytes, {api}MemcpyHostToDevice)"),
        ),
        (
            "download",
            "void *dst, const void *src, size_t bytes",
            format!("{api}Memcpy(dst, src, bytes, {api}MemcpyDeviceToHost)"),
        ),
        (
            "copy",
            "void *dst, const void *src, size_t bytes",
            format!("{api}Memcpy(dst, src, bytes, {api}MemcpyDeviceToDevice)"),
        ),
        (
            "zero",
            "void *ptr, size_t bytes",
            format!("{api}Memset(ptr, 0, bytes)"),
        ),
        // Every launch, copy and replay of a session is queued on the legacy stream, so
        // waiting for it waits for them. Not the device: a device synchronization fails
        // while another thread captures on the same device, whatever its capture mode,
        // and ends that capture invalidated (benchmarks/experiments/capture-threads).
        ("synchronize", "void", format!("{api}StreamSynchronize(0)")),
        (
            "device_count",
            "int *count",
            format!("{api}GetDeviceCount(count)"),
        ),
        // A session's graphs: its launches captured on a stream of its own, replayed on
        // the legacy stream.
        (
            "stream_create",
            "void **stream",
            format!("{api}StreamCreateWithFlags(({api}Stream_t *)stream, {api}StreamNonBlocking)"),
        ),
        (
            "stream_destroy",
            "void *stream",
            format!("{api}StreamDestroy(({api}Stream_t)stream)"),
        ),
        (
            "begin_capture",
            "void *stream",
            format!(
                "{api}StreamBeginCapture(({api}Stream_t)stream, {api}StreamCaptureModeThreadLocal)"
            ),
        ),
        (
            "end_capture",
            "void *stream, void **graph",
            format!("{api}StreamEndCapture(({api}Stream_t)stream, ({api}Graph_t *)graph)"),
        ),
        (
            "instantiate",
            "void **exec, void *graph",
            format!(
                "{api}GraphInstantiateWithFlags(({api}GraphExec_t *)exec, ({api}Graph_t)graph, 0)"
            ),
        ),
        (
            "graph_destroy",
            "void *graph",
            format!("{api}GraphDestroy(({api}Graph_t)graph)"),
        ),
        (
            "replay",
            "void *exec",
            format!("{api}GraphLaunch(({api}GraphExec_t)exec, 0)"),
        ),
        (
            "exec_destroy",
            "void *exec",
            format!("{api}GraphExecDestroy(({api}GraphExec_t)exec)"),
        ),
    ];
    for (name, args, call) in functions {
        w.line(&format!(
            "extern \"C\" int {prefix}_{}_{name}({args})",
            d.name
        ));
        w.line("{");
        w.line(&format!("    return (int){call};"));
        w.line("}");
        w.blank();
    }
    exec_update(&mut w, prefix, d);
    w.line(&format!(
        "extern \"C\" const char *{prefix}_{}_error_string(int code)",
        d.name
    ));
    w.line("{");
    w.line(&format!(
        "    return {api}GetErrorString(({api}Error_t)code);"
    ));
    w.line("}");
    w.finish()
}

/// The runtime call that updates an executable graph in place to a new
/// capture of the same launches with other arguments (a session's graph of
/// other parameters), instead of instantiating it: CUDA's call returns what
/// it found in one record, HIP's (CUDA 11's form) in the node and the result.
fn exec_update(w: &mut CWriter, prefix: &str, d: &Dialect) {
    let api = d.api;
    w.line("/* Updates `exec` in place to `graph`, a capture of as many launches with other arguments; fails (and");
    w.line("   `exec` must not be replayed) where the launches differ in kind. */");
    w.line(&format!(
        "extern \"C\" int {prefix}_{}_exec_update(void *exec, void *graph)",
        d.name
    ));
    w.line("{");
    let found = if d.graph_update == GraphUpdate::ResultInfo {
        w.line("    cudaGraphExecUpdateResultInfo info;");
        "&info"
    } else {
        w.line(&format!("    {api}GraphNode_t node;"));
        w.line(&format!("    {api}GraphExecUpdateResult result;"));
        "&node, &result"
    };
    w.line(&format!(
        "    return (int){api}GraphExecUpdate(({api}GraphExec_t)exec, ({api}Graph_t)graph, {found});"
    ));
    w.line("}");
    w.blank();
}

/// What the strategy adds to the blocks in the file's header: a `stream`
/// block's march, a `persistent` launch's cap on resident blocks.
fn detail(st: &Stencil, plan: &Resolved, d: &Dialect) -> String {
    if plan.strategy == Strategy::Stream {
        format!(
            ", marching {} cells along `{}` per block, {} per iteration, {} along `{}` per thread{}",
            plan.chunk,
            st.axes[0],
            plan.coarsen,
            plan.vector,
            st.axes[st.dims() - 1],
            small_planes_plan(plan, st, d).map_or(String::new(), |small| format!(
                "; planes of fewer than {SMALL_PLANES} cells run blocks of {} threads marching {} planes",
                join_x(&small.block),
                small.chunk
            ))
        )
    } else if temporal::rings_plan(plan, st) {
        format!(
            ", {} cells of `{}` per lane, {} steps fused in shared rings (level 1 and level 2 in their own warps); \
             small planes and rows that are not whole 8-byte pairs run one step a launch",
            plan.vector, st.axes[2], plan.time_block,
        )
    } else if temporal::sums_plan(plan, st) {
        temporal::sums_detail(plan, st)
    } else if temporal::vector_plan(plan, st) {
        format!(
            ", {} cells of `{}` per thread as one vector, {} steps fused{}",
            plan.vector,
            st.axes[2],
            plan.time_block,
            if temporal::splits_steps(plan, st) {
                "; rows that are not whole vectors run one step a launch"
            } else {
                ""
            }
        )
    } else if plan.strategy == Strategy::Tensor {
        let small = if plan.small_grids() {
            "; small grids run `stream` in 16-byte vectors"
        } else {
            ""
        };
        format!(
            ", the in-plane sum on the FP64 tensor cores, marching {} cells along `{}` per block{small}",
            plan.chunk, st.axes[0]
        )
    } else if let Some(k) = plan.occupancy {
        format!(", at most {k} resident per multiprocessor")
    } else {
        String::new()
    }
}

/// A single-step kernel of the file besides the plan's, and its twins,
/// after a comment with its plan and what it is for.
fn single_step_kernel(w: &mut CWriter, g: &Gen, purpose: &str) {
    w.blank();
    w.line(&format!(
        "/* The kernel of {purpose}: `{}`, blocks of {} threads{}. */",
        g.plan.strategy.name(),
        join_x(&g.plan.block),
        detail(g.st, g.plan, g.d)
    ));
    twins(w, g);
}

/// The kernels of `g`'s twins, each after the first with what it is for.
fn twins(w: &mut CWriter, g: &Gen) {
    for (k, twin) in g.twins().iter().enumerate() {
        if k > 0 {
            w.blank();
            w.line(&format!("/* The same {}. */", twin.twin_purpose()));
        }
        twin.kernel(w);
    }
}

/// The file's opening comment, includes and the helpers its kernels and
/// `step`'s (the plan of launches of one step) call.
fn header(
    w: &mut CWriter,
    st: &Stencil,
    an: &Analysis,
    plan: &Resolved,
    step: Option<&Resolved>,
    residency: bool,
    d: &Dialect,
) {
    let detail = detail(st, plan, d);
    let threads = if plan.strategy == Strategy::Tensor {
        tensor::block_layout(st)
    } else if temporal::rings_plan(plan, st) {
        temporal::rings_layout(st)
    } else {
        format!("{} threads ({})", join_x(&plan.block), st.axes.join(", "))
    };
    let strategy = format!(
        "Strategy `{}`: blocks of {threads}{detail}.",
        plan.strategy.name()
    );
    super::file_header(w, st, an, &format!("{} kernels", d.title), &strategy);
    w.line(&format!("#include <{}>", d.header));
    if plan.strategy == Strategy::Persistent {
        w.line(&format!("#include <{}>", d.cooperative_header));
    }
    w.line("#include <stddef.h>");
    if residency {
        w.line("#include <mutex>");
        residency_helper(w, d);
    }
    let offsets = st.statements.iter().any(|s| {
        let mut any = false;
        s.expr
            .for_each_read(&mut |a| any |= a.offset.iter().any(|&d| d != 0));
        any
    });
    if st.boundary == Boundary::Periodic && (offsets || plan.strategy != Strategy::Naive) {
        w.blank();
        w.line("/* `i` wrapped onto 0..n, for any i. */");
        w.line("static __device__ __forceinline__ ptrdiff_t stencil_mod(ptrdiff_t i, ptrdiff_t n)");
        w.line("{");
        w.line("    const ptrdiff_t m = i % n;");
        w.line("    return m < 0 ? m + n : m;");
        w.line("}");
    }
    if st.statements.iter().any(|s| s.expr.uses_powi()) {
        w.blank();
        super::powi_helper(w, st.dtype, "static __device__ __forceinline__");
    }
    if st.dims() == 3 && plan.strategy.fuses_steps() {
        // A ring kernel, the only kernel of its file that fuses steps, has
        // blocks of one axis.
        let axes: &[&str] = if temporal::rings_plan(plan, st) {
            &["x"]
        } else {
            &["x", "y"]
        };
        temporal::opaque_thread_helpers(w, axes);
    }
    if plan.strategy == Strategy::Tensor || step.is_some_and(|p| p.strategy == Strategy::Tensor) {
        tensor::helpers(w);
    }
}

fn join_x(v: &[usize]) -> String {
    v.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(" x ")
}

/// Generates the kernel and launcher of one statement.
#[derive(Clone)]
struct Gen<'a> {
    st: &'a Stencil,
    s: &'a Statement,
    info: &'a StatementInfo,
    plan: &'a Resolved,
    d: &'a Dialect,
    sym: String,
    /// Cells per thread along the contiguous axis, loaded as one vector (`stream`).
    vector: usize,
    /// Whether cell indices are 64-bit (`ptrdiff_t`); 32-bit kernels run on
    /// grids of fewer than 2^31 cells.
    wide: bool,
    /// The plan of the scalar twins of a 3-D `temporal` kernel of vectors,
    /// which run the grids whose rows are not whole vectors and the largest
    /// ones ([`temporal::scalar_twin`]).
    scalar: Option<&'a Resolved>,
    /// The plan of the scalar twins of this file's 3-D `stream` kernels of
    /// vectors ([`scalar_stream`]); `None` in 2-D, where they keep their
    /// kernel's plan.
    defaults: Option<&'a Resolved>,
    /// Whether this is a `stream` kernel's twin without vectors, for the
    /// grids whose rows are not whole vectors.
    fallback: bool,
    /// Whether this kernel of vectors has no twin without them: the small
    /// planes' kernel of [`planes_stream`], whose grids of rows that are not
    /// whole vectors run the plan's own twin ([`Gen::launch_small_planes`]).
    vectors_only: bool,
    /// The plan of the other single-step kernel of the file: the one a fused
    /// launch of one step runs instead ([`step_plan`]), or the one `auto`'s
    /// `tensor` runs on small planes ([`small_plan`]).
    step: Option<&'a Resolved>,
    /// The plan of the small planes' kernel of the single-step kernel
    /// (`step`) where that is [`planes_stream`]'s ([`small_planes_plan`]).
    step_small: Option<&'a Resolved>,
    /// The plan of `auto`'s single steps on small grids ([`naive_plan`]).
    naive: Option<&'a Resolved>,
    /// The launcher's parameter the kernel writes: `out`, or `out_prev` for
    /// the single-step kernel of a fused leapfrog ([`Self::single_step`]).
    output: &'static str,
}

/// CUDA's built-in index of axis `a` of `dims` (the contiguous axis is `x`).
fn builtin(a: usize, dims: usize) -> &'static str {
    ["x", "y", "z"][dims - 1 - a]
}

impl<'a> Gen<'a> {
    /// The generator of another single-step kernel of the launcher, of
    /// `plan`, its kernels named after `<sym>_<suffix>`: 64-bit indices
    /// allowed, no twins or kernels of its own, and a fused leapfrog's one
    /// step writes `out_prev` ([`Self::single_step`], [`Self::small_naive`]),
    /// as does the small planes' kernel of that step.
    fn one_step_kernel(&self, plan: &'a Resolved, suffix: &str) -> Self {
        Gen {
            plan,
            sym: format!("{}_{suffix}", self.sym),
            vector: plan.vector,
            wide: true,
            scalar: None,
            step: None,
            step_small: None,
            naive: None,
            // A one-step kernel's own small kernel writes where it does.
            output: if self.leapfrog() {
                "out_prev"
            } else {
                self.output
            },
            vectors_only: false,
            ..self.clone()
        }
    }
}

impl Gen<'_> {
    fn dims(&self) -> usize {
        self.st.dims()
    }

    fn periodic(&self) -> bool {
        self.st.boundary == Boundary::Periodic
    }

    /// First and one-past-last cell computed along axis `a`.
    fn bounds(&self, a: usize) -> (String, String) {
        match self.info.halo[a] {
            0 => ("0".into(), format!("n{a}")),
            h => (h.to_string(), format!("n{a} - {h}")),
        }
    }

    fn reads(&self, slot: Slot) -> Vec<Vec<i64>> {
        let mut out = BTreeSet::new();
        self.s.expr.for_each_read(&mut |a| {
            if a.slot == slot {
                out.insert(a.offset.clone());
            }
        });
        out.into_iter().collect()
    }

    /// Largest |offset| per axis of the reads of `slot`.
    fn reach(&self, slot: Slot) -> Vec<usize> {
        let mut r = vec![0; self.dims()];
        for o in self.reads(slot) {
            for (r, d) in r.iter_mut().zip(&o) {
                *r = (*r).max(d.unsigned_abs() as usize);
            }
        }
        r
    }

    fn arguments(&self) -> String {
        self.argument_list().join(", ")
    }

    /// The launcher's arguments to the kernel: extents, outputs, grids,
    /// run-time parameters and, where the kernel [`Self::banks_literals`],
    /// its literals ([`Self::literal_values`]).
    fn argument_list(&self) -> Vec<String> {
        let mut a: Vec<String> = (0..self.dims()).map(|a| format!("n{a}")).collect();
        a.push(self.output.into());
        if self.leapfrog() {
            a.push("out_prev".into());
        }
        a.extend(
            self.s
                .slots()
                .into_iter()
                .map(|slot| slot_name(self.st, slot)),
        );
        a.extend(
            self.s
                .params_used()
                .into_iter()
                .map(|i| format!("p_{}", self.st.params[i])),
        );
        if self.banked_literals().is_some() {
            a.push("lits".into());
        }
        a
    }

    /// Whether this kernel indexes with 32 bits where the grid allows. On
    /// the H100 that freed registers and lifted 3-D `stream` on j3d7pt by
    /// 1.1-1.2x (BENCHMARKS.md; 2-D `stream` made no gain), and the fused
    /// kernels by 1.10x (j2d5pt f32), 1.06x (f64) and 1.02x-1.07x (j3d7pt;
    /// `scripts/gpu/experiments/interior.cu`, BENCHMARKS.md, 2026-11-23).
    fn narrow(&self) -> bool {
        self.plan.strategy.fuses_steps()
            || self.plan.strategy == Strategy::Stream && self.dims() == 3
    }

    /// Whether the kernel loads `vector` cells along the contiguous axis as
    /// one vector: every strategy but the fused ones, whose `vector` is the
    /// cells a lane holds.
    fn vector_loads(&self) -> bool {
        self.vector > 1 && !self.plan.strategy.fuses_steps()
    }

    /// The kernels of this statement, in the launcher's order of preference:
    /// 32-bit before 64-bit indices, vectors before scalars.
    fn twins(&self) -> Vec<Gen<'_>> {
        if self.splits_steps() {
            // The grids this kernel does not suit run one step a launch: no
            // scalar twin, and no 64-bit one.
            return vec![Gen {
                wide: false,
                ..self.clone()
            }];
        }
        if let Some(scalar) = self.scalar {
            let twin = |wide| Gen {
                plan: scalar,
                vector: 1,
                wide,
                ..self.clone()
            };
            let vectors = Gen {
                wide: false,
                ..self.clone()
            };
            return vec![vectors, twin(false), twin(true)];
        }
        let widths: &[bool] = if self.narrow() {
            &[false, true]
        } else {
            &[true]
        };
        let mut vectors = vec![self.plan.vector];
        if self.pairs() {
            vectors.push(self.plan.vector / 2);
        }
        if self.vector_loads() && !self.vectors_only {
            vectors.push(1);
        }
        let mut out = Vec::new();
        for &wide in widths {
            for &vector in &vectors {
                let fallback = vector == 1 && self.plan.vector > 1;
                let plan = match self.defaults {
                    Some(defaults) if fallback => defaults,
                    _ => self.plan,
                };
                out.push(Gen {
                    plan,
                    vector,
                    wide,
                    fallback,
                    ..self.clone()
                });
            }
        }
        out
    }

    /// Whether this kernel of 16-byte vectors of f32 has a twin of 8-byte
    /// pairs, for the grids whose rows are whole pairs but not whole
    /// vectors: [`planes_stream`]'s (acoustic25's rows of 750 cells ran
    /// 1.17x its scalar twin's speed in pairs on the H200, session 41).
    fn pairs(&self) -> bool {
        self.plan.vector_planes() && self.plan.vector == 4
    }

    /// Whether this kernel marches the chunk of planes its launcher chose
    /// (an argument, [`Self::wave_chunk`]), at most its plan's: a scalar
    /// twin of [`scalar_stream`], whose chunks of 64 planes would leave
    /// multiprocessors idle on smaller grids.
    fn shortens_chunk(&self) -> bool {
        self.fallback && self.defaults.is_some()
    }

    /// The cells of the slowest axis a block of a kernel that is not
    /// [`Self::chunked`] marches, as a C expression: the argument `chunk`
    /// where [`Self::shortens_chunk`], else the plan's.
    fn chunk_length(&self) -> String {
        if self.shortens_chunk() {
            "chunk".to_string()
        } else {
            self.plan.chunk.to_string()
        }
    }

    /// The generator of the file's other single-step kernel: the one that
    /// launches of one step run where this kernel fuses steps
    /// ([`step_plan`]), its kernels named after `<sym>_step`, or the one
    /// `auto`'s `tensor` runs on small planes ([`small_plan`]), named after
    /// `<sym>_small`. A fused leapfrog's one step writes the
    /// buffer of `out_prev`, which the session then reads as the current
    /// level (its levels turn by one after such a launch, by two after a
    /// fused one: `Levels::advance_one` in the generated Rust).
    fn single_step(&self) -> Option<Self> {
        let suffix = if self.plan.small_grids() {
            "small"
        } else {
            "step"
        };
        self.step.map(|plan| Gen {
            vectors_only: self.plan.vector_planes(),
            step: self.step_small,
            ..self.one_step_kernel(plan, suffix)
        })
    }

    /// The generator of `auto`'s single steps on small grids
    /// ([`naive_plan`]), its kernels named after `<sym>_naive`: it writes
    /// what the launcher's other single steps write ([`Self::single_step`]).
    fn small_naive(&self) -> Option<Self> {
        self.naive.map(|plan| self.one_step_kernel(plan, "naive"))
    }

    /// What a twin kernel is for, for its comment.
    fn twin_purpose(&self) -> String {
        let mut what = Vec::new();
        if self.fallback || self.scalar.is_some() {
            let mut scalar =
                "without vectors, for grids whose rows are not whole vectors".to_string();
            if self.shortens_chunk() {
                scalar += &format!(
                    ": `stream`'s blocks of {} threads, chunks of at most {} planes",
                    join_x(&self.plan.block),
                    self.plan.chunk
                );
            }
            what.push(scalar);
        } else if self.vector < self.plan.vector {
            what.push(format!(
                "in {}-byte pairs, for grids whose rows are whole pairs but not whole vectors",
                self.vector * self.st.dtype.size()
            ));
        }
        if self.wide && self.narrow() {
            what.push(format!(
                "with 64-bit indices, for grids of {}",
                self.narrow_cells().1
            ));
        }
        what.join(", and ")
    }

    /// The most cells a 32-bit kernel runs on, as a C literal, and the grids
    /// its 64-bit twin runs on, in words: fewer than 2^31, and at most 2^30
    /// for fused kernels (whose blocks count rows past their chunk and tiles
    /// past the grid's edge).
    fn narrow_cells(&self) -> (&'static str, &'static str) {
        if self.plan.strategy.fuses_steps() {
            ("1073741824", "more than 2^30 cells")
        } else {
            ("2147483647", "2^31 cells or more")
        }
    }

    /// Whether each warp is its own tile, run by the warp tile function
    /// ([`Self::warp_tile_function`]): the fused strategies in 2-D.
    fn warp_tiles(&self) -> bool {
        self.dims() == 2 && self.plan.strategy.fuses_steps()
    }

    /// `parameters` with the extents `n<a>` (the first ones) of type `ty`.
    fn typed_extents(&self, mut parameters: Vec<String>, ty: &str) -> Vec<String> {
        for (a, p) in parameters.iter_mut().take(self.dims()).enumerate() {
            *p = format!("const {ty} n{a}");
        }
        parameters
    }

    /// The kernel's name: `<symbol>[_scalar|_pairs|_vector][_i64]_kernel`
    /// (`_scalar`: the fallback of a `stream` kernel of vectors; `_pairs`:
    /// its twin of 8-byte pairs ([`Self::pairs`]); `_vector`:
    /// a 3-D `temporal` kernel of vectors, whose twins are scalar; `_i64`:
    /// the fallback of a 32-bit one).
    fn kernel_name(&self) -> String {
        let scalar = if self.rings() {
            "_rings"
        } else if self.vector_columns() {
            "_vector"
        } else if self.fallback {
            "_scalar"
        } else if self.vector < self.plan.vector {
            "_pairs"
        } else {
            ""
        };
        let wide = if self.wide && self.narrow() {
            "_i64"
        } else {
            ""
        };
        format!("{}{scalar}{wide}_kernel", self.sym)
    }

    /// The kernel's `__launch_bounds__`: its threads, and the blocks a
    /// multiprocessor must keep resident where the kernel asks for them
    /// ([`Self::resident_blocks`]).
    fn launch_bounds(&self) -> String {
        let threads = self.plan.threads();
        match self.resident_blocks() {
            Some(blocks) => format!("{threads}, {blocks}"),
            None => threads.to_string(),
        }
    }

    /// The C type of cell indices in this kernel.
    fn index(&self) -> &'static str {
        if self.wide { "ptrdiff_t" } else { "int" }
    }

    /// Whether this kernel fuses the steps of a leapfrog (a field of two
    /// time levels, [`temporal`]): it also writes the level before the last
    /// (`out_prev`), the next launch's previous level.
    fn leapfrog(&self) -> bool {
        temporal::fused_leapfrog(self.st, self.plan, self.s.target)
    }

    /// The statement's C parameters (see [`super::c_parameters`]), with a
    /// leapfrog's `out_prev` after `out` and, in a kernel or function that
    /// [`Self::banks_literals`], the literals last (`lits`).
    fn parameters(&self, qualifier: &str, kernel: bool) -> Vec<String> {
        let mut p = super::c_parameters(self.st, self.s, qualifier, kernel);
        if self.leapfrog() {
            let at = self.dims() + 1;
            p.insert(at, p[at - 1].replace("out", "out_prev"));
        }
        if kernel && self.banked_literals().is_some() {
            p.push(format!("const {}_literals lits", self.sym));
        }
        p
    }

    fn kernel(&self, w: &mut CWriter) {
        if self.plan.strategy == Strategy::Tensor {
            return self.tensor(w);
        }
        if self.rings() {
            return self.rings_kernel(w);
        }
        let parameters = match self.plan.strategy {
            Strategy::Persistent => self.persistent_parameters(true),
            _ => self.parameters("__restrict__", true),
        };
        let mut parameters = self.typed_extents(parameters, self.index());
        if self.plan.strategy == Strategy::Temporal {
            parameters.push("int levels".into());
        }
        if self.chunked() || self.shortens_chunk() {
            parameters.push("int chunk".into());
        }
        let parameters = parameters.join(", ");
        // Before the first twin (the 32-bit one), which both call.
        if self.warp_tiles() && !self.wide {
            self.warp_tile_function(w);
            w.blank();
        }
        if self.vector_columns() {
            self.vector_functions(w);
            w.blank();
        }
        if self.chunked() {
            w.line(&format!(
                "/* CHUNK: the cells of `{}` a block marches, or 0 for `chunk`, which the launcher shortens for small grids. */",
                self.st.axes[0]
            ));
            w.line("template <int CHUNK>");
        }
        w.line(&format!(
            "static __global__ void __launch_bounds__({}) {}({parameters})",
            self.launch_bounds(),
            self.kernel_name(),
        ));
        w.line("{");
        w.indent();
        self.strides(w);
        match self.plan.strategy {
            Strategy::Tiled => self.tiled(w),
            Strategy::Stream => self.stream(w),
            Strategy::Temporal => self.temporal(w),
            Strategy::Persistent => self.persistent(w),
            _ => self.naive(w),
        }
        w.dedent();
        w.line("}");
    }

    /// `s<a>`: the cells between neighbours along axis `a`, but the
    /// contiguous one; in a 2-D fused kernel its warp tile function's own.
    fn strides(&self, w: &mut CWriter) {
        if self.warp_tiles() {
            return;
        }
        for a in 0..self.dims() - 1 {
            let prod: Vec<String> = (a + 1..self.dims()).map(|b| format!("n{b}")).collect();
            w.line(&format!(
                "const {} s{a} = {};",
                self.index(),
                prod.join(" * ")
            ));
        }
    }

    /// The update, its reads spelled by `read`; in kernels that
    /// [`Self::banks_literals`], its literals as entries of `lit`.
    fn value(&self, read: &dyn Fn(&Access) -> String) -> String {
        let c = CExpr { st: self.st, read };
        if self.banks_literals() {
            return expr::print(&self.s.expr, &literals::Banked::new(c));
        }
        expr::print(&self.s.expr, &c)
    }

    /// Whether the update reads its literals from a table passed by value
    /// ([`literals`]): 2-D fused f64 kernels on CUDA. In `temporal`, j2d5pt's
    /// loop fell from 983 to 658 instructions for 3 rows and ran 1.09x-1.15x
    /// (H100, BENCHMARKS.md, session 27); with the selection
    /// ([`Self::selects_levels`]) `persistent` gained too (session 28). The
    /// 3-D kernels keep their literals inline: there the table ran j3d7pt
    /// f64 0.87x-0.89x and j3d27pt 0.78x-0.81x, poisson 1.07x (session 28).
    fn banks_literals(&self) -> bool {
        self.warp_tiles()
            && self.plan.strategy.fuses_steps()
            && self.st.dtype == Dtype::F64
            && self.d.tuned
    }

    /// The entries of the update's table of literals, where it
    /// [`Self::banks_literals`] and has any: each literal as C, and as the
    /// spec wrote it.
    fn banked_literals(&self) -> Option<Vec<(String, String)>> {
        if !self.banks_literals() {
            return None;
        }
        let banked = literals::Banked::new(CExpr {
            st: self.st,
            read: &|_: &Access| String::new(),
        });
        expr::print(&self.s.expr, &banked);
        Some(banked.entries()).filter(|entries| !entries.is_empty())
    }

    /// The type of the update's table of literals ([`Self::banks_literals`]),
    /// at file scope, named after the kernel. The launcher passes the table
    /// by value as the kernel's last argument (`lits`), which puts its
    /// entries in the kernel's parameter bank: operands of the
    /// multiply-adds, as a `__constant__` table's would be. A `__constant__`
    /// variable made every launch of the file's kernels, those that never
    /// read it too, 0.12 us slower in graphs on the H100 (`naive`'s j2d9pt
    /// f64 kernel 2.22 against 2.11 us a step on 512^2;
    /// `benchmarks/experiments/constant-bank`).
    fn literal_table(&self, w: &mut CWriter) {
        let Some(entries) = self.banked_literals() else {
            return;
        };
        let shown: Vec<&str> = entries.iter().map(|(_, s)| s.as_str()).collect();
        w.line(&format!(
            "/* The update's literals ({}), passed by value: operands of the multiply-adds (which take no f64",
            shown.join(", ")
        ));
        w.line("   immediate) from the kernel's parameters, where a `__constant__` table would slow every launch. */");
        w.line(&format!("struct {}_literals {{", self.sym));
        w.line(&format!("    double v[{}];", entries.len()));
        w.line("};");
    }

    /// `lits`, the value of the table of literals ([`Self::literal_table`]),
    /// in the launcher before it launches the kernel.
    fn literal_values(&self, w: &mut CWriter) {
        if let Some(entries) = self.banked_literals() {
            let values: Vec<&str> = entries.iter().map(|(v, _)| v.as_str()).collect();
            w.line(&format!(
                "const {}_literals lits = {{{{{}}}}};",
                self.sym,
                values.join(", ")
            ));
        }
    }

    /// `lit`, the entries of the table of literals ([`Self::literal_table`]),
    /// in a function that reads them.
    fn literal_alias(&self, w: &mut CWriter) {
        if let Some(entries) = self.banked_literals() {
            w.line(&format!("const double (&lit)[{}] = lits.v;", entries.len()));
        }
    }

    /// A read straight from global memory at `c` (wrapped for periodic grids).
    fn global_read(&self, a: &Access) -> String {
        let buf = slot_name(self.st, a.slot);
        if !self.periodic() {
            return format!("{buf}[{}]", offset_index(&a.offset));
        }
        let index = wrapped_index(&a.offset, |ax, d| {
            format!("stencil_mod({}, n{ax})", shifted(&format!("i{ax}"), d))
        });
        format!("{buf}[{index}]")
    }

    /// `i<a>`, this thread's cell along the axes `first..`.
    fn thread_cells(&self, w: &mut CWriter, first: usize) {
        let dims = self.dims();
        for a in first..dims {
            let (lo, _) = self.bounds(a);
            let lo = if self.aligned(a) { "0".to_string() } else { lo };
            let origin = if lo == "0" {
                String::new()
            } else {
                format!("{lo} + ")
            };
            let cell = format!(
                "({})blockIdx.{} * {} + threadIdx.{}",
                self.index(),
                builtin(a, dims),
                self.plan.block[a],
                builtin(a, dims)
            );
            let cell = if a + 1 == dims && self.vector > 1 {
                format!("({cell}) * {}", self.vector)
            } else {
                cell
            };
            w.line(&format!("const {} i{a} = {origin}{cell};", self.index()));
        }
    }

    /// `o<a>` (block origin), `l<a>` (thread within the block) and `i<a>` (cell)
    /// along every axis, and with `tid` the flat thread index.
    fn thread_coordinates(&self, w: &mut CWriter, tid: bool) {
        let dims = self.dims();
        for (a, size) in self.plan.block.iter().enumerate().take(dims) {
            let b = builtin(a, dims);
            w.line(&format!(
                "const ptrdiff_t o{a} = {} + (ptrdiff_t)blockIdx.{b} * {size};",
                self.bounds(a).0,
            ));
            w.line(&format!("const int l{a} = threadIdx.{b};"));
            w.line(&format!("const ptrdiff_t i{a} = o{a} + l{a};"));
        }
        if tid {
            let coords: Vec<String> = (0..dims)
                .map(|a| format!("threadIdx.{}", builtin(a, dims)))
                .collect();
            let extents: Vec<String> = self.plan.block.iter().map(usize::to_string).collect();
            w.line(&format!("const int tid = {};", flat(&coords, &extents)));
        }
    }

    fn guard(&self, axes: std::ops::Range<usize>) -> String {
        axes.map(|a| {
            let (lo, hi) = self.bounds(a);
            if self.aligned(a) && self.vector > 1 {
                format!("i{a} + {} <= {lo} || i{a} >= {hi}", self.vector)
            } else if self.aligned(a) && lo != "0" {
                format!("i{a} < {lo} || i{a} >= {hi}")
            } else {
                format!("i{a} >= {hi}")
            }
        })
        .collect::<Vec<_>>()
        .join(" || ")
    }

    /// Whether `stream` blocks compute their chunk in one pass (no window to
    /// carry from one iteration to the next).
    fn single_pass(&self) -> bool {
        self.plan.strategy == Strategy::Stream && self.plan.chunk <= self.plan.coarsen
    }

    /// Whether blocks along axis `a` start at multiples of the block, not at
    /// the region's first cell: `stream` does so along the contiguous axis, so
    /// that each warp's loads and stores are aligned to whole cache sectors.
    fn aligned(&self, a: usize) -> bool {
        self.plan.strategy == Strategy::Stream && a + 1 == self.dims()
    }

    fn naive(&self, w: &mut CWriter) {
        self.thread_cells(w, 0);
        w.line(&format!("if ({})", self.guard(0..self.dims())));
        w.line("    return;");
        w.line(&format!(
            "const ptrdiff_t c = {};",
            linear_index(self.dims())
        ));
        let value = self.value(&|a| self.global_read(a));
        w.line(&format!("out[c] = {value};"));
    }

    /// Slots read at a non-zero offset: staged in shared memory by `tiled`.
    fn staged(&self) -> Vec<Slot> {
        self.s
            .slots()
            .into_iter()
            .filter(|&slot| self.reach(slot).iter().any(|&r| r > 0))
            .collect()
    }

    fn tile_name(&self, slot: Slot) -> String {
        format!("t_{}", slot_name(self.st, slot))
    }

    fn tiled(&self, w: &mut CWriter) {
        let dims = self.dims();
        let t = self.st.dtype.c();
        let block = &self.plan.block;
        self.thread_coordinates(w, !self.staged().is_empty());
        for slot in self.staged() {
            let r = self.reach(slot);
            let ext: Vec<usize> = (0..dims).map(|a| block[a] + 2 * r[a]).collect();
            let name = self.tile_name(slot);
            let dims_decl: String = ext.iter().map(|e| format!("[{e}]")).collect();
            w.line(&format!("__shared__ {t} {name}{dims_decl};"));
            let total: usize = ext.iter().product();
            w.line(&format!(
                "for (int k = tid; k < {total}; k += {}) {{",
                self.plan.threads()
            ));
            w.indent();
            let mut stride = 1;
            let mut coords = vec![String::new(); dims];
            for a in (0..dims).rev() {
                coords[a] = if stride == 1 {
                    format!("k % {}", ext[a])
                } else {
                    format!("k / {stride} % {}", ext[a])
                };
                stride *= ext[a];
            }
            for a in 0..dims {
                w.line(&format!("const int a{a} = {};", coords[a]));
                let g = format!("o{a} - {} + a{a}", r[a]);
                let g = if self.periodic() {
                    format!("stencil_mod({g}, n{a})")
                } else {
                    g
                };
                w.line(&format!("const ptrdiff_t g{a} = {g};"));
            }
            let index: String = (0..dims).map(|a| format!("[a{a}]")).collect();
            let global = (0..dims)
                .map(|a| {
                    if a + 1 < dims {
                        format!("g{a} * s{a}")
                    } else {
                        format!("g{a}")
                    }
                })
                .collect::<Vec<_>>()
                .join(" + ");
            if self.periodic() {
                w.line(&format!(
                    "{name}{index} = {}[{global}];",
                    slot_name(self.st, slot)
                ));
            } else {
                let inside = (0..dims)
                    .map(|a| format!("g{a} < n{a}"))
                    .collect::<Vec<_>>()
                    .join(" && ");
                w.line(&format!("if ({inside})"));
                w.line(&format!(
                    "    {name}{index} = {}[{global}];",
                    slot_name(self.st, slot)
                ));
            }
            w.dedent();
            w.line("}");
        }
        w.line("__syncthreads();");
        w.line(&format!("if ({})", self.guard(0..dims)));
        w.line("    return;");
        w.line(&format!("const ptrdiff_t c = {};", linear_index(dims)));
        let staged = self.staged();
        let value = self.value(&|a: &Access| {
            if !staged.contains(&a.slot) {
                return self.global_read(a);
            }
            let r = self.reach(a.slot);
            let index: String = (0..dims)
                .map(|ax| {
                    format!(
                        "[{}]",
                        shifted(&format!("l{ax}"), r[ax] as i64 + a.offset[ax])
                    )
                })
                .collect();
            format!("{}{index}", self.tile_name(a.slot))
        });
        w.line(&format!("out[c] = {value};"));
    }

    /// `(g1) * s1 + g2` (3-D) or `g1` (2-D): the in-plane index of fast-axis coordinates.
    fn fast_index(&self, coords: &[String]) -> String {
        let paren = |g: &String| {
            if g.contains(' ') && !g.starts_with("stencil_mod(") {
                format!("({g})")
            } else {
                g.clone()
            }
        };
        coords
            .iter()
            .enumerate()
            .map(|(k, g)| {
                if k + 2 < self.dims() {
                    format!("{} * s{}", paren(g), k + 1)
                } else {
                    paren(g)
                }
            })
            .collect::<Vec<_>>()
            .join(" + ")
    }

    /// `z0..z1`, the block's chunk of the slowest axis, and `i<a>`, this
    /// thread's cell along the others; threads with none return.
    fn block_chunk(&self, w: &mut CWriter) {
        let dims = self.dims();
        self.chunk_bounds(w);
        self.thread_cells(w, 1);
        w.line(&format!("if ({})", self.guard(1..dims)));
        w.line("    return;");
    }

    /// Whether the kernel is a template over the length of its chunk
    /// (`CHUNK`, 0 for the argument `chunk`): `temporal` with 32-bit
    /// indices, whose launcher shortens the chunks of grids too small to
    /// fill the device. A constant chunk keeps the kernels of larger grids
    /// as they were: with the length an argument, ptxas gave the suite's
    /// poisson f64 150 registers instead of 126, 0.73x as fast (H100,
    /// BENCHMARKS.md, 2026-11-24, session 12). Not a ring kernel, which
    /// takes its chunk as an argument.
    fn chunked(&self) -> bool {
        self.plan.strategy == Strategy::Temporal && !self.wide && !self.rings()
    }

    /// The kernel's instances the launcher may run: the template's with the
    /// plan's chunk and with the launcher's ([`Self::chunked`]), or the kernel.
    fn instances(&self) -> Vec<String> {
        let name = self.kernel_name();
        if self.chunked() {
            vec![format!("{name}<{}>", self.plan.chunk), format!("{name}<0>")]
        } else {
            vec![name]
        }
    }

    /// `z0..z1`: the block's chunk of the slowest axis (`stream`,
    /// `temporal`, `persistent`).
    fn chunk_bounds(&self, w: &mut CWriter) {
        let (lo0, hi0) = self.bounds(0);
        let chunk = if self.chunked() {
            w.line("const int span = CHUNK > 0 ? CHUNK : chunk;");
            "span".to_string()
        } else {
            self.chunk_length()
        };
        w.line(&format!(
            "const {t} z0 = {lo0} + ({t}){} * {chunk};",
            self.block_coordinate(builtin(0, self.dims())),
            t = self.index()
        ));
        w.line(&format!(
            "const {} z1 = z0 + {chunk} < {hi0} ? z0 + {chunk} : {hi0};",
            self.index()
        ));
    }

    /// This block's tile along CUDA's axis `c` (`x`, `y`, `z`): the block's
    /// index, or in a `persistent` kernel the tile the block has taken.
    fn block_coordinate(&self, c: &str) -> String {
        if self.plan.strategy == Strategy::Persistent {
            format!("tile_{c}")
        } else {
            format!("blockIdx.{c}")
        }
    }

    fn rows(&self) -> Vec<Row> {
        rows(self.s, self.dims())
    }

    /// An index into `slot`'s grid: `plane * s0 + row part + x` (wrapped for periodic grids).
    fn row_index(&self, row: &Row, plane: &str, x: i64) -> String {
        let dims = self.dims();
        let last = dims - 1;
        let mut terms = vec![format!("{plane} * s0")];
        for a in 1..last {
            let g = shifted(&format!("i{a}"), row.row[a - 1]);
            let g = if self.periodic() && row.row[a - 1] != 0 {
                format!("stencil_mod({g}, n{a})")
            } else if g.contains(' ') {
                format!("({g})")
            } else {
                g
            };
            terms.push(format!("{g} * s{a}"));
        }
        let xs = shifted(&format!("i{last}"), x);
        terms.push(if self.periodic() && (x < 0 || x >= self.vector as i64) {
            format!("stencil_mod({xs}, n{last})")
        } else {
            xs
        });
        terms.join(" + ")
    }

    /// 2.5-D streaming (see the module documentation): each thread holds a
    /// window of planes in registers per row group. Single-pass blocks fill it
    /// once; the others move it along the slowest axis `coarsen` planes per
    /// iteration, loading the next iteration's planes before computing.
    fn stream(&self, w: &mut CWriter) {
        let c = self.plan.coarsen;
        self.block_chunk(w);
        let mine: Vec<String> = (1..self.dims()).map(|a| format!("i{a}")).collect();
        w.line(&format!(
            "const {} col = {};",
            self.index(),
            self.fast_index(&mine)
        ));
        let rows = self.rows();
        let z = if self.single_pass() { "z0" } else { "z" };
        for (g, row) in rows.iter().enumerate() {
            self.declare_window(w, g, row, z);
            for m in 0..row.depth() + c {
                self.load_plane(w, (g, row), m, ("z0", 0), self.window_cells(row, m));
            }
        }
        if self.single_pass() {
            self.store(w, &rows, z);
            return;
        }
        w.line(&format!(
            "for ({} z = z0; z < z1; z += {c}) {{",
            self.index()
        ));
        w.indent();
        w.line(&format!("if (z + {c} < z1) {{"));
        w.indent();
        w.line("/* Load what the next iteration reads first: its new planes, and the neighbours it reads in planes already held. */");
        for (g, row) in rows.iter().enumerate() {
            for m in c..row.depth() + 2 * c {
                self.load_plane(w, (g, row), m, ("z", c), self.fresh_cells(row, m));
            }
        }
        w.dedent();
        w.line("}");
        self.store(w, &rows, z);
        w.line(&format!("if (z + {c} < z1) {{"));
        w.indent();
        w.line(&format!(
            "/* Move the windows on by {c} plane{}. */",
            if c > 1 { "s" } else { "" }
        ));
        for (g, row) in rows.iter().enumerate() {
            let (xmin, _) = row.span(self.vector);
            for m in 0..row.depth() + c {
                for x in self.window_cells(row, m) {
                    let k = x - xmin;
                    w.line(&format!("w{g}[{m}][{k}] = w{g}[{}][{k}];", m + c));
                }
            }
        }
        w.dedent();
        w.line("}");
        w.dedent();
        w.line("}");
    }

    /// Declares `w<g>`, the window of row group `row`, its planes counted from `z`.
    fn declare_window(&self, w: &mut CWriter, g: usize, row: &Row, z: &str) {
        let last = self.dims() - 1;
        let (lo, _) = row.planes();
        let (xmin, xmax) = row.span(self.vector);
        let at_row = if row.row.is_empty() {
            String::new()
        } else {
            let offsets: Vec<String> = row.row.iter().map(i64::to_string).collect();
            format!(" at row offset ({})", offsets.join(", "))
        };
        w.line(&format!(
            "/* w{g}[m][k]: `{}`{at_row} at plane {z} + m{} and cell i{last} + k{}. */",
            slot_name(self.st, row.slot),
            signed(lo),
            signed(xmin)
        ));
        w.line(&format!(
            "{} w{g}[{}][{}];",
            self.st.dtype.c(),
            row.window(self.plan.chunk, self.plan.coarsen),
            xmax - xmin + 1
        ));
    }

    /// The cells (offsets from `i<last>`) window slot `m` of `row` holds when
    /// an iteration computes: those its outputs read there and, where the
    /// window moves, those loaded at an earlier slot that a later one reads.
    /// Each cell is loaded as late as it can be: one iteration before its
    /// first use, by when the neighbouring threads' loads of the same row
    /// have filled the cache (loading a plane's neighbours with its row
    /// measured 313.5 instead of 330.1 GCells/s on j3d7pt f32, BENCHMARKS.md).
    fn window_cells(&self, row: &Row, m: usize) -> BTreeSet<i64> {
        let (c, v) = (self.plan.coarsen as i64, self.vector);
        let (lo, _) = row.planes();
        let needed = |slot: i64| row.needed(slot + lo, c as usize, v);
        let now: BTreeSet<i64> = needed(m as i64).into_iter().collect();
        if self.single_pass() {
            return now;
        }
        let top = (row.depth() as i64) + 2 * c;
        let earlier: BTreeSet<i64> = (m as i64..top)
            .step_by(c as usize)
            .flat_map(needed)
            .collect();
        let later: BTreeSet<i64> = (0..=m as i64)
            .rev()
            .step_by(c as usize)
            .flat_map(needed)
            .collect();
        now.union(&earlier.intersection(&later).copied().collect())
            .copied()
            .collect()
    }

    /// The cells a moving window loads into slot `m` (`m >= coarsen`) before
    /// it moves: what slot `m - coarsen` will hold that slot `m` does not.
    fn fresh_cells(&self, row: &Row, m: usize) -> BTreeSet<i64> {
        let c = self.plan.coarsen;
        let will = self.window_cells(row, m - c);
        if m >= row.depth() + c {
            return will;
        }
        let has = self.window_cells(row, m);
        will.difference(&has).copied().collect()
    }

    /// Loads `cells` of window slot `m` of row group `g` (plane `z` + m + its
    /// lowest offset): wrapped for periodic grids, skipped past the last plane
    /// for a fixed boundary (those values are never used).
    fn load_plane(
        &self,
        w: &mut CWriter,
        (g, row): (usize, &Row),
        m: usize,
        (z, ahead): (&str, usize),
        cells: BTreeSet<i64>,
    ) {
        let needed: Vec<i64> = cells.into_iter().collect();
        if needed.is_empty() {
            return;
        }
        let (lo, _) = row.planes();
        let plane = shifted(z, m as i64 + lo);
        // `z` is a plane of the region and, `ahead` planes further, still is
        // when the window loads ahead: planes up to the frame past that are
        // on the grid; a fixed boundary skips those beyond it. (2-D kernels
        // keep every guard: without them j2d5pt f32 measured 1.1x slower.)
        let on_grid = m as i64 + lo <= (self.info.halo[0] + ahead) as i64;
        let guard = !(self.periodic() || on_grid && self.dims() == 3);
        let plane = if self.periodic() {
            format!("stencil_mod({plane}, n0)")
        } else {
            if guard {
                w.line(&format!("if ({plane} < n0) {{"));
                w.indent();
            }
            plane
        };
        let plane = if plane.contains(' ') && !plane.starts_with("stencil_mod(") {
            format!("({plane})")
        } else {
            plane
        };
        self.load_row(w, row, g, m, &plane, &needed);
        if guard {
            w.dedent();
            w.line("}");
        }
    }

    /// Loads `needed` cells (offsets from `i<last>`) of plane `plane` into `w<g>[m]`:
    /// the thread's own cells as one vector, the others one by one.
    fn load_row(
        &self,
        w: &mut CWriter,
        row: &Row,
        g: usize,
        m: usize,
        plane: &str,
        needed: &[i64],
    ) {
        let (xmin, _) = row.span(self.vector);
        let buf = slot_name(self.st, row.slot);
        let v = self.vector as i64;
        let last = self.dims() - 1;
        let own = needed.iter().any(|&x| (0..v).contains(&x));
        if own && v == 1 {
            w.line(&format!(
                "w{g}[{m}][{}] = {buf}[{}];",
                -xmin,
                self.row_index(row, plane, 0)
            ));
        } else if own {
            w.line("{");
            w.indent();
            let vt = format!("{}{v}", self.st.dtype.c());
            w.line(&format!(
                "const {vt} q = *(const {vt} *)&{buf}[{}];",
                self.row_index(row, plane, 0)
            ));
            for (k, part) in ["x", "y", "z", "w"].iter().take(v as usize).enumerate() {
                w.line(&format!("w{g}[{m}][{}] = q.{part};", k as i64 - xmin));
            }
            w.dedent();
            w.line("}");
        }
        for &x in needed.iter().filter(|&&x| !(0..v).contains(&x)) {
            let load = format!(
                "w{g}[{m}][{}] = {buf}[{}];",
                x - xmin,
                self.row_index(row, plane, x)
            );
            // With one cell per thread and a fixed boundary, neighbours of a computed
            // cell are on the grid; a vector's edge cells may be frame cells, whose
            // neighbours may not be.
            if v == 1 || self.periodic() {
                w.line(&load);
            } else if x < 0 {
                w.line(&format!("if (i{last}{} >= 0)", signed(x)));
                w.line(&format!("    {load}"));
            } else {
                w.line(&format!("if (i{last} + {x} < n{last})"));
                w.line(&format!("    {load}"));
            }
        }
    }

    /// The `coarsen` x `vector` outputs of a `stream` thread at planes `z`..
    fn store(&self, w: &mut CWriter, rows: &[Row], z: &str) {
        let last = self.dims() - 1;
        let (c, v) = (self.plan.coarsen, self.vector);
        let t = self.st.dtype.c();
        let (lo, hi) = self.bounds(last);
        for j in 0..c {
            let value = |k: usize| {
                self.value(&|a: &Access| {
                    let (g, row) = rows
                        .iter()
                        .enumerate()
                        .find(|(_, r)| r.slot == a.slot && r.row == a.offset[1..last])
                        .expect("every read has its row");
                    let (plo, _) = row.planes();
                    let (xmin, _) = row.span(v);
                    format!(
                        "w{g}[{}][{}]",
                        j as i64 + a.offset[0] - plo,
                        k as i64 + a.offset[last] - xmin
                    )
                })
            };
            if j > 0 {
                w.line(&format!("if ({z} + {j} < z1) {{"));
            } else {
                w.line("{");
            }
            w.indent();
            let at = if j > 0 {
                format!("({z} + {j}) * s0 + col")
            } else {
                format!("{z} * s0 + col")
            };
            if v == 1 {
                w.line(&format!("out[{at}] = {};", value(0)));
            } else {
                for k in 0..v {
                    w.line(&format!("const {t} o{k} = {};", value(k)));
                }
                let vt = format!("{t}{v}");
                let parts: Vec<String> = (0..v).map(|k| format!("o{k}")).collect();
                w.line(&format!("if (i{last} >= {lo} && i{last} + {v} <= {hi}) {{"));
                w.line(&format!("    const {vt} q = {{{}}};", parts.join(", ")));
                w.line(&format!("    *({vt} *)&out[{at}] = q;"));
                w.line("} else {");
                w.indent();
                for k in 0..v {
                    let i = shifted(&format!("i{last}"), k as i64);
                    w.line(&format!("if ({i} >= {lo} && {i} < {hi})"));
                    w.line(&format!("    out[{}] = o{k};", shifted(&at, k as i64)));
                }
                w.dedent();
                w.line("}");
            }
            w.dedent();
            w.line("}");
        }
    }

    fn launcher(&self, w: &mut CWriter) {
        if self.splits_steps() {
            self.fuses_function(w);
            w.blank();
        }
        let mut params = self.parameters("", false);
        if self.plan.strategy == Strategy::Temporal {
            params.push("int levels".into());
            w.line("/* Launches the kernel over the statement's region for `levels` steps (1 to the time block);");
            w.line("   returns the launch's error code. */");
        } else if self.plan.strategy == Strategy::Persistent {
            params = self.persistent_parameters(false);
            w.line("/* Runs `steps` steps (at least 1) in one cooperative launch: the result is in `out` after an odd");
            w.line(&format!(
                "   number of sweeps of {} steps (the last one possibly shorter), else in `{}`{}; returns the launch's error code. */",
                self.plan.time_block,
                slot_name(self.st, self.streamed()),
                if self.leapfrog() {
                    format!(
                        " (the level before it: `out_prev`, else `{}`)",
                        slot_name(self.st, self.own_prev())
                    )
                } else {
                    String::new()
                }
            ));
        } else {
            w.line("/* Launches the kernel over the statement's region; returns the launch's error code. */");
        }
        // The stream: 0 (the legacy stream), or the session's while it captures a graph.
        params.push(format!("{}Stream_t stream", self.d.api));
        w.line(&format!(
            "extern \"C\" int {}({})",
            self.sym,
            params.join(", ")
        ));
        w.line("{");
        w.indent();
        w.line("/* A failed runtime call (an allocation, say) leaves its error as the last one;");
        w.line("   it was reported by that call, so it must not be taken for this launch's. */");
        w.line(&format!("(void){}GetLastError();", self.d.api));
        // `tensor`'s launch decides itself where its small grids go.
        if let Some(single) = self.single_step().filter(|_| !self.plan.small_grids()) {
            self.launch_one_step(w, &single);
        }
        if self.splits_steps() {
            self.launch_fused_or_refuse(w);
        } else {
            if !self.plan.fuses_steps() {
                self.launch_small_steps(w);
            }
            self.launch_small_planes(w);
            self.launch_twins(w);
        }
        w.dedent();
        w.line("}");
    }

    /// `auto`'s single steps on small grids ([`naive_plan`]): `naive`'s
    /// kernel where the grid has fewer than [`SMALL_STEP_CELLS`] cells per
    /// multiprocessor (the device's, asked once through [`RESIDENCY`]).
    fn launch_small_steps(&self, w: &mut CWriter) {
        let Some(naive) = self.small_naive() else {
            return;
        };
        let cells = small_step_cells(self.plan);
        w.line(&format!(
            "/* Small grids, of fewer than {cells} cells per multiprocessor: `naive`'s kernel, one cell a thread (blocks that"
        ));
        w.line("   march rows or planes leave too few warps to hide the latency there). */");
        w.line("{");
        w.indent();
        naive.residency(w, &naive.twins()[0].kernel_name(), 0);
        w.line(&format!(
            "if ({} < (ptrdiff_t){cells} * multiprocessors) {{",
            self.cells()
        ));
        w.indent();
        naive.launch_twins(w);
        w.dedent();
        w.line("}");
        w.dedent();
        w.line("}");
    }

    /// [`planes_stream`]'s small-grid kernel ([`small_plan`]) on planes of
    /// fewer than [`SMALL_PLANES`] cells; nothing for the other plans.
    fn launch_small_planes(&self, w: &mut CWriter) {
        let Some(small) = self.single_step().filter(|_| self.plan.vector_planes()) else {
            return;
        };
        w.line(&format!(
            "/* Planes of fewer than {SMALL_PLANES} cells: `{}` in {}-cell vectors, blocks of {} threads marching {} planes (rows that are not whole vectors: the kernels below). */",
            small.plan.strategy.name(),
            small.plan.vector,
            join_x(&small.plan.block),
            small.plan.chunk
        ));
        small.launch_twins_where(w, Some(&format!("(ptrdiff_t)n1 * n2 < {SMALL_PLANES}")));
    }

    /// Whether this kernel has no scalar twin: its launches of several
    /// steps run only on the grids it takes, and the session runs one step
    /// a launch on the others ([`temporal::splits_steps`]).
    fn splits_steps(&self) -> bool {
        temporal::splits_steps(self.plan, self.st)
    }

    /// `<sym>_fuses`, which the session asks before a launch of several
    /// steps where [`Self::splits_steps`]: whether this kernel takes the
    /// grid (its launch condition) and, for a ring kernel, whether its planes
    /// are large enough that it beats single steps
    /// ([`Self::rings_preferred`]); else the session runs one step a launch.
    fn fuses_function(&self, w: &mut CWriter) {
        let params: Vec<String> = self
            .parameters("", false)
            .into_iter()
            .filter(|p| !p.contains(" p_"))
            .collect();
        w.line("/* Whether a launch of several steps fuses them on these grids (1), or the caller must run");
        w.line("   one step a launch (0). */");
        w.line(&format!(
            "extern \"C\" int {}_fuses({})",
            self.sym,
            params.join(", ")
        ));
        w.line("{");
        w.indent();
        let mut when = self.twins()[0].launch_condition();
        if let Some(single) = self.single_step().filter(|_| self.rings()) {
            when.push(self.rings_preferred(w, &single));
        }
        w.line(&format!("return {};", when.join(" && ")));
        w.dedent();
        w.line("}");
    }

    /// The launcher's fused launch where [`Self::splits_steps`]: the
    /// kernel where it takes the grid; the other grids are an error, as the
    /// session asks `<sym>_fuses` first.
    fn launch_fused_or_refuse(&self, w: &mut CWriter) {
        let fused = &self.twins()[0];
        w.line(&format!(
            "if ({}) {{",
            fused.launch_condition().join(" && ")
        ));
        w.indent();
        fused.launch(w);
        w.dedent();
        w.line("}");
        w.line(&format!(
            "/* Grids the kernel cannot take run one step a launch (`{}_fuses`). */",
            self.sym
        ));
        w.line(&format!("return (int){}ErrorInvalidValue;", self.d.api));
    }

    /// A launch of one step runs `single`'s kernel.
    fn launch_one_step(&self, w: &mut CWriter, single: &Self) {
        let one = if self.plan.strategy == Strategy::Persistent {
            "steps == 1"
        } else {
            "levels == 1"
        };
        w.line(&format!(
            "/* One step: the single-step kernel (`{}`), not a fused launch of one level, which recomputes its tiles' overlap for nothing. */",
            single.plan.strategy.name()
        ));
        if self.leapfrog() {
            w.line("/* It writes the new level to `out_prev`'s buffer, which the caller reads as the current level next (its levels turn by one). */");
        }
        w.line(&format!("if ({one}) {{"));
        w.indent();
        self.launch_small_steps(w);
        single.launch_small_planes(w);
        single.launch_twins(w);
        w.dedent();
        w.line("}");
    }

    /// Launches the first of the twins whose condition the grid meets.
    fn launch_twins(&self, w: &mut CWriter) {
        self.launch_twins_where(w, None);
    }

    /// [`Self::launch_twins`], each twin only where the grid also meets
    /// `guard`: then none is launched unconditionally, and the launcher goes
    /// on past them on the other grids.
    fn launch_twins_where(&self, w: &mut CWriter, guard: Option<&str>) {
        let twins = self.twins();
        for (k, twin) in twins.iter().enumerate() {
            let mut when = twin.launch_condition();
            if guard.is_none() && (k + 1 == twins.len() || when.is_empty()) {
                twin.launch(w);
                break;
            }
            if let Some(guard) = guard {
                when.insert(0, guard.to_string());
            }
            w.line(&format!("if ({}) {{", when.join(" && ")));
            w.indent();
            twin.launch(w);
            w.dedent();
            w.line("}");
        }
    }

    /// The grid's cells, as the launcher computes them: `n0 * n1 * ...`.
    fn cells(&self) -> String {
        let extents: Vec<String> = (0..self.dims()).map(|a| format!("n{a}")).collect();
        extents.join(" * ")
    }

    /// What the grid must satisfy for this kernel to run: rows of whole,
    /// aligned vectors (a ring kernel's: 8-byte pairs, `out_prev` too); for
    /// 32-bit indices, at most [`Self::narrow_cells`].
    fn launch_condition(&self) -> Vec<String> {
        let mut when = Vec::new();
        if !self.wide {
            when.push(format!("{} <= {}", self.cells(), self.narrow_cells().0));
        }
        if self.vector_loads() || self.vector_columns() {
            // A ring kernel moves rows as 8-byte pairs of f32 cells.
            let v = if self.rings() { 2 } else { self.vector };
            let bytes = v * self.st.dtype.size();
            let last = self.dims() - 1;
            when.push(format!("n{last} % {v} == 0"));
            when.extend(
                std::iter::once(self.output.to_string())
                    .chain((self.rings() && self.leapfrog()).then(|| "out_prev".to_string()))
                    .chain(self.s.slots().into_iter().map(|s| slot_name(self.st, s)))
                    .map(|p| format!("(size_t){p} % {bytes} == 0")),
            );
        }
        if self.pairs() && self.vector == self.plan.vector && self.s.slots().len() == 1 {
            when.push(self.quads_cover_no_more());
        }
        when
    }

    /// A launch condition of a [`Self::pairs`] kernel's 16-byte vectors
    /// where the update reads one grid: its blocks' rows of vectors cover no
    /// more of the contiguous axis than its twin's rows of pairs would; on
    /// the other grids the pairs run. On the H200 star3d25 f32 ran
    /// 1.04x-1.13x faster in pairs on rows of 320 to 960 cells whose vectors
    /// cover 64 cells more (300 x 448 x 448: 512 lanes' cells for 444 against
    /// 448, 1.13x), and 1.00x where both cover as much. acoustic25 f32, which
    /// also reads the previous level and the velocity at the cell, ran
    /// 0.92x-1.03x in pairs on the same rows and keeps its vectors
    /// (`benchmarks/experiments/pairs-cover`, session 45).
    fn quads_cover_no_more(&self) -> String {
        let last = self.dims() - 1;
        let quads = self.plan.block[last] * self.vector;
        let pairs = quads / 2;
        let e = self.extent(last);
        format!("({e} + {quads} - 1) / {quads} * 2 <= ({e} + {pairs} - 1) / {pairs}")
    }

    /// Launches this kernel and returns the launch's error code.
    fn launch(&self, w: &mut CWriter) {
        match self.plan.strategy {
            Strategy::Temporal => return self.temporal_launch(w),
            Strategy::Persistent => return self.persistent_launch(w),
            Strategy::Tensor => return self.tensor_launch(w),
            _ => {}
        }
        let dims = self.dims();
        let block = &self.plan.block;
        let mut threads = vec!["1".to_string(); 3];
        let mut blocks = vec!["1".to_string(); 3];
        let component = |c: &str| ["x", "y", "z"].iter().position(|x| *x == c).unwrap_or(0);
        let chunk = self.chunk_length();
        for a in 0..dims {
            let k = component(builtin(a, dims));
            if self.plan.strategy == Strategy::Stream && a == 0 {
                blocks[k] = format!("({} + {chunk} - 1) / {chunk}", self.extent(0));
            } else {
                threads[component(builtin(a, dims))] = block[a].to_string();
                let b = if a + 1 == dims {
                    block[a] * self.vector
                } else {
                    block[a]
                };
                blocks[k] = format!("({} + {b} - 1) / {b}", self.extent(a));
            }
        }
        if !self.shortens_chunk() {
            return self.launch_lines(w, &threads.join(", "), &blocks, 0, &self.arguments());
        }
        // A block's window loads the planes before and after its chunk.
        let warm_up = self.rows().iter().map(Row::depth).max().unwrap_or(0);
        self.wave_chunk(w, &self.kernel_name(), 0, warm_up, &blocks[..2], true);
        let arguments = format!("{}, chunk", self.arguments());
        self.launch_lines(w, &threads.join(", "), &blocks, 0, &arguments);
    }

    /// Cells of the region along axis `a`, as a C expression.
    fn extent(&self, a: usize) -> String {
        let (lo, hi) = self.bounds(a);
        if lo == "0" || self.aligned(a) {
            hi
        } else {
            format!("({hi} - {lo})")
        }
    }

    /// `block` and `grid` of the launch, the launch with `shared` bytes of
    /// dynamic shared memory and `arguments`, and its error code returned.
    fn launch_lines(
        &self,
        w: &mut CWriter,
        threads: &str,
        blocks: &[String],
        shared: usize,
        arguments: &str,
    ) {
        self.launch_named(w, &self.kernel_name(), threads, blocks, shared, arguments);
    }

    /// `multiprocessors` and `per_multiprocessor`, the blocks of `kernel`
    /// with `bytes` of dynamic shared memory each keeps resident, from the
    /// runtime of the current device; the launcher returns its error.
    fn residency(&self, w: &mut CWriter, kernel: &str, bytes: usize) {
        let api = self.d.api;
        w.line("int multiprocessors = 0, per_multiprocessor = 0;");
        // `tensor`'s launcher sizes its blocks with the kernel it picks (`threads`).
        let threads = if self.plan.strategy == Strategy::Tensor {
            "threads".to_string()
        } else {
            self.plan.threads().to_string()
        };
        w.line(&format!(
            "const {api}Error_t status = {RESIDENCY}((const void *){kernel}, {threads}, {bytes}, &multiprocessors, &per_multiprocessor);"
        ));
        w.line(&format!("if (status != {api}Success)"));
        w.line("    return (int)status;");
    }

    /// What the chunk rules start from: the resident blocks of instance
    /// `given` (`multiprocessors`, `per_multiprocessor`), the cells of the
    /// slowest axis (`cells`) and the blocks of one chunk (`across`, the
    /// product of the launch's blocks along the other axes).
    fn chunk_inputs(&self, w: &mut CWriter, given: &str, bytes: usize, across: &[String]) {
        self.residency(w, given, bytes);
        let across: Vec<String> = across.iter().map(|g| format!("({g})")).collect();
        w.line(&format!(
            "const ptrdiff_t cells = {}, across = {};",
            self.extent(0),
            across.join(" * ")
        ));
    }

    /// `chunk` for a kernel whose blocks march the slowest axis (`temporal`
    /// of vectors, `tensor`, the scalar twins of [`scalar_stream`]): the
    /// length whose waves of blocks (as many as
    /// stay resident at once, `across` a chunk) end first, each block
    /// marching its chunk and `extra` planes more (those its levels lag
    /// behind and start ahead, or its window's warm-up), no longer than the
    /// plan's chunk where `capped` (`tensor` and those twins, whose `chunk`
    /// is the most planes a block marches). On the
    /// suite's 512^3 grid star3d25 f32 then runs 3 chunks of 168 planes, 8
    /// full waves of the H100's 132 multiprocessors, where chunks of 128 make
    /// 10.67. Against chunks of 128 (the generated kernels in the A/B
    /// harness, BENCHMARKS.md, 2026-11-25, session 13): at 512^3 star3d25
    /// f32 1.04x, j3d13pt 1.06x and 1.02x; at 256^3 1.14x, 1.01x and 1.38x;
    /// at 100^3, where a small grid gets as many chunks as fill the device,
    /// 3.8x-5.2x.
    fn wave_chunk(
        &self,
        w: &mut CWriter,
        given: &str,
        bytes: usize,
        extra: usize,
        across: &[String],
        capped: bool,
    ) {
        let chunk = self.plan.chunk;
        let cap = if capped {
            format!(" (at most {chunk})")
        } else {
            String::new()
        };
        w.line(&format!(
            "/* Cells of `{}` a block marches{cap}: the length whose waves of blocks end first, each block marching its chunk and {extra} planes more. */",
            self.st.axes[0]
        ));
        self.chunk_inputs(w, given, bytes, across);
        w.line("const ptrdiff_t resident = (ptrdiff_t)multiprocessors * per_multiprocessor;");
        w.line(&format!("int chunk = {chunk};"));
        w.line("if (cells > 0 && across > 0 && resident > 0) {");
        w.indent();
        w.line(&format!(
            "/* n chunks along the axis: from {} to chunks of a quarter of the plan's length, and enough to fill the device. */",
            if capped { "chunks of the plan's length" } else { "one chunk" }
        ));
        w.line(&format!(
            "const ptrdiff_t most = 4 * ((cells + {chunk} - 1) / {chunk}) + resident / across + 1;"
        ));
        w.line("ptrdiff_t best = -1;");
        let first = if capped {
            format!("(cells + {chunk} - 1) / {chunk}")
        } else {
            "1".into()
        };
        w.line(&format!(
            "for (ptrdiff_t n = {first}; n <= most && n <= cells; ++n) {{"
        ));
        w.indent();
        w.line("const ptrdiff_t planes = (cells + n - 1) / n, waves = (across * n + resident - 1) / resident;");
        w.line(&format!(
            "const ptrdiff_t time = waves * (planes + {extra});"
        ));
        w.line("if (best < 0 || time < best) {");
        w.line("    best = time;");
        w.line("    chunk = (int)planes;");
        w.line("}");
        w.dedent();
        w.line("}");
        w.dedent();
        w.line("}");
    }

    /// [`Self::launch_lines`] of the kernel `name`.
    fn launch_named(
        &self,
        w: &mut CWriter,
        name: &str,
        threads: &str,
        blocks: &[String],
        shared: usize,
        arguments: &str,
    ) {
        w.line(&format!("const dim3 block({threads});"));
        w.line(&format!(
            "const dim3 grid({});",
            blocks
                .iter()
                .map(|b| format!("(unsigned)({b})"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        w.line(&format!(
            "{name}<<<grid, block, {shared}, stream>>>({arguments});"
        ));
        w.line(&format!("return (int){}GetLastError();", self.d.api));
    }
}

/// A row group of a `stream` block: grid `slot` read at row offset
/// `row` (the axes between the slowest and the contiguous one), at `reads`
/// (offsets along the slowest and the contiguous axis).
struct Row {
    slot: Slot,
    row: Vec<i64>,
    reads: Vec<(i64, i64)>,
}

impl Row {
    /// Planes one output reads from this row group, less one.
    fn depth(&self) -> usize {
        let (lo, hi) = self.planes();
        (hi - lo) as usize
    }

    /// Planes in a `stream` thread's window of this row group, with `chunk`
    /// cells per block and `c` per iteration: those one iteration reads, and
    /// where the window moves (`chunk > c`), as many again loaded ahead.
    fn window(&self, chunk: usize, c: usize) -> usize {
        self.depth() + if chunk > c { 2 * c } else { c }
    }

    /// The first and last plane offset read.
    fn planes(&self) -> (i64, i64) {
        let lo = self.reads.iter().map(|r| r.0).min().unwrap_or(0);
        let hi = self.reads.iter().map(|r| r.0).max().unwrap_or(0);
        (lo, hi)
    }

    /// The cells along the contiguous axis, from a thread's first, that its
    /// window of this row group holds: those its `v` cells read, and its own
    /// `v` cells, which are loaded as one vector whenever one of them is read
    /// (rows read only to one side, e.g. `u[1,1]` with `v = 2`, need the
    /// window to reach back to the vector's first cell).
    fn span(&self, v: usize) -> (i64, i64) {
        let lo = self.reads.iter().map(|r| r.1).min().unwrap_or(0);
        let hi = self.reads.iter().map(|r| r.1).max().unwrap_or(0);
        let v = v as i64;
        if v == 1 {
            (lo, hi)
        } else {
            (lo.min(0), (hi + v - 1).max(v - 1))
        }
    }

    /// The cells (from the thread's first) of plane offset `p` that its
    /// `c` x `v` outputs read.
    fn needed(&self, p: i64, c: usize, v: usize) -> Vec<i64> {
        let mut cells = BTreeSet::new();
        for &(z, x) in &self.reads {
            let j = p - z;
            if (0..c as i64).contains(&j) {
                cells.extend((0..v as i64).map(|k| k + x));
            }
        }
        cells.into_iter().collect()
    }
}

/// The row groups of a `stream` block for statement `s`: one per
/// grid and offset along the axes between the slowest and the contiguous one.
fn rows(s: &Statement, dims: usize) -> Vec<Row> {
    let last = dims - 1;
    let mut rows: Vec<Row> = Vec::new();
    s.expr.for_each_read(&mut |a| {
        let row = a.offset[1..last].to_vec();
        let read = (a.offset[0], a.offset[last]);
        match rows.iter_mut().find(|r| r.slot == a.slot && r.row == row) {
            Some(r) if !r.reads.contains(&read) => r.reads.push(read),
            Some(_) => {}
            None => rows.push(Row {
                slot: a.slot,
                row,
                reads: vec![read],
            }),
        }
    });
    rows
}

/// 32-bit registers a `stream` thread holds values in, for the most
/// demanding statement of `st`, with `c` x `v` cells per thread per iteration
/// and `chunk` cells per block along the slowest axis.
pub fn register_words(st: &Stencil, chunk: usize, c: usize, v: usize) -> usize {
    let words = st.dtype.size() / 4;
    let per_statement = |s: &Statement| -> usize {
        rows(s, st.dims())
            .iter()
            .map(|r| {
                let (x0, x1) = r.span(v);
                r.window(chunk, c) * (x1 - x0 + 1) as usize * words
            })
            .sum()
    };
    st.statements.iter().map(per_statement).max().unwrap_or(0)
}

/// ` + d`, ` - d` or nothing.
fn signed(d: i64) -> String {
    match d {
        0 => String::new(),
        d if d < 0 => format!(" - {}", -d),
        d => format!(" + {d}"),
    }
}

/// `x + d`, `x - d` or `x`.
fn shifted(x: &str, d: i64) -> String {
    match d {
        0 => x.to_string(),
        d if d < 0 => format!("{x} - {}", -d),
        d => format!("{x} + {d}"),
    }
}

/// `t0 * (e1 * e2) + t1 * e2 + t2`: a flat index of thread coordinates.
fn flat(coords: &[String], extents: &[String]) -> String {
    let n = coords.len();
    (0..n)
        .map(|k| {
            let stride: Vec<&str> = extents[k + 1..].iter().map(String::as_str).collect();
            if stride.is_empty() {
                coords[k].clone()
            } else {
                format!("{} * {}", coords[k], stride.join(" * "))
            }
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heat2d(boundary: &str) -> (Stencil, Analysis) {
        let text = format!(
            "[stencil]\nname = \"h\"\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n[fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[-1,0] + u[1,0] + u[0,-1] + u[0,1]\"\n[boundary]\nkind = \"{boundary}\"\n"
        );
        let src = crate::spec::Source {
            path: "h.stencil.toml".into(),
            text,
        };
        let st = crate::ir::lower(&crate::spec::parse(&src).unwrap(), &src).unwrap();
        let an = crate::analysis::analyse(&st);
        (st, an)
    }

    #[test]
    fn stream_moves_a_window_of_planes_through_registers() {
        let (st, an) = heat2d("fixed");
        let plan = Resolved {
            strategy: Strategy::Stream,
            block: vec![1, 256],
            chunk: 64,
            coarsen: 2,
            vector: 1,
            time_block: 1,
            occupancy: None,
            chosen: false,
        };
        let code = source(&st, &an, &plan, "p", &CUDA);
        // Planes z - 1 ..= z + 2 for this iteration, z + 3 and z + 4 loaded ahead.
        assert!(code.contains("double w0[6][3];"), "{code}");
        // The first plane is read only at the centre column.
        assert!(
            code.contains("w0[0][1] = cur_u[(z0 - 1) * s0 + i1];") && !code.contains("w0[0][0] ="),
            "{code}"
        );
        // Neighbours are loaded one iteration before their first use: those of
        // plane z + 2 (held since the last iteration) and z + 3 (new) now,
        // those of z + 4 (new, read at the centre column next) later.
        assert!(code.contains("if (z + 2 < z1) {"), "{code}");
        assert!(
            code.contains("w0[3][0] = cur_u[(z + 2) * s0 + i1 - 1];")
                && code.contains("w0[4][2] = cur_u[(z + 3) * s0 + i1 + 1];")
                && code.contains("w0[5][1] = cur_u[(z + 4) * s0 + i1];")
                && !code.contains("w0[5][0] ="),
            "{code}"
        );
        assert!(
            code.contains("if (z + 1 < z1) {"),
            "a partial last iteration is not stored"
        );
        // 2-D kernels test every plane against the grid before loading it
        // (3-D ones skip the planes provably on it: see the 3-D test).
        assert!(
            code.contains("if (z + 3 < n0) {") && code.contains("if (z + 4 < n0) {"),
            "{code}"
        );
        assert!(code.contains("w0[1][0] = w0[3][0];"), "{code}");
        assert!(
            !code.contains("__shared__") && !code.contains("__syncthreads"),
            "{code}"
        );
        assert!(
            !code.contains("stencil_mod"),
            "no wrapping with a fixed boundary"
        );
        let (st, an) = heat2d("periodic");
        let code = source(&st, &an, &plan, "p", &CUDA);
        assert!(
            code.contains(
                "w0[4][0] = cur_u[stencil_mod(z + 3, n0) * s0 + stencil_mod(i1 - 1, n1)];"
            ),
            "{code}"
        );
    }

    #[test]
    fn autos_single_steps_run_naive_on_small_grids() {
        for boundary in ["fixed", "periodic"] {
            let (st, an) = heat2d(boundary);
            let plan = resolve(&GpuTiling::model(Strategy::Auto), &st, &CUDA).unwrap();
            assert_ne!(plan.strategy, Strategy::Naive);
            let code = source(&st, &an, &plan, "p", &CUDA);
            let launcher = &code[code.find("extern \"C\" int p_cuda__h__update_u(").unwrap()..];
            let when = launcher
                .find("if (n0 * n1 < (ptrdiff_t)4096 * multiprocessors) {")
                .unwrap_or_else(|| panic!("{code}"));
            let naive = launcher
                .find("p_cuda__h__update_u_naive_kernel<<<")
                .unwrap();
            // Asked before any other single step; fused launches (of a fixed boundary) never.
            let other = if plan.fuses_steps() {
                assert!(launcher.find("if (levels == 1) {").unwrap() < when);
                "p_cuda__h__update_u_step"
            } else {
                "p_cuda__h__update_u_kernel<<<"
            };
            assert!(
                when < naive && naive < launcher.find(other).unwrap(),
                "{code}"
            );
            assert!(launcher.contains(
                "const cudaError_t status = stencil_residency((const void *)p_cuda__h__update_u_naive_kernel, 256, 0, &multiprocessors, &per_multiprocessor);"
            ));
            assert!(code.contains(
                "/* The kernel of single steps on small grids: `naive`, blocks of 8 x 32 threads. */"
            ));
            assert_eq!(plan.fuses_steps(), boundary == "fixed");
            // Named strategies run what they name.
            let named = resolve(&GpuTiling::model(plan.strategy), &st, &CUDA).unwrap();
            assert!(naive_plan(&named, &st, &CUDA).is_none());
            assert!(!source(&st, &an, &named, "p", &CUDA).contains("_naive"));
        }
    }

    #[test]
    fn autos_f64_stars_reading_other_grids_march_vectors_on_large_planes() {
        let star =
            "0.1*sum(r, 1, 4, u[-r,0,0] + u[r,0,0] + u[0,-r,0] + u[0,r,0] + u[0,0,-r] + u[0,0,r])";
        let acoustic = |dtype: &str| {
            lowered(format!(
                "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\n\
                 u = {{ role = \"state\", levels = 2 }}\nvel = {{ role = \"input\" }}\n[[update]]\ntarget = \"u\"\n\
                 expr = \"2*u[0,0,0] - u.prev[0,0,0] + vel[0,0,0]*vel[0,0,0]*({star})\"\n"
            ))
        };
        let st = acoustic("f64");
        let plan = resolve(&GpuTiling::model(Strategy::Auto), &st, &CUDA).unwrap();
        assert_eq!(
            (plan.strategy, &plan.block[..], plan.chunk, plan.vector),
            (Strategy::Stream, &[1, 8, 32][..], 64, 2)
        );
        assert!(plan.small_grids() && plan.vector_planes());
        assert_eq!(small_step_cells(&plan), SMALL_STEP_CELLS_MORE_GRIDS);
        let (code, launcher) = cuda_launcher(&st, &plan);
        let at = |what: &str| position(&launcher, &code, what);
        // `naive` on the smallest grids, the small kernel on small planes, then the plan's kernels.
        let naive = at("if (n0 * n1 * n2 < (ptrdiff_t)8192 * multiprocessors) {");
        let planes = at(
            "if ((ptrdiff_t)n1 * n2 < 160000 && n0 * n1 * n2 <= 2147483647 && n2 % 2 == 0 && (size_t)out % 16 == 0",
        );
        let small = at("p_cuda__s__update_u_small_kernel<<<");
        let small_wide = at("p_cuda__s__update_u_small_i64_kernel<<<");
        let own = at("p_cuda__s__update_u_kernel<<<");
        let own_scalar = at("p_cuda__s__update_u_scalar_kernel<<<");
        assert!(naive < at("p_cuda__s__update_u_naive_kernel<<<"));
        assert!(naive < planes && planes < small && small < small_wide && small_wide < own);
        assert!(own < own_scalar);
        // Small planes of rows that are not whole vectors run the plan's own scalar twin.
        assert_eq!(
            launcher.matches("(ptrdiff_t)n1 * n2 < 160000 && ").count(),
            2
        );
        assert!(!code.contains("_small_scalar"));
        assert!(code.contains(
            "/* Planes of fewer than 160000 cells: `stream` in 2-cell vectors, blocks of 1 x 2 x 64 threads marching 4 planes (rows that are not whole vectors: the kernels below). */"
        ));
        assert!(code.contains("; planes of fewer than 160000 cells run blocks of 1 x 2 x 64 threads marching 4 planes."));
        assert!(!code.contains("mma"), "no tensor kernel");
        // Named strategies, f32, HIP and the stars that read one grid keep their plans.
        let named = resolve(&GpuTiling::model(Strategy::Stream), &st, &CUDA).unwrap();
        assert!(!named.small_grids() && small_plan(&named, &st, &CUDA).is_none());
        let hip = resolve(&GpuTiling::model(Strategy::Auto), &st, &HIP).unwrap();
        assert!(!hip.vector_planes());
        let f32 = resolve(&GpuTiling::model(Strategy::Auto), &acoustic("f32"), &CUDA).unwrap();
        assert!(!f32.vector_planes());
        // Its single steps read three grids: quads on every row of whole quads.
        let (code, launcher) = cuda_launcher(&acoustic("f32"), &f32);
        assert!(code.contains("_step_pairs_kernel<<<") && !launcher.contains(" / 128 * 2 <= "));
        let one_grid = stencil("\"z\", \"y\", \"x\"", "f64", star);
        let one_grid = resolve(&GpuTiling::model(Strategy::Auto), &one_grid, &CUDA).unwrap();
        assert_eq!(one_grid.strategy, Strategy::Tensor);
        assert!(one_grid.small_grids() && !one_grid.vector_planes());
        assert_eq!(small_step_cells(&one_grid), SMALL_STEP_CELLS);
    }

    /// `plan`'s CUDA source for `st` (prefix `p`) and its launcher's text.
    fn cuda_launcher(st: &Stencil, plan: &Resolved) -> (String, String) {
        let code = source(st, &crate::analysis::analyse(st), plan, "p", &CUDA);
        let at = code.find("extern \"C\" int p_cuda__s__update_u(").unwrap();
        (code.clone(), code[at..].to_string())
    }

    /// Where `what` starts in `launcher` (failing with the whole `code`).
    fn position(launcher: &str, code: &str, what: &str) -> usize {
        launcher
            .find(what)
            .unwrap_or_else(|| panic!("{what}: {code}"))
    }

    #[test]
    fn f32_stars_of_reach_4_step_alone_in_planes_stream() {
        let st = stencil(
            "\"z\", \"y\", \"x\"",
            "f32",
            "0.1*sum(r, 1, 4, u[-r,0,0] + u[r,0,0] + u[0,-r,0] + u[0,r,0] + u[0,0,-r] + u[0,0,r])",
        );
        let plan = resolve(&GpuTiling::model(Strategy::Auto), &st, &CUDA).unwrap();
        assert!(
            plan.measures(),
            "the steps fuse, each session measuring the single step too"
        );
        let step = step_plan(&plan, &st, &CUDA).unwrap();
        assert_eq!(
            (step.strategy, &step.block[..], step.chunk, step.vector),
            (Strategy::Stream, &[1, 8, 32][..], 64, 4)
        );
        assert!(step.vector_planes() && step.small_grids());
        let (code, launcher) = cuda_launcher(&st, &plan);
        let at = |what: &str| position(&launcher, &code, what);
        // One step: `naive` on the smallest grids, blocks marching 4 planes on
        // small planes, then 64 planes in quads, pairs, single cells.
        let one = at("if (levels == 1) {");
        let naive = at("p_cuda__s__update_u_naive_kernel<<<");
        let small = at("p_cuda__s__update_u_step_small_kernel<<<");
        let quads = at("p_cuda__s__update_u_step_kernel<<<");
        let pairs = at("if (n0 * n1 * n2 <= 2147483647 && n2 % 2 == 0 && (size_t)out % 8 == 0");
        let pairs_kernel = at("p_cuda__s__update_u_step_pairs_kernel<<<");
        let scalar = at("p_cuda__s__update_u_step_scalar_kernel<<<");
        let fused = at("p_cuda__s__update_u_vector_kernel<0>;");
        assert!(one < naive && naive < small && small < quads && quads < pairs);
        assert!(pairs < pairs_kernel && pairs_kernel < scalar && scalar < fused);
        // Quads only where their rows of 128 cells cover no more of `x` than
        // rows of 64 in pairs would (not on rows of 448 cells: 512 against 448).
        let cover = "(n2 - 4 + 128 - 1) / 128 * 2 <= (n2 - 4 + 64 - 1) / 64";
        assert_eq!(launcher.matches(cover).count(), 2, "32- and 64-bit quads");
        assert!(small < at(cover) && at(cover) < quads);
        assert!(
            at("(ptrdiff_t)n1 * n2 < 160000 && n0 * n1 * n2 <= 2147483647 && n2 % 4 == 0") < small
        );
        assert!(code.contains(
            "/* The same in 8-byte pairs, for grids whose rows are whole pairs but not whole vectors. */"
        ));
        assert!(code.contains(
            "/* The kernel of one step on small planes: `stream`, blocks of 1 x 2 x 64 threads, marching 4 cells along `z` per block, 1 per iteration, 4 along `x` per thread. */"
        ));
        // The small planes' kernel has no twins of its own but the 64-bit one.
        assert!(!code.contains("_step_small_pairs") && !code.contains("_step_small_scalar"));
        // Reach 3 and HIP: the step kernels they had.
        let reach3 = stencil(
            "\"z\", \"y\", \"x\"",
            "f32",
            "0.1*sum(r, 1, 3, u[-r,0,0] + u[r,0,0] + u[0,-r,0] + u[0,r,0] + u[0,0,-r] + u[0,0,r])",
        );
        assert!(!wide_planes(&reach3));
        let hip = resolve(&GpuTiling::model(Strategy::Auto), &st, &HIP).unwrap();
        assert!(!hip.vector_planes());
        assert!(step_plan(&hip, &st, &HIP).is_none_or(|step| !step.vector_planes()));
        assert!(!source(&st, &crate::analysis::analyse(&st), &hip, "p", &HIP).contains("_pairs"));
    }

    #[test]
    fn hip_is_the_same_generator_in_another_dialect() {
        let (st, an) = heat2d("fixed");
        let auto = GpuTiling::model(Strategy::Tiled);
        let plan = resolve(&auto, &st, &HIP).unwrap();
        assert_eq!(plan.block, vec![4, 64], "64-wide wavefronts on AMD");
        let hip = source(&st, &an, &plan, "p", &HIP);
        let cuda = source(&st, &an, &plan, "p", &CUDA);
        assert!(
            hip.contains("#include <hip/hip_runtime.h>")
                && hip.contains("return (int)hipGetLastError();"),
            "{hip}"
        );
        assert!(
            hip.contains("extern \"C\" int p_hip__h__update_u("),
            "{hip}"
        );
        let swapped = cuda
            .replace("cuda_runtime.h", "hip/hip_runtime.h")
            .replace("cuda", "hip")
            .replace("CUDA", "HIP");
        assert_eq!(hip, swapped, "the dialect changes names only");
        let runtime = runtime_source("p", &HIP);
        assert!(
            runtime.contains("return (int)hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost);"),
            "{runtime}"
        );
        // Waits for the legacy stream, never the device (which breaks other threads' captures).
        for (d, api) in [(&HIP, "hip"), (&CUDA, "cuda")] {
            let runtime = runtime_source("p", d);
            assert!(
                runtime.contains(&format!("return (int){api}StreamSynchronize(0);"))
                    && !runtime.contains("DeviceSynchronize"),
                "{runtime}"
            );
        }
    }

    #[test]
    fn blocks_fit_the_shared_memory_budget() {
        let text = "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = { role = \"state\" }\n\
                    [[update]]\ntarget = \"u\"\nexpr = \"sum(r, 1, 4, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])\"\n";
        let st = lowered(text.into());
        let tiled = Resolved {
            strategy: Strategy::Tiled,
            block: vec![2, 2, 64],
            chunk: 1,
            coarsen: 1,
            vector: 1,
            time_block: 1,
            occupancy: None,
            chosen: false,
        };
        assert_eq!(
            shared_bytes(&st, &tiled),
            10 * 10 * 72 * 8,
            "radius 4 on every side, f64"
        );
        let fitted = fit(tiled.clone(), false, &st, &HIP).unwrap();
        assert_eq!(
            fitted.block,
            vec![1, 1, 64],
            "9 x 9 x 72 x 8 = 46 656 bytes"
        );
        assert!(shared_bytes(&st, &fitted) <= SHARED_BUDGET);
        let err = fit(tiled, true, &st, &HIP).unwrap_err();
        assert!(
            err.contains(
                "needs 57 KiB of shared memory per block for `s`, more than the 48 KiB budget"
            ),
            "{err}"
        );
        let stream = Resolved {
            strategy: Strategy::Stream,
            block: vec![1, 8, 32],
            chunk: 64,
            coarsen: 1,
            vector: 1,
            time_block: 1,
            occupancy: None,
            chosen: false,
        };
        assert_eq!(shared_bytes(&st, &stream), 0, "registers and caches only");
    }

    /// A one-field stencil of `axes` in `dtype` computing `expr`.
    fn stencil(axes: &str, dtype: &str, expr: &str) -> Stencil {
        let text = format!(
            "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [{axes}]\n[fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n"
        );
        lowered(text)
    }

    /// The stencil spec `text` (as `s.stencil.toml`) lowered.
    pub(in crate::backend::gpu) fn lowered(text: String) -> Stencil {
        let src = crate::spec::Source {
            path: "s.stencil.toml".into(),
            text,
        };
        crate::ir::lower(&crate::spec::parse(&src).unwrap(), &src).unwrap()
    }

    /// Every `w<g>[m][k]` of `code` within the bounds `w<g>` is declared with.
    fn window_indices_in_bounds(code: &str) {
        let mut sizes: Vec<(String, usize, usize)> = Vec::new();
        for line in code.lines().map(str::trim).filter(|l| !l.starts_with("/*")) {
            let decl = line.strip_prefix("float ").or(line.strip_prefix("double "));
            if let Some(d) = decl.filter(|d| d.starts_with('w') && d.ends_with("];")) {
                let (name, dims) = d.split_once('[').unwrap();
                let dims: Vec<usize> = dims
                    .trim_end_matches("];")
                    .split("][")
                    .map(|n| n.parse().unwrap())
                    .collect();
                sizes.retain(|(n, _, _)| n != name);
                sizes.push((name.to_string(), dims[0], dims[1]));
                continue;
            }
            for (name, planes, cells) in &sizes {
                for (at, _) in line.match_indices(&format!("{name}[")) {
                    let rest = &line[at + name.len() + 1..];
                    let (m, rest) = rest.split_once("][").unwrap();
                    let k = rest.split(']').next().unwrap();
                    let (m, k): (i64, i64) = (m.parse().unwrap(), k.parse().unwrap());
                    assert!(
                        (0..*planes as i64).contains(&m) && (0..*cells as i64).contains(&k),
                        "{name}[{m}][{k}] outside {name}[{planes}][{cells}] in `{line}`"
                    );
                }
            }
        }
    }

    #[test]
    fn windows_of_rows_read_to_one_side_hold_the_threads_own_vector() {
        // Each row group but the middle one is read only right of the
        // thread's cells (`u[1,1,1]`) or only left (`u[-1,-1,-1]`): its window still holds the
        // vector the thread loads for its own cells. Found by the random
        // stencils of the cross-backend tests.
        let st = stencil(
            "\"z\", \"y\", \"x\"",
            "f64",
            "u[1,1,1] + 0.5*u[-1,-1,-1] + u[0,0,0]",
        );
        for (chunk, coarsen) in [(3, 3), (8, 3)] {
            let plan = Resolved {
                strategy: Strategy::Stream,
                block: vec![1, 2, 64],
                chunk,
                coarsen,
                vector: 2,
                time_block: 1,
                occupancy: None,
                chosen: false,
            };
            let code = source(&st, &crate::analysis::analyse(&st), &plan, "p", &CUDA);
            assert!(code.contains("const double2 q"), "{code}");
            window_indices_in_bounds(&code);
        }
    }

    #[test]
    fn vectors_are_at_most_16_bytes() {
        let st = stencil("\"y\", \"x\"", "f64", "u[0,-1] + u[0,1]");
        let plan = Resolved {
            strategy: Strategy::Stream,
            block: vec![1, 64],
            chunk: 2,
            coarsen: 2,
            vector: 4,
            time_block: 1,
            occupancy: None,
            chosen: false,
        };
        let err = fit(plan.clone(), true, &st, &CUDA).unwrap_err();
        assert!(
            err.contains("`vector = 4` makes vectors of 32 bytes for `s`")
                && err.contains("set `vector = 2` or less in [tiling.cuda]"),
            "{err}"
        );
        let ok = Resolved { vector: 2, ..plan };
        assert_eq!(fit(ok.clone(), true, &st, &CUDA).unwrap(), ok);
        let code = source(&st, &crate::analysis::analyse(&st), &ok, "p", &CUDA);
        assert!(
            code.contains("if (n1 % 2 == 0 && (size_t)out % 16 == 0 && (size_t)cur_u % 16 == 0) {")
                && code.contains("p_cuda__s__update_u_scalar_kernel<<<grid, block, 0, stream>>>"),
            "the launcher falls back to the scalar twin: {code}"
        );
        assert!(
            !code.contains("_i64") && !code.contains("const int"),
            "2-D indices stay 64-bit"
        );
    }

    #[test]
    fn scalar_twins_of_3d_vectors_run_stream_defaults_on_the_launchers_chunk() {
        let st = stencil(
            "\"z\", \"y\", \"x\"",
            "f32",
            "u[-2,0,0] + u[0,0,-1] + u[0,0,1] + u[0,1,0] + u[2,0,0]",
        );
        let plan = resolve(&vector_stream(&st, &CUDA), &st, &CUDA).unwrap();
        assert_eq!(
            (plan.block.as_slice(), plan.vector),
            ([1, 2, 64].as_slice(), 4)
        );
        let code = source(&st, &crate::analysis::analyse(&st), &plan, "p", &CUDA);
        window_indices_in_bounds(&code);
        let kernel = |name: &str| {
            let at = code.find(&format!("{name}(const int n0")).unwrap();
            code[..at].lines().last().unwrap().to_string()
        };
        assert!(kernel("update_u_kernel").contains("__launch_bounds__(128)"));
        // The twins: one cell a thread, 256 threads, the chunk an argument.
        for name in ["update_u_scalar_kernel", "update_u_scalar_i64_kernel"] {
            let at = code.find(&format!("{name}(const")).unwrap();
            let line = &code[at..code[at..].find('\n').unwrap() + at];
            assert!(
                line.ends_with("const float *__restrict__ cur_u, int chunk)"),
                "{line}"
            );
            assert!(
                code[..at].ends_with("__launch_bounds__(256) p_cuda__s__"),
                "{name}"
            );
        }
        assert!(code.contains(
            "/* The same without vectors, for grids whose rows are not whole vectors: `stream`'s blocks of 1 x 8 x 32 threads, chunks of at most 64 planes. */"
        ));
        assert!(
            code.contains("const int z1 = z0 + chunk < n0 - 2 ? z0 + chunk : n0 - 2;"),
            "{code}"
        );
        let launcher = &code[code.find("extern \"C\" int p_cuda__s__update_u(").unwrap()..];
        for line in [
            // Capped at 64 planes; each block loads 4 planes more than its chunk.
            "for (ptrdiff_t n = (cells + 64 - 1) / 64; n <= most && n <= cells; ++n) {",
            "const ptrdiff_t time = waves * (planes + 4);",
            "const dim3 block(32, 8, 1);",
            "const dim3 grid((unsigned)((n2 - 1 + 32 - 1) / 32), (unsigned)(((n1 - 1 - 1) + 8 - 1) / 8), (unsigned)(((n0 - 2 - 2) + chunk - 1) / chunk));",
            "p_cuda__s__update_u_scalar_kernel<<<grid, block, 0, stream>>>(n0, n1, n2, out, cur_u, chunk);",
        ] {
            assert!(
                launcher.contains(line),
                "`{line}` missing from:\n{launcher}"
            );
        }
    }

    #[test]
    fn single_pass_3d_kernels_index_with_32_bits_where_the_grid_allows() {
        let st = stencil(
            "\"z\", \"y\", \"x\"",
            "f32",
            "u[-1,0,0] + u[0,0,1] + u[0,1,0]",
        );
        let plan = Resolved {
            strategy: Strategy::Stream,
            block: vec![1, 4, 32],
            chunk: 2,
            coarsen: 2,
            vector: 4,
            time_block: 1,
            occupancy: None,
            chosen: false,
        };
        let code = source(&st, &crate::analysis::analyse(&st), &plan, "p", &CUDA);
        let kernels: Vec<&str> = code
            .lines()
            .filter(|l| l.starts_with("static __global__"))
            .collect();
        assert_eq!(kernels.len(), 4, "{code}");
        for (k, name) in [
            "_kernel(",
            "_scalar_kernel(",
            "_i64_kernel(",
            "_scalar_i64_kernel(",
        ]
        .iter()
        .enumerate()
        {
            assert!(
                kernels[k].contains(&format!("update_u{name}")),
                "{}",
                kernels[k]
            );
        }
        // The planes read, z0 - 1 ..= z0 + 1, are on the grid whenever z0 is in
        // the region (its frame is one plane wide): no test before loading.
        assert!(!code.contains(" < n0) {"), "{code}");
        let launcher = &code[code.find("extern \"C\" int p_cuda__s__update_u(").unwrap()..];
        let cells = "n0 * n1 * n2 <= 2147483647";
        let vectors = "n2 % 4 == 0 && (size_t)out % 16 == 0 && (size_t)cur_u % 16 == 0";
        let order = [
            format!("if ({cells} && {vectors}) {{"),
            format!("if ({cells}) {{"),
            format!("if ({vectors}) {{"),
            "p_cuda__s__update_u_scalar_i64_kernel<<<".to_string(),
        ];
        let at: Vec<usize> = order
            .iter()
            .map(|o| {
                launcher
                    .find(o.as_str())
                    .unwrap_or_else(|| panic!("{o}: {launcher}"))
            })
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{launcher}");
        assert!(
            code.contains("const int s0 = n1 * n2;")
                && code.contains("const ptrdiff_t s0 = n1 * n2;")
        );
    }

    #[test]
    fn the_model_picks_what_measured_fastest_and_fills_in_defaults() {
        let auto = GpuTiling::model(Strategy::Auto);
        let plan = |st: &Stencil, t: &GpuTiling, d: &Dialect| {
            let r = resolve(t, st, d).unwrap();
            (r.strategy, r.block, r.chunk, r.coarsen, r.vector)
        };
        // `auto`'s strategy, and the plan of its launches of one step.
        let one_step = |st: &Stencil, d: &Dialect| {
            let fused = resolve(&auto, st, d).unwrap();
            let r = step_plan(&fused, st, d).unwrap();
            (
                fused.strategy,
                (r.strategy, r.block, r.chunk, r.coarsen, r.vector),
            )
        };
        let line = stencil("\"x\"", "f32", "u[-1] + u[1]");
        assert_eq!(
            plan(&line, &auto, &CUDA),
            (Strategy::Naive, vec![256], 1, 1, 1)
        );
        let j2d5pt = "u[-1,0] + u[0,-1] + u[0,0] + u[0,1] + u[1,0]";
        let j2d32 = stencil("\"y\", \"x\"", "f32", j2d5pt);
        assert_eq!(
            register_words(&j2d32, 4, 4, 4),
            6 * 6,
            "6 planes of 6 cells"
        );
        assert_eq!(
            plan(&j2d32, &auto, &CUDA),
            (Strategy::Temporal, vec![1, 128], 256, 1, 4),
            "2-D steps that fuse are fused"
        );
        let j2d64 = stencil("\"y\", \"x\"", "f64", j2d5pt);
        assert_eq!(
            plan(&j2d64, &auto, &CUDA),
            (Strategy::Temporal, vec![1, 128], 256, 1, 2)
        );
        let (periodic, _) = heat2d("periodic");
        assert_eq!(
            plan(&periodic, &auto, &CUDA),
            (Strategy::Stream, vec![1, 256], 4, 4, 1),
            "periodic steps do not fuse"
        );
        let j3d7pt =
            "u[-1,0,0] + u[0,-1,0] + u[0,0,-1] + u[0,0,0] + u[0,0,1] + u[0,1,0] + u[1,0,0]";
        let j3d32 = stencil("\"z\", \"y\", \"x\"", "f32", j3d7pt);
        assert_eq!(
            plan(&j3d32, &auto, &CUDA),
            (Strategy::Temporal, vec![1, 4, 64], 128, 8, 1),
            "3-D stars of radius 1 fuse, over tiles of 64 x 32 cells (f32: 8 rows a thread)"
        );
        assert_eq!(
            plan(&j3d32, &auto, &HIP),
            (Strategy::Temporal, vec![1, 8, 32], 128, 4, 1),
            "tiles of 32 x 32 cells where shared memory holds 64 KiB"
        );
        let j3d64 = stencil("\"z\", \"y\", \"x\"", "f64", j3d7pt);
        assert_eq!(register_words(&j3d64, 2, 2, 2), 4 * 4 * 2 + 2 * (2 * 2 * 2));
        assert_eq!(plan(&j3d64, &auto, &HIP).0, Strategy::Temporal);
        let skew = "u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,1] + u[1,1,0]";
        let skew32 = stencil("\"z\", \"y\", \"x\"", "f32", skew);
        assert_eq!(
            plan(&skew32, &auto, &CUDA).0,
            Strategy::Temporal,
            "3-D f32 stencils of radius 1 or 2 fuse"
        );
        let skew64 = stencil("\"z\", \"y\", \"x\"", "f64", skew);
        assert_eq!(
            plan(&skew64, &auto, &CUDA).0,
            Strategy::Temporal,
            "3-D f64 stencils of radius 1 fuse"
        );
        let r2 = stencil(
            "\"z\", \"y\", \"x\"",
            "f64",
            "u[-2,0,0] + u[0,0,0] + u[0,2,0]",
        );
        assert_eq!(
            plan(&r2, &auto, &CUDA).0,
            Strategy::Temporal,
            "3-D f64 stars of radius 2 fuse"
        );
        let leapfrog = |axes: &str, reads: &str| temporal::tests::leapfrog(axes, "f32", reads, "");
        let wave2d = leapfrog("\"y\", \"x\"", "u[-1,0] + u[0,1]");
        assert_eq!(
            plan(&wave2d, &auto, &CUDA).0,
            Strategy::Temporal,
            "2-D leapfrogs fuse"
        );
        let wave3d = leapfrog("\"z\", \"y\", \"x\"", "u[-1,0,0] + u[0,0,1]");
        assert_eq!(
            plan(&wave3d, &auto, &CUDA),
            (Strategy::Persistent, vec![1, 8, 64], 128, 4, 1),
            "3-D leapfrogs of radius 1 fuse, in f32 in one launch"
        );
        let wave3d64 =
            temporal::tests::leapfrog("\"z\", \"y\", \"x\"", "f64", "u[-1,0,0] + u[0,0,1]", "");
        assert_eq!(plan(&wave3d64, &auto, &CUDA).0, Strategy::Temporal);
        let wave3d_vel = lowered(
            "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
             [fields]\nu = { role = \"state\", levels = 2 }\nvel = { role = \"input\" }\n\
             [[update]]\ntarget = \"u\"\nexpr = \"2*u[0,0,0] - u.prev[0,0,0] + vel[0,0,0]*(u[-1,0,0] + u[1,0,0] + \
             u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,1] - 6*u[0,0,0])\"\n"
                .to_string(),
        );
        assert!(register_words(&wave3d_vel, 2, 2, 4) > AUTO_REGISTER_WORDS);
        assert_eq!(
            one_step(&wave3d_vel, &CUDA),
            (
                Strategy::Persistent,
                (Strategy::Stream, vec![1, 2, 64], 4, 1, 4)
            ),
            "one step of wave3d: 16-byte vectors, though it reads two more grids"
        );
        let wide3d = leapfrog("\"z\", \"y\", \"x\"", "u[-2,0,0] + u[0,0,1]");
        assert_eq!(
            plan(&wide3d, &auto, &CUDA).0,
            Strategy::Stream,
            "wider 3-D leapfrogs step one at a time"
        );
        let box2 = stencil(
            "\"z\", \"y\", \"x\"",
            "f64",
            "u[-2,0,0] + u[0,2,0] + u[1,2,0]",
        );
        assert_eq!(
            plan(&box2, &auto, &CUDA).0,
            Strategy::Stream,
            "other 3-D f64 stencils of radius 2 stay single-step"
        );
        let skew_small = stencil(
            "\"z\", \"y\", \"x\"",
            "f32",
            "u[0,-1,0] + u[0,1,0] + u[1,1,1]",
        );
        assert_eq!(
            plan(&skew_small, &auto, &HIP),
            (Strategy::Temporal, vec![1, 8, 32], 128, 4, 2),
            "the fused 3-D tiling on HIP too, in z sums (in-plane reads in two planes)"
        );
        let star =
            "sum(r, 1, 4, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])";
        let wide = stencil("\"z\", \"y\", \"x\"", "f32", star);
        assert!(register_words(&wide, 2, 2, 4) > AUTO_REGISTER_WORDS);
        assert_eq!(
            plan(&wide, &auto, &HIP),
            (Strategy::Stream, vec![1, 2, 64], 4, 1, 4),
            "too many registers for single-pass blocks: 16-byte vectors marching chunks of 4 planes"
        );
        assert_eq!(
            plan(&wide, &auto, &CUDA),
            (Strategy::Temporal, vec![1, 32, 16], 128, 1, 4),
            "f32 stars of radius 4 fuse in threads of vectors where the rings fit"
        );
        let star2 = stencil(
            "\"z\", \"y\", \"x\"",
            "f32",
            "sum(r, 1, 2, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])",
        );
        assert_eq!(
            plan(&star2, &auto, &CUDA),
            (Strategy::Temporal, vec![1, 32, 32], 128, 1, 2),
            "f32 stars of radius 2 fuse in 64 x 32 tiles of 2-cell vectors (j3d13pt)"
        );
        assert_eq!(
            plan(&star2, &auto, &HIP),
            (Strategy::Temporal, vec![1, 8, 32], 128, 4, 1),
            "on HIP, whose rings hold a lead of 1 only, in columns of 4 rows"
        );
        assert_eq!(register_words(&wide, 4, 1, 4), WIDE_REGISTER_WORDS);
        let wide_f64 = stencil("\"z\", \"y\", \"x\"", "f64", star);
        assert_eq!(
            plan(&wide_f64, &auto, &HIP),
            (Strategy::Stream, vec![1, 4, 64], 64, 1, 1),
            "its f64 window is over the budget: one cell per thread through chunks of 64 planes"
        );
        assert_eq!(
            plan(&wide_f64, &auto, &CUDA),
            (Strategy::Tensor, vec![1, 16, 32], 256, 1, 1),
            "on CUDA its in-plane sum goes to the FP64 tensor cores, a plane at a time"
        );
        let star2_f64 = Stencil {
            dtype: crate::ir::Dtype::F64,
            ..star2.clone()
        };
        assert!(register_words(&star2_f64, 4, 1, 2) <= WIDE_REGISTER_WORDS);
        let wide_inputs = lowered(format!(
            "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
             [fields]\nu = {{ role = \"state\" }}\nk = {{ role = \"input\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"k[0,0,0] * ({star})\"\n"
        ));
        assert!(register_words(&wide_inputs, 4, 1, 4) > WIDE_REGISTER_WORDS);
        assert_eq!(
            plan(&wide_inputs, &auto, &HIP),
            (Strategy::Stream, vec![1, 4, 64], 64, 1, 1),
            "reading another grid too, over the budget: one cell per thread through chunks of 64 planes"
        );
        assert_eq!(
            plan(&wide_inputs, &auto, &CUDA),
            (Strategy::Temporal, vec![1, 16, 32], 128, 1, 4),
            "on CUDA, the ring kernel (on large planes) and single steps in 16-byte vectors"
        );
        let steps = step_plan(
            &resolve(&auto, &wide_inputs, &CUDA).unwrap(),
            &wide_inputs,
            &CUDA,
        )
        .unwrap();
        assert_eq!(
            (steps.strategy, &steps.block[..], steps.chunk, steps.vector),
            (Strategy::Stream, &[1, 8, 32][..], 64, 4),
            "a star of reach 4 in-plane: `planes_stream`'s blocks marching 64 planes"
        );
        assert!(steps.vector_planes());
        let small = small_planes_plan(&steps, &wide_inputs, &CUDA).unwrap();
        assert_eq!(
            (&small.block[..], small.chunk, small.vector),
            (&[1, 2, 64][..], 4, 4),
            "and on small planes blocks marching 4"
        );
        let wider = stencil(
            "\"z\", \"y\", \"x\"",
            "f32",
            "sum(r, 1, 6, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])",
        );
        assert!(register_words(&wider, 4, 1, 4) > WIDE_REGISTER_WORDS);
        assert_eq!(
            plan(&wider, &auto, &CUDA),
            (Strategy::Stream, vec![1, 8, 32], 64, 1, 1),
            "wider still: one cell per thread"
        );
        let wide_2d = stencil(
            "\"y\", \"x\"",
            "f64",
            "sum(r, 1, 8, u[r,0] + u[0,r] + u[-r,0] + u[0,-r])",
        );
        assert!(register_words(&wide_2d, 4, 4, 1) > AUTO_REGISTER_WORDS);
        assert!(register_words(&wide_2d, 4, 1, 2) > WIDE_REGISTER_WORDS);
        let periodic_2d = Stencil {
            boundary: crate::ir::Boundary::Periodic,
            ..wide_2d
        };
        assert_eq!(
            plan(&periodic_2d, &auto, &CUDA),
            (Strategy::Stream, vec![1, 256], 64, 1, 1),
            "2-D stencils that neither fuse nor fit the vectors' window: one cell per thread through chunks of 64 rows"
        );
        let j2d9pt = stencil(
            "\"y\", \"x\"",
            "f32",
            "u[-2,0] + u[-1,0] + u[0,-2] + u[0,-1] + u[0,0] + u[0,1] + u[0,2] + u[1,0] + u[2,0]",
        );
        assert!(register_words(&j2d9pt, 4, 4, 4) > AUTO_REGISTER_WORDS);
        assert_eq!(
            one_step(&j2d9pt, &HIP),
            (Strategy::Temporal, (Strategy::Stream, vec![1, 64], 4, 1, 4)),
            "one step of a 2-D stencil of radius 2: 16-byte vectors marching chunks of 4 rows"
        );
        let periodic_9pt = Stencil {
            boundary: crate::ir::Boundary::Periodic,
            dtype: crate::ir::Dtype::F64,
            ..j2d9pt
        };
        assert_eq!(
            plan(&periodic_9pt, &auto, &CUDA),
            (Strategy::Stream, vec![1, 64], 4, 1, 2),
            "and where it does not fuse"
        );
        let stream = GpuTiling {
            strategy: Strategy::Stream,
            ..auto.clone()
        };
        assert_eq!(
            plan(&j3d64, &stream, &CUDA),
            (Strategy::Stream, vec![1, 8, 32], 64, 1, 1)
        );
        let tiled = GpuTiling {
            strategy: Strategy::Tiled,
            ..auto.clone()
        };
        assert_eq!(plan(&j2d64, &tiled, &CUDA).1, vec![8, 32]);
        let temporal = GpuTiling {
            strategy: Strategy::Temporal,
            ..auto.clone()
        };
        let t = resolve(&temporal, &j2d64, &CUDA).unwrap();
        assert_eq!(
            (t.block, t.chunk, t.vector, t.time_block),
            (vec![1, 128], 256, 2, 6),
            "2-D f64: 64-cell warp tiles, 6 skewed steps in three quarters of the register budget"
        );
        let t = resolve(&temporal, &j3d64, &CUDA).unwrap();
        assert_eq!(
            (t.block, t.chunk, t.coarsen, t.vector, t.time_block),
            (vec![1, 8, 64], 128, 4, 1, 3),
            "3-D f64 stars of radius 1: tiles of 64 x 32 cells, 3 steps (rings of 2 planes, 108 KiB)"
        );
        let t = resolve(&temporal, &skew64, &CUDA).unwrap();
        assert_eq!(
            (t.block, t.coarsen, t.time_block),
            (vec![1, 8, 32], 4, 2),
            "other 3-D f64 stencils of radius 1: tiles of 32 x 32 cells, 2 steps (rings of 3 planes here, 55 KiB)"
        );
        let t = resolve(&temporal, &j3d64, &HIP).unwrap();
        assert_eq!(
            (t.block, t.time_block),
            (vec![1, 8, 32], 3),
            "HIP: rings within its 64 KiB (55 KiB)"
        );
        let persistent = GpuTiling {
            strategy: Strategy::Persistent,
            ..auto
        };
        let p = resolve(&persistent, &j2d64, &CUDA).unwrap();
        assert_eq!(
            (p.strategy, p.block, p.chunk, p.vector, p.time_block),
            (Strategy::Persistent, vec![1, 128], 256, 2, 6),
            "`persistent` takes `temporal`'s tiling"
        );
    }
}
