//! What `auto`'s trial (`Fusion::Measure`) decides on a small grid, against
//! both ways timed in the same process: heat2d and j2d5pt f64 on n x n, the
//! trial's measurement, then calls of 480 steps with `Fusion::Fused` and
//! `Fusion::Single` alternately (median of 5 runs of 40 calls, two rounds).
include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use std::time::Instant;

macro_rules! check {
    ($module:ident, $params:expr, $n:expr) => {{
        let n: usize = $n;
        let mut s = $module::cuda::Session::new([n, n]).unwrap();
        let data: Vec<f64> = (0..n * n).map(|i| ((i * 7919) % 1000) as f64 / 1000.0).collect();
        s.upload(&data).unwrap();
        let mut calls = 0;
        while s.fusion() == Fusion::Measure && calls < 90 {
            s.step($params, 2000).unwrap();
            calls += 1;
        }
        let m = s.measurement().unwrap();
        let decided = s.fusion();
        let mut line = format!(
            "{} {n}^2: trial {:?} ({} steps a part: fused {:.1} us, single {:.1} us, {:.3}x)",
            stringify!($module),
            decided,
            m.steps,
            m.fused.as_secs_f64() * 1e6,
            m.single.as_secs_f64() * 1e6,
            m.single.as_secs_f64() / m.fused.as_secs_f64()
        );
        for _round in 0..2 {
            for way in [Fusion::Fused, Fusion::Single] {
                s.set_fusion(way);
                let mut t: Vec<f64> = (0..5)
                    .map(|_| {
                        s.synchronize().unwrap();
                        let t0 = Instant::now();
                        for _ in 0..40 {
                            s.step($params, 480).unwrap();
                        }
                        s.synchronize().unwrap();
                        t0.elapsed().as_secs_f64() / (40.0 * 480.0) * 1e6
                    })
                    .collect();
                t.sort_by(f64::total_cmp);
                line += &format!(" | {:?} {:.3}", way, t[2]);
            }
        }
        println!("{line} us a step");
    }};
}

fn main() {
    let n: usize = std::env::args().nth(1).map_or(512, |a| a.parse().unwrap());
    check!(heat2d, heat2d::Params { alpha: 0.1 }, n);
    check!(j2d5pt, j2d5pt::Params {}, n);
}
