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
    CExpr, CRemap, Writer, arguments_writing, c_parameters, edge_helpers, reads_slowest_extent,
};
use crate::codegen::expr;
use crate::codegen::index::{linear_index, remapped_read};
use crate::codegen::names::slot_name;
use crate::ir::{Access, Boundary, Side, Statement, Stencil};

/// Threads per block of a frame kernel.
const FRAME_BLOCK: usize = 256;

/// The stencil whose kernels compute a mixed boundary's interiors: `st`
/// with a fixed boundary.
pub(super) fn interior_stencil(st: &Stencil) -> Stencil {
    Stencil {
        boundary: Boundary::Fixed,
        ..st.clone()
    }
}

/// The prefix of the interior kernels' launchers, which the statements'
/// own launchers (named with `prefix`) call.
pub(super) fn interior_prefix(prefix: &str) -> String {
    format!("{prefix}_interior")
}

/// The frame kernels and the statements' launchers of `st`, whose boundary
/// is mixed; the interior launchers are named with [`interior_prefix`].
pub(super) fn frames(
    w: &mut Writer,
    st: &Stencil,
    an: &Analysis,
    prefix: &str,
    d: &Dialect,
) -> fmt::Result {
    edge_helpers(w, st, "static __device__ __forceinline__")?;
    let interior = interior_stencil(st);
    for ((s, info), twin) in st
        .statements
        .iter()
        .zip(&an.statements)
        .zip(&interior.statements)
    {
        let f = Frame {
            st,
            s,
            info,
            d,
            sym: symbol(prefix, d, st, s),
            interior: symbol(&interior_prefix(prefix), d, &interior, twin),
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
    /// The launcher of its interior kernels.
    interior: String,
}

impl Frame<'_> {
    fn dims(&self) -> usize {
        self.st.dims()
    }

    /// The distance from each edge of the interior its interior kernels
    /// compute: the region a fixed boundary would give the statement.
    fn inner(&self) -> Vec<[usize; 2]> {
        self.info.halo.iter().map(|&h| [h, h]).collect()
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
        let Boundary::Mixed(sides) = &self.st.boundary else {
            unreachable!("frames are emitted for mixed boundaries only")
        };
        let buf = slot_name(self.st, a.slot);
        remapped_read(sides, &a.offset, &buf, &CRemap { st: self.st })
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
            "/* Launches the statement's interior kernels and then its frame; returns the first error code. */"
        )?;
        let head = format!("extern \"C\" int {}({})", self.sym, params.join(", "));
        let (edges, inner) = (&self.info.edges, self.inner());
        w.definition(head, |w| {
            writeln!(w, "const int interior = {}({args}, stream);", self.interior)?;
            w.guarded("if (interior != 0)", "return interior;")?;
            writeln!(
                w,
                "/* Per axis, the region [lo, hi) and within it the interior [in_lo, in_hi) computed above. */"
            )?;
            for a in 0..dims {
                let [el, eh] = edges[a];
                let [il, ih] = inner[a];
                let hi = if eh == 0 {
                    format!("n{a}")
                } else {
                    format!("n{a} - {eh}")
                };
                writeln!(w, "const ptrdiff_t lo{a} = {el}, hi{a} = {hi};")?;
                writeln!(
                    w,
                    "const ptrdiff_t in_lo{a} = {il} < hi{a} ? {il} : hi{a};"
                )?;
                writeln!(
                    w,
                    "const ptrdiff_t in_hi{a} = n{a} - {ih} > in_lo{a} ? n{a} - {ih} : in_lo{a};"
                )?;
            }
            let sides = self.st.boundary.sides(dims);
            for a in 0..dims {
                for (k, name) in [(0, "low"), (1, "high")] {
                    if inner[a][k] == edges[a][k] {
                        continue;
                    }
                    self.slab(w, a, k, (name, sides[a][k]), &args)?;
                }
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
        writeln!(
            w,
            "/* The {name} side of `{}` ({}). */",
            self.st.axes[a],
            side.describe(&self.st.params)
        )?;
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
