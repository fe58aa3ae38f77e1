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

mod loads;
mod masks;
#[cfg(test)]
mod tests;

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
                    &match sh.inside() {
                        Some(inside) => format!("step && {inside}"),
                        None => "step".to_string(),
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
}
