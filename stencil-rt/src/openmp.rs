//! The OpenMP backend's thread control and the description of its compiled
//! cache blocking. The OpenMP runtime itself is linked into the user's crate
//! with its kernels; [`Threads`] is how the generated code hands its calls
//! here. [`isa()`] is the instruction-set level the kernels run at.

mod isa;

use std::os::raw::c_int;

pub use isa::{ISA_VARIABLE, Isa, UnknownIsa, isa, set_max_isa};

/// A block extent that takes a whole axis: the largest a spec may give
/// (stencil-build's own limit, which its generated blocks never exceed).
pub const WHOLE_AXIS: usize = 1 << 24;

/// Cache blocking and fused steps compiled into a stencil's OpenMP kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenmpTiling {
    /// Block extent per axis, in axis order ([`WHOLE_AXIS`]: the whole axis).
    pub block: &'static [usize],
    /// Most steps one sweep of a tile carries through cache (1: none
    /// fused); a run fuses fewer where a thread's slices would overflow
    /// half its L2 cache.
    pub time_block: usize,
}

/// The OpenMP runtime's thread calls, as the crate's compiled kernels export
/// them (each crate's under names of its own).
pub trait Threads {
    /// `omp_get_max_threads()`.
    fn max_threads() -> c_int;
    /// `omp_set_num_threads` with `threads` clamped to what the library can
    /// start; returns the count set.
    fn set_threads(threads: c_int) -> c_int;
}

/// Threads the OpenMP kernels use when called from this thread
/// (`omp_get_max_threads`; set by `OMP_NUM_THREADS` or [`set_threads`]).
pub fn max_threads<R: Threads>() -> usize {
    R::max_threads().max(1) as usize
}

/// Sets the threads the OpenMP kernels use when called from this thread
/// (`omp_set_num_threads`) and returns the count set: `threads`, but at
/// least 1 and at most what the kernels' library allows.
pub fn set_threads<R: Threads>(threads: usize) -> usize {
    let threads = threads.clamp(1, c_int::MAX as usize) as c_int;
    R::set_threads(threads).max(1) as usize
}
