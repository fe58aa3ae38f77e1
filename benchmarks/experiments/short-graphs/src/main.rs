//! Calls of fewer than 48 launches, or with a rest of fewer past their whole
//! graphs: microseconds a step (median of 5 runs of 40 calls, after 3 calls
//! of the same steps), for heat3n (`naive`, one launch a step) on 48^3 and
//! heat2d f64 (`auto`, fused launches) on 512^2; then calls whose steps
//! change every call (17 to 40 steps in turn), where no run repeats soon.
include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use std::time::Instant;

macro_rules! calls {
    ($s:expr, $params:expr, $label:expr, $steps:expr) => {{
        let steps = |call: u64| -> u64 { $steps(call) };
        for call in 0..3 {
            $s.step($params, steps(call)).unwrap();
        }
        let mut total = 0;
        let mut t: Vec<f64> = (0..5)
            .map(|_| {
                $s.synchronize().unwrap();
                let t0 = Instant::now();
                let mut ran = 0;
                for call in 0..40 {
                    $s.step($params, steps(call)).unwrap();
                    ran += steps(call);
                }
                $s.synchronize().unwrap();
                total = ran;
                t0.elapsed().as_secs_f64() / ran as f64 * 1e6
            })
            .collect();
        t.sort_by(f64::total_cmp);
        println!(
            "{:<44}: {:.3} us a step ({} steps a run; replays {}, captures {})",
            $label, t[2], total, $s.replays(), $s.captures()
        );
    }};
}

fn main() {
    let n = 48;
    let data: Vec<f64> = (0..n * n * n).map(|i| ((i * 7919) % 1000) as f64 / 1000.0).collect();
    let p3 = heat3n::Params { alpha: 0.1 };
    for steps in [8u64, 16, 24, 40] {
        let mut s = heat3n::cuda::Session::new([n, n, n]).unwrap();
        s.upload(&data).unwrap();
        calls!(s, p3, format!("heat3n 48^3 calls of {steps}"), |_| steps);
    }
    let mut s = heat3n::cuda::Session::new([n, n, n]).unwrap();
    s.upload(&data).unwrap();
    calls!(s, p3, "heat3n 48^3 calls of 17-40 in turn", |c: u64| 17 + c % 24);

    let m = 512;
    let data: Vec<f64> = (0..m * m).map(|i| ((i * 7919) % 1000) as f64 / 1000.0).collect();
    let p2 = heat2d::Params { alpha: 0.1 };
    let mut s = heat2d::cuda::Session::new([m, m]).unwrap();
    s.upload(&data).unwrap();
    while s.fusion() == Fusion::Measure {
        s.step(p2, 2000).unwrap();
    }
    s.set_fusion(Fusion::Fused);
    for steps in [96u64, 480] {
        calls!(s, p2, format!("heat2d 512^2 fused, calls of {steps}"), |_| steps);
    }
    calls!(s, p2, "heat2d 512^2 fused, calls of 17-40 in turn", |c: u64| 17 + c % 24);
}
