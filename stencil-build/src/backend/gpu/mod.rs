//! The GPU kernel generator, shared by CUDA and HIP: one generator, a
//! [`Dialect`] for what differs (headers, runtime API names, warp width).
//!
//! One kernel per `[[update]]` of the stencil's [`gpu_form`] (its
//! temporaries computed inline where that is cheaper than memory), its
//! strategy and block shape compile-time constants:
//!
//! - `naive`: one thread per cell, reads through `const __restrict__` pointers;
//! - `tiled`: each block stages the tile it computes plus its halo in shared
//!   memory, for every grid read at non-zero offsets, then computes from there;
//! - `stream` (2.5-D): a block owns a tile of the fast axes and marches along
//!   the slowest axis through `chunk` cells, `coarsen` cells per iteration,
//!   each thread `vector` cells of the contiguous axis. Per grid and row
//!   offset the statement reads (a row group), each thread keeps a window of
//!   the planes it reads in registers: every value is loaded once, as one
//!   vector for the thread's own cells, and reused for every output that
//!   reads it at another offset along the slowest axis. In-plane neighbours
//!   come through the read-only data cache, where the neighbouring threads'
//!   loads put them: no shared memory and no barrier. Blocks whose chunk
//!   takes one iteration (`chunk <= coarsen`) fill the window once; the
//!   others move it `coarsen` planes per iteration, the next iteration's
//!   planes loaded before this one computes (software pipelining).
//!
//! Each kernel has an `extern "C"` launcher returning the runtime's error
//! code, and the file has the few runtime calls the Rust side needs.

mod dialect;
mod emit;
mod form;
pub mod plan;
mod runtime;
pub mod step;

pub use dialect::{CUDA, DeviceArch, Dialect, GraphUpdate, HIP};
pub use emit::source;
pub use form::gpu_form;
pub use plan::{Plan, fit, resolve};
pub use runtime::runtime_source;

use crate::codegen::names::statement_name;
use crate::ir::{Statement, Stencil};

/// The exported launcher of a statement's kernel.
pub fn symbol(prefix: &str, d: &Dialect, st: &Stencil, s: &Statement) -> String {
    format!(
        "{prefix}_{}__{}__{}",
        d.name,
        st.name,
        statement_name(st, s)
    )
}

/// The exported launcher of the kernel that computes every statement of a
/// step ([`step::one_kernel`]).
pub fn step_symbol(prefix: &str, d: &Dialect, st: &Stencil) -> String {
    format!("{prefix}_{}__{}__step", d.name, st.name)
}

#[cfg(test)]
pub(in crate::backend) mod tests;
