//! Stencils compiled at build time from `stencils/*.stencil.toml`.
//!
//! Each spec becomes a module: `heat2d::run(...)` runs the best enabled
//! backend, `heat2d::reference::run(...)` the pure-Rust oracle.

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));
