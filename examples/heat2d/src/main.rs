//! 2-D heat equation: a hot bump spreading out between edges held at their value.
//!
//! `cargo run --release -p heat2d -- [--size N] [--steps S] [--reference]`

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use example_driver::{Args, describe, report, simulate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse("heat2d", 2048, 500)?;
    let shape = [args.size; 2];
    let mut u = example_driver::bump(&shape, 0.1);
    let params = heat2d::Params { alpha: 0.2 };
    let elapsed = simulate(
        &args,
        &describe!(heat2d),
        &shape,
        |reference, k| match reference {
            true => heat2d::reference::run(&mut u, shape, params, k),
            false => heat2d::run(&mut u, shape, params, k),
        },
    )?;
    report(
        u.iter().copied(),
        &describe!(heat2d),
        &shape,
        args.steps,
        elapsed,
    );
    Ok(())
}
