//! What a 3-D fused thread loads from global memory: its rows of the
//! plane the next iteration computes from (level 0) and the input grids'
//! cells each level reads, an iteration ahead; on a periodic grid each
//! coordinate wrapped onto it.

use std::fmt::{self, Write as _};

use super::planes_index;
use crate::backend::Writer;
use crate::backend::gpu::emit::{Gen, shifted};
use crate::backend::gpu::plan::temporal::planes::Planes;
use crate::ir::Access;

impl Gen<'_> {
    /// `ahead`: the thread's rows of plane `plane` of the launch's grid
    /// (level 0): zero off the grid, or where the loads clamp
    /// ([`Planes::clamped`]) the nearest cell on it. Cells off the grid are
    /// read only by cells outside the region, which keep their value.
    pub(super) fn planes_load(&self, w: &mut Writer, sh: &Planes, plane: &str) -> fmt::Result {
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
    pub(super) fn planes_inputs(&self) -> Vec<Access> {
        crate::backend::gpu::plan::temporal::input_reads(self.s)
    }

    /// `in_ahead<i>[s - 1][j]` (input read `i` of [`Self::planes_inputs`] by
    /// level `s`) and `prev_ahead[j]` (a leapfrog's previous level, read by
    /// the first level that steps): declared, and loaded for iteration `p`.
    pub(super) fn planes_declare_inputs(
        &self,
        w: &mut Writer,
        sh: &Planes,
        p: &str,
    ) -> fmt::Result {
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
                let inside = sh.inside().map_or(String::new(), |c| format!(" && {c}"));
                writeln!(w, "const {ix} c = {};", planes_index("q"))?;
                writeln!(
                    w,
                    "{target} = on{inside} ? {buf}[{}] : 0;",
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
    pub(super) fn planes_take_inputs(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
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

    /// The index of a read at `offset` from the thread's row `j` in plane
    /// `q` of a periodic grid: the plane and, where they move, the row and
    /// column wrapped onto the grid (`row_at[j]` where neither does).
    fn wrapped_read(&self, offset: &[i64]) -> String {
        let ix = self.index();
        let wrap = |i: String, n: &str| format!("({ix})stencil_mod({i}, {n})");
        let plane = wrap(shifted("q", offset[0]), "n0");
        let in_plane = if offset[1] == 0 && offset[2] == 0 {
            "row_at[j]".to_string()
        } else {
            format!(
                "{} * s1 + {}",
                wrap(shifted("i1 + j", offset[1]), "n1"),
                wrap(shifted("i2", offset[2]), "n2")
            )
        };
        format!("{plane} * s0 + {in_plane}")
    }
}
