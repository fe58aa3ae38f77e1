//! A step of several statements in one loop nest: each cell of the
//! interior computes every statement and writes every field the step
//! updates, so that each grid crosses memory once a step, where a loop
//! nest a statement reads a grid once for every statement that reads it
//! (a reaction-diffusion's two fields, each read by both updates: 4 grid
//! passes a step instead of 6). The frame (wrapped or remapped reads past
//! a side that is not fixed) goes after the nest, by each statement's own
//! frame pass.
//!
//! It takes steps whose statements read only the values the step started
//! from (no statement reads another's new value, which a cell would need
//! from its neighbours before they are computed) and update fields of
//! their own over one span, which is what a step of coupled fields, its
//! temporaries inline ([`super::host_form`]), usually is.

use std::fmt::{self, Write as _};

use super::{
    Entry, frame, interior_of, interior_span, planes, strides, symbol as statement_symbol,
    unused_without_frame,
};
use crate::analysis::{Analysis, analyse};
use crate::backend::{Writer, c_spans, grid_arguments, grid_parameters};
use crate::ir::{Role, Slot, Statement, Stencil, Version};

/// Whether `st`'s step runs as one loop nest: several statements, each
/// updating a state field of its own over the span every other's covers,
/// with the same interior, none reading a value the step computes, none
/// in a region or marching planes.
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
                && s.slots().iter().all(|slot| {
                    slot.version != Version::Updated && st.fields[slot.field].role != Role::Temp
                })
                && !planes::marches(st, s)
        })
        && an.statements.iter().all(|info| info.hole.is_none())
        && rest.iter().all(|info| {
            info.bounds == first.bounds && interior_span(st, info) == interior_span(st, first)
        })
}

/// The exported C symbol of `st`'s step.
pub fn symbol(prefix: &str, st: &Stencil) -> String {
    format!("{prefix}__{}__step", st.name)
}

/// The buffer statement `k`'s field is written to: `out_<field>`.
pub fn output(st: &Stencil, k: usize) -> String {
    format!("out_{}", st.fields[st.statements[k].target].name)
}

/// Every buffer some statement of the step reads, in [`Slot`] order.
pub fn slots(st: &Stencil) -> Vec<Slot> {
    let mut slots: Vec<Slot> = st.statements.iter().flat_map(|s| s.slots()).collect();
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
    let inner = interior_span(st, info);
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
    let names: Vec<&str> = st
        .statements
        .iter()
        .map(|s| st.fields[s.target].name.as_str())
        .collect();
    writeln!(
        w,
        "/* The step: statements {} in one loop nest, each cell computing every field ({}).\n * Interior: cells {}.{} */",
        (1..=st.statements.len())
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        names.join(", "),
        super::spans(&inner),
        if has_frame {
            " Then each statement's frame."
        } else {
            ""
        }
    )?;
    w.definition(entry(st, prefix).head(&symbol(prefix, st)), |w| {
        if !has_frame {
            unused_without_frame(w, st, info, &unread_params(st))?;
        }
        strides(w, st.dims())?;
        let outputs: Vec<(String, &Statement)> = st
            .statements
            .iter()
            .enumerate()
            .map(|(k, s)| (output(st, k), s))
            .collect();
        interior_of(w, st, &outputs, &inner)?;
        if has_frame {
            for ((out, s), sym) in outputs.iter().zip(&cells) {
                let field = &st.fields[s.target].name;
                writeln!(w, "/* `{field}`'s frame. */")?;
                w.braces(|w| frame::pass_writing(w, (st, s), (&outer, &inner), (sym, out)))?;
            }
        }
        Ok(())
    })
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
    fn steps_that_read_new_values_or_reach_apart_keep_a_nest_a_statement() {
        // `v` reads `u`'s new value one cell over: its neighbours' would
        // not be computed yet.
        let staggered = coupled([U, "v[0,0] + 0.1*(u[0,1] - u[0,0])"], "fixed");
        assert!(!one_nest(&staggered));
        // Interiors apart: `v` reaches 2 cells, `u` 1, over a periodic grid.
        let wide = "v[0,0] + 0.1*(v[0,2] + v[0,-2] - 2*v[0,0]) + r[0,0]";
        assert!(!one_nest(&coupled([U, wide], "periodic")));
        // One statement has nothing to put together.
        let mut one = coupled([U, V], "fixed");
        one.statements.truncate(1);
        assert!(!one_nest(&one));
    }
}
