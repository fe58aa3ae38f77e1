//! Biharmonic smoothing: two statements per step, a temp Laplacian then its Laplacian.
//!
//! `cargo run --release -p hyperdiffusion2d -- [--size N] [--steps S] [--reference]`

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use example_driver::{Args, report, run_steps, updated_cells};
use hyperdiffusion2d as st;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse("hyperdiffusion2d", 1024, 200)?;
    let shape = [args.size; 2];
    let mut u = example_driver::bump(&shape, 0.1);
    let params = st::Params { nu: 0.01 };
    println!(
        "hyperdiffusion2d: {} grid {shape:?}, {} steps, backend {}, {} points, {} flops per cell",
        st::BOUNDARY,
        args.steps,
        args.backend(st::BACKEND),
        st::POINTS,
        st::FLOPS_PER_CELL
    );
    #[cfg(feature = "openmp")]
    println!("OpenMP threads: {}", openmp_max_threads());
    let elapsed = run_steps(args.steps, |k| match args.reference {
        true => st::reference::run(&mut u, shape, params, k),
        false => st::run(&mut u, shape, params, k),
    })?;
    report(
        u.iter().map(|&v| f64::from(v)),
        updated_cells(&shape, &st::RADIUS, st::BOUNDARY),
        args.steps,
        elapsed,
    );
    Ok(())
}
