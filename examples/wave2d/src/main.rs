//! Leapfrog wave equation on a periodic 2-D grid: a pulse spreading as a ring.
//!
//! `cargo run --release -p wave2d -- [--size N] [--steps S] [--reference]`

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use example_driver::{Args, report, run_steps, updated_cells};
use wave2d as st;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse("wave2d", 2048, 1000)?;
    let shape = [args.size; 2];
    let mut u: Vec<f32> = example_driver::bump(&shape, 0.05)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let mut u_prev = u.clone(); // starts at rest
    let params = st::Params { c2: 0.25 };
    println!(
        "wave2d: {} grid {shape:?}, {} steps, backend {}, {} points, {} flops per cell",
        st::BOUNDARY,
        args.steps,
        args.backend(st::BACKEND),
        st::POINTS,
        st::FLOPS_PER_CELL
    );
    #[cfg(feature = "openmp")]
    println!("OpenMP threads: {}", openmp_max_threads());
    let elapsed = run_steps(args.steps, |k| match args.reference {
        true => st::reference::run(&mut u, &mut u_prev, shape, params, k),
        false => st::run(&mut u, &mut u_prev, shape, params, k),
    })?;
    report(
        u.iter().map(|&v| f64::from(v)),
        updated_cells(&shape, &st::RADIUS, st::BOUNDARY),
        args.steps,
        elapsed,
    );
    Ok(())
}
