//! Biharmonic smoothing: two statements per step, a temp Laplacian then its Laplacian.
//!
//! `cargo run --release -p hyperdiffusion2d -- [--size N] [--steps S] [--reference]`

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use example_driver::{Args, describe, report, simulate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse("hyperdiffusion2d", 1024, 200)?;
    let shape = [args.size; 2];
    let mut u = example_driver::bump(&shape, 0.1);
    let params = hyperdiffusion2d::Params { nu: 0.01 };
    let elapsed = simulate(
        &args,
        &describe!(hyperdiffusion2d),
        &shape,
        |reference, k| match reference {
            true => hyperdiffusion2d::reference::run(&mut u, shape, params, k),
            false => hyperdiffusion2d::run(&mut u, shape, params, k),
        },
    )?;
    report(
        u.iter().copied(),
        &describe!(hyperdiffusion2d),
        &shape,
        args.steps,
        elapsed,
    );
    Ok(())
}
