//! Order-8 3-D diffusion: 25-point star unrolled from `sum` at compile time.
//!
//! `cargo run --release -p star3d25 -- [--size N] [--steps S] [--reference]`

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use example_driver::{Args, report, run_steps, updated_cells};
use star3d25 as st;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse("star3d25", 256, 50)?;
    let shape = [args.size; 3];
    let mut u: Vec<f32> = example_driver::bump(&shape, 0.2)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let params = st::Params { nu: 0.05 };
    println!(
        "star3d25: {} grid {shape:?}, {} steps, backend {}, {} points, {} flops per cell",
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
