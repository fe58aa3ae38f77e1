//! The shape of a 3-D fused kernel's planes in shared memory ([`Planes`]),
//! the model's 3-D defaults and the checks of a 3-D fused tiling.

use std::collections::BTreeSet;

use super::{Dialect, Plan, overlap_error, radius};
use crate::ir::{Dtype, GpuTiling, Stencil, Strategy};

/// Most steps the 3-D model fuses: 3 for stars of radius 1, 2 for the
/// others (H100; GCells/s, 2 and 3
/// steps: j3d7pt f32 352 and 494, f64 207 and 258; j3d17pt f32 354 and 327,
/// f64 200 and 150; j3d27pt f32 305 and 273, f64 135 and 144).
pub const MAX_TIME_BLOCK: [usize; 2] = [3, 2];

/// Shared memory the 3-D model lets a block's rings take: two blocks' worth
/// on a multiprocessor of 228 KiB (each block also takes 1 KiB of the system's).
pub const RING_BUDGET: usize = 113 * 1024;

/// Most planes of a level's window for which the loop over the planes is
/// unrolled by them ([`Planes::unrolled`]): radius 1 along the slowest axis.
pub const MAX_UNROLL: usize = 3;

/// Most planes of the window of an f32 `temporal` kernel bounded to
/// [`RESIDENT_THREADS`] for which the loop is unrolled: radius 4 (j3d13pt,
/// 5 planes, 1.20x; star3d25, 9 planes, 1.17x). Not in f64 (by 5 and 9
/// planes: 0.77x and 0.80x, by hand), nor without the bound (star3d25 with
/// 2 steps: 0.89x) or in `persistent` (star3d25: the bound made ptxas
/// spill, 0.71x; H100).
pub const MAX_BOUNDED_UNROLL: usize = 9;

/// Threads per multiprocessor an unrolled f32 kernel keeps resident at
/// least, by its launch bounds (`Gen::launch_bounds`): without them the
/// unrolled loop took registers that cost a block per multiprocessor
/// (j3d7pt, 32 x 32 tiles: 439 GCells/s unbounded, 501 with 768 threads;
/// 64 x 32 tiles: 511 and 545; H100).
pub const RESIDENT_THREADS: usize = 768;

/// Most registers the windows of a thread take for its kernel to be bounded
/// to [`RESIDENT_THREADS`] (3 steps of 4 rows: 36).
pub const BOUNDED_WINDOWS: usize = 48;

/// Most 32-bit registers the model's default tiles let a thread hold from
/// one iteration to the next ([`Planes::held_words`]), in f32 and f64: what
/// the fused plans that measured best hold, varcoef3d_k2 f32 (two
/// coefficient grids, 3 steps of 8 rows: 184 words, 130% of its
/// single step's bound; H100) and `auto`'s varcoef3d_k4 f64 (four, 2 steps of
/// 4 rows: 192 words, which ran 1.14x the 3 steps of 280 on the H200).
/// f32 threads hold twice the cells for the words, each row with its
/// predicates and temporaries: varcoef3d_k4 f32 in 2 steps of 8 rows (192
/// words) spilled 248 bytes and ran 0.50x its 3 steps of 4 rows (140).
/// harmonic3d's tiles (a coefficient grid read at 7 offsets, 3 steps of 8
/// rows: 424 words) took 255 registers and spilled 8 KB a thread (f32: 15
/// GCells/s, 0.08x the single step; H100).
pub const HELD_WORDS: [usize; 2] = [184, 192];

/// Registers a thread of a 3-D planes kernel takes besides those it holds
/// ([`Planes::held_words`]): indices, predicates and the update's
/// temporaries (j3d7pt f64's tiles, 512 threads of at most 128 registers,
/// hold 88 words and took 125).
pub const HELD_MARGIN: usize = 32;

/// Most cells a fused tile's overlap reaches per side (`time_block x
/// radius`): j3d13pt (radius 2) measured 244.8 GCells/s with 2 steps, 130.5
/// with 3 (f32).
pub const MAX_REACH: usize = 4;

/// `[tiling]` of a 3-D `temporal` stencil with the defaults filled in:
/// blocks of 8 rows of threads, 4 rows each, chunks of 128 planes; 64
/// threads a row for stars of radius 1 (tiles of 64 x 32 cells: j3d7pt f32
/// 541 GCells/s, 32 x 32: 494; f64 352 and 258, 3 steps; H100) and of radius 2 (j3d13pt, 2 steps:
/// f32 340.4 against 304.9, f64 170.0 against 167.1) where the
/// dialect's shared memory holds their rings, else 32 (32 x 32 cells; the
/// boxes with 64 x 32: j3d17pt, j3d27pt and poisson f32 0.92x-0.94x), and
/// in f32 the stars of radius 1 in those 64 x 32
/// cells as 4 rows of threads of 8 rows each where the spec sets neither
/// `block` nor `coarsen` (j3d7pt 621.7 against 532.8 GCells/s, f64 340.0
/// against 351.4; H100); not f64
/// stencils that read input grids, whose reads the kernel holds in registers
/// too (wave3d f64, 3 steps: 39.4 with 64 x 32 tiles, 136.2 with 32 x 32);
/// `time_block`: the most steps,
/// up to [`MAX_TIME_BLOCK`], whose overlap reaches at most [`MAX_REACH`]
/// cells, whose tiles store at least half their cells along each fast axis
/// and whose rings fit [`RING_BUDGET`] and the dialect's limit, else 1.
/// Where a thread would then hold more registers than
/// [`Planes::held_limit`] (input grids read at many offsets), default
/// tiles take fewer steps or fewer rows a thread ([`within_held`]). A
/// `time_block` the spec gives widens the default tiles to store at least
/// half their cells, and takes fewer rows a thread only as far as they
/// still do. `temporal` plans of the stencils z sums take by default
/// ([`super::sums::by_default`]: the f32 boxes) have `vector = 2`, two
/// columns a thread, unless the spec sets `vector`.
pub fn defaults(t: &GpuTiling, st: &Stencil, d: &Dialect) -> Plan {
    // `persistent` takes these tiles too, but not z sums.
    let sums = t.strategy == Strategy::Temporal
        && super::sums::suits(st)
        && t.vector.map_or_else(
            || super::sums::by_default(st),
            |v| v == super::sums::COLUMNS,
        );
    if t.vector.is_some_and(|v| v > 1) && !sums {
        return super::vectors::defaults(t, st, d);
    }
    let r = radius(st);
    let one_plane = in_one_plane(st);
    // Stars of radius 1, and of radius at most 2.
    let star = one_plane && r == [1, 1, 1];
    let small_star = one_plane && r.iter().all(|&r| r <= 2);
    // f64 kernels that also hold input reads (loaded an iteration ahead) keep 32 x 32 tiles.
    let wide = small_star
        && d.shared_max >= RING_BUDGET
        && !(st.dtype == Dtype::F64 && super::reads_inputs(st));
    // (j3d13pt f32 in 64 x 4 threads of 8 rows: 243.1 against 340.4.)
    let tall = star && wide && st.dtype == Dtype::F32 && t.block.is_none() && t.coarsen.is_none();
    let block = t
        .block
        .clone()
        .unwrap_or_else(|| vec![1, if tall { 4 } else { 8 }, if wide { 64 } else { 32 }]);
    let mut plan = Plan {
        strategy: Strategy::Temporal,
        chunk: t.chunk.unwrap_or(128),
        coarsen: t.coarsen.unwrap_or(if tall { 8 } else { 4 }),
        vector: if sums { super::sums::COLUMNS } else { 1 },
        time_block: 1,
        occupancy: None,
        chosen: false,
        block,
    };
    let Some(steps) = t.time_block else {
        plan.time_block = most_steps(&plan, st, d);
        if !sums {
            // Threads that would hold more than their limit take fewer steps
            // or fewer rows, whichever way leaves them more of both.
            let rows = t.coarsen.is_none();
            plan = [true, false]
                .map(|steps_first| within_held(plan.clone(), rows, steps_first, st, d))
                .into_iter()
                .max_by_key(|p| (p.time_block * p.coarsen, p.time_block))
                .unwrap_or(plan);
        }
        return plan;
    };
    // A `time_block` the spec gives widens the default tiles to store at least half their cells.
    plan.time_block = steps;
    if t.block.is_none() {
        plan.block[2] = plan.block[2].max((4 * r[2] * steps).div_ceil(32) * 32);
    }
    if t.coarsen.is_none() {
        let least = (4 * r[1] * steps).div_ceil(plan.block[1]).max(1);
        plan.coarsen = plan.coarsen.max(least);
        // Fewer rows where a thread would hold more than its limit, while they store half.
        while !sums && plan.coarsen / 2 >= least && Planes::new(&plan, st, d.shared_max).over_held()
        {
            plan.coarsen /= 2;
        }
    }
    plan
}

/// `plan` with fewer steps, or fewer rows a thread where `rows`, until a
/// thread holds at most [`Planes::held_limit`]: steps first (down to 2)
/// where `steps_first`, else rows first. varcoef3d_k3 f32 (three
/// coefficient grids, 232 words in 3 steps of 8 rows) ran 2 steps of 8
/// rows (160 words) at 181.5 GCells/s, 1.18x its single step, which 3
/// steps of 4 rows did not beat (0.97x); varcoef3d_k4 f32 ran 3 steps of 4
/// rows (140 words) 1.15x its single step, and 2 steps of 8 rows (192)
/// spilled (H100).
fn within_held(mut plan: Plan, rows: bool, steps_first: bool, st: &Stencil, d: &Dialect) -> Plan {
    while Planes::new(&plan, st, d.shared_max).over_held() {
        if steps_first && plan.time_block > 2 || !(rows && plan.coarsen > 1) && plan.time_block > 1
        {
            plan.time_block -= 1;
        } else if rows && plan.coarsen > 1 {
            plan.coarsen /= 2;
            plan.time_block = plan.time_block.min(most_steps(&plan, st, d));
        } else {
            break;
        }
    }
    plan
}

/// The most steps, up to [`MAX_TIME_BLOCK`], whose overlap reaches at most
/// [`MAX_REACH`] cells, whose tiles store at least half their cells along
/// each fast axis and whose rings fit [`RING_BUDGET`] and `d`'s limit, else 1.
fn most_steps(plan: &Plan, st: &Stencil, d: &Dialect) -> usize {
    let star = in_one_plane(st) && radius(st) == [1, 1, 1];
    let most = MAX_TIME_BLOCK[usize::from(!star)];
    let reach = radius(st).iter().copied().max().unwrap_or(1).max(1);
    let budget = RING_BUDGET.min(d.shared_max);
    let fits = |steps: usize| {
        let sh = Planes::new(
            &Plan {
                time_block: steps,
                ..plan.clone()
            },
            st,
            d.shared_max,
        );
        let [y, x] = sh.tile();
        let [sy, sx] = sh.stored();
        steps * reach <= MAX_REACH
            && 2 * sy >= y
            && 2 * sx >= x
            && sh.shared_bytes(st.dtype.size()) <= budget
    };
    (1..=most).rev().find(|&s| fits(s)).unwrap_or(1)
}

/// Whether `plan`'s blocks hold at most 1024 threads (an explicit `block`
/// is checked with the spec; default ones widen with `time_block`), its
/// tiles keep cells to store after recomputing their overlap and its rings
/// fit the shared memory `d` allows a block.
pub fn check(plan: &Plan, st: &Stencil, d: &Dialect) -> Result<(), String> {
    let sums = super::sums_plan(plan, st);
    if plan.vector > 1 && super::rings::suits(st) {
        return super::rings::check(plan, st, d);
    }
    if sums {
        super::sums::check(plan, st, d)?;
    } else if plan.vector > 1 {
        super::vectors::check(plan, st, d)?;
    }
    if plan.threads() > 1024 {
        return Err(format!(
            "`{}` with `time_block = {}` widens the default tiles of `{}` to blocks of {:?} threads, more than the 1024 a GPU block \
             can hold; lower `time_block` or set `block` and `coarsen` in [tiling.{}]",
            plan.strategy.name(),
            plan.time_block,
            st.name,
            plan.block,
            d.name
        ));
    }
    let sh = Planes::new(plan, st, d.shared_max);
    let tile = sh.tile();
    // A thread of vectors owns one row: only `block` adds rows.
    let rows = if plan.vector > 1 && !sums {
        "block"
    } else {
        "coarsen` or `block"
    };
    for (axis, (cells, stored), key) in [
        (1, (tile[0], sh.stored()[0]), rows),
        (2, (tile[1], sh.stored()[1]), "block"),
    ] {
        if stored == 0 {
            return Err(overlap_error(
                plan, st, axis, sh.r[axis], cells, key, d.name,
            ));
        }
    }
    let bytes = sh.shared_bytes(st.dtype.size());
    if bytes > d.shared_max {
        return Err(format!(
            "`{}` with `time_block = {}` keeps {} KiB of planes in shared memory per block for `{}`, more than the {} KiB {} allows; \
             lower `time_block`, `coarsen` or `block` in [tiling.{}]",
            plan.strategy.name(),
            sh.t,
            bytes.div_ceil(1024),
            st.name,
            d.shared_max / 1024,
            d.title,
            d.name
        ));
    }
    Ok(())
}

/// The shape of a shared-memory `temporal` kernel.
#[derive(Clone)]
pub struct Planes {
    /// Fused steps.
    pub t: usize,
    /// Radius of one step per axis.
    pub r: Vec<usize>,
    /// Threads along the contiguous axis and along the middle one.
    pub bx: usize,
    pub by: usize,
    /// Rows of the middle axis per thread.
    pub c: usize,
    /// Cells of the contiguous axis per thread, one vector (1: one cell;
    /// see [`super::vectors`]).
    pub v: usize,
    /// Iterations between a ring plane's publication and its read in a
    /// kernel of vectors: one barrier serves that many planes.
    pub lead: usize,
    /// Offsets along the slowest axis at which a level reads in-plane
    /// neighbours (from shared memory; its own column comes from registers).
    pub reads: BTreeSet<i64>,
    /// Whether cells are f64.
    pub f64: bool,
    /// Whether the kernel is `persistent`'s.
    pub persistent: bool,
    /// Whether the kernel fuses in z sums ([`super::sums`]): two ring
    /// slots a level, rows of `vector` halves.
    pub sums: bool,
    /// Reads of input grids each level loads an iteration ahead
    /// ([`super::input_reads`], a leapfrog's previous level aside).
    pub inputs: usize,
    /// Whether the first level also loads a leapfrog's previous level.
    pub prev: bool,
    /// Whether the grid is periodic: every cell is updated, and the loads
    /// wrap their row, column and plane onto the grid ([`Self::clamped`]'s
    /// form, wrapped).
    pub wrap: bool,
}

/// Whether each step of `st` reads in-plane neighbours in one plane (a star).
pub fn in_one_plane(st: &Stencil) -> bool {
    in_plane_reads(st).len() <= 1
}

/// The offsets along the slowest axis at which a step of `st` reads
/// in-plane neighbours of the field it updates.
pub fn in_plane_reads(st: &Stencil) -> BTreeSet<i64> {
    let s = &st.statements[0];
    let mut planes = BTreeSet::new();
    s.expr.for_each_read(&mut |a| {
        if a.slot.field == s.target && (a.offset[1], a.offset[2]) != (0, 0) {
            planes.insert(a.offset[0]);
        }
    });
    planes
}

impl Planes {
    /// The shape of `plan`'s kernel for `st`, whose rings may take
    /// `shared_max` bytes (which bounds a kernel of vectors' lead).
    pub fn new(plan: &Plan, st: &Stencil, shared_max: usize) -> Planes {
        let s = &st.statements[0];
        let reads = super::input_reads(s);
        let prev = reads.iter().any(|a| super::reads_own_prev(st, plan, s, a));
        let mut sh = Planes {
            t: plan.time_block,
            r: radius(st),
            bx: plan.block[2],
            by: plan.block[1],
            c: plan.coarsen,
            v: plan.vector,
            lead: 1,
            reads: in_plane_reads(st),
            f64: st.dtype == Dtype::F64,
            persistent: plan.strategy == Strategy::Persistent,
            sums: super::sums_plan(plan, st),
            inputs: reads.len() - usize::from(prev),
            prev,
            wrap: st.boundary == crate::ir::Boundary::Periodic,
        };
        if sh.v > 1 && !sh.sums {
            let size = st.dtype.size();
            sh.lead = (1..=super::vectors::MAX_LEAD.min(sh.r[0] + 1))
                .rev()
                .find(|&lead| {
                    let bytes = Planes { lead, ..sh.clone() }.shared_bytes(size);
                    bytes <= shared_max
                })
                .unwrap_or(1);
        }
        sh
    }

    /// Planes each level works behind the one below: its reach along the slowest axis, plus one (the skew).
    pub fn lag(&self) -> usize {
        self.r[0] + 1
    }

    /// The lowest and highest offsets along the slowest axis at which a level reads in-plane neighbours.
    pub fn span(&self) -> (i64, i64) {
        let lo = self.reads.first().copied().unwrap_or(0);
        (lo, self.reads.last().copied().unwrap_or(lo))
    }

    /// Planes in each level's ring: those the level above reads in one
    /// iteration, and the one published for the next; in a kernel of
    /// vectors, twice its lead (a plane is read `lead` iterations after its
    /// publication and overwritten `lead` iterations after that).
    pub fn slots(&self) -> usize {
        if self.sums {
            return 2;
        }
        if self.v > 1 {
            return 2 * self.lead;
        }
        let (lo, hi) = self.span();
        (hi - lo + 2) as usize
    }

    /// The tile's cells along the middle and the contiguous axis.
    pub fn tile(&self) -> [usize; 2] {
        [self.by * self.c, self.bx * self.v]
    }

    /// Cells the tile stores along the middle and the contiguous axis (0 where the overlap takes them all).
    pub fn stored(&self) -> [usize; 2] {
        let [y, x] = self.tile();
        let margin = |a: usize| 2 * self.r[a] * self.t;
        [y.saturating_sub(margin(1)), x.saturating_sub(margin(2))]
    }

    /// A ring plane's rows and columns: the tile with a pad of the radius on
    /// each side (zero; read only by recomputed cells).
    pub fn padded(&self) -> [usize; 2] {
        let [y, x] = self.tile();
        if self.sums {
            // Each of a row's `v` halves padded on both sides.
            return [y + 2, (self.bx + 2) * self.v];
        }
        [y + 2 * self.r[1], x + 2 * self.r[2]]
    }

    /// Bytes of shared memory a block uses: a ring for every level the next one reads (all but the last).
    pub fn shared_bytes(&self, size: usize) -> usize {
        let [y, x] = self.padded();
        self.t * self.slots() * y * x * size
    }

    /// Planes of each level's window: the reach along the slowest axis on both sides and the plane between.
    pub fn window(&self) -> usize {
        2 * self.r[0] + 1
    }

    /// Whether the loop over the planes is unrolled by the window's planes
    /// (up to [`MAX_UNROLL`], or [`MAX_BOUNDED_UNROLL`] in an f32 `temporal`
    /// kernel whose windows are [`Self::bounded`]), so that the windows move on without moving
    /// registers: j3d7pt measured 1.08x (f32, 32 x 32 tiles, with
    /// [`RESIDENT_THREADS`]) and 1.26x (f64, 64 x 32 tiles) the loop without
    /// (H100).
    pub fn unrolled(&self) -> bool {
        let bounded_f32 = !self.f64 && !self.persistent && self.bounded();
        self.window() <= MAX_UNROLL || bounded_f32 && self.window() <= MAX_BOUNDED_UNROLL
    }

    /// Whether the windows of a thread and its input reads
    /// ([`Self::input_cells`]) take at most [`BOUNDED_WINDOWS`] registers.
    pub fn bounded(&self) -> bool {
        self.t * self.window() * self.c + self.input_cells() <= BOUNDED_WINDOWS
    }

    /// Cells of input grids a thread holds from one iteration to the next:
    /// each read of each level's rows, the one in use and the one loaded
    /// for the next iteration (a leapfrog's previous level: the first
    /// level's only).
    pub fn input_cells(&self) -> usize {
        2 * self.c * (self.t * self.inputs + usize::from(self.prev))
    }

    /// The most registers a thread may hold from one iteration to the next:
    /// [`HELD_WORDS`], or fewer where the register file leaves each of the
    /// block's threads less than [`HELD_MARGIN`] more.
    pub fn held_limit(&self) -> usize {
        let per_thread = (super::vectors::REGISTER_FILE / (self.bx * self.by)).min(255);
        HELD_WORDS[usize::from(self.f64)].min(per_thread.saturating_sub(HELD_MARGIN))
    }

    /// Whether a thread would hold more than [`Self::held_limit`].
    pub fn over_held(&self) -> bool {
        self.held_words() > self.held_limit()
    }

    /// 32-bit registers a thread of a kernel of one cell a row holds from
    /// one iteration to the next: each level's window, the plane ahead and
    /// the one taken from it, and [`Self::input_cells`].
    pub fn held_words(&self) -> usize {
        let cells = self.t * self.window() * self.c + 2 * self.c + self.input_cells();
        cells * if self.f64 { 2 } else { 1 }
    }

    /// Whether the loads of level 0 clamp their row, column and plane to the
    /// grid instead of taking the predicate "on the grid": cells off the
    /// grid are read only by cells outside the region, which keep their
    /// value, so the nearest cell on it will do. Where a step reads in-plane
    /// neighbours in several planes (`temporal`: j3d17pt, j3d27pt, poisson
    /// 1.00x-1.10x in f32 and f64; `persistent`: 1.01x-1.12x), and in
    /// `temporal` for f64 stars of radius 1 (j3d7pt 1.12x, wave3d 1.01x;
    /// `persistent`: 0.77x and 1.00x); not the other stars (j3d7pt f32
    /// 0.84x, j3d13pt f32 0.92x, f64 0.75x in an A/B harness; H100). On a
    /// periodic grid ([`Self::wrap`]) every kernel takes this form, its
    /// loads wrapped instead of clamped.
    pub fn clamped(&self) -> bool {
        let f64_star1 = self.f64 && self.r.iter().all(|&r| r == 1);
        self.wrap || self.reads.len() > 1 || f64_star1 && !self.persistent
    }
}
