//! How a [`Session`](super::Session) splits and steps its grid: the process
//! grid, steps an exchange, the split of each axis, the device of a rank,
//! the overlap of exchange and compute, and the path of halos on a node.

/// How a [`Session`](super::Session) splits and steps its grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Processes along each axis; `None`: [`auto_dims`](super::auto_dims)' choice.
    pub dims: Option<Vec<usize>>,
    /// Steps between halo exchanges: the halo is this many radii wide.
    pub steps_per_exchange: u64,
    /// How the cells along each split axis are shared among its ranks.
    pub split: Split,
    /// Which GPU a rank keeps its box on, where the stencil's default
    /// backend is a GPU's.
    pub device: DeviceChoice,
    /// Whether a box on a GPU computes its interior while its halos travel,
    /// where it can ([`Session::overlaps`](super::Session::overlaps)).
    pub overlap: bool,
    /// Whether ranks of one node that keep their boxes on GPUs pack the
    /// halos they send straight into each other's device memory (CUDA and
    /// HIP IPC; MPI then carries only the message that they are there),
    /// where the runtime can map it; else MPI carries them through
    /// page-locked host memory ([`Session::device_sides`](super::Session::device_sides)).
    pub device_halos: bool,
    /// Whether MPI is handed device buffers (a CUDA- or ROCm-aware MPI)
    /// for the halos that go through it, packed and unpacked on the device,
    /// instead of copies in page-locked host memory.
    pub device_mpi: DeviceMpi,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            dims: None,
            steps_per_exchange: 1,
            split: Split::Even,
            device: DeviceChoice::NodeRank,
            overlap: true,
            device_halos: true,
            device_mpi: DeviceMpi::Detect,
        }
    }
}

/// Whether MPI reads and writes device memory.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum DeviceMpi {
    /// As the MPI says: Open MPI's `MPIX_Query_cuda_support` (CUDA) or
    /// `MPIX_Query_rocm_support` (HIP), looked up as the program runs; an
    /// MPI without it is taken as not GPU-aware.
    #[default]
    Detect,
    /// It does (an MPI built GPU-aware that cannot say so).
    On,
    /// It does not: halos cross through page-locked host memory.
    Off,
}

/// Which GPU a rank keeps its box on.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum DeviceChoice {
    /// The rank's index among the ranks of its node (those that share its
    /// memory), modulo the node's devices: one GPU a rank where there are as
    /// many, the ranks shared out evenly where there are fewer.
    #[default]
    NodeRank,
    /// The calling thread's current device (the program chose it).
    Current,
    /// Device `index` of the node.
    Index(usize),
}

/// How the cells along each split axis are shared among its slabs of
/// ranks: evenly, or in proportion to the sums of the ranks' weights (their
/// relative speeds, for unlike devices: a GPU beside CPUs, two kinds of GPU).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Split {
    /// Evenly (the first slabs own one cell more where an extent does not divide).
    #[default]
    Even,
    /// By the weights given, one a rank in rank order (say each rank's GCells/s
    /// on the stencil alone).
    Weights(Vec<f64>),
    /// By each rank's speed measured when the session is made: `steps` steps
    /// of its box of an even split (zeroed, after one step to warm up), timed,
    /// as cells a second; every rank then splits by the same measured weights.
    Measured {
        /// Steps timed.
        steps: u64,
    },
}
