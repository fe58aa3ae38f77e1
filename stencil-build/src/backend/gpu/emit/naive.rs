//! `naive`: one thread per cell, reads through `const __restrict__`
//! pointers; in 1-D each thread computes `coarsen` cells a block apart
//! ([`row_cells`](crate::backend::gpu::plan::model::row_cells)).

use std::fmt::{self, Write as _};

use super::Gen;
use crate::backend::Writer;
use crate::backend::gpu::step;
use crate::codegen::index::linear_index;

impl Gen<'_> {
    pub(super) fn naive(&self, w: &mut Writer) -> fmt::Result {
        if self.plan.coarsen > 1 {
            return self.naive_row(w);
        }
        self.thread_cells(w, 0)?;
        w.guarded(
            format_args!("if ({})", self.guard(0..self.dims())),
            "return;",
        )?;
        writeln!(w, "const ptrdiff_t c = {};", linear_index(self.dims()))?;
        self.cell(w)
    }

    /// The update of cell `c` (`i<a>` its coordinates): the statement's, or
    /// every statement's where the kernel computes the whole step.
    fn cell(&self, w: &mut Writer) -> fmt::Result {
        if self.whole_step.is_some() {
            return self.every_statement(w);
        }
        let value = self.value(&|a| self.global_read(a));
        writeln!(w, "out[c] = {value};")
    }

    /// The farthest the kernel reads from a cell along the 1-D axis.
    fn wrap_reach(&self) -> usize {
        match self.whole_step {
            Some(_) => step::reach(self.st)[0],
            None => self.info.reach[0],
        }
    }

    /// A 1-D thread's `coarsen` cells, a block apart so that each of its
    /// loads is a warp's whole row of sectors: unrolled where all are in
    /// the region, so that every load is issued before the first store
    /// (the pointers are `__restrict__`), one at a time at the region's end.
    fn naive_row(&self, w: &mut Writer) -> fmt::Result {
        let (lo, hi) = self.bounds(0);
        let (threads, cells) = (self.plan.block[0], self.plan.coarsen);
        let origin = if lo == "0" {
            String::new()
        } else {
            format!("{lo} + ")
        };
        writeln!(
            w,
            "const ptrdiff_t first = {origin}(ptrdiff_t)blockIdx.x * {} + threadIdx.x;",
            threads * cells
        )?;
        // The thread's cells by `g`, one at a time where `checked`, else
        // unrolled.
        let cells_loop = |w: &mut Writer, g: &Gen, checked: bool| -> fmt::Result {
            if !checked {
                writeln!(w, "#pragma unroll")?;
            }
            w.block(format_args!("for (int k = 0; k < {cells}; ++k)"), |w| {
                writeln!(w, "const ptrdiff_t i0 = first + k * {threads};")?;
                if checked {
                    w.guarded(format_args!("if (i0 >= {hi})"), "return;")?;
                }
                writeln!(w, "const ptrdiff_t c = i0;")?;
                g.cell(w)
            })
        };
        let last = (cells - 1) * threads;
        w.if_else(
            format_args!("if (first + {last} < {hi})"),
            |w| {
                if !self.periodic() {
                    return cells_loop(w, self, false);
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
                    |w| cells_loop(w, &unwrapped, false),
                    |w| cells_loop(w, self, false),
                )
            },
            |w| cells_loop(w, self, true),
        )
    }
}
