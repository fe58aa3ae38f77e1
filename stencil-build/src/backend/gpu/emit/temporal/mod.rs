//! `temporal`: `time_block` steps fused per launch, over overlapped tiles.
//! 3-D stencils keep the planes of each step in shared memory ([`planes`]);
//! this module generates the 2-D kernels and holds the model.
//!
//! In 2-D each warp owns a tile: its lanes hold `vector` cells along the
//! contiguous axis, and it marches through `chunk` rows of the slowest
//! axis. For every fused step (a *level*) each lane keeps a
//! window of the planes the next level reads, in registers. Neighbours come
//! from the lane's own registers or from other lanes by warp shuffles: no
//! shared memory and no barrier.
//!
//! Tiles overlap: the outer `time_block x radius` cells on each side of a
//! tile are recomputed from the neighbouring tiles' inputs and not stored,
//! since after `s` levels only cells at least `s x radius` from the tile's
//! edges hold the right values. Along the slowest axis a block starts
//! `time_block x radius` planes before its chunk and ends as far after it.
//!
//! In f32 level `s` computes from what level `s - 1` finished in the same
//! iteration (a chain). In f64 ([`skewed`]) it works one plane further
//! behind, from what level `s - 1` finished in the previous iteration, so the
//! levels of one iteration are independent: instruction-level parallelism
//! for the longer f64 latency, at a plane more of registers per level. Cells outside the statement's region (the fixed
//! frame, and cells off the grid) keep their value at every level.
//!
//! One kernel serves every number of steps up to `time_block`: levels past
//! the launch's `levels` keep their value, so the steps left over after the
//! last whole time block run as one launch of the same kernel (but one step,
//! which runs the single-step kernel beside it: [`super::step_plan`]).
//!
//! A leapfrog (a field of two time levels, read at its previous level only
//! at the cell itself) fuses the same way: level `s` reads level `s - 2` at
//! its own cell, from the oldest row of that level's window (chained) or
//! from the row that last left it (`old`, skewed and 3-D), and the first
//! level that steps reads the launch's previous level from global memory.
//! The levels that keep their value are then the first ones, and the
//! launch writes its last two levels: `out`, and `out_prev`, the next
//! launch's previous level (a fourth buffer on the device). A launch of one
//! step writes only `out_prev`'s buffer, the next launch's current level.

mod planes;
pub(super) mod rings;
pub(super) mod sums;
mod vectors;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};

use super::{Gen, shifted};
use crate::backend::Writer;
use crate::backend::gpu::plan::temporal::{
    LANES, MAX_UNROLLED_POINTS, radius, reads_inputs, skewed, splits,
};
use crate::codegen::index::offset_index;
use crate::ir::{Access, Slot, Strategy, Version};

/// The names a 2-D `temporal` kernel gives its loops and arrays, and their shapes.
struct Shape {
    /// Fused steps.
    t: usize,
    /// Radius of one step per axis.
    r: [usize; 2],
    /// Whether each level works one row behind what the level below
    /// finished in the previous iteration (independent levels, a row more
    /// of registers per level) rather than behind what it just finished.
    skew: bool,
    /// Rows back from the loaded one per level: the radius, one more with `skew`.
    lag: usize,
    /// Cells per lane.
    v: usize,
    /// Whether tiles inside the region run a copy without checks (`EDGE`).
    split: bool,
}

impl Shape {
    /// Window rows per level.
    fn planes(&self) -> usize {
        2 * self.r[0] + 1
    }

    /// `condition`, which a warp tile function generic over `EDGE` checks only with `EDGE`.
    fn checked(&self, condition: &str) -> String {
        if self.split {
            format!("!EDGE || ({condition})")
        } else {
            condition.to_string()
        }
    }

    /// Cells recomputed on each side of a warp tile.
    fn margin(&self) -> usize {
        self.r[1] * self.t
    }

    /// Cells a warp tile stores: its lanes' cells less the overlap on each side.
    fn stored(&self) -> usize {
        LANES * self.v - 2 * self.margin()
    }

    /// The unrolled loop over a lane's cells of a row (`k`), around what
    /// `body` writes.
    fn cells(&self, w: &mut Writer, body: impl FnOnce(&mut Writer) -> fmt::Result) -> fmt::Result {
        w.pragma("unroll")?;
        w.block(format_args!("for (int k = 0; k < {}; ++k)", self.v), body)
    }
}

/// The functions that give a 3-D fused kernel the thread's coordinates for
/// the rings' addresses. On a GPU they are opaque to the compiler: nvcc 13.0
/// merged `threadIdx.x` with a grid index it advances by a plane each
/// iteration and kept using the register for the rings, which wrote past
/// them (`compute-sanitizer`: invalid shared writes on the H100, with
/// unrolled loops and with 8 rows a thread over 4 steps). `axes`: those of
/// the block that the file's kernels read.
pub fn opaque_thread_helpers(w: &mut Writer, axes: &[&str]) -> fmt::Result {
    for axis in axes {
        writeln!(w)?;
        writeln!(
            w,
            "/* threadIdx.{axis}, which the compiler cannot merge with other indices. */"
        )?;
        let head = format!("static __device__ __forceinline__ unsigned stencil_thread_{axis}()");
        w.definition(head, |w| {
            w.directive("#if defined(__CUDA_ARCH__)")?;
            writeln!(w, "unsigned v;")?;
            writeln!(
                w,
                "asm volatile(\"mov.u32 %0, %%tid.{axis};\" : \"=r\"(v));"
            )?;
            writeln!(w, "return v;")?;
            w.directive("#else")?;
            writeln!(w, "return threadIdx.{axis};")?;
            w.directive("#endif")
        })?;
    }
    Ok(())
}

/// Moves a thread's window of level `level` on by one plane (a row in 2-D): over its
/// `cells` cells (loop variable `var`), the oldest of the window's `planes`
/// drops out (into `old`, with `keep`) and `incoming` comes in.
fn shift_window(
    w: &mut Writer,
    level: &str,
    incoming: &str,
    planes: usize,
    cells: usize,
    var: &str,
    keep: bool,
) -> fmt::Result {
    let last = planes - 1;
    w.pragma("unroll")?;
    w.block(
        format_args!("for (int {var} = 0; {var} < {cells}; ++{var})"),
        |w| {
            if keep {
                writeln!(w, "old[{level}][{var}] = win[{level}][0][{var}];")?;
            }
            for m in 0..last {
                writeln!(
                    w,
                    "win[{level}][{m}][{var}] = win[{level}][{}][{var}];",
                    m + 1
                )?;
            }
            writeln!(w, "win[{level}][{last}][{var}] = {incoming}[{var}];")?;
            Ok(())
        },
    )?;
    Ok(())
}

/// The flat grid index of a lane's cell `k` in row `row`.
fn index(row: &str) -> String {
    format!("{row} * s0 + i1 + k")
}

impl Gen<'_> {
    fn shape(&self) -> Shape {
        let r = radius(self.st);
        Shape {
            t: self.plan.time_block,
            skew: skewed(self.st),
            lag: r[0] + usize::from(skewed(self.st)),
            r: [r[0], r[1]],
            v: self.plan.vector,
            split: splits(self.st),
        }
    }

    /// The index type in a fused kernel's steps: the warp tile function's
    /// `I` in 2-D, the kernel's own in 3-D.
    fn body_index(&self) -> &'static str {
        if self.dims() == 2 { "I" } else { self.index() }
    }

    /// The slot a `temporal` kernel streams: the updated field at the start of the step.
    pub(super) fn streamed(&self) -> Slot {
        Slot {
            field: self.s.target,
            version: Version::Start,
        }
    }

    /// The previous level of the field the kernel steps (a leapfrog's).
    pub(super) fn own_prev(&self) -> Slot {
        Slot {
            field: self.s.target,
            version: Version::Prev,
        }
    }

    /// The body of a `temporal` kernel (see the module documentation): in
    /// 2-D, the warp's tile and the block's chunk, handed to the warp tile
    /// function ([`Self::warp_tile_function`]).
    pub(super) fn temporal(&self, w: &mut Writer) -> fmt::Result {
        if self.vector_columns() {
            return self.vectors(w);
        }
        if self.sums() {
            return self.sums_kernel(w);
        }
        if self.dims() == 3 {
            return self.planes(w);
        }
        let sh = self.shape();
        let (lo, hi) = self.bounds(1);
        let margin = sh.margin();
        let ix = self.index();
        writeln!(
            w,
            "/* This warp's tile: {LANES} lanes of {} cells along `{}`; the outer {margin} on each side are recomputed, not stored. */",
            sh.v, self.st.axes[1],
        )?;
        writeln!(
            w,
            "const {ix} tile = (({ix}){} * {} + threadIdx.x / {LANES}) * {};",
            self.block_coordinate("x"),
            self.plan.threads() / LANES,
            sh.stored()
        )?;
        let leave = if self.plan.strategy == Strategy::Persistent {
            "continue;"
        } else {
            "return;"
        };
        w.guarded(format_args!("if ({lo} + tile >= {hi})"), leave)?;
        self.chunk_bounds(w)?;
        let call = |edge: &str| {
            format!(
                "{}_tile<{ix}{edge}>({}, levels, tile, z0, z1);",
                self.sym,
                self.arguments()
            )
        };
        if !sh.split {
            return writeln!(w, "{}", call(""));
        }
        writeln!(
            w,
            "/* A tile that loads and computes only rows and columns inside the region, over all {} steps, runs without checks. */",
            sh.t
        )?;
        w.guarded(
            format_args!("if ({})", self.inside(&sh).join(" && ")),
            format_args!("{}", call(", false")),
        )?;
        w.guarded("else", format_args!("{}", call(", true")))?;
        Ok(())
    }

    /// What makes a 2-D tile `inside`: a whole time block, every row it
    /// computes in the region and every row it loads on the grid, every
    /// column of the warp in the region.
    fn inside(&self, sh: &Shape) -> Vec<String> {
        let (lo0, hi0) = self.bounds(0);
        let (lo1, hi1) = self.bounds(1);
        let (t, r0, lag, margin) = (sh.t, sh.r[0], sh.lag, sh.margin());
        vec![
            format!("levels == {t}"),
            format!("z0 - {} >= {lo0}", t * (r0 + lag)),
            format!("z1 + {} <= {hi0}", (t - 1) * lag),
            format!("z1 + {} <= n0", t * lag),
            format!("tile >= {margin}"),
            format!("{lo1} + tile + {} <= {hi1}", LANES * sh.v - margin),
        ]
    }

    /// The function a 2-D fused kernel runs each warp tile with, over the
    /// chunk `z0..z1` (see the module documentation): generic over the
    /// index type `I` and, where the model [`splits`] tiles, over `EDGE`,
    /// whether it checks where rows and columns lie and how many steps the
    /// launch runs (see [`Self::inside`]).
    pub(super) fn warp_tile_function(&self, w: &mut Writer) -> fmt::Result {
        let sh = self.shape();
        let t = self.st.dtype.c();
        let (r0, lag) = (sh.r[0], sh.lag);
        let mut parameters = self.tile_parameters();
        parameters.extend([
            "const int levels".to_string(),
            "const I tile".into(),
            "const I z0".into(),
            "const I z1".into(),
        ]);
        self.literal_table(w)?;
        writeln!(
            w,
            "/* One warp tile of {} fused steps over rows z0..z1, `tile` cells along `{}` from the region's start. */",
            sh.t, self.st.axes[1]
        )?;
        if sh.split {
            writeln!(
                w,
                "/* Without EDGE its rows and columns all lie inside the region and `levels` is the time block: nothing is checked. */"
            )?;
            writeln!(w, "template <typename I, bool EDGE>")?;
        } else {
            writeln!(w, "template <typename I>")?;
        }
        let head = format!(
            "static __device__ __forceinline__ void {}_tile({})",
            self.sym,
            parameters.join(", ")
        );
        w.definition(head, |w| {
            writeln!(w, "const I s0 = n1;")?;
            self.literal_alias(w)?;
            writeln!(w, "const int lane = threadIdx.x % {LANES};")?;
            writeln!(
                w,
                "const I i1 = {} + tile - {} + lane * {};",
                self.bounds(1).0,
                sh.margin(),
                sh.v
            )?;
            self.masks(w, &sh)?;
            writeln!(
                w,
                "/* win[s][m]: level s (s steps after the launch's grid) at row p - 1 - {lag} * s - {} + m, at the start of iteration p. */",
                2 * r0
            )?;
            writeln!(w, "{t} win[{}][{}][{}] = {{}};", sh.t, sh.planes(), sh.v)?;
            self.declare_old(w, sh.skew, sh.v)?;
            if let Some(count) = self.row_unroll(&sh) {
                writeln!(
                    w,
                    "/* Unrolled by the window's rows, so that the windows move on by renaming registers. */"
                )?;
                w.pragma(&format!("unroll {count}"))?;
            }
            let head = format!("for (I p = z0 - {}; p < z1 + {}; ++p)", sh.t * r0,
                sh.t * lag);
            w.block(head, |w| {
                self.load_level0(w, &sh)?;
                if !sh.skew {
                    writeln!(w, "/* Level 0's window moves on to row p. */")?;
                    self.move_window(w, &sh, "0", "plane")?;
                }
                self.levels(w, &sh)?;
                if sh.skew {
                    writeln!(w, "/* Level 0's window moves on to row p. */")?;
                    self.move_window(w, &sh, "0", "plane")?;
                }
                Ok(())
            })?;
            Ok(())
        })?;
        Ok(())
    }

    /// How a 2-D `temporal` warp tile function unrolls its loop over the
    /// rows (the argument of `#pragma unroll`; see [`MAX_UNROLLED_POINTS`]):
    /// by the window's rows where its stencil reads at most that many cells
    /// of the field it steps; a leapfrog only in the copy without checks
    /// (`EDGE`, f32), since unrolling both took wave2d f32 from 157 to 201
    /// registers, 2 blocks a multiprocessor instead of 3 (0.78x-0.91x), and
    /// f64 leapfrogs (no such copy) measured 0.83x-0.91x. `None`: not
    /// unrolled; nor in `persistent`, where it ran 0.92x-1.12x in f32 and,
    /// in f64, lost to the literals and selection without it (j2d9pt
    /// 0.77x-0.91x with both; BENCHMARKS.md, session 28), or HIP (hipcc,
    /// clang, leaves a loop of shuffles as it is and warns).
    fn row_unroll(&self, sh: &Shape) -> Option<String> {
        let rows = sh.planes();
        let suited = self.d.tuned
            && self.plan.strategy == Strategy::Temporal
            && self.reads(self.streamed()).len() <= MAX_UNROLLED_POINTS;
        match (suited, self.leapfrog(), sh.split) {
            (false, _, _) | (true, true, false) => None,
            (true, false, _) => Some(rows.to_string()),
            (true, true, true) => Some(format!("(EDGE ? 1 : {rows})")),
        }
    }

    /// Whether a 2-D fused level computes its update at every cell and
    /// selects it (no branch): in kernels without a copy without checks
    /// (f64, [`splits`]) where every read comes from the windows (not a
    /// leapfrog's previous level or an input grid, read from global
    /// memory). With the literals in constant memory, `temporal` ran j2d5pt
    /// f64 1.14x-1.33x, j2d9pt-gol f64 1.36x-1.55x, j2d25pt f64 1.25x-1.44x
    /// (H100, BENCHMARKS.md, session 27), `persistent` j2d5pt f64
    /// 1.39x-1.58x, j2d9pt-gol 1.16x-1.40x, j2d25pt 1.09x-1.30x and j2d9pt
    /// 0.94x-1.35x (session 28). The f32 kernels' checked copies lost with
    /// it (j2d5pt 0.60x-0.86x); HIP was not measured.
    fn selects_levels(&self) -> bool {
        self.d.tuned && self.plan.strategy.fuses_steps() && !splits(self.st) && !self.reads_inputs()
    }

    /// The warp tile function's grids and parameters: the kernel's, with
    /// extents of type `I`; in a `persistent` kernel without `__restrict__`,
    /// since its sweeps read what earlier sweeps of the same launch wrote.
    fn tile_parameters(&self) -> Vec<String> {
        let qualifier = if self.plan.strategy == Strategy::Persistent {
            ""
        } else {
            "__restrict__"
        };
        self.typed_extents(self.parameters(qualifier, true), "I")
    }

    /// Per cell of the lane: on the grid (`grid_x`: loaded), in the
    /// statement's region (`in_x`: updated) and in the tile's own part
    /// (`own_x`: stored).
    fn masks(&self, w: &mut Writer, sh: &Shape) -> fmt::Result {
        let (lo, hi) = self.bounds(1);
        let margin = sh.margin();
        let n = sh.v;
        writeln!(w, "bool grid_x[{n}], in_x[{n}], own_x[{n}];")?;
        sh.cells(w, |w| {
            writeln!(w, "const I c = i1 + k;")?;
            writeln!(w, "grid_x[k] = {};", sh.checked("c >= 0 && c < n1"))?;
            writeln!(
                w,
                "in_x[k] = {};",
                sh.checked(&format!("c >= {lo} && c < {hi}"))
            )?;
            writeln!(
                w,
                "own_x[k] = in_x[k] && lane * {n} + k >= {margin} && lane * {n} + k < {};",
                LANES * n - margin
            )?;
            Ok(())
        })?;
        Ok(())
    }

    /// `plane`: row `p` of the launch's grid (level 0), where it is on the grid.
    fn load_level0(&self, w: &mut Writer, sh: &Shape) -> fmt::Result {
        let name = crate::codegen::names::slot_name(self.st, self.streamed());
        writeln!(
            w,
            "/* Level 0: row p of the grid, zero off the grid (never read by a stored cell). */"
        )?;
        writeln!(w, "{} plane[{}];", self.st.dtype.c(), sh.v)?;
        writeln!(
            w,
            "const bool on_grid = {};",
            sh.checked("p >= 0 && p < n0")
        )?;
        sh.cells(w, |w| {
            writeln!(
                w,
                "plane[k] = on_grid && grid_x[k] ? {name}[{}] : 0;",
                index("p")
            )?;
            Ok(())
        })?;
        Ok(())
    }

    /// Every level's next row: the last level's is stored, the others move
    /// their window on. Chained levels go up from level 1, each reading the
    /// window the level below has just moved; skewed ones go from the last
    /// down, so that each window moves only after the level above has read it.
    fn levels(&self, w: &mut Writer, sh: &Shape) -> fmt::Result {
        let t = self.st.dtype.c();
        let head = if sh.skew {
            writeln!(
                w,
                "/* Level s at row q = p - {} * s, from level s - 1's window: independent of the other levels of this iteration. */",
                sh.lag
            )?;
            w.pragma("unroll")?;
            format!("for (int s = {}; s >= 1; --s)", sh.t)
        } else {
            writeln!(
                w,
                "/* Level s at row q = p - {} * s, from level s - 1's window as it just moved. */",
                sh.lag
            )?;
            w.pragma("unroll")?;
            format!("for (int s = 1; s <= {}; ++s)", sh.t)
        };
        w.block(head, |w| {
            writeln!(w, "const I q = p - {} * s;", sh.lag)?;
            let (lo0, hi0) = self.bounds(0);
            writeln!(
                w,
                "const bool step = {};",
                sh.checked(&format!("{} && q >= {lo0} && q < {hi0}", self.real_level()))
            )?;
            for (&m, cols) in &self.neighbourhoods(sh) {
                self.neighbourhood(w, sh, m, cols, t)?;
            }
            writeln!(w, "{t} next[{}];", sh.v)?;
            sh.cells(w, |w| {
                self.level_cell(
                    w,
                    &format!("win[s - 1][{}][k]", sh.r[0]),
                    "step && in_x[k]",
                    Some(&index("q")),
                    &|a: &Access| self.level_read(a, sh),
                    self.selects_levels(),
                )?;
                writeln!(w, "next[k] = v;")?;
                Ok(())
            })?;
            w.if_else(
                format_args!("if (s == {})", sh.t),
                |w| self.store_level(w, sh),
                |w| self.move_window(w, sh, "s", "next"),
            )
        })
    }

    /// `v`: a cell of a level, `own` (the cell one level down) where it is
    /// not `inside` the updated part, else the update with reads spelled by
    /// `read` (inputs from global memory at the cell's grid index `index`,
    /// where given). With `select` (which the caller asks for only where no
    /// read can leave the grid) the update is computed everywhere and
    /// selected: no branch.
    fn level_cell(
        &self,
        w: &mut Writer,
        own: &str,
        inside: &str,
        index: Option<&str>,
        read: &dyn Fn(&Access) -> String,
        select: bool,
    ) -> fmt::Result {
        let t = self.st.dtype.c();
        if select {
            writeln!(w, "const {t} u = {};", self.value(read))?;
            writeln!(w, "const {t} v = {inside} ? u : {own};")?;
            return Ok(());
        }
        writeln!(w, "{t} v = {own};")?;
        w.block(format_args!("if ({inside})"), |w| {
            if let Some(index) = index.filter(|_| self.reads_inputs()) {
                writeln!(w, "const {} c = {index};", self.body_index())?;
            }
            writeln!(w, "v = {};", self.value(read))?;
            Ok(())
        })?;
        Ok(())
    }

    /// A read of an input grid (one the kernel does not stream), from global
    /// memory at the cell's index `c`; `None` for the streamed grid.
    fn input_read(&self, a: &Access) -> Option<String> {
        (a.slot != self.streamed()).then(|| {
            let buf = crate::codegen::names::slot_name(self.st, a.slot);
            format!("{buf}[{}]", offset_index(&a.offset))
        })
    }

    /// Whether the update reads grids other than the one it streams (from global memory).
    fn reads_inputs(&self) -> bool {
        reads_inputs(self.st)
    }

    /// Whether `a` reads the previous level of a leapfrog whose steps this kernel fuses.
    fn is_own_prev(&self, a: &Access) -> bool {
        self.leapfrog() && a.slot == self.own_prev()
    }

    /// Whether level `s` is one of the launch's `levels` steps. Levels past
    /// them keep the value of the level below: the last ones, or for a
    /// leapfrog the first ones, so that the last two levels are the last two
    /// time levels (`out` and `out_prev`) however many steps the launch runs.
    fn real_level(&self) -> String {
        if self.leapfrog() {
            format!("s > {} - levels", self.plan.time_block)
        } else {
            "s <= levels".into()
        }
    }

    /// `launched`, a read of the launch's grids (from global memory, or the
    /// registers they were loaded into), unless it is a leapfrog's read of
    /// its previous level: that comes from the launch's grid only at the
    /// first level that steps, and from level `s - 2` (`older` of its index,
    /// row or plane `q`) above it.
    fn prev_read(&self, a: &Access, launched: String, older: &dyn Fn(&str) -> String) -> String {
        let t = self.plan.time_block;
        if !self.is_own_prev(a) || t == 1 {
            return launched;
        }
        format!(
            "(s == {} - levels ? {launched} : {})",
            t + 1,
            older("s >= 2 ? s - 2 : 0")
        )
    }

    /// Whether each level keeps the row or plane that last left its window
    /// (`old`): a leapfrog of several steps whose levels work behind what the
    /// level below finished in the previous iteration (`skew`), where level
    /// `s + 2` reads it as its previous level.
    fn keeps_old(&self, skew: bool) -> bool {
        self.leapfrog() && skew && self.plan.time_block >= 2
    }

    /// Declares `old` where [`Self::keeps_old`], for `cells` cells a thread.
    fn declare_old(&self, w: &mut Writer, skew: bool, cells: usize) -> fmt::Result {
        if !self.keeps_old(skew) {
            return Ok(());
        }
        writeln!(
            w,
            "/* old[s]: level s where it last left the window, which level s + 2 reads as its previous level. */"
        )?;
        writeln!(
            w,
            "{} old[{}][{cells}] = {{}};",
            self.st.dtype.c(),
            self.plan.time_block
        )?;
        Ok(())
    }

    /// Per window row read, the offsets along the contiguous axis read there.
    fn neighbourhoods(&self, sh: &Shape) -> BTreeMap<usize, BTreeSet<i64>> {
        let mut rows: BTreeMap<usize, BTreeSet<i64>> = BTreeMap::new();
        let streamed = self.streamed();
        self.s.expr.for_each_read(&mut |a| {
            if a.slot == streamed {
                let m = (sh.r[0] as i64 + a.offset[0]) as usize;
                rows.entry(m).or_default().insert(a.offset[1]);
            }
        });
        rows
    }

    /// `nb<m>`: window row `m` of level `s - 1` around the lane's cells:
    /// its own registers, and by shuffles the neighbouring lanes' cells it reads.
    fn neighbourhood(
        &self,
        w: &mut Writer,
        sh: &Shape,
        m: usize,
        reads: &BTreeSet<i64>,
        t: &str,
    ) -> fmt::Result {
        let rl = sh.r[1];
        let v = sh.v as i64;
        let lo = reads.first().copied().unwrap_or(0);
        let hi = reads.last().copied().unwrap_or(0);
        writeln!(
            w,
            "{t} nb{m}[{}]; /* row {}; the lane's cell k at [k + {rl}] */",
            sh.v + 2 * rl,
            shifted("q", m as i64 - sh.r[0] as i64)
        )?;
        w.pragma("unroll")?;
        w.guarded(
            format_args!("for (int k = 0; k < {}; ++k)", sh.v),
            format_args!("nb{m}[k + {rl}] = win[s - 1][{m}][k];"),
        )?;
        for c in (lo..v + hi).filter(|c| !(0..v).contains(c)) {
            let from = format!("win[s - 1][{m}][{}]", c.rem_euclid(v));
            let moved = self.d.shuffle(&from, c.div_euclid(v), LANES);
            writeln!(w, "nb{m}[{}] = {moved};", c + rl as i64)?;
        }
        Ok(())
    }

    /// A read in a level's update: the streamed grid from a neighbourhood, inputs from global memory.
    fn level_read(&self, a: &Access, sh: &Shape) -> String {
        if let Some(read) = self.input_read(a) {
            return self.prev_read(a, read, &|s| {
                if sh.skew {
                    format!("old[{s}][k]")
                } else {
                    format!("win[{s}][0][k]")
                }
            });
        }
        let m = sh.r[0] as i64 + a.offset[0];
        format!("nb{m}[{}]", shifted("k", sh.r[1] as i64 + a.offset[1]))
    }

    /// Moves the window of level `level` on by one row: the oldest drops out, `row` comes in.
    fn move_window(&self, w: &mut Writer, sh: &Shape, level: &str, row: &str) -> fmt::Result {
        let keep = self.keeps_old(sh.skew);
        shift_window(w, level, row, sh.planes(), sh.v, "k", keep)?;
        Ok(())
    }

    /// Stores the last level's row `q` where it is in the block's chunk and the tile's own part.
    fn store_level(&self, w: &mut Writer, sh: &Shape) -> fmt::Result {
        writeln!(
            w,
            "/* The last level: stored where it is this block's and this tile's own. */"
        )?;
        w.block("if (q >= z0 && q < z1)", |w| {
            sh.cells(w, |w| {
                w.block("if (own_x[k])", |w| {
                    writeln!(w, "out[{}] = next[k];", index("q"))?;
                    if self.leapfrog() {
                        writeln!(w, "out_prev[{}] = win[s - 1][{}][k];", index("q"), sh.r[0])?;
                    }
                    Ok(())
                })
            })?;
            Ok(())
        })?;
        Ok(())
    }

    /// Launches the `temporal` kernel over the region for `levels` steps.
    pub(super) fn temporal_launch(&self, w: &mut Writer) -> fmt::Result {
        if self.rings() {
            return self.rings_launch(w);
        }
        let bytes = self.allow_shared(w)?;
        let threads = self.temporal_threads();
        self.literal_values(w)?;
        if !self.chunked() {
            // The 64-bit twin: grids of more than 2^30 cells fill any device.
            let arguments = format!("{}, levels", self.arguments());
            let blocks = self.temporal_grid(&self.plan.chunk.to_string());
            return self.launch_lines(w, &threads, &blocks, bytes, &arguments);
        }
        let instances = self.instances();
        let [fixed, given] = [&instances[0], &instances[1]];
        self.fused_chunk(w, given, bytes)?;
        writeln!(
            w,
            "auto *const kernel = chunk == {} ? {fixed} : {given};",
            self.plan.chunk
        )?;
        let arguments = format!("{}, levels, chunk", self.arguments());
        let blocks = self.temporal_grid("chunk");
        self.launch_named(w, "kernel", &threads, &blocks, bytes, &arguments)?;
        Ok(())
    }

    /// `chunk`, the cells of the slowest axis each block marches: the
    /// plan's, or fewer where a launch in chunks that long would leave
    /// multiprocessors without a block (a small grid): then as many chunks
    /// as the blocks the device keeps resident allow, in one wave, each
    /// block paying the warm-up of its overlapped tile at the same time.
    /// Residency is asked of `given`, the instance the shorter chunks run,
    /// whose registers may be more.
    fn fused_chunk(&self, w: &mut Writer, given: &str, bytes: usize) -> fmt::Result {
        if self.vector_columns() {
            let sh = self.planes_shape();
            let extra = sh.t * sh.r[0] + sh.lag() * sh.t;
            return self.wave_chunk(w, given, bytes, extra, &self.temporal_across(), false);
        }
        let chunk = self.plan.chunk;
        writeln!(
            w,
            "/* Cells of `{}` a block marches: {chunk}, or fewer where that would leave multiprocessors without a block. */",
            self.st.axes[0]
        )?;
        self.chunk_inputs(w, given, bytes, &self.temporal_across())?;
        writeln!(
            w,
            "/* `across`: the blocks of one chunk; `parts`: the chunks that many resident blocks hold. */"
        )?;
        writeln!(
            w,
            "const ptrdiff_t parts = across > 0 ? (ptrdiff_t)multiprocessors * per_multiprocessor / across : 0;"
        )?;
        writeln!(
            w,
            "const int chunk = cells > 0 && parts > (cells + {chunk} - 1) / {chunk} ? (int)((cells + parts - 1) / parts) : {chunk};"
        )?;
        Ok(())
    }

    /// The blocks of one chunk of a `temporal` launch: its grid without
    /// the slowest axis.
    fn temporal_across(&self) -> Vec<String> {
        let mut across = self.temporal_grid("1");
        across.pop();
        across
    }

    /// The blocks of a `temporal` launch along CUDA's `x`, `y` (and `z`):
    /// one per tile of the region, in chunks of `chunk` (a C expression)
    /// along the slowest axis, as C expressions.
    pub(super) fn temporal_grid(&self, chunk: &str) -> Vec<String> {
        if self.rings() {
            return self.rings_grid(chunk);
        }
        if self.dims() == 3 {
            return self.planes_grid(chunk);
        }
        let width = self.shape().stored();
        let per_block = self.plan.threads() / LANES;
        vec![
            format!(
                "(({} + {width} - 1) / {width} + {per_block} - 1) / {per_block}",
                self.extent(1)
            ),
            format!("({} + {chunk} - 1) / {chunk}", self.extent(0)),
        ]
    }

    /// The threads of a `temporal` block, as `dim3`'s arguments.
    pub(super) fn temporal_threads(&self) -> String {
        if self.dims() == 3 {
            let sh = self.planes_shape();
            format!("{}, {}", sh.bx, sh.by)
        } else {
            self.plan.threads().to_string()
        }
    }
}

#[cfg(test)]
pub(in crate::backend::gpu) mod tests {
    use crate::backend::gpu::{CUDA, HIP, fit, resolve, source};
    use crate::ir::{Stencil, Strategy};

    /// A `temporal` stencil of `axes` updating `u` with `expr`, with `tiling` added to `[tiling.cuda]`.
    pub(in crate::backend::gpu) fn stencil(axes: &str, expr: &str, tiling: &str) -> Stencil {
        let text = format!(
            "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [{axes}]\n[fields]\nu = {{ role = \"state\" }}\n\
             k = {{ role = \"input\" }}\n[[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n\
             [tiling.cuda]\nstrategy = \"temporal\"\n{tiling}"
        );
        crate::backend::gpu::tests::lowered(text)
    }

    /// A `temporal` leapfrog of `axes` in `dtype`: `u` keeps two time levels, `expr` adds to `2*u - u.prev`.
    pub(in crate::backend::gpu) fn leapfrog(
        axes: &str,
        dtype: &str,
        expr: &str,
        tiling: &str,
    ) -> Stencil {
        let text = format!(
            "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [{axes}]\n[fields]\nu = {{ role = \"state\", levels = 2 }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"2*u{zero} - u.prev{zero} + {expr}\"\n\
             [tiling.cuda]\nstrategy = \"temporal\"\n{tiling}",
            zero = if axes.matches(',').count() == 1 {
                "[0,0]"
            } else {
                "[0,0,0]"
            }
        );
        crate::backend::gpu::tests::lowered(text)
    }

    #[test]
    fn a_leapfrog_steps_its_last_levels_and_writes_the_last_two() {
        let expr2 = "0.1*(u[-1,0] + u[1,0] + u[0,-1] + u[0,1])";
        // f32: chained levels read level s - 2's row q from the oldest row of its window.
        let code = cuda(&leapfrog("\"y\", \"x\"", "f32", expr2, "time_block = 3\n")).unwrap();
        for line in [
            "float *__restrict__ out, float *__restrict__ out_prev, const float *__restrict__ prev_u, const float *__restrict__ cur_u",
            // The first levels keep their value when the launch runs fewer steps than the time block.
            "const bool step = !EDGE || (s > 3 - levels && q >= 1 && q < n0 - 1);",
            // The first level that steps reads the launch's previous level, the others level s - 2.
            "v = 2.0f * nb1[k + 1] - (s == 4 - levels ? prev_u[c] : win[s >= 2 ? s - 2 : 0][0][k])",
            "out[q * s0 + i1 + k] = next[k];",
            "out_prev[q * s0 + i1 + k] = win[s - 1][1][k];",
            "kernel<<<grid, block, 0, stream>>>(n0, n1, out, out_prev, prev_u, cur_u, levels, chunk);",
        ] {
            assert!(code.contains(line), "{line}\n{code}");
        }
        assert!(!code.contains("old["), "{code}");
        // f64: skewed levels read it from the row that last left its window.
        let code = cuda(&leapfrog("\"y\", \"x\"", "f64", expr2, "time_block = 3\n")).unwrap();
        for line in [
            "double old[3][2] = {};",
            "old[s][k] = win[s][0][k];",
            "old[0][k] = win[0][0][k];",
            "(s == 4 - levels ? prev_u[c] : old[s >= 2 ? s - 2 : 0][k])",
        ] {
            assert!(code.contains(line), "{line}\n{code}");
        }
        // 3-D: the same, from the thread's rows.
        let expr3 = "0.1*(u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,1])";
        let code = cuda(&leapfrog(
            "\"z\", \"y\", \"x\"",
            "f32",
            expr3,
            "time_block = 2\n",
        ))
        .unwrap();
        for line in [
            "const bool step = s > 2 - levels && q >= 1 && q < n0 - 1;",
            "float old[2][8] = {};",
            // The previous level is loaded an iteration ahead, for the first level that steps.
            "(s == 3 - levels ? prev_in[j] : old[s >= 2 ? s - 2 : 0][j])",
            "const int q = p + 1 - 2 * (3 - levels);",
            "prev_ahead[j] = on && in_y[j] && in_x ? prev_u[c] : 0;",
            "old[0][j] = win[0][0][j];",
            "out_prev[q * s0 + (i1 + j) * s1 + i2] = win[s - 1][1][j];",
        ] {
            assert!(code.contains(line), "{line}\n{code}");
        }
        // One step a launch: the previous level always comes from the launch's grid.
        let code = cuda(&leapfrog(
            "\"z\", \"y\", \"x\"",
            "f32",
            expr3,
            "time_block = 1\n",
        ))
        .unwrap();
        assert!(
            code.contains("const float u = 2.0f * win[s - 1][1][j] - prev_in[j] + "),
            "{code}"
        );
        assert!(!code.contains("old["), "{code}");
    }

    #[test]
    fn two_d_tiles_unroll_their_rows_by_the_window() {
        let unroll = |st: &Stencil| {
            let code = cuda(st).unwrap();
            let lines: Vec<&str> = code.lines().map(str::trim).collect();
            let at = lines.iter().position(|l| l.starts_with("for (I p = "));
            let before = lines[at.unwrap_or_else(|| panic!("{code}")) - 1];
            before.strip_prefix("#pragma unroll ").map(str::to_string)
        };
        let star = |r: i64| {
            let mut terms = vec!["u[0,0]".to_string()];
            for d in (-r..=r).filter(|&d| d != 0) {
                terms.extend([format!("u[{d},0]"), format!("u[0,{d}]")]);
            }
            terms.join(" + ")
        };
        assert_eq!(
            unroll(&stencil("\"y\", \"x\"", &star(1), "")).as_deref(),
            Some("3")
        );
        assert_eq!(
            unroll(&stencil("\"y\", \"x\"", &star(2), "")).as_deref(),
            Some("5")
        );
        // A box of radius 2 reads 25 cells: its loop is not unrolled.
        let cells: Vec<String> = (-2..=2)
            .flat_map(|a| (-2..=2).map(move |b| format!("u[{a},{b}]")))
            .collect();
        assert_eq!(
            unroll(&stencil("\"y\", \"x\"", &cells.join(" + "), "")),
            None
        );
        // Leapfrogs: only the copy without checks (f32); f64 has none.
        let expr = "0.1*(u[-1,0] + u[1,0] + u[0,-1] + u[0,1])";
        for (dtype, expected) in [("f32", Some("(EDGE ? 1 : 3)")), ("f64", None)] {
            let st = leapfrog("\"y\", \"x\"", dtype, expr, "");
            assert_eq!(unroll(&st).as_deref(), expected, "{dtype}");
        }
        // Not measured in `persistent`; not in HIP, whose compiler leaves the loop.
        let mut st = stencil("\"y\", \"x\"", &star(1), "");
        let hip = generate(&st, &HIP).unwrap();
        assert!(!hip.contains("#pragma unroll 3\n    for (I p"), "{hip}");
        assert!(hip.contains("    for (I p = "), "{hip}");
        st.tiling.cuda.strategy = Strategy::Persistent;
        assert_eq!(unroll(&st), None);
    }

    #[test]
    fn f64_tiles_read_literals_passed_by_value_and_select_their_levels() {
        let expr = "(5.1*u[-1,0] + 12.1*u[0,-1] + 15.0*u[0,0] + 12.2*u[0,1] + 5.2*u[1,0]) / 118";
        let mut st = stencil("\"y\", \"x\"", expr, "");
        st.dtype = crate::ir::Dtype::F64;
        let code = cuda(&st).unwrap();
        for line in [
            "struct p_cuda__s__update_u_literals {\n    double v[6];\n};",
            "const double (&lit)[6] = lits.v;",
            // The kernels take the table last but the launch's own arguments,
            // the tile function after the grids, the launcher makes it.
            "double *__restrict__ out, const double *__restrict__ cur_u, const p_cuda__s__update_u_literals lits, int levels, int chunk)",
            "const double *__restrict__ cur_u, const p_cuda__s__update_u_literals lits, int levels)",
            "p_cuda__s__update_u_tile<int>(n0, n1, out, cur_u, lits, levels, tile, z0, z1);",
            "const p_cuda__s__update_u_literals lits = {{0.00847457627118644, 5.1, 12.1, 15.0, 12.2, 5.2}};",
            "kernel<<<grid, block, 0, stream>>>(n0, n1, out, cur_u, lits, levels, chunk);",
            "p_cuda__s__update_u_i64_kernel<<<grid, block, 0, stream>>>(n0, n1, out, cur_u, lits, levels);",
            "const double u = (lit[1] * nb0[k + 1] + lit[2] * nb1[k] + lit[3] * nb1[k + 1] + lit[4] * nb1[k + 2] + lit[5] * nb2[k + 1]) * lit[0];",
            "const double v = step && in_x[k] ? u : win[s - 1][1][k];",
        ] {
            assert!(code.contains(line), "{line}\n{code}");
        }
        assert!(code.contains("#pragma unroll 3"), "{code}");
        // `persistent` reads the table and selects too, but keeps its loop over the rows.
        let mut persistent = st.clone();
        persistent.tiling.cuda.strategy = Strategy::Persistent;
        let code = cuda(&persistent).unwrap();
        assert!(
            code.contains("const double v = step && in_x[k] ? u : win[s - 1][1][k];")
            && code.contains("const double (&lit)[6] = lits.v;")
            && code.contains("void *arguments[] = {(void *)&n0_32, (void *)&n1_32, (void *)&out, (void *)&cur_u, (void *)&lits, (void *)&steps};")
            && !code.contains("#pragma unroll 3"),
            "{code}"
        );
        // No `__constant__` variable: one costs every launch of the file's kernels.
        assert!(!code.contains("static __constant__"), "{code}");
        // HIP keeps its literals and branches; f32 (immediate operands, a copy without checks) too.
        let hip = generate(&st, &HIP).unwrap();
        assert!(
            !hip.contains("lit[") && hip.contains("if (step && in_x[k]) {"),
            "{hip}"
        );
        st.dtype = crate::ir::Dtype::F32;
        let code = cuda(&st).unwrap();
        assert!(
            !code.contains("lit[") && code.contains("if (step && in_x[k]) {"),
            "{code}"
        );
        // An update without literals has no table (a C array has at least one entry).
        let mut bare = stencil("\"y\", \"x\"", "u[-1,0] + u[0,1] - u[0,0]", "");
        bare.dtype = crate::ir::Dtype::F64;
        let code = cuda(&bare).unwrap();
        assert!(
            !code.contains("_literals") && !code.contains("lit["),
            "{code}"
        );
        assert!(
            code.contains("const double v = step && in_x[k] ? u : "),
            "{code}"
        );
        // A leapfrog reads its previous level from global memory: it branches.
        let wave = leapfrog("\"y\", \"x\"", "f64", "0.1*(u[-1,0] + u[1,0])", "");
        let code = cuda(&wave).unwrap();
        assert!(
            code.contains("lit[") && code.contains("if (step && in_x[k]) {"),
            "{code}"
        );
    }

    pub(in crate::backend::gpu) fn cuda(st: &Stencil) -> Result<String, String> {
        generate(st, &CUDA)
    }

    /// `st`'s `d` source with the `[tiling.cuda]` plan, symbols prefixed `p`.
    pub(in crate::backend::gpu) fn generate(
        st: &Stencil,
        d: &super::super::Dialect,
    ) -> Result<String, String> {
        let plan = resolve(&st.tiling.cuda, st, d).and_then(|p| fit(p, false, st, d))?;
        Ok(source(st, &crate::analysis::analyse(st), &plan, "p", d))
    }

    #[test]
    fn launches_of_one_step_run_the_single_step_kernel() {
        let mut st = stencil(
            "\"z\", \"y\", \"x\"",
            "u[-1,0,0] + u[0,-1,0] + u[0,0,1] + u[1,0,0] + k[0,0,0]",
            "time_block = 3\n",
        );
        let code = cuda(&st).unwrap();
        let (fused, single) = code
        .split_once("/* The kernel of launches of one step: `stream`, blocks of 1 x 2 x 64 threads, marching 2 cells")
        .unwrap_or_else(|| panic!("a single-step kernel after the fused ones:\n{code}"));
        assert!(fused.contains("int levels"), "{fused}");
        // The single step's own kernels, named after the launcher, without `levels`.
        assert!(single.contains("__update_u_step_kernel("), "{single}");
        let launcher = &single[single.find("extern \"C\"").unwrap()..];
        let one = launcher.find("if (levels == 1) {").expect(launcher);
        let step = launcher.find("__update_u_step_kernel<<<").expect(launcher);
        let fused_launch = launcher.find("__update_u_kernel<").expect(launcher);
        assert!(one < step && step < fused_launch, "{launcher}");
        // A fused kernel of one step a launch has no other kernel to leave them to.
        st.tiling.cuda.time_block = Some(1);
        let code = cuda(&st).unwrap();
        assert!(
            !code.contains("_step_kernel") && !code.contains("levels == 1"),
            "{code}"
        );
    }

    #[test]
    fn lanes_trade_neighbours_by_shuffles_and_store_only_their_own_cells() {
        let st = stencil(
            "\"y\", \"x\"",
            "u[-1,0] + u[0,-1] + u[0,0] + u[0,1] + u[1,0] + k[0,0]",
            "time_block = 3\nvector = 2\n",
        );
        let code = cuda(&st).unwrap();
        // The cells either side of a lane's pair: the last of the lane before, the first of the one after.
        assert!(
            code.contains("nb1[0] = __shfl_up_sync(0xffffffffu, win[s - 1][1][1], 1, 32);"),
            "{code}"
        );
        assert!(
            code.contains("nb1[3] = __shfl_down_sync(0xffffffffu, win[s - 1][1][0], 1, 32);"),
            "{code}"
        );
        assert_eq!(
            code.matches("__shfl_").count(),
            2,
            "planes above and below come from registers"
        );
        // 64-cell warp tiles of which 3 on each side are recomputed.
        assert!(code.contains("threadIdx.x / 32) * 58;"), "{code}");
        assert!(
            code.contains("own_x[k] = in_x[k] && lane * 2 + k >= 3 && lane * 2 + k < 61;"),
            "{code}"
        );
        // In f32 each fused step works a plane behind the one before; the launch says how many to run.
        assert!(code.contains("const I q = p - 1 * s;"), "{code}");
        assert!(
            code.contains("const bool step = !EDGE || (s <= levels && q >= 1 && q < n0 - 1);"),
            "{code}"
        );
        assert!(
            code.contains(
                "_kernel(const int n0, const int n1, float *__restrict__ out, const float *__restrict__ cur_u, \
                 const float *__restrict__ cur_k, int levels, int chunk)"
            ),
            "{code}"
        );
        // The input comes from global memory at the cell the step computes.
        assert!(code.contains("+ cur_k[c];"), "{code}");
        let fused = &code[..code.find("/* The kernel of launches of one step").unwrap()];
        assert_eq!(
            fused.matches("__global__").count(),
            2,
            "one fused kernel for every step count, with 32- and with 64-bit indices"
        );
        // Tiles inside the region (rows z0 - 6 to z1 + 2 computed, to z1 + 3
        // loaded; 61 cells on from the tile) run without checks.
        for line in [
            "if (levels == 3 && z0 - 6 >= 1 && z1 + 2 <= n0 - 1 && z1 + 3 <= n0 && tile >= 3 && 1 + tile + 61 <= n1 - 1)",
            "    p_cuda__s__update_u_tile<int, false>(n0, n1, out, cur_u, cur_k, levels, tile, z0, z1);",
            "    p_cuda__s__update_u_tile<ptrdiff_t, true>(n0, n1, out, cur_u, cur_k, levels, tile, z0, z1);",
            "template <typename I, bool EDGE>",
        ] {
            assert!(code.contains(line), "{line}: {code}");
        }
        // In f64 (skewed steps) every tile runs the one copy, with its checks.
        let mut st64 = st.clone();
        st64.dtype = crate::ir::Dtype::F64;
        let code = cuda(&st64).unwrap();
        assert!(!code.contains("EDGE"), "{code}");
        assert!(
            code.contains("    p_cuda__s__update_u_tile<int>(n0, n1, out, cur_u, cur_k, levels, tile, z0, z1);"),
            "{code}"
        );
        let hip = source(
            &st,
            &crate::analysis::analyse(&st),
            &resolve(&st.tiling.cuda, &st, &HIP).unwrap(),
            "p",
            &HIP,
        );
        assert!(
            hip.contains("nb1[0] = __shfl_up(win[s - 1][1][1], 1, 32);"),
            "{hip}"
        );
    }

    #[test]
    fn wide_reach_shuffles_across_lanes() {
        let st = stencil(
            "\"y\", \"x\"",
            "u[0,-2] + u[0,2]",
            "time_block = 2\nvector = 1\n",
        );
        let code = cuda(&st).unwrap();
        assert!(
            code.contains("nb0[0] = __shfl_up_sync(0xffffffffu, win[s - 1][0][0], 2, 32);"),
            "{code}"
        );
        assert!(
            code.contains("nb0[4] = __shfl_down_sync(0xffffffffu, win[s - 1][0][0], 2, 32);"),
            "{code}"
        );
    }

    #[test]
    fn tiles_that_would_store_nothing_are_refused() {
        let st = stencil(
            "\"z\", \"y\", \"x\"",
            "u[0,-2,0] + u[0,0,1]",
            "time_block = 3\ncoarsen = 3\nblock = [1, 4, 128]\n",
        );
        let err = cuda(&st).unwrap_err();
        assert!(err.contains("recomputes 12 cells along `y`"), "{err}");
        assert!(
            err.contains("lower `time_block` or raise `coarsen` or `block`"),
            "{err}"
        );
        let st = stencil("\"y\", \"x\"", "u[0,-4] + u[0,4]", "time_block = 9\n");
        let plan = resolve(&st.tiling.cuda, &st, &CUDA).unwrap();
        assert_eq!(
            plan.vector, 5,
            "the default tile widened to 160 cells, to keep the 88 not recomputed"
        );
        assert!(cuda(&st).is_ok());
    }
}
