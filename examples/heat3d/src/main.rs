//! 3-D heat equation with a diffusivity grid (the design brief's example).
//!
//! `cargo run --release -p heat3d -- [--size N] [--steps S] [--reference]`

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use example_driver::{Args, describe, report, simulate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse("heat3d", 256, 100)?;
    let shape = [args.size; 3];
    let mut u = example_driver::bump(&shape, 0.15);
    let kappa: Vec<f64> = example_driver::bump(&shape, 0.4)
        .iter()
        .map(|b| 0.5 + 0.5 * b)
        .collect();
    let params = heat3d::Params { alpha: 0.1 };
    let elapsed = simulate(
        &args,
        &describe!(heat3d),
        &shape,
        |reference, k| match reference {
            true => heat3d::reference::run(&mut u, &kappa, shape, params, k),
            false => heat3d::run(&mut u, &kappa, shape, params, k),
        },
    )?;
    report(
        u.iter().copied(),
        &describe!(heat3d),
        &shape,
        args.steps,
        elapsed,
    );
    Ok(())
}
