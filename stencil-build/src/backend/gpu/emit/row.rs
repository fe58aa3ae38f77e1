//! 1-D `naive`: each thread computes `coarsen` cells. Where they make
//! whole 16-byte vectors ([`model::row_vectors`]), they are consecutive from
//! a cell aligned to 16 bytes, and a thread whose cells lie in the region,
//! whose window lies on the grid and whose grids are aligned loads each
//! grid's window as aligned vectors and stores its cells as vectors: a
//! warp's load is then 512 contiguous bytes, the reads its neighbours share
//! come from L1, and a thread issues a few wide loads rather than one a
//! cell (on the H200 line stencils of radius 1-4 in f32 ran 1.14x-1.38x as
//! fast as with 4 cells a block apart; design notes, "1-D rows in
//! vectors"); the other threads compute theirs one at a time. A kernel of a
//! whole step ([`step::one_kernel`]) takes its window from every read its
//! statements make from memory, recomputations included, and stores each
//! field it updates. A `coarsen` that makes no whole vectors keeps a
//! thread's cells a block apart.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};

use super::Gen;
use super::one_step::{self, Site};
use crate::backend::Writer;
use crate::backend::gpu::plan::model;
use crate::backend::gpu::step;
use crate::codegen::index::linear_index;
use crate::codegen::names::slot_name;
use crate::ir::{Access, Slot};

/// A thread's window of a grid, as aligned loads: each load's slot, first
/// cell (from the thread's first) and cells, and the C text of each cell
/// the update reads, by slot and offset from the thread's first cell.
#[derive(Debug, Default)]
struct Window {
    loads: Vec<(Slot, i64, usize)>,
    lanes: BTreeMap<(Slot, i64), String>,
}

impl Window {
    /// The first and last cells the loads read, from the thread's first.
    fn span(&self) -> (i64, i64) {
        let first = self.loads.iter().map(|l| l.1).min().unwrap_or(0);
        let last = self.loads.iter().map(|l| l.1 + l.2 as i64 - 1).max();
        (first, last.unwrap_or(0))
    }
}

/// The name of a window's load of `slot` at `at` cells from the thread's
/// first (`cur_u__m2`, `cur_u__0`, `cur_u__p4`; specs cannot name `__`).
fn load_name(slot: &str, at: i64) -> String {
    match at {
        a if a < 0 => format!("{slot}__m{}", -a),
        0 => format!("{slot}__0"),
        a => format!("{slot}__p{a}"),
    }
}

/// `first + d`, `first - d` or `first`.
fn from_first(d: i64) -> String {
    super::shifted("first", d)
}

impl Gen<'_> {
    /// Cells of a 16-byte vector when this kernel's threads move their
    /// cells as vectors ([`model::row_vectors`]).
    fn row_vector(&self) -> Option<usize> {
        model::row_vectors(self.st, self.plan.coarsen).then(|| 16 / self.st.dtype.size())
    }

    /// The first cell of the kernel's first thread: the region's first cell,
    /// rounded down to a whole vector where threads move vectors.
    pub(super) fn row_start(&self) -> String {
        let lo = self.bounds(0).0;
        match (self.row_vector(), lo.parse::<i64>()) {
            (None, _) => lo,
            (Some(v), Ok(k)) => (k / v as i64 * v as i64).to_string(),
            (Some(v), Err(_)) => format!("{lo} / {v} * {v}"),
        }
    }

    /// A 1-D thread's `coarsen` cells: consecutive and moved as vectors
    /// where they can go so, else a block apart.
    pub(super) fn naive_row(&self, w: &mut Writer) -> fmt::Result {
        let Some(vector) = self.row_vector() else {
            return self.row_of_scalars(w);
        };
        let window = self.window(vector, self.row_reads());
        let (threads, cells) = (self.plan.block[0], self.plan.coarsen);
        let start = match self.row_start().as_str() {
            "0" => String::new(),
            s => format!("{s} + "),
        };
        writeln!(
            w,
            "const ptrdiff_t first = {start}((ptrdiff_t)blockIdx.x * {threads} + threadIdx.x) * {cells};"
        )?;
        w.if_else(
            format_args!("if ({})", self.vector_conditions(&window).join(" && ")),
            |w| self.row_of_vectors(w, &window, vector),
            |w| self.cells_loop(w, 1, true),
        )
    }

    /// When a thread moves its cells as vectors: all of them in the region,
    /// `window` on the grid, every grid 16-byte aligned; each bound written
    /// where the others do not imply it.
    fn vector_conditions(&self, window: &Window) -> Vec<String> {
        let (lo, hi) = self.bounds(0);
        let (a, b) = window.span();
        let last = self.plan.coarsen as i64 - 1;
        let mut all = Vec::new();
        match lo.parse::<i64>() {
            Ok(lo) if lo.max(-a) > 0 => all.push(format!("first >= {}", lo.max(-a))),
            Ok(_) => {}
            Err(_) => {
                all.push(format!("first >= {lo}"));
                if a < 0 {
                    all.push(format!("first >= {}", -a));
                }
            }
        }
        let end = match hi.as_str() {
            "n0" => Some(0),
            hi => hi.strip_prefix("n0 - ").and_then(|k| k.parse::<i64>().ok()),
        };
        let in_region = format!("first + {last} < {hi}");
        let on_grid = format!("{} < n0", from_first(b));
        match end {
            Some(k) if last + k >= b => all.push(in_region),
            Some(0) => all.push(on_grid),
            _ => all.extend([in_region, on_grid]),
        }
        let mut pointers: Vec<String> = window
            .loads
            .iter()
            .map(|l| format!("(size_t){}", slot_name(self.st, l.0)))
            .collect();
        pointers.dedup();
        pointers.extend(self.row_outputs().iter().map(|o| format!("(size_t){o}")));
        all.push(format!("({}) % 16 == 0", pointers.join(" | ")));
        all
    }

    /// The buffers the kernel writes: the update's, or each field a step's
    /// kernel updates.
    fn row_outputs(&self) -> Vec<String> {
        match self.whole_step {
            Some(grids) => grids
                .outputs
                .iter()
                .map(|&f| step::output_name(self.st, f))
                .collect(),
            None => vec![self.output.to_string()],
        }
    }

    /// The cells a thread's reads from memory take, by slot, from its first
    /// cell: a step's, its recomputations' and held frames' included
    /// ([`step::memory_reads`]).
    fn row_reads(&self) -> BTreeMap<Slot, BTreeSet<i64>> {
        let offsets = match self.whole_step {
            Some(_) => step::memory_reads(self.st),
            None => {
                let mut reads = Vec::new();
                self.s
                    .expr
                    .for_each_read(&mut |a: &Access| reads.push((a.slot, a.offset.clone())));
                reads
            }
        };
        let mut reads: BTreeMap<Slot, BTreeSet<i64>> = BTreeMap::new();
        for (slot, at) in offsets {
            let cells = reads.entry(slot).or_default();
            cells.extend((0..self.plan.coarsen as i64).map(|k| k + at[0]));
        }
        reads
    }

    /// The window of `reads` of a thread's cells, each slot's as the fewest
    /// aligned loads of whole vectors, pairs or cells that hold its reads.
    fn window(&self, vector: usize, reads: BTreeMap<Slot, BTreeSet<i64>>) -> Window {
        let lanes = ["x", "y", "z", "w"];
        let mut window = Window::default();
        for (slot, cells) in reads {
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
                let name = load_name(&slot_name(self.st, slot), at);
                window.loads.push((slot, at, width as usize));
                for p in cells {
                    let text = match width {
                        1 => name.clone(),
                        _ => format!("{name}.{}", lanes[(p - at) as usize]),
                    };
                    window.lanes.insert((slot, p), text);
                }
            }
        }
        window
    }

    /// The thread's cells from `window`'s loads, stored as whole vectors of
    /// `v` cells.
    fn row_of_vectors(&self, w: &mut Writer, window: &Window, v: usize) -> fmt::Result {
        let scalar = self.st.dtype.c();
        for &(slot, at, width) in &window.loads {
            let buf = slot_name(self.st, slot);
            let (name, at) = (load_name(&buf, at), from_first(at));
            match width {
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
                for k in 0..self.plan.coarsen as i64 {
                    let value = self.value(&|a| window.lanes[&(a.slot, k + a.offset[0])].clone());
                    writeln!(w, "const {scalar} r{k} = {value};")?;
                }
                vec![(self.output.to_string(), "r".to_string())]
            }
        };
        for (out, local) in stores {
            for at in (0..self.plan.coarsen).step_by(v) {
                let cells: Vec<String> = (at..at + v).map(|k| format!("{local}{k}")).collect();
                writeln!(
                    w,
                    "*({scalar}{v} *)&{out}[{}] = make_{scalar}{v}({});",
                    from_first(at as i64),
                    cells.join(", ")
                )?;
            }
        }
        Ok(())
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
        let st = self.st;
        for k in 0..self.plan.coarsen as i64 {
            let memory = |a: &Access| window.lanes[&(a.slot, k + a.offset[0])].clone();
            let index = |_, d| from_first(k + d);
            let site = Site {
                memory: &memory,
                index: &index,
                suffix: format!("__{k}"),
            };
            for (j, value) in self.values_at(&site).into_iter().enumerate() {
                writeln!(w, "const {} {} = {value};", st.dtype.c(), site.local(st, j))?;
            }
        }
        let grids = self.whole_step.expect("a step's kernel");
        let stores = grids.outputs.iter().map(|&f| {
            let last = (0..st.statements.len())
                .rfind(|&j| st.statements[j].target == f)
                .expect("an output's statement");
            (
                step::output_name(st, f),
                format!("{}__", one_step::local(st, last)),
            )
        });
        Ok(stores.collect())
    }

    /// The farthest the kernel reads from a cell along the 1-D axis.
    fn wrap_reach(&self) -> usize {
        match self.whole_step {
            Some(_) => step::reach(self.st)[0],
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
                    return self.cells_loop(w, threads, false);
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
                    |w| unwrapped.cells_loop(w, threads, false),
                    |w| self.cells_loop(w, threads, false),
                )
            },
            |w| self.cells_loop(w, threads, true),
        )
    }

    /// The thread's `coarsen` cells, `stride` apart from `first` along the
    /// slowest axis, each its own update: unrolled, or one at a time
    /// `checked` against the region's ends (in 1-D threads moving vectors
    /// start before the region: its first end too).
    pub(super) fn cells_loop(&self, w: &mut Writer, stride: usize, checked: bool) -> fmt::Result {
        let (cells, (lo, hi)) = (self.plan.coarsen, self.bounds(0));
        let step = match stride {
            1 => "k".to_string(),
            s => format!("k * {s}"),
        };
        if !checked {
            writeln!(w, "#pragma unroll")?;
        }
        w.block(format_args!("for (int k = 0; k < {cells}; ++k)"), |w| {
            writeln!(w, "const {} i0 = first + {step};", self.index())?;
            if checked && self.dims() == 1 && self.row_start() != lo {
                w.guarded(format_args!("if (i0 < {lo})"), "continue;")?;
            }
            if checked {
                w.guarded(format_args!("if (i0 >= {hi})"), "return;")?;
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
