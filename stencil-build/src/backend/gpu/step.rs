//! One kernel for a step of several statements: each thread computes every
//! statement of the step at its cell and writes each state field it
//! updates, so that no statement's result crosses memory to be read by the
//! next one.
//!
//! A later statement's read of a value the step computed finds it where
//! [`crate::backend::step`] says: the thread's local at its own cell, the
//! producer's expression computed again elsewhere, and a held frame's value
//! from the field's buffer (the kernel asks whether the cell is in the
//! region). The regions are `analysis`'s: a temporary is computed wherever
//! its readers read it, so its recomputation needs no such question.
//!
//! Recomputing costs flops and loads: the kernel is taken where the step
//! computes at most [`EXTRA_FLOPS_PER_KERNEL`] flops a cell more per kernel
//! it saves, and in 2-D and 3-D loads at most
//! [`RECOMPUTED_LOADS_PER_KERNEL`] more. A statement's kernel of its own
//! writes its result and the next one reads it at least once, two trips
//! through memory: 16 bytes a cell in f64, about 125 flops at the H200's
//! balance (33 TFlop/s over 4.25 TB/s).

use crate::analysis::flops;
use crate::backend::step::{Source, memory_reads, reach, walk_step};
use crate::ir::{Role, Slot, Stencil, Strategy};

use super::plan::model::WIDE_REGISTER_WORDS;
use super::plan::{Plan, rows, rows_of, step_register_words};

/// The most flops a cell may spend on recomputing values, per kernel of a
/// statement that the step's one kernel replaces: half the worth of one
/// f64 value's two trips through memory (see the module's comment).
pub const EXTRA_FLOPS_PER_KERNEL: usize = 64;

/// The most loads from memory a cell may spend on recomputing values in
/// 2-D and 3-D, per kernel of a statement that the step's one kernel
/// replaces. Each load of another row or plane is a sector the block
/// fetches again from L2. On the H200 (100 steps, 16384^2 and 512^3,
/// against a kernel a statement measured the day before, whose unchanged
/// rows moved at most 1.2%; design notes, "One kernel a step") steps that
/// recomputed 0 to 14 loads per kernel saved ran 1.03x-3.1x as fast in one
/// kernel (flux2d_t2, flux2d_t3, flux3d_t3, random_03, random_05,
/// random_14, random_16, random_21), and those of 21 to 28 0.80x-0.92x
/// (random_09, random_10, flux3d_t2 in f32, random_06). In 1-D the
/// recomputed loads are of lines the warp reads anyway: 1.8x-2.0x with 16
/// and 20 (random_18, random_01; with threads of 16 bytes of cells, new
/// the same day).
pub const RECOMPUTED_LOADS_PER_KERNEL: usize = 16;

/// Whether `plan` computes the statements of `st` in one kernel a step:
/// `naive`'s plans of a stencil that [`fits`], and `stream`'s in 2-D and
/// 3-D where the statements share rows ([`shares_rows`]), recomputing costs
/// no more flops than [`fits`] allows, no value a frame holds is computed
/// again from cells past it (`recomputes_past_frames`), and the thread's
/// windows of every value the step reads from memory (which hold what the
/// recomputations read) fit [`STREAM_WORDS`]; else each statement marches
/// planes of its own.
pub fn one_kernel(st: &Stencil, plan: &Plan) -> bool {
    match plan.strategy {
        Strategy::Naive => fits(st),
        Strategy::Stream => {
            st.dims() > 1
                && shares_rows(st)
                && recomputes_within_budget(st)
                && !recomputes_past_frames(st)
                && step_register_words(st, plan.chunk, plan.coarsen, plan.vector) <= STREAM_WORDS
        }
        _ => false,
    }
}

/// Whether a `stream` thread computing the whole step reads fewer lines a
/// cell than its kernels a statement do together: rows of a plane (each a
/// line of sectors from L2; [`rows_of`]) and fields stored. Where the
/// statements share no rows, the one kernel saves only memory traffic while
/// its windows (the kernels' together) cost occupancy, and the kernels are
/// bound by L2 rather than memory. On the H100 (512^3, 100 steps, in turn
/// in one lease; design notes, "A step in one `stream` kernel"),
/// reaction3d (6 rows and 2 stores against 10 and 3) ran 2.08x its
/// kernels a statement in f32 and 2.01x in f64; random_14 (11 rows and 2
/// stores either way, memory 5 values a cell against 7) 0.92x.
pub fn shares_rows(st: &Stencil) -> bool {
    let one = stream_rows(st) + grids(st).outputs.len();
    let apart: usize = st
        .statements
        .iter()
        .map(|s| rows(s, st.dims()).len() + 1)
        .sum();
    one < apart
}

/// The most values (32-bit words) the windows of a `stream` thread that
/// computes a whole step may hold: those of `auto`'s `stream` threads of
/// vectors ([`WIDE_REGISTER_WORDS`]), the rest of the 255 registers going to
/// addresses and the statements' values.
pub const STREAM_WORDS: usize = WIDE_REGISTER_WORDS;

/// Whether the step computes again a state field's value where a fixed
/// boundary's frame may hold it (`Source::Recompute { held: true }`) and
/// its reads, recomputations' included, reach further than the frame is
/// wide: a cell in the region then computes the value from cells past the
/// grid's edge where it lies in the frame, and a `stream` thread loads its
/// windows before it asks whether it does. Where the reach stays within
/// the frame (a staggered grid's pressure reading new velocities one cell
/// back), every window of a cell in the region lies on the grid.
fn recomputes_past_frames(st: &Stencil) -> bool {
    let mut held = false;
    walk_step(st, &mut |_| true, &mut |r| {
        held |= matches!(r.source, Source::Recompute { held: true, .. });
    });
    if !held {
        return false;
    }
    let reach = reach(st);
    let an = crate::analysis::analyse(st);
    let within = an
        .statements
        .iter()
        .all(|info| (0..st.dims()).all(|a| info.edges[a].iter().all(|&edge| edge >= reach[a])));
    !within
}

/// Whether the statements of `st`, several, go in one kernel a step:
/// recomputing costs at most [`EXTRA_FLOPS_PER_KERNEL`] a cell per kernel
/// saved, and in 2-D and 3-D at most [`RECOMPUTED_LOADS_PER_KERNEL`] loads.
pub fn fits(st: &Stencil) -> bool {
    if !recomputes_within_budget(st) {
        return false;
    }
    // Each read of a held frame, and every read from memory of a value
    // computed again.
    let mut loads = 0;
    walk_step(st, &mut |_| true, &mut |r| {
        loads += usize::from(match r.source {
            Source::Memory => r.recomputed,
            Source::Local(_) => false,
            Source::Recompute { held, .. } => held,
        });
    });
    let saved = st.statements.len() - 1;
    st.dims() == 1 || loads <= RECOMPUTED_LOADS_PER_KERNEL * saved
}

/// Whether `st` has several statements that may share a kernel, and
/// recomputing the values its statements read elsewhere than at the cell
/// costs at most [`EXTRA_FLOPS_PER_KERNEL`] a cell per kernel saved: all
/// [`fits`] asks of a `stream` kernel, whose windows hold what the
/// recomputations read.
fn recomputes_within_budget(st: &Stencil) -> bool {
    let saved = st.statements.len().saturating_sub(1);
    // A mixed boundary's frame is a pass of its own after each statement's
    // kernel, and a region's statement computes part of its field: the
    // statements stay apart.
    if saved == 0 || matches!(st.boundary, crate::ir::Boundary::Mixed(_)) || st.has_regions() {
        return false;
    }
    let alone: usize = st.statements.iter().map(|s| flops(&s.expr)).sum();
    let mut budget = alone + EXTRA_FLOPS_PER_KERNEL * saved;
    // Each expression computed takes its flops; the walk stops once they
    // run out, before recomputations nested deeper multiply.
    let mut spend = |k: usize| match budget.checked_sub(flops(&st.statements[k].expr)) {
        Some(rest) => {
            budget = rest;
            true
        }
        None => false,
    };
    walk_step(st, &mut spend, &mut |_| {})
}

/// The row groups a `stream` thread computing the whole step keeps windows
/// of ([`rows_of`] the reads it makes from memory): the rows it loads a
/// plane.
pub fn stream_rows(st: &Stencil) -> usize {
    rows_of(memory_reads(st), st.dims()).len()
}

/// Values a cell moves through memory each step where every statement is a
/// kernel of its own: each buffer a statement reads, and the one it writes.
pub fn kernels_traffic(st: &Stencil) -> usize {
    st.statements.iter().map(|s| s.slots().len() + 1).sum()
}

/// The grids of the step's kernel, in its parameters' order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grids {
    /// The state fields the step writes, in the order of their statements.
    pub outputs: Vec<usize>,
    /// The buffers it reads: every value from before the step that a
    /// statement or a recomputation reads, and the held frames' fields.
    pub slots: Vec<Slot>,
    /// The run-time parameters its statements use.
    pub params: Vec<usize>,
}

/// The name of the step kernel's parameter that writes field `f`.
pub fn output_name(st: &Stencil, f: usize) -> String {
    format!("out_{}", st.fields[f].name)
}

/// The grids of `st`'s step kernel ([`one_kernel`]).
pub fn grids(st: &Stencil) -> Grids {
    let mut outputs = Vec::new();
    for s in &st.statements {
        if st.fields[s.target].role != Role::Temp && !outputs.contains(&s.target) {
            outputs.push(s.target);
        }
    }
    let mut slots: Vec<Slot> = memory_reads(st).into_iter().map(|(slot, _)| slot).collect();
    slots.sort();
    slots.dedup();
    Grids {
        outputs,
        slots,
        params: st.params_used(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::gpu::plan::Plan;
    use crate::backend::gpu::tests::lowered;
    use crate::backend::step::tests::TWO_STATES;

    fn naive() -> Plan {
        Plan {
            strategy: Strategy::Naive,
            block: vec![256],
            chunk: 1,
            coarsen: 1,
            vector: 1,
            time_block: 1,
            occupancy: None,
            chosen: true,
        }
    }

    #[test]
    fn a_step_whose_reads_are_local_or_held_is_one_kernel() {
        let st = lowered(TWO_STATES.into());
        let g = grids(&st);
        assert_eq!(g.outputs, vec![0, 1]);
        // u's own buffer is read for its frame, v's for both statements.
        assert_eq!(g.slots.len(), 2);
        assert!(one_kernel(&st, &naive()));
    }

    #[test]
    fn recomputed_loads_count_in_2d_not_in_1d() {
        // v reads u at 6 offsets besides its cell, each 3 loads of u: 18 in
        // all, over 16 for the one kernel saved.
        let reads = "v[0] + u[-1] + u[1] + u[-2] + u[2] + u[-3] + u[3]";
        let line = TWO_STATES.replace("v[0] + u[-1] - u[1] + u[0]", reads);
        assert!(fits(&lowered(line.clone())));
        let plane = line
            .replace("[\"x\"]", "[\"y\", \"x\"]")
            .replace("u[0]", "u[0,0]")
            .replace("v[-1]", "v[0,-1]")
            .replace("v[1]", "v[0,1]")
            .replace("v[0]", "v[0,0]");
        let plane = (1..=3).fold(plane, |p, d| {
            p.replace(&format!("u[-{d}]"), &format!("u[-{d},0]"))
                .replace(&format!("u[{d}]"), &format!("u[{d},0]"))
        });
        assert!(!fits(&lowered(plane)));
    }

    #[test]
    fn recomputing_past_the_budget_keeps_a_kernel_a_statement() {
        // v reads u at two offsets besides its own cell: 5 flops of u each
        // are under the budget, 150 are not.
        let long: Vec<String> = (0..50)
            .map(|k| format!("u[0] / (v[0] + {}.0)", k + 1))
            .collect();
        let text = TWO_STATES.replace("0.5 * u[0]", &long.join(" + "));
        assert!(!one_kernel(&lowered(text), &naive()));
        let stream = Plan {
            strategy: Strategy::Stream,
            ..naive()
        };
        assert!(!one_kernel(&lowered(TWO_STATES.into()), &stream));
    }
}
