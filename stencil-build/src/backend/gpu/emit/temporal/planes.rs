//! 3-D `temporal`: planes of every fused step in shared memory.
//!
//! A block of `block[2] x block[1]` threads owns a tile of the two fast
//! axes, each thread one column of the contiguous axis and `coarsen` rows
//! of the middle one, and marches through `chunk` planes of the slowest
//! axis. A thread keeps its own column of each level (fused step) in
//! registers, a window of the planes the level above reads along the
//! slowest axis. Levels are skewed: level `s` works `radius + 1` planes
//! behind level `s - 1`, on planes the level below finished in earlier
//! iterations, so the levels of one iteration are independent and one
//! barrier per plane separates what an iteration writes to shared memory
//! from what the next one reads. Every level but the last publishes, from
//! its window, the plane the level above will read in-plane neighbours
//! from in the next iteration, into a ring of planes in shared memory: two
//! planes for a star (neighbours in the plane being computed), one more per
//! further plane with in-plane neighbours (a box of radius 1: four). Tiles
//! overlap by `time_block x radius` cells on each side along both fast
//! axes, which are recomputed, not stored.

use std::fmt::{self, Write as _};

use super::super::Gen;
use crate::backend::Writer;
use crate::backend::gpu::plan::temporal::planes::Planes;
use crate::backend::gpu::plan::temporal::variants;
use crate::ir::Access;

impl Gen<'_> {
    pub(in crate::backend::gpu) fn planes_shape(&self) -> Planes {
        Planes::new(self.plan, self.st, self.d.shared_max)
    }

    /// `ring`, the block's rings of planes in its dynamic shared memory
    /// (`ring[s][m]`: level `s` at the planes whose index is `m` modulo the
    /// slots, padded by the radius on each side), zeroed before the loop.
    pub(in crate::backend::gpu) fn planes_rings(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        let ty = self.st.dtype.c();
        let [py, px] = sh.padded();
        let slots = sh.slots();
        if sh.sums {
            writeln!(
                w,
                "/* ring[s][m]: level s at the planes p0 + m modulo {slots}. A row holds the threads' first columns, then their second \
                 ones, each half with a pad of 1 on both sides: column k of thread tx at k * {} + tx + 1. */",
                sh.bx + 2
            )?;
        } else {
            writeln!(
                w,
                "/* ring[s][m]: level s at the planes whose index is m modulo {slots}, row and column offset by the pad of {} and {}. */",
                sh.r[1], sh.r[2]
            )?;
        }
        writeln!(w, "extern __shared__ __align__(16) unsigned char shared[];")?;
        writeln!(
            w,
            "{ty} (*const ring)[{slots}][{py}][{px}] = ({ty} (*)[{slots}][{py}][{px}])shared;"
        )?;
        w.guarded(
            format_args!(
                "for (int e = threadIdx.y * {} + threadIdx.x; e < {}; e += {})",
                sh.bx,
                sh.t * slots * py * px,
                sh.bx * sh.by
            ),
            "(&ring[0][0][0][0])[e] = 0;",
        )?;
        writeln!(w, "__syncthreads();")?;
        Ok(())
    }

    /// The body of a 3-D `temporal` kernel (see the module documentation).
    pub(in crate::backend::gpu) fn planes(&self, w: &mut Writer) -> fmt::Result {
        let sh = self.planes_shape();
        let ty = self.st.dtype.c();
        self.planes_tile(w, &sh)?;
        self.planes_masks(w, &sh)?;
        let slots = sh.slots();
        self.ring_place(w)?;
        self.planes_rings(w, &sh)?;
        let (r0, lag) = (sh.r[0], sh.lag());
        writeln!(
            w,
            "/* win[s][m][j]: the thread's row j of level s at plane p - 1 - {lag} * s - {} + m, at the start of iteration p. */",
            2 * r0
        )?;
        writeln!(w, "{ty} win[{}][{}][{}] = {{}};", sh.t, 2 * r0 + 1, sh.c)?;
        self.declare_old(w, true, sh.c)?;
        let start = format!("z0 - {}", sh.t * r0);
        writeln!(
            w,
            "unsigned slot = (unsigned)((({start}) % {slots} + {slots}) % {slots}); /* ring slot of plane p */"
        )?;
        // The next plane is loaded an iteration ahead, so that the barrier
        // of every plane does not wait for memory. Two planes ahead measured
        // 0.64x-1.07x of one on the 3-D suite (registers), star3d25 1.3x-1.5x
        // (still slower than `stream`).
        writeln!(
            w,
            "/* ahead: the thread's rows of the plane the next iteration computes from. */"
        )?;
        writeln!(w, "{ty} ahead[{}];", sh.c)?;
        self.planes_load(w, &sh, &start)?;
        self.planes_declare_inputs(w, &sh, &start)?;
        if sh.unrolled() {
            writeln!(
                w,
                "/* Unrolled by the {} planes of a window, whose registers then move on by renaming. */",
                sh.window()
            )?;
            w.pragma(&format!("unroll {}", sh.window()))?;
        }
        let head = format!(
            "for ({} p = {start}; p < z1 + {}; ++p)",
            self.index(),
            sh.t * lag
        );
        w.block(head, |w| {
            writeln!(
                w,
                "/* Level 0: plane p, loaded in the iteration before; plane p + 1 loads while this one computes. */"
            )?;
            writeln!(w, "{ty} cell[{}];", sh.c)?;
            w.pragma("unroll")?;
            let head = format!("for (int j = 0; j < {}; ++j)", sh.c);
            w.guarded(head, "cell[j] = ahead[j];")?;
            self.planes_load(w, &sh, "p + 1")?;
            self.planes_take_inputs(w, &sh)?;
            self.planes_levels(w, &sh)?;
            writeln!(w, "/* Level 0's window moves on to plane p. */")?;
            self.planes_move(w, &sh, "0", "cell")?;
            self.planes_publish(w, &sh, "0")?;
            writeln!(w, "slot = slot + 1 == {slots} ? 0 : slot + 1;")?;
            writeln!(w, "__syncthreads();")?;
            Ok(())
        })?;
        Ok(())
    }

    /// `i1`, `i2`: the thread's first cell along the fast axes; `z0..z1`: the block's chunk.
    pub(super) fn planes_tile(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        let [rows, cols] = sh.tile();
        let [stored_y, stored_x] = sh.stored();
        let (m1, m2) = (sh.r[1] * sh.t, sh.r[2] * sh.t);
        // A z-sums thread owns `v` neighbouring columns.
        let (columns, column) = if sh.sums {
            (
                format!(" ({} neighbouring columns each)", sh.v),
                format!("threadIdx.x * {}", sh.v),
            )
        } else {
            (String::new(), "threadIdx.x".to_string())
        };
        writeln!(
            w,
            "/* This block's tile: {} threads along `{}`{columns} by {} along `{}` ({} rows each): {cols} x {rows} cells, the outer {m2} and {m1} on each side recomputed, not stored. */",
            sh.bx, self.st.axes[2], sh.by, self.st.axes[1], sh.c
        )?;
        let (lo2, _) = self.bounds(2);
        let (lo1, _) = self.bounds(1);
        let ix = self.index();
        writeln!(
            w,
            "const {ix} i2 = {lo2} + ({ix}){} * {stored_x} - {m2} + {column};",
            self.block_coordinate("x")
        )?;
        writeln!(
            w,
            "const {ix} i1 = {lo1} + ({ix}){} * {stored_y} - {m1} + threadIdx.y * {};",
            self.block_coordinate("y"),
            sh.c
        )?;
        self.chunk_bounds(w)
    }

    /// Per row of the thread and for its column: in the statement's region
    /// (updated), in the tile's own part (stored) and, where the loads take
    /// a predicate, on the grid (loaded); where they clamp
    /// ([`Planes::clamped`]), the row's offset in a plane, clamped to the
    /// grid (`row_at`). Predicated kernels keep arrays of `bool` (`grid_y`,
    /// `in_y`, `own_y`, with `grid_x`, `in_x`, `own_x` for the column);
    /// clamped ones a word of bits each (`in_rows`, `own_rows`, bit `j` for
    /// row `j`), which kept j3d27pt f64 from spilling (188.2 GCells/s; 139.3
    /// with clamped loads and the arrays). With
    /// predicated loads the arrays measured faster (j3d27pt f64 186.8
    /// against 134.9 with bits, j3d7pt f32 645.6 against 578.8; H100).
    fn planes_masks(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        if sh.wrap {
            return self.planes_wrapped_masks(w, sh);
        }
        let [rows, cols] = sh.tile();
        let (lo1, hi1) = self.bounds(1);
        let (lo2, hi2) = self.bounds(2);
        let (m1, m2, c) = (sh.r[1] * sh.t, sh.r[2] * sh.t, sh.c);
        let ix = self.index();
        let clamped = sh.clamped();
        // A tile with no margin along an axis owns from its first thread: no
        // lower test (an unsigned index is never below 0).
        let own = |at: &str, margin: usize, end: usize| match margin {
            0 => format!("{at} < {end}"),
            m => format!("{at} >= {m} && {at} < {end}"),
        };
        let own_row = own(&format!("threadIdx.y * {c} + j"), m1, rows - m1);
        if clamped {
            writeln!(w, "const bool in_x = i2 >= {lo2} && i2 < {hi2};")?;
        } else {
            writeln!(
                w,
                "const bool grid_x = i2 >= 0 && i2 < n2, in_x = i2 >= {lo2} && i2 < {hi2};"
            )?;
        }
        writeln!(
            w,
            "const bool own_x = in_x && {};",
            own("threadIdx.x", m2, cols - m2)
        )?;
        if clamped {
            writeln!(
                w,
                "const {ix} x = i2 < 0 ? 0 : i2 < n2 ? i2 : n2 - 1; /* the column, clamped to the grid */"
            )?;
            writeln!(
                w,
                "/* Bit j: row j, in this column, in the region (in_rows) and the tile's own part (own_rows). */"
            )?;
            writeln!(w, "unsigned in_rows = 0, own_rows = 0;")?;
            writeln!(
                w,
                "{ix} row_at[{c}]; /* row j's offset in a plane, clamped to the grid */"
            )?;
        } else {
            writeln!(w, "bool grid_y[{c}], in_y[{c}], own_y[{c}];")?;
        }
        w.pragma("unroll")?;
        w.block(format_args!("for (int j = 0; j < {c}; ++j)"), |w| {
            writeln!(w, "const {ix} c = i1 + j;")?;
            if clamped {
                writeln!(
                    w,
                    "in_rows |= (unsigned)(in_x && c >= {lo1} && c < {hi1}) << j;"
                )?;
                writeln!(
                    w,
                    "own_rows |= (unsigned)(own_x && c >= {lo1} && c < {hi1} && {own_row}) << j;"
                )?;
                writeln!(w, "row_at[j] = (c < 0 ? 0 : c < n1 ? c : n1 - 1) * s1 + x;")?;
            } else {
                writeln!(w, "grid_y[j] = c >= 0 && c < n1;")?;
                writeln!(w, "in_y[j] = c >= {lo1} && c < {hi1};")?;
                writeln!(w, "own_y[j] = in_y[j] && {own_row};")?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// [`Self::planes_masks`] on a periodic grid, where every cell is
    /// updated: for its column and each row, in the tile's own part and on
    /// the grid (`own_rows`, bit `j` for row `j`), and the row's offset in a
    /// plane, wrapped onto the grid (`row_at`).
    fn planes_wrapped_masks(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        let [rows, cols] = sh.tile();
        let (m1, m2, c) = (sh.r[1] * sh.t, sh.r[2] * sh.t, sh.c);
        let ix = self.index();
        writeln!(
            w,
            "const bool own_x = i2 >= 0 && i2 < n2 && threadIdx.x >= {m2} && threadIdx.x < {};",
            cols - m2
        )?;
        writeln!(
            w,
            "const {ix} x = ({ix})stencil_mod(i2, n2); /* the column, wrapped onto the grid */"
        )?;
        writeln!(
            w,
            "/* Bit j: row j, in this column, on the grid and the tile's own part. */"
        )?;
        writeln!(w, "unsigned own_rows = 0;")?;
        writeln!(
            w,
            "{ix} row_at[{c}]; /* row j's offset in a plane, wrapped onto the grid */"
        )?;
        w.pragma("unroll")?;
        w.block(format_args!("for (int j = 0; j < {c}; ++j)"), |w| {
            writeln!(w, "const {ix} c = i1 + j;")?;
            writeln!(
                w,
                "own_rows |= (unsigned)(own_x && c >= 0 && c < n1 && threadIdx.y * {c} + j >= {m1} && threadIdx.y * {c} + j < {}) << j;",
                rows - m1
            )?;
            writeln!(w, "row_at[j] = ({ix})stencil_mod(c, n1) * s1 + x;")
        })?;
        Ok(())
    }

    /// The thread's place in the rings (`tx`, `ty`), through the coordinates
    /// the compiler cannot see through.
    pub(in crate::backend::gpu) fn ring_place(&self, w: &mut Writer) -> fmt::Result {
        writeln!(
            w,
            "/* The thread's place in the rings (see `stencil_thread_x`). */"
        )?;
        writeln!(
            w,
            "const unsigned tx = stencil_thread_x(), ty = stencil_thread_y();"
        )
    }

    /// `ahead`: the thread's rows of plane `plane` of the launch's grid
    /// (level 0): zero off the grid, or where the loads clamp
    /// ([`Planes::clamped`]) the nearest cell on it. Cells off the grid are
    /// read only by cells outside the region, which keep their value.
    fn planes_load(&self, w: &mut Writer, sh: &Planes, plane: &str) -> fmt::Result {
        let name = crate::codegen::names::slot_name(self.st, self.streamed());
        let ix = self.index();
        w.braces(|w| {
            writeln!(w, "const {ix} z = {plane};")?;
            if sh.wrap {
                writeln!(w, "const {ix} plane_at = ({ix})stencil_mod(z, n0) * s0;")?;
            } else if sh.clamped() {
                writeln!(
                    w,
                    "const {ix} plane_at = (z < 0 ? 0 : z < n0 ? z : n0 - 1) * s0;"
                )?;
            }
            if sh.clamped() {
                w.pragma("unroll")?;
                w.guarded(
                    format_args!("for (int j = 0; j < {}; ++j)", sh.c),
                    format_args!("ahead[j] = {name}[plane_at + row_at[j]];"),
                )?;
            } else {
                writeln!(w, "const bool on_grid = z >= 0 && z < n0;")?;
                w.pragma("unroll")?;
                w.guarded(
                    format_args!("for (int j = 0; j < {}; ++j)", sh.c),
                    format_args!(
                        "ahead[j] = on_grid && grid_y[j] && grid_x ? {name}[{}] : 0;",
                        planes_index("z")
                    ),
                )?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// The reads of input grids in a level's update (and of a leapfrog's
    /// previous level, [`Self::is_own_prev`]), each once: the kernel loads
    /// them an iteration ahead, like the streamed grid.
    pub(in crate::backend::gpu) fn planes_inputs(&self) -> Vec<Access> {
        crate::backend::gpu::plan::temporal::input_reads(self.s)
    }

    /// `in_ahead<i>[s - 1][j]` (input read `i` of [`Self::planes_inputs`] by
    /// level `s`) and `prev_ahead[j]` (a leapfrog's previous level, read by
    /// the first level that steps): declared, and loaded for iteration `p`.
    fn planes_declare_inputs(&self, w: &mut Writer, sh: &Planes, p: &str) -> fmt::Result {
        if !self.reads_inputs() {
            return Ok(());
        }
        let ty = self.st.dtype.c();
        writeln!(
            w,
            "/* The input grids' cells the levels read in the next iteration, loaded an iteration ahead. */"
        )?;
        for (i, a) in self.planes_inputs().iter().enumerate() {
            if self.is_own_prev(a) {
                writeln!(
                    w,
                    "{ty} prev_ahead[{}]; /* the previous level, for the first level that steps */",
                    sh.c
                )?;
            } else {
                writeln!(
                    w,
                    "{ty} in_ahead{i}[{}][{}]; /* {} */",
                    sh.t,
                    sh.c,
                    crate::codegen::names::slot_name(self.st, a.slot)
                )?;
            }
        }
        self.planes_load_inputs(w, sh, p)
    }

    /// Loads the input reads of iteration `p` into `in_ahead<i>` and
    /// `prev_ahead`, zero where the level computes no cell (never read); on
    /// a periodic grid every cell, each coordinate wrapped.
    fn planes_load_inputs(&self, w: &mut Writer, sh: &Planes, p: &str) -> fmt::Result {
        let (lo0, hi0) = self.bounds(0);
        let ix = self.index();
        let lag = sh.lag();
        let on = |w: &mut Writer| -> fmt::Result {
            if sh.wrap {
                return Ok(());
            }
            writeln!(w, "const bool on = q >= {lo0} && q < {hi0};")
        };
        let load = |w: &mut Writer, a: &Access, target: &str| -> fmt::Result {
            let buf = crate::codegen::names::slot_name(self.st, a.slot);
            w.pragma("unroll")?;
            w.block(format_args!("for (int j = 0; j < {}; ++j)", sh.c), |w| {
                if sh.wrap {
                    return writeln!(w, "{target} = {buf}[{}];", self.wrapped_read(&a.offset));
                }
                writeln!(w, "const {ix} c = {};", planes_index("q"))?;
                writeln!(
                    w,
                    "{target} = on && {} ? {buf}[{}] : 0;",
                    sh.inside(),
                    crate::codegen::index::offset_index(&a.offset)
                )
            })?;
            Ok(())
        };
        for (i, a) in self.planes_inputs().iter().enumerate() {
            w.braces(|w| {
                if self.is_own_prev(a) {
                    writeln!(w, "const {ix} q = {p} - {lag} * ({} - levels);", sh.t + 1)?;
                    on(w)?;
                    load(w, a, "prev_ahead[j]")?;
                } else {
                    w.pragma("unroll")?;
                    let head = format!("for (int s = 1; s <= {}; ++s)", sh.t);
                    w.block(head, |w| {
                        writeln!(w, "const {ix} q = {p} - {lag} * s;")?;
                        on(w)?;
                        load(w, a, &format!("in_ahead{i}[s - 1][j]"))?;
                        Ok(())
                    })?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    /// `in<i>` and `prev_in`: this iteration's input reads, loaded in the
    /// iteration before; the next iteration's load while this one computes.
    fn planes_take_inputs(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        if !self.reads_inputs() {
            return Ok(());
        }
        let ty = self.st.dtype.c();
        writeln!(
            w,
            "/* This iteration's input reads; the next iteration's load while it computes. */"
        )?;
        for (i, a) in self.planes_inputs().iter().enumerate() {
            if self.is_own_prev(a) {
                writeln!(w, "{ty} prev_in[{}];", sh.c)?;
                w.pragma("unroll")?;
                w.guarded(
                    format_args!("for (int j = 0; j < {}; ++j)", sh.c),
                    "prev_in[j] = prev_ahead[j];",
                )?;
                continue;
            }
            writeln!(w, "{ty} in{i}[{}][{}];", sh.t, sh.c)?;
            w.pragma("unroll")?;
            w.block(format_args!("for (int s = 0; s < {}; ++s)", sh.t), |w| {
                w.pragma("unroll")?;
                w.guarded(
                    format_args!("for (int j = 0; j < {}; ++j)", sh.c),
                    format_args!("in{i}[s][j] = in_ahead{i}[s][j];"),
                )
            })?;
        }
        self.planes_load_inputs(w, sh, "p + 1")
    }

    /// Every level's plane of this iteration, from the last down: the last
    /// level's is stored, the others go to their ring and window.
    fn planes_levels(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        let t = self.st.dtype.c();
        let lag = sh.lag();
        writeln!(
            w,
            "/* Level s at plane q = p - {lag} * s, from what level s - 1 finished in earlier iterations. */"
        )?;
        w.pragma("unroll")?;
        w.block(format_args!("for (int s = {}; s >= 1; --s)", sh.t), |w| {
            writeln!(w, "const {} q = p - {lag} * s;", self.index())?;
            let (lo0, hi0) = self.bounds(0);
            // A periodic grid updates every plane: the rows off it are the far side's.
            let planes = if sh.wrap {
                String::new()
            } else {
                format!(" && q >= {lo0} && q < {hi0}")
            };
            writeln!(w, "const bool step = {}{planes};", self.real_level())?;
            for &dz in &sh.reads {
                writeln!(
                    w,
                    "const unsigned at{} = {}; /* plane {} */",
                    plane_name(dz),
                    sh.slot(dz, "s"),
                    super::super::shifted("q", dz)
                )?;
            }
            writeln!(w, "{t} next[{}];", sh.c)?;
            w.pragma("unroll")?;
            w.block(format_args!("for (int j = 0; j < {}; ++j)", sh.c), |w| {
                self.level_cell(
                    w,
                    &format!("win[s - 1][{}][j]", sh.r[0]),
                    &if sh.wrap {
                        "step".to_string()
                    } else {
                        format!("step && {}", sh.inside())
                    },
                    None,
                    &|a: &Access| self.planes_read(a, sh),
                    sh.unrolled(),
                )?;
                writeln!(w, "next[j] = v;")?;
                Ok(())
            })?;
            let last = |w: &mut Writer| {
                writeln!(
                    w,
                    "/* The last level: stored where it is this block's and this tile's own. */"
                )?;
                w.block("if (q >= z0 && q < z1)", |w| {
                    w.pragma("unroll")?;
                    writeln!(w, "for (int j = 0; j < {}; ++j)", sh.c)?;
                    w.scope(|w| {
                        w.block(format_args!("if ({})", sh.own()), |w| {
                            writeln!(w, "out[{}] = next[j];", planes_index("q"))?;
                            if self.leapfrog() {
                                writeln!(
                                    w,
                                    "out_prev[{}] = win[s - 1][{}][j];",
                                    planes_index("q"),
                                    sh.r[0]
                                )?;
                            }
                            Ok(())
                        })
                    })
                })
            };
            let below = |w: &mut Writer| {
                self.planes_move(w, sh, "s", "next")?;
                self.planes_publish(w, sh, "s")
            };
            w.if_else(format_args!("if (s == {})", sh.t), last, below)?;
            Ok(())
        })?;
        Ok(())
    }

    /// A read in a level's update: the thread's own column from its window,
    /// other cells of the streamed grid from the ring, inputs from global memory.
    /// The thread's own rows of its column (`dx == 0`) come from the window
    /// where row `j + dy` is one of them: for f32 the rings' loads bound the
    /// speed (4 in-plane reads of 4 bytes per cell and level on j3d7pt, the
    /// shared memory's 128 bytes per clock and multiprocessor), and this
    /// leaves `2 + 2 / coarsen` of them.
    fn planes_read(&self, a: &Access, sh: &Planes) -> String {
        if a.slot != self.streamed() {
            let ahead = if self.is_own_prev(a) {
                "prev_in[j]".to_string()
            } else {
                let i = self
                    .planes_inputs()
                    .iter()
                    .position(|b| b == a)
                    .unwrap_or(0);
                format!("in{i}[s - 1][j]")
            };
            return self.prev_read(a, ahead, &|s| format!("old[{s}][j]"));
        }
        let [dz, dy, dx] = [a.offset[0], a.offset[1], a.offset[2]];
        let m = sh.r[0] as i64 + dz;
        if (dy, dx) == (0, 0) {
            return format!("win[s - 1][{m}][j]");
        }
        let row = super::super::shifted(&format!("ty * {} + j", sh.c), sh.r[1] as i64 + dy);
        let col = super::super::shifted("tx", sh.r[2] as i64 + dx);
        let ring = format!("ring[s - 1][at{}][{row}][{col}]", plane_name(dz));
        let c = sh.c as i64;
        if dx != 0 || dy.abs() >= c {
            return ring;
        }
        let own = if dy < 0 {
            format!("j >= {}", -dy)
        } else {
            format!("j < {}", c - dy)
        };
        format!(
            "({own} ? win[s - 1][{m}][{}] : {ring})",
            super::super::shifted("j", dy)
        )
    }

    /// Publishes the plane of level `level` that the level above reads
    /// in-plane neighbours from first in the next iteration, from the window.
    fn planes_publish(&self, w: &mut Writer, sh: &Planes, level: &str) -> fmt::Result {
        let (_, hi) = sh.span();
        let m = sh.r[0] as i64 + hi;
        writeln!(
            w,
            "/* Level {level}'s plane {} (window plane {m}) for the level above, whose next iteration reads it. */",
            super::super::shifted(if level == "0" { "p" } else { "q" }, hi - sh.r[0] as i64)
        )?;
        let slot = sh.slot(hi - sh.r[0] as i64, level);
        w.pragma("unroll")?;
        w.guarded(
            format_args!("for (int j = 0; j < {}; ++j)", sh.c),
            format_args!("{} = win[{level}][{m}][j];", ring_cell(sh, level, &slot)),
        )
    }

    /// Moves the window of level `level` on by one plane: the oldest drops out, `plane` comes in.
    fn planes_move(&self, w: &mut Writer, sh: &Planes, level: &str, plane: &str) -> fmt::Result {
        super::shift_window(
            w,
            level,
            plane,
            sh.window(),
            sh.c,
            "j",
            self.keeps_old(true),
        )
    }

    /// The blocks a multiprocessor keeps resident at least, as the second
    /// launch bound: [`variants::resident_blocks`].
    pub(in crate::backend::gpu) fn resident_blocks(&self) -> Option<usize> {
        variants::resident_blocks(self.plan, self.st, self.d, self.wide)
    }

    /// One block per tile of the region, along CUDA's `x`, `y` and `z`, in
    /// chunks of `chunk` (a C expression) planes.
    pub(in crate::backend::gpu) fn planes_grid(&self, chunk: &str) -> Vec<String> {
        let [stored_y, stored_x] = self.planes_shape().stored();
        vec![
            format!("({} + {stored_x} - 1) / {stored_x}", self.extent(2)),
            format!("({} + {stored_y} - 1) / {stored_y}", self.extent(1)),
            format!("({} + {chunk} - 1) / {chunk}", self.extent(0)),
        ]
    }

    /// The dynamic shared memory a fused kernel's block takes (the rings of
    /// 3-D tiles, none in 2-D); where that is more than a block gets without
    /// asking, the launcher first asks for it and returns the runtime's error.
    pub(in crate::backend::gpu) fn allow_shared(
        &self,
        w: &mut Writer,
    ) -> Result<usize, fmt::Error> {
        if self.dims() != 3 {
            return Ok(0);
        }
        let bytes = if self.rings() {
            self.rings_shape().shared_bytes()
        } else {
            self.planes_shape().shared_bytes(self.st.dtype.size())
        };
        let api = self.d.api;
        if bytes > crate::backend::gpu::plan::SHARED_BUDGET {
            writeln!(
                w,
                "/* {bytes} bytes of shared memory: more than a block gets without asking. */"
            )?;
            writeln!(w, "{api}Error_t allowed = {api}Success;")?;
            for instance in self.instances() {
                let head = format!("if (allowed == {api}Success)");
                w.guarded(head, format_args!("allowed = {api}FuncSetAttribute((const void *){instance}, {api}FuncAttributeMaxDynamicSharedMemorySize, {bytes});"))?;
            }
            w.guarded(
                format_args!("if (allowed != {api}Success)"),
                "return (int)allowed;",
            )?;
        }
        Ok(bytes)
    }
}

/// The name of the ring slot index of plane `q + dz`: `at0` for `q`, `at_1` for `q - 1`.
fn plane_name(dz: i64) -> String {
    if dz < 0 {
        format!("_{}", -dz)
    } else {
        dz.to_string()
    }
}

/// The flat grid index of the thread's row `j` at plane `plane`.
fn planes_index(plane: &str) -> String {
    format!("{plane} * s0 + (i1 + j) * s1 + i2")
}

impl Gen<'_> {
    /// The index of a read at `offset` from the thread's row `j` in plane
    /// `q` of a periodic grid: the plane and, where they move, the row and
    /// column wrapped onto the grid (`row_at[j]` where neither does).
    fn wrapped_read(&self, offset: &[i64]) -> String {
        let ix = self.index();
        let wrap = |i: String, n: &str| format!("({ix})stencil_mod({i}, {n})");
        let plane = wrap(super::super::shifted("q", offset[0]), "n0");
        let in_plane = if offset[1] == 0 && offset[2] == 0 {
            "row_at[j]".to_string()
        } else {
            format!(
                "{} * s1 + {}",
                wrap(super::super::shifted("i1 + j", offset[1]), "n1"),
                wrap(super::super::shifted("i2", offset[2]), "n2")
            )
        };
        format!("{plane} * s0 + {in_plane}")
    }
}

/// The thread's cell of row `j` in level `level`'s ring slot `slot`.
fn ring_cell(sh: &Planes, level: &str, slot: &str) -> String {
    format!(
        "ring[{level}][{slot}][ty * {} + j + {}][tx + {}]",
        sh.c, sh.r[1], sh.r[2]
    )
}

/// How the kernel names a ring slot and its rows' conditions.
impl Planes {
    /// The ring slot of plane `q + dz`, where level `s` (a C expression)
    /// computes plane `q = p - lag * s`: an offset from `slot`, plane `p`'s,
    /// kept non-negative for `%`, in unsigned arithmetic, where `%` by a
    /// power of two is a mask (signed, it took 4 instructions: j3d27pt f32's
    /// unrolled loop, 1501 instructions in 3 planes against 1406, ptxas 13.0
    /// for sm_90).
    pub(super) fn slot(&self, dz: i64, s: &str) -> String {
        let slots = self.slots();
        let lag = self.lag();
        let base = (slots * (self.t * lag + self.window()).div_ceil(slots)) as i64;
        if s == "0" {
            format!("(slot + {}) % {slots}", base + dz)
        } else {
            format!("(slot + {} - {lag} * {s}) % {slots}", base + dz)
        }
    }

    /// The C condition that the thread's row `j` is in the statement's region (see [`Gen::planes_masks`]).
    pub(super) fn inside(&self) -> &'static str {
        if self.clamped() {
            "(in_rows >> j & 1u)"
        } else {
            "in_y[j] && in_x"
        }
    }

    /// The C condition that the thread's row `j` is the tile's own, to store.
    pub(super) fn own(&self) -> &'static str {
        if self.clamped() {
            "own_rows >> j & 1u"
        } else {
            "own_y[j] && own_x"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cuda, generate, stencil};
    use crate::backend::gpu::{CUDA, HIP, fit, resolve, source};

    const J3D7PT: &str =
        "u[-1,0,0] + u[0,-1,0] + u[0,0,-1] + u[0,0,0] + u[0,0,1] + u[0,1,0] + u[1,0,0] + k[0,0,0]";

    #[test]
    fn levels_read_neighbours_from_rings_and_their_column_from_registers() {
        let st = stencil(
            "\"z\", \"y\", \"x\"",
            J3D7PT,
            "time_block = 3\ncoarsen = 2\nblock = [1, 4, 32]\n",
        );
        let code = cuda(&st).unwrap();
        for line in [
            // 32 x 8 tiles, 3 cells on each side recomputed, levels two planes apart.
            "const int i2 = 1 + (int)blockIdx.x * 26 - 3 + threadIdx.x;",
            "const int i1 = 1 + (int)blockIdx.y * 2 - 3 + threadIdx.y * 2;",
            "const int q = p - 2 * s;",
            // The same kernel with 64-bit indices, for grids of more than 2^30 cells.
            "const ptrdiff_t q = p - 2 * s;",
            "if (n0 * n1 * n2 <= 1073741824) {",
            "/* The same with 64-bit indices, for grids of more than 2^30 cells. */",
            // A star reads in-plane neighbours in plane q alone: rings of 2 planes.
            "float (*const ring)[2][10][34] = (float (*)[2][10][34])shared;",
            "const unsigned at0 = (slot + 10 - 2 * s) % 2; /* plane q */",
            // Rows above and below in the thread's own column come from its window where it holds them.
            // (An input grid's reads come from registers, loaded an iteration ahead: the update is selected.)
            "const float u = win[s - 1][0][j] + (j >= 1 ? win[s - 1][1][j - 1] : ring[s - 1][at0][ty * 2 + j][tx + 1]) \
             + ring[s - 1][at0][ty * 2 + j + 1][tx] + win[s - 1][1][j] + ring[s - 1][at0][ty * 2 + j + 1][tx + 2] \
             + (j < 1 ? win[s - 1][1][j + 1] : ring[s - 1][at0][ty * 2 + j + 2][tx + 1]) + win[s - 1][2][j] + in0[s - 1][j];",
            "const float v = step && in_y[j] && in_x ? u : win[s - 1][1][j];",
            "float in_ahead0[3][2]; /* cur_k */",
            "const int q = p + 1 - 2 * s;",
            "in_ahead0[s - 1][j] = on && in_y[j] && in_x ? cur_k[c] : 0;",
            "in0[s][j] = in_ahead0[s][j];",
            // Each level publishes plane q - 1, which the level above reads first in the next iteration.
            "/* Level s's plane q - 1 (window plane 1) for the level above, whose next iteration reads it. */",
            "ring[s][(slot + 9 - 2 * s) % 2][ty * 2 + j + 1][tx + 1] = win[s][1][j];",
            "ring[0][(slot + 9) % 2][ty * 2 + j + 1][tx + 1] = win[0][1][j];",
            // The rings are addressed by thread coordinates the compiler cannot merge with the grid's indices.
            "const unsigned tx = stencil_thread_x(), ty = stencil_thread_y();",
            "asm volatile(\"mov.u32 %0, %%tid.x;\" : \"=r\"(v));",
            // A window of 3 planes: the loop is unrolled by 3, and the 32-bit kernel keeps 768 threads resident.
            "#pragma unroll 3\n    for (int p = z0 - 3; p < z1 + 6; ++p) {",
            "static __global__ void __launch_bounds__(128, 6) p_cuda__s__update_u_kernel(",
            "static __global__ void __launch_bounds__(128) p_cuda__s__update_u_i64_kernel(",
            "const dim3 block(32, 4);",
            "<<<grid, block, 8160, stream>>>",
        ] {
            assert!(code.contains(line), "{line}: {code}");
        }
        assert_eq!(
            code.matches("__syncthreads();").count(),
            4,
            "one barrier after zeroing the rings, one per plane, in each kernel"
        );
        assert!(
            !code.contains("FuncSetAttribute"),
            "within the default: {code}"
        );
    }

    #[test]
    fn small_grids_split_the_planes_into_as_many_chunks_as_blocks_stay_resident() {
        let st = stencil("\"z\", \"y\", \"x\"", J3D7PT, "time_block = 2\n");
        let code = cuda(&st).unwrap();
        for line in [
            // The 32-bit kernel marches a chunk of 128 planes or the chunk its launcher
            // passes (unbounded: 2 steps of 8 rows hold 48 cells of windows and 32 of `k`).
            "template <int CHUNK>\nstatic __global__ void __launch_bounds__(256) p_cuda__s__update_u_kernel(",
            "int levels, int chunk)",
            "const int span = CHUNK > 0 ? CHUNK : chunk;",
            "const int z0 = 1 + (int)blockIdx.z * span;",
            "const int z1 = z0 + span < n0 - 1 ? z0 + span : n0 - 1;",
            // The launcher asks the runtime how many blocks of the second stay resident...
            "const cudaError_t status = stencil_residency((const void *)p_cuda__s__update_u_kernel<0>, 256, 35904, &multiprocessors, &per_multiprocessor);",
            "const ptrdiff_t cells = (n0 - 1 - 1), across = (((n2 - 1 - 1) + 60 - 1) / 60) * (((n1 - 1 - 1) + 28 - 1) / 28);",
            "const ptrdiff_t parts = across > 0 ? (ptrdiff_t)multiprocessors * per_multiprocessor / across : 0;",
            // ...and shortens the chunks only where chunks of 128 leave some without a block.
            "const int chunk = cells > 0 && parts > (cells + 128 - 1) / 128 ? (int)((cells + parts - 1) / parts) : 128;",
            "(unsigned)(((n0 - 1 - 1) + chunk - 1) / chunk));",
            "auto *const kernel = chunk == 128 ? p_cuda__s__update_u_kernel<128> : p_cuda__s__update_u_kernel<0>;",
            "kernel<<<grid, block, 35904, stream>>>(n0, n1, n2, out, cur_u, cur_k, levels, chunk);",
            // The 64-bit twin, for grids too large for a small chunk, keeps its constant one.
            "const ptrdiff_t z0 = 1 + (ptrdiff_t)blockIdx.z * 128;",
            "p_cuda__s__update_u_i64_kernel<<<grid, block, 35904, stream>>>(n0, n1, n2, out, cur_u, cur_k, levels);",
        ] {
            assert!(code.contains(line), "{line}: {code}");
        }
        // The same in HIP.
        let hip = generate(&st, &crate::backend::gpu::HIP).unwrap();
        assert!(
            hip.contains("static hipError_t stencil_residency(const void *kernel, const int threads, const size_t bytes, int *multiprocessors, int *per_multiprocessor)"),
            "{hip}"
        );
    }

    #[test]
    fn updates_without_inputs_select_and_only_cuda_f32_windows_are_bounded() {
        let star = "u[-1,0,0] + u[0,-1,0] + u[0,0,-1] + u[0,0,0] + u[0,0,1] + u[0,1,0] + u[1,0,0]";
        let tiling = "time_block = 3\ncoarsen = 4\nblock = [1, 8, 64]\n";
        let code = cuda(&stencil("\"z\", \"y\", \"x\"", star, tiling)).unwrap();
        for line in [
            "const float u = win[s - 1][0][j] + ",
            "const float v = step && in_y[j] && in_x ? u : win[s - 1][1][j];",
            "static __global__ void __launch_bounds__(512, 2) p_cuda__s__update_u_kernel(",
        ] {
            assert!(code.contains(line), "{line}: {code}");
        }
        // f64: no second bound (it would spill); HIP: its second bound means something else.
        let mut f64 = stencil("\"z\", \"y\", \"x\"", star, tiling);
        f64.dtype = crate::ir::Dtype::F64;
        let code = cuda(&f64).unwrap();
        assert!(
            code.contains("__launch_bounds__(512) p_cuda__s__update_u_kernel("),
            "{code}"
        );
        let st = stencil("\"z\", \"y\", \"x\"", star, tiling);
        let plan = resolve(&st.tiling.cuda, &st, &HIP)
            .and_then(|p| fit(p, false, &st, &HIP))
            .unwrap();
        let hip = source(&st, &crate::analysis::analyse(&st), &plan, "p", &HIP);
        assert!(hip.contains("__launch_bounds__(512) "), "{hip}");
        assert!(!hip.contains("__launch_bounds__(512, 2)"), "{hip}");
        // 8 rows over 4 steps: windows too large to bound.
        let big = stencil(
            "\"z\", \"y\", \"x\"",
            star,
            "time_block = 4\ncoarsen = 8\nblock = [1, 4, 32]\n",
        );
        assert!(
            cuda(&big)
                .unwrap()
                .contains("__launch_bounds__(128) p_cuda__s__update_u_kernel(")
        );
        let r2 = stencil(
            "\"z\", \"y\", \"x\"",
            "u[-2,0,0] + u[0,-1,0] + u[0,0,0] + u[2,0,0]",
            "time_block = 2\n",
        );
        // Radius 2 along `z`: unrolled by 5 in f32, not in f64 (where that
        // measured slower); a star of radius 2 fuses in 64 x 32 tiles.
        let code = cuda(&r2).unwrap();
        assert!(code.contains("#pragma unroll 5"), "{code}");
        assert!(
            code.contains("__launch_bounds__(512, 2) p_cuda__s__update_u_kernel("),
            "{code}"
        );
        // `persistent`, or windows of more than 48 registers: windows of 5 planes are not unrolled.
        let mut persistent = r2.clone();
        persistent.tiling.cuda.strategy = crate::ir::Strategy::Persistent;
        assert!(!cuda(&persistent).unwrap().contains("#pragma unroll 5"));
        let deep = stencil(
            "\"z\", \"y\", \"x\"",
            "u[-2,0,0] + u[0,-1,0] + u[0,0,0] + u[2,0,0]",
            "time_block = 3\n",
        );
        assert!(!cuda(&deep).unwrap().contains("#pragma unroll 5"));
        let mut r2 = r2;
        r2.dtype = crate::ir::Dtype::F64;
        let code = cuda(&r2).unwrap();
        assert!(!code.contains("#pragma unroll 5"), "{code}");
        assert!(code.contains("win[s][3][j] = win[s][4][j];"), "{code}");
    }

    #[test]
    fn box_stencils_ring_the_planes_they_read_and_big_rings_are_asked_for() {
        let box3 = "sum(a, -1, 1, sum(b, -1, 1, sum(c, -1, 1, u[a,b,c])))";
        let st = stencil(
            "\"z\", \"y\", \"x\"",
            box3,
            "time_block = 4\ncoarsen = 8\nblock = [1, 4, 64]\nvector = 1\n",
        );
        let code = cuda(&st).unwrap();
        for line in [
            "float (*const ring)[4][34][66] = (float (*)[4][34][66])shared;",
            "const unsigned at_1 = (slot + 11 - 2 * s) % 4; /* plane q - 1 */",
            "const unsigned at1 = (slot + 13 - 2 * s) % 4; /* plane q + 1 */",
            // Both instances of the 32-bit kernel ask for their rings.
            "allowed = cudaFuncSetAttribute((const void *)p_cuda__s__update_u_kernel<128>, cudaFuncAttributeMaxDynamicSharedMemorySize, 143616);",
            "allowed = cudaFuncSetAttribute((const void *)p_cuda__s__update_u_kernel<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, 143616);",
            "allowed = cudaFuncSetAttribute((const void *)p_cuda__s__update_u_i64_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 143616);",
        ] {
            assert!(code.contains(line), "{line}: {code}");
        }
        let err = resolve(&st.tiling.cuda, &st, &HIP)
            .and_then(|p| fit(p, true, &st, &HIP))
            .unwrap_err();
        assert!(
            err.contains("141 KiB of planes in shared memory per block for `s`, more than the 64 KiB HIP allows"),
            "{err}"
        );
    }

    #[test]
    fn boxes_and_f64_stars_of_radius_1_clamp_their_loads_other_stars_take_a_predicate() {
        let box3 = "sum(a, -1, 1, sum(b, -1, 1, sum(c, -1, 1, u[a,b,c])))";
        let star2 = "u[-2,0,0] + u[0,-2,0] + u[0,0,-2] + u[0,0,0] + u[0,0,2] + u[0,2,0] + u[2,0,0]";
        let clamped = [
            "const int x = i2 < 0 ? 0 : i2 < n2 ? i2 : n2 - 1; /* the column, clamped to the grid */",
            "in_rows |= (unsigned)(in_x && c >= 1 && c < n1 - 1) << j;",
            "row_at[j] = (c < 0 ? 0 : c < n1 ? c : n1 - 1) * s1 + x;",
            "const int plane_at = (z < 0 ? 0 : z < n0 ? z : n0 - 1) * s0;",
            "ahead[j] = cur_u[plane_at + row_at[j]];",
            "if (own_rows >> j & 1u) {",
            "const float v = step && (in_rows >> j & 1u) ? u : win[s - 1][1][j];",
        ];
        let predicated = [
            "grid_y[j] = c >= 0 && c < n1;",
            "ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;",
            "if (own_y[j] && own_x) {",
        ];
        let mut f64_star = stencil("\"z\", \"y\", \"x\"", J3D7PT, "");
        f64_star.dtype = crate::ir::Dtype::F64;
        let mut f64_star2 = stencil("\"z\", \"y\", \"x\"", star2, "");
        f64_star2.dtype = crate::ir::Dtype::F64;
        // `persistent`: boxes alone.
        let mut persistent_box = stencil("\"z\", \"y\", \"x\"", box3, "");
        persistent_box.tiling.cuda.strategy = crate::ir::Strategy::Persistent;
        let mut persistent_f64_star = f64_star.clone();
        persistent_f64_star.tiling.cuda.strategy = crate::ir::Strategy::Persistent;
        for (st, clamps) in [
            (stencil("\"z\", \"y\", \"x\"", box3, "vector = 1\n"), true),
            (f64_star, true),
            (persistent_box, true),
            (persistent_f64_star, false),
            (stencil("\"z\", \"y\", \"x\"", J3D7PT, ""), false),
            (stencil("\"z\", \"y\", \"x\"", star2, ""), false),
            (f64_star2, false),
        ] {
            let code = cuda(&st).unwrap().replace("double", "float");
            let (expected, absent) = if clamps {
                (&clamped[..], "grid_y")
            } else {
                (&predicated[..], "row_at")
            };
            for line in expected {
                let line = line.replace(
                    "c >= 1 && c < n1 - 1",
                    &format!("c >= {0} && c < n1 - {0}", st_radius(&st)),
                );
                assert!(code.contains(&line), "{line}: {code}");
            }
            assert!(!code.contains(absent), "{code}");
        }
    }

    /// The radius of `st` along its middle axis.
    fn st_radius(st: &crate::ir::Stencil) -> usize {
        super::super::radius(st)[1]
    }

    #[test]
    fn a_time_block_from_the_spec_widens_the_default_tiles() {
        let st = stencil("\"z\", \"y\", \"x\"", J3D7PT, "time_block = 10\n");
        let plan = resolve(&st.tiling.cuda, &st, &CUDA).unwrap();
        assert_eq!(
            (plan.block, plan.coarsen, plan.time_block),
            (vec![1, 4, 64], 10, 10),
            "64 x 40 cells, storing 44 x 20"
        );
        assert!(cuda(&st).is_ok());
        let st = stencil(
            "\"z\", \"y\", \"x\"",
            J3D7PT,
            "time_block = 40\ncoarsen = 4\n",
        );
        let err = cuda(&st).unwrap_err();
        assert!(
            err.contains("widens the default tiles of `s` to blocks of [1, 8, 160] threads, more than the 1024"),
            "{err}"
        );
    }
}
