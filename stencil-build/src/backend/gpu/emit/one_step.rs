//! The kernel that computes every statement of a step at its cell
//! ([`step::one_kernel`]): `naive`'s threads, each writing every state
//! field the step updates, the values of earlier statements read from its
//! locals or computed again where they are read (the module [`step`]).

use std::fmt::{self, Write as _};

use super::Gen;
use super::header::twins;
use crate::analysis::Analysis;
use crate::backend::gpu::plan::{Companions, Plan};
use crate::backend::gpu::step::{self, Grids};
use crate::backend::gpu::{Dialect, step_symbol};
use crate::backend::step::{self as reads, Source};
use crate::backend::{CExpr, Writer, comment_text, mentions};
use crate::codegen::expr;
use crate::codegen::names::slot_name;
use crate::ir::{Access, Role, Slot, Stencil, Version};

/// The step's kernel and launcher, after a comment with its statements.
pub(super) fn kernel(
    w: &mut Writer,
    st: &Stencil,
    an: &Analysis,
    plan: &Plan,
    d: &Dialect,
    prefix: &str,
    grids: &Grids,
) -> fmt::Result {
    // Every state field is updated on the same region; the kernel covers it.
    let k = (0..st.statements.len())
        .rev()
        .find(|&k| st.fields[st.statements[k].target].role != Role::Temp)
        .expect("a checked stencil updates a state field");
    writeln!(w)?;
    writeln!(
        w,
        "/* The step, its {} statements in one kernel:",
        st.statements.len()
    )?;
    for s in &st.statements {
        writeln!(
            w,
            "   {} <- {}",
            st.fields[s.target].name,
            comment_text(&s.text)
        )?;
    }
    writeln!(w, "*/")?;
    // The plan's companions, as a statement's kernel takes them (`stream`'s
    // scalar twins' plan, `auto`'s kernels of small planes and grids),
    // compute the whole step too.
    let others = Companions::of(plan, st, d);
    let g = Gen {
        st,
        s: &st.statements[k],
        info: &an.statements[k],
        plan,
        d,
        sym: step_symbol(prefix, d, st),
        vector: plan.vector,
        wide: true,
        scalar: None,
        defaults: others.defaults.as_ref(),
        fallback: false,
        vectors_only: false,
        step: others.step.as_ref(),
        step_small: others.step_small.as_ref(),
        naive: others.naive.as_ref(),
        output: "out",
        whole_step: Some(grids),
        unwrapped: false,
    };
    twins(w, &g)?;
    super::companion_kernels(w, &g)?;
    writeln!(w)?;
    g.launcher(w)
}

/// The names of the step kernel's parameters: extents, the outputs
/// (`out_<field>`), the buffers it reads, its run-time parameters.
pub(super) fn names(st: &Stencil, grids: &Grids) -> Vec<String> {
    let mut a: Vec<String> = (0..st.dims()).map(|a| format!("n{a}")).collect();
    a.extend(grids.outputs.iter().map(|&f| step::output_name(st, f)));
    a.extend(grids.slots.iter().map(|&slot| slot_name(st, slot)));
    a.extend(grids.params.iter().map(|&i| format!("p_{}", st.params[i])));
    a
}

/// The step kernel's C parameters, as [`crate::backend::c_parameters`]
/// spells a statement's.
pub(super) fn parameters(
    st: &Stencil,
    grids: &Grids,
    qualifier: &str,
    const_scalars: bool,
) -> Vec<String> {
    let outputs: Vec<String> = grids
        .outputs
        .iter()
        .map(|&f| step::output_name(st, f))
        .collect();
    let grids = (
        outputs.as_slice(),
        grids.slots.as_slice(),
        grids.params.as_slice(),
    );
    crate::backend::grid_parameters(st, grids, qualifier, const_scalars)
}

/// The local holding statement `k`'s value at the thread's cell.
pub(super) fn local(st: &Stencil, k: usize) -> String {
    slot_name(
        st,
        Slot {
            field: st.statements[k].target,
            version: Version::Updated,
        },
    )
}

/// The buffers the step's kernel writes, each with the local of the last
/// statement that computes its field (its value at the end of the step).
pub(super) fn stores(st: &Stencil, grids: &Grids) -> Vec<(String, String)> {
    grids
        .outputs
        .iter()
        .map(|&f| {
            let last = st
                .producer(st.statements.len(), f)
                .expect("an output's statement");
            (step::output_name(st, f), local(st, last))
        })
        .collect()
}

/// Where the step's statements, computed at one cell, read memory and name
/// their values: the thread's cell `c` (`cur_u[c + 1]`, its index `i0`), or
/// one of a 1-D row's consecutive cells, whose reads are lanes of the row's
/// window of loads.
pub(super) struct Site<'a> {
    /// The C text of a read from memory, its offset from the cell.
    pub memory: &'a dyn Fn(&Access) -> String,
    /// The index along axis `a` of the cell `d` from this one.
    pub index: &'a dyn Fn(usize, i64) -> String,
    /// What each statement's local takes after its field's name (a row's
    /// cell `k`: `__k`; specs cannot name `__`).
    pub suffix: String,
}

impl Site<'_> {
    /// The local holding statement `k`'s value at this cell.
    pub fn local(&self, st: &Stencil, k: usize) -> String {
        format!("{}{}", local(st, k), self.suffix)
    }
}

impl Gen<'_> {
    /// The step's statements at cell `c`, each into its local, each state
    /// field's written.
    pub(super) fn every_statement(&self, w: &mut Writer) -> fmt::Result {
        let st = self.st;
        let memory = |a: &Access| self.global_read(a);
        let site = Site {
            memory: &memory,
            index: &|a, d| super::shifted(&format!("i{a}"), d),
            suffix: String::new(),
        };
        for (k, value) in self.locals_at(&site) {
            writeln!(w, "const {} {} = {value};", st.dtype.c(), local(st, k))?;
            let s = &st.statements[k];
            if st.fields[s.target].role != Role::Temp {
                writeln!(
                    w,
                    "{}[c] = {};",
                    step::output_name(st, s.target),
                    local(st, k)
                )?;
            }
        }
        Ok(())
    }

    /// The statements whose values `site`'s cell keeps in locals, each with
    /// its expression there, in the step's order: every state field's, and
    /// the temporaries a kept expression reads there (one read only at
    /// offsets is computed again at each of them, and its local would be
    /// dead).
    pub(super) fn locals_at(&self, site: &Site) -> Vec<(usize, String)> {
        let st = self.st;
        let here = vec![0; self.dims()];
        let mut kept: Vec<(usize, String)> = Vec::new();
        for k in (0..st.statements.len()).rev() {
            let local = site.local(st, k);
            let read = kept.iter().any(|(_, value)| mentions(value, &local));
            if read || st.fields[st.statements[k].target].role != Role::Temp {
                kept.push((k, self.computed(k, &here, site)));
            }
        }
        kept.reverse();
        kept
    }

    /// Statement `k`'s expression at `shift` from `site`'s cell.
    fn computed(&self, k: usize, shift: &[i64], site: &Site) -> String {
        let read = |a: &Access| self.step_read(k, a, shift, site);
        expr::print(
            &self.st.statements[k].expr,
            &CExpr {
                st: self.st,
                gpu: true,
                read: &read,
            },
        )
    }

    /// Statement `k`'s read `a` at `shift` from `site`'s cell.
    fn step_read(&self, k: usize, a: &Access, shift: &[i64], site: &Site) -> String {
        let (source, at) = reads::source(self.st, k, a, shift);
        let moved = Access {
            slot: a.slot,
            offset: at.clone(),
        };
        match source {
            Source::Memory => (site.memory)(&moved),
            Source::Local(j) => site.local(self.st, j),
            Source::Recompute { statement, held } => {
                let value = self.computed(statement, &at, site);
                if !held {
                    return format!("({value})");
                }
                let start = Access {
                    slot: Slot {
                        field: a.slot.field,
                        version: Version::Start,
                    },
                    offset: at.clone(),
                };
                format!(
                    "({} ? {value} : {})",
                    self.updated_at(&at, site),
                    (site.memory)(&start)
                )
            }
        }
    }

    /// Whether the cell at `at` from `site`'s (which is in the region the
    /// step updates) is in that region too: the condition along each axis
    /// it moves on.
    fn updated_at(&self, at: &[i64], site: &Site) -> String {
        let conditions: Vec<String> = at
            .iter()
            .enumerate()
            .filter(|&(_, &d)| d != 0)
            .map(|(a, &d)| {
                let (lo, hi) = self.bounds(a);
                if d < 0 {
                    format!("{} >= {lo}", (site.index)(a, d))
                } else {
                    format!("{} < {hi}", (site.index)(a, d))
                }
            })
            .collect();
        conditions.join(" && ")
    }
}
