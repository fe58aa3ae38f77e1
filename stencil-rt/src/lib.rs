//! `stencil-rt` is the runtime of the code [stencil-build] generates: what
//! every generated stencil shares, so that a user's crate holds only what is
//! its own (the kernels' declarations, the stencil's constants, its
//! `Session`).
//!
//! A crate that compiles stencil specs depends on both, as a crate using
//! prost depends on `prost-build` and `prost`:
//!
//! ```toml
//! [dependencies]
//! stencil-rt = "0.1"
//!
//! [build-dependencies]
//! stencil-build = "0.1"
//! ```
//!
//! ```ignore
//! // build.rs
//! fn main() -> Result<(), stencil_build::Error> {
//!     stencil_build::compile()
//! }
//!
//! // src/lib.rs
//! include!(concat!(env!("OUT_DIR"), "/stencils.rs"));
//! ```
//!
//! The two crates go in step: a stencil-build release generates code for the
//! stencil-rt release of the same version.
//!
//! What a user meets here is [`StencilError`], the error of every generated
//! function, the descriptions of compiled plans ([`gpu::GpuTiling`],
//! [`openmp::OpenmpTiling`]) and how a GPU session runs fused steps
//! ([`gpu::Fusion`], [`gpu::Measurement`]). The rest ([`host`], the buffers
//! and graphs of [`gpu`]) is what the generated code calls.
//!
//! [stencil-build]: https://docs.rs/stencil-build

#![deny(missing_docs, unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

#[cfg(feature = "ndarray")]
pub mod arrays;
#[cfg(feature = "mpi")]
pub mod distributed;
mod error;
pub mod gpu;
pub mod host;
pub mod openmp;

pub use error::StencilError;
/// The `mpi` crate (rsmpi) distributed sessions run over (feature `mpi`).
#[cfg(feature = "mpi")]
pub use mpi;
/// The `ndarray` crate the generated `run_arrays` take arrays of (feature `ndarray`).
#[cfg(feature = "ndarray")]
pub use ndarray;
