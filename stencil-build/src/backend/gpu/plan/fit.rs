//! Which plans are valid for a stencil on a dialect: the shared memory a
//! block takes, the registers a `stream` thread holds, the vectors a load
//! moves; [`fit`] shrinks a default block to fit or says what to change.

use super::rows::{Row, rows, rows_of};
use super::{Dialect, Plan, temporal};
use crate::ir::{Statement, Stencil, Strategy};

/// Static shared memory one block may use: CUDA's limit without opting in to
/// more (AMD's LDS holds 64 KiB).
pub const SHARED_BUDGET: usize = 48 * 1024;

/// Bytes of shared memory one block of `plan` needs for the most demanding
/// statement of `st`: `tiled` stages a tile plus halo of every grid read at
/// non-zero offsets; the other strategies use none.
pub fn shared_bytes(st: &Stencil, plan: &Plan) -> usize {
    let per_statement = |s: &Statement| -> usize {
        let mut cells = 0;
        for slot in s.slots() {
            let mut reach = vec![0usize; st.dims()];
            s.expr.for_each_read(&mut |a| {
                if a.slot == slot {
                    for (r, d) in reach.iter_mut().zip(&a.offset) {
                        *r = (*r).max(d.unsigned_abs() as usize);
                    }
                }
            });
            if plan.strategy == Strategy::Tiled && reach.iter().any(|&r| r > 0) {
                cells += (0..st.dims())
                    .map(|a| plan.block[a] + 2 * reach[a])
                    .product::<usize>();
            }
        }
        cells * st.dtype.size()
    };
    st.statements.iter().map(per_statement).max().unwrap_or(0)
}

/// Makes `plan` fit [`SHARED_BUDGET`]: a default block is halved along its
/// slower axes, then along the contiguous one, until it fits; a block the
/// spec gave (`explicit`) that does not fit, or a default one that does not
/// at one thread, is an error saying what to change.
pub fn fit(mut plan: Plan, explicit: bool, st: &Stencil, d: &Dialect) -> Result<Plan, String> {
    if plan.strategy.fuses_steps() {
        temporal::check(&plan, st, d)?;
        return Ok(plan);
    }
    if plan.strategy == Strategy::Stream && !plan.chosen {
        windows_fit(&plan, st, d)?;
    }
    let vector_bytes = plan.vector * st.dtype.size();
    if vector_bytes > 16 {
        return Err(format!(
            "`vector = {}` makes vectors of {vector_bytes} bytes for `{}`, more than the 16 a load can move; \
             set `vector = {}` or less in [tiling.{}]",
            plan.vector,
            st.name,
            16 / st.dtype.size(),
            d.name
        ));
    }
    loop {
        let bytes = shared_bytes(st, &plan);
        if bytes <= SHARED_BUDGET {
            return Ok(plan);
        }
        // The contiguous axis, which coalesces the loads, is halved last.
        let shrink = (0..plan.block.len()).find(|&a| plan.block[a] > 1);
        match shrink {
            Some(a) if !explicit => plan.block[a] /= 2,
            _ => {
                let change = if explicit {
                    "set a smaller `block` or another `strategy`"
                } else {
                    "its tiles overflow even at one thread a block: set another `strategy`"
                };
                return Err(format!(
                    "strategy `{}` with blocks of {:?} threads needs {} KiB of shared memory per block for `{}`, more than the {} KiB budget; \
                     {change} in [tiling.{}]",
                    plan.strategy.name(),
                    plan.block,
                    bytes.div_ceil(1024),
                    st.name,
                    SHARED_BUDGET / 1024,
                    d.name
                ));
            }
        }
    }
}

/// Most registers of values the windows of a `stream` plan a spec names
/// may take at one cell a thread: from the suite, the corpus and the
/// tests' 3-D specs, ptxas (13.0, sm_90) kept windows of up to 300 words
/// in registers (AN5D's box of radius 2 in f64: 108 bytes spilled, 0.86x
/// `naive` on the H200); from 392 (its box of radius 3 in f32) it moved
/// them to local memory, 2.8 KB to 13 KB a thread, and the boxes of radius
/// 3 and 4 ran 9x-21x slower than `naive`.
pub const STREAM_WORDS: usize = 384;

/// Whether `stream` can hold the windows of `st` at all: a plan the spec
/// named whose windows at one cell a thread take more than
/// [`STREAM_WORDS`] is refused, saying to use `naive` (which reads its
/// neighbours from L1 and holds none) or `auto`.
fn windows_fit(plan: &Plan, st: &Stencil, d: &Dialect) -> Result<(), String> {
    let words = register_words(st, plan.chunk, 1, 1);
    if words <= STREAM_WORDS {
        return Ok(());
    }
    Err(format!(
        "`stream` would keep windows of {words} registers of `{}`'s values a thread even at one cell a thread (every plane \
         and row a cell reads), and a thread has {}: above {STREAM_WORDS} they spill to local memory; set `strategy = \"naive\"`, \
         which reads neighbours from L1 and holds none, or leave `strategy` to `auto` in [tiling.{}]",
        st.name,
        super::model::SPILL_WORDS,
        d.name
    ))
}

/// 32-bit registers a `stream` thread holds values in, for the most
/// demanding statement of `st`, with `c` x `v` cells per thread per iteration
/// and `chunk` cells per block along the slowest axis.
pub fn register_words(st: &Stencil, chunk: usize, c: usize, v: usize) -> usize {
    st.statements
        .iter()
        .map(|s| window_words(st, &rows(s, st.dims()), (chunk, c, v)))
        .max()
        .unwrap_or(0)
}

/// [`register_words`] of a `stream` thread that computes every statement of
/// the step ([`step::one_kernel`](crate::backend::gpu::step::one_kernel)):
/// its windows hold every value from memory that the step and its
/// recomputations read.
pub fn step_register_words(st: &Stencil, chunk: usize, c: usize, v: usize) -> usize {
    let rows = rows_of(crate::backend::step::memory_reads(st), st.dims());
    window_words(st, &rows, (chunk, c, v))
}

/// 32-bit registers the windows of `rows` take.
fn window_words(st: &Stencil, rows: &[Row], (chunk, c, v): (usize, usize, usize)) -> usize {
    let words = st.dtype.size() / 4;
    rows.iter()
        .map(|r| {
            let (x0, x1) = r.span(v);
            r.window(chunk, c) * (x1 - x0 + 1) as usize * words
        })
        .sum()
}
