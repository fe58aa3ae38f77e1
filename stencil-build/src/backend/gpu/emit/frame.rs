//! A mixed boundary on the GPU: each statement's kernels are those of the
//! stencil with a fixed boundary (its "interior", every strategy's fast
//! path, free of edge tests), under launchers of their own; after each,
//! a frame kernel computes the rest of the statement's region, one cell a
//! thread, its reads remapped past the sides that are not fixed. The
//! statement's launcher runs both, the frame over one slab per updated
//! side: a slab of axis `a` spans the interior along the axes before `a`
//! and the whole region along those after it, so that the slabs cover the
//! frame once.

use std::fmt::{self, Write as _};

use super::super::{Dialect, symbol};
use crate::analysis::{Analysis, StatementInfo};
use crate::backend::{
    CExpr, CRemap, Writer, arguments_writing, c_bound, c_parameters, edge_helpers, frame_spans,
    reads_slowest_extent,
};
use crate::codegen::expr;
use crate::codegen::index::{linear_index, remapped_read};
use crate::codegen::names::slot_name;
use crate::ir::{Access, Bound, Boundary, Side, Statement, Stencil};

/// Threads per block of a frame kernel.
const FRAME_BLOCK: usize = 256;

/// Per statement of `st`, whether it has a frame: with a mixed boundary
/// every one, else those of the grid outside a box.
pub(super) fn framed(st: &Stencil, an: &Analysis) -> Vec<bool> {
    let mixed = matches!(st.boundary, Boundary::Mixed(_));
    an.statements
        .iter()
        .map(|info| mixed || info.hole.is_some())
        .collect()
}

/// Per statement, whether its frame kernel is all it runs: a statement of
/// the grid outside a box.
pub(super) fn alone(an: &Analysis) -> Vec<bool> {
    an.statements
        .iter()
        .map(|info| info.hole.is_some())
        .collect()
}

/// The stencil whose kernels compute the statements' interiors: `st`, or
/// with a mixed boundary, `st` with a fixed one.
pub(super) fn interior_stencil(st: &Stencil) -> Stencil {
    match st.boundary {
        Boundary::Mixed(_) => Stencil {
            boundary: Boundary::Fixed,
            ..st.clone()
        },
        _ => st.clone(),
    }
}

/// The prefix of the interior kernels' launchers: with a mixed boundary
/// their own, which the statements' launchers (named with `prefix`) call.
pub(super) fn interior_prefix(st: &Stencil, prefix: &str) -> String {
    match st.boundary {
        Boundary::Mixed(_) => format!("{prefix}_interior"),
        _ => prefix.into(),
    }
}

/// The frame kernels and the launchers of `st`'s statements that have a
/// frame ([`framed`]); the interiors' launchers are named with
/// `interior_prefix`, the spans of their kernels in `interior_an`.
pub(super) fn frames(
    w: &mut Writer,
    (st, an): (&Stencil, &Analysis),
    interior_an: &Analysis,
    (prefix, interior_prefix): (&str, &str),
    d: &Dialect,
) -> fmt::Result {
    edge_helpers(w, st, "static __device__ __forceinline__")?;
    let interior = interior_stencil(st);
    let framed = framed(st, an);
    for (k, s) in st.statements.iter().enumerate() {
        if !framed[k] {
            continue;
        }
        let (info, twin) = (&an.statements[k], &interior.statements[k]);
        let f = Frame {
            st,
            s,
            info,
            d,
            sym: symbol(prefix, d, st, s),
            inner: match &info.hole {
                Some(hole) => hole.clone(),
                None => interior_an.statements[k].bounds.clone(),
            },
            interior: info
                .hole
                .is_none()
                .then(|| symbol(interior_prefix, d, &interior, twin)),
        };
        writeln!(w)?;
        f.kernel(w)?;
        writeln!(w)?;
        f.slab_launcher(w)?;
        writeln!(w)?;
        f.launcher(w)?;
    }
    Ok(())
}

/// One statement's frame.
struct Frame<'a> {
    st: &'a Stencil,
    s: &'a Statement,
    info: &'a StatementInfo,
    d: &'a Dialect,
    /// The statement's launcher.
    sym: String,
    /// The cells of its span the frame leaves out: its interior kernels'
    /// span, or the box its region is outside.
    inner: Vec<[Bound; 2]>,
    /// The launcher of its interior kernels, where it has some.
    interior: Option<String>,
}

impl Frame<'_> {
    fn dims(&self) -> usize {
        self.st.dims()
    }

    /// `__global__ void <sym>_frame(n.., out, slots.., params.., o.., e..)`:
    /// the cells `o[a] <= i[a] < o[a] + e[a]`, one a thread.
    fn kernel(&self, w: &mut Writer) -> fmt::Result {
        let dims = self.dims();
        let mut params = c_parameters(self.st, self.s, "__restrict__", true);
        params.extend((0..dims).map(|a| format!("const ptrdiff_t o{a}")));
        params.extend((0..dims).map(|a| format!("const ptrdiff_t e{a}")));
        let value = expr::print(
            &self.s.expr,
            &CExpr {
                st: self.st,
                read: &|a: &Access| self.read(a),
            },
        );
        writeln!(
            w,
            "/* The frame of `{}`: one cell a thread of the slab o <= i < o + e, reads remapped past the edge. */",
            self.st.fields[self.s.target].name
        )?;
        let head = format!(
            "static __global__ void __launch_bounds__({FRAME_BLOCK}) {}_frame({})",
            self.sym,
            params.join(", ")
        );
        w.definition(head, |w| {
            if !reads_slowest_extent(self.st, self.s) {
                writeln!(
                    w,
                    "(void)n0; /* no read leaves the grid along the slowest axis */"
                )?;
            }
            let cells: Vec<String> = (0..dims).map(|a| format!("e{a}")).collect();
            writeln!(
                w,
                "ptrdiff_t t = (ptrdiff_t)blockIdx.x * {FRAME_BLOCK} + threadIdx.x;"
            )?;
            w.guarded(format_args!("if (t >= {})", cells.join(" * ")), "return;")?;
            for a in (1..dims).rev() {
                writeln!(w, "const ptrdiff_t i{a} = o{a} + t % e{a};")?;
                writeln!(w, "t /= e{a};")?;
            }
            writeln!(w, "const ptrdiff_t i0 = o0 + t;")?;
            for a in 0..dims - 1 {
                let prod: Vec<String> = (a + 1..dims).map(|b| format!("n{b}")).collect();
                writeln!(w, "const ptrdiff_t s{a} = {};", prod.join(" * "))?;
            }
            writeln!(w, "out[{}] = {value};", linear_index(dims))
        })
    }

    fn read(&self, a: &Access) -> String {
        let sides = self.st.boundary.sides(self.dims());
        let buf = slot_name(self.st, a.slot);
        remapped_read(&sides, &a.offset, &buf, &CRemap { st: self.st })
    }

    /// `static int <sym>_slab(o, e, n.., out, slots.., params.., stream)`:
    /// launches the frame kernel over a slab, if it has cells.
    fn slab_launcher(&self, w: &mut Writer) -> fmt::Result {
        let dims = self.dims();
        let mut params = vec!["const ptrdiff_t *o".into(), "const ptrdiff_t *e".into()];
        params.extend(c_parameters(self.st, self.s, "", false));
        params.push(format!("{}Stream_t stream", self.d.api));
        writeln!(
            w,
            "/* Launches the frame kernel over the slab o <= i < o + e; returns the launch's error code. */"
        )?;
        let head = format!("static int {}_slab({})", self.sym, params.join(", "));
        w.definition(head, |w| {
            let cells: Vec<String> = (0..dims).map(|a| format!("e[{a}]")).collect();
            writeln!(w, "const ptrdiff_t cells = {};", cells.join(" * "))?;
            w.guarded("if (cells == 0)", "return 0;")?;
            let mut args = arguments_writing(self.st, self.s, false, &["out".into()]);
            args.extend((0..dims).map(|a| format!("o[{a}]")));
            args.extend((0..dims).map(|a| format!("e[{a}]")));
            writeln!(
                w,
                "{}_frame<<<(unsigned)((cells + {b} - 1) / {b}), {b}, 0, stream>>>({});",
                self.sym,
                args.join(", "),
                b = FRAME_BLOCK
            )?;
            writeln!(w, "return (int){}GetLastError();", self.d.api)
        })
    }

    /// The statement's launcher: its interior kernels, then the frame, one
    /// slab per updated side.
    fn launcher(&self, w: &mut Writer) -> fmt::Result {
        let dims = self.dims();
        let mut params = c_parameters(self.st, self.s, "", false);
        params.push(format!("{}Stream_t stream", self.d.api));
        let args = arguments_writing(self.st, self.s, false, &["out".into()]).join(", ");
        writeln!(
            w,
            "{}",
            match self.interior {
                Some(_) =>
                    "/* Launches the statement's interior kernels and then its frame; returns the first error code. */",
                None =>
                    "/* Launches the frame kernel over the statement's cells, by slabs; returns the first error code. */",
            }
        )?;
        let head = format!("extern \"C\" int {}({})", self.sym, params.join(", "));
        let (outer, inner) = (&self.info.bounds, &self.inner);
        w.definition(head, |w| {
            writeln!(
                w,
                "/* Per axis, the span [lo, hi) and within it [in_lo, in_hi), which the frame leaves out. */"
            )?;
            let spans = |b: &[[Bound; 2]]| -> Vec<[String; 2]> {
                (0..dims).map(|a| b[a].map(|b| c_bound(b, a))).collect()
            };
            // The interior's launch is guarded by its span: every variable.
            let every = self.interior.is_some();
            let slabs = frame_spans(w, (&spans(outer), &spans(inner)), every)?;
            if let Some(interior) = &self.interior {
                // On small grids a region's interior may have no cells: no launch.
                let some: Vec<String> = (0..dims).map(|a| format!("in_lo{a} < in_hi{a}")).collect();
                w.block(format_args!("if ({})", some.join(" && ")), |w| {
                    writeln!(w, "const int err = {interior}({args}, stream);")?;
                    w.guarded("if (err != 0)", "return err;")
                })?;
            }
            let sides = self.st.boundary.sides(dims);
            for (a, k) in slabs {
                let name = if k == 0 { "low" } else { "high" };
                self.slab(w, a, k, (name, sides[a][k]), &args)?;
            }
            writeln!(w, "return 0;")
        })
    }

    /// The slab of axis `a` by side `k` (0 low, 1 high).
    fn slab(
        &self,
        w: &mut Writer,
        a: usize,
        k: usize,
        (name, side): (&str, Side),
        args: &str,
    ) -> fmt::Result {
        let dims = self.dims();
        let span = |b: usize| -> (String, String) {
            match b.cmp(&a) {
                std::cmp::Ordering::Less => (format!("in_lo{b}"), format!("in_hi{b} - in_lo{b}")),
                std::cmp::Ordering::Greater => (format!("lo{b}"), format!("hi{b} - lo{b}")),
                std::cmp::Ordering::Equal if k == 0 => {
                    (format!("lo{b}"), format!("in_lo{b} - lo{b}"))
                }
                std::cmp::Ordering::Equal => (format!("in_hi{b}"), format!("hi{b} - in_hi{b}")),
            }
        };
        let (o, e): (Vec<String>, Vec<String>) = (0..dims).map(span).unzip();
        match self.interior {
            Some(_) => writeln!(
                w,
                "/* The {name} side of `{}` ({}). */",
                self.st.axes[a],
                side.describe(&self.st.params)
            )?,
            None => writeln!(
                w,
                "/* {} the box along `{}`. */",
                if k == 0 { "Below" } else { "Above" },
                self.st.axes[a]
            )?,
        }
        w.braces(|w| {
            writeln!(w, "const ptrdiff_t o[] = {{{}}};", o.join(", "))?;
            writeln!(w, "const ptrdiff_t e[] = {{{}}};", e.join(", "))?;
            writeln!(
                w,
                "const int err = {}_slab(o, e, {args}, stream);",
                self.sym
            )?;
            w.guarded("if (err != 0)", "return err;")
        })
    }
}
