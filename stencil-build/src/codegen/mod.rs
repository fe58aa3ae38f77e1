//! Code shared by the generators, and the generated Rust API.

pub mod expr;
pub mod rust;
