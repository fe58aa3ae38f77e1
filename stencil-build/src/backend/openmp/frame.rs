//! The frame pass of an OpenMP statement: the cells of its span that the
//! interior's loops leave out (by a side that is not fixed, those whose
//! reads pass the edge), one call a cell of a function whose reads are
//! remapped past the edge. The cells go by slabs: the slab of axis `a`
//! spans the interior along the axes before `a` and the whole span along
//! those after it, so that the slabs cover the frame once.
//!
//! A region outside a box goes by the same slabs, each through a function
//! of its own: the interior's cache-blocked loops on the slab's cells
//! whose reads stay on the grid, the frame pass on the rest.

use std::fmt::{self, Write as _};

use super::{arguments, c_value, interior, parameters, strides};
use crate::backend::{
    CRemap, Writer, frame_slab_origin, frame_slab_span, frame_spans, reads_slowest_extent,
};
use crate::codegen::index::remapped_read;
use crate::codegen::names::slot_name;
use crate::ir::{Access, Statement, Stencil};

/// `static inline void <sym>_at(i0.., n0.., out, slots.., params..)`: one
/// cell of the frame, its reads remapped past the edge (wrapped by a
/// periodic side).
pub(super) fn cell(w: &mut Writer, st: &Stencil, s: &Statement, sym: &str) -> fmt::Result {
    let dims = st.dims();
    let sides = st.boundary.sides(dims);
    let value = c_value(st, s, &|a: &Access| {
        remapped_read(&sides, &a.offset, &slot_name(st, a.slot), &CRemap { st })
    });
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
/// C), by slabs, each cell through [`cell`]'s function, after the
/// interior's loops.
pub(super) fn pass(
    w: &mut Writer,
    (st, s): (&Stencil, &Statement),
    (outer, inner): (&[[String; 2]], &[[String; 2]]),
    sym: &str,
) -> fmt::Result {
    writeln!(w)?;
    pass_writing(w, (st, s), (outer, inner), (sym, "out"))
}

/// [`pass`], the cells written to the buffer `out` (a step's
/// `out_<field>`).
pub(super) fn pass_writing(
    w: &mut Writer,
    (st, s): (&Stencil, &Statement),
    (outer, inner): (&[[String; 2]], &[[String; 2]]),
    (sym, out): (&str, &str),
) -> fmt::Result {
    let args = crate::backend::arguments_writing(st, s, true, &[out.to_string()]);
    let call = format!("{sym}_at({});", args.join(", "));
    writeln!(
        w,
        "/* The frame, by slabs: per axis, the span [lo, hi) and within it [in_lo, in_hi), the cells left out. */"
    )?;
    let slabs = frame_spans(w, (outer, inner), false)?;
    for (a, k) in slabs {
        let side = if k == 0 { "low" } else { "high" };
        writeln!(w, "/* By the {side} side of `{}`. */", st.axes[a])?;
        slab(w, st.dims(), a, k, &call)?;
    }
    Ok(())
}

/// The cells of `outer` outside the box `inner` (as C), by slabs, each
/// through [`slab_function`]'s function.
pub(super) fn by_slabs(
    w: &mut Writer,
    (st, s): (&Stencil, &Statement),
    (outer, inner): (&[[String; 2]], &[[String; 2]]),
    sym: &str,
) -> fmt::Result {
    let dims = st.dims();
    let args = arguments(st, s, false).join(", ");
    writeln!(
        w,
        "/* By slabs: per axis, the span [lo, hi) and within it [in_lo, in_hi), the box. */"
    )?;
    for (a, k) in frame_spans(w, (outer, inner), false)? {
        let side = ["Below", "Above"][k];
        writeln!(w, "/* {side} the box along `{}`. */", st.axes[a])?;
        let (o, e) = frame_slab_origin(dims, a, k);
        w.braces(|w| {
            writeln!(w, "const ptrdiff_t o[] = {{{}}};", o.join(", "))?;
            writeln!(w, "const ptrdiff_t e[] = {{{}}};", e.join(", "))?;
            writeln!(w, "{sym}_slab(o, e, {args});")
        })?;
    }
    Ok(())
}

/// `static void <sym>_slab(o, e, n.., out, slots.., params..)`: the cells
/// `o <= i < o + e` of a region outside a box, the interior's loops on
/// those within `interior` (the cells whose reads stay on the grid, as C)
/// and, where that is not all of them, the frame pass on the rest.
pub(super) fn slab_function(
    w: &mut Writer,
    (st, s): (&Stencil, &Statement),
    interior_span: &[[String; 2]],
    sym: &str,
) -> fmt::Result {
    let dims = st.dims();
    let remapped = remaps(st);
    writeln!(
        w,
        "/* The cells o <= i < o + e of the region{}. */",
        match remapped {
            true =>
                ": the interior's loops where no read leaves the grid, the frame pass on the rest",
            false => ", by the interior's loops",
        }
    )?;
    let head = format!(
        "static void {sym}_slab(const ptrdiff_t *o, const ptrdiff_t *e, {})",
        parameters(st, s, false)
    );
    w.definition(head, |w| {
        if !remapped {
            writeln!(w, "(void)n0; /* the slab's extents are in `o` and `e` */")?;
        }
        strides(w, dims)?;
        let outer: Vec<[String; 2]> = (0..dims)
            .map(|a| [format!("o[{a}]"), format!("o[{a}] + e[{a}]")])
            .collect();
        if !remapped {
            return interior(w, st, s, &outer);
        }
        let slabs = frame_spans(w, (&outer, interior_span), true)?;
        let inner: Vec<[String; 2]> = (0..dims)
            .map(|a| [format!("in_lo{a}"), format!("in_hi{a}")])
            .collect();
        interior(w, st, s, &inner)?;
        let call = format!("{sym}_at({});", arguments(st, s, true).join(", "));
        // By a fixed side the interior's span is the region's: no cell is left.
        let sides = st.boundary.sides(dims);
        for (a, k) in slabs.into_iter().filter(|&(a, k)| sides[a][k].updates()) {
            writeln!(
                w,
                "/* By the {} side of `{}`. */",
                ["low", "high"][k],
                st.axes[a]
            )?;
            slab(w, dims, a, k, &call)?;
        }
        Ok(())
    })
}

/// Whether a read past a side of `st` is remapped (a side that is not
/// fixed): the frame of a region outside a box then needs [`cell`].
pub(super) fn remaps(st: &Stencil) -> bool {
    st.boundary
        .sides(st.dims())
        .iter()
        .flatten()
        .any(|k| k.updates())
}

/// The loop nest over the slab of axis `a` by side `k` (0 low, 1 high).
fn slab(w: &mut Writer, dims: usize, a: usize, k: usize, call: &str) -> fmt::Result {
    let loops: Vec<String> = frame_slab_span(dims, a, k)
        .into_iter()
        .enumerate()
        .map(|(b, [from, to])| format!("for (ptrdiff_t i{b} = {from}; i{b} < {to}; ++i{b})"))
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
