//! `temporal`: `time_block` steps fused per launch, over overlapped tiles.
//!
//! Each warp owns a tile: its lanes hold `vector` cells along the contiguous
//! axis (and, in 3-D, `coarsen` cells of the middle axis, with `block[1]`
//! lanes side by side along it), and it marches through `chunk` planes of
//! the slowest axis. For every fused step (a *level*) each lane keeps a
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
//! last whole time block run as one launch of the same kernel.

use std::collections::{BTreeMap, BTreeSet};

use super::{CWriter, Gen, Resolved, builtin, shifted};
use crate::codegen::rust::offset_index;
use crate::ir::{Access, Dtype, GpuTiling, Slot, Stencil, Strategy, Version};

/// Lanes of a warp tile: the width of every shuffle, which CUDA warps and
/// AMD wavefronts (of 32 or 64) all support.
pub const LANES: usize = 32;

/// Threads of a default `temporal` block: 4 warp tiles side by side.
pub const THREADS: usize = 128;

/// Most steps the model fuses.
pub const MAX_TIME_BLOCK: usize = 12;

/// Most 32-bit registers the model lets the windows of one thread keep from
/// one iteration to the next; three quarters of it when steps are skewed,
/// which leaves the compiler more temporaries live at once (j2d5pt f64 at
/// the full budget, 8 steps: 493 GCells/s; at three quarters, 6: 587).
pub const REGISTER_WORDS: usize = 96;

/// `[tiling]` of a `temporal` stencil with the defaults filled in:
///
/// - 2-D: warps of 32 lanes along the contiguous axis, 4 cells per lane in
///   f32 (chunks of 512 rows), 2 in f64 (chunks of 256), the best of the
///   variants measured on the H100 (BENCHMARKS.md, 2026-11-23);
/// - 3-D: warps of 32 lanes along the contiguous axis, each lane 2 cells
///   of it by 8 of the middle axis, chunks of 128 planes: the best of the
///   lane layouts measured on j3d7pt (392.7 in f32 and 184.1 in f64, where
///   16 x 2 lanes measured 353.3 and 133.3, and 4 x 8 lanes 234.6 and 156.4);
/// - `time_block` in 2-D: the most steps, up to [`MAX_TIME_BLOCK`], that
///   recompute at most a quarter of the tile and keep the windows within
///   [`REGISTER_WORDS`]; in 3-D: 2 where the tiles keep half their cells
///   along each axis (j3d7pt: 2 measured faster than 1 and 3), else 1;
/// - with a `time_block` from the spec, default tiles widen to store at
///   least half their cells.
pub fn defaults(t: &GpuTiling, st: &Stencil) -> Resolved {
    let dims = st.dims();
    let (vector, coarsen, chunk) = match (dims, st.dtype) {
        (2, Dtype::F32) => (4, 1, 512),
        (2, _) => (2, 1, 256),
        _ => (2, 8, 128),
    };
    let mut block = match &t.block {
        Some(b) => b.clone(),
        None => vec![1; dims - 1].into_iter().chain([THREADS]).collect(),
    };
    block[0] = 1;
    let ly = if dims == 3 { block[1] } else { 1 };
    let lx = LANES / ly.clamp(1, LANES);
    let time_block = t.time_block.unwrap_or_else(|| {
        let tile = [
            lx * t.vector.unwrap_or(vector),
            ly * t.coarsen.unwrap_or(coarsen),
        ];
        model_time_block(st, tile)
    });
    // A `time_block` the spec gives widens the default tiles to store at least half their cells.
    let r = radius(st);
    let vector = t
        .vector
        .unwrap_or(vector.max((4 * r[dims - 1] * time_block).div_ceil(lx)));
    let coarsen = if dims == 3 {
        t.coarsen
            .unwrap_or(coarsen.max((4 * r[1] * time_block).div_ceil(ly)))
    } else {
        1
    };
    Resolved {
        strategy: Strategy::Temporal,
        block,
        chunk: t.chunk.unwrap_or(chunk),
        coarsen,
        vector,
        time_block,
    }
}

/// Lanes of a warp along the middle axis: the block's extent there (3-D; 1 otherwise).
pub fn lanes_y(plan: &Resolved) -> usize {
    if plan.block.len() == 3 {
        plan.block[1]
    } else {
        1
    }
}

/// Whether the fused steps of `st` are skewed (see the module documentation):
/// in f64, whose arithmetic has twice the latency, independent steps
/// measured 587 instead of 531 GCells/s on j2d5pt (6 steps); in f32 the
/// registers are worth more as further fused steps (chained, 12 steps: 1247,
/// skewed, 8 steps: 1139; H100, BENCHMARKS.md, 2026-11-23).
pub fn skewed(st: &Stencil) -> bool {
    st.dtype == Dtype::F64
}

/// The model's `time_block` (see [`defaults`]) for warp tiles of `tile`
/// cells (contiguous axis, middle axis).
fn model_time_block(st: &Stencil, tile: [usize; 2]) -> usize {
    let r = radius(st);
    let dims = st.dims();
    let keeps = |axis: usize, cells: usize, t: usize| 2 * r[axis] * t * 4 <= cells;
    if dims == 3 {
        // Tiles grow along two axes: 2 steps where they keep half their cells along each.
        let half = |t| 2 * r[2] * t * 2 <= tile[0] && 2 * r[1] * t * 2 <= tile[1];
        return if half(2) { 2 } else { 1 };
    }
    let words = st.dtype.size() / 4;
    // Planes each step's window keeps from one iteration to the next.
    let (planes, budget) = if skewed(st) {
        (2 * r[0] + 1, REGISTER_WORDS * 3 / 4)
    } else {
        (2 * r[0], REGISTER_WORDS)
    };
    let fits = |t: usize| keeps(1, tile[0], t) && t * planes * tile[0] / LANES * words <= budget;
    (1..=MAX_TIME_BLOCK).rev().find(|&t| fits(t)).unwrap_or(1)
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

/// Whether `plan`'s tiles keep cells to store after recomputing their
/// overlap; the error says what to change.
pub fn check(plan: &Resolved, st: &Stencil, backend: &str) -> Result<(), String> {
    let r = radius(st);
    let dims = st.dims();
    let t = plan.time_block;
    let ly = lanes_y(plan);
    if LANES % ly != 0 || plan.block[dims - 1] % (LANES / ly) != 0 {
        return Err(format!(
            "`temporal` blocks are warps of {LANES} lanes, {ly} along `{}` and {} along `{}`: the `block` extents along them must be \
             a divisor of {LANES} and a multiple of {LANES} over it, not {:?}; e.g. block = [1, 4, 32] in [tiling.{backend}]",
            st.axes[1],
            LANES / ly.max(1),
            st.axes[dims - 1],
            plan.block
        ));
    }
    let mut tiles = vec![(dims - 1, LANES / ly * plan.vector, "vector")];
    if dims == 3 {
        tiles.push((1, ly * plan.coarsen, "coarsen"));
    }
    for (axis, cells, key) in tiles {
        let overlap = 2 * r[axis] * t;
        if overlap >= cells {
            return Err(format!(
                "`temporal` with `time_block = {t}` recomputes {overlap} cells along `{}` (radius {} x {t} steps on each side) \
                 of tiles {cells} cells wide, which leaves none to store for `{}`; lower `time_block` or raise `{key}` in [tiling.{backend}]",
                st.axes[axis], r[axis], st.name
            ));
        }
    }
    Ok(())
}

/// The names a `temporal` kernel gives its loops and arrays, and their shapes.
struct Shape {
    dims: usize,
    /// Fused steps.
    t: usize,
    /// Radius of one step per axis.
    r: Vec<usize>,
    /// Whether each level works one plane behind what the level below
    /// finished in the previous iteration (independent levels, a plane more
    /// of registers per level) rather than behind what it just finished.
    skew: bool,
    /// Planes back from the loaded one per level: the radius, one more with `skew`.
    lag: usize,
    /// Cells per lane along the contiguous axis.
    v: usize,
    /// Cells per lane along the middle axis (3-D; 1 otherwise).
    y: usize,
    /// Lanes of a warp along the contiguous axis and along the middle one:
    /// the warp tile is `lx * v` by `ly * y` cells.
    lx: usize,
    ly: usize,
}

impl Shape {
    /// Window planes per level.
    fn planes(&self) -> usize {
        2 * self.r[0] + 1
    }

    /// `[j][k]` (3-D) or `[k]`: a lane's cell in a plane, with the indices given.
    fn cell(&self, j: &str, k: &str) -> String {
        if self.dims == 3 {
            format!("[{j}][{k}]")
        } else {
            format!("[{k}]")
        }
    }

    /// `[Y][V]` or `[V]`: the extent of a lane's cells in a plane.
    fn extent(&self) -> String {
        self.cell(&self.y.to_string(), &self.v.to_string())
    }

    /// Opens the unrolled loops over a lane's cells of a plane (`j`, then `k`).
    fn open_cells(&self, w: &mut CWriter) {
        if self.dims == 3 {
            w.pragma("unroll");
            w.line(&format!("for (int j = 0; j < {}; ++j) {{", self.y));
            w.indent();
        }
        w.pragma("unroll");
        w.line(&format!("for (int k = 0; k < {}; ++k) {{", self.v));
        w.indent();
    }

    fn close_cells(&self, w: &mut CWriter) {
        for _ in 0..self.dims - 1 {
            w.dedent();
            w.line("}");
        }
    }

    /// The flat grid index of a lane's cell `(j, k)` at plane `plane`.
    fn index(&self, plane: &str) -> String {
        let last = self.dims - 1;
        if self.dims == 3 {
            format!("{plane} * s0 + (i1 + j) * s1 + i{last} + k")
        } else {
            format!("{plane} * s0 + i{last} + k")
        }
    }
}

impl Gen<'_> {
    fn shape(&self) -> Shape {
        let r = radius(self.st);
        Shape {
            dims: self.dims(),
            t: self.plan.time_block,
            skew: skewed(self.st),
            lag: r[0] + usize::from(skewed(self.st)),
            r,
            v: self.plan.vector,
            y: if self.dims() == 3 {
                self.plan.coarsen
            } else {
                1
            },
            lx: LANES / lanes_y(self.plan),
            ly: lanes_y(self.plan),
        }
    }

    /// The slot a `temporal` kernel streams: the updated field at the start of the step.
    fn streamed(&self) -> Slot {
        Slot {
            field: self.s.target,
            version: Version::Start,
        }
    }

    /// The body of a `temporal` kernel (see the module documentation).
    pub(super) fn temporal(&self, w: &mut CWriter) {
        let sh = self.shape();
        self.tile(w, &sh);
        self.masks(w, &sh);
        let t = self.st.dtype.c();
        let (r0, lag) = (sh.r[0], sh.lag);
        w.line(&format!(
            "/* win[s][m]: level s (s steps after the launch's grid) at plane p - 1 - {lag} * s - {} + m, at the start of iteration p. */",
            2 * r0
        ));
        w.line(&format!(
            "{t} win[{}][{}]{} = {{}};",
            sh.t,
            sh.planes(),
            sh.extent()
        ));
        w.line(&format!(
            "for (ptrdiff_t p = z0 - {}; p < z1 + {}; ++p) {{",
            sh.t * r0,
            sh.t * lag
        ));
        w.indent();
        self.load_level0(w, &sh);
        if !sh.skew {
            w.line("/* Level 0's window moves on to plane p. */");
            self.move_window(w, &sh, "0", "plane");
        }
        self.levels(w, &sh);
        if sh.skew {
            w.line("/* Level 0's window moves on to plane p. */");
            self.move_window(w, &sh, "0", "plane");
        }
        w.dedent();
        w.line("}");
    }

    /// `i<a>`: the first cell of this lane's tile along each fast axis; `z0..z1`: the block's chunk.
    fn tile(&self, w: &mut CWriter, sh: &Shape) {
        let dims = sh.dims;
        let last = dims - 1;
        let width = sh.lx * sh.v - 2 * sh.r[last] * sh.t;
        let (lo, hi) = self.bounds(last);
        w.line(&format!(
            "/* This warp's tile: {} lanes of {} cells along `{}`{}; the outer {} on each side are recomputed, not stored. */",
            sh.lx,
            sh.v,
            self.st.axes[last],
            if dims == 3 {
                format!(
                    " by {} lanes of {} along `{}` (the outer {})",
                    sh.ly,
                    sh.y,
                    self.st.axes[1],
                    sh.r[1] * sh.t
                )
            } else {
                String::new()
            },
            sh.r[last] * sh.t
        ));
        w.line(&format!("const int lane = threadIdx.x % {LANES};"));
        let lane_x = if sh.ly > 1 {
            w.line(&format!(
                "const int lx = lane % {}, ly = lane / {};",
                sh.lx, sh.lx
            ));
            "lx"
        } else {
            "lane"
        };
        w.line(&format!(
            "const ptrdiff_t tile = ((ptrdiff_t)blockIdx.x * {} + threadIdx.x / {LANES}) * {width};",
            self.plan.threads() / LANES
        ));
        w.line(&format!("if ({lo} + tile >= {hi})"));
        w.line("    return;");
        w.line(&format!(
            "const ptrdiff_t i{last} = {lo} + tile - {} + {lane_x} * {};",
            sh.r[last] * sh.t,
            sh.v
        ));
        if dims == 3 {
            let (lo1, _) = self.bounds(1);
            let lane_y = if sh.ly > 1 {
                format!(" + ly * {}", sh.y)
            } else {
                String::new()
            };
            w.line(&format!(
                "const ptrdiff_t i1 = {lo1} + (ptrdiff_t)blockIdx.y * {} - {}{lane_y};",
                sh.ly * sh.y - 2 * sh.r[1] * sh.t,
                sh.r[1] * sh.t
            ));
        }
        let (lo0, hi0) = self.bounds(0);
        let chunk = self.plan.chunk;
        w.line(&format!(
            "const ptrdiff_t z0 = {lo0} + (ptrdiff_t)blockIdx.{} * {chunk};",
            builtin(0, dims)
        ));
        w.line(&format!(
            "const ptrdiff_t z1 = z0 + {chunk} < {hi0} ? z0 + {chunk} : {hi0};"
        ));
    }

    /// Per cell of the lane, along each fast axis: on the grid (`grid_*`:
    /// loaded), in the statement's region (`in_*`: updated) and in the tile's
    /// own part (`own_*`: stored).
    fn masks(&self, w: &mut CWriter, sh: &Shape) {
        let dims = sh.dims;
        let lane_x = if sh.ly > 1 { "lx" } else { "lane" };
        let mut axes = vec![(
            dims - 1,
            "x",
            "k",
            sh.v,
            format!("{lane_x} * {} + k", sh.v),
            sh.lx * sh.v,
        )];
        if dims == 3 {
            let at = if sh.ly > 1 {
                format!("ly * {} + j", sh.y)
            } else {
                "j".into()
            };
            axes.push((1, "y", "j", sh.y, at, sh.ly * sh.y));
        }
        for (a, name, var, n, at, width) in axes {
            let (lo, hi) = self.bounds(a);
            let margin = sh.r[a] * sh.t;
            w.line(&format!(
                "bool grid_{name}[{n}], in_{name}[{n}], own_{name}[{n}];"
            ));
            w.pragma("unroll");
            w.line(&format!("for (int {var} = 0; {var} < {n}; ++{var}) {{"));
            w.indent();
            w.line(&format!("const ptrdiff_t c = i{a} + {var};"));
            w.line(&format!("grid_{name}[{var}] = c >= 0 && c < n{a};"));
            w.line(&format!("in_{name}[{var}] = c >= {lo} && c < {hi};"));
            w.line(&format!(
                "own_{name}[{var}] = in_{name}[{var}] && {at} >= {margin} && {at} < {};",
                width - margin
            ));
            w.dedent();
            w.line("}");
        }
    }

    /// `plane`: plane `p` of the launch's grid (level 0), where it is on the grid.
    fn load_level0(&self, w: &mut CWriter, sh: &Shape) {
        let name = crate::codegen::rust::slot_name(self.st, self.streamed());
        w.line(
            "/* Level 0: plane p of the grid, zero off the grid (never read by a stored cell). */",
        );
        w.line(&format!("{} plane{};", self.st.dtype.c(), sh.extent()));
        w.line("const bool on_grid = p >= 0 && p < n0;");
        sh.open_cells(w);
        let inside = if sh.dims == 3 {
            "on_grid && grid_y[j] && grid_x[k]"
        } else {
            "on_grid && grid_x[k]"
        };
        w.line(&format!(
            "plane{} = {inside} ? {name}[{}] : 0;",
            sh.cell("j", "k"),
            sh.index("p")
        ));
        sh.close_cells(w);
    }

    /// Every level's next plane: the last level's is stored, the others move
    /// their window on. Chained levels go up from level 1, each reading the
    /// window the level below has just moved; skewed ones go from the last
    /// down, so that each window moves only after the level above has read it.
    fn levels(&self, w: &mut CWriter, sh: &Shape) {
        let t = self.st.dtype.c();
        if sh.skew {
            w.line(&format!(
                "/* Level s at plane q = p - {} * s, from level s - 1's window: independent of the other levels of this iteration. */",
                sh.lag
            ));
            w.pragma("unroll");
            w.line(&format!("for (int s = {}; s >= 1; --s) {{", sh.t));
        } else {
            w.line(&format!(
                "/* Level s at plane q = p - {} * s, from level s - 1's window as it just moved. */",
                sh.lag
            ));
            w.pragma("unroll");
            w.line(&format!("for (int s = 1; s <= {}; ++s) {{", sh.t));
        }
        w.indent();
        w.line(&format!("const ptrdiff_t q = p - {} * s;", sh.lag));
        let (lo0, hi0) = self.bounds(0);
        w.line(&format!(
            "const bool step = s <= levels && q >= {lo0} && q < {hi0};"
        ));
        let planes = self.neighbourhoods(sh);
        for (&m, cols) in &planes {
            self.neighbourhood(w, sh, m, cols, t);
        }
        w.line(&format!("{t} next{};", sh.extent()));
        sh.open_cells(w);
        let own = format!("win[s - 1][{}]{}", sh.r[0], sh.cell("j", "k"));
        w.line(&format!("{t} v = {own};"));
        let inside = if sh.dims == 3 {
            "step && in_y[j] && in_x[k]"
        } else {
            "step && in_x[k]"
        };
        w.line(&format!("if ({inside}) {{"));
        w.indent();
        if self.reads_inputs() {
            w.line(&format!("const ptrdiff_t c = {};", sh.index("q")));
        }
        let value = self.value(&|a: &Access| self.level_read(a, sh));
        w.line(&format!("v = {value};"));
        w.dedent();
        w.line("}");
        w.line(&format!("next{} = v;", sh.cell("j", "k")));
        sh.close_cells(w);
        w.line(&format!("if (s == {}) {{", sh.t));
        w.indent();
        self.store_level(w, sh);
        w.dedent();
        w.line("} else {");
        w.indent();
        self.move_window(w, sh, "s", "next");
        w.dedent();
        w.line("}");
        w.dedent();
        w.line("}");
    }

    /// Whether the update reads grids other than the one it streams (from global memory).
    fn reads_inputs(&self) -> bool {
        self.s.slots().iter().any(|&slot| slot != self.streamed())
    }

    /// Per window plane read, the in-plane offsets read there: `(middle, contiguous)`
    /// (the middle one 0 in 2-D).
    fn neighbourhoods(&self, sh: &Shape) -> BTreeMap<usize, BTreeSet<(i64, i64)>> {
        let mut planes: BTreeMap<usize, BTreeSet<(i64, i64)>> = BTreeMap::new();
        let streamed = self.streamed();
        self.s.expr.for_each_read(&mut |a| {
            if a.slot == streamed {
                let m = (sh.r[0] as i64 + a.offset[0]) as usize;
                let row = if sh.dims == 3 { a.offset[1] } else { 0 };
                planes
                    .entry(m)
                    .or_default()
                    .insert((row, a.offset[sh.dims - 1]));
            }
        });
        planes
    }

    /// `nb<m>`: window plane `m` of level `s - 1` around the lane's cells:
    /// its own registers, and by shuffles the neighbouring lanes' cells it reads.
    fn neighbourhood(
        &self,
        w: &mut CWriter,
        sh: &Shape,
        m: usize,
        reads: &BTreeSet<(i64, i64)>,
        t: &str,
    ) {
        let (rl, r1) = (sh.r[sh.dims - 1], if sh.dims == 3 { sh.r[1] } else { 0 });
        let v = sh.v as i64;
        let span = |pick: fn(&(i64, i64)) -> i64| {
            let lo = reads.iter().map(pick).min().unwrap_or(0);
            let hi = reads.iter().map(pick).max().unwrap_or(0);
            (lo, hi)
        };
        let (lo, hi) = span(|r| r.1);
        let outside: BTreeSet<i64> = (lo..v + hi).filter(|c| !(0..v).contains(c)).collect();
        let (row_lo, row_hi) = span(|r| r.0);
        let rows = if sh.dims == 3 {
            format!("[{}]", sh.y + 2 * r1)
        } else {
            String::new()
        };
        w.line(&format!(
            "{t} nb{m}{rows}[{}]; /* plane {}; the lane's cell k at [k + {rl}] */",
            sh.v + 2 * rl,
            shifted("q", m as i64 - sh.r[0] as i64)
        ));
        // With lanes along the middle axis too, the lane's own rows first, then
        // the rows beyond them from the lanes above and below.
        let lanes_y = sh.ly > 1;
        let (first, end) = if lanes_y {
            (0, sh.y as i64)
        } else {
            (row_lo, sh.y as i64 + row_hi)
        };
        let (row, src_row) = if sh.dims == 3 {
            w.pragma("unroll");
            w.line(&format!("for (int j = {first}; j < {end}; ++j) {{"));
            w.indent();
            if first == 0 && end == sh.y as i64 {
                (format!("[j + {r1}]"), "[j]".to_string())
            } else {
                w.line(&format!(
                    "const int jj = j < 0 ? 0 : j >= {y} ? {y} - 1 : j; /* rows off the lane's own are never read by a stored cell */",
                    y = sh.y
                ));
                (format!("[j + {r1}]"), "[jj]".to_string())
            }
        } else {
            (String::new(), String::new())
        };
        w.pragma("unroll");
        w.line(&format!("for (int k = 0; k < {}; ++k)", sh.v));
        w.line(&format!(
            "    nb{m}{row}[k + {rl}] = win[s - 1][{m}]{src_row}[k];"
        ));
        for c in outside {
            let lanes = c.div_euclid(v);
            let from = format!("win[s - 1][{m}]{src_row}[{}]", c.rem_euclid(v));
            let moved = self.d.shuffle(&from, lanes, sh.lx);
            w.line(&format!("nb{m}{row}[{}] = {moved};", c + rl as i64));
        }
        if sh.dims == 3 {
            w.dedent();
            w.line("}");
        }
        if !lanes_y {
            return;
        }
        let y = sh.y as i64;
        for j in (row_lo..0).chain(y..y + row_hi) {
            let from = format!("nb{m}[{}][k + {rl}]", j.rem_euclid(y) + r1 as i64);
            let moved = self.d.shuffle(&from, j.div_euclid(y) * sh.lx as i64, LANES);
            w.pragma("unroll");
            w.line(&format!(
                "for (int k = {}; k < {}; ++k)",
                lo.min(0),
                v + hi.max(0)
            ));
            w.line(&format!(
                "    nb{m}[{}][k + {rl}] = {moved};",
                j + r1 as i64
            ));
        }
    }

    /// A read in a level's update: the streamed grid from a neighbourhood, inputs from global memory.
    fn level_read(&self, a: &Access, sh: &Shape) -> String {
        if a.slot != self.streamed() {
            let buf = crate::codegen::rust::slot_name(self.st, a.slot);
            return format!("{buf}[{}]", offset_index(&a.offset));
        }
        let last = sh.dims - 1;
        let m = sh.r[0] as i64 + a.offset[0];
        let k = shifted("k", sh.r[last] as i64 + a.offset[last]);
        if sh.dims == 3 {
            let j = shifted("j", sh.r[1] as i64 + a.offset[1]);
            format!("nb{m}[{j}][{k}]")
        } else {
            format!("nb{m}[{k}]")
        }
    }

    /// Moves the window of level `level` on by one plane: the oldest drops out, `plane` comes in.
    fn move_window(&self, w: &mut CWriter, sh: &Shape, level: &str, plane: &str) {
        let last = sh.planes() - 1;
        let at = sh.cell("j", "k");
        sh.open_cells(w);
        for m in 0..last {
            w.line(&format!(
                "win[{level}][{m}]{at} = win[{level}][{}]{at};",
                m + 1
            ));
        }
        w.line(&format!("win[{level}][{last}]{at} = {plane}{at};"));
        sh.close_cells(w);
    }

    /// Stores the last level's plane `q` where it is in the block's chunk and the tile's own part.
    fn store_level(&self, w: &mut CWriter, sh: &Shape) {
        w.line("/* The last level: stored where it is this block's and this tile's own. */");
        w.line("if (q >= z0 && q < z1) {");
        w.indent();
        sh.open_cells(w);
        let own = if sh.dims == 3 {
            "own_y[j] && own_x[k]"
        } else {
            "own_x[k]"
        };
        w.line(&format!("if ({own})"));
        w.line(&format!(
            "    out[{}] = next{};",
            sh.index("q"),
            sh.cell("j", "k")
        ));
        sh.close_cells(w);
        w.dedent();
        w.line("}");
    }

    /// Launches the `temporal` kernel over the region for `levels` steps.
    pub(super) fn temporal_launch(&self, w: &mut CWriter) {
        let sh = self.shape();
        let dims = sh.dims;
        let last = dims - 1;
        let extent = |a: usize| {
            let (lo, hi) = self.bounds(a);
            if lo == "0" {
                hi
            } else {
                format!("({hi} - {lo})")
            }
        };
        let width = sh.lx * sh.v - 2 * sh.r[last] * sh.t;
        let per_block = self.plan.threads() / LANES;
        let mut blocks = vec![format!(
            "(({} + {width} - 1) / {width} + {per_block} - 1) / {per_block}",
            extent(last)
        )];
        if dims == 3 {
            let rows = sh.ly * sh.y - 2 * sh.r[1] * sh.t;
            blocks.push(format!("({} + {rows} - 1) / {rows}", extent(1)));
        }
        let chunk = self.plan.chunk;
        blocks.push(format!("({} + {chunk} - 1) / {chunk}", extent(0)));
        let arguments = format!("{}, levels", self.arguments());
        self.launch_lines(w, &self.plan.threads().to_string(), &blocks, &arguments);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CUDA, HIP, fit, resolve, source};
    use crate::ir::Stencil;

    /// A `temporal` stencil of `axes` updating `u` with `expr`, with `tiling` added to `[tiling.cuda]`.
    fn stencil(axes: &str, expr: &str, tiling: &str) -> Stencil {
        let text = format!(
            "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [{axes}]\n[fields]\nu = {{ role = \"state\" }}\n\
             k = {{ role = \"input\" }}\n[[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n\
             [tiling.cuda]\nstrategy = \"temporal\"\n{tiling}"
        );
        let src = crate::spec::Source {
            path: "s.stencil.toml".into(),
            text,
        };
        crate::ir::lower(&crate::spec::parse(&src).unwrap(), &src).unwrap()
    }

    fn cuda(st: &Stencil) -> Result<String, String> {
        let plan = resolve(&st.tiling.cuda, st, &CUDA).and_then(|p| fit(p, false, st, &CUDA))?;
        Ok(source(st, &crate::analysis::analyse(st), &plan, "p", &CUDA))
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
        assert!(code.contains("const ptrdiff_t q = p - 1 * s;"), "{code}");
        assert!(
            code.contains("const bool step = s <= levels && q >= 1 && q < n0 - 1;"),
            "{code}"
        );
        assert!(code.contains("const float *cur_k, int levels)"), "{code}");
        // The input comes from global memory at the cell the step computes.
        assert!(code.contains("+ cur_k[c];"), "{code}");
        assert_eq!(
            code.matches("__global__").count(),
            1,
            "one kernel for every step count"
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
    fn wide_reach_shuffles_across_lanes_and_3d_rows_stay_in_the_lane() {
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
        let st = stencil(
            "\"z\", \"y\", \"x\"",
            "u[-1,0,0] + u[0,-1,0] + u[0,1,0] + u[1,0,0]",
            "time_block = 2\ncoarsen = 9\nblock = [1, 1, 128]\n",
        );
        let code = cuda(&st).unwrap();
        assert!(!code.contains("__shfl"), "nothing read along x: {code}");
        assert!(
            code.contains("v = nb0[j + 1][k] + nb1[j][k] + nb1[j + 2][k] + nb2[j + 1][k];"),
            "{code}"
        );
        assert!(
            code.contains("own_y[j] = in_y[j] && j >= 2 && j < 7;"),
            "{code}"
        );
        // With 4 lanes along `y`, rows beyond the lane's come from the lanes above and below.
        let st = stencil(
            "\"z\", \"y\", \"x\"",
            "u[-1,0,0] + u[0,-1,0] + u[0,1,0] + u[1,0,0]",
            "time_block = 2\ncoarsen = 3\nblock = [1, 4, 32]\n",
        );
        let code = cuda(&st).unwrap();
        for line in [
            "const int lx = lane % 8, ly = lane / 8;",
            "nb1[0][k + 0] = __shfl_up_sync(0xffffffffu, nb1[3][k + 0], 8, 32);",
            "nb1[4][k + 0] = __shfl_down_sync(0xffffffffu, nb1[1][k + 0], 8, 32);",
            "own_y[j] = in_y[j] && ly * 3 + j >= 2 && ly * 3 + j < 10;",
        ] {
            assert!(code.contains(line), "{line}: {code}");
        }
    }

    #[test]
    fn tiles_that_would_store_nothing_are_refused() {
        let st = stencil(
            "\"z\", \"y\", \"x\"",
            "u[0,-2,0] + u[0,0,1]",
            "time_block = 3\ncoarsen = 12\nblock = [1, 1, 128]\n",
        );
        let err = cuda(&st).unwrap_err();
        assert!(err.contains("recomputes 12 cells along `y`"), "{err}");
        assert!(
            err.contains("lower `time_block` or raise `coarsen`"),
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
