//! Single steps of a statement that is a long weighted sum of reads (a
//! wide box of distinct weights), [`ROWS`] rows at a time: 3-D steps in
//! bands marching the slowest axis, 2-D single steps.
//!
//! Written out term by term, such a step loads every term of every cell:
//! a cell of a 5 x 5 x 5 box loads 125 values for its 125 multiply-adds,
//! a vector of them each split across two cache lines, and the core's
//! loads, not its multiply-adds, bound it. Here the terms are a table of
//! columns, each a grid and an offset off the rows' axis (`y`) with a
//! weight for each `y` offset (0 where the sum reads none), and a block of
//! [`ROWS`] rows by [`VECTORS`] vectors keeps its sums in registers: each
//! row of the block's reach is loaded once a column and multiplied into
//! the sum of every row of the block it reaches (5 times for a box of
//! radius 2, 12 x 2 loads then serving 40 x 2 multiply-adds). Vectors are
//! GCC's and Clang's vector extension (`vector_size`), which the compiler
//! maps onto the instruction set it compiles for; its loops over a block's
//! rows are unrolled (`#pragma GCC unroll`) so that the sums stay in
//! registers. The last block ends at the last row and a row's last
//! vectors at its last cell, recomputing a few cells of the block before
//! them, so no cell is left to scalar code; grids of fewer rows than a
//! block, rows shorter than its vectors and compilers without the vector
//! extension (MSVC) sum a cell at a time from the same table. Bands of
//! whole blocks are handed out as threads finish one, in 3-D each marching
//! the slowest axis as the marching bands do.

use std::fmt::{self, Write as _};

use super::planes::bands;
use super::{Writer, c_expr, plain_read};
use crate::codegen::index::{linear_index, offset_delta};
use crate::codegen::names::slot_name;
use crate::ir::{Columns, Slot, Statement, Stencil, WHOLE_AXIS, columns};

/// Rows a block computes together: each row it loads serves up to `2 r + 1`
/// of them. On box3d2r (2 cores) 8 rows of 2 vectors and 16 of 1 ran
/// alike, 1.1x-1.4x as fast as 4 x 4, 8 x 3 and 12 x 2.
pub(super) const ROWS: usize = 8;

/// Vectors of each row a block computes: `ROWS x VECTORS` sums, with a
/// row's vectors and a column's weights, within AVX-512's 32 registers
/// up to radius 4 in `y`.
pub(super) const VECTORS: usize = 2;

/// Bytes a vector holds: AVX-512's registers, two or four narrower ones
/// on other targets.
const VECTOR_BYTES: usize = 64;

/// Statement `s`'s terms by column ([`columns`]) where its single steps sum
/// from a table: in a 2-D stencil, or a 3-D one whose block spans the
/// slowest axis (its bands march it).
pub(super) fn table(st: &Stencil, s: &Statement) -> Option<Columns> {
    if st.dims() == 3 && st.tiling.openmp.block[0] != WHOLE_AXIS {
        return None;
    }
    columns(st, s)
}

/// The constant of `columns` as C to append to the sum (` + (c)`), or
/// nothing.
fn add(st: &Stencil, columns: &Columns) -> String {
    columns
        .constant
        .as_ref()
        .map(|c| format!(" + ({})", c_expr(st, c, &plain_read(st))))
        .unwrap_or_default()
}

/// The loops over the cells `span` (`[from, to]` per axis, as C) of a
/// statement that is the weighted sum `columns`, in blocks of rows.
pub(super) fn interior(
    w: &mut Writer,
    st: &Stencil,
    columns: &Columns,
    span: &[[String; 2]],
) -> fmt::Result {
    let lanes = VECTOR_BYTES / st.dtype.size();
    let (b, x) = (columns.axis, columns.axis + 1);
    let others: Vec<&str> = (0..st.dims())
        .filter(|&a| a != b)
        .map(|a| st.axes[a].as_str())
        .collect();
    let marching = if b == 1 {
        format!(" marching {}", st.axes[0])
    } else {
        String::new()
    };
    writeln!(
        w,
        "/* Bands of blocks of {ROWS} rows by {} cells ({VECTORS} vectors of {lanes}){marching}: the sum's terms as {} columns (a grid and an offset along {}) of {} weights over {}, each row a block reaches loaded once a column. */",
        VECTORS * lanes,
        columns.keys.len(),
        others.join(" and "),
        columns.span(),
        st.axes[b],
    )?;
    w.directive("#if defined(__GNUC__)")?;
    writeln!(
        w,
        "typedef {} stencil_vector __attribute__((vector_size({VECTOR_BYTES})));",
        st.dtype.c()
    )?;
    w.directive("#endif")?;
    tables(w, st, columns)?;
    let [lo, hi] = [&span[b][0], &span[b][1]];
    bands(w, st.tiling.openmp.block[b], ROWS, [lo, hi])?;
    let from = match one_grid(&columns.keys) {
        Some(slot) => slot_name(st, slot),
        None => "grid[c]".to_string(),
    };
    writeln!(
        w,
        "/* Compilers without GCC's vector extension (MSVC), grids of fewer rows than a block and rows shorter than its vectors sum a cell at a time. */"
    )?;
    w.directive("#if defined(__GNUC__)")?;
    writeln!(
        w,
        "if ({hi} - {lo} >= {ROWS} && {} - {} >= {}) {{",
        span[x][1],
        span[x][0],
        VECTORS * lanes
    )?;
    w.scope(|w| blocks(w, st, columns, span, &from))?;
    writeln!(w, "}} else")?;
    w.directive("#endif")?;
    w.braces(|w| cells(w, st, columns, span, &from))
}

/// The table: each column's weights, where it reads relative to the cell
/// and, where the columns read several grids, its grid.
fn tables(w: &mut Writer, st: &Stencil, columns: &Columns) -> fmt::Result {
    let t = st.dtype.c();
    w.declaration(
        format_args!("const {t} weight[][{}] =", columns.span()),
        |w| {
            for weights in &columns.weights {
                let weights: Vec<String> = weights
                    .iter()
                    .map(|weight| match weight {
                        Some(weight) => c_expr(st, weight, &plain_read(st)),
                        None => "0".to_string(),
                    })
                    .collect();
                writeln!(w, "{{{}}},", weights.join(", "))?;
            }
            Ok(())
        },
    )?;
    let at: Vec<String> = columns
        .keys
        .iter()
        .map(|(_, offset)| offset_delta(offset))
        .collect();
    writeln!(w, "const ptrdiff_t at[] = {{{}}};", at.join(", "))?;
    if one_grid(&columns.keys).is_none() {
        let grids: Vec<String> = columns
            .keys
            .iter()
            .map(|&(slot, _)| slot_name(st, slot))
            .collect();
        writeln!(w, "const {t} *const grid[] = {{{}}};", grids.join(", "))?;
    }
    Ok(())
}

/// The grid every column reads, where they read one.
fn one_grid(keys: &[(Slot, Vec<i64>)]) -> Option<Slot> {
    let first = keys.first()?.0;
    keys.iter().all(|k| k.0 == first).then_some(first)
}

/// `head`, a loop of `count` iterations, unrolled so that what it indexes
/// stays in registers.
fn unrolled(w: &mut Writer, count: usize, head: impl fmt::Display) -> fmt::Result {
    w.pragma(&format!("GCC unroll {count}"))?;
    writeln!(w, "{head}")
}

/// The unrolled loops over a block's sums (`row`, `v`), `body` within.
fn each_sum(w: &mut Writer, body: impl FnOnce(&mut Writer) -> fmt::Result) -> fmt::Result {
    unrolled(
        w,
        ROWS,
        format_args!("for (int row = 0; row < {ROWS}; ++row)"),
    )?;
    w.scope(|w| {
        unrolled(
            w,
            VECTORS,
            format_args!("for (int v = 0; v < {VECTORS}; ++v) {{"),
        )?;
        w.scope(body)?;
        writeln!(w, "}}")
    })
}

/// The blocks of [`ROWS`] rows by [`VECTORS`] vectors over the cells
/// `span`, each column read from `from` (its grid, as C).
fn blocks(
    w: &mut Writer,
    st: &Stencil,
    columns: &Columns,
    span: &[[String; 2]],
    from: &str,
) -> fmt::Result {
    let (b, x) = (columns.axis, columns.axis + 1);
    let [[lo, hi], [lo_x, hi_x]] = [&span[b], &span[x]];
    let lanes = VECTOR_BYTES / st.dtype.size();
    let width = VECTORS * lanes;
    writeln!(
        w,
        "/* A band's rows are whole blocks, the last band's up to the last row: its last block ends there, as a row's last vectors end at its last cell, recomputing cells of the block before it. */"
    )?;
    writeln!(
        w,
        "const ptrdiff_t whole = {lo} + ({hi} - {lo}) / {ROWS} * {ROWS};"
    )?;
    w.pragma("omp parallel for schedule(dynamic, 1)")?;
    let mut heads = vec![format!(
        "for (ptrdiff_t b{b} = {lo}; b{b} < whole; b{b} += band)"
    )];
    if b == 1 {
        let [lo0, hi0] = &span[0];
        heads.push(format!("for (ptrdiff_t i0 = {lo0}; i0 < {hi0}; ++i0)"));
    }
    heads.push(format!(
        "for (ptrdiff_t at{b} = b{b}; at{b} < (b{b} + band < whole ? b{b} + band : {hi}); at{b} += {ROWS})"
    ));
    heads.push(format!(
        "for (ptrdiff_t at{x} = {lo_x}; at{x} < {hi_x}; at{x} += {width})"
    ));
    w.nest(&heads, |w| {
        writeln!(
            w,
            "const ptrdiff_t i{b} = at{b} + {ROWS} <= {hi} ? at{b} : {hi} - {ROWS};"
        )?;
        writeln!(
            w,
            "const ptrdiff_t i{x} = at{x} + {width} <= {hi_x} ? at{x} : {hi_x} - {width};"
        )?;
        writeln!(w, "const ptrdiff_t cell = {};", linear_index(st.dims()))?;
        writeln!(w, "stencil_vector sum[{ROWS}][{VECTORS}];")?;
        each_sum(w, |w| writeln!(w, "sum[row][v] = (stencil_vector){{0}};"))?;
        w.block(
            format_args!("for (int c = 0; c < {}; ++c)", columns.keys.len()),
            |w| column(w, st, columns, from),
        )?;
        let add = add(st, columns);
        each_sum(w, |w| {
            writeln!(w, "const stencil_vector value = sum[row][v]{add};")?;
            writeln!(
                w,
                "memcpy(out + cell + row * s{b} + {lanes} * v, &value, sizeof value);"
            )
        })
    })
}

/// One column's terms for a block: each row of the block's reach (the
/// columns' reach beyond it each side) loaded once and multiplied into
/// the sums of the block's rows it reaches, by their weights.
fn column(w: &mut Writer, st: &Stencil, columns: &Columns, from: &str) -> fmt::Result {
    let lanes = VECTOR_BYTES / st.dtype.size();
    let (b, reach, span) = (columns.axis, columns.reach, columns.span());
    writeln!(
        w,
        "const {} *const column = {from} + cell + at[c];",
        st.dtype.c()
    )?;
    writeln!(w, "stencil_vector weights[{span}];")?;
    unrolled(w, span, format_args!("for (int k = 0; k < {span}; ++k)"))?;
    w.scope(|w| writeln!(w, "weights[k] = weight[c][k] + (stencil_vector){{0}};"))?;
    unrolled(
        w,
        ROWS + 2 * reach,
        format_args!("for (int y = -{reach}; y < {ROWS} + {reach}; ++y) {{"),
    )?;
    w.scope(|w| {
        writeln!(w, "stencil_vector value[{VECTORS}];")?;
        unrolled(
            w,
            VECTORS,
            format_args!("for (int v = 0; v < {VECTORS}; ++v)"),
        )?;
        w.scope(|w| {
            writeln!(
                w,
                "memcpy(&value[v], column + y * s{b} + {lanes} * v, sizeof *value);"
            )
        })?;
        unrolled(
            w,
            ROWS,
            format_args!("for (int row = 0; row < {ROWS}; ++row) {{"),
        )?;
        w.scope(|w| {
            writeln!(w, "const int k = y - row + {reach};")?;
            writeln!(w, "if (k >= 0 && k < {span})")?;
            w.scope(|w| {
                unrolled(
                    w,
                    VECTORS,
                    format_args!("for (int v = 0; v < {VECTORS}; ++v)"),
                )?;
                w.scope(|w| writeln!(w, "sum[row][v] += weights[k] * value[v];"))
            })
        })?;
        writeln!(w, "}}")
    })?;
    writeln!(w, "}}")
}

/// The cells `span` one at a time, each column read from `from`.
fn cells(
    w: &mut Writer,
    st: &Stencil,
    columns: &Columns,
    span: &[[String; 2]],
    from: &str,
) -> fmt::Result {
    let dims = st.dims();
    let (b, reach) = (columns.axis, columns.reach);
    let add = add(st, columns);
    w.pragma(&format!("omp parallel for collapse({})", dims - 1))?;
    let heads: Vec<String> = span
        .iter()
        .enumerate()
        .map(|(a, [lo, hi])| format!("for (ptrdiff_t i{a} = {lo}; i{a} < {hi}; ++i{a})"))
        .collect();
    w.nest(&heads, |w| {
        writeln!(w, "const ptrdiff_t cell = {};", linear_index(dims))?;
        writeln!(w, "{} sum = 0;", st.dtype.c())?;
        writeln!(w, "for (int c = 0; c < {}; ++c)", columns.keys.len())?;
        w.scope(|w| {
            w.guarded(
                format_args!("for (int k = 0; k < {}; ++k)", columns.span()),
                format_args!("sum += weight[c][k] * {from}[cell + at[c] + (k - {reach}) * s{b}];"),
            )
        })?;
        writeln!(w, "out[cell] = sum{add};")
    })
}

#[cfg(test)]
mod tests {
    use crate::analysis::analyse;
    use crate::backend::openmp::source;
    use crate::ir::Stencil;

    /// A 3-D box of radius `r` of distinct weights in f64 (its steps march:
    /// bound by arithmetic from radius 2), `extra` added to the sum.
    fn box3d(r: i64, extra: &str) -> Stencil {
        let mut terms = Vec::new();
        for z in -r..=r {
            for y in -r..=r {
                for x in -r..=r {
                    terms.push(format!("0.{:04}*u[{z},{y},{x}]", terms.len() + 1));
                }
            }
        }
        let text = format!(
            "[stencil]\nname = \"b\"\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n\
             [fields]\nu = {{ role = \"state\" }}\nk = {{ role = \"input\" }}\n\
             [params]\np = \"f64\"\n\
             [[update]]\ntarget = \"u\"\nexpr = \"{}{extra}\"\n",
            terms.join(" + ")
        );
        let mut all = crate::config::lowered("b.stencil.toml".as_ref(), &text).unwrap();
        all.remove(0)
    }

    #[test]
    fn a_sum_of_many_weighted_reads_is_summed_by_blocks_of_rows_from_a_table_of_columns() {
        let st = box3d(2, "");
        let c = source(&st, &analyse(&st), "p");
        assert!(
            c.contains(
                "a sum of 100 weighted reads or more is computed 8 rows by 2 vectors at a time, from a table of its terms by column."
            ),
            "{c}"
        );
        assert!(
            c.contains(
                "marching z: the sum's terms as 25 columns (a grid and an offset along z and x) of 5 weights over y"
            ),
            "{c}"
        );
        // A column's weights over y: the terms of z = -2, x = -2.
        assert!(c.contains("const double weight[][5] = {\n"), "{c}");
        assert!(
            c.contains("{0.0001, 0.0006, 0.0011, 0.0016, 0.0021},"),
            "{c}"
        );
        assert!(
            c.contains("const ptrdiff_t at[] = {-2 * s0 - 2, -2 * s0 - 1, -2 * s0, "),
            "{c}"
        );
        assert!(!c.contains("grid[c]"), "{c}");
        assert!(c.contains("typedef double stencil_vector __attribute__((vector_size(64)));"));
        // Bands of whole blocks; the last block and vectors end at the last row and cell.
        assert!(c.contains("#if defined(__GNUC__)\n"), "{c}");
        assert!(
            c.contains("const ptrdiff_t band = (stencil_min(32, "),
            "{c}"
        );
        assert!(c.contains(" + 7) / 8 * 8;"), "{c}");
        assert!(
            c.contains("if (n1 - 2 - 2 >= 8 && n2 - 2 - 2 >= 16) {"),
            "{c}"
        );
        assert!(
            c.contains("const ptrdiff_t whole = 2 + (n1 - 2 - 2) / 8 * 8;"),
            "{c}"
        );
        assert!(
            c.contains("at1 < (b1 + band < whole ? b1 + band : n1 - 2)"),
            "{c}"
        );
        assert!(c.contains("const ptrdiff_t i1 = at1 + 8 <= n1 - 2 ? at1 : n1 - 2 - 8;"));
        assert!(c.contains("const ptrdiff_t i2 = at2 + 16 <= n2 - 2 ? at2 : n2 - 2 - 16;"));
        // Each row of the reach loaded once and added into the rows it reaches.
        assert!(c.contains("for (int y = -2; y < 8 + 2; ++y) {"), "{c}");
        assert!(c.contains("const double *const column = cur_u + cell + at[c];"));
        assert!(c.contains("sum[row][v] += weights[k] * value[v];"), "{c}");
        assert!(c.contains("} else\n#endif\n"), "{c}");
        assert!(
            c.contains("sum += weight[c][k] * cur_u[cell + at[c] + (k - 2) * s1];"),
            "{c}"
        );
        // Radius 1 (27 terms, and steps that fuse): no table.
        let st = box3d(1, "");
        assert!(!source(&st, &analyse(&st), "p").contains("weight["));
    }

    #[test]
    fn a_table_reads_several_grids_and_adds_the_sum_s_constant() {
        // Radius 3: with a second grid to read, radius 2 moves 24 bytes a
        // cell for its 251 flops, and fuses.
        let st = box3d(3, " + p*k[0,0,1] + 0.5");
        let c = source(&st, &analyse(&st), "p");
        assert!(c.contains("const double weight[][7] = {"), "{c}");
        // k's one term: a column of its own, 0 at every other y offset.
        assert!(
            c.contains("{0, 0, 0, p_p, 0, 0, 0},"),
            "a parameter's weight: {c}"
        );
        assert!(
            c.contains("const double *const grid[] = {cur_u, cur_u, "),
            "{c}"
        );
        assert!(c.contains(", cur_k};"), "{c}");
        assert!(c.contains("const double *const column = grid[c] + cell + at[c];"));
        assert!(
            c.contains("const stencil_vector value = sum[row][v] + (0.5);"),
            "{c}"
        );
        assert!(c.contains("out[cell] = sum + (0.5);"), "{c}");
    }

    #[test]
    fn a_2d_sum_blocks_the_rows_of_the_plane() {
        let mut terms = Vec::new();
        for y in -2..=2 {
            for x in -2..=2 {
                terms.push(format!("0.{:04}*u[{y},{x}]", terms.len() + 1));
            }
        }
        let text = format!(
            "[stencil]\nname = \"b\"\ndtype = \"f32\"\naxes = [\"y\", \"x\"]\n\
             [fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"{}\"\n",
            terms.join(" + ")
        );
        let st = crate::config::lowered("b.stencil.toml".as_ref(), &text)
            .unwrap()
            .remove(0);
        let c = source(&st, &analyse(&st), "p");
        assert!(
            c.contains("cache blocks of 32 x all cells (y, x), distributed over OpenMP threads; a sum of 25 weighted reads or more is computed 8 rows by 2 vectors at a time"),
            "{c}"
        );
        assert!(
            c.contains("Bands of blocks of 8 rows by 32 cells (2 vectors of 16): the sum's terms as 5 columns (a grid and an offset along x) of 5 weights over y"),
            "{c}"
        );
        assert!(
            c.contains("{0.0001f, 0.0006f, 0.0011f, 0.0016f, 0.0021f},"),
            "{c}"
        );
        assert!(
            c.contains("const ptrdiff_t at[] = {-2, -1, 0, 1, 2};"),
            "{c}"
        );
        assert!(
            c.contains("for (ptrdiff_t b0 = 2; b0 < whole; b0 += band)"),
            "{c}"
        );
        assert!(c.contains("const ptrdiff_t cell = i0 * s0 + i1;"), "{c}");
        assert!(c.contains("memcpy(&value[v], column + y * s0 + 16 * v, sizeof *value);"));
        assert!(c.contains("memcpy(out + cell + row * s0 + 16 * v, &value, sizeof value);"));
        assert!(c.contains("sum += weight[c][k] * cur_u[cell + at[c] + (k - 2) * s0];"));
        assert!(!c.contains("i2"), "{c}");
    }

    #[test]
    fn a_sparse_sum_is_not_summed_from_a_table() {
        // A star of radius 17: 103 terms, but 69 columns of 35 weights
        // each, nearly all zeros.
        let mut terms = vec!["u[0,0,0]".to_string()];
        for d in 1..=17 {
            for sign in [1, -1] {
                let d = sign * d;
                terms.push(format!(
                    "0.001*u[{d},0,0] + 0.002*u[0,{d},0] + 0.003*u[0,0,{d}]"
                ));
            }
        }
        let text = format!(
            "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n\
             [fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"{}\"\n",
            terms.join(" + ")
        );
        let st = crate::config::lowered("s.stencil.toml".as_ref(), &text)
            .unwrap()
            .remove(0);
        let c = source(&st, &analyse(&st), "p");
        assert!(
            c.contains("each marching z") && !c.contains("weight["),
            "{c}"
        );
    }
}
