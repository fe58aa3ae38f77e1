//! Domain decomposition over MPI (feature `mpi`): a stencil's grid split
//! over a Cartesian grid of processes, each rank stepping its own box of
//! cells with the stencil's `run_grids_in`.
//!
//! Why a box steps exactly as the whole grid would: with a fixed boundary
//! a step leaves the frame of its grids (`FRAME` cells by each side) as it
//! is and computes every other cell from cells within `RADIUS`. A rank's
//! box is the cells it owns and, by each side that faces another rank, a
//! halo of `steps_per_exchange x HALO` cells filled from that rank (`HALO`
//! is `RADIUS`, or twice it where a statement reads off its cell what an
//! earlier one updated: the box computes that update only `RADIUS` in from
//! its sides). Each step computes the box but its frame; a cell `j x HALO`
//! or more inside a halo side is then what the whole grid has after `j`
//! steps, so after `steps_per_exchange` steps every owned cell is, and the
//! halos are exchanged again. A side on the grid's edge has no halo: there
//! the box's frame is the grid's own.
//!
//! A periodic grid's ranks at its edges face each other across it, so
//! every side has a halo (but along an axis of one rank, which the box
//! wraps onto itself as the whole grid does). A periodic step computes
//! every cell of the box, those within `RADIUS` of its sides from reads
//! wrapped onto the box's far side: wrong, but only where the fixed step
//! would have left its frame, so the same count holds.
//!
//! ```ignore
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! let mut s = Session::new(&world, stencil_rt::distributed_stencil!(heat2d), &[4000, 4000], Options::default())?;
//! s.scatter(0, (world.rank() == 0).then_some(&[&u[..]][..]))?;
//! s.set_params(&[0.1]);
//! s.step(100)?;
//! s.gather(0, (world.rank() == 0).then_some(&mut [&mut u[..]][..]))?;
//! ```

mod device_mpi;
mod error;
mod exchange;
mod layout;
mod options;
mod overlap;
mod partition;
mod peers;
mod store;

use std::time::{Duration, Instant};

use mpi::datatype::Equivalence;
use mpi::topology::Communicator;

use crate::StencilError;
use crate::gpu::Devices;
use crate::host::Workspace;
pub use error::DistributedError;
pub use layout::{Layout, auto_dims, factorizations};
pub use options::{DeviceChoice, DeviceMpi, Options, Split};
use partition::Partition;
use store::Store;

/// What a distributed session needs of a generated stencil (its constants
/// and `run_grids`); [`distributed_stencil!`](crate::distributed_stencil) fills it in.
#[derive(Clone, Copy)]
pub struct Stencil<T: 'static> {
    /// `NAME`.
    pub name: &'static str,
    /// `AXES`.
    pub axes: &'static [&'static str],
    /// `GRIDS`: the grids `run` takes, in order.
    pub grids: &'static [&'static str],
    /// `PARAMS`.
    pub params: &'static [&'static str],
    /// `RADIUS`: the reach of one step, per axis.
    pub radius: &'static [usize],
    /// `HALO`: the halo of one step, per axis.
    pub halo: &'static [usize],
    /// `MIN_SHAPE`: the smallest box a rank may hold.
    pub min_shape: &'static [usize],
    /// `BOUNDARY`.
    pub boundary: &'static str,
    /// `REGIONS`.
    pub regions: &'static [&'static str],
    /// `INPUTS`: grids of `grids` no step changes, whose halos are filled
    /// once after `scatter` or `grids_mut`.
    pub inputs: &'static [&'static str],
    /// `run_grids_in`: steps grids of a shape in place, its scratch grids
    /// from a workspace kept between calls.
    pub run: RunGrids<T>,
    /// `DEVICES`: where the default backend is a GPU's, its devices and a
    /// session of a box's shape kept on one between steps, which a rank
    /// steps instead of `run` (its halos packed on the device).
    pub device: Option<Devices<T>>,
}

/// A generated `run_grids_in`: a workspace, grids in `GRIDS` order, the
/// shape, params in `PARAMS` order, steps.
pub type RunGrids<T> =
    fn(&mut Workspace<T>, &mut [&mut [T]], &[usize], &[T], u64) -> Result<(), StencilError>;

/// The [`Stencil`] of a generated stencil module: `distributed_stencil!(heat2d)`.
#[macro_export]
macro_rules! distributed_stencil {
    ($($m:ident)::+) => {
        $crate::distributed::Stencil {
            name: $($m)::+::NAME,
            axes: &$($m)::+::AXES,
            grids: $($m)::+::GRIDS,
            params: $($m)::+::PARAMS,
            radius: &$($m)::+::RADIUS,
            halo: &$($m)::+::HALO,
            min_shape: &$($m)::+::MIN_SHAPE,
            boundary: $($m)::+::BOUNDARY,
            regions: $($m)::+::REGIONS,
            inputs: $($m)::+::INPUTS,
            run: $($m)::+::run_grids_in,
            device: $($m)::+::DEVICES,
        }
    };
}

/// One rank's part of a distributed stencil: its box of every grid, the
/// buffers its halo exchanges use (allocated once), and its params.
///
/// Every rank drops its session alike, before MPI is finalized (the
/// universe dropped): ranks that share device buffers agree, as the session
/// ends, that each has unmapped its neighbours' before freeing its own.
pub struct Session<'c, C: Communicator, T: Equivalence + Copy + Default + Send + Sync + 'static> {
    comm: &'c C,
    stencil: Stencil<T>,
    layout: Layout,
    steps_per_exchange: u64,
    /// The halo per axis: `steps_per_exchange x HALO`.
    halo: Vec<usize>,
    store: Store<T>,
    params: Vec<T>,
    buffers: exchange::Buffers<T>,
    /// Each rank's weight, where the split follows them.
    weights: Option<Vec<f64>>,
    timings: Timings,
    /// Whether the input grids' halos must be exchanged again (after
    /// [`Session::grids_mut`]).
    stale_inputs: bool,
    /// The box's parts where it steps its interior while the halos travel.
    parts: Option<overlap::Parts>,
}

/// Where a rank's time in [`Session::step`] went, summed over its calls.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    /// Steps run.
    pub steps: u64,
    /// Exchanging halos: packing, waiting for the neighbours, unpacking.
    pub exchange: Duration,
    /// Stepping the box (with overlap, its rims after the halos arrived).
    pub compute: Duration,
    /// Steps whose interior was computed while the halos travelled.
    pub overlapped: u64,
}

impl<'c, C: Communicator, T: Equivalence + Copy + Default + Send + Sync + 'static>
    Session<'c, C, T>
{
    /// Splits a grid of `global` cells over `comm`'s ranks; every rank
    /// calls it alike. The boxes start zeroed, the params at zero.
    pub fn new(
        comm: &'c C,
        stencil: Stencil<T>,
        global: &[usize],
        options: Options,
    ) -> Result<Self, DistributedError> {
        splittable(&stencil)?;
        if let Some(devices) = &stencil.device {
            select_device(comm, devices, options.device)?;
        }
        if options.steps_per_exchange == 0 {
            return Err(DistributedError::NoSteps);
        }
        let size = comm.size() as usize;
        let dims = options.dims.unwrap_or_else(|| auto_dims(global, size));
        if dims.len() != global.len()
            || global.len() != stencil.axes.len()
            || dims.iter().product::<usize>() != size
        {
            return Err(DistributedError::Dims {
                dims,
                size,
                axes: stencil.axes.len(),
            });
        }
        let k = options.steps_per_exchange as usize;
        let halo: Vec<usize> = stencil.halo.iter().map(|&r| r * k).collect();
        let partition = Partition {
            global,
            dims: &dims,
            halo: &halo,
            periodic: stencil.boundary == "periodic",
        };
        let weights = match options.split {
            Split::Even => None,
            Split::Weights(w) => {
                if w.len() != size || w.iter().any(|&x| !(x.is_finite() && x > 0.0)) {
                    return Err(DistributedError::Arguments {
                        what: format!(
                            "weights must be {size} finite positive numbers, one a rank: {w:?}"
                        ),
                    });
                }
                Some(w)
            }
            Split::Measured { steps } => Some(partition.measure(comm, &stencil, steps)?),
        };
        let (layout, store) =
            partition.place((comm.rank() as usize, size), &stencil, weights.as_deref())?;
        let parts = (options.overlap && store.on_device())
            .then(|| overlap::parts(&stencil, &layout, options.steps_per_exchange))
            .flatten();
        Ok(Session {
            comm,
            parts,
            buffers: exchange::Buffers::new(
                comm,
                &layout,
                stencil.grids.len(),
                &store,
                (options.device_halos, options.device_mpi),
            )?,
            store,
            params: vec![T::default(); stencil.params.len()],
            steps_per_exchange: options.steps_per_exchange,
            halo,
            weights,
            timings: Timings::default(),
            stale_inputs: true,
            stencil,
            layout,
        })
    }

    /// The weights the cells were split by (given or measured); `None`
    /// where they were split evenly.
    pub fn weights(&self) -> Option<&[f64]> {
        self.weights.as_deref()
    }

    /// Where this rank's cells lie.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// This rank's box of each grid, in `GRIDS` order (row-major over
    /// [`Layout::local_shape`]), as of the last step (a box stepped on a
    /// device is copied back first).
    pub fn grids(&mut self) -> Result<&[Vec<T>], DistributedError> {
        Ok(self.store.grids()?)
    }

    /// This rank's box of each grid, to fill without a global grid (each
    /// rank its own cells; the halos are exchanged, and a device's box
    /// replaced, before the next step).
    pub fn grids_mut(&mut self) -> Result<&mut [Vec<T>], DistributedError> {
        self.stale_inputs = true;
        Ok(self.store.grids_mut()?)
    }

    /// Whether the boxes step on a device (the stencil's default backend
    /// is a GPU's): grids kept there between steps, halos packed there.
    pub fn on_device(&self) -> bool {
        self.store.on_device()
    }

    /// Sets the params, in `PARAMS` order.
    pub fn set_params(&mut self, params: &[T]) -> Result<(), DistributedError> {
        if params.len() != self.params.len() {
            return Err(DistributedError::Arguments {
                what: format!(
                    "`{}` takes {} params, not {}",
                    self.stencil.name,
                    self.params.len(),
                    params.len()
                ),
            });
        }
        self.params.copy_from_slice(params);
        Ok(())
    }

    /// Runs `steps` steps over every rank (each calls it alike): halos
    /// exchanged every `steps_per_exchange` steps, each rank's box stepped
    /// by the stencil's `run_grids_in`, or on its device (there, where it
    /// can, its interior while the halos travel: [`Session::overlaps`]).
    pub fn step(&mut self, steps: u64) -> Result<(), DistributedError> {
        let shape = self.layout.local_shape();
        let mut left = steps;
        while left > 0 {
            let n = left.min(self.steps_per_exchange);
            let start = Instant::now();
            let overlapped = self.exchange_halos(self.stale_inputs)?;
            self.stale_inputs = false;
            let exchanged = Instant::now();
            match (&self.parts, overlapped) {
                (Some(parts), true) => {
                    for &rim in &parts.rims {
                        self.store.step_part(&self.params, rim)?;
                    }
                    self.store.finish_parts()?;
                    self.timings.overlapped += 1;
                }
                _ => self.store.step(&shape, &self.params, n)?,
            }
            self.timings.exchange += exchanged - start;
            self.timings.compute += exchanged.elapsed();
            self.timings.steps += n;
            left -= n;
        }
        Ok(())
    }

    /// Whether a step computes the box's interior while its halos travel:
    /// with `Options::overlap`, on a GPU, one step an exchange, a fixed
    /// boundary, a halo as wide as the reach, and neighbours along the
    /// slowest axis only (a split of it alone: `dims` of one process along
    /// the others). With overlap, [`Timings::exchange`] includes the wait
    /// for the interior's launch, which the halos' unpacking follows.
    pub fn overlaps(&self) -> bool {
        self.parts.is_some()
    }

    /// The sides of this rank's box whose halos go device to device, both
    /// ways ([`Options::device_halos`]): each a neighbour of this node that
    /// keeps its box on a device too, where the runtime mapped the
    /// buffers; 0 on the host.
    pub fn device_sides(&self) -> usize {
        self.buffers.device_sides()
    }

    /// Whether MPI is handed device buffers for some of this rank's halos
    /// ([`Options::device_mpi`]; the sides that do not go device to device).
    pub fn device_mpi(&self) -> bool {
        self.buffers.device_mpi()
    }

    /// This rank's time in [`step`](Self::step) so far.
    pub fn timings(&self) -> Timings {
        self.timings
    }

    /// Fills every rank's owned cells from the global grids (`GRIDS` order)
    /// that rank `root` passes (the halos follow at the next step); the
    /// other ranks pass `None`. Every rank calls it
    /// alike (a root that passes no grids returns an error while the other
    /// ranks wait for theirs, as with any MPI collective called unevenly).
    pub fn scatter(
        &mut self,
        root: usize,
        global: Option<&[&[T]]>,
    ) -> Result<(), DistributedError> {
        let me = self.comm.rank() as usize;
        if me == root {
            let global = global.ok_or_else(|| no_grids("scatter"))?;
            self.check_global(global.iter().map(|g| g.len()))?;
            for rank in 0..self.comm.size() as usize {
                let theirs = self.layout_of(rank)?;
                let packed = exchange::packed(global, &self.layout.global, &theirs.owned);
                if rank == me {
                    exchange::unpack_owned(&packed, &self.layout, self.store.grids_mut()?);
                } else {
                    exchange::send(self.comm, rank, &packed);
                }
            }
        } else {
            let mut packed =
                vec![T::default(); self.layout.owned_cells() * self.stencil.grids.len()];
            exchange::receive(self.comm, root, &mut packed);
            exchange::unpack_owned(&packed, &self.layout, self.store.grids_mut()?);
        }
        self.stale_inputs = true;
        Ok(())
    }

    /// Fills the halos of the grids a step changes (with `inputs`, of
    /// every grid) from the ranks that own those cells; where the box steps
    /// in parts, queues its interior's step once the slabs it sends are
    /// packed. Whether it did.
    fn exchange_halos(&mut self, inputs: bool) -> Result<bool, StencilError> {
        let shape = self.layout.local_shape();
        let chosen: Vec<usize> = (self.stencil.grids.iter().enumerate())
            .filter(|(_, g)| inputs || !self.stencil.inputs.contains(g))
            .map(|(k, _)| k)
            .collect();
        let (params, interior) = (&self.params, self.parts.as_ref().map(|p| p.interior));
        let mut queued = false;
        exchange::halos(
            self.comm,
            &self.layout,
            &shape,
            (&mut self.store, &chosen),
            &mut self.buffers,
            &mut |store| {
                if let Some(planes) = interior {
                    queued = store.step_part(params, planes)?;
                }
                Ok(())
            },
        )?;
        Ok(queued)
    }

    /// Collects every rank's owned cells into the global grids (`GRIDS`
    /// order) that rank `root` passes; the other ranks pass `None`.
    pub fn gather(
        &mut self,
        root: usize,
        global: Option<&mut [&mut [T]]>,
    ) -> Result<(), DistributedError> {
        let me = self.comm.rank() as usize;
        let owned = exchange::pack_owned(&self.layout, self.store.grids()?);
        if me != root {
            exchange::send(self.comm, root, &owned);
            return Ok(());
        }
        let global = global.ok_or_else(|| no_grids("gather"))?;
        self.check_global(global.iter().map(|g| g.len()))?;
        for rank in 0..self.comm.size() as usize {
            let theirs = self.layout_of(rank)?;
            let packed = if rank == me {
                owned.clone()
            } else {
                let mut buf = vec![T::default(); theirs.owned_cells() * self.stencil.grids.len()];
                exchange::receive(self.comm, rank, &mut buf);
                buf
            };
            exchange::unpack(&packed, global, &self.layout.global, &theirs.owned);
        }
        Ok(())
    }

    /// The layout of rank `rank` of this session's split.
    fn layout_of(&self, rank: usize) -> Result<Layout, DistributedError> {
        Layout::new(
            &self.layout.global,
            &self.layout.dims,
            rank,
            &self.halo,
            self.layout.periodic,
            self.weights.as_deref(),
        )
    }

    fn check_global(
        &self,
        lens: impl ExactSizeIterator<Item = usize>,
    ) -> Result<(), DistributedError> {
        let cells: usize = self.layout.global.iter().product();
        let count = lens.len();
        let lens: Vec<usize> = lens.collect();
        let grids = self.stencil.grids.len();
        if count != grids || lens.iter().any(|&l| l != cells) {
            return Err(DistributedError::Arguments {
                what: format!(
                    "`{}` takes {} global grids of {cells} cells ({}), not {count} of {lens:?}",
                    self.stencil.name,
                    grids,
                    self.stencil.grids.join(", ")
                ),
            });
        }
        Ok(())
    }
}

impl<C: Communicator, T: Equivalence + Copy + Default + Send + Sync + 'static> Drop
    for Session<'_, C, T>
{
    /// Unmaps the neighbours' device buffers, and frees this rank's once
    /// its neighbours unmapped them (every rank drops its session alike).
    fn drop(&mut self) {
        self.buffers.release(self.comm, &self.layout);
    }
}

/// Makes the device `choice` names the calling thread's current one (every
/// rank calls it alike: the node's ranks are counted together).
fn select_device<C: Communicator, T>(
    comm: &C,
    devices: &Devices<T>,
    choice: DeviceChoice,
) -> Result<(), StencilError> {
    match choice {
        DeviceChoice::Current => Ok(()),
        DeviceChoice::Index(index) => (devices.select)(index),
        DeviceChoice::NodeRank => {
            let node = comm.split_shared(comm.rank());
            let count = (devices.count)()?.max(1);
            (devices.select)(node.rank() as usize % count)
        }
    }
}

/// The error of a root that passed no global grids to `call`.
fn no_grids(call: &str) -> DistributedError {
    DistributedError::Arguments {
        what: format!("the root of a {call} passes the global grids"),
    }
}

/// Refuses what a box cannot step as the whole grid does: a boundary
/// neither fixed nor periodic (reads past a box's edge would be remapped
/// onto the box, not onto its neighbour) and updates in regions (placed
/// from the box's edges, not the grid's).
fn splittable<T>(stencil: &Stencil<T>) -> Result<(), DistributedError> {
    let why = if !["fixed", "periodic"].contains(&stencil.boundary) {
        format!(
            "its boundary is {}; sessions split fixed and periodic boundaries",
            stencil.boundary
        )
    } else if !stencil.regions.is_empty() {
        format!(
            "its updates apply to regions ({}); sessions split updates of whole grids",
            stencil.regions.join(", ")
        )
    } else {
        return Ok(());
    };
    Err(DistributedError::Unsupported {
        stencil: stencil.name,
        why,
    })
}
