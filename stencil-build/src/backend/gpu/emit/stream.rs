//! `stream` (2.5-D): a block owns a tile of the fast axes and marches along
//! the slowest axis through `chunk` cells, `coarsen` cells per iteration,
//! each thread `vector` cells of the contiguous axis. Per grid and row
//! offset the statement reads (a row group), each thread keeps a window of
//! the planes it reads in registers: every value is loaded once, as one
//! vector for the thread's own cells, and reused for every output that
//! reads it at another offset along the slowest axis. In-plane neighbours
//! come through the read-only data cache, where the neighbouring threads'
//! loads put them: no shared memory and no barrier. Blocks whose chunk
//! takes one iteration (`chunk <= coarsen`) fill the window once; the
//! others move it `coarsen` planes per iteration, the next iteration's
//! planes loaded before this one computes (software pipelining).

use std::collections::BTreeSet;
use std::fmt::{self, Write as _};

use super::one_step::Site;
use super::{Gen, builtin, shifted, signed};
use crate::backend::Writer;
use crate::backend::gpu::plan::{Row, rows, rows_of};
use crate::backend::step::memory_reads;
use crate::codegen::names::slot_name;
use crate::ir::{Access, Strategy};

impl Gen<'_> {
    /// `(g1) * s1 + g2` (3-D) or `g1` (2-D): the in-plane index of fast-axis coordinates.
    pub(super) fn fast_index(&self, coords: &[String]) -> String {
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
    pub(super) fn block_chunk(&self, w: &mut Writer) -> fmt::Result {
        let dims = self.dims();
        self.chunk_bounds(w)?;
        self.thread_cells(w, 1..self.dims())?;
        w.guarded(format_args!("if ({})", self.guard(1..dims)), "return;")?;
        Ok(())
    }

    /// Whether the kernel is a template over the length of its chunk
    /// (`CHUNK`, 0 for the argument `chunk`): `temporal` with 32-bit
    /// indices, whose launcher shortens the chunks of grids too small to
    /// fill the device. A constant chunk keeps the kernels of larger grids
    /// as they were: with the length an argument, ptxas gave the suite's
    /// poisson f64 150 registers instead of 126, 0.73x as fast (H100).
    /// Not a ring kernel, which
    /// takes its chunk as an argument.
    pub(super) fn chunked(&self) -> bool {
        self.plan.strategy == Strategy::Temporal && !self.wide && !self.rings()
    }

    /// The kernel's instances the launcher may run: the template's with the
    /// plan's chunk and with the launcher's ([`Self::chunked`]), or the kernel.
    pub(super) fn instances(&self) -> Vec<String> {
        let name = self.kernel_name();
        if self.chunked() {
            vec![format!("{name}<{}>", self.plan.chunk), format!("{name}<0>")]
        } else {
            vec![name]
        }
    }

    /// `z0..z1`: the block's chunk of the slowest axis (`stream`,
    /// `temporal`, `persistent`).
    pub(super) fn chunk_bounds(&self, w: &mut Writer) -> fmt::Result {
        let (lo0, hi0) = self.bounds(0);
        let chunk = if self.chunked() {
            writeln!(w, "const int span = CHUNK > 0 ? CHUNK : chunk;")?;
            "span".to_string()
        } else {
            self.chunk_length()
        };
        writeln!(
            w,
            "const {t} z0 = {lo0} + ({t}){} * {chunk};",
            self.block_coordinate(builtin(0, self.dims())),
            t = self.index()
        )?;
        writeln!(
            w,
            "const {} z1 = z0 + {chunk} < {hi0} ? z0 + {chunk} : {hi0};",
            self.index()
        )
    }

    /// This block's tile along CUDA's axis `c` (`x`, `y`, `z`): the block's
    /// index, or in a `persistent` kernel the tile the block has taken.
    pub(super) fn block_coordinate(&self, c: &str) -> String {
        if self.plan.strategy == Strategy::Persistent {
            format!("tile_{c}")
        } else {
            format!("blockIdx.{c}")
        }
    }

    /// The row groups of the kernel's windows: its statement's reads, or
    /// where it computes the whole step, every value the step and its
    /// recomputations read from memory.
    pub(super) fn rows(&self) -> Vec<Row> {
        match self.whole_step {
            Some(_) => rows_of(memory_reads(self.st), self.dims()),
            None => rows(self.s, self.dims()),
        }
    }

    /// An index into `slot`'s grid: `plane * s0 + row part + x` (wrapped for periodic grids).
    pub(super) fn row_index(&self, row: &Row, plane: &str, x: i64) -> String {
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
    pub(super) fn stream(&self, w: &mut Writer) -> fmt::Result {
        let c = self.plan.coarsen;
        self.block_chunk(w)?;
        let mine: Vec<String> = (1..self.dims()).map(|a| format!("i{a}")).collect();
        writeln!(
            w,
            "const {} col = {};",
            self.index(),
            self.fast_index(&mine)
        )?;
        let rows = self.rows();
        let z = if self.single_pass() { "z0" } else { "z" };
        for (g, row) in rows.iter().enumerate() {
            self.declare_window(w, g, row, z)?;
            for m in 0..row.depth() + c {
                self.load_plane(w, (g, row), m, ("z0", 0), self.window_cells(row, m))?;
            }
        }
        if self.single_pass() {
            self.store(w, &rows, z)?;
            return Ok(());
        }
        let head = format!("for ({} z = z0; z < z1; z += {c})", self.index());
        w.block(head, |w| {
            w.block(format_args!("if (z + {c} < z1)"), |w| {
                writeln!(
                    w,
                    "/* Load what the next iteration reads first: its new planes, and the neighbours it reads in planes already held. */"
                )?;
                for (g, row) in rows.iter().enumerate() {
                    for m in c..row.depth() + 2 * c {
                        self.load_plane(w, (g, row), m, ("z", c), self.fresh_cells(row, m))?;
                    }
                }
                Ok(())
            })?;
            self.store(w, &rows, z)?;
            w.block(format_args!("if (z + {c} < z1)"), |w| {
                writeln!(
                    w,
                    "/* Move the windows on by {c} plane{}. */",
                    if c > 1 { "s" } else { "" }
                )?;
                for (g, row) in rows.iter().enumerate() {
                    let (xmin, _) = row.span(self.vector);
                    for m in 0..row.depth() + c {
                        for x in self.window_cells(row, m) {
                            let k = x - xmin;
                            writeln!(w, "w{g}[{m}][{k}] = w{g}[{}][{k}];", m + c)?;
                        }
                    }
                }
                Ok(())
            })?;
            Ok(())
        })?;
        Ok(())
    }

    /// Declares `w<g>`, the window of row group `row`, its planes counted from `z`.
    pub(super) fn declare_window(
        &self,
        w: &mut Writer,
        g: usize,
        row: &Row,
        z: &str,
    ) -> fmt::Result {
        let last = self.dims() - 1;
        let (lo, _) = row.planes();
        let (xmin, xmax) = row.span(self.vector);
        let at_row = if row.row.is_empty() {
            String::new()
        } else {
            let offsets: Vec<String> = row.row.iter().map(i64::to_string).collect();
            format!(" at row offset ({})", offsets.join(", "))
        };
        writeln!(
            w,
            "/* w{g}[m][k]: `{}`{at_row} at plane {z} + m{} and cell i{last} + k{}. */",
            slot_name(self.st, row.slot),
            signed(lo),
            signed(xmin)
        )?;
        writeln!(
            w,
            "{} w{g}[{}][{}];",
            self.st.dtype.c(),
            row.window(self.plan.chunk, self.plan.coarsen),
            xmax - xmin + 1
        )
    }

    /// The cells (offsets from `i<last>`) window slot `m` of `row` holds when
    /// an iteration computes: those its outputs read there and, where the
    /// window moves, those loaded at an earlier slot that a later one reads.
    /// Each cell is loaded as late as it can be: one iteration before its
    /// first use, by when the neighbouring threads' loads of the same row
    /// have filled the cache (loading a plane's neighbours with its row
    /// measured 313.5 instead of 330.1 GCells/s on j3d7pt f32).
    pub(super) fn window_cells(&self, row: &Row, m: usize) -> BTreeSet<i64> {
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
    pub(super) fn fresh_cells(&self, row: &Row, m: usize) -> BTreeSet<i64> {
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
    pub(super) fn load_plane(
        &self,
        w: &mut Writer,
        (g, row): (usize, &Row),
        m: usize,
        (z, ahead): (&str, usize),
        cells: BTreeSet<i64>,
    ) -> fmt::Result {
        let needed: Vec<i64> = cells.into_iter().collect();
        if needed.is_empty() {
            return Ok(());
        }
        let (lo, _) = row.planes();
        let plane = shifted(z, m as i64 + lo);
        // `z` is a plane of the region and, `ahead` planes further, still is
        // when the window loads ahead: planes up to the frame past that are
        // on the grid; a fixed boundary skips those beyond it. (2-D kernels
        // keep every guard: without them j2d5pt f32 measured 1.1x slower.)
        let on_grid = m as i64 + lo <= (self.info.halo[0] + ahead) as i64;
        let guard = !(self.periodic() || on_grid && self.dims() == 3);
        let index = if self.periodic() {
            format!("stencil_mod({plane}, n0)")
        } else if plane.contains(' ') {
            format!("({plane})")
        } else {
            plane.clone()
        };
        if guard {
            w.block(format_args!("if ({plane} < n0)"), |w| {
                self.load_row(w, row, g, m, &index, &needed)
            })
        } else {
            self.load_row(w, row, g, m, &index, &needed)
        }
    }

    /// Loads `needed` cells (offsets from `i<last>`) of plane `plane` into `w<g>[m]`:
    /// the thread's own cells as one vector, the others one by one.
    pub(super) fn load_row(
        &self,
        w: &mut Writer,
        row: &Row,
        g: usize,
        m: usize,
        plane: &str,
        needed: &[i64],
    ) -> fmt::Result {
        let (xmin, _) = row.span(self.vector);
        let buf = slot_name(self.st, row.slot);
        let v = self.vector as i64;
        let last = self.dims() - 1;
        let own = needed.iter().any(|&x| (0..v).contains(&x));
        if own && v == 1 {
            writeln!(
                w,
                "w{g}[{m}][{}] = {buf}[{}];",
                -xmin,
                self.row_index(row, plane, 0)
            )?;
        } else if own {
            w.braces(|w| {
                let vt = format!("{}{v}", self.st.dtype.c());
                writeln!(
                    w,
                    "const {vt} q = *(const {vt} *)&{buf}[{}];",
                    self.row_index(row, plane, 0)
                )?;
                for (k, part) in ["x", "y", "z", "w"].iter().take(v as usize).enumerate() {
                    writeln!(w, "w{g}[{m}][{}] = q.{part};", k as i64 - xmin)?;
                }
                Ok(())
            })?;
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
                writeln!(w, "{}", load)?;
            } else if x < 0 {
                w.guarded(
                    format_args!("if (i{last}{} >= 0)", signed(x)),
                    format_args!("{load}"),
                )?;
            } else {
                w.guarded(
                    format_args!("if (i{last} + {x} < n{last})"),
                    format_args!("{load}"),
                )?;
            }
        }
        Ok(())
    }

    /// The window slot holding read `a` of the thread's output `(j, k)`
    /// (plane `j`, cell `k` of its vector).
    fn window_slot(&self, rows: &[Row], a: &Access, (j, k): (usize, usize)) -> String {
        let last = self.dims() - 1;
        let (g, row) = rows
            .iter()
            .enumerate()
            .find(|(_, r)| r.slot == a.slot && r.row == a.offset[1..last])
            .expect("every read has its row");
        let (plo, _) = row.planes();
        let (xmin, _) = row.span(self.vector);
        format!(
            "w{g}[{}][{}]",
            j as i64 + a.offset[0] - plo,
            k as i64 + a.offset[last] - xmin
        )
    }

    /// The `coarsen` x `vector` outputs of a `stream` thread at planes `z`..
    pub(super) fn store(&self, w: &mut Writer, rows: &[Row], z: &str) -> fmt::Result {
        if self.whole_step.is_some() {
            return self.store_step(w, rows, z);
        }
        let (t, v) = (self.st.dtype.c(), self.vector);
        self.each_plane(w, z, &|w, j| {
            let value = |k: usize| self.value(&|a: &Access| self.window_slot(rows, a, (j, k)));
            if v == 1 {
                return writeln!(w, "out[{}] = {};", plane_index(z, j), value(0));
            }
            for k in 0..v {
                writeln!(w, "const {t} o{k} = {};", value(k))?;
            }
            self.store_cells(w, ("out", "o"), z, j)
        })
    }

    /// [`Self::store`] for a kernel that computes the whole step: at each
    /// of the thread's outputs every statement in turn, into locals
    /// suffixed with the output (`new_u__0_1`), reading the windows; then
    /// each field the step writes, from its last statement's locals.
    fn store_step(&self, w: &mut Writer, rows: &[Row], z: &str) -> fmt::Result {
        let (st, last) = (self.st, self.dims() - 1);
        let grids = self.whole_step.expect("a step's kernel");
        self.each_plane(w, z, &|w, j| {
            for k in 0..self.vector {
                let memory = |a: &Access| self.window_slot(rows, a, (j, k));
                let index = |a: usize, d: i64| match a {
                    0 => shifted(z, j as i64 + d),
                    a if a == last => shifted(&format!("i{last}"), k as i64 + d),
                    a => shifted(&format!("i{a}"), d),
                };
                let site = Site {
                    memory: &memory,
                    index: &index,
                    suffix: format!("__{j}_{k}"),
                };
                for (s, value) in self.locals_at(&site) {
                    writeln!(w, "const {} {} = {value};", st.dtype.c(), site.local(st, s))?;
                }
            }
            for (out, local) in super::one_step::stores(st, grids) {
                self.store_cells(w, (&out, &format!("{local}__{j}_")), z, j)?;
            }
            Ok(())
        })
    }

    /// `body` for each of the thread's `coarsen` planes from `z`, in a block
    /// of its own (after the first, one the chunk holds).
    fn each_plane(
        &self,
        w: &mut Writer,
        z: &str,
        body: &dyn Fn(&mut Writer, usize) -> fmt::Result,
    ) -> fmt::Result {
        for j in 0..self.plan.coarsen {
            if j > 0 {
                w.block(format_args!("if ({z} + {j} < z1)"), |w| body(w, j))?;
            } else {
                w.braces(|w| body(w, 0))?;
            }
        }
        Ok(())
    }

    /// Stores the thread's `vector` cells of plane `z + j` into `out` from
    /// the locals `<local><k>`: one vector where all are in the region.
    fn store_cells(
        &self,
        w: &mut Writer,
        (out, local): (&str, &str),
        z: &str,
        j: usize,
    ) -> fmt::Result {
        let last = self.dims() - 1;
        let (t, v) = (self.st.dtype.c(), self.vector);
        let (lo, hi) = self.bounds(last);
        let at = plane_index(z, j);
        if v == 1 {
            return writeln!(w, "{out}[{at}] = {local}0;");
        }
        let vt = format!("{t}{v}");
        let parts: Vec<String> = (0..v).map(|k| format!("{local}{k}")).collect();
        let whole = |w: &mut Writer| {
            writeln!(w, "const {vt} q = {{{}}};", parts.join(", "))?;
            writeln!(w, "*({vt} *)&{out}[{at}] = q;")
        };
        let head = format!("if (i{last} >= {lo} && i{last} + {v} <= {hi})");
        w.if_else(head, whole, |w| {
            for (k, part) in parts.iter().enumerate() {
                let i = shifted(&format!("i{last}"), k as i64);
                w.guarded(
                    format_args!("if ({i} >= {lo} && {i} < {hi})"),
                    format_args!("{out}[{}] = {part};", shifted(&at, k as i64)),
                )?;
            }
            Ok(())
        })
    }
}

/// The index of the thread's cells in plane `z + j`: `(z + j) * s0 + col`.
fn plane_index(z: &str, j: usize) -> String {
    if j > 0 {
        format!("({z} + {j}) * s0 + col")
    } else {
        format!("{z} * s0 + col")
    }
}
