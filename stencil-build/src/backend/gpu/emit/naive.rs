//! `naive`: one thread per cell, reads through `const __restrict__`
//! pointers; in 1-D each thread computes `coarsen` consecutive cells, in
//! 16-byte vectors where it can ([`row`](super::row)), in 2-D and 3-D
//! `vector` consecutive cells of the contiguous axis (the same), or
//! `coarsen` consecutive cells of the slowest axis, a weighted sum's reads
//! each loaded once for all of them.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use super::Gen;
use crate::backend::{CExpr, Writer};
use crate::codegen::expr;
use crate::codegen::index::{linear_index, offset_index};
use crate::ir::{Access, Dtype, Expr, Slot, weighted_sum};

impl Gen<'_> {
    pub(super) fn naive(&self, w: &mut Writer) -> fmt::Result {
        if self.plan.coarsen > 1 && self.dims() == 1 || self.vector > 1 {
            return self.naive_row(w);
        } else if self.plan.coarsen > 1 {
            return self.naive_column(w);
        }
        self.thread_cells(w, 0..self.dims())?;
        w.guarded(
            format_args!("if ({})", self.guard(0..self.dims())),
            "return;",
        )?;
        writeln!(w, "const ptrdiff_t c = {};", linear_index(self.dims()))?;
        self.cell(w)
    }

    /// The update of cell `c` (`i<a>` its coordinates): the statement's, or
    /// every statement's where the kernel computes the whole step.
    pub(super) fn cell(&self, w: &mut Writer) -> fmt::Result {
        if self.whole_step.is_some() {
            return self.every_statement(w);
        }
        let value = self.value(&|a| self.global_read(a));
        writeln!(w, "out[c] = {value};")
    }
}

/// The terms of a thread's weighted sums over its cells of the slowest
/// axis, by the read they take ([`read_order`]): the read's offset from the
/// thread's first cell, and the cells (`k`) whose sum takes it with what
/// coefficient (as C).
type Columns = BTreeMap<(Vec<i64>, Slot), (Vec<i64>, Vec<(usize, String)>)>;

/// Where a read at `offset` from a thread's first cell goes in its column
/// sums. In f32 the order of memory (the slowest axis first). In f64, whose
/// multiply-adds take no immediate operand, grouped by column (the other
/// axes first): nvcc holds each literal in registers from its first use to
/// its last, a coefficient's uses are then at most `coarsen` reads apart,
/// while in the order of memory those spans overlapped until the kernel
/// spilled (AN5D's box of radius 3 with 4 cells a thread: 255 registers and
/// 1 KiB of spills, against 80). On the H200, with 8 cells a thread, f64
/// ran 1.01x-20x as fast grouped (box3d4r 0.82 to 16.55 GCells/s); f32
/// 0.88x-1.17x (slower on four boxes of seven; design notes, "Columns of
/// cells").
fn read_order(offset: &[i64], dtype: Dtype) -> Vec<i64> {
    match dtype {
        Dtype::F32 => offset.to_vec(),
        Dtype::F64 => offset[1..].iter().chain(&offset[..1]).copied().collect(),
    }
}

impl Gen<'_> {
    /// A thread's `coarsen` consecutive cells along the slowest axis (2-D,
    /// 3-D). Where the update is a weighted sum of reads, each read the
    /// cells share is loaded once and multiplied into every cell's sum: a
    /// box of radius r over c cells loads (2r + c) / (c (2r + 1)) of what c
    /// threads would, which is what bounds `naive` on wide boxes (one load
    /// a multiply-add from L1). Else each cell's update in turn, unrolled.
    fn naive_column(&self, w: &mut Writer) -> fmt::Result {
        let (cells, dims) = (self.plan.coarsen, self.dims());
        let hi = self.bounds(0).1;
        let z = super::builtin(0, dims);
        writeln!(
            w,
            "const {idx} first = {}(({idx})blockIdx.{z} * {} + threadIdx.{z}) * {cells};",
            self.origin(0),
            self.plan.block[0],
            idx = self.index(),
        )?;
        self.thread_cells(w, 1..self.dims())?;
        w.guarded(
            format_args!("if (first >= {hi} || {})", self.guard(1..dims)),
            "return;",
        )?;
        let sums = self
            .whole_step
            .is_none()
            .then(|| weighted_sum(&self.s.expr))
            .flatten();
        w.if_else(
            format_args!("if (first + {} < {hi})", cells - 1),
            |w| match &sums {
                Some((terms, constant)) => self.column_sums(w, terms, constant.as_ref()),
                None => self.cells_loop(w, 0, 1, false),
            },
            |w| self.cells_loop(w, 0, 1, true),
        )
    }

    /// The thread's cells as weighted sums (`terms`, plus `constant`), one
    /// accumulator a cell, each read loaded once.
    fn column_sums(
        &self,
        w: &mut Writer,
        terms: &[(Access, Expr)],
        constant: Option<&Expr>,
    ) -> fmt::Result {
        let (cells, scalar) = (self.plan.coarsen, self.st.dtype.c());
        // A coefficient multiplies the read: parenthesised unless one term.
        let coefficient = |e: &Expr| {
            let c = CExpr {
                st: self.st,
                gpu: true,
                read: &|_: &Access| unreachable!("a coefficient reads no grid"),
            };
            let text = expr::print(e, &c);
            match e {
                Expr::Lit(_) | Expr::Param(_) => text,
                _ => format!("({text})"),
            }
        };
        writeln!(w, "const {} i0 = first;", self.index())?;
        writeln!(
            w,
            "const {} c = {};",
            self.index(),
            linear_index(self.dims())
        )?;
        let start = constant.map_or_else(|| coefficient(&Expr::Lit(0.0)), coefficient);
        for k in 0..cells {
            writeln!(w, "{scalar} sum{k} = {start};")?;
        }
        let mut columns = Columns::new();
        for (a, coef) in terms {
            let coef = coefficient(coef);
            for k in 0..cells {
                let mut offset = a.offset.clone();
                offset[0] += k as i64;
                let key = (read_order(&offset, self.st.dtype), a.slot);
                let (_, uses) = columns.entry(key).or_insert_with(|| (offset, Vec::new()));
                uses.push((k, coef.clone()));
            }
        }
        for ((_, slot), (offset, uses)) in columns {
            let read = self.global_read(&Access { slot, offset });
            w.braces(|w| {
                writeln!(w, "const {scalar} v = {read};")?;
                for (k, coef) in uses {
                    writeln!(w, "sum{k} += {coef} * v;")?;
                }
                Ok(())
            })?;
        }
        for k in 0..cells {
            let mut at = vec![0; self.dims()];
            at[0] = k as i64;
            writeln!(w, "out[{}] = sum{k};", offset_index(&at))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::read_order;
    use crate::ir::Dtype;

    /// f32 reads go in the order of memory, f64 reads column by column: a
    /// column's reads along the slowest axis are adjacent, so that each
    /// coefficient's uses are.
    #[test]
    fn reads_go_in_memory_order_in_f32_and_by_column_in_f64() {
        let reads = [[-1, 0, 1], [0, 0, 0], [1, 0, 1], [0, 0, 1]];
        let sorted = |dtype| {
            let mut r = reads.to_vec();
            r.sort_by_key(|o| read_order(o, dtype));
            r
        };
        assert_eq!(
            sorted(Dtype::F32),
            [[-1, 0, 1], [0, 0, 0], [0, 0, 1], [1, 0, 1]]
        );
        assert_eq!(
            sorted(Dtype::F64),
            [[0, 0, 0], [-1, 0, 1], [0, 0, 1], [1, 0, 1]]
        );
    }
}
