//! `naive`: one thread per cell, reads through `const __restrict__`
//! pointers.

use super::Gen;
use crate::backend::CWriter;
use crate::codegen::index::linear_index;

impl Gen<'_> {
    pub(super) fn naive(&self, w: &mut CWriter) {
        self.thread_cells(w, 0);
        w.line(&format!("if ({})", self.guard(0..self.dims())));
        w.line("    return;");
        w.line(&format!(
            "const ptrdiff_t c = {};",
            linear_index(self.dims())
        ));
        let value = self.value(&|a| self.global_read(a));
        w.line(&format!("out[c] = {value};"));
    }
}
