//! The row groups of a `stream` kernel: per grid and row offset, the reads
//! a thread keeps a window of in registers. Both the register budget
//! ([`super::register_words`]) and the stream emitter count them.

use std::collections::BTreeSet;

use crate::ir::{Slot, Statement};

/// A row group of a `stream` block: grid `slot` read at row offset
/// `row` (the axes between the slowest and the contiguous one), at `reads`
/// (offsets along the slowest and the contiguous axis).
pub struct Row {
    /// The grid.
    pub slot: Slot,
    /// The offsets along the axes between the slowest and the contiguous one.
    pub row: Vec<i64>,
    /// The reads: offsets along the slowest and the contiguous axis.
    pub reads: Vec<(i64, i64)>,
}

impl Row {
    /// Planes one output reads from this row group, less one.
    pub fn depth(&self) -> usize {
        let (lo, hi) = self.planes();
        (hi - lo) as usize
    }

    /// Planes in a `stream` thread's window of this row group, with `chunk`
    /// cells per block and `c` per iteration: those one iteration reads, and
    /// where the window moves (`chunk > c`), as many again loaded ahead.
    pub fn window(&self, chunk: usize, c: usize) -> usize {
        self.depth() + if chunk > c { 2 * c } else { c }
    }

    /// The first and last plane offset read.
    pub fn planes(&self) -> (i64, i64) {
        let lo = self.reads.iter().map(|r| r.0).min().unwrap_or(0);
        let hi = self.reads.iter().map(|r| r.0).max().unwrap_or(0);
        (lo, hi)
    }

    /// The cells along the contiguous axis, from a thread's first, that its
    /// window of this row group holds: those its `v` cells read, and its own
    /// `v` cells, which are loaded as one vector whenever one of them is read
    /// (rows read only to one side, e.g. `u[1,1]` with `v = 2`, need the
    /// window to reach back to the vector's first cell).
    pub fn span(&self, v: usize) -> (i64, i64) {
        let lo = self.reads.iter().map(|r| r.1).min().unwrap_or(0);
        let hi = self.reads.iter().map(|r| r.1).max().unwrap_or(0);
        let v = v as i64;
        if v == 1 {
            (lo, hi)
        } else {
            (lo.min(0), (hi + v - 1).max(v - 1))
        }
    }

    /// The cells (from the thread's first) of plane offset `p` that its
    /// `c` x `v` outputs read.
    pub fn needed(&self, p: i64, c: usize, v: usize) -> Vec<i64> {
        let mut cells = BTreeSet::new();
        for &(z, x) in &self.reads {
            let j = p - z;
            if (0..c as i64).contains(&j) {
                cells.extend((0..v as i64).map(|k| k + x));
            }
        }
        cells.into_iter().collect()
    }
}

/// The row groups of a `stream` block for statement `s`: one per
/// grid and offset along the axes between the slowest and the contiguous one.
pub fn rows(s: &Statement, dims: usize) -> Vec<Row> {
    let mut reads = Vec::new();
    s.expr
        .for_each_read(&mut |a| reads.push((a.slot, a.offset.clone())));
    rows_of(reads, dims)
}

/// The row groups of a `stream` block that reads `reads` (grid and offset,
/// in the order met): a step's in one kernel ([`step::memory_reads`]).
///
/// [`step::memory_reads`]: crate::backend::step::memory_reads
pub fn rows_of(reads: impl IntoIterator<Item = (Slot, Vec<i64>)>, dims: usize) -> Vec<Row> {
    let last = dims - 1;
    let mut rows: Vec<Row> = Vec::new();
    for (slot, offset) in reads {
        let row = offset[1..last].to_vec();
        let read = (offset[0], offset[last]);
        match rows.iter_mut().find(|r| r.slot == slot && r.row == row) {
            Some(r) if !r.reads.contains(&read) => r.reads.push(read),
            Some(_) => {}
            None => rows.push(Row {
                slot,
                row,
                reads: vec![read],
            }),
        }
    }
    rows
}
