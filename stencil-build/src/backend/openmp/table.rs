//! Single steps of a 3-D statement that is a long weighted sum of reads
//! (a wide box of distinct weights), computed from a table of its terms.
//!
//! The marching pass written out term by term ([`super::planes`]) is one
//! loop of thousands of instructions for such a sum (4 planes of a 9 x 9 x 9
//! box: 2916 multiply-adds), more than the core's decoded-instruction cache
//! holds. Here a row is computed [`ACCUMULATORS`] vectors at a time by a
//! loop over a table of the terms (each a weight, a grid and an offset):
//! a few dozen instructions, the accumulators in registers, each term one
//! load and one multiply-add a vector. Vectors are GCC's and Clang's
//! vector extension (`vector_size`), which the compiler maps onto the
//! instruction set it compiles for; a compiler without it (MSVC) sums
//! every row a cell at a time from the same table. A row's last vectors
//! end at its last cell, recomputing a few cells of the vectors before
//! them, so no cell of a row of at least one chunk is left to scalar code;
//! shorter rows are summed a cell at a time. Bands of rows march the
//! slowest axis as the marching bands do, handed out as threads finish
//! one.

use std::fmt::{self, Write as _};

use super::planes::bands;
use super::{Writer, c_expr, plain_read};
use crate::codegen::index::offset_delta;
use crate::codegen::names::slot_name;
use crate::ir::{Access, Expr, Slot, Statement, Stencil, WHOLE_AXIS, WeightedSum, weighted_sum};

/// The fewest terms for which a 3-D single step whose block spans the
/// slowest axis ([`super::planes::marches`]) sums from a table. On the
/// 2-core build machine (AVX-512, 2 threads, 250^3 and 256^3, the
/// generated kernels in one process, in turn), the table ran AN5D's
/// box3d4r (729 terms) 1.84x-1.87x as fast as the marching pass, box3d3r
/// (343) 1.64x-2.01x in f32 and 1.50x-1.52x in f64, box3d2r (125)
/// 1.36x-1.37x in f32 and 1.00x-1.06x in f64 (design notes, "Sums from a
/// table").
pub(super) const TABLE_TERMS: usize = 100;

/// The loop over the table's terms, `k` each term's index.
const TERMS_LOOP: &str = "for (int k = 0; k < (int)(sizeof weight / sizeof *weight); ++k)";

/// Vectors a chunk of a row holds: each its accumulator, a register.
pub(super) const ACCUMULATORS: usize = 8;

/// Bytes a vector holds: AVX-512's registers, two or four narrower ones
/// on other targets.
const VECTOR_BYTES: usize = 64;

/// Statement `s`'s terms where its single steps sum them from a table: a
/// weighted sum ([`weighted_sum`]) of at least [`TABLE_TERMS`] reads, in a
/// 3-D stencil whose block spans the slowest axis.
pub(super) fn table(st: &Stencil, s: &Statement) -> Option<WeightedSum> {
    if st.dims() != 3 || st.tiling.openmp.block[0] != WHOLE_AXIS {
        return None;
    }
    weighted_sum(&s.expr).filter(|(terms, _)| terms.len() >= TABLE_TERMS)
}

/// The loops over the cells `span` (`[from, to]` per axis, as C) of a
/// statement that is the weighted sum `terms` (plus `constant`), summed
/// from a table.
pub(super) fn interior(
    w: &mut Writer,
    st: &Stencil,
    (terms, constant): &WeightedSum,
    span: &[[String; 2]],
) -> fmt::Result {
    let t = st.dtype.c();
    let lanes = VECTOR_BYTES / st.dtype.size();
    let chunk = ACCUMULATORS * lanes;
    writeln!(
        w,
        "/* Bands of rows marching {}, each row summed from a table of its {} terms, {chunk} cells ({ACCUMULATORS} vectors of {lanes}) at a time. */",
        st.axes[0],
        terms.len()
    )?;
    w.directive("#if defined(__GNUC__)")?;
    writeln!(
        w,
        "typedef {t} stencil_vector __attribute__((vector_size({VECTOR_BYTES})));"
    )?;
    w.directive("#endif")?;
    tables(w, st, terms)?;
    let [[lo0, hi0], [lo1, hi1], [lo2, hi2]] = [&span[0], &span[1], &span[2]];
    bands(w, st.tiling.openmp.block[1], [lo1, hi1])?;
    w.pragma("omp parallel for schedule(dynamic, 1)")?;
    w.nest(
        &[
            format!("for (ptrdiff_t b1 = {lo1}; b1 < {hi1}; b1 += band)"),
            format!("for (ptrdiff_t i0 = {lo0}; i0 < {hi0}; ++i0)"),
            format!("for (ptrdiff_t i1 = b1; i1 < stencil_min(b1 + band, {hi1}); ++i1)"),
        ],
        |w| {
            writeln!(w, "const ptrdiff_t row = i0 * s0 + i1 * s1;")?;
            let add = constant
                .as_ref()
                .map(|c| format!(" + ({})", c_expr(st, c, &plain_read(st))))
                .unwrap_or_default();
            let from = match one_grid(terms) {
                Some(slot) => slot_name(st, slot),
                None => "grid[k]".to_string(),
            };
            let sum = (from.as_str(), add.as_str());
            writeln!(
                w,
                "/* Compilers without GCC's vector extension (MSVC) sum every row a cell at a time. */"
            )?;
            w.directive("#if defined(__GNUC__)")?;
            w.block(format_args!("if ({hi2} - {lo2} >= {chunk})"), |w| {
                chunks(w, st, [lo2, hi2], sum)?;
                writeln!(w, "continue;")
            })?;
            w.directive("#endif")?;
            cells(w, st, [lo2, hi2], sum)
        },
    )
}

/// The table: each term's weight, and where it reads relative to the cell
/// (its grid and its offset).
fn tables(w: &mut Writer, st: &Stencil, terms: &[(Access, Expr)]) -> fmt::Result {
    let t = st.dtype.c();
    let weights: Vec<String> = terms
        .iter()
        .map(|(_, c)| c_expr(st, c, &plain_read(st)))
        .collect();
    let grids: Vec<String> = terms.iter().map(|(a, _)| slot_name(st, a.slot)).collect();
    let offsets: Vec<String> = terms.iter().map(|(a, _)| offset_delta(&a.offset)).collect();
    writeln!(w, "const {t} weight[] = {{{}}};", weights.join(", "))?;
    writeln!(w, "const ptrdiff_t at[] = {{{}}};", offsets.join(", "))?;
    if one_grid(terms).is_none() {
        writeln!(w, "const {t} *const grid[] = {{{}}};", grids.join(", "))?;
    }
    Ok(())
}

/// The grid every term reads, where they read one.
fn one_grid(terms: &[(Access, Expr)]) -> Option<Slot> {
    let first = terms.first()?.0.slot;
    terms.iter().all(|(a, _)| a.slot == first).then_some(first)
}

/// The row's cells from `lo2` to `hi2` in chunks of [`ACCUMULATORS`]
/// vectors, the last chunk ending at `hi2`; each term reads `from` (its
/// grid, as C) and `add` follows the sum.
fn chunks(
    w: &mut Writer,
    st: &Stencil,
    [lo2, hi2]: [&String; 2],
    (from, add): (&str, &str),
) -> fmt::Result {
    let lanes = VECTOR_BYTES / st.dtype.size();
    let chunk = ACCUMULATORS * lanes;
    w.block(
        format_args!("for (ptrdiff_t at2 = {lo2}; at2 < {hi2}; at2 += {chunk})"),
        |w| {
            writeln!(
                w,
                "/* The last chunk ends at the row's end, recomputing cells of the one before it. */"
            )?;
            writeln!(
                w,
                "const ptrdiff_t i2 = at2 + {chunk} <= {hi2} ? at2 : {hi2} - {chunk};"
            )?;
            writeln!(w, "stencil_vector sum[{ACCUMULATORS}];")?;
            w.guarded(
                format_args!("for (int v = 0; v < {ACCUMULATORS}; ++v)"),
                "sum[v] = (stencil_vector){0};",
            )?;
            w.block(TERMS_LOOP, |w| {
                writeln!(
                    w,
                    "const {} *const term = {from} + row + i2 + at[k];",
                    st.dtype.c()
                )?;
                w.block(format_args!("for (int v = 0; v < {ACCUMULATORS}; ++v)"), |w| {
                    writeln!(w, "stencil_vector value;")?;
                    writeln!(w, "memcpy(&value, term + {lanes} * v, sizeof value);")?;
                    writeln!(w, "sum[v] += weight[k] * value;")
                })
            })?;
            w.block(format_args!("for (int v = 0; v < {ACCUMULATORS}; ++v)"), |w| {
                writeln!(w, "const stencil_vector value = sum[v]{add};")?;
                writeln!(w, "memcpy(out + row + i2 + {lanes} * v, &value, sizeof value);")
            })
        },
    )
}

/// The row's cells from `lo2` to `hi2` one at a time: rows shorter than a
/// chunk.
fn cells(
    w: &mut Writer,
    st: &Stencil,
    [lo2, hi2]: [&String; 2],
    (from, add): (&str, &str),
) -> fmt::Result {
    let t = st.dtype.c();
    w.block(
        format_args!("for (ptrdiff_t i2 = {lo2}; i2 < {hi2}; ++i2)"),
        |w| {
            writeln!(w, "{t} sum = 0;")?;
            w.guarded(
                TERMS_LOOP,
                format_args!("sum += weight[k] * {from}[row + i2 + at[k]];"),
            )?;
            writeln!(w, "out[row + i2] = sum{add};")
        },
    )
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
    fn a_sum_of_many_weighted_reads_is_summed_from_a_table_of_its_terms() {
        let st = box3d(2, "");
        let c = source(&st, &analyse(&st), "p");
        assert!(
            c.contains("summed from a table of its terms, 8 vectors at a time."),
            "{c}"
        );
        assert!(
            c.contains("const double weight[] = {0.0001, 0.0002,"),
            "{c}"
        );
        // Offsets from the cell, the first term's and the centre's.
        assert!(
            c.contains("const ptrdiff_t at[] = {-2 * s0 - 2 * s1 - 2, "),
            "{c}"
        );
        assert!(c.contains(", 0, ") && !c.contains("grid[k]"), "{c}");
        assert!(c.contains("typedef double stencil_vector __attribute__((vector_size(64)));"));
        // Chunks of 8 vectors of 8 cells, the last one ending at the row's end.
        assert!(c.contains("#if defined(__GNUC__)\n"), "{c}");
        assert!(c.contains("if (n2 - 2 - 2 >= 64) {"), "{c}");
        assert!(c.contains("const ptrdiff_t i2 = at2 + 64 <= n2 - 2 ? at2 : n2 - 2 - 64;"));
        assert!(c.contains("const double *const term = cur_u + row + i2 + at[k];"));
        assert!(c.contains("sum[v] += weight[k] * value;"), "{c}");
        assert!(
            c.contains("sum += weight[k] * cur_u[row + i2 + at[k]];"),
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
        assert!(
            c.contains("const double weight[] = {") && c.matches("cur_k").count() >= 2,
            "{c}"
        );
        assert!(c.contains(", p_p};"), "a parameter's weight: {c}");
        assert!(
            c.contains("const double *const grid[] = {cur_u, cur_u, "),
            "{c}"
        );
        assert!(c.contains(", cur_k};"), "{c}");
        assert!(c.contains("const double *const term = grid[k] + row + i2 + at[k];"));
        assert!(
            c.contains("const stencil_vector value = sum[v] + (0.5);"),
            "{c}"
        );
        assert!(c.contains("out[row + i2] = sum + (0.5);"), "{c}");
    }
}
