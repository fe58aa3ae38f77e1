//! A step of several statements computed together at each cell (the GPU's
//! one kernel a step, the OpenMP backend's one loop nest): where each read
//! of a statement finds its value, and what the step as a whole reads.
//!
//! A later statement's read of a value the step computed (a temporary, or a
//! state field after its update) finds it in three ways ([`Source`]): at the
//! cell itself it is the value computed there; elsewhere it is computed
//! again, its producer's expression shifted to the read's offset; and with
//! a fixed boundary a state field's value in the frame, where its statement
//! does not update it, is the value it had (`Source::Recompute { held:
//! true }`). [`walk_step`] visits every read of the step, recomputations'
//! included, depth first; the backends' rules for taking such a step, and
//! their emitters, ask it what they need.

use std::collections::BTreeSet;

use crate::ir::{Access, Boundary, Role, Slot, Stencil, Version};

/// Where a read of a statement finds its value in a step computed at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// In memory: a value from before the step.
    Memory,
    /// The local of statement `.0`, computed at this very cell.
    Local(usize),
    /// Computed again: statement `statement`'s expression at the read's
    /// cell; `held`: a state field with a fixed boundary, whose frame keeps
    /// the value it had.
    Recompute {
        /// The statement that computes the value.
        statement: usize,
        /// Whether the read's cell may be in the frame.
        held: bool,
    },
}

/// Where statement `reader`'s read `a`, made at `shift` from the cell
/// computed, finds its value, and the read's offset from that cell.
pub fn source(st: &Stencil, reader: usize, a: &Access, shift: &[i64]) -> (Source, Vec<i64>) {
    let at: Vec<i64> = a.offset.iter().zip(shift).map(|(o, s)| o + s).collect();
    if a.slot.version != Version::Updated {
        return (Source::Memory, at);
    }
    let producer = st
        .producer(reader, a.slot.field)
        .expect("a checked stencil reads an updated value after its statement");
    let source = if at.iter().all(|&d| d == 0) {
        Source::Local(producer)
    } else {
        Source::Recompute {
            statement: producer,
            held: st.fields[a.slot.field].role != Role::Temp && st.boundary == Boundary::Fixed,
        }
    };
    (source, at)
}

/// A read of the step, as [`walk_step`] meets it.
pub struct Read<'a> {
    /// The read as its statement writes it.
    pub access: &'a Access,
    /// Where the step finds its value.
    pub source: Source,
    /// Its offset from the cell computed.
    pub at: Vec<i64>,
    /// Whether the expression it is in is a value computed again.
    pub recomputed: bool,
}

/// Walks the expressions the step computes at a cell: every statement's
/// there and, depth first, each value it computes again.
/// `enter` gets each expression's statement before its reads go to `read`;
/// where it answers false the walk stops, and answers false.
pub fn walk_step(
    st: &Stencil,
    enter: &mut dyn FnMut(usize) -> bool,
    read: &mut dyn FnMut(&Read),
) -> bool {
    let here = vec![0; st.dims()];
    (0..st.statements.len()).all(|k| walk(st, k, &here, false, enter, read))
}

/// [`walk_step`] from statement `k`'s expression at `shift`.
fn walk(
    st: &Stencil,
    k: usize,
    shift: &[i64],
    recomputed: bool,
    enter: &mut dyn FnMut(usize) -> bool,
    read: &mut dyn FnMut(&Read),
) -> bool {
    if !enter(k) {
        return false;
    }
    let mut again = Vec::new();
    st.statements[k].expr.for_each_read(&mut |access| {
        let (source, at) = source(st, k, access, shift);
        if let Source::Recompute { statement, .. } = source {
            again.push((statement, at.clone()));
        }
        read(&Read {
            access,
            source,
            at,
            recomputed,
        });
    });
    again
        .into_iter()
        .all(|(j, at)| walk(st, j, &at, true, enter, read))
}

/// Rows of the grids the step reads from memory, its recomputations'
/// included: the distinct buffers at distinct offsets along every axis but
/// the contiguous one, each a stream of lines the step loads (a GPU
/// block's from L2, a CPU loop's from cache or memory).
pub fn rows_read(st: &Stencil) -> usize {
    let mut rows = BTreeSet::new();
    let lines = st.dims() - 1;
    walk_step(st, &mut |_| true, &mut |r| {
        if r.source == Source::Memory {
            rows.insert((r.access.slot, r.at[..lines].to_vec()));
        }
    });
    rows.len()
}

/// The reads `st`'s step makes from memory, each buffer with its offset
/// from the cell computed: every value from before the step that a
/// statement or a recomputation reads, and a held frame's value where a
/// recomputation's cell may lie in the frame.
pub fn memory_reads(st: &Stencil) -> Vec<(Slot, Vec<i64>)> {
    let mut reads = Vec::new();
    walk_step(st, &mut |_| true, &mut |r| match r.source {
        Source::Memory => reads.push((r.access.slot, r.at.clone())),
        Source::Recompute { held: true, .. } => {
            let start = Slot {
                field: r.access.slot.field,
                version: Version::Start,
            };
            reads.push((start, r.at.clone()));
        }
        _ => {}
    });
    reads
}

/// The largest |offset| per axis of the reads of `st`'s step, its
/// recomputations' included.
pub fn reach(st: &Stencil) -> Vec<usize> {
    let mut reach = vec![0; st.dims()];
    walk_step(st, &mut |_| true, &mut |r| {
        for (most, d) in reach.iter_mut().zip(&r.at) {
            *most = (*most).max(d.unsigned_abs() as usize);
        }
    });
    reach
}

#[cfg(test)]
pub(in crate::backend) mod tests {
    use super::*;
    use crate::backend::gpu::tests::lowered;

    /// Two state fields on a fixed 1-D grid, `v` reading `u`'s new value
    /// at its cell and a cell either side.
    pub(in crate::backend) const TWO_STATES: &str = r#"
[stencil]
name = "pair"
dtype = "f64"
axes = ["x"]
[fields]
u = { role = "state" }
v = { role = "state" }
[[update]]
target = "u"
expr = "0.5 * u[0] + 0.25 * (v[-1] + v[1])"
[[update]]
target = "v"
expr = "v[0] + u[-1] - u[1] + u[0]"
[boundary]
kind = "fixed"
"#;

    #[test]
    fn an_updated_field_is_local_at_the_cell_and_held_in_the_frame_elsewhere() {
        let st = lowered(TWO_STATES.into());
        let mut reads = Vec::new();
        st.statements[1]
            .expr
            .for_each_read(&mut |a| reads.push(source(&st, 1, a, &[0])));
        assert!(reads.contains(&(Source::Memory, vec![0])));
        assert!(reads.contains(&(Source::Local(0), vec![0])));
        let held = Source::Recompute {
            statement: 0,
            held: true,
        };
        assert!(reads.contains(&(held, vec![-1])));
    }

    #[test]
    fn the_reach_and_the_rows_count_the_recomputed_reads() {
        // v reads u at -1 and 1, whose own reads of v reach one further.
        let st = lowered(TWO_STATES.into());
        assert_eq!(reach(&st), vec![2]);
        // In 2-D along y: u and v at y = -1, 0, 1 and the recomputations'
        // v at y = -2 and 2 (1-D has the one row of each buffer).
        assert_eq!(rows_read(&st), 2);
        let plane = TWO_STATES
            .replace("[\"x\"]", "[\"y\", \"x\"]")
            .replace("[0]", "[0,0]")
            .replace("[-1]", "[-1,0]")
            .replace("[1]", "[1,0]");
        assert_eq!(rows_read(&lowered(plane)), 8);
    }
}
