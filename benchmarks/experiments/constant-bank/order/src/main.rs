//! Order test: j2d9pt f64 `naive` against `auto` on small grids, sessions made in both orders.
include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use std::time::Instant;

macro_rules! session {
    ($m:ident, $n:expr) => {{
        let n = $n;
        let mut s = $m::cuda::Session::new([n, n]).unwrap();
        let data: Vec<f64> = (0..n * n).map(|i| ((i * 7919) % 1000) as f64 / 1000.0).collect();
        s.upload(&data).unwrap();
        for _ in 0..90 {
            if s.fusion() != Fusion::Measure {
                break;
            }
            s.step($m::Params {}, 2000).unwrap();
        }
        s.step($m::Params {}, 10).unwrap();
        s.synchronize().unwrap();
        s
    }};
}

macro_rules! time {
    ($m:ident, $s:expr, $steps:expr) => {{
        let mut t: Vec<f64> = (0..5)
            .map(|_| {
                let t0 = Instant::now();
                $s.step($m::Params {}, $steps).unwrap();
                $s.synchronize().unwrap();
                t0.elapsed().as_secs_f64() / $steps as f64 * 1e6
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[2]
    }};
}

fn main() {
    let n: usize = std::env::args().nth(1).map_or(512, |a| a.parse().unwrap());
    println!("grid {n}^2, us a step, median of 5 calls of 1000 steps");
    // Fresh sessions, one at a time, alternating.
    for round in 0..3 {
        let mut a = session!(j2d9a, n);
        let ta = time!(j2d9a, a, 1000);
        let label = format!("{:?}", a.measurement());
        drop(a);
        let mut b = session!(j2d9n, n);
        let tn = time!(j2d9n, b, 1000);
        drop(b);
        println!("round {round} (auto first): auto {ta:.3} naive {tn:.3}  {label}");
        let mut b = session!(j2d9n, n);
        let tn = time!(j2d9n, b, 1000);
        drop(b);
        let mut a = session!(j2d9a, n);
        let ta = time!(j2d9a, a, 1000);
        drop(a);
        println!("round {round} (naive first): auto {ta:.3} naive {tn:.3}");
    }
    // Both alive; auto forced to single steps.
    let mut a = session!(j2d9a, n);
    let mut b = session!(j2d9n, n);
    let mut s = session!(j2d9a, n);
    s.set_fusion(Fusion::Single);
    for round in 0..3 {
        let ta = time!(j2d9a, a, 1000);
        let tn = time!(j2d9n, b, 1000);
        let ts = time!(j2d9a, s, 1000);
        println!("round {round} (all alive): auto {ta:.3} naive {tn:.3} auto-single {ts:.3}");
    }
    let ta = time!(j2d9a, a, 10000);
    let tn = time!(j2d9n, b, 10000);
    let ts = time!(j2d9a, s, 10000);
    println!("calls of 10000: auto {ta:.3} naive {tn:.3} auto-single {ts:.3}");
}
