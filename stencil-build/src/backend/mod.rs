//! Kernel generators, one module per backend, and what the C-family ones share.

pub mod gpu;
pub mod openmp;

use crate::codegen::expr::{Dialect, float_literal};
use crate::ir::{Access, Dtype, Func, Stencil};

/// The float literal suffix of a C-family language (`f` for `float`).
pub fn suffix(d: Dtype) -> &'static str {
    match d {
        Dtype::F32 => "f",
        Dtype::F64 => "",
    }
}

/// `x^n` by repeated multiplication, as every backend computes it, declared
/// with `qualifiers` (`static inline` in C, `__device__` ones on GPUs).
pub fn powi_helper(w: &mut CWriter, dtype: Dtype, qualifiers: &str) {
    let t = dtype.c();
    let one = float_literal(1.0, dtype, suffix(dtype));
    w.line("/* x^n by repeated multiplication, as every backend computes it. */");
    w.line(&format!("{qualifiers} {t} stencil_powi({t} x, int n)"));
    w.line("{");
    w.line(&format!("    {t} r = {one};"));
    w.line("    for (int k = n < 0 ? -n : n; k > 0; --k)");
    w.line("        r *= x;");
    w.line(&format!("    return n < 0 ? {one} / r : r;"));
    w.line("}");
}

/// C-family spelling of expressions (C11, CUDA, HIP): `<math.h>` functions
/// with the dtype's suffix, `p_`-prefixed params, `stencil_powi`; reads are
/// spelled by `read`, which knows where the kernel keeps its data.
pub struct CExpr<'a> {
    /// The stencil.
    pub st: &'a Stencil,
    /// How a read is spelled.
    pub read: &'a dyn Fn(&Access) -> String,
}

impl Dialect for CExpr<'_> {
    fn read(&self, a: &Access) -> String {
        (self.read)(a)
    }

    fn param(&self, index: usize) -> String {
        format!("p_{}", self.st.params[index])
    }

    fn call(&self, func: Func, args: &[String]) -> String {
        let base = match func {
            Func::Abs => "fabs",
            Func::Min => "fmin",
            Func::Max => "fmax",
            f => f.name(),
        };
        format!("{base}{}({})", suffix(self.st.dtype), args.join(", "))
    }

    fn powi(&self, base: &str, n: i32) -> String {
        format!("stencil_powi({base}, {n})")
    }

    fn literal(&self, value: f64) -> String {
        float_literal(value, self.st.dtype, suffix(self.st.dtype))
    }
}

/// An indenting writer for generated C-family source.
#[derive(Default)]
pub struct CWriter {
    out: String,
    level: usize,
}

impl CWriter {
    /// Writes one line at the current indentation.
    pub fn line(&mut self, text: &str) {
        for _ in 0..self.level {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Writes `#pragma text` at the current indentation.
    pub fn pragma(&mut self, text: &str) {
        self.line(&format!("#pragma {text}"));
    }

    /// Writes an empty line.
    pub fn blank(&mut self) {
        self.out.push('\n');
    }

    /// Indents the following lines one level more.
    pub fn indent(&mut self) {
        self.level += 1;
    }

    /// Indents the following lines one level less.
    pub fn dedent(&mut self) {
        self.dedent_by(1);
    }

    /// Indents the following lines `n` levels less.
    pub fn dedent_by(&mut self, n: usize) {
        self.level = self.level.saturating_sub(n);
    }

    /// The text written.
    pub fn finish(self) -> String {
        self.out
    }
}
