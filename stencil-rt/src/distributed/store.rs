//! Where a rank's box of grids lives and steps: in host memory, stepped by
//! the stencil's `run_grids_in`, or on a device (a GPU backend's session,
//! kept between steps), whose halos are packed there and whose host copy
//! serves scatter, gather and the user's reads.

use crate::StencilError;
use crate::gpu::{DeviceGrids, HostMemory, Shared};
use crate::host::Workspace;

use super::{RunGrids, Stencil, exchange};

/// A rank's box of every grid (`GRIDS` order).
pub struct Store<T: 'static> {
    /// The grids on the host: the grids themselves, or a device's copy.
    host: Vec<Vec<T>>,
    place: Place<T>,
}

/// Where the box steps.
enum Place<T: 'static> {
    Host {
        run: RunGrids<T>,
        /// Its scratch grids, kept between steps.
        work: Workspace<T>,
    },
    Device {
        grids: Box<dyn DeviceGrids<T>>,
        newer: Newer,
    },
}

/// Which copy of a device's box holds values the other lacks.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Newer {
    Neither,
    Host,
    Device,
}

impl<T: Copy + Default + Send + Sync + 'static> Store<T> {
    /// Zeroed grids of `shape` for `stencil`: on its device where it has
    /// one (`Stencil::device`), else on the host.
    pub fn new(stencil: &Stencil<T>, shape: &[usize]) -> Result<Self, StencilError> {
        let cells = shape.iter().product();
        let place = match stencil.device {
            Some(devices) => Place::Device {
                grids: (devices.grids)(shape)?,
                newer: Newer::Neither,
            },
            None => Place::Host {
                run: stencil.run,
                work: Workspace::new(),
            },
        };
        Ok(Store {
            host: vec![vec![T::default(); cells]; stencil.grids.len()],
            place,
        })
    }

    /// `len` zeroed host values to exchange halos through: on a device's
    /// box, page-locked memory, which the device copies at full speed.
    pub fn host_memory(&self, len: usize) -> Result<HostMemory<T>, StencilError> {
        match &self.place {
            Place::Host { .. } => Ok(Box::new(vec![T::default(); len])),
            Place::Device { grids, .. } => grids.host_memory(len),
        }
    }

    /// Whether the box steps on a device.
    pub fn on_device(&self) -> bool {
        matches!(self.place, Place::Device { .. })
    }

    /// The device's box; `None` on the host.
    pub fn device(&self) -> Option<&dyn DeviceGrids<T>> {
        match &self.place {
            Place::Host { .. } => None,
            Place::Device { grids, .. } => Some(grids.as_ref()),
        }
    }

    /// As [`Store::pack`], into device values `shared` (a neighbour's, or
    /// handed to MPI), or with `unpack` as [`Store::unpack`] from them;
    /// queued (done at the next [`Store::synchronize`]). A host's box has
    /// no shared values (none are made for it), and copies nothing.
    pub fn copy_shared(
        &mut self,
        grids: &[usize],
        ranges: &[[usize; 2]],
        shared: &Shared<T>,
        unpack: bool,
    ) -> Result<(), StencilError> {
        self.sync_device()?;
        match &mut self.place {
            Place::Host { .. } => Ok(()),
            Place::Device {
                grids: device,
                newer,
            } => {
                if unpack {
                    *newer = Newer::Device;
                }
                device.copy_shared(grids, ranges, shared, unpack)
            }
        }
    }

    /// Waits for a device's queued work.
    pub fn synchronize(&self) -> Result<(), StencilError> {
        match &self.place {
            Place::Host { .. } => Ok(()),
            Place::Device { grids, .. } => grids.synchronize(),
        }
    }

    /// The grids, as of the last step.
    pub fn grids(&mut self) -> Result<&[Vec<T>], StencilError> {
        self.sync_host()?;
        Ok(&self.host)
    }

    /// The grids, to change: a device's copy is replaced before its next use.
    pub fn grids_mut(&mut self) -> Result<&mut [Vec<T>], StencilError> {
        self.sync_host()?;
        if let Place::Device { newer, .. } = &mut self.place {
            *newer = Newer::Host;
        }
        Ok(&mut self.host)
    }

    /// Copies the box `ranges` of each of `grids` (indices in `GRIDS`) into
    /// `buf`, grid after grid.
    pub fn pack(
        &mut self,
        grids: &[usize],
        ranges: &[[usize; 2]],
        shape: &[usize],
        buf: &mut [T],
    ) -> Result<(), StencilError> {
        self.sync_device()?;
        match &mut self.place {
            Place::Host { .. } => {
                let chosen: Vec<&Vec<T>> = grids.iter().map(|&g| &self.host[g]).collect();
                exchange::pack(&chosen, shape, ranges, buf);
            }
            Place::Device { grids: device, .. } => device.pack(grids, ranges, buf)?,
        }
        Ok(())
    }

    /// The reverse of [`Store::pack`].
    pub fn unpack(
        &mut self,
        grids: &[usize],
        ranges: &[[usize; 2]],
        shape: &[usize],
        buf: &[T],
    ) -> Result<(), StencilError> {
        self.sync_device()?;
        match &mut self.place {
            Place::Host { .. } => {
                let mut chosen: Vec<&mut Vec<T>> = (self.host.iter_mut().enumerate())
                    .filter_map(|(g, grid)| grids.contains(&g).then_some(grid))
                    .collect();
                exchange::unpack(buf, &mut chosen, shape, ranges);
            }
            Place::Device {
                grids: device,
                newer,
            } => {
                device.unpack(grids, ranges, buf)?;
                *newer = Newer::Device;
            }
        }
        Ok(())
    }

    /// Runs `steps` steps of the box, of `shape`, with `params`; returns
    /// once they ran (a device's launches finished).
    pub fn step(&mut self, shape: &[usize], params: &[T], steps: u64) -> Result<(), StencilError> {
        self.sync_device()?;
        match &mut self.place {
            Place::Host { run, work } => {
                let mut grids: Vec<&mut [T]> = self.host.iter_mut().map(|g| &mut g[..]).collect();
                run(work, &mut grids, shape, params, steps)
            }
            Place::Device { grids, newer } => {
                *newer = Newer::Device;
                grids.step_grids(params, steps)?;
                grids.synchronize()
            }
        }
    }

    /// Queues one step of the planes `planes` of the slowest axis as a grid
    /// of their own, into the next level (a device's box; the levels turn
    /// at [`Store::finish_parts`]); `false` (nothing ran) on the host or for
    /// a plan that cannot.
    pub fn step_part(&mut self, params: &[T], planes: [usize; 2]) -> Result<bool, StencilError> {
        self.sync_device()?;
        match &mut self.place {
            Place::Host { .. } => Ok(false),
            Place::Device { grids, newer } => {
                *newer = Newer::Device;
                grids.step_part(params, planes)
            }
        }
    }

    /// Turns the levels after the parts of one step, and waits for them.
    pub fn finish_parts(&mut self) -> Result<(), StencilError> {
        match &mut self.place {
            Place::Host { .. } => Ok(()),
            Place::Device { grids, .. } => {
                grids.finish_parts();
                grids.synchronize()
            }
        }
    }

    /// Brings the host copy up to date.
    fn sync_host(&mut self) -> Result<(), StencilError> {
        if let Place::Device { grids, newer } = &mut self.place {
            if *newer == Newer::Device {
                let mut host: Vec<&mut [T]> = self.host.iter_mut().map(|g| &mut g[..]).collect();
                grids.download_grids(&mut host)?;
                *newer = Newer::Neither;
            }
        }
        Ok(())
    }

    /// Brings the device's box up to date.
    fn sync_device(&mut self) -> Result<(), StencilError> {
        if let Place::Device { grids, newer } = &mut self.place {
            if *newer == Newer::Host {
                let host: Vec<&[T]> = self.host.iter().map(|g| &g[..]).collect();
                grids.upload_grids(&host)?;
                *newer = Newer::Neither;
            }
        }
        Ok(())
    }
}
