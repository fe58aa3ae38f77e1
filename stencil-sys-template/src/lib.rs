//! Stencils compiled at build time from `stencils/*.stencil.toml`.
//!
//! Each spec becomes a module: `heat2d::f64::run(...)` runs the best enabled
//! backend in f64, `heat2d::f64::reference::run(...)` the pure-Rust oracle
//! (the spec lists both dtypes, so `heat2d::f32` holds the same API in f32).

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));
