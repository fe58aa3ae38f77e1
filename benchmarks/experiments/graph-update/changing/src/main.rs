//! Calls whose parameter changes every call against calls of one parameter:
//! heat2d f64 (`auto`) on n x n, microseconds a step, median of 5 runs of 40 calls.
include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use std::time::Instant;

fn main() {
    let n: usize = std::env::args().nth(1).map_or(512, |a| a.parse().unwrap());
    let mut s = heat2d::cuda::Session::new([n, n]).unwrap();
    let data: Vec<f64> = (0..n * n).map(|i| ((i * 7919) % 1000) as f64 / 1000.0).collect();
    s.upload(&data).unwrap();
    for _ in 0..90 {
        if s.fusion() != Fusion::Measure {
            break;
        }
        s.step(heat2d::Params { alpha: 0.1 }, 2000).unwrap();
    }
    for steps in [48u64, 96, 480] {
        for changing in [false, true] {
            let mut t: Vec<f64> = (0..5)
                .map(|run| {
                    s.synchronize().unwrap();
                    let t0 = Instant::now();
                    for call in 0..40u64 {
                        let alpha = if changing { 0.1 + 0.001 * ((run * 40 + call) % 8) as f64 } else { 0.1 };
                        s.step(heat2d::Params { alpha }, steps).unwrap();
                    }
                    s.synchronize().unwrap();
                    t0.elapsed().as_secs_f64() / (40 * steps) as f64 * 1e6
                })
                .collect();
            t.sort_by(f64::total_cmp);
            println!(
                "{n}^2 calls of {steps:3} steps, {}: {:.3} us a step (captures {}, replays {})",
                if changing { "alpha changing every call (8 values)" } else { "one alpha                          " },
                t[2],
                s.captures(),
                s.replays()
            );
        }
    }
    println!("fusion: {:?}", s.fusion());
}
