//! Fused steps on the CPU: each tile sweeps the slowest axis and carries
//! several steps through a ring of slices a step, so that a grid crosses
//! memory once per launch rather than once per step.
//!
//! At sweep position `s`, step `l` (1-based) computes slice `s - (l - 1) r`
//! (`r` the reach along the slowest axis) from step `l - 1`'s slices, which
//! its ring of `2r + 1` slices still holds; the last step writes `out`.
//! Tiles overlap by `r` cells a fused step on each side (recomputed, not
//! exchanged), so threads never wait for each other. In 3-D a tile is a
//! band of planes and of rows (`block[0]` x `block[1]`), whole rows along
//! the contiguous axis; in 2-D a band of rows. Threads take tiles as they
//! finish one.
//!
//! A leapfrog's step `l` also reads step `l - 2` (the grid `prev` at step
//! 1), so its rings keep `rp` more slices (`rp` the reach of its `prev`
//! reads along the slowest axis), and the launch leaves step `steps - 1`
//! in `aux` beside step `steps` in `out`: each tile copies its own rows of
//! it there (a tile's halo rows are another tile's).
//!
//! On a periodic grid every cell is updated, and tiles at the edges reach
//! past it: their slices and rows go on beyond the edge, their first step
//! reads the grid there wrapped onto it (as a single periodic step reads
//! it), and each level's row, whole, is read wrapped around at its ends.
//! Later steps read only what the tile computed, so wrapping the first
//! step's reads is all a tile needs.

use std::fmt::{self, Write as _};

use super::{arguments_writing, parameters_writing};
use crate::analysis::StatementInfo;
use crate::backend::{CExpr, Writer};
use crate::codegen::expr;
use crate::codegen::names::slot_name;
use crate::ir::{Access, Boundary, Slot, Statement, Stencil, Version};

/// The exported symbol of the fused kernel.
pub fn symbol(statement_symbol: &str) -> String {
    format!("{statement_symbol}_fused")
}

/// The fused launch of the statement whose single step is `statement_symbol`.
pub fn entry(st: &Stencil, s: &Statement, statement_symbol: &str) -> super::Entry {
    let mut arguments = fused_arguments(st, s);
    arguments.push("steps".into());
    super::Entry {
        returns: "int",
        symbol: symbol(statement_symbol),
        parameters: format!("{}, int steps", fused_parameters(st, s)),
        arguments,
    }
}

/// Whether the launch also leaves the step before its last (`aux`): the
/// target keeps two time levels.
fn leapfrog(st: &Stencil, s: &Statement) -> bool {
    st.fields[s.target].has_prev()
}

/// The fused functions' parameters: the extents, `out` (and `aux` for a
/// leapfrog), the statement's slots and parameters.
fn fused_parameters(st: &Stencil, s: &Statement) -> String {
    parameters_writing(st, s, false, &fused_outputs(st, s))
}

/// The arguments passing [`fused_parameters`] on, in their order.
fn fused_arguments(st: &Stencil, s: &Statement) -> Vec<String> {
    arguments_writing(st, s, false, &fused_outputs(st, s))
}

fn fused_outputs(st: &Stencil, s: &Statement) -> Vec<String> {
    let mut outputs = vec!["out".to_string()];
    if leapfrog(st, s) {
        outputs.push("aux".into());
    }
    outputs
}

/// Slices a ring keeps a step: the `2r + 1` a step's reads span along the
/// slowest axis, and for a leapfrog the reach of its `prev` reads more
/// (step `l - 2`'s slices stay until step `l` has read them).
fn ring_slices(s: &Statement, info: &StatementInfo) -> usize {
    let mut prev_reach = 0;
    s.expr.for_each_read(&mut |a: &Access| {
        if a.slot.field == s.target && a.slot.version == Version::Prev {
            prev_reach = prev_reach.max(a.offset[0].unsigned_abs() as usize);
        }
    });
    2 * info.reach[0] + 1 + prev_reach
}

/// Whether the grid wraps: a periodic boundary (the only other kind the
/// fused steps take is fixed).
fn wraps(st: &Stencil) -> bool {
    st.boundary == Boundary::Periodic
}

/// The index `k` of an axis of extent `n` as the grid holds it: wrapped
/// where the grid [`wraps`].
fn on_grid(st: &Stencil, k: &str, n: &str) -> String {
    if wraps(st) {
        format!("stencil_mod({k}, {n})")
    } else {
        k.to_string()
    }
}

/// Cache a thread's rings may take where the C library does not report its
/// L2 size: half of a 2 MiB L2, so that the slices streaming through stay.
const RING_BUDGET: usize = 1 << 20;

/// The fused kernel of `st`'s one statement, and its tile sweep.
pub fn kernel(
    w: &mut Writer,
    st: &Stencil,
    s: &Statement,
    info: &StatementInfo,
    sym: &str,
) -> fmt::Result {
    level_row(w, st, info)?;
    writeln!(w)?;
    tile(w, st, s, info, sym)?;
    writeln!(w)?;
    launcher(w, st, s, info, sym)
}

/// `stencil_ring_budget`: the bytes a thread's rings may take.
pub fn ring_budget(w: &mut Writer) -> fmt::Result {
    writeln!(
        w,
        "/* What a thread's rings may take: half the L2 cache, or {} KiB where the C library does not say. */",
        RING_BUDGET / 1024
    )?;
    super::from_sysconf(
        w,
        "stencil_ring_budget",
        ("_SC_LEVEL2_CACHE_SIZE", "l2", "l2 / 2"),
        RING_BUDGET,
    )
}

/// `stencil_ring_row`, where a thread's ring keeps step `level`'s row
/// (slice `k`, row `i` in 3-D), and `stencil_level_row`, where that row is
/// read: the grid at step 0 and on the frame (which no step changes), else
/// the ring. On a periodic grid, which has no frame, a tile's slices and
/// rows go on past the edge: step 0's are the grid's wrapped onto it, and
/// the ring's slot of a slice is never negative.
fn level_row(w: &mut Writer, st: &Stencil, info: &StatementInfo) -> fmt::Result {
    let t = st.dtype.c();
    let h = &info.halo;
    let three = st.dims() == 3;
    let slot = if wraps(st) {
        "(k % ring_slices + ring_slices) % ring_slices"
    } else {
        "k % ring_slices"
    };
    let (k, i) = (on_grid(st, "k", "n0"), on_grid(st, "i", "n1"));
    let (row_params, row_args, frame, offset, ring) = if three {
        (
            "ptrdiff_t i, ptrdiff_t y0, ptrdiff_t rows, ",
            "i, y0, rows, ",
            format!(
                "k < {} || k >= n0 - {} || i < {} || i >= n1 - {}",
                h[0], h[0], h[1], h[1]
            ),
            format!("grid + {k} * n1 * nl + {i} * nl"),
            format!(
                "ring + (((ptrdiff_t)(level - 1) * ring_slices + {slot}) * rows + (i - y0)) * nl"
            ),
        )
    } else {
        (
            "",
            "",
            format!("k < {} || k >= n0 - {}", h[0], h[0]),
            format!("grid + {k} * nl"),
            format!("ring + ((ptrdiff_t)(level - 1) * ring_slices + {slot}) * nl"),
        )
    };
    let step0 = if wraps(st) {
        "level == 0".to_string()
    } else {
        format!("level == 0 || {frame}")
    };
    writeln!(
        w,
        "/* Where a thread's ring keeps step `level`'s row of slice `k`. */"
    )?;
    w.definition(
        format_args!(
            "static inline {t} *stencil_ring_row({t} *ring, int level, ptrdiff_t k, {row_params}ptrdiff_t nl, ptrdiff_t ring_slices)"
        ),
        |w| writeln!(w, "return {ring};"),
    )?;
    writeln!(w)?;
    writeln!(
        w,
        "/* Step `level`'s row of slice `k`: the grid itself at step 0{}, else the ring. */",
        if wraps(st) {
            " (wrapped onto it)"
        } else {
            " and on the frame"
        }
    )?;
    w.definition(
        format_args!(
            "static inline const {t} *stencil_level_row(const {t} *grid, {t} *ring, int level, ptrdiff_t k, {row_params}ptrdiff_t n0, {}ptrdiff_t nl, ptrdiff_t ring_slices)",
            if three { "ptrdiff_t n1, " } else { "" }
        ),
        |w| {
            w.guarded(format_args!("if ({step0})"), format_args!("return {offset};"))?;
            writeln!(w, "return stencil_ring_row(ring, level, k, {row_args}nl, ring_slices);")
        },
    )
}

/// `(ptrdiff_t)(<count>) * r`, simplified where `r` is 0 or 1.
fn times(count: &str, r: usize) -> String {
    match r {
        0 => "0".into(),
        1 => format!("(ptrdiff_t)({count})"),
        r => format!("(ptrdiff_t)({count}) * {r}"),
    }
}

/// The name of the row pointer a read of `field` at `(d0, d1)` goes through.
fn row_name(st: &Stencil, a: &Access) -> String {
    let d = |v: i64| {
        if v < 0 {
            format!("m{}", -v)
        } else {
            format!("p{v}")
        }
    };
    let rows: Vec<String> = a.offset[..st.dims() - 1].iter().map(|&v| d(v)).collect();
    format!("{}_{}", slot_name(st, a.slot), rows.join("_"))
}

/// Every distinct row a statement reads, with the target's own row where
/// `center` (the frame columns are copied from it).
fn rows(st: &Stencil, s: &Statement, center: bool) -> Vec<Access> {
    let dims = st.dims();
    let mut out: Vec<Access> = Vec::new();
    let mut add = |a: &Access| {
        let mut row = a.clone();
        row.offset[dims - 1] = 0;
        if !out.contains(&row) {
            out.push(row);
        }
    };
    if center {
        add(&Access {
            slot: crate::ir::Slot {
                field: s.target,
                version: Version::Start,
            },
            offset: vec![0; dims],
        });
    }
    s.expr.for_each_read(&mut |a: &Access| add(a));
    out
}

/// `var`, `var - d` or `var + d`.
fn shifted(var: &str, d: i64) -> String {
    match d {
        0 => var.to_string(),
        d if d < 0 => format!("{var} - {}", -d),
        d => format!("{var} + {d}"),
    }
}

/// The update's value at cell `j` of a row, its reads through row pointers;
/// where `wrapped`, their columns wrapped around the row (`nl` cells).
fn cell_value(st: &Stencil, s: &Statement, wrapped: bool) -> String {
    let last = st.dims() - 1;
    let column = |d: i64| match d {
        0 => "j".to_string(),
        d if wrapped => format!("stencil_wrap({}, n{last})", shifted("j", d)),
        d => shifted("j", d),
    };
    expr::print(
        &s.expr,
        &CExpr {
            st,
            gpu: false,
            read: &|a: &Access| format!("{}[{}]", row_name(st, a), column(a.offset[last])),
        },
    )
}

/// `static void <sym>_tile(...)`: one tile's sweep.
fn tile(
    w: &mut Writer,
    st: &Stencil,
    s: &Statement,
    info: &StatementInfo,
    sym: &str,
) -> fmt::Result {
    let t = st.dtype.c();
    let three = st.dims() == 3;
    let r = &info.reach;
    let mut params = fused_parameters(st, s);
    params.push_str(&format!(
        ", const int steps, {t} *restrict ring, const ptrdiff_t zlo, const ptrdiff_t zhi"
    ));
    if three {
        params.push_str(", const ptrdiff_t ylo, const ptrdiff_t yhi");
    }
    writeln!(
        w,
        "/* One tile's sweep: slices [zlo, zhi){} after `steps` steps. */",
        if three { " x rows [ylo, yhi)" } else { "" }
    )?;
    w.definition(format_args!("static void {sym}_tile({params})"), |w| {
        writeln!(w, "const ptrdiff_t ring_slices = {};", ring_slices(s, info))?;
        if three {
            let lag = times("steps - 1", r[1]);
            writeln!(w, "const ptrdiff_t y0 = ylo - {lag};")?;
            writeln!(w, "const ptrdiff_t rows = yhi - y0 + {lag};")?;
        }
        let lag = times("steps - 1", r[0]);
        w.block(
            format_args!("for (ptrdiff_t s = zlo - {lag}; s < zhi + {lag}; ++s)"),
            |w| {
                w.block("for (int l = 1; l <= steps; ++l)", |w| {
                    step_of_sweep(w, st, s, info)
                })
            },
        )
    })
}

/// Step `l`'s slice at sweep position `s`: skipped outside the step's
/// range (the tile and the halo later steps need), else each of its rows.
fn step_of_sweep(w: &mut Writer, st: &Stencil, s: &Statement, info: &StatementInfo) -> fmt::Result {
    let (h, r) = (&info.halo, &info.reach);
    writeln!(w, "const ptrdiff_t k = s - {};", times("l - 1", r[0]))?;
    writeln!(w, "const ptrdiff_t kw = {};", times("steps - l", r[0]))?;
    // A periodic grid's tiles go on past its edges; a fixed one's stop at
    // its frame.
    let within = if wraps(st) {
        String::new()
    } else {
        format!(" || k < {h0} || k >= n0 - {h0}", h0 = h[0])
    };
    w.guarded(
        format_args!("if (k < zlo - kw || k >= zhi + kw{within})"),
        "continue;",
    )?;
    if st.dims() == 2 {
        return row_update(w, st, s, info);
    }
    writeln!(w, "const ptrdiff_t iw = {};", times("steps - l", r[1]))?;
    let (lo, hi) = if wraps(st) {
        ("ylo - iw".to_string(), "yhi + iw".to_string())
    } else {
        (
            format!("stencil_max(ylo - iw, {})", h[1]),
            format!("stencil_min(yhi + iw, n1 - {})", h[1]),
        )
    };
    writeln!(w, "const ptrdiff_t ihi = {hi};")?;
    w.block(
        format_args!("for (ptrdiff_t i = {lo}; i < ihi; ++i)"),
        |w| row_update(w, st, s, info),
    )
}

/// Declares a pointer to each row the update reads (step `l - 1`'s for its
/// own field, step `l - 2`'s for its `prev`, the grid's for the others);
/// returns the name of its own field's row at the cell where `center`.
fn row_pointers(
    w: &mut Writer,
    st: &Stencil,
    s: &Statement,
    center: bool,
) -> Result<Option<String>, fmt::Error> {
    let t = st.dtype.c();
    let three = st.dims() == 3;
    let nl = format!("n{}", st.dims() - 1);
    let mut own_center = None;
    let cur = slot_name(
        st,
        Slot {
            field: s.target,
            version: Version::Start,
        },
    );
    for a in rows(st, s, center) {
        let name = row_name(st, &a);
        let k = shifted("k", a.offset[0]);
        let i = if three {
            shifted("i", a.offset[1])
        } else {
            String::new()
        };
        let in_grid = grid_row(
            st,
            &slot_name(st, a.slot),
            &on_grid(st, &k, "n0"),
            &on_grid(st, &i, "n1"),
        );
        let at_level = |level: &str| match three {
            true => format!(
                "stencil_level_row({cur}, ring, {level}, {k}, {i}, y0, rows, n0, n1, {nl}, ring_slices)"
            ),
            false => {
                format!("stencil_level_row({cur}, ring, {level}, {k}, n0, {nl}, ring_slices)")
            }
        };
        let place = match (a.slot.field == s.target, a.slot.version) {
            (true, Version::Prev) => format!("l == 1 ? {in_grid} : {}", at_level("l - 2")),
            (true, _) => at_level("l - 1"),
            (false, _) => in_grid,
        };
        if a.slot.field == s.target
            && a.slot.version == Version::Start
            && a.offset.iter().all(|&d| d == 0)
        {
            own_center = Some(name.clone());
        }
        writeln!(w, "const {t} *restrict {name} = {place};")?;
    }
    Ok(own_center.filter(|_| center))
}

/// One row of step `l`: its row pointers, its destination (the ring, or
/// `out` at the last step), its frame columns and its cells.
fn row_update(w: &mut Writer, st: &Stencil, s: &Statement, info: &StatementInfo) -> fmt::Result {
    let t = st.dtype.c();
    let three = st.dims() == 3;
    let nl = format!("n{}", st.dims() - 1);
    let hl = info.halo[st.dims() - 1];
    let center = row_pointers(w, st, s, hl > 0)?;
    let ring_row = if three {
        format!("stencil_ring_row(ring, l, k, i, y0, rows, {nl}, ring_slices)")
    } else {
        format!("stencil_ring_row(ring, l, k, {nl}, ring_slices)")
    };
    let out_row = grid_row(st, "out", "k", "i");
    writeln!(
        w,
        "{t} *restrict dst = l == steps ? {out_row} : {ring_row};"
    )?;
    if let Some(center) = center {
        w.block("if (l < steps)", |w| {
            writeln!(
                w,
                "/* The frame columns keep their values at every step. */"
            )?;
            w.guarded(
                format_args!("for (ptrdiff_t j = 0; j < {hl}; ++j)"),
                format_args!("dst[j] = {center}[j];"),
            )?;
            w.guarded(
                format_args!("for (ptrdiff_t j = {nl} - {hl}; j < {nl}; ++j)"),
                format_args!("dst[j] = {center}[j];"),
            )
        })?;
    }
    let ends = if wraps(st) {
        info.reach[st.dims() - 1]
    } else {
        0
    };
    let edge = hl.max(ends);
    let wrapped = (ends > 0).then(|| cell_value(st, s, true));
    if let Some(wrapped) = &wrapped {
        writeln!(
            w,
            "/* Cells within reach of the row's ends: reads wrapped around it. */"
        )?;
        w.guarded(
            format_args!("for (ptrdiff_t j = 0; j < {ends}; ++j)"),
            format_args!("dst[j] = {wrapped};"),
        )?;
    }
    w.pragma("omp simd")?;
    w.guarded(
        format_args!("for (ptrdiff_t j = {edge}; j < {nl} - {edge}; ++j)"),
        format_args!("dst[j] = {};", cell_value(st, s, false)),
    )?;
    if let Some(wrapped) = &wrapped {
        w.guarded(
            format_args!("for (ptrdiff_t j = {nl} - {ends}; j < {nl}; ++j)"),
            format_args!("dst[j] = {wrapped};"),
        )?;
    }
    if leapfrog(st, s) {
        keep_for_aux(w, st)?;
    }
    Ok(())
}

/// Row `i` of slice `k` (row `k` in 2-D) of `grid`, `k` and `i` index
/// expressions.
fn grid_row(st: &Stencil, grid: &str, k: &str, i: &str) -> String {
    // `k - 1` is multiplied as a whole; a bare name or a call needs no
    // parentheses.
    let factor = |e: &str| {
        if e.contains(' ') && !e.ends_with(')') {
            format!("({e})")
        } else {
            e.to_string()
        }
    };
    if st.dims() == 3 {
        format!("{grid} + {} * n1 * n2 + {} * n2", factor(k), factor(i))
    } else {
        format!("{grid} + {} * n1", factor(k))
    }
}

/// A leapfrog's step `steps - 1`: the tile's own rows of it (with their
/// frame columns) go to `aux` as well as to the ring.
fn keep_for_aux(w: &mut Writer, st: &Stencil) -> fmt::Result {
    let nl = format!("n{}", st.dims() - 1);
    let own = if st.dims() == 3 {
        "k >= zlo && k < zhi && i >= ylo && i < yhi"
    } else {
        "k >= zlo && k < zhi"
    };
    w.block(format_args!("if (l == steps - 1 && {own})"), |w| {
        let t = st.dtype.c();
        writeln!(w, "{t} *restrict kept = {};", grid_row(st, "aux", "k", "i"))?;
        w.pragma("omp simd")?;
        w.guarded(
            format_args!("for (ptrdiff_t j = 0; j < {nl}; ++j)"),
            "kept[j] = dst[j];",
        )
    })
}

/// `int <sym>_fused(..., int steps)`: runs up to `steps` steps in one
/// sweep; returns how many (as many as the rings' cache budget allows),
/// 0 where it ran none (fewer than 2 fit, or no memory for the rings).
fn launcher(
    w: &mut Writer,
    st: &Stencil,
    s: &Statement,
    info: &StatementInfo,
    sym: &str,
) -> fmt::Result {
    let launch = entry(st, s, sym);
    let mut args = launch.arguments.clone();
    args.push("ring".into());
    let call = format!("{sym}_tile({}, ", args.join(", "));
    writeln!(
        w,
        "/* Up to `steps` fused steps (as many as keep a thread's rings within half its L2 cache);\n * returns the steps run, 0 where fewer than 2 fit or the rings cannot be allocated. */"
    )?;
    w.definition(launch.head(&launch.symbol), |w| {
        rings(w, st, ring_slices(s, info), info)?;
        if st.dims() == 3 {
            tiles_3d(w, st, info, &call)?;
        } else {
            bands_2d(w, st, info, &call)?;
        }
        writeln!(w, "free(rings);")?;
        writeln!(w, "return steps;")
    })
}

/// Caps `steps` at what a thread's rings may hold and allocates every
/// thread's rings (`rings`, `per_thread` values each), or returns 0.
fn rings(w: &mut Writer, st: &Stencil, slices: usize, info: &StatementInfo) -> fmt::Result {
    let t = st.dtype.c();
    let r = &info.reach;
    let nl = format!("n{}", st.dims() - 1);
    let block = &st.tiling.openmp.block;
    let (rows, ring_rows) = if st.dims() == 3 {
        (
            format!("({} + 2 * {})", block[1], r[1]),
            format!("({} + 2 * {})", block[1], times("steps - 1", r[1])),
        )
    } else {
        ("1".into(), "1".into())
    };
    writeln!(
        w,
        "const ptrdiff_t slice = {slices} * {rows} * {nl} * (ptrdiff_t)sizeof({t});"
    )?;
    writeln!(
        w,
        "const ptrdiff_t fit = 1 + stencil_ring_budget() / slice;"
    )?;
    w.guarded("if (steps > fit)", "steps = (int)fit;")?;
    w.guarded("if (steps < 2)", "return 0;")?;
    writeln!(
        w,
        "const size_t per_thread = (size_t)(steps - 1) * {slices} * {ring_rows} * (size_t){nl};"
    )?;
    writeln!(
        w,
        "{t} *rings = malloc(sizeof({t}) * per_thread * (size_t)omp_get_max_threads());"
    )?;
    w.guarded("if (rings == NULL)", "return 0;")
}

/// A launch's parallel region: each thread's ring, then `tiles` (an `omp
/// for` loop nest, `collapse` its clause) handed out to the threads as
/// they finish one.
fn handed_out(
    w: &mut Writer,
    st: &Stencil,
    collapse: &str,
    tiles: impl FnOnce(&mut Writer) -> fmt::Result,
) -> fmt::Result {
    let t = st.dtype.c();
    w.pragma("omp parallel")?;
    w.braces(|w| {
        writeln!(
            w,
            "{t} *ring = rings + per_thread * (size_t)omp_get_thread_num();"
        )?;
        w.pragma(&format!("omp for {collapse}schedule(dynamic, 1)"))?;
        tiles(w)
    })
}

/// 3-D: tiles of `block[0]` planes by `block[1]` rows, handed out to the
/// threads as they finish one.
fn tiles_3d(w: &mut Writer, st: &Stencil, info: &StatementInfo, call: &str) -> fmt::Result {
    let h = &info.halo;
    let block = &st.tiling.openmp.block;
    writeln!(
        w,
        "const ptrdiff_t bands = ({} + {b0} - 1) / {b0};",
        shifted("n0", -(2 * h[0] as i64)),
        b0 = block[0]
    )?;
    writeln!(
        w,
        "const ptrdiff_t tiles = ({} + {b1} - 1) / {b1};",
        shifted("n1", -(2 * h[1] as i64)),
        b1 = block[1]
    )?;
    handed_out(w, st, "collapse(2) ", |w| {
        let loops = [
            "for (ptrdiff_t b = 0; b < bands; ++b)".to_string(),
            "for (ptrdiff_t c = 0; c < tiles; ++c)".to_string(),
        ];
        w.nest(&loops, |w| {
            let zlo = format!("b * {}", block[0]);
            let ylo = format!("c * {}", block[1]);
            writeln!(w, "const ptrdiff_t zlo = {};", past(h[0], &zlo))?;
            writeln!(w, "const ptrdiff_t ylo = {};", past(h[1], &ylo))?;
            writeln!(
                w,
                "{call}zlo, stencil_min(zlo + {}, {}), ylo, stencil_min(ylo + {}, {}));",
                block[0],
                shifted("n0", -(h[0] as i64)),
                block[1],
                shifted("n1", -(h[1] as i64))
            )
        })
    })
}

/// `h + e`, or `e` where `h` is 0.
fn past(h: usize, e: &str) -> String {
    match h {
        0 => e.to_string(),
        h => format!("{h} + {e}"),
    }
}

/// Bands a 2-D launch cuts a thread's share of rows into, at most.
///
/// One band a thread ran j2d5pt f64 8192^2 at 1.55x-1.83x the copy bound
/// on the GPU machine's 16 cores, whose threads do not run at one speed;
/// eight a thread, handed out as threads finish one, at 2.00x-3.08x
/// (design notes, "Bands handed out").
const BANDS_PER_THREAD: usize = 8;

/// The rows a band recomputes for its neighbours (`r (steps - 1)` a side
/// on average over its steps) stay within this fraction of its own rows.
const HALO_SHARE: usize = 8;

/// 2-D: bands of rows handed out to the threads as they finish one:
/// [`BANDS_PER_THREAD`] a thread where each band keeps its recomputed
/// halo within 1 / [`HALO_SHARE`] of its rows, fewer where not, and never
/// fewer than one a thread.
fn bands_2d(w: &mut Writer, st: &Stencil, info: &StatementInfo, call: &str) -> fmt::Result {
    let h0 = info.halo[0];
    let r0 = info.reach[0];
    writeln!(
        w,
        "const ptrdiff_t interior = {};",
        shifted("n0", -(2 * h0 as i64))
    )?;
    writeln!(w, "const ptrdiff_t nth = omp_get_max_threads();")?;
    let most = format!("{BANDS_PER_THREAD} * nth");
    if r0 == 0 {
        writeln!(w, "const ptrdiff_t bands = {most};")?;
    } else {
        writeln!(
            w,
            "const ptrdiff_t even = interior / ({HALO_SHARE} * {});",
            times("steps - 1", r0)
        )?;
        writeln!(
            w,
            "const ptrdiff_t bands = even < nth ? nth : stencil_min({most}, even);"
        )?;
    }
    handed_out(w, st, "", |w| {
        w.block("for (ptrdiff_t b = 0; b < bands; ++b)", |w| {
            writeln!(
                w,
                "{call}{}, {});",
                past(h0, "interior * b / bands"),
                past(h0, "interior * (b + 1) / bands")
            )
        })
    })
}
