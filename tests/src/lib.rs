//! The cross-backend test harness. `build.rs` compiles every example stencil
//! and every spec in `stencils/` in four variants (f32/f64 x fixed/periodic),
//! and random stencils (`stencil_spec_check::random`) in one each;
//! [`check_against_reference`] runs each variant on every enabled backend and
//! compares it with the generated pure-Rust reference.

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));
include!(concat!(env!("OUT_DIR"), "/registry.rs"));

mod harness;
mod parts;

pub use harness::*;
pub use parts::check_parts;
