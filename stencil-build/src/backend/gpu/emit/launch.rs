//! The launchers: one `extern "C"` function per statement that picks the
//! kernel for the grid (its twins, the small grids' and single steps'
//! kernels), sizes the launch and returns the runtime's error code.

use std::fmt::{self, Write as _};

use super::header::{RESIDENCY, join_x};
use super::{Gen, builtin};
use crate::backend::Writer;
use crate::backend::gpu::plan::{Row, SMALL_PLANES, small_step_cells, temporal};
use crate::backend::gpu::step;
use crate::codegen::names::slot_name;
use crate::ir::Strategy;

impl Gen<'_> {
    pub(super) fn launcher(&self, w: &mut Writer) -> fmt::Result {
        if self.splits_steps() {
            self.fuses_function(w)?;
            writeln!(w)?;
        }
        let mut params = self.parameters("", false);
        if self.plan.strategy == Strategy::Temporal {
            params.push("int levels".into());
            writeln!(
                w,
                "/* Launches the kernel over the statement's region for `levels` steps (1 to the time block);"
            )?;
            writeln!(w, "   returns the launch's error code. */")?;
        } else if self.plan.strategy == Strategy::Persistent {
            params = self.persistent_parameters(false);
            writeln!(
                w,
                "/* Runs `steps` steps (at least 1) in one cooperative launch: the result is in `out` after an odd"
            )?;
            writeln!(
                w,
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
            )?;
        } else {
            let region = if self.whole_step.is_some() {
                "step"
            } else {
                "statement"
            };
            writeln!(
                w,
                "/* Launches the kernel over the {region}'s region; returns the launch's error code. */"
            )?;
        }
        // The stream: 0 (the legacy stream), or the session's while it captures a graph.
        params.push(format!("{}Stream_t stream", self.d.api));
        let head = format!("extern \"C\" int {}({})", self.sym, params.join(", "));
        w.definition(head, |w| {
            writeln!(
                w,
                "/* A failed runtime call (an allocation, say) leaves its error as the last one;"
            )?;
            writeln!(
                w,
                "   it was reported by that call, so it must not be taken for this launch's. */"
            )?;
            writeln!(w, "(void){}GetLastError();", self.d.api)?;
            // `tensor`'s launch decides itself where its small grids go.
            if let Some(single) = self.single_step().filter(|_| !self.plan.small_grids()) {
                self.launch_one_step(w, &single)?;
            }
            if self.splits_steps() {
                self.launch_fused_or_refuse(w)?;
            } else {
                if !self.plan.fuses_steps() {
                    self.launch_small_steps(w)?;
                }
                self.launch_small_planes(w)?;
                self.launch_twins(w)?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// `auto`'s single steps on small grids ([`naive_plan`](crate::backend::gpu::plan::companions::naive_plan)): `naive`'s
    /// kernel where the grid has fewer than [`SMALL_STEP_CELLS`](crate::backend::gpu::plan::model::SMALL_STEP_CELLS) cells per
    /// multiprocessor (the device's, asked once through [`RESIDENCY`]).
    pub(super) fn launch_small_steps(&self, w: &mut Writer) -> fmt::Result {
        let Some(naive) = self.small_naive() else {
            return Ok(());
        };
        let cells = small_step_cells(self.plan);
        writeln!(
            w,
            "/* Small grids, of fewer than {cells} cells per multiprocessor: `naive`'s kernel, one cell a thread (blocks that"
        )?;
        writeln!(
            w,
            "   march rows or planes leave too few warps to hide the latency there). */"
        )?;
        w.braces(|w| {
            naive.residency(w, &naive.twins()[0].kernel_name(), 0)?;
            w.block(
                format_args!(
                    "if ({} < (ptrdiff_t){cells} * multiprocessors)",
                    self.cells()
                ),
                |w| naive.launch_twins(w),
            )
        })?;
        Ok(())
    }

    /// [`planes_stream`](crate::backend::gpu::plan::model::planes_stream)'s small-grid kernel ([`small_plan`](crate::backend::gpu::plan::companions::small_plan)) on planes of
    /// fewer than [`SMALL_PLANES`] cells; nothing for the other plans.
    pub(super) fn launch_small_planes(&self, w: &mut Writer) -> fmt::Result {
        let Some(small) = self.single_step().filter(|_| self.plan.vector_planes()) else {
            return Ok(());
        };
        writeln!(
            w,
            "/* Planes of fewer than {SMALL_PLANES} cells: `{}` in {}-cell vectors, blocks of {} threads marching {} planes (rows that are not whole vectors: the kernels below). */",
            small.plan.strategy.name(),
            small.plan.vector,
            join_x(&small.plan.block),
            small.plan.chunk
        )?;
        small.launch_twins_where(w, Some(&format!("(ptrdiff_t)n1 * n2 < {SMALL_PLANES}")))?;
        Ok(())
    }

    /// Whether this kernel has no scalar twin: its launches of several
    /// steps run only on the grids it takes, and the session runs one step
    /// a launch on the others ([`temporal::splits_steps`]).
    pub(super) fn splits_steps(&self) -> bool {
        temporal::splits_steps(self.plan, self.st)
    }

    /// `<sym>_fuses`, which the session asks before a launch of several
    /// steps where [`Self::splits_steps`]: whether this kernel takes the
    /// grid (its launch condition) and, for a ring kernel, whether its planes
    /// are large enough that it beats single steps
    /// ([`Self::rings_preferred`]); else the session runs one step a launch.
    pub(super) fn fuses_function(&self, w: &mut Writer) -> fmt::Result {
        let params: Vec<String> = self
            .parameters("", false)
            .into_iter()
            .filter(|p| !p.contains(" p_"))
            .collect();
        writeln!(
            w,
            "/* Whether a launch of several steps fuses them on these grids (1), or the caller must run"
        )?;
        writeln!(w, "   one step a launch (0). */")?;
        w.definition(
            format_args!("extern \"C\" int {}_fuses({})", self.sym, params.join(", ")),
            |w| {
                let mut when = self.twins()[0].launch_condition();
                if let Some(single) = self.single_step().filter(|_| self.rings()) {
                    when.push(self.rings_preferred(w, &single)?);
                }
                writeln!(w, "return {};", when.join(" && "))?;
                Ok(())
            },
        )
    }

    /// The launcher's fused launch where [`Self::splits_steps`]: the
    /// kernel where it takes the grid; the other grids are an error, as the
    /// session asks `<sym>_fuses` first.
    pub(super) fn launch_fused_or_refuse(&self, w: &mut Writer) -> fmt::Result {
        let fused = &self.twins()[0];
        w.block(
            format_args!("if ({})", fused.launch_condition().join(" && ")),
            |w| fused.launch(w),
        )?;
        writeln!(
            w,
            "/* Grids the kernel cannot take run one step a launch (`{}_fuses`). */",
            self.sym
        )?;
        writeln!(w, "return (int){}ErrorInvalidValue;", self.d.api)?;
        Ok(())
    }

    /// A launch of one step runs `single`'s kernel.
    pub(super) fn launch_one_step(&self, w: &mut Writer, single: &Self) -> fmt::Result {
        let one = if self.plan.strategy == Strategy::Persistent {
            "steps == 1"
        } else {
            "levels == 1"
        };
        writeln!(
            w,
            "/* One step: the single-step kernel (`{}`), not a fused launch of one level, which recomputes its tiles' overlap for nothing. */",
            single.plan.strategy.name()
        )?;
        if self.leapfrog() {
            writeln!(
                w,
                "/* It writes the new level to `out_prev`'s buffer, which the caller reads as the current level next (its levels turn by one). */"
            )?;
        }
        w.block(format_args!("if ({one})"), |w| {
            self.launch_small_steps(w)?;
            single.launch_small_planes(w)?;
            single.launch_twins(w)
        })?;
        Ok(())
    }

    /// Launches the first of the twins whose condition the grid meets.
    pub(super) fn launch_twins(&self, w: &mut Writer) -> fmt::Result {
        self.launch_twins_where(w, None)
    }

    /// [`Self::launch_twins`], each twin only where the grid also meets
    /// `guard`: then none is launched unconditionally, and the launcher goes
    /// on past them on the other grids.
    pub(super) fn launch_twins_where(&self, w: &mut Writer, guard: Option<&str>) -> fmt::Result {
        let twins = self.twins();
        for (k, twin) in twins.iter().enumerate() {
            let mut when = twin.launch_condition();
            if guard.is_none() && (k + 1 == twins.len() || when.is_empty()) {
                twin.launch(w)?;
                break;
            }
            if let Some(guard) = guard {
                when.insert(0, guard.to_string());
            }
            w.block(format_args!("if ({})", when.join(" && ")), |w| {
                twin.launch(w)
            })?;
        }
        Ok(())
    }

    /// The buffers the kernel writes: the update's, or each field a step's
    /// kernel updates ([`step::one_kernel`]).
    pub(super) fn outputs(&self) -> Vec<String> {
        match self.whole_step {
            Some(grids) => grids
                .outputs
                .iter()
                .map(|&f| step::output_name(self.st, f))
                .collect(),
            None => vec![self.output.to_string()],
        }
    }

    /// The buffers the kernel writes and reads: [`Self::outputs`] (a ring
    /// kernel's `out_prev` too), then the grids it reads.
    fn buffers(&self) -> Vec<String> {
        let reads: Vec<String> = match self.whole_step {
            Some(grids) => grids.slots.iter().map(|&s| slot_name(self.st, s)).collect(),
            None => self
                .s
                .slots()
                .into_iter()
                .map(|s| slot_name(self.st, s))
                .collect(),
        };
        let mut all = self.outputs();
        all.extend((self.rings() && self.leapfrog()).then(|| "out_prev".to_string()));
        all.extend(reads);
        all
    }

    /// The grid's cells, as the launcher computes them: `n0 * n1 * ...`.
    pub(super) fn cells(&self) -> String {
        let extents: Vec<String> = (0..self.dims()).map(|a| format!("n{a}")).collect();
        extents.join(" * ")
    }

    /// What the grid must satisfy for this kernel to run: rows of whole,
    /// aligned vectors (a ring kernel's: 8-byte pairs, `out_prev` too); for
    /// 32-bit indices, at most [`Self::narrow_cells`].
    pub(super) fn launch_condition(&self) -> Vec<String> {
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
                self.buffers()
                    .into_iter()
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
    /// (design notes, `pairs-cover`).
    pub(super) fn quads_cover_no_more(&self) -> String {
        let last = self.dims() - 1;
        let quads = self.plan.block[last] * self.vector;
        let pairs = quads / 2;
        let e = self.extent(last);
        format!("({e} + {quads} - 1) / {quads} * 2 <= ({e} + {pairs} - 1) / {pairs}")
    }

    /// Launches this kernel and returns the launch's error code.
    pub(super) fn launch(&self, w: &mut Writer) -> fmt::Result {
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
                let b = match self.plan.strategy {
                    Strategy::Naive if a == 0 => block[a] * self.plan.coarsen,
                    _ if a + 1 == dims => block[a] * self.vector,
                    _ => block[a],
                };
                blocks[k] = format!("({} + {b} - 1) / {b}", self.extent(a));
            }
        }
        if !self.shortens_chunk() {
            return self.launch_lines(w, &threads.join(", "), &blocks, 0, &self.arguments());
        }
        // A block's window loads the planes before and after its chunk.
        let warm_up = self.rows().iter().map(Row::depth).max().unwrap_or(0);
        self.wave_chunk(w, &self.kernel_name(), 0, warm_up, &blocks[..2], true)?;
        let arguments = format!("{}, chunk", self.arguments());
        self.launch_lines(w, &threads.join(", "), &blocks, 0, &arguments)
    }

    /// Cells of the region along axis `a`, as a C expression.
    pub(super) fn extent(&self, a: usize) -> String {
        let (lo, hi) = self.bounds(a);
        // `naive` threads of vectors start at a whole vector at or before the
        // region.
        let lo = match self.plan.strategy {
            Strategy::Naive if a + 1 == self.dims() => self.row_start(),
            _ => lo,
        };
        if lo == "0" || self.aligned(a) {
            hi
        } else {
            format!("({hi} - {lo})")
        }
    }

    /// `block` and `grid` of the launch, the launch with `shared` bytes of
    /// dynamic shared memory and `arguments`, and its error code returned.
    pub(super) fn launch_lines(
        &self,
        w: &mut Writer,
        threads: &str,
        blocks: &[String],
        shared: usize,
        arguments: &str,
    ) -> fmt::Result {
        self.launch_named(w, &self.kernel_name(), threads, blocks, shared, arguments)
    }

    /// `multiprocessors` and `per_multiprocessor`, the blocks of `kernel`
    /// with `bytes` of dynamic shared memory each keeps resident, from the
    /// runtime of the current device; the launcher returns its error.
    pub(super) fn residency(&self, w: &mut Writer, kernel: &str, bytes: usize) -> fmt::Result {
        let api = self.d.api;
        writeln!(w, "int multiprocessors = 0, per_multiprocessor = 0;")?;
        // `tensor`'s launcher sizes its blocks with the kernel it picks (`threads`).
        let threads = if self.plan.strategy == Strategy::Tensor {
            "threads".to_string()
        } else {
            self.plan.threads().to_string()
        };
        writeln!(
            w,
            "const {api}Error_t status = {RESIDENCY}((const void *){kernel}, {threads}, {bytes}, &multiprocessors, &per_multiprocessor);"
        )?;
        w.guarded(
            format_args!("if (status != {api}Success)"),
            "return (int)status;",
        )
    }

    /// What the chunk rules start from: the resident blocks of instance
    /// `given` (`multiprocessors`, `per_multiprocessor`), the cells of the
    /// slowest axis (`cells`) and the blocks of one chunk (`across`, the
    /// product of the launch's blocks along the other axes).
    pub(super) fn chunk_inputs(
        &self,
        w: &mut Writer,
        given: &str,
        bytes: usize,
        across: &[String],
    ) -> fmt::Result {
        self.residency(w, given, bytes)?;
        let across: Vec<String> = across.iter().map(|g| format!("({g})")).collect();
        writeln!(
            w,
            "const ptrdiff_t cells = {}, across = {};",
            self.extent(0),
            across.join(" * ")
        )
    }

    /// `chunk` for a kernel whose blocks march the slowest axis (`temporal`
    /// of vectors, `tensor`, the scalar twins of [`scalar_stream`](crate::backend::gpu::plan::companions::scalar_stream)): the
    /// length whose waves of blocks (as many as
    /// stay resident at once, `across` a chunk) end first, each block
    /// marching its chunk and `extra` planes more (those its levels lag
    /// behind and start ahead, or its window's warm-up), no longer than the
    /// plan's chunk where `capped` (`tensor` and those twins, whose `chunk`
    /// is the most planes a block marches). On the
    /// suite's 512^3 grid star3d25 f32 then runs 3 chunks of 168 planes, 8
    /// full waves of the H100's 132 multiprocessors, where chunks of 128 make
    /// 10.67. Against chunks of 128 (the generated kernels in the A/B
    /// harness): at 512^3 star3d25
    /// f32 1.04x, j3d13pt 1.06x and 1.02x; at 256^3 1.14x, 1.01x and 1.38x;
    /// at 100^3, where a small grid gets as many chunks as fill the device,
    /// 3.8x-5.2x.
    pub(super) fn wave_chunk(
        &self,
        w: &mut Writer,
        given: &str,
        bytes: usize,
        extra: usize,
        across: &[String],
        capped: bool,
    ) -> fmt::Result {
        let chunk = self.plan.chunk;
        let cap = if capped {
            format!(" (at most {chunk})")
        } else {
            String::new()
        };
        writeln!(
            w,
            "/* Cells of `{}` a block marches{cap}: the length whose waves of blocks end first, each block marching its chunk and {extra} planes more. */",
            self.st.axes[0]
        )?;
        self.chunk_inputs(w, given, bytes, across)?;
        writeln!(
            w,
            "const ptrdiff_t resident = (ptrdiff_t)multiprocessors * per_multiprocessor;"
        )?;
        writeln!(w, "int chunk = {chunk};")?;
        w.block("if (cells > 0 && across > 0 && resident > 0)", |w| {
            writeln!(
                w,
                "/* n chunks along the axis: from {} to chunks of a quarter of the plan's length, and enough to fill the device. */",
                if capped {
                    "chunks of the plan's length"
                } else {
                    "one chunk"
                }
            )?;
            writeln!(
                w,
                "const ptrdiff_t most = 4 * ((cells + {chunk} - 1) / {chunk}) + resident / across + 1;"
            )?;
            writeln!(w, "ptrdiff_t best = -1;")?;
            let first = if capped {
                format!("(cells + {chunk} - 1) / {chunk}")
            } else {
                "1".into()
            };
            let head = format!("for (ptrdiff_t n = {first}; n <= most && n <= cells; ++n)");
            w.block(head, |w| {
                writeln!(
                    w,
                    "const ptrdiff_t planes = (cells + n - 1) / n, waves = (across * n + resident - 1) / resident;"
                )?;
                writeln!(w, "const ptrdiff_t time = waves * (planes + {extra});")?;
                w.block("if (best < 0 || time < best)", |w| {
                    writeln!(w, "best = time;")?;
                    writeln!(w, "chunk = (int)planes;")
                })
            })?;
            Ok(())
        })?;
        Ok(())
    }

    /// [`Self::launch_lines`] of the kernel `name`.
    pub(super) fn launch_named(
        &self,
        w: &mut Writer,
        name: &str,
        threads: &str,
        blocks: &[String],
        shared: usize,
        arguments: &str,
    ) -> fmt::Result {
        writeln!(w, "const dim3 block({threads});")?;
        writeln!(
            w,
            "const dim3 grid({});",
            blocks
                .iter()
                .map(|b| format!("(unsigned)({b})"))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
        writeln!(w, "{name}<<<grid, block, {shared}, stream>>>({arguments});")?;
        writeln!(w, "return (int){}GetLastError();", self.d.api)?;
        Ok(())
    }
}
