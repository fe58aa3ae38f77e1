//! The frame pass of an OpenMP statement: the cells of its span that the
//! interior's loops leave out (by a side that is not fixed, those whose
//! reads pass the edge; for a region outside a box, all of it but the
//! box), one call a cell of a function whose reads are remapped past the
//! edge. The cells go by slabs: the slab of axis `a` spans the interior
//! along the axes before `a` and the whole span along those after it, so
//! that the slabs cover the frame once.

use std::fmt::{self, Write as _};

use super::{arguments, parameters, strides};
use crate::backend::{CExpr, CRemap, Writer, frame_spans, reads_slowest_extent};
use crate::codegen::expr;
use crate::codegen::index::remapped_read;
use crate::codegen::names::slot_name;
use crate::ir::{Access, Statement, Stencil};

/// `static inline void <sym>_at(i0.., n0.., out, slots.., params..)`: one
/// cell of the frame, its reads remapped past the edge (wrapped by a
/// periodic side).
pub(super) fn cell(w: &mut Writer, st: &Stencil, s: &Statement, sym: &str) -> fmt::Result {
    let dims = st.dims();
    let sides = st.boundary.sides(dims);
    let value = expr::print(
        &s.expr,
        &CExpr {
            st,
            read: &|a: &Access| {
                remapped_read(&sides, &a.offset, &slot_name(st, a.slot), &CRemap { st })
            },
        },
    );
    writeln!(
        w,
        "/* One cell of the frame, {}. */",
        match st.boundary {
            crate::ir::Boundary::Fixed => "reads on the grid",
            crate::ir::Boundary::Periodic => "reads wrapped around the grid",
            crate::ir::Boundary::Mixed(_) => "reads remapped past the edge",
        }
    )?;
    w.definition(
        format_args!("static inline void {sym}_at({})", parameters(st, s, true)),
        |w| {
            if !reads_slowest_extent(st, s) {
                writeln!(
                    w,
                    "(void)n0; /* no read leaves the grid along the slowest axis */"
                )?;
            }
            strides(w, dims)?;
            writeln!(
                w,
                "const ptrdiff_t c = {};",
                crate::codegen::index::linear_index(dims)
            )?;
            writeln!(w, "out[c] = {value};")?;
            Ok(())
        },
    )
}

/// The cells of `outer` outside `inner` (each `[from, to]` per axis, as
/// C), by slabs, each cell through [`cell`]'s function; `after_interior`
/// where the interior's loops come before them.
pub(super) fn pass(
    w: &mut Writer,
    (st, s): (&Stencil, &Statement),
    (outer, inner): (&[[String; 2]], &[[String; 2]]),
    sym: &str,
    after_interior: bool,
) -> fmt::Result {
    let dims = st.dims();
    let call = format!("{sym}_at({});", arguments(st, s, true).join(", "));
    // Apart from the interior's loops, where there are some.
    if after_interior {
        writeln!(w)?;
    }
    writeln!(
        w,
        "/* The frame, by slabs: per axis, the span [lo, hi) and within it [in_lo, in_hi), the cells left out. */"
    )?;
    let slabs = frame_spans(w, (outer, inner), false)?;
    for (a, k) in slabs {
        let side = if k == 0 { "low" } else { "high" };
        writeln!(w, "/* By the {side} side of `{}`. */", st.axes[a])?;
        slab(w, dims, a, k, &call)?;
    }
    Ok(())
}

/// The loop nest over the slab of axis `a` by side `k` (0 low, 1 high).
fn slab(w: &mut Writer, dims: usize, a: usize, k: usize, call: &str) -> fmt::Result {
    let span = |b: usize| match b.cmp(&a) {
        std::cmp::Ordering::Less => (format!("in_lo{b}"), format!("in_hi{b}")),
        std::cmp::Ordering::Greater => (format!("lo{b}"), format!("hi{b}")),
        std::cmp::Ordering::Equal if k == 0 => (format!("lo{b}"), format!("in_lo{b}")),
        std::cmp::Ordering::Equal => (format!("in_hi{b}"), format!("hi{b}")),
    };
    let loops: Vec<String> = (0..dims)
        .map(|b| {
            let (from, to) = span(b);
            format!("for (ptrdiff_t i{b} = {from}; i{b} < {to}; ++i{b})")
        })
        .collect();
    if dims > 1 {
        w.pragma(&format!(
            "omp parallel for collapse({}) schedule(static)",
            dims - 1
        ))?;
    }
    let (last, outer) = loops.split_last().expect("one axis at least");
    w.nest(outer, |w| {
        w.pragma("omp simd")?;
        w.guarded(last, call)
    })
}
