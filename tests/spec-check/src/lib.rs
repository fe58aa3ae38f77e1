//! What the tests and the fuzz targets need to hold stencil-build to its
//! contract, *a spec it accepts builds on every backend*: random valid specs
//! ([`random`]), names that could collide with the generated code's own
//! ([`names`]), and the check that generates a spec's code and compiles
//! every backend's output with that backend's compiler ([`compile`]).

pub mod compile;
pub mod names;
pub mod random;
