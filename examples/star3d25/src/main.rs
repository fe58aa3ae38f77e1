//! Order-8 3-D diffusion: 25-point star unrolled from `sum` at compile time.
//!
//! `cargo run --release -p star3d25 -- [--size N] [--steps S] [--reference]`

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use example_driver::{Args, describe, report, simulate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse("star3d25", 256, 50)?;
    let shape = [args.size; 3];
    let mut u: Vec<f32> = example_driver::bump(&shape, 0.2)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let params = star3d25::Params { nu: 0.05 };
    let elapsed = simulate(
        &args,
        &describe!(star3d25),
        &shape,
        |reference, k| match reference {
            true => star3d25::reference::run(&mut u, shape, params, k),
            false => star3d25::run(&mut u, shape, params, k),
        },
    )?;
    report(
        u.iter().copied(),
        &describe!(star3d25),
        &shape,
        args.steps,
        elapsed,
    );
    Ok(())
}
