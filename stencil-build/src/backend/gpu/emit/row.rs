//! `naive` threads of consecutive cells of the contiguous axis: in 1-D each
//! thread computes `coarsen` cells, in 2-D and 3-D `vector` (the launcher
//! runs the plan's scalar twin, a cell a thread, on grids whose rows are not
//! whole aligned vectors). Where they make whole 16-byte vectors
//! ([`model::row_vectors`], or a 2-D or 3-D plan's `vector`), they are
//! consecutive from a cell aligned to the vector, and a thread whose cells
//! lie in the region and whose window lies on the grid (1-D: whose grids
//! are aligned) loads each grid's window, a row for each offset along the
//! other axes, as aligned vectors and stores its cells as vectors: a warp's
//! load is then 512 contiguous bytes, the reads its neighbours share come
//! from L1, and a thread issues a few wide loads rather than one a cell (on
//! the H200 line stencils of radius 1-4 in f32 ran 1.14x-1.38x as fast as
//! with 4 cells a block apart; design notes, "1-D rows in vectors"); the
//! other threads compute theirs one at a time. A kernel of a whole step
//! ([`step::one_kernel`]) takes its window from every read its statements
//! make from memory, recomputations included, and stores each field it
//! updates. A 1-D `coarsen` that makes no whole vectors keeps a thread's
//! cells a block apart.
//!
//! [`step::one_kernel`]: crate::backend::gpu::step::one_kernel

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};

use super::Gen;
use super::one_step::{self, Site};
use crate::backend::Writer;
use crate::backend::gpu::plan::model;
use crate::backend::step::{memory_reads, reach};
use crate::codegen::index::{linear_index, offset_index};
use crate::codegen::names::{offset_part, slot_name};
use crate::ir::{Access, Slot};

/// One aligned load of a thread's window: its slot, its row (the offsets
/// along the axes before the contiguous one), its first cell along the
/// contiguous axis (from the thread's first) and its cells.
#[derive(Debug)]
struct Load {
    slot: Slot,
    row: Vec<i64>,
    at: i64,
    width: usize,
}

/// A thread's window of its grids, as aligned loads, and the C text of each
/// cell the update reads, by slot and offset from the thread's first cell.
#[derive(Debug, Default)]
struct Window {
    loads: Vec<Load>,
    lanes: BTreeMap<(Slot, Vec<i64>), String>,
}

impl Window {
    /// The first and last cells the loads read along the contiguous axis,
    /// from the thread's first.
    fn span(&self) -> (i64, i64) {
        let first = self.loads.iter().map(|l| l.at).min().unwrap_or(0);
        let last = self.loads.iter().map(|l| l.at + l.width as i64 - 1).max();
        (first, last.unwrap_or(0))
    }

    /// The lowest and highest offsets of its rows along axis `a` (one before
    /// the contiguous axis).
    fn rows_span(&self, a: usize) -> (i64, i64) {
        let offsets = self.loads.iter().map(|l| l.row[a]);
        let low = offsets.clone().min().unwrap_or(0);
        (low, offsets.max().unwrap_or(0))
    }
}

/// The name of a window's load of `slot` in `row` at `at` cells from the
/// thread's first (`cur_u__m2`, `cur_u__0`, `cur_u__p4`; in 2-D and 3-D the
/// row's offsets first, `cur_u__m1_p4`; specs cannot name `__`).
fn load_name(slot: &str, row: &[i64], at: i64) -> String {
    let parts: Vec<String> = row.iter().chain([&at]).map(|&d| offset_part(d)).collect();
    format!("{slot}__{}", parts.join("_"))
}

/// `first + d`, `first - d` or `first`.
fn from_first(d: i64) -> String {
    super::shifted("first", d)
}

/// `offset` moved `k` cells along the contiguous axis.
fn moved(offset: &[i64], k: i64) -> Vec<i64> {
    let mut at = offset.to_vec();
    *at.last_mut().expect("a read has an offset per axis") += k;
    at
}

/// `lead`, a cell's offsets along the axes before the contiguous one,
/// moved `ky` rows along the slowest axis (unchanged in 1-D, where it is
/// empty).
fn rows_down(lead: &[i64], ky: usize) -> Vec<i64> {
    let mut at = lead.to_vec();
    if let Some(r) = at.first_mut() {
        *r += ky as i64;
    }
    at
}

impl Gen<'_> {
    /// The axis a thread's consecutive cells lie along: the contiguous one.
    fn row_axis(&self) -> usize {
        self.dims() - 1
    }

    /// Consecutive cells of the contiguous axis a thread computes: 1-D
    /// `coarsen`, else this kernel's `vector`.
    fn row_cells(&self) -> usize {
        match self.dims() {
            1 => self.plan.coarsen,
            _ => self.vector,
        }
    }

    /// Rows of the slowest axis a thread computes, each a row of
    /// [`Self::row_cells`]: the plan's `coarsen` where a 2-D or 3-D thread
    /// moves vectors (a block of cells in two axes), else 1.
    fn row_rows(&self) -> usize {
        match self.dims() {
            1 => 1,
            _ if self.vector > 1 => self.plan.coarsen,
            _ => 1,
        }
    }

    /// The suffix of a thread's cell `kx` of its row `ky`: `kx`, or `ky_kx`
    /// where the thread computes several rows.
    fn cell_suffix(&self, ky: usize, kx: usize) -> String {
        match self.row_rows() {
            1 => kx.to_string(),
            _ => format!("{ky}_{kx}"),
        }
    }

    /// `offset` moved `ky` rows along the slowest axis (2-D, 3-D) and `kx`
    /// cells along the contiguous one.
    fn moved_to(&self, offset: &[i64], ky: usize, kx: usize) -> Vec<i64> {
        let x = self.row_axis();
        let mut at = rows_down(&offset[..x], ky);
        at.extend(moved(&offset[x..], kx as i64));
        at
    }

    /// Cells of a vector when this kernel's threads move their cells as
    /// vectors: 16 bytes in 1-D ([`model::row_vectors`]), the kernel's
    /// `vector` in 2-D and 3-D.
    fn row_vector(&self) -> Option<usize> {
        match self.dims() {
            1 => model::row_vectors(self.st, self.plan.coarsen).then(|| 16 / self.st.dtype.size()),
            _ => (self.vector > 1).then_some(self.vector),
        }
    }

    /// The first cell of the kernel's first thread along the contiguous
    /// axis: the region's first cell, rounded down to a whole vector where
    /// threads move vectors.
    pub(super) fn row_start(&self) -> String {
        let lo = self.bounds(self.row_axis()).0;
        match (self.row_vector(), lo.parse::<i64>()) {
            (None, _) => lo,
            (Some(v), Ok(k)) => (k / v as i64 * v as i64).to_string(),
            (Some(v), Err(_)) => format!("{lo} / {v} * {v}"),
        }
    }

    /// A thread's consecutive cells of the contiguous axis, moved as vectors
    /// where they can go so, else (1-D) a block apart.
    pub(super) fn naive_row(&self, w: &mut Writer) -> fmt::Result {
        let Some(vector) = self.row_vector() else {
            return self.row_of_scalars(w);
        };
        let window = self.window(vector, self.row_reads());
        let x = self.row_axis();
        let (threads, cells) = (self.plan.block[x], self.row_cells());
        let start = match self.row_start().as_str() {
            "0" => String::new(),
            s => format!("{s} + "),
        };
        writeln!(
            w,
            "const ptrdiff_t first = {start}((ptrdiff_t)blockIdx.x * {threads} + threadIdx.x) * {cells};"
        )?;
        let rows = self.row_rows();
        if rows > 1 {
            let b = super::builtin(0, self.dims());
            writeln!(
                w,
                "const {idx} row = {}(({idx})blockIdx.{b} * {} + threadIdx.{b}) * {rows};",
                self.origin(0),
                self.plan.block[0],
                idx = self.index(),
            )?;
        }
        if x > 0 {
            let outer = if rows > 1 { 1..x } else { 0..x };
            self.thread_cells(w, outer.clone())?;
            let mut guards = Vec::new();
            if rows > 1 {
                guards.push(format!("row >= {}", self.bounds(0).1));
            }
            if !outer.is_empty() {
                guards.push(self.guard(outer));
            }
            guards.push(format!("first >= {}", self.bounds(x).1));
            w.guarded(format_args!("if ({})", guards.join(" || ")), "return;")?;
        }
        w.if_else(
            format_args!("if ({})", self.vector_conditions(&window).join(" && ")),
            |w| self.row_of_vectors(w, &window, vector),
            |w| self.rows_loop(w),
        )
    }

    /// A thread's cells one at a time (by the grid's ends): its row, or
    /// each of its rows in turn.
    fn rows_loop(&self, w: &mut Writer) -> fmt::Result {
        let (x, rows) = (self.row_axis(), self.row_rows());
        if rows == 1 {
            return self.cells_loop(w, x, 1, true);
        }
        let hi0 = self.bounds(0).1;
        w.block(format_args!("for (int j = 0; j < {rows}; ++j)"), |w| {
            writeln!(w, "const {} i0 = row + j;", self.index())?;
            w.guarded(format_args!("if (i0 >= {hi0})"), "return;")?;
            self.cells_loop(w, x, 1, true)
        })
    }

    /// When a thread moves its cells as vectors: all of them in the region,
    /// `window` on the grid, in 1-D every grid 16-byte aligned (in 2-D and
    /// 3-D the launcher runs this kernel on aligned grids of whole vectors
    /// only); each bound written where the others do not imply it.
    fn vector_conditions(&self, window: &Window) -> Vec<String> {
        let x = self.row_axis();
        let (a, b) = window.span();
        let last = self.row_cells() as i64 - 1;
        let mut all = Vec::new();
        for axis in 0..x {
            let (low, high) = window.rows_span(axis);
            let (at, last) = match (axis, self.row_rows()) {
                (0, rows @ 2..) => ("row".to_string(), rows as i64 - 1),
                _ => (format!("i{axis}"), 0),
            };
            all.extend(self.on_grid((axis, &at, false), (low, high), last));
        }
        all.extend(self.on_grid((x, "first", true), (a, b), last));
        if x == 0 {
            let mut pointers: Vec<String> = window
                .loads
                .iter()
                .map(|l| format!("(size_t){}", slot_name(self.st, l.slot)))
                .collect();
            pointers.dedup();
            pointers.extend(self.outputs().iter().map(|o| format!("(size_t){o}")));
            all.push(format!("({}) % 16 == 0", pointers.join(" | ")));
        }
        all
    }

    /// The conditions under which cells `at` to `at + last` along `axis`
    /// are all in the region and reads from `low` to `high` cells from `at`
    /// lie on the grid, where the guard (`at < hi`), the region's bounds and
    /// (unless the threads' cells start `rounded` down to a vector) `at`'s
    /// start at the region's first cell do not already say so.
    fn on_grid(
        &self,
        (axis, at, rounded): (usize, &str, bool),
        (low, high): (i64, i64),
        last: i64,
    ) -> Vec<String> {
        let (lo, hi) = self.bounds(axis);
        let n = format!("n{axis}");
        let mut all = Vec::new();
        match lo.parse::<i64>() {
            Ok(lo) if lo.max(-low) > 0 && (rounded || -low > lo) => {
                all.push(format!("{at} >= {}", lo.max(-low)));
            }
            Ok(_) => {}
            Err(_) => {
                if rounded {
                    all.push(format!("{at} >= {lo}"));
                }
                if low < 0 {
                    all.push(format!("{at} >= {}", -low));
                }
            }
        }
        let end = match hi.strip_prefix(&n) {
            Some("") => Some(0),
            Some(rest) => rest.strip_prefix(" - ").and_then(|k| k.parse::<i64>().ok()),
            None => None,
        };
        // The region ends `k` cells before the grid's end: each condition
        // implies the other where the reads reach past the cells by `k`.
        let on_grid = !matches!(end, Some(k) if high <= last + k);
        let implied = on_grid && matches!(end, Some(k) if high >= last + k);
        if last > 0 && !implied {
            all.push(format!("{} < {hi}", super::shifted(at, last)));
        }
        if on_grid {
            all.push(format!("{} < {n}", super::shifted(at, high)));
        }
        all
    }

    /// The cells a thread's reads from memory take along the contiguous
    /// axis, by slot and row, from its first cell: a step's, its
    /// recomputations' and held frames' included ([`memory_reads`]).
    fn row_reads(&self) -> BTreeMap<(Slot, Vec<i64>), BTreeSet<i64>> {
        let offsets = match self.whole_step {
            Some(_) => memory_reads(self.st),
            None => {
                let mut reads = Vec::new();
                self.s
                    .expr
                    .for_each_read(&mut |a: &Access| reads.push((a.slot, a.offset.clone())));
                reads
            }
        };
        let x = self.row_axis();
        let mut reads: BTreeMap<(Slot, Vec<i64>), BTreeSet<i64>> = BTreeMap::new();
        for (slot, at) in offsets {
            for ky in 0..self.row_rows() {
                let cells = reads.entry((slot, rows_down(&at[..x], ky))).or_default();
                cells.extend((0..self.row_cells() as i64).map(|k| k + at[x]));
            }
        }
        reads
    }

    /// The window of `reads` of a thread's cells, each row's as the fewest
    /// aligned loads of whole vectors, pairs or cells that hold its reads.
    fn window(&self, vector: usize, reads: BTreeMap<(Slot, Vec<i64>), BTreeSet<i64>>) -> Window {
        let lanes = ["x", "y", "z", "w"];
        let mut window = Window::default();
        for ((slot, row), cells) in reads {
            let v = vector as i64;
            let mut by_vector: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
            for p in cells {
                by_vector.entry(p.div_euclid(v)).or_default().push(p);
            }
            for (q, cells) in by_vector {
                let (lo, hi) = (cells[0] - q * v, cells[cells.len() - 1] - q * v);
                // The narrowest aligned load holding both: cells, pairs, vectors.
                let width = (0..)
                    .map(|e| 1i64 << e)
                    .find(|w| lo / w == hi / w)
                    .expect("a vector holds its cells");
                let at = q * v + lo / width * width;
                let name = load_name(&slot_name(self.st, slot), &row, at);
                for p in cells {
                    let text = match width {
                        1 => name.clone(),
                        _ => format!("{name}.{}", lanes[(p - at) as usize]),
                    };
                    let mut offset = row.clone();
                    offset.push(p);
                    window.lanes.insert((slot, offset), text);
                }
                let (row, width) = (row.clone(), width as usize);
                window.loads.push(Load {
                    slot,
                    row,
                    at,
                    width,
                });
            }
        }
        window
    }

    /// The index of the cell `row` and `at` cells along the contiguous axis
    /// from the thread's first: `first + at` in 1-D, else from `c`.
    fn window_index(&self, row: &[i64], at: i64) -> String {
        match row {
            [] => from_first(at),
            _ => offset_index(&[row, &[at]].concat()),
        }
    }

    /// The thread's cells from `window`'s loads, stored as whole vectors of
    /// `v` cells.
    fn row_of_vectors(&self, w: &mut Writer, window: &Window, v: usize) -> fmt::Result {
        let scalar = self.st.dtype.c();
        let x = self.row_axis();
        if self.row_rows() > 1 {
            writeln!(w, "const ptrdiff_t i0 = row;")?;
        }
        if x > 0 {
            writeln!(w, "const ptrdiff_t i{x} = first;")?;
            writeln!(w, "const ptrdiff_t c = {};", linear_index(self.dims()))?;
        }
        for l in &window.loads {
            let buf = slot_name(self.st, l.slot);
            let name = load_name(&buf, &l.row, l.at);
            let at = self.window_index(&l.row, l.at);
            match l.width {
                1 => writeln!(w, "const {scalar} {name} = {buf}[{at}];")?,
                n => writeln!(
                    w,
                    "const {scalar}{n} {name} = *(const {scalar}{n} *)&{buf}[{at}];"
                )?,
            }
        }
        let stores = match self.whole_step {
            Some(_) => self.step_cells(w, window)?,
            None => {
                for (ky, kx) in self.thread_cells_of_row() {
                    let value = self.value(&|a| {
                        window.lanes[&(a.slot, self.moved_to(&a.offset, ky, kx))].clone()
                    });
                    writeln!(w, "const {scalar} r{} = {value};", self.cell_suffix(ky, kx))?;
                }
                vec![(self.output.to_string(), "r".to_string())]
            }
        };
        for (out, local) in stores {
            for ky in 0..self.row_rows() {
                let here = rows_down(&vec![0; x], ky);
                for at in (0..self.row_cells()).step_by(v) {
                    let cells: Vec<String> = (at..at + v)
                        .map(|kx| format!("{local}{}", self.cell_suffix(ky, kx)))
                        .collect();
                    writeln!(
                        w,
                        "*({scalar}{v} *)&{out}[{}] = make_{scalar}{v}({});",
                        self.window_index(&here, at as i64),
                        cells.join(", ")
                    )?;
                }
            }
        }
        Ok(())
    }

    /// The thread's cells, row by row: (row, cell of the row).
    fn thread_cells_of_row(&self) -> Vec<(usize, usize)> {
        let cells = self.row_cells();
        (0..self.row_rows())
            .flat_map(|ky| (0..cells).map(move |kx| (ky, kx)))
            .collect()
    }

    /// Every statement of a step at each of the thread's cells in turn,
    /// reading `window`'s lanes, into locals suffixed with the cell
    /// (`new_u__0`); the buffers the step writes, each with the prefix of
    /// the locals it stores (its field's last statement's).
    fn step_cells(
        &self,
        w: &mut Writer,
        window: &Window,
    ) -> Result<Vec<(String, String)>, fmt::Error> {
        let (st, x) = (self.st, self.row_axis());
        for (ky, kx) in self.thread_cells_of_row() {
            let memory =
                |a: &Access| window.lanes[&(a.slot, self.moved_to(&a.offset, ky, kx))].clone();
            let index = |a: usize, d: i64| match (a == x, a) {
                (true, _) => from_first(kx as i64 + d),
                (false, 0) => super::shifted("i0", ky as i64 + d),
                (false, _) => super::shifted(&format!("i{a}"), d),
            };
            let site = Site {
                memory: &memory,
                index: &index,
                suffix: format!("__{}", self.cell_suffix(ky, kx)),
            };
            for (j, value) in self.locals_at(&site) {
                writeln!(w, "const {} {} = {value};", st.dtype.c(), site.local(st, j))?;
            }
        }
        let grids = self.whole_step.expect("a step's kernel");
        let stores = one_step::stores(st, grids).into_iter();
        Ok(stores
            .map(|(out, local)| (out, format!("{local}__")))
            .collect())
    }

    /// The farthest the kernel reads from a cell along the 1-D axis.
    fn wrap_reach(&self) -> usize {
        match self.whole_step {
            Some(_) => reach(self.st)[0],
            None => self.info.reach[0],
        }
    }

    /// A thread's `coarsen` cells a block apart, so that each of its loads
    /// is a warp's whole row of sectors (steps of several statements in one
    /// kernel, and a `coarsen` that makes no whole vectors, which moving
    /// vectors would not serve): unrolled where all are in the region, so
    /// that every load is issued before the first store (the pointers are
    /// `__restrict__`), one at a time at the region's end.
    fn row_of_scalars(&self, w: &mut Writer) -> fmt::Result {
        let hi = self.bounds(0).1;
        let (threads, cells) = (self.plan.block[0], self.plan.coarsen);
        writeln!(
            w,
            "const ptrdiff_t first = {}(ptrdiff_t)blockIdx.x * {} + threadIdx.x;",
            self.origin(0),
            threads * cells
        )?;
        let last = (cells - 1) * threads;
        w.if_else(
            format_args!("if (first + {last} < {hi})"),
            |w| {
                if !self.periodic() {
                    return self.cells_loop(w, 0, threads, false);
                }
                // Away from the ends the reads need no wrap, which costs
                // integer work a read.
                let r = self.wrap_reach();
                let unwrapped = Gen {
                    unwrapped: true,
                    ..self.clone()
                };
                w.if_else(
                    format_args!("if (first >= {r} && first + {} < n0)", last + r),
                    |w| unwrapped.cells_loop(w, 0, threads, false),
                    |w| self.cells_loop(w, 0, threads, false),
                )
            },
            |w| self.cells_loop(w, 0, threads, true),
        )
    }

    /// The thread's cells along `axis` (`coarsen` of the slowest axis, or a
    /// row's of the contiguous one), `stride` apart from `first`, each its
    /// own update: unrolled, or one at a time `checked` against the region's
    /// ends (threads of rows moving vectors start before the region: its
    /// first end too).
    pub(super) fn cells_loop(
        &self,
        w: &mut Writer,
        axis: usize,
        stride: usize,
        checked: bool,
    ) -> fmt::Result {
        let (lo, hi) = self.bounds(axis);
        let row = axis == self.row_axis();
        let cells = if row {
            self.row_cells()
        } else {
            self.plan.coarsen
        };
        let step = match stride {
            1 => "k".to_string(),
            s => format!("k * {s}"),
        };
        if !checked {
            writeln!(w, "#pragma unroll")?;
        }
        w.block(format_args!("for (int k = 0; k < {cells}; ++k)"), |w| {
            writeln!(w, "const {} i{axis} = first + {step};", self.index())?;
            if checked && row && self.row_start() != lo {
                w.guarded(format_args!("if (i{axis} < {lo})"), "continue;")?;
            }
            if checked {
                // Inside a thread's loop over its rows, the next row goes on.
                let end = if row && self.row_rows() > 1 {
                    "break;"
                } else {
                    "return;"
                };
                w.guarded(format_args!("if (i{axis} >= {hi})"), end)?;
            }
            writeln!(
                w,
                "const {} c = {};",
                self.index(),
                linear_index(self.dims())
            )?;
            self.cell(w)
        })
    }
}
