//! `stencil-build` compiles stencil specs (`*.stencil.toml`) into kernels and a
//! safe, typed Rust API at build time: OpenMP C, CUDA and HIP kernels with
//! their plans fixed at compile time, and a pure-Rust reference beside them.
//!
//! # Quick start
//!
//! A spec, `stencils/heat2d.stencil.toml`:
//!
//! ```toml
//! [stencil]
//! name = "heat2d"
//! dtype = "f64"
//! axes = ["y", "x"]
//!
//! [fields]
//! u = { role = "state" }
//!
//! [params]
//! alpha = "f64"
//!
//! [[update]]
//! target = "u"
//! expr = "u[0,0] + alpha*(u[-1,0] + u[1,0] + u[0,-1] + u[0,1] - 4*u[0,0])"
//! ```
//!
//! `Cargo.toml`: the generator as a build dependency, its runtime
//! ([`stencil-rt`](https://docs.rs/stencil-rt), of the same version) as a
//! dependency, and a feature per backend:
//!
//! ```toml
//! [features]
//! default = ["openmp"]
//! openmp = []
//! cuda = []
//! hip = []
//!
//! [dependencies]
//! stencil-rt = "0.1"
//!
//! [build-dependencies]
//! stencil-build = "0.1"
//! ```
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), stencil_build::Error> {
//!     stencil_build::compile()
//! }
//! ```
//!
//! ```ignore
//! // src/lib.rs
//! include!(concat!(env!("OUT_DIR"), "/stencils.rs"));
//!
//! pub fn smooth(u: &mut [f64], ny: usize, nx: usize) -> Result<(), StencilError> {
//!     heat2d::run(u, [ny, nx], heat2d::Params { alpha: 0.2 }, 100)
//! }
//! ```
//!
//! Each spec becomes a module with `run` (the best enabled backend),
//! `reference::run` (the pure-Rust oracle) and one module per enabled backend
//! (`openmp::run`, `cuda::Session` for grids kept on the device), plus
//! constants describing the stencil (`RADIUS`, `FLOPS_PER_CELL`, ...). The
//! backends are chosen by the calling crate's Cargo features (`openmp`,
//! `cuda`, `hip`) or by [`Config::backend`]. Every call checks its arguments
//! first: misuse is an `Err` that changed nothing.
//!
//! # The guide
//!
//! The repository's guide (`docs/`, an mdBook) has the spec format, the GPU
//! strategies and `auto`, the generated API, building and toolchains,
//! testing your stencils against the reference, benchmarking, and
//! troubleshooting by error message.

mod analysis;
mod backend;
mod codegen;
mod config;
mod diagnostic;
mod ir;
mod spec;
mod toolchain;
pub mod tuning;

use std::fmt;
use std::path::PathBuf;

pub use config::{Backend, Config, PlanSpace, PlanSpaces, Sources, generate, plan_space};
pub use diagnostic::Diagnostic;

/// Not part of the API (feature `testing`): what the project's own test
/// harness and benchmark runner share with the build, so that they run the
/// build's code rather than a copy.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod __private {
    pub use crate::backend::openmp::VECTOR_MATH;
    pub use crate::backend::openmp::levels::{LEVELS, Level};
    pub use crate::toolchain::{host_launches, target_feature_flags};
}

/// The stack of the thread that checks and generates: expressions are
/// trees walked recursively, and a sum of many terms (a box of radius 4 in
/// 3-D: 729, or an unrolled `sum` of thousands) is a chain that deep, which
/// in an unoptimized build script or test overflowed the 2 MiB of a spawned
/// thread. Only the pages used are committed.
const STACK_BYTES: usize = 512 << 20;

/// Runs `work` on a thread of [`STACK_BYTES`] of stack (on the caller's,
/// where no thread can be started); a panic in it is resumed on the
/// caller's thread.
pub(crate) fn on_deep_stack<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    let work = std::sync::Mutex::new(Some(work));
    let take = || work.lock().ok().and_then(|mut w| w.take());
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("stencil-build".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || take().map(|work| work()));
        let done = match spawned {
            Ok(worker) => worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => None,
        };
        done.or_else(|| take().map(|work| work()))
            .expect("the work ran on one of the two threads")
    })
}

/// Finds every `*.stencil.toml` under the crate being built and compiles it
/// for the backends its Cargo features enable. Call it from `build.rs`.
///
/// Equivalent to `Config::new().compile()`.
pub fn compile() -> Result<(), Error> {
    Config::new().compile()
}

/// Why a build failed.
///
/// `Debug` prints the same text as `Display`, so `fn main() -> Result<(), Error>`
/// in a build script shows readable, located messages.
#[non_exhaustive]
pub enum Error {
    /// One or more specs are invalid; each diagnostic is located.
    Spec(Vec<Diagnostic>),
    /// A file or folder could not be read or written.
    Io {
        /// The path.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A backend's compiler is missing or failed.
    Toolchain {
        /// The backend.
        backend: &'static str,
        /// What went wrong and what to do.
        message: String,
    },
    /// One or more tuning files are invalid; each diagnostic is located.
    Tuning(Vec<Diagnostic>),
    /// The build environment is not what a build script gets from Cargo.
    Environment(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Spec(diagnostics) => located(f, diagnostics, "stencil specs"),
            Error::Tuning(diagnostics) => located(f, diagnostics, "tuning files"),
            Error::Io { path, source } => write!(f, "stencil-build: {}: {source}", path.display()),
            Error::Toolchain { backend, message } => write!(
                f,
                "stencil-build: the {backend} backend cannot be built: {message}"
            ),
            Error::Environment(message) => write!(f, "stencil-build: {message}"),
        }
    }
}

/// `n errors in <files>`, then each located diagnostic.
fn located(f: &mut fmt::Formatter<'_>, diagnostics: &[Diagnostic], files: &str) -> fmt::Result {
    let n = diagnostics.len();
    let plural = if n == 1 { "" } else { "s" };
    write!(f, "stencil-build: {n} error{plural} in {files}")?;
    diagnostics.iter().try_for_each(|d| write!(f, "\n\n{d}"))
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
