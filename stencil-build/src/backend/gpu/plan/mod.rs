//! The plan space: what a plan is ([`Plan`], a strategy with every
//! parameter settled), which plans are valid for a stencil on a dialect
//! ([`mod@fit`]), how `auto` picks one ([`model`]), the other kernels a plan's
//! file carries ([`companions`]) and the plans around a point
//! ([`mod@candidates`]). Plans are data: the emitters (`super::emit`) take a
//! settled plan and never decide one.

mod candidates;
pub mod companions;
pub mod fit;
pub mod model;
mod rows;
pub mod temporal;
pub mod tensor;

pub use candidates::{candidates, sweep};
pub use companions::{Companions, naive_plan, small_planes_plan, step_plan};
pub use fit::{SHARED_BUDGET, fit, register_words, step_register_words};
pub use model::{SMALL_PLANES, small_step_cells};
pub use rows::{Row, rows, rows_of};
pub use temporal::{fused_leapfrog, splits_steps};
pub use tensor::reads_one_grid;

use super::Dialect;
use crate::ir::{GpuTiling, Stencil, Strategy};

/// A strategy with every choice made: what the kernels are generated from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// `Naive`, `Tiled`, `Stream` or `Temporal`.
    pub strategy: Strategy,
    /// Threads per block per axis, in axis order (`block[0] == 1` for
    /// `stream` and `temporal`).
    pub block: Vec<usize>,
    /// Cells of the slowest axis per block (`stream`, `temporal`; 1 otherwise).
    pub chunk: usize,
    /// Cells of the slowest axis each `stream` thread computes per iteration;
    /// rows of the middle axis of a 3-D `temporal` thread; cells of a 1-D
    /// `naive` thread ([`model::row_cells`]; 1 otherwise).
    pub coarsen: usize,
    /// Cells of the contiguous axis each `stream` thread computes, loaded and
    /// stored as one vector; cells of a 2-D `temporal` lane (1 otherwise).
    pub vector: usize,
    /// Steps fused per launch (`temporal`; 1 otherwise).
    pub time_block: usize,
    /// The most blocks per multiprocessor a `persistent` launch keeps
    /// resident (`None`: as many as fit, and for the other strategies).
    pub occupancy: Option<usize>,
    /// `auto` chose this plan (the spec did not name the strategy): see
    /// [`Self::small_grids`], [`Self::measures`] and [`naive_plan`].
    pub chosen: bool,
}

impl Plan {
    /// `auto`'s single steps that run another kernel on small grids,
    /// `stream` in 16-byte vectors of blocks of `[1, 2, 64]` threads
    /// marching 4 planes ([`small_plan`](crate::backend::gpu::plan::companions::small_plan)): `tensor`, on the grids where its
    /// blocks would compute too little ([`SMALL_GRID_EFFICIENCY`](crate::backend::gpu::plan::model::SMALL_GRID_EFFICIENCY)),
    /// and [`Self::vector_planes`], on planes of fewer than [`SMALL_PLANES`]
    /// cells. False for the other plans and for strategies named in the
    /// spec.
    pub fn small_grids(&self) -> bool {
        self.chosen && (self.strategy == Strategy::Tensor || self.vector_planes())
    }

    /// `auto`'s single steps of [`planes_stream`](crate::backend::gpu::plan::model::planes_stream): `stream` of 16-byte
    /// vectors marching chunks of [`crate::ir::STREAM_CHUNK`] planes (its
    /// other `stream` plans march 2 or 4 planes, or compute one cell a
    /// thread).
    pub fn vector_planes(&self) -> bool {
        self.chosen
            && self.strategy == Strategy::Stream
            && self.vector > 1
            && self.chunk == crate::ir::STREAM_CHUNK
    }

    /// A fused strategy (`temporal` of several steps a launch, `persistent`)
    /// as `auto`'s choice: each session times a fused launch against as many
    /// launches of the single-step kernel on its grids, and keeps the faster
    /// (the generated Rust's `Fusion::Measure`). On the H100
    /// neither won on every grid: fused launches lost up to 9x on small
    /// grids and won up to 2.7x on large ones, the crossing depending on the
    /// stencil. False for single-step
    /// plans and for strategies named in the spec.
    pub fn measures(&self) -> bool {
        self.chosen && self.fuses_steps()
    }

    /// Whether a launch runs several steps: `temporal` of more than one step
    /// a launch, and `persistent`.
    pub fn fuses_steps(&self) -> bool {
        match self.strategy {
            Strategy::Temporal => self.time_block > 1,
            Strategy::Persistent => true,
            _ => false,
        }
    }

    /// Threads per block.
    pub fn threads(&self) -> usize {
        self.block.iter().product()
    }

    /// Whether its blocks march along the slowest axis (`stream`, `tensor`,
    /// the fused strategies), which `chunk` counts the cells of.
    pub fn marches(&self) -> bool {
        self.strategy.marches()
    }

    /// The tiling that names this plan, every key its strategy takes given:
    /// what a spec writes to get it ([`Self::section`]).
    pub fn tiling(&self) -> GpuTiling {
        let fused = self.strategy.fuses_steps();
        let dims = self.block.len();
        let coarsen = self.strategy == Strategy::Stream
            || fused && dims == 3
            || self.strategy == Strategy::Naive && (dims == 1 || self.coarsen > 1);
        let vector = self.strategy == Strategy::Stream
            || self.strategy == Strategy::Naive
                && dims > 1
                && (self.coarsen == 1 || self.vector > 1)
            || self.strategy == Strategy::Temporal
            || self.strategy == Strategy::Persistent && dims != 3;
        GpuTiling {
            strategy: self.strategy,
            block: (self.strategy != Strategy::Tensor).then(|| self.block.clone()),
            time_block: fused.then_some(self.time_block),
            coarsen: coarsen.then_some(self.coarsen),
            chunk: self.marches().then_some(self.chunk),
            vector: vector.then_some(self.vector),
            occupancy: self.occupancy,
        }
    }

    /// The `[tiling.<backend>]` section of a spec that asks for this plan.
    pub fn section(&self, backend: &str) -> String {
        let t = self.tiling();
        let mut text = format!("[tiling.{backend}]\nstrategy = \"{}\"\n", t.strategy.name());
        if let Some(block) = &t.block {
            text += &format!("block = {block:?}\n");
        }
        let keys = [
            ("time_block", t.time_block),
            ("coarsen", t.coarsen),
            ("chunk", t.chunk),
            ("vector", t.vector),
            ("occupancy", t.occupancy),
        ];
        for (key, value) in keys {
            if let Some(v) = value {
                text += &format!("{key} = {v}\n");
            }
        }
        text
    }
}

/// Settles `auto` and the defaults with the documented model, which follows
/// what measured fastest on the H100:
///
/// - `auto` is single-pass `stream` where it beat `naive` there: 2-D f32
///   `coarsen = chunk = 4`, `vector = 4`, blocks `[1, 64]` (90% of the
///   cudaMemcpy bound, 1.6x naive); 2-D f64 `coarsen = chunk = 4`, blocks
///   `[1, 256]` (98%, 1.1x); 3-D `coarsen = chunk = 2`, 16-byte vectors,
///   blocks `[1, 2, 64]`, 32-bit indices. Its values sit in registers, so a
///   stencil whose footprint needs more than [`AUTO_REGISTER_WORDS`](crate::backend::gpu::plan::model::AUTO_REGISTER_WORDS) of them
///   per thread (wide or multi-grid stencils) gets [`wide_stream`](crate::backend::gpu::plan::model::wide_stream) instead
///   (one update), `naive` otherwise, as do 1-D stencils;
/// - otherwise blocks hold 256 threads, the contiguous axis a multiple of the
///   warp (32 lanes for CUDA, 64 for HIP): `[256]`, `[8, 32]`, `[2, 4, 32]`;
///   a `naive` thread computes 16 bytes of cells of the contiguous axis
///   (1-D: `coarsen`; 2-D and 3-D: `vector`, unless it computes a column of
///   the slowest axis, `coarsen`), [`model::row_cells`];
///   `stream` blocks are `[1, 256]` (2-D) or `[1, 8, 32]` (3-D) and march 64
///   cells, one per iteration, one per thread along the contiguous axis;
/// - on CUDA, `auto`'s single step is `tensor` for f64 3-D stencils whose
///   in-plane sum of one grid matrix products can take, reaching 4 cells
///   or more ([`auto_tensor`](crate::backend::gpu::plan::model::auto_tensor),
///   [`TENSOR_MIN_REACH`](crate::backend::gpu::plan::model::TENSOR_MIN_REACH));
/// - `auto` is `temporal` (with [`temporal::defaults`]) where
///   [`auto_fuses`](crate::backend::gpu::plan::model::auto_fuses) says the steps fuse and it measured faster,
///   and `persistent` where [`auto_persists`](crate::backend::gpu::plan::model::auto_persists) says that one launch
///   of every step measured faster still, or, of 2 steps, where
///   [`coefficient_planes`](crate::backend::gpu::plan::model::coefficient_planes)
///   says so for f64 updates reading two grids or more besides their own
///   field (CUDA), on the suite's and the corpus's grids; on smaller
///   ones single steps can win, so each session of such a plan times the
///   two on its own grids and keeps the faster ([`Plan::measures`]).
///
/// `persistent` takes `temporal`'s tiling (the same model fills in what the
/// spec leaves out).
pub fn resolve(t: &GpuTiling, st: &Stencil, d: &Dialect) -> Result<Plan, String> {
    let dims = st.dims();
    let chosen = t.strategy == Strategy::Auto;
    let model;
    let t = if chosen {
        model = model::auto(st, d);
        &model
    } else {
        t
    };
    let strategy = match t.strategy {
        Strategy::Temporal => {
            return Ok(Plan {
                chosen,
                ..temporal::defaults(t, st, d)
            });
        }
        Strategy::Tensor => {
            return Ok(Plan {
                strategy: Strategy::Tensor,
                block: vec![1, tensor::THREADS / d.warp, d.warp],
                chunk: t.chunk.unwrap_or(crate::ir::TENSOR_CHUNK),
                coarsen: 1,
                vector: 1,
                time_block: 1,
                occupancy: None,
                chosen,
            });
        }
        Strategy::Persistent => {
            return Ok(Plan {
                strategy: Strategy::Persistent,
                occupancy: t.occupancy,
                chosen,
                ..temporal::defaults(t, st, d)
            });
        }
        s => s,
    };
    let block = t
        .block
        .clone()
        .unwrap_or_else(|| default_block(strategy, dims, d.warp));
    let (chunk, coarsen, vector) = if strategy == Strategy::Stream {
        (
            t.chunk.unwrap_or(crate::ir::STREAM_CHUNK),
            t.coarsen.unwrap_or(1),
            t.vector.unwrap_or(1),
        )
    } else if strategy == Strategy::Naive {
        let cells = if dims == 1 { model::row_cells(st) } else { 1 };
        let coarsen = t.coarsen.unwrap_or(cells);
        let vector = match (dims, coarsen) {
            (2.., 1) => t.vector.unwrap_or(model::row_cells(st)),
            _ => t.vector.unwrap_or(1),
        };
        (1, coarsen, vector)
    } else {
        (1, 1, 1)
    };
    Ok(Plan {
        strategy,
        block,
        chunk,
        coarsen,
        vector,
        time_block: 1,
        occupancy: None,
        chosen,
    })
}

fn default_block(strategy: Strategy, dims: usize, warp: usize) -> Vec<usize> {
    let rows = 256 / warp;
    match (strategy, dims) {
        (_, 1) => vec![256],
        (Strategy::Stream, 2) => vec![1, 256],
        (Strategy::Stream, _) => vec![1, rows, warp],
        (_, 2) => vec![rows, warp],
        _ => vec![2, rows / 2, warp],
    }
}
