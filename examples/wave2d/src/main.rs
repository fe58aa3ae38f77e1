//! Leapfrog wave equation on a periodic 2-D grid: a pulse spreading as a ring.
//!
//! `cargo run --release -p wave2d -- [--size N] [--steps S] [--reference]`

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use example_driver::{Args, describe, report, simulate};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse("wave2d", 2048, 1000)?;
    let shape = [args.size; 2];
    let mut u: Vec<f32> = example_driver::bump(&shape, 0.05)
        .iter()
        .map(|&v| v as f32)
        .collect();
    let mut u_prev = u.clone(); // starts at rest
    let params = wave2d::Params { c2: 0.25 };
    let elapsed = simulate(
        &args,
        &describe!(wave2d),
        &shape,
        |reference, k| match reference {
            true => wave2d::reference::run(&mut u, &mut u_prev, shape, params, k),
            false => wave2d::run(&mut u, &mut u_prev, shape, params, k),
        },
    )?;
    report(
        u.iter().copied(),
        &describe!(wave2d),
        &shape,
        args.steps,
        elapsed,
    );
    Ok(())
}
