//! Where each rank's cells go: its layout and zeroed box for a split's
//! weights, and the weights of a split by measured speeds.

use std::time::Instant;

use mpi::collective::CommunicatorCollectives;
use mpi::datatype::Equivalence;
use mpi::topology::Communicator;

use super::store::Store;
use super::{DistributedError, Layout, Stencil};

/// What a split needs beside the weights: the global shape, the process
/// grid, the halo and whether it wraps.
pub struct Partition<'a> {
    /// The global shape.
    pub global: &'a [usize],
    /// Processes along each axis.
    pub dims: &'a [usize],
    /// The halo per axis.
    pub halo: &'a [usize],
    /// Whether the grid wraps (a periodic boundary).
    pub periodic: bool,
}

impl Partition<'_> {
    /// Rank `rank`'s layout and its zeroed box, of `ranks`; `TooSmall`
    /// where any rank's box would be (so that every rank fails alike).
    pub fn place<T: Copy + Default + Send + Sync + 'static>(
        &self,
        (rank, ranks): (usize, usize),
        stencil: &Stencil<T>,
        weights: Option<&[f64]>,
    ) -> Result<(Layout, Store<T>), DistributedError> {
        let layout_of =
            |r: usize| Layout::new(self.global, self.dims, r, self.halo, self.periodic, weights);
        for r in 0..ranks {
            let shape = layout_of(r)?.local_shape();
            if let Some(axis) = (0..shape.len()).find(|&a| shape[a] < stencil.min_shape[a]) {
                return Err(DistributedError::TooSmall {
                    axis,
                    extent: self.global[axis],
                    processes: self.dims[axis],
                    halo: stencil.min_shape[axis],
                });
            }
        }
        let layout = layout_of(rank)?;
        let store = Store::new(stencil, &layout.local_shape())?;
        Ok((layout, store))
    }

    /// Every rank's speed (owned cells a second) over `steps` steps of its
    /// box of an even split, in rank order: the same on every rank.
    pub fn measure<C: Communicator, T: Equivalence + Copy + Default + Send + Sync + 'static>(
        &self,
        comm: &C,
        stencil: &Stencil<T>,
        steps: u64,
    ) -> Result<Vec<f64>, DistributedError> {
        if steps == 0 {
            return Err(DistributedError::Arguments {
                what: "a measured split times at least one step".into(),
            });
        }
        let ranks = (comm.rank() as usize, comm.size() as usize);
        let (layout, mut store) = self.place(ranks, stencil, None)?;
        let (shape, params) = (
            layout.local_shape(),
            vec![T::default(); stencil.params.len()],
        );
        store.step(&shape, &params, 1)?;
        let start = Instant::now();
        store.step(&shape, &params, steps)?;
        let seconds = start.elapsed().as_secs_f64().max(1e-9);
        let mine = layout.owned_cells() as f64 * steps as f64 / seconds;
        let mut all = vec![0.0; comm.size() as usize];
        comm.all_gather_into(&mine, &mut all[..]);
        Ok(all)
    }
}
