//! The 25-point acoustic wave with absorbing layers: a pulse near the
//! reflecting top surface spreads, reflects off the surface and is damped
//! in the layers along the other faces instead of coming back from them.
//!
//! `cargo run --release -p acoustic_pml -- [--size N] [--steps S] [--reference]`

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use example_driver::{Args, describe, report, simulate};

/// Cells of the absorbing layers along each face but the top (the spec's
/// `[regions]`).
const LAYER: usize = 16;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse("acoustic_pml", 160, 200)?;
    let shape = [args.size; 3];
    // A pulse a quarter of the way down, at rest.
    let mut u: Vec<f32> = pulse(&shape, [shape[0] / 4, shape[1] / 2, shape[2] / 2], 4.0);
    let mut u_prev = u.clone();
    let vel = vec![0.4f32; u.len()];
    let sigma = damping(&shape);
    let elapsed = simulate(&args, &describe!(acoustic_pml), &shape, |reference, k| {
        let run = match reference {
            true => acoustic_pml::reference::run,
            false => acoustic_pml::run,
        };
        run(
            &mut u,
            &mut u_prev,
            &vel,
            &sigma,
            shape,
            acoustic_pml::Params {},
            k,
        )
    })?;
    report(
        u.iter().copied(),
        &describe!(acoustic_pml),
        &shape,
        args.steps,
        elapsed,
    );
    Ok(())
}

/// A Gaussian pulse of `width` cells at `at`.
fn pulse(shape: &[usize; 3], at: [usize; 3], width: f32) -> Vec<f32> {
    let [nz, ny, nx] = *shape;
    let mut u = vec![0.0f32; nz * ny * nx];
    for (c, v) in u.iter_mut().enumerate() {
        let p = [c / (ny * nx), c / nx % ny, c % nx];
        let r2: f32 = p
            .iter()
            .zip(at)
            .map(|(&p, a)| (p as f32 - a as f32).powi(2))
            .sum();
        *v = (-r2 / (width * width)).exp();
    }
    u
}

/// The damping of the layers: 0 inside, growing quadratically to 0.2 a
/// step at the faces the layers line (every face but the top).
fn damping(shape: &[usize; 3]) -> Vec<f32> {
    let [nz, ny, nx] = *shape;
    let depth = |i: usize, n: usize, top: bool| -> usize {
        let from_low = if top { usize::MAX } else { i };
        from_low.min(n - 1 - i)
    };
    (0..nz * ny * nx)
        .map(|c| {
            let (z, y, x) = (c / (ny * nx), c / nx % ny, c % nx);
            let d = depth(z, nz, true)
                .min(depth(y, ny, false))
                .min(depth(x, nx, false));
            if d >= LAYER {
                0.0
            } else {
                let t = (LAYER - d) as f32 / LAYER as f32;
                0.2 * t * t
            }
        })
        .collect()
}
