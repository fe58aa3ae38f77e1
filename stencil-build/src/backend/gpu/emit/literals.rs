//! Literals read from a table: an expression dialect that spells each
//! floating-point literal of an update (and the reciprocal of each literal
//! divisor) as an entry of a table, `lit[i]`, which the launcher passes to
//! the kernel by value.
//!
//! An f64 multiply-add on NVIDIA GPUs takes no immediate operand, so nvcc
//! moves each f64 literal into uniform registers before every use: two
//! `UMOV`s per literal per cell. In the 2-D fused kernels these were a third
//! of the loop's instructions (j2d5pt f64: 324 `UMOV`s in 983 instructions
//! for 3 rows). A kernel parameter, like a `__constant__` variable, is an
//! operand of the multiply-add itself (`c[0x0][...]`); a `__constant__`
//! variable also costs every launch of its file's kernels (see
//! `Gen::literal_table`).

use std::cell::RefCell;
use std::fmt::{self, Write as _};

use super::Gen;
use crate::backend::gpu::plan::temporal::variants;
use crate::backend::{CExpr, Writer};
use crate::codegen::expr::{self, Dialect};
use crate::ir::{Access, Expr, Func};

/// [`CExpr`] with its literals as entries of the table `lit`.
pub struct Banked<'a> {
    c: CExpr<'a>,
    /// The entries in order of first use: the literal as C, and how the
    /// spec wrote it (a reciprocal as `1 / divisor`).
    entries: RefCell<Vec<(String, String)>>,
}

impl<'a> Banked<'a> {
    /// The dialect `c` with an empty table.
    pub fn new(c: CExpr<'a>) -> Self {
        Banked {
            c,
            entries: RefCell::new(Vec::new()),
        }
    }

    /// The table's entries so far: each literal as C, and as the spec wrote it.
    pub fn entries(&self) -> Vec<(String, String)> {
        self.entries.borrow().clone()
    }

    /// `lit[i]`, the entry of the C literal `text`, added if new.
    fn entry(&self, text: String, shown: String) -> String {
        let mut entries = self.entries.borrow_mut();
        let i = match entries.iter().position(|(t, _)| *t == text) {
            Some(i) => i,
            None => {
                entries.push((text, shown));
                entries.len() - 1
            }
        };
        format!("lit[{i}]")
    }
}

impl Dialect for Banked<'_> {
    fn read(&self, access: &Access) -> String {
        self.c.read(access)
    }

    fn param(&self, index: usize) -> String {
        self.c.param(index)
    }

    fn call(&self, func: Func, args: &[String]) -> String {
        self.c.call(func, args)
    }

    fn powi(&self, base: &str, n: i32) -> String {
        self.c.powi(base, n)
    }

    fn reciprocal_sqrt(&self, root: &Expr, arg: &str) -> Option<String> {
        self.c.reciprocal_sqrt(root, arg)
    }

    fn literal(&self, value: f64) -> String {
        let text = self.c.literal(value);
        self.entry(text.clone(), text)
    }

    /// The reciprocal [`CExpr`] multiplies by, as an entry.
    fn reciprocal(&self, divisor: f64) -> Option<String> {
        let r = self.c.reciprocal_value(divisor)?;
        let shown = format!("1 / {}", self.c.literal(divisor));
        Some(self.entry(self.c.literal(r), shown))
    }
}

impl Gen<'_> {
    /// Whether the update reads its literals from a table passed by value
    /// ([`Banked`]): [`variants::banks_literals`].
    pub(super) fn banks_literals(&self) -> bool {
        variants::banks_literals(self.plan, self.st, self.d)
    }

    /// The entries of the update's table of literals, where it
    /// [`Self::banks_literals`] and has any: each literal as C, and as the
    /// spec wrote it.
    pub(super) fn banked_literals(&self) -> Option<Vec<(String, String)>> {
        if !self.banks_literals() {
            return None;
        }
        let banked = Banked::new(CExpr {
            st: self.st,
            gpu: true,
            read: &|_: &Access| String::new(),
        });
        expr::print(&self.s.expr, &banked);
        Some(banked.entries()).filter(|entries| !entries.is_empty())
    }

    /// The type of the update's table of literals ([`Self::banks_literals`]),
    /// at file scope, named after the kernel. The launcher passes the table
    /// by value as the kernel's last argument (`lits`), which puts its
    /// entries in the kernel's parameter bank: operands of the
    /// multiply-adds, as a `__constant__` table's would be. A `__constant__`
    /// variable made every launch of the file's kernels, those that never
    /// read it too, 0.12 us slower in graphs on the H100 (`naive`'s j2d9pt
    /// f64 kernel 2.22 against 2.11 us a step on 512^2;
    /// design notes, `constant-bank`).
    pub(super) fn literal_table(&self, w: &mut Writer) -> fmt::Result {
        let Some(entries) = self.banked_literals() else {
            return Ok(());
        };
        let shown: Vec<&str> = entries.iter().map(|(_, s)| s.as_str()).collect();
        writeln!(
            w,
            "/* The update's literals ({}), passed by value: operands of the multiply-adds (which take no f64",
            shown.join(", ")
        )?;
        writeln!(
            w,
            "   immediate) from the kernel's parameters, where a `__constant__` table would slow every launch. */"
        )?;
        writeln!(w, "struct {}_literals {{", self.sym)?;
        w.scope(|w| writeln!(w, "double v[{}];", entries.len()))?;
        writeln!(w, "}};")
    }

    /// `lits`, the value of the table of literals ([`Self::literal_table`]),
    /// in the launcher before it launches the kernel.
    pub(super) fn literal_values(&self, w: &mut Writer) -> fmt::Result {
        if let Some(entries) = self.banked_literals() {
            let values: Vec<&str> = entries.iter().map(|(v, _)| v.as_str()).collect();
            writeln!(
                w,
                "const {}_literals lits = {{{{{}}}}};",
                self.sym,
                values.join(", ")
            )?;
        }
        Ok(())
    }

    /// `lit`, the entries of the table of literals ([`Self::literal_table`]),
    /// in a function that reads them.
    pub(super) fn literal_alias(&self, w: &mut Writer) -> fmt::Result {
        if let Some(entries) = self.banked_literals() {
            writeln!(w, "const double (&lit)[{}] = lits.v;", entries.len())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Banked;
    use crate::backend::CExpr;
    use crate::codegen::expr;

    #[test]
    fn literals_become_entries_of_the_table_in_the_order_printed() {
        let mut st = crate::backend::gpu::emit::temporal::tests::stencil(
            "\"y\", \"x\"",
            "(5.1*u[-1,0] + 12.1*u[0,1] + 5.1*u[1,0] - 2*u[0,0]) / 118",
            "",
        );
        st.dtype = crate::ir::Dtype::F64;
        let read = |a: &crate::ir::Access| format!("r{:?}", a.offset);
        let banked = Banked::new(CExpr {
            st: &st,
            gpu: true,
            read: &read,
        });
        let text = expr::print(&st.statements[0].expr, &banked);
        assert_eq!(
            text,
            "(lit[1] * r[-1, 0] + lit[2] * r[0, 1] + lit[1] * r[1, 0] - lit[3] * r[0, 0]) * lit[0]"
        );
        let shown: Vec<String> = banked.entries().into_iter().map(|(_, s)| s).collect();
        // The printer asks for a divisor's reciprocal before it prints the dividend.
        assert_eq!(shown, ["1 / 118.0", "5.1", "12.1", "2.0"]);
        assert_eq!(banked.entries()[0].0, "0.00847457627118644");
    }
}
