//! `naive`: one thread per cell, reads through `const __restrict__`
//! pointers.

use std::fmt::{self, Write as _};

use super::Gen;
use crate::backend::Writer;
use crate::codegen::index::linear_index;

impl Gen<'_> {
    pub(super) fn naive(&self, w: &mut Writer) -> fmt::Result {
        self.thread_cells(w, 0)?;
        w.guarded(
            format_args!("if ({})", self.guard(0..self.dims())),
            "return;",
        )?;
        writeln!(w, "const ptrdiff_t c = {};", linear_index(self.dims()))?;
        let value = self.value(&|a| self.global_read(a));
        writeln!(w, "out[c] = {value};")?;
        Ok(())
    }
}
