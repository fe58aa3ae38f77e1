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
//! which runs the single-step kernel beside it: [`step_plan`](crate::backend::gpu::plan::companions::step_plan)).
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
use crate::backend::gpu::plan::temporal::variants;
use crate::backend::gpu::plan::temporal::{LANES, radius, reads_inputs, skewed, splits};
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
    /// Whether the grid is periodic: edge tiles load their halos wrapped
    /// onto the far side, and every cell is updated.
    wrap: bool,
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

    /// `i` wrapped onto a periodic axis of `n` cells: in the copy without
    /// checks (`EDGE` false), whose loads and reads all lie on the grid, `i`.
    fn wrapped(&self, i: &str, n: &str) -> String {
        if self.split {
            format!("(EDGE ? (I)stencil_mod({i}, {n}) : {i})")
        } else {
            format!("(I)stencil_mod({i}, {n})")
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
        let asm = format!("asm volatile(\"mov.u32 %0, %%tid.{axis};\" : \"=r\"(v));");
        w.definition(head, |w| {
            super::header::ptx_or(w, ("unsigned", &asm), &format!("threadIdx.{axis}"))
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
    )
}

/// `lo + `, the start of a sum from the region's first cell `lo`: nothing
/// where that is the grid's first (a periodic grid's).
fn from(lo: &str) -> String {
    if lo == "0" {
        String::new()
    } else {
        format!("{lo} + ")
    }
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
            wrap: self.periodic(),
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
        w.guarded(format_args!("if ({}tile >= {hi})", from(&lo)), leave)?;
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
        // On a periodic grid the region is the grid, and the input grids
        // are read up to a radius past the rows and columns computed: those
        // stay on the grid too, so that the copy without checks need not wrap.
        let [e0, e1] = if sh.wrap { sh.r } else { [0, 0] };
        vec![
            format!("levels == {t}"),
            format!("z0 - {} >= {lo0}", t * (r0 + lag) + e0),
            format!("z1 + {} <= {hi0}", (t - 1) * lag + e0),
            format!("z1 + {} <= n0", t * lag),
            format!("tile >= {}", margin + e1),
            format!(
                "{}tile + {} <= {hi1}",
                from(&lo1),
                LANES * sh.v - margin + e1
            ),
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
                "const I i1 = {}tile - {} + lane * {};",
                from(&self.bounds(1).0),
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
    /// rows (the argument of `#pragma unroll`): by the window's rows where
    /// [`variants::unrolls_rows`], a leapfrog's only in the copy without
    /// checks; `None`: not unrolled.
    fn row_unroll(&self, sh: &Shape) -> Option<String> {
        let rows = sh.planes();
        let suited = variants::unrolls_rows(self.plan, self.st, self.d);
        match (suited, self.leapfrog(), sh.split) {
            (false, _, _) | (true, true, false) => None,
            (true, false, _) => Some(rows.to_string()),
            (true, true, true) => Some(format!("(EDGE ? 1 : {rows})")),
        }
    }

    /// Whether a 2-D fused level computes its update at every cell and
    /// selects it (no branch): [`variants::selects_levels`].
    fn selects_levels(&self) -> bool {
        variants::selects_levels(self.plan, self.st, self.d)
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
    /// (`own_x`: stored); on a periodic grid, where every cell is loaded
    /// and updated, its column wrapped onto the grid instead (`col`).
    fn masks(&self, w: &mut Writer, sh: &Shape) -> fmt::Result {
        let (lo, hi) = self.bounds(1);
        let margin = sh.margin();
        let n = sh.v;
        let own = format!(
            "lane * {n} + k >= {margin} && lane * {n} + k < {}",
            LANES * n - margin
        );
        if sh.wrap {
            writeln!(w, "I col[{n}];")?;
            writeln!(w, "bool own_x[{n}];")?;
            return sh.cells(w, |w| {
                writeln!(w, "const I c = i1 + k;")?;
                writeln!(w, "col[k] = {};", sh.wrapped("c", "n1"))?;
                writeln!(
                    w,
                    "own_x[k] = ({}) && {own};",
                    sh.checked("c >= 0 && c < n1")
                )
            });
        }
        writeln!(w, "bool grid_x[{n}], in_x[{n}], own_x[{n}];")?;
        sh.cells(w, |w| {
            writeln!(w, "const I c = i1 + k;")?;
            writeln!(w, "grid_x[k] = {};", sh.checked("c >= 0 && c < n1"))?;
            writeln!(
                w,
                "in_x[k] = {};",
                sh.checked(&format!("c >= {lo} && c < {hi}"))
            )?;
            writeln!(w, "own_x[k] = in_x[k] && {own};")
        })?;
        Ok(())
    }

    /// `plane`: row `p` of the launch's grid (level 0), where it is on the grid.
    fn load_level0(&self, w: &mut Writer, sh: &Shape) -> fmt::Result {
        let name = crate::codegen::names::slot_name(self.st, self.streamed());
        if sh.wrap {
            writeln!(w, "/* Level 0: row p of the grid, wrapped onto it. */")?;
            writeln!(w, "{} plane[{}];", self.st.dtype.c(), sh.v)?;
            writeln!(w, "const I row = {};", sh.wrapped("p", "n0"))?;
            return sh.cells(w, |w| writeln!(w, "plane[k] = {name}[row * s0 + col[k]];"));
        }
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
            )
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
            let rows = if sh.wrap {
                String::new()
            } else {
                format!(" && q >= {lo0} && q < {hi0}")
            };
            writeln!(
                w,
                "const bool step = {};",
                sh.checked(&format!("{}{rows}", self.real_level()))
            )?;
            for (&m, cols) in &self.neighbourhoods(sh) {
                self.neighbourhood(w, sh, m, cols, t)?;
            }
            writeln!(w, "{t} next[{}];", sh.v)?;
            sh.cells(w, |w| {
                // A periodic grid's cells are all updated, and its input
                // reads wrap each coordinate: no index of the cell.
                let (inside, cell) = if sh.wrap {
                    ("step", None)
                } else {
                    ("step && in_x[k]", Some(index("q")))
                };
                self.level_cell(
                    w,
                    &format!("win[s - 1][{}][k]", sh.r[0]),
                    inside,
                    cell.as_deref(),
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
    /// memory at the cell's index `c` (on a periodic grid, at row `q` and the
    /// lane's column, each wrapped); `None` for the streamed grid.
    fn input_read(&self, a: &Access, sh: &Shape) -> Option<String> {
        (a.slot != self.streamed()).then(|| {
            let buf = crate::codegen::names::slot_name(self.st, a.slot);
            if !sh.wrap {
                return format!("{buf}[{}]", offset_index(&a.offset));
            }
            let row = sh.wrapped(&shifted("q", a.offset[0]), "n0");
            let col = match a.offset[1] {
                0 => "col[k]".to_string(),
                d => sh.wrapped(&shifted("i1 + k", d), "n1"),
            };
            format!("{buf}[{row} * s0 + {col}]")
        })
    }

    /// Whether the update reads grids other than the one it streams (from global memory).
    fn reads_inputs(&self) -> bool {
        reads_inputs(self.st)
    }

    /// Whether `a` reads the previous level of a leapfrog whose steps this kernel fuses.
    fn is_own_prev(&self, a: &Access) -> bool {
        crate::backend::gpu::plan::temporal::reads_own_prev(self.st, self.plan, self.s, a)
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
        )
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
        if let Some(read) = self.input_read(a, sh) {
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
        shift_window(w, level, row, sh.planes(), sh.v, "k", keep)
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
        self.launch_named(w, "kernel", &threads, &blocks, bytes, &arguments)
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
        )
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
pub(in crate::backend::gpu) mod tests;
