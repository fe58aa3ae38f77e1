//! Runs the suite's stencils with every compiled GPU strategy beside the
//! bandwidth bound measured in the same run, after checking each against the
//! reference on a small grid of odd extents.
//!
//! `cargo run --release -p suite --features cuda -- [--steps N] [--reps R] [--json PATH]`

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

#[cfg(feature = "cuda")]
mod gpu;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    #[cfg(feature = "cuda")]
    return gpu::main();
    #[cfg(not(feature = "cuda"))]
    Err("the suite runner measures GPU strategies: build it with `--features cuda`".into())
}
