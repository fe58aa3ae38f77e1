//! 3-D heat equation with a diffusivity grid (the design brief's example).
//!
//! `cargo run --release -p heat3d -- [--size N] [--steps S] [--reference]`

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use example_driver::{Args, report, run_steps, updated_cells};
use heat3d as st;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse("heat3d", 256, 100)?;
    let shape = [args.size; 3];
    let mut u = example_driver::bump(&shape, 0.15);
    let kappa: Vec<f64> = example_driver::bump(&shape, 0.4)
        .iter()
        .map(|b| 0.5 + 0.5 * b)
        .collect();
    let params = st::Params { alpha: 0.1 };
    println!(
        "heat3d: {} grid {shape:?}, {} steps, backend {}, {} points, {} flops per cell",
        st::BOUNDARY,
        args.steps,
        args.backend(st::BACKEND),
        st::POINTS,
        st::FLOPS_PER_CELL
    );
    #[cfg(feature = "openmp")]
    println!("OpenMP threads: {}", openmp_max_threads());
    let elapsed = run_steps(args.steps, |k| match args.reference {
        true => st::reference::run(&mut u, &kappa, shape, params, k),
        false => st::run(&mut u, &kappa, shape, params, k),
    })?;
    report(
        u.iter().map(|&v| f64::from(v)),
        updated_cells(&shape, &st::RADIUS, st::BOUNDARY),
        args.steps,
        elapsed,
    );
    Ok(())
}
