//! A step of several statements in one loop nest: each cell of the
//! interior computes every statement and writes every field the step
//! updates, so that each grid crosses memory once a step, where a loop
//! nest a statement reads a grid once for every statement that reads it
//! (a reaction-diffusion's two fields, each read by both updates: 4 grid
//! passes a step instead of 6; a staggered acoustic step, pressure and
//! three velocities: 8 instead of 14).
//!
//! A statement may read a field an earlier one updated (a staggered
//! grid's pressure, the new velocities one cell back): at its own cell the
//! value the nest just stored, at a neighbour's the earlier statement's
//! expression computed again there, from the values the step started from
//! (the new values of the neighbours are not computed yet, or by another
//! thread). Recomputed values are right only where the earlier statement
//! computes that cell from reads on the grid, so the nest covers the
//! common interior less the reach of such reads (its core); the cells
//! left, a shell of the core and the frame (wrapped or remapped reads past
//! a side that is not fixed), go after the nest, statement by statement,
//! through each statement's one-cell function, which reads the new values
//! from the buffers the nest and the earlier passes filled.
//!
//! It takes steps whose statements update fields of their own over one
//! span, none in a region or marching planes, none reading a temporary,
//! and whose values read at a neighbour are computed from the values the
//! step started from: what a step of coupled fields, its temporaries
//! inline ([`super::host_form`]), usually is.

use std::fmt::{self, Write as _};

use super::{
    Entry, c_value, frame, interior_of, interior_span, planes, strides, symbol as statement_symbol,
    unused_without_frame,
};
use crate::analysis::{Analysis, analyse};
use crate::backend::step::rows_read;
use crate::backend::{Writer, c_spans, grid_arguments, grid_parameters};
use crate::codegen::names::slot_name;
use crate::ir::{Access, Bound, Dtype, Expr, Role, Slot, Stencil, Version};

/// The most reads a cell's recomputed values may take, over all the
/// step's reads of a neighbour's new value. Each is a load of a line the
/// nest reads anyway (from cache) and the flops of its statement, where
/// the loop nest a statement that the one nest replaces streams its grids
/// from memory again: worth it while memory bounds the step. On the GPU
/// machine's 16 cores (BENCHMARKS.md, "staggered steps in one loop
/// nest") staggered3d, recomputing 9, ran 1.37x in one nest and random_03,
/// 12, 1.25x; random_18, 16, ran 0.73x, its 1-D grids (64 MiB) held by
/// the 300 MiB L3, and random_10, 21, 1.00x on 2 cores.
pub const RECOMPUTED_READS: usize = 12;

/// Whether `st`'s step runs as one loop nest: several statements, each
/// updating a state field of its own over the span every other's covers,
/// none in a region or marching planes, none reading a temporary, and
/// each new value read at a neighbour computed from the values the step
/// started from, in at most [`RECOMPUTED_READS`] reads a cell, with no
/// literal at the edges of the range, and, in 3-D, reading no more rows
/// than the nests a statement read ([`nest_rows`]).
pub fn one_nest(st: &Stencil) -> bool {
    if st.statements.len() < 2 {
        return false;
    }
    let an = analyse(st);
    let [first, rest @ ..] = &an.statements[..] else {
        return false;
    };
    let mut targets: Vec<usize> = st.statements.iter().map(|s| s.target).collect();
    targets.sort();
    targets.dedup();
    !rest.is_empty()
        && !st.has_regions()
        && targets.len() == st.statements.len()
        && st.statements.iter().all(|s| {
            matches!(st.fields[s.target].role, Role::State { .. })
                && s.slots()
                    .iter()
                    .all(|slot| st.fields[slot.field].role != Role::Temp)
                && !planes::marches(st, s)
        })
        && recomputed_reads(st).is_some_and(|n| n <= RECOMPUTED_READS)
        && (st.dims() < 3 || nest_rows(st) <= apart_rows(st))
        && an.statements.iter().all(|info| {
            info.hole.is_none()
                && info
                    .bounds
                    .iter()
                    .all(|b| matches!(b, [Bound::Low(_), Bound::High(_)]))
        })
        && rest.iter().all(|info| info.bounds == first.bounds)
}

/// [`Stencil::producer`] of a read of a new value, which a checked
/// stencil makes only after the statement that computes it.
fn producer(st: &Stencil, reader: usize, field: usize) -> usize {
    st.producer(reader, field)
        .expect("a checked stencil reads a new value after its statement")
}

/// Every read of a new value at a neighbour's cell: `(reader, producer,
/// offset)`.
fn neighbours_new_values(st: &Stencil) -> Vec<(usize, usize, Vec<i64>)> {
    let mut reads = Vec::new();
    for (k, s) in st.statements.iter().enumerate() {
        s.expr.for_each_read(&mut |a| {
            if a.slot.version == Version::Updated && a.offset.iter().any(|&d| d != 0) {
                reads.push((k, producer(st, k, a.slot.field), a.offset.clone()));
            }
        });
    }
    reads
}

/// How many reads the nest's recomputed values take a cell, or `None`
/// where a value read at a neighbour itself reads a new value or scales
/// values to the edges of the range ([`scales_to_range_edges`]).
fn recomputed_reads(st: &Stencil) -> Option<usize> {
    let mut total = 0;
    for (_, j, _) in neighbours_new_values(st) {
        let mut reads = 0;
        let mut new = false;
        let expr = &st.statements[j].expr;
        expr.for_each_read(&mut |a| {
            reads += 1;
            new |= a.slot.version == Version::Updated;
        });
        if new || scales_to_range_edges(expr, st.dtype) {
            return None;
        }
        total += reads;
    }
    Some(total)
}

/// Whether `e` has a literal whose magnitude lies past the square root of
/// `dtype`'s smallest normal or largest value (`1.0e-300`, `/1.0e308`):
/// its products with values of order one go subnormal, each an operation
/// of tens of cycles on x86 without flush-to-zero, and a recomputation
/// repeats them. On the 2-core machine two random stencils that divide by
/// 1e308 ran 0.32x and 0.61x in one nest (design notes, "Staggered steps
/// in one nest"), where random_10, recomputing as many reads, lost nothing.
fn scales_to_range_edges(e: &Expr, dtype: Dtype) -> bool {
    let (tiny, huge) = match dtype {
        Dtype::F32 => (f64::from(f32::MIN_POSITIVE), f64::from(f32::MAX)),
        Dtype::F64 => (f64::MIN_POSITIVE, f64::MAX),
    };
    match e {
        Expr::Lit(x) => {
            let m = x.abs();
            m != 0.0 && (m < tiny.sqrt() || m > huge.sqrt())
        }
        Expr::Param(_) | Expr::Read(_) => false,
        Expr::Neg(x) | Expr::PowI(x, _) => scales_to_range_edges(x, dtype),
        Expr::Bin(_, a, b) => scales_to_range_edges(a, dtype) || scales_to_range_edges(b, dtype),
        Expr::Call(_, args) => args.iter().any(|a| scales_to_range_edges(a, dtype)),
    }
}

/// The rows the nest reads ([`rows_read`]: a buffer at an offset along the
/// axes but the contiguous one, recomputations' included) and writes:
/// the streams its innermost loop walks. In 3-D a row of another plane is
/// a stream far from the others, which the cache holds only for as many
/// planes as a block spans; a recomputed value read a plane over brings
/// the rows of its reads, a plane over. On the 2-core machine (256^3,
/// the build before and after in turn; design notes, "Staggered steps in
/// one nest") staggered3d (14 rows in one nest against 18 apart) ran
/// 1.02x-1.12x in one nest, random_06 (30 against 26) 0.73x and random_16
/// (26 against 18) 0.92x. In 2-D a block's rows lie a few rows apart, in
/// cache: random_03 (8 against 10) ran 1.27x in one nest.
fn nest_rows(st: &Stencil) -> usize {
    rows_read(st) + st.statements.len()
}

/// The rows the loop nests a statement read and write, together
/// ([`nest_rows`]' count where each statement is a nest of its own).
fn apart_rows(st: &Stencil) -> usize {
    let line = st.dims() - 1;
    st.statements
        .iter()
        .map(|s| {
            let mut rows = std::collections::BTreeSet::new();
            s.expr
                .for_each_read(&mut |a| _ = rows.insert((a.slot, a.offset[..line].to_vec())));
            rows.len() + 1
        })
        .sum()
}

/// The cells the nest computes: the interior every statement has (its
/// cells whose reads stay on the grid) less, by each side, the reach of
/// the reads of new values at neighbours, so that every value recomputed
/// there is one its statement computes from reads on the grid.
fn core(st: &Stencil, an: &Analysis) -> Vec<[String; 2]> {
    let mut by = vec![[0usize; 2]; st.dims()];
    for (_, _, offset) in neighbours_new_values(st) {
        for (a, &d) in offset.iter().enumerate() {
            let side = usize::from(d > 0);
            by[a][side] = by[a][side].max(d.unsigned_abs() as usize);
        }
    }
    let mut narrowed = an.statements[0].clone();
    for (a, &[lo, hi]) in by.iter().enumerate() {
        let reach = an.statements.iter().map(|info| info.reach[a]).max();
        if let [Bound::Low(k), _] = &mut narrowed.bounds[a] {
            *k += lo;
        }
        if let [_, Bound::High(k)] = &mut narrowed.bounds[a] {
            *k += hi;
        }
        // By a side that is updated the interior starts at the reach.
        narrowed.reach[a] = reach.unwrap_or(0) + lo.max(hi);
    }
    interior_span(st, &narrowed)
}

/// Statement `k`'s value in the nest at cell `c`: its reads of new values
/// at `c` the buffer the nest has just written there, at a neighbour the
/// earlier statement's value recomputed there; every read of a value from
/// before the step spelled by `plain`.
fn nest_value(st: &Stencil, k: usize, plain: &dyn Fn(&Access) -> String) -> String {
    let read = |a: &Access| {
        if a.slot.version != Version::Updated {
            return plain(a);
        }
        let j = producer(st, k, a.slot.field);
        if a.offset.iter().all(|&d| d == 0) {
            return format!("{}[c]", output(st, j));
        }
        let shifted = |b: &Access| {
            let offset: Vec<i64> = b.offset.iter().zip(&a.offset).map(|(o, d)| o + d).collect();
            plain(&Access {
                offset,
                ..b.clone()
            })
        };
        format!("({})", c_value(st, &st.statements[j], &shifted))
    };
    c_value(st, &st.statements[k], &read)
}

/// The exported C symbol of `st`'s step.
pub fn symbol(prefix: &str, st: &Stencil) -> String {
    format!("{prefix}__{}__step", st.name)
}

/// The buffer statement `k`'s field is written to: `out_<field>`.
pub fn output(st: &Stencil, k: usize) -> String {
    format!("out_{}", st.fields[st.statements[k].target].name)
}

/// Every buffer of values from before the step that some statement reads,
/// in [`Slot`] order (new values are in the step's outputs).
pub fn slots(st: &Stencil) -> Vec<Slot> {
    let mut slots: Vec<Slot> = st
        .statements
        .iter()
        .flat_map(|s| s.slots())
        .filter(|slot| slot.version != Version::Updated)
        .collect();
    slots.sort();
    slots.dedup();
    slots
}

/// The step's function as the Rust API calls it.
pub fn entry(st: &Stencil, prefix: &str) -> Entry {
    let outputs: Vec<String> = (0..st.statements.len()).map(|k| output(st, k)).collect();
    let grids = (&outputs[..], &slots(st)[..], &st.params_used()[..]);
    Entry {
        returns: "void",
        symbol: symbol(prefix, st),
        parameters: grid_parameters(st, grids, "restrict", true).join(", "),
        arguments: grid_arguments(st, grids, false),
    }
}

/// The step's function, after the one-cell functions of each statement's
/// frame where it has one (`frame::cell`): the nest over the interior,
/// then each statement's frame pass through its one-cell function.
pub fn kernel(w: &mut Writer, st: &Stencil, an: &Analysis, prefix: &str) -> fmt::Result {
    let info = &an.statements[0];
    let outer = c_spans(&info.bounds);
    let inner = core(st, an);
    let recomputes = !neighbours_new_values(st).is_empty();
    let has_frame = inner != outer;
    let cells: Vec<String> = st
        .statements
        .iter()
        .map(|s| statement_symbol(prefix, st, s))
        .collect();
    if has_frame {
        for (s, sym) in st.statements.iter().zip(&cells) {
            writeln!(w)?;
            frame::cell(w, st, s, sym)?;
        }
    }
    writeln!(w)?;
    heading(w, st, (&inner, has_frame), recomputes)?;
    w.definition(entry(st, prefix).head(&symbol(prefix, st)), |w| {
        if !has_frame {
            unused_without_frame(w, st, info, &unread_params(st))?;
        }
        strides(w, st.dims())?;
        let values = |read: &dyn Fn(&Access) -> String| {
            (0..st.statements.len())
                .map(|k| (output(st, k), nest_value(st, k, read)))
                .collect()
        };
        interior_of(w, st, &values, &inner)?;
        if has_frame {
            new_value_buffers(w, st)?;
            let left = match recomputes {
                false => "frame",
                true => "cells left out",
            };
            for ((k, s), sym) in st.statements.iter().enumerate().zip(&cells) {
                let field = &st.fields[s.target].name;
                writeln!(w, "/* `{field}`'s {left}. */")?;
                let out = output(st, k);
                w.braces(|w| frame::pass_writing(w, (st, s), (&outer, &inner), (sym, &out)))?;
            }
        }
        Ok(())
    })
}

/// The comment above the step's function: its statements, whether it
/// `recomputes` new values at neighbours, the cells its nest computes
/// (`inner`) and whether cells are left for after it (`rest`).
fn heading(
    w: &mut Writer,
    st: &Stencil,
    (inner, rest): (&[[String; 2]], bool),
    recomputes: bool,
) -> fmt::Result {
    let names: Vec<&str> = st
        .statements
        .iter()
        .map(|s| st.fields[s.target].name.as_str())
        .collect();
    let recomputed = match recomputes {
        false => "",
        true => {
            "\n * New values read at a neighbour are computed again there, from the values the step started from."
        }
    };
    writeln!(
        w,
        "/* The step: statements {} in one loop nest, each cell computing every field ({}).{recomputed}\n * Interior: cells {}.{} */",
        (1..=st.statements.len())
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        names.join(", "),
        super::spans(inner),
        match (rest, recomputes) {
            (false, _) => "",
            (true, false) => " Then each statement's frame.",
            (true, true) => " Then, statement by statement, the cells left out.",
        }
    )
}

/// The new values' buffers under the names the one-cell functions' calls
/// pass (`new_<field>`): the step's outputs, which the nest and the passes
/// before have filled.
fn new_value_buffers(w: &mut Writer, st: &Stencil) -> fmt::Result {
    let real = st.dtype.c();
    let mut read: Vec<Slot> = st
        .statements
        .iter()
        .flat_map(|s| s.slots())
        .filter(|slot| slot.version == Version::Updated)
        .collect();
    read.sort();
    read.dedup();
    for slot in read {
        let j = producer(st, st.statements.len(), slot.field);
        writeln!(
            w,
            "const {real} *const {} = {};",
            slot_name(st, slot),
            output(st, j)
        )?;
    }
    Ok(())
}

/// The params of `value` sides that no statement's expression reads: only
/// a frame pass would.
fn unread_params(st: &Stencil) -> Vec<usize> {
    let read: Vec<usize> = st
        .statements
        .iter()
        .flat_map(|s| {
            let edge_only = s.edge_only_params();
            s.params_used()
                .into_iter()
                .filter(move |p| !edge_only.contains(p))
        })
        .collect();
    st.params_used()
        .into_iter()
        .filter(|p| !read.contains(p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::one_nest;
    use crate::analysis::analyse;
    use crate::backend::openmp::{entries, host_form, source};
    use crate::ir::Stencil;

    /// Two fields `u` and `v`, updated by `updates` (`r`: their product as
    /// the step started), on a `boundary` grid, as the OpenMP kernels
    /// compute it (`r` inline).
    fn coupled(updates: [&str; 2], boundary: &str) -> Stencil {
        let text = format!(
            "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n\
             [fields]\nu = {{ role = \"state\" }}\nv = {{ role = \"state\" }}\n\
             r = {{ role = \"temp\" }}\n\
             [[update]]\ntarget = \"r\"\nexpr = \"u[0,0]*v[0,0]\"\n\
             [[update]]\ntarget = \"u\"\nexpr = \"{}\"\n\
             [[update]]\ntarget = \"v\"\nexpr = \"{}\"\n\
             [boundary]\nkind = \"{boundary}\"\n",
            updates[0], updates[1]
        );
        let mut all = crate::config::lowered("s.stencil.toml".as_ref(), &text).unwrap();
        host_form(&all.remove(0)).into_owned()
    }

    const U: &str = "u[0,0] + 0.1*(u[0,1] + u[0,-1] + u[1,0] + u[-1,0] - 4*u[0,0]) - r[0,0]";
    const V: &str = "v[0,0] + 0.1*(v[0,1] + v[0,-1] + v[1,0] + v[-1,0] - 4*v[0,0]) + r[0,0]";

    #[test]
    fn coupled_fields_step_in_one_nest() {
        for boundary in ["fixed", "periodic"] {
            let st = coupled([U, V], boundary);
            assert!(one_nest(&st), "{boundary}");
            let entries = entries(&st, "p");
            assert_eq!(entries.len(), 1);
            assert_eq!(entries[0].symbol, "p__s__step");
            let c = source(&st, &analyse(&st), "p");
            // One nest writes both fields, cell by cell.
            let nest = c.split("#pragma omp simd").nth(1).unwrap();
            let line = |out: &str| nest.lines().position(|l| l.trim().starts_with(out));
            assert_eq!(line("out_v[c] ="), line("out_u[c] =").map(|k| k + 1), "{c}");
            assert!(!c.contains("void p__s__update_u("), "{c}");
            // A periodic grid's frame goes by each statement's own pass.
            assert_eq!(
                c.contains("p__s__update_v_at("),
                boundary == "periodic",
                "{c}"
            );
        }
    }

    #[test]
    fn a_step_reading_new_values_recomputes_those_of_neighbours() {
        // `v` reads `u`'s new value at its cell and one cell over.
        let v = "v[0,0] + 0.1*(u[0,1] - u[0,0])";
        for boundary in ["fixed", "periodic"] {
            let st = coupled([U, v], boundary);
            assert!(one_nest(&st), "{boundary}");
            let c = source(&st, &analyse(&st), "p");
            let nest = c.split("#pragma omp simd").nth(1).unwrap();
            let v_line = nest
                .lines()
                .find(|l| l.trim().starts_with("out_v[c] ="))
                .unwrap();
            // At its cell the value just stored, one cell over `u`'s
            // expression again, from the values the step started from.
            assert!(v_line.contains("out_u[c]"), "{v_line}");
            assert!(v_line.contains("(cur_u[c + 1] + "), "{v_line}");
            assert!(!v_line.contains("new_u"), "{v_line}");
            // The nest stops a cell short of where `u`'s new value one
            // cell over would be held or wrapped; the passes after it
            // read the new values from `u`'s output.
            let heading = c.lines().find(|l| l.contains("Interior: cells")).unwrap();
            let core = match boundary {
                "fixed" => "(1, 1) from the low edges and (1, 2) from the high ones",
                _ => "(1, 2) from the edges",
            };
            assert!(heading.contains(core), "{heading}");
            assert!(c.contains("const double *const new_u = out_u;"), "{c}");
            assert!(
                c.contains("p__s__update_v_at(i0, i1, n0, n1, out_v,"),
                "{c}"
            );
            // The Rust API passes the values from before the step only.
            assert!(!entries(&st, "p")[0].parameters.contains("new_u"));
        }
    }

    /// A stencil of `u`, `v` and `w`, each a diffusion, `v` adding `u`'s
    /// new value at `uv` and `w` `v`'s at `vw`.
    fn chain(uv: &str, vw: &str) -> Stencil {
        let text = format!(
            "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n\
             [fields]\nu = {{ role = \"state\" }}\nv = {{ role = \"state\" }}\n\
             w = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[0,0] + 0.1*(u[0,1] + u[0,-1] - 2*u[0,0])\"\n\
             [[update]]\ntarget = \"v\"\nexpr = \"v[0,0] + {uv}\"\n\
             [[update]]\ntarget = \"w\"\nexpr = \"w[0,0] + {vw}\"\n\
             [boundary]\nkind = \"fixed\"\n"
        );
        crate::config::lowered("s.stencil.toml".as_ref(), &text)
            .unwrap()
            .remove(0)
    }

    /// A 3-D stencil of `u`, a 7-point diffusion, and `v`, adding `uv`.
    fn pair3d(uv: &str) -> Stencil {
        let text = format!(
            "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
             [fields]\nu = {{ role = \"state\" }}\nv = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[0,0,0] + 0.1*(u[0,0,1] + u[0,0,-1] + \
             u[0,1,0] + u[0,-1,0] + u[1,0,0] + u[-1,0,0] - 6*u[0,0,0])\"\n\
             [[update]]\ntarget = \"v\"\nexpr = \"v[0,0,0] + {uv}\"\n\
             [boundary]\nkind = \"fixed\"\n"
        );
        crate::config::lowered("s.stencil.toml".as_ref(), &text)
            .unwrap()
            .remove(0)
    }

    #[test]
    fn in_3d_recomputing_must_not_add_rows() {
        // A cell over along the row: `u`'s rows there are the nest's own
        // (6 read and 2 written against 6 and 3 apart).
        assert!(one_nest(&pair3d("u[0,0,1] - u[0,0,0]")));
        // A row or a plane over, `u`'s 5 rows there are 3 more (11 rows
        // against 10).
        assert!(!one_nest(&pair3d("u[0,0,0] - u[0,-1,0]")));
        assert!(!one_nest(&pair3d("u[1,0,0] - u[0,0,0]")));
    }

    #[test]
    fn steps_that_recompute_too_much_or_reach_apart_keep_a_nest_a_statement() {
        assert!(one_nest(&chain("u[1,0]", "v[0,0]")));
        // `w` would recompute `v` one cell over, which reads a new value.
        assert!(!one_nest(&chain("u[1,0]", "v[0,1]")));
        // 4 reads of `u`'s new value at neighbours, of 4 reads each.
        let many: Vec<String> = (-2..=1).map(|k| format!("u[1,{k}]")).collect();
        assert!(!one_nest(&chain(&many.join(" + "), "v[0,0]")));
        assert!(one_nest(&chain(&many[..3].join(" + "), "v[0,0]")));
        // Interiors apart (`v` reaches 2 cells, `u` 1, over a periodic
        // grid): the nest covers the narrower, `u`'s pass the rest of its.
        let wide = "v[0,0] + 0.1*(v[0,2] + v[0,-2] - 2*v[0,0]) + r[0,0]";
        let st = coupled([U, wide], "periodic");
        assert!(one_nest(&st));
        let c = source(&st, &analyse(&st), "p");
        assert!(
            c.contains("Interior: cells at distance >= (1, 2) from the edges."),
            "{c}"
        );
        // `u` divides by 1e308: recomputing it would repeat subnormal
        // arithmetic.
        let tiny = format!("{U} + u[0,0]/1.0e308");
        assert!(!one_nest(&coupled([&tiny, "v[0,0] + u[0,1]"], "fixed")));
        assert!(one_nest(&coupled([&tiny, "v[0,0] + u[0,0]"], "fixed")));
        // One statement has nothing to put together.
        let mut one = coupled([U, V], "fixed");
        one.statements.truncate(1);
        assert!(!one_nest(&one));
    }
}
