//! `auto`'s model: one function ([`auto`]) from a stencil and a dialect to
//! the tiling it resolves, and the constants it decides by, each with the
//! measurement it came from. The figures are GCells/s of the benchmark
//! runner (`suite --backend cuda`) on the GPU named (an H100 until the
//! `tensor-m16` measurements, an H200 since), each variant against the
//! others of the same run; `docs/design-notes.md` keeps the experiments
//! behind them.

use super::temporal::{self, leapfrog, planes, radius, rings, vectors};
use super::{Dialect, Plan, register_words};
use crate::backend::gpu::step;
use crate::backend::step::rows_read;
use crate::codegen::names::slot_name;
use crate::ir::{Access, Dtype, GpuTiling, Stencil, Strategy, plane_sum, untensorable};

/// The most values a single-pass `stream` thread may hold in registers for
/// `auto` to pick it (in 32-bit words; the rest of 255 goes to addresses and
/// in-flight sums, and more cost occupancy).
pub const AUTO_REGISTER_WORDS: usize = 48;

/// `auto`, settled for `st` (see [`resolve`](crate::backend::gpu::plan::resolve)).
pub fn auto(st: &Stencil, d: &Dialect) -> GpuTiling {
    if d.async_copies && auto_rings(st, d) {
        return GpuTiling {
            vector: Some(4),
            ..GpuTiling::model(Strategy::Temporal)
        };
    }
    if let Some(v) = auto_vector(st, d) {
        return GpuTiling {
            vector: Some(v),
            ..GpuTiling::model(Strategy::Temporal)
        };
    }
    if auto_fuses(st) && d.tuned && coefficient_planes(st) {
        return GpuTiling {
            time_block: Some(COEFFICIENT_TIME_BLOCK),
            ..GpuTiling::model(Strategy::Persistent)
        };
    }
    if auto_fuses(st) {
        return GpuTiling::model(if auto_persists(st) {
            Strategy::Persistent
        } else {
            Strategy::Temporal
        });
    }
    let single = single_step(st, d);
    if periodic_rows(st, d) && single.strategy == Strategy::Stream {
        return GpuTiling::model(Strategy::Naive);
    }
    let deep = deep_blocks(st, d, &single);
    if deep != single {
        return deep;
    }
    let naive = single == GpuTiling::model(Strategy::Naive);
    if naive && (scattered_rows(st, d) || planes_in_one_kernel(st, d)) {
        return planes_stream(st);
    }
    single
}

/// `single` ([`single_step`]'s kernel) in blocks marching 64 planes where
/// [`deep_planes`] holds and `single` is [`vector_stream`]'s, as `auto`
/// runs steps that do not fuse and the launches of one step of a fused
/// plan ([`step_plan`](crate::backend::gpu::plan::companions::step_plan));
/// else `single` itself.
pub fn deep_blocks(st: &Stencil, d: &Dialect, single: &GpuTiling) -> GpuTiling {
    if deep_planes(st, d) && *single == vector_stream(st, d) {
        return planes_stream(st);
    }
    single.clone()
}

/// `auto`'s single-step kernel for `st` (see [`resolve`](crate::backend::gpu::plan::resolve)): what it picks
/// where steps do not fuse, and what the fused strategies launch for one
/// step ([`step_plan`](crate::backend::gpu::plan::companions::step_plan)).
pub fn single_step(st: &Stencil, d: &Dialect) -> GpuTiling {
    if d.tensor_cores && auto_tensor(st) {
        let reach = plane_reach(st, &st.statements[0]);
        if super::tensor::reads_one_grid(st) && reach >= TENSOR_MIN_REACH {
            return GpuTiling::model(Strategy::Tensor);
        }
        return planes_stream(st);
    }
    if d.tensor_cores && planes_without_tensor(st) {
        return planes_stream(st);
    }
    let naive = GpuTiling::model(Strategy::Naive);
    if d.tuned && sums_blocks(st) {
        return GpuTiling {
            // 3-D blocks keep `naive`'s thread blocks, which they were measured in.
            block: (st.dims() == 2).then(|| vec![2, BLOCK_ROW_THREADS]),
            coarsen: Some(BLOCK_BYTES / (BLOCK_ROW_CELLS * st.dtype.size())),
            vector: Some(BLOCK_ROW_CELLS),
            ..naive
        };
    }
    if sums_columns(st) {
        return GpuTiling {
            coarsen: Some(COLUMN_CELLS),
            ..naive
        };
    }
    if d.tuned && wide_planes(st) {
        return planes_stream(st);
    }
    if step::fits(st) {
        // Its statements in one kernel, each value read once from memory:
        // the other strategies run a kernel a statement.
        return naive;
    }
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
        // j3d27pt; H100); 2-D j2d9pt and j2d25pt
        // 1.12x to 2.10x (2026-11-25).
        if st.dims() > 1 && st.one_update() {
            return wide_stream(st, d);
        }
        // Kernels of several updates: in 3-D on CUDA, `stream`'s defaults
        // (blocks of [1, 8, 32] marching 64 planes, a cell a thread). The
        // H200 ran random_06 (f64, three updates) in them 1.24x as fast as
        // `naive` (60.3 against 48.6 GCells/s, 512^3, 200 steps, one run
        // of the tuner), as every 3-D step of several updates measured ran
        // faster marching planes ([`scattered_rows`]). In 2-D the tuner's
        // best differed by dtype (random_09 f64: `stream` 1.09x with a cell
        // a thread, 0.88x with 8; random_10 f32 the other way round), and
        // `naive` stays.
        if d.tuned && st.dims() == 3 && !loads_from_l1(st) {
            return GpuTiling::model(Strategy::Stream);
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

/// Cells of the contiguous axis each thread of a `naive` kernel computes
/// (1-D: its `coarsen`; 2-D and 3-D: its `vector`, where it computes no
/// column of the slowest axis): 16 bytes of each grid a thread, one vector
/// where it moves vectors ([`row_vectors`]). With one cell a thread, f32
/// stencils of radius 1 to 4 ran at 55%-60% of the copy bound on the H200,
/// f64 at 81%-87% (2^28 cells; design notes, "The performance corpus"):
/// too few loads in flight to cover the memory's latency; 2-D steps of two
/// updates ran 1.37x-1.52x as fast in vectors (random_03, random_11,
/// random_27, to 90%-100% of the bound; design notes, "Rows of vectors in
/// 2-D").
pub fn row_cells(st: &Stencil) -> usize {
    16 / st.dtype.size()
}

/// Whether a 1-D `naive` thread's `coarsen` cells make whole 16-byte
/// vectors, which a kernel of one update loads and stores as such where
/// they are aligned (design notes, "1-D rows in vectors").
pub fn row_vectors(st: &Stencil, coarsen: usize) -> bool {
    st.dims() == 1 && coarsen % (16 / st.dtype.size()) == 0
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
/// (design notes, `wide-planes`; `planes-stream`).
pub fn wide_planes(st: &Stencil) -> bool {
    let r = temporal::radius(st);
    st.dims() == 3
        && st.dtype == Dtype::F32
        && st.one_update()
        && r[1].max(r[2]) == WIDE_PLANES_REACH
}

/// The in-plane reach of [`wide_planes`]' stencils.
pub const WIDE_PLANES_REACH: usize = 4;

/// Cells of a plane under which [`planes_stream`]'s launcher runs `stream`
/// in 16-byte vectors of blocks of `[1, 2, 64]` threads marching 4 planes
/// ([`small_plan`](crate::backend::gpu::plan::companions::small_plan)). On the H200 (design notes, `tensor-m16`) that kernel ran acoustic25 f64 0.97x-1.01x as fast as the best
/// of [`planes_stream`]'s blocks marching 4, 8, 16 or 64 planes on planes of
/// up to 256 x 256 cells (cubes of 128 to 256, 129 x 131 x 133; `naive` ran
/// 100^3 1.21x faster), while on planes of 416 x 416 cells and more the
/// chunks of 64 ran 1.05x-1.12x `tensor`, which it ran before. On the H100
/// it ran 1.04x-2.33x `tensor` on planes of up to 384 x 384
/// cells, 0.79x-0.96x from 416 x 416 on.
pub const SMALL_PLANES: usize = 400 * 400;

/// `auto`'s single step on CUDA for a stencil `tensor` could compute
/// ([`auto_tensor`]) whose update reads other grids at the cell than
/// the one it sums in-plane (acoustic25 f64: the previous level and the
/// velocity): `stream`'s blocks of `[1, 8, 32]` threads marching 64 planes,
/// each thread 16 bytes of a row. On the H200 they ran acoustic25 f64
/// 1.05x-1.12x as fast as `tensor` on every grid measured of planes of 416 x
/// 416 cells or more (cubes of 416 and 512, 300 x 448 x 448, 128 x 512 x
/// 512, 64 x 994 x 750, the suite's 300 x 994 x 750;
/// design notes, `tensor-m16`); small planes run
/// [`small_plan`](crate::backend::gpu::plan::companions::small_plan)'s kernel ([`SMALL_PLANES`]), the smallest grids `naive`
/// ([`SMALL_STEP_CELLS_MORE_GRIDS`]).
pub fn planes_stream(st: &Stencil) -> GpuTiling {
    GpuTiling {
        vector: Some(16 / st.dtype.size()),
        ..GpuTiling::model(Strategy::Stream)
    }
}

/// Cells per multiprocessor under which `auto`'s single steps run `naive`'s
/// kernel ([`naive_plan`](crate::backend::gpu::plan::companions::naive_plan)): 541k cells on the H100's 132.
pub const SMALL_STEP_CELLS: usize = 4096;

/// [`SMALL_STEP_CELLS`] for [`planes_stream`]'s plan, whose small grids
/// otherwise run `stream` in 16-byte vectors ([`SMALL_PLANES`]): 1.08M cells
/// on the H100. There acoustic25 f64 ran `naive` 1.07x-1.11x faster than
/// that `stream` on 100^3 (1M cells) in three sessions (30-32), and 0.98x as
/// fast on 128^3 (2.1M), when
/// `auto` ran `tensor` on its large planes; on the H200, 1.21x on 100^3 and
/// 0.97x on 128^3.
pub const SMALL_STEP_CELLS_MORE_GRIDS: usize = 8192;

/// Cells per multiprocessor under which `plan`'s single steps run `naive`'s
/// kernel where [`naive_plan`](crate::backend::gpu::plan::companions::naive_plan) has one: [`SMALL_STEP_CELLS_MORE_GRIDS`] for
/// [`planes_stream`]'s plan ([`Plan::vector_planes`]), else
/// [`SMALL_STEP_CELLS`].
pub fn small_step_cells(plan: &Plan) -> usize {
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
/// j3d13pt) and in f64 (1.13x to 1.29x); 2-D j2d9pt and j2d25pt 1.11x to 1.36x (and `naive` 1.12x to 2.10x);
/// the leapfrogs, which read two more grids, wave3d 1.11x (f32) and 1.04x
/// (f64), wave2d f32 1.04x (2026-11-25). Otherwise `stream`'s
/// defaults, chunks of 64 planes or rows, one cell per thread: the windows
/// over the budget measured slower with the vectors (star3d25 f64, 264
/// words: 0.98x-0.99x; acoustic25, 200 and 280 words: 0.79x in f32, 0.81x
/// in f64, on 300 x 994 x 750, where the f32 vectors ran their scalar twin,
/// then of their own blocks and chunks ([`scalar_stream`](crate::backend::gpu::plan::companions::scalar_stream));
/// on 512^3 they ran 1.25x in f32, 0.83x in f64).
/// A 3-D stencil bound by arithmetic, or whose window would spill even one
/// cell per thread, runs `naive` ([`loads_from_l1`]).
pub fn wide_stream(st: &Stencil, d: &Dialect) -> GpuTiling {
    if register_words(st, 4, 1, 16 / st.dtype.size()) <= WIDE_REGISTER_WORDS {
        return vector_stream(st, d);
    }
    if loads_from_l1(st) {
        return GpuTiling::model(Strategy::Naive);
    }
    GpuTiling::model(Strategy::Stream)
}

/// Whether `auto` runs the steps of `st`, where they do not fuse and
/// [`single_step`] is [`vector_stream`]'s blocks of `[1, 2, 64]` threads
/// marching 4 planes, in [`planes_stream`]'s blocks of `[1, 8, 32]` marching
/// 64 instead (the same window of 16-byte vectors): on CUDA, for 3-D
/// stencils that reach [`DEEP_PLANES_REACH`] planes or more along the
/// slowest axis, whose `2 x reach` planes around each chunk of 4 a block
/// reads again. On the H200 (512^3, 200 steps, the two binaries in turn in
/// one lease; design notes, "Blocks marching 64 planes") they ran
/// star3d_r2_periodic 1.14x (f32) and 1.13x (f64), random_08 (f64, reach 3)
/// 1.25x and wave3d_r2 1.01x and 0.95x (f64 at 86% of its bound). At reach
/// 1 they split both ways (random_26 1.13x, random_13 0.92x, smooth3d_t1
/// 0.98x), and keep the blocks marching 4. The fused plans' launches of one
/// step take these blocks too ([`deep_blocks`]): on the H200 (512^3, 100
/// steps, the single-step way timed after the session's trial, the two
/// binaries in turn twice in one call) star3d_r2_periodic's ran 1.14x
/// (f32; its trial then kept single steps, 1.03x its fused launches) and
/// 1.13x (f64), j3d13pt's 1.05x (f32) and 0.97x (f64), whose fused
/// launches run every step there.
pub fn deep_planes(st: &Stencil, d: &Dialect) -> bool {
    d.tuned && st.dims() == 3 && radius(st)[0] >= DEEP_PLANES_REACH
}

/// Whether `auto` runs the single steps of a 2-D stencil with a periodic
/// boundary in `naive`'s rows of 16-byte vectors ([`row_cells`]; the fixed
/// boundary's kernel on the interior and a frame kernel by the sides),
/// where [`single_step`] picks `stream`, on CUDA. On the H200 (16384^2, 100
/// steps, one lease; design notes, "Rows of vectors in 2-D")
/// star2d_r2_periodic ran 1.11x (f32) and 1.08x (f64) as fast as its
/// `stream` blocks of `[1, 64]` threads of vectors, to 90% and 91% of the
/// bound, and random_23 (f64, three grids, reads 4 cells away) 1.18x its
/// blocks of `[1, 256]` marching 64 rows. In 3-D the same rows lost to
/// `stream` on every stencil tried (0.34x-0.98x, 1.00x on random_13): a
/// block keeps nothing between the planes it reads.
pub fn periodic_rows(st: &Stencil, d: &Dialect) -> bool {
    d.tuned && st.dims() == 2 && st.boundary == crate::ir::Boundary::Periodic
}

/// Whether `auto` runs a 3-D step whose statements fit one kernel
/// ([`step::fits`]) as a kernel an update in [`planes_stream`]'s blocks
/// instead, on CUDA: where the rows the one kernel reads
/// ([`rows_read`]: its blocks keep nothing between rows and planes,
/// so each is a line of sectors from L2) outnumber the values a cell the
/// kernels an update move through memory ([`step::kernels_traffic`]:
/// marching planes, each of their reads crosses memory about once). On the
/// H200 (512^3, 200 steps, the binaries in turn in one lease; design notes,
/// "Blocks marching 64 planes") random_05, random_14, random_16 and
/// random_21, whose one kernel reads 2.6, 1.4, 2.0 and 1.9 times as many
/// rows as those values, ran 1.17x, 1.36x, 1.04x and 1.03x as fast as a
/// kernel an update, and flux3d_t3 (0.45: three temporaries, each written
/// and read again) 0.36x in f32 and 0.24x in f64. Where the statements
/// share rows ([`step::shares_rows`]), `stream` computes them in one
/// kernel all the same.
pub fn scattered_rows(st: &Stencil, d: &Dialect) -> bool {
    d.tuned && st.dims() == 3 && step::fits(st) && rows_read(st) > step::kernels_traffic(st)
}

/// Whether `auto` runs a 3-D step that `naive` computes in one kernel
/// ([`step::fits`]) as `stream`'s one kernel in [`planes_stream`]'s blocks,
/// on CUDA: where that plan takes the whole step ([`step::one_kernel`]) and
/// its windows load fewer rows a cell ([`step::stream_rows`]: each row
/// group once a plane as the block marches) than `naive`'s kernel reads
/// ([`rows_read`]: every row of every plane, each a line of sectors
/// from L2). On the H100 (512^3, 100 steps, in turn twice in one lease;
/// design notes, "A step in one `stream` kernel") staggered3d (7 rows
/// against 10) ran 1.08x as fast as `naive`'s one kernel in f64 (to 87% of
/// the bound) and 1.02x in f32 (84%).
pub fn planes_in_one_kernel(st: &Stencil, d: &Dialect) -> bool {
    let takes =
        || super::resolve(&planes_stream(st), st, d).is_ok_and(|plan| step::one_kernel(st, &plan));
    d.tuned && st.dims() == 3 && step::fits(st) && step::stream_rows(st) < rows_read(st) && takes()
}

/// The least reach along the slowest axis for [`deep_planes`].
pub const DEEP_PLANES_REACH: usize = 2;

/// The most 32-bit registers a thread has: a `stream` window of more spills
/// to local memory.
pub const SPILL_WORDS: usize = 255;

/// Flops per byte a step must move above which a stencil waits on
/// arithmetic rather than on memory: between the H200's balance in f64
/// (33 TFlop/s of multiply-adds over 4.25 TB/s, 7.8) and in f32 (60.5
/// TFlop/s, 14.2), over the 3-D stars and the box of radius 1 (3 to 6.6).
pub const ARITHMETIC_INTENSITY: usize = 10;

/// Cells of the slowest axis each thread of `auto`'s `naive` computes
/// where [`sums_columns`] holds: on the H200 (AN5D's boxes of radius 1 to
/// 4, 100 steps; design notes, "Columns of cells"), 8 cells ran faster than
/// 4 and 2 on every box in both precisions, 1.01x-1.34x 4.
pub const COLUMN_CELLS: usize = 8;

/// Reads a cell from which [`sums_columns`] takes a weighted sum in columns
/// at any intensity: the 2-D box of radius 3 in f64 (6 flops a byte) ran
/// 1.33x `auto`'s fused steps before, while on the boxes of 25 and 27 reads
/// (radius 2 in 2-D, 1 in 3-D) the fused steps stayed 1.05x-1.62x faster
/// than the columns, and box3d1r f32's single step of `stream` 1.40x.
pub const COLUMN_READS: usize = 49;

/// Whether `auto`'s single step is `naive` with [`COLUMN_CELLS`] consecutive
/// cells of the slowest axis a thread, each read loaded once for all of
/// them: a 2-D or 3-D stencil of one update that is a weighted sum, of at
/// least [`COLUMN_READS`] reads a cell, or whose flops per byte exceed
/// [`ARITHMETIC_INTENSITY`], or which [`loads_from_l1`] leaves to `naive`.
/// One load a multiply-add from L1 bounds `naive` of a cell a thread there,
/// and `stream`'s windows of such boxes spill. On the H200 (100 steps, two
/// leases) the 3-D boxes of radius 2 to 4 ran 2.4x-3.6x `naive` of a cell a
/// thread, which `auto` ran before (f64 box3d4r 16.55 against 4.64
/// GCells/s), and the 2-D ones of radius 3 and 4 1.11x-2.27x what `auto`
/// ran before (fused steps, or `stream` where the trial chose single
/// steps); where steps fuse, this is the single step the trial times
/// against them.
pub fn sums_columns(st: &Stencil) -> bool {
    let an = crate::analysis::analyse(st);
    let heavy = an.points >= COLUMN_READS
        || an.flops > ARITHMETIC_INTENSITY * an.bytes
        || loads_from_l1(st);
    st.dims() >= 2 && heavy && one_weighted_sum(st)
}

/// Whether `st` is one update that is a weighted sum (reads times constants
/// and parameters), whose shared reads a `naive` thread of several cells
/// loads once for all of them.
fn one_weighted_sum(st: &Stencil) -> bool {
    st.statements.len() == 1 && crate::ir::weighted_sum(&st.statements[0].expr).is_some()
}

/// Reads a cell from which `auto` computes a 2-D weighted sum in `naive`
/// blocks ([`sums_blocks`]): the box of radius 2 (25 reads) ran 1.08x its
/// fused steps in f32 on the H200, which the trial of its fused steps now
/// finds; stars and boxes of fewer reads fuse well past their single step.
pub const BLOCK_READS: usize = 25;

/// Most reads a cell from which `auto` computes a 3-D weighted sum in
/// `naive` blocks ([`sums_blocks`]). On the H100 (AN5D's 3-D boxes, 512^3,
/// 100 steps, the runner before and after twice in one lease; design
/// notes, "Blocks of planes in 3-D") blocks of 8 planes by 2 cells ran the
/// box of radius 2 in f32 (125 reads, 31 flops a byte) 1.47x as fast as
/// its columns; of radius 3 (343 reads) 0.59x, and 0.69x in blocks of 4 x
/// 2; of radius 4 (729) 0.53x and 0.94x.
pub const BLOCK_READS_3D: usize = 125;

/// Bytes of results a thread of `auto`'s `naive` blocks computes
/// ([`sums_blocks`]): rows of [`BLOCK_ROW_CELLS`] cells, 8 of them in f32
/// and 4 in f64. On the H200 (AN5D's 2-D boxes of radius 2 to 4, 100
/// steps, two rounds of one lease; design notes, "Blocks of rows") the
/// blocks of 16 cells ran faster than those of 8 or 32 in f32 but on the
/// box of radius 4 (8 rows of 4 cells 1.10x), and in f64 4 rows of 2 ran
/// the boxes of radius 3 and 4 1.53x as fast as 8 rows of 2 (radius 2:
/// 0.94x, where the fused steps stay ahead of both).
pub const BLOCK_BYTES: usize = 64;

/// Cells of the contiguous axis in each row of `auto`'s `naive` blocks: in
/// f32, 8 rows of 2 ran the boxes of radius 2 and 3 1.09x-1.25x as fast as
/// 8 rows of 4 (whose 32 sums a thread cost occupancy).
pub const BLOCK_ROW_CELLS: usize = 2;

/// Threads along the contiguous axis in a thread block of `auto`'s `naive`
/// blocks (2 rows of them): `[2, 128]` ran the boxes of radius 3 and 4
/// 1.00x-1.04x as fast as `naive`'s default `[8, 32]`, `[4, 64]`
/// 1.00x-1.02x, `[16, 16]` 0.79x-0.96x.
pub const BLOCK_ROW_THREADS: usize = 128;

/// Whether `auto`'s single step is a `naive` thread of a block of
/// [`BLOCK_BYTES`] of results, rows of [`BLOCK_ROW_CELLS`] cells: a 2-D
/// stencil of one update that is a weighted sum of at least [`BLOCK_READS`]
/// reads a cell, in f32, or in f64 where it waits on memory (flops per byte
/// at most [`ARITHMETIC_INTENSITY`]). Each row of the block's window is
/// loaded once, in vectors, for all its rows, where a column of
/// [`COLUMN_CELLS`] loads each read once for its own cells only, and
/// `stream`'s windows of such sums hold more than their registers. On the
/// H200 `auto` ran AN5D's box2d3r 1.29x (f32) and 1.12x (f64) as fast as in
/// columns, and box2d4r f32 1.29x (in thread blocks of `[8, 32]`; in
/// `[2, 128]` at 74.5%, 70.6% and 81.2% of their bounds; design notes,
/// "Blocks of rows"); box2d4r in f64 (10 flops a byte) ran
/// 0.82x in blocks of 4 rows, 0.53x in 8, and keeps the columns.
///
/// In 3-D a block's rows are planes (the slowest axis), in `naive`'s
/// thread blocks: where an f32 sum of at most [`BLOCK_READS_3D`] reads
/// waits on arithmetic and is dense along that axis
/// ([`dense_along`](crate::ir::dense_along): a box, not a star, whose
/// planes share few reads). Blocks of 2 planes or 4 by 16 bytes
/// lost to the columns on every box (0.48x-0.88x, H200); on the H100, 8
/// planes by 2 cells ran the box of radius 2 1.47x its columns, while the
/// boxes of radius 1 (27 reads, 6.8 flops a byte, their single step in
/// blocks 0.78x-0.81x in f32), the box of radius 2 in f64 (0.81x) and a
/// memory-bound sum of 39 reads (flux3d_t2, 0.97x in f32) keep theirs.
pub fn sums_blocks(st: &Stencil) -> bool {
    if !one_weighted_sum(st) {
        return false;
    }
    let an = crate::analysis::analyse(st);
    let bound_by_arithmetic = an.flops > ARITHMETIC_INTENSITY * an.bytes;
    let shape = match st.dims() {
        2 => st.dtype == Dtype::F32 || !bound_by_arithmetic,
        3 => {
            st.dtype == Dtype::F32
                && bound_by_arithmetic
                && an.points <= BLOCK_READS_3D
                && crate::ir::dense_along(&st.statements[0].expr, 0)
        }
        _ => false,
    };
    shape && an.points >= BLOCK_READS
}

/// Whether `auto` leaves a 3-D stencil too wide for the vectors to `naive`
/// rather than `stream`'s defaults: where its flops per byte exceed
/// [`ARITHMETIC_INTENSITY`] (the window saves memory traffic, which such a
/// stencil does not wait on, and costs instructions), or where those
/// defaults (one cell per thread, chunks of
/// [`STREAM_CHUNK`](crate::ir::STREAM_CHUNK) planes) would hold more than
/// [`SPILL_WORDS`]. On the H200 (AN5D's boxes, 512^3, 100 steps; design
/// notes, "The performance corpus") `naive`, whose threads read from L1 and
/// hold nothing, ran the box of radius 2 1.14x (f32, 150 words, 31 flops a
/// byte) and 1.16x (f64, 300 words) as fast as those defaults, and the boxes
/// of radius 3 and 4 9x-21x: their windows spilled. The radius-4 star in
/// f64 (212 words, 2 to 3 flops a byte) keeps the defaults, its measured case.
pub fn loads_from_l1(st: &Stencil) -> bool {
    let an = crate::analysis::analyse(st);
    st.dims() == 3
        && (an.flops > ARITHMETIC_INTENSITY * an.bytes
            || register_words(st, crate::ir::STREAM_CHUNK, 1, 1) > SPILL_WORDS)
}

/// `stream` in 16-byte vectors ([`wide_stream`]'s): blocks of `[1, 64]`
/// (2-D) or `[1, 2, 64]` (3-D) threads, chunks of 4 rows or planes.
pub fn vector_stream(st: &Stencil, d: &Dialect) -> GpuTiling {
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

/// Whether `auto` fuses the steps of `st` (x the best single-step strategy,
/// `stream` with 16-byte vectors or its defaults; H100): 2-D stencils whose steps fuse (f32
/// 1.30x-4.52x, f64 1.13x-3.32x); 3-D stencils of radius 1 (f32 j3d7pt
/// 1.81x, j3d17pt 1.17x, j3d27pt 1.11x, poisson 1.18x; f64 2.13x, 1.33x,
/// 1.36x, 1.37x) and 3-D stars of radius 2 (j3d13pt 1.06x and 1.08x;
/// where [`auto_vector`] gives them vectors, 1.42x and 1.43x), not
/// star3d25, radius 4 (`temporal`, one step: 0.73x in f32, 0.87x in f64;
/// in f32 it fuses in threads of vectors, [`auto_vector`]).
/// Leapfrogs in 2-D (wave2d: f32 3.80x, f64 2.84x) and 3-D leapfrogs of
/// radius 1 (wave3d: f32 1.37x, in one `persistent` launch, f64 1.49x), not
/// wider ones (acoustic25, radius 4: 0.40x with 2 steps in f32).
pub fn auto_fuses(st: &Stencil) -> bool {
    let r = radius(st);
    let within = |most: usize| r.iter().all(|&r| r <= most);
    crate::ir::unfusable(st, "temporal").is_none()
        && match st.dims() {
            2 => true,
            _ if leapfrog(st) => within(1),
            3 => within(1) || within(2) && planes::in_one_plane(st),
            _ => false,
        }
}

/// The vector `auto` gives the threads of a fused 3-D kernel for `st`: 4
/// cells in f32 where the radius along the contiguous axis is a multiple of
/// 4, else 2 cells where it is even, for stars that read only the field
/// they update, where the default tiles fuse at least 2 steps and dialect
/// `d`'s shared memory holds the rings of a lead of [`vectors::MAX_LEAD`].
/// On the H100, against the
/// best kernel without vectors: star3d25 f32 (2 steps) 255.4 GCells/s
/// against `stream`'s 236.0 (1.08x; `temporal` without vectors was 0.74x),
/// j3d13pt f32 (3 steps) 469.5 against `temporal`'s 351.5 (1.34x; 2 steps
/// of vectors: 392.8), j3d13pt f64 (2 steps, 24 rows) 232.0 against 175.8
/// (1.32x). Not star3d25 f64, whose windows leave room for one step only
/// (2 steps in 32 rows spilled: 20.6 GCells/s), nor stars of odd radius
/// along the contiguous axis (j3d7pt: the scalar kernel's columns reuse
/// their rows from registers, and vectors measured 0.77x-0.88x by hand).
pub fn auto_vector(st: &Stencil, d: &Dialect) -> Option<usize> {
    let r = radius(st);
    let v = match (st.dtype, r.get(2).copied().unwrap_or(0)) {
        (_, 0) => return None,
        (Dtype::F32, r) if r % 4 == 0 => 4,
        (_, r) if r % 2 == 0 => 2,
        _ => return None,
    };
    let suited = st.dims() == 3
        && crate::ir::unfusable(st, "temporal").is_none()
        && vectors::unsuited(st).is_none();
    if !suited {
        return None;
    }
    let t = GpuTiling {
        vector: Some(v),
        ..GpuTiling::model(Strategy::Temporal)
    };
    let plan = vectors::defaults(&t, st, d);
    let sh = planes::Planes::new(&plan, st, d.shared_max);
    let fits = plan.time_block >= 2 && sh.lead == vectors::MAX_LEAD.min(sh.r[0] + 1);
    (fits && temporal::check(&plan, st, d).is_ok()).then_some(v)
}

/// Whether `auto` fuses the steps of `st` (where [`auto_fuses`]) in one
/// `persistent` launch rather than `temporal` launches: 3-D leapfrogs in
/// f32 (wave3d: 258.3 against 242.1 GCells/s, 1.07x; 1.06x and
/// 1.05x in two more runs; H100). Not in f64 (wave3d:
/// 127.7 against 138.2), nor on any other suite stencil `auto` fuses, where
/// `persistent` measured 0.70x-0.92x `temporal`.
pub fn auto_persists(st: &Stencil) -> bool {
    st.dims() == 3
        && st.dtype == Dtype::F32
        && leapfrog(st)
        && crate::ir::unfusable(st, "persistent").is_none()
}

/// Whether `auto` fuses the steps of `st` (where [`auto_fuses`]) on CUDA
/// in one `persistent` launch of [`COEFFICIENT_TIME_BLOCK`] steps: a 3-D
/// f64 update, not a leapfrog, that reads [`COEFFICIENT_GRIDS`] grids or
/// more besides the field it steps (coefficients at the cell or around it).
/// Each fused level reads every such grid again around its tile, and
/// `temporal`'s default of 3 steps spends more on them than its extra step
/// saves. On the H200 (512^3, 200 steps; the runner, `auto` before and after
/// in turn in one lease) the variable-coefficient stars of 2, 3 and 4 such
/// grids ran 1.04x, 1.23x and 1.14x as fast as `temporal`'s 3 steps, which
/// `auto` ran before (in the tuner's runs varcoef3d_k4's `temporal` of 2
/// steps ran 1.02x, `persistent` of 3 0.93x). Not in f32, where the
/// sessions' trial keeps single steps against either fused plan, and the
/// `persistent` launches it timed took 1.3x-5.0x as long a step as
/// `temporal`'s.
pub fn coefficient_planes(st: &Stencil) -> bool {
    st.dims() == 3
        && st.dtype == Dtype::F64
        && !leapfrog(st)
        && grids_besides_stepped(st) >= COEFFICIENT_GRIDS
        && crate::ir::unfusable(st, "persistent").is_none()
}

/// The least grids read besides the stepped field for [`coefficient_planes`].
pub const COEFFICIENT_GRIDS: usize = 2;

/// The steps of [`coefficient_planes`]' `persistent` launches.
pub const COEFFICIENT_TIME_BLOCK: usize = 2;

/// The grids that `st`'s first update reads besides the field it steps.
fn grids_besides_stepped(st: &Stencil) -> usize {
    let s = &st.statements[0];
    let mut fields: Vec<usize> = s
        .slots()
        .iter()
        .map(|slot| slot.field)
        .filter(|&f| f != s.target)
        .collect();
    fields.sort_unstable();
    fields.dedup();
    fields.len()
}

/// Whether `auto` takes this kernel for `st` on dialect `d`: CUDA, f32
/// stars of radius 4 or 8 along the fast axes that read other grids at the
/// cell, whose sessions launch it on large planes only
/// (`Gen::rings_preferred`). On the H100, where the session launches it, against the single steps
/// it would run otherwise: acoustic25 f32 (a leapfrog) 0.91x-1.37x on 16
/// grids (0.91x on 300 x 400 x 402 alone; 1.32x on the suite's), and
/// coefstar3d f32 (two input grids) 1.07x-1.28x on 5; the 13 grids of
/// smaller planes measured keep the faster single steps (coefstar3d on
/// 512^3: 171.7 against the ring kernel's 155.1).
pub fn auto_rings(st: &Stencil, d: &Dialect) -> bool {
    let t = GpuTiling {
        vector: Some(rings::CELLS),
        ..GpuTiling::model(Strategy::Temporal)
    };
    rings::suits(st)
        && crate::ir::unfusable(st, "temporal").is_none()
        && rings::check(&rings::defaults(&t, st), st, d).is_ok()
}

/// The least in-plane reach for which `auto` computes a single step on the
/// tensor cores: star3d25 f64 (reach 4) ran at 1.34x the best other single
/// step and acoustic25 f64 at 1.03x; the stars of reach 1 and 2 at
/// 0.43x-0.81x, and they fuse their steps (`temporal`) instead (H100).
pub const AUTO_MIN_REACH: usize = 3;

/// The least in-plane reach for which `auto`'s single step on CUDA is
/// `tensor` rather than [`planes_stream`]'s, for an update that reads no
/// other grid. At reach 3 the H200 ran AN5D's star3d3r (f64, 512^3, 200
/// steps, one run of the tuner) in `tensor` at 121.2 GCells/s, and in
/// [`planes_stream`]'s blocks marching 64 planes at 155.7 (1.28x; 144-159
/// for every `stream` block of one or two cells a thread along z marching
/// 16 planes or more). At reach 4
/// `tensor` stayed the fastest of the tuner's candidates (star3d4r).
pub const TENSOR_MIN_REACH: usize = 4;

/// Whether `tensor` can compute `st`'s one statement, reaching
/// [`AUTO_MIN_REACH`] cells in-plane: then `auto`'s single step on CUDA is
/// `tensor` where the update reads no other grid ([`reads_one_grid`](crate::backend::gpu::plan::tensor::reads_one_grid))
/// and reaches [`TENSOR_MIN_REACH`], else `stream` in 16-byte vectors
/// marching 64 planes ([`planes_stream`]).
pub fn auto_tensor(st: &Stencil) -> bool {
    if untensorable(st, "cuda").is_some() {
        return false;
    }
    sums_wide_planes(st, &st.statements[0])
}

/// Whether statement `s` of `st` is an in-plane sum reaching
/// [`AUTO_MIN_REACH`] cells.
fn sums_wide_planes(st: &Stencil, s: &crate::ir::Statement) -> bool {
    plane_reach(st, s) >= AUTO_MIN_REACH
}

/// The farthest in-plane reach of statement `s` of `st` as an in-plane sum
/// (0 where it is none).
fn plane_reach(st: &Stencil, s: &crate::ir::Statement) -> usize {
    let name = |a: &Access| slot_name(st, a.slot);
    plane_sum(s, &name).map_or(0, |sum| sum.reach().into_iter().max().unwrap_or(0))
}

/// Whether `st` is an f64 3-D stencil of one update whose in-plane sum
/// reaches [`AUTO_MIN_REACH`] cells (in one of its regions), which `tensor`
/// cannot compute for its regions or its boundary: its single step is then
/// [`planes_stream`]'s, as for such a stencil that reads other grids. On the
/// H200 acoustic25 f64 with absorbing layers (a region outside a box) and a
/// reflecting side ran it 1.04x as fast as `stream`'s defaults (300 x 994 x
/// 750, 1000 steps; design notes, "Boundary kinds and regions").
pub fn planes_without_tensor(st: &Stencil) -> bool {
    st.dims() == 3
        && st.dtype == Dtype::F64
        && st.one_update()
        && st.statements.iter().any(|s| sums_wide_planes(st, s))
}

/// The least share, in percent, of its resident blocks' time that
/// `auto`'s `tensor` must spend on cells of the region, where its launcher
/// runs `stream` in 16-byte vectors instead (blocks of `[1, 2, 64]` threads
/// marching 4 planes, which read their neighbours' planes through L2). A
/// `tensor` block computes whole 32 x 32 tiles, some past the region's
/// edge, and reads its window's `2 x depth` planes more than its chunk; on
/// grids of few tiles the chunks that fill the device are short. The share
/// is the region's cells over `1024 x resident blocks x waves x (chunk + 2
/// depth)`. On the H100 star3d25 f64 ran
/// `stream` 1.06x-1.99x faster than `tensor` where the share was 0.13-0.56
/// (cubes of 64 to 176), about as fast at 0.59-0.67 (256 x 144 x 144: 0.99x;
/// 192^3: 1.04x; 160^3: 0.93x), and 0.74x-0.98x as fast from 0.72 on
/// (cubes of 224 to 512, 1024 x 128 x 128, 48 x 512 x 512, 96 x 256 x 256,
/// 512 x 160 x 160).
pub const SMALL_GRID_EFFICIENCY: usize = 62;

#[cfg(test)]
mod tests;
