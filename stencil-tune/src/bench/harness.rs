//! stencil-tune's benchmark, generated: checks each candidate plan against
//! the reference on a small odd grid, times it at the tuning shape, and
//! appends the outcome to the results file (skipping candidates it holds).

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

use std::io::Write as _;
use std::time::{Duration, Instant};

/// A candidate's measurement: GCells/s over `steps` steps, the median of
/// `reps` runs, or why it was not timed. The third argument is the fastest
/// rate of the stencil so far: a candidate whose first run is far below it
/// is not timed further.
type Measure = fn(u64, usize, f64) -> Result<f64, String>;

/// A candidate whose probe or warm-up run is this many times slower than
/// the stencil's fastest so far keeps that run's rate: it cannot win, and
/// the slowest plans would otherwise take most of a search's time.
const CUT: f64 = 4.0;

/// Steps of the probe that a candidate runs before its warm-up: enough to
/// see a plan many times slower than the fastest (on AN5D's box of radius
/// 3, `stream` ran 60 times slower, and its warm-up of 100 steps took 25 s
/// a candidate), too few to cost the others anything.
const PROBE: u64 = 4;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let number = |name: &str, default: u64| arg(name).and_then(|v| v.parse().ok()).unwrap_or(default);
    let (steps, reps) = (number("--steps", 1000), number("--reps", 3) as usize);
    let results = arg("--results").unwrap_or_else(|| "results.tsv".into());
    let deadline = arg("--seconds")
        .and_then(|s| s.parse().ok())
        .map(|s| Instant::now() + Duration::from_secs(s));
    let done: Vec<String> = std::fs::read_to_string(&results)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split('\t').next().map(str::to_string))
        .collect();
    let device = match device() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("no device: {e}");
            std::process::exit(1);
        }
    };
    eprintln!("device: {device}");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&results)
        .unwrap_or_else(|e| panic!("{results}: {e}"));
    let mut fastest: std::collections::HashMap<&str, f64> = std::collections::HashMap::new();
    for (k, (id, stencil, measure)) in CANDIDATES.iter().enumerate() {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            eprintln!("the time budget is spent");
            break;
        }
        if !done.iter().any(|d| d == id) {
            let started = Instant::now();
            let best = fastest.entry(stencil).or_insert(0.0);
            let (status, gcells) = match measure(steps, reps, *best) {
                Ok(g) => {
                    *best = best.max(g);
                    ("ok".to_string(), g)
                }
                Err(why) => (why.replace(['\t', '\n'], " "), 0.0),
            };
            let seconds = started.elapsed().as_secs_f64();
            let line = format!("{id}\t{stencil}\t{}\t{}\t{status}\t{gcells:.3}\t{seconds:.3}\n", device.name, device.arch);
            file.write_all(line.as_bytes()).and_then(|()| file.flush()).expect("the results file takes a line");
        }
        eprintln!("done {}", k + 1);
    }
}

/// The device the candidates run on.
fn device() -> Result<::stencil_rt::gpu::Device, StencilError> {
    #[cfg(feature = "cuda")]
    return stencil_cuda::device();
    #[cfg(not(feature = "cuda"))]
    return stencil_hip::device();
}

/// Each grid of `grids` as a slice.
fn slices<T>(grids: &mut [Vec<T>]) -> Vec<&mut [T]> {
    grids.iter_mut().map(Vec::as_mut_slice).collect()
}

/// Uniform values in [0.5, 1.5) from `seed` (splitmix64).
fn random<T: From<f32>>(cells: usize, seed: u64) -> Vec<T> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    (0..cells)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            T::from(0.5 + (z >> 40) as f32 / (1u64 << 24) as f32)
        })
        .collect()
}

/// The timing grids of `stencil` on `cells` cells: the same random values
/// for each of its candidates, drawn once (the candidates of a stencil run
/// one after another, so only the last stencil's grids are kept).
fn timing_data<T: From<f32> + 'static>(stencil: &str, grids: usize, cells: usize) -> std::rc::Rc<Vec<Vec<T>>> {
    use std::any::Any;
    use std::cell::RefCell;
    use std::rc::Rc;
    thread_local! {
        static LAST: RefCell<Option<(String, Rc<dyn Any>)>> = const { RefCell::new(None) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((name, data)) = last.as_ref() {
            if name == stencil {
                if let Ok(data) = Rc::clone(data).downcast::<Vec<Vec<T>>>() {
                    return data;
                }
            }
        }
        *last = None;
        let data: Rc<Vec<Vec<T>>> = Rc::new((0..grids).map(|k| random(cells, k as u64)).collect());
        *last = Some((stencil.to_string(), data.clone()));
        data
    })
}

/// An odd grid of about 40 cells an axis, at least `min`.
fn small_shape(min: &[usize]) -> Vec<usize> {
    min.iter().enumerate().map(|(a, &m)| m.max(37 + 2 * a)).collect()
}

/// `Err` where `got` differs from `want` by more than 16 epsilons a flop
/// and step, relative to the largest value (the test suite's tolerance).
fn compare<T: Copy + Into<f64>>(got: &[Vec<T>], want: &[Vec<T>], epsilon: f64, flops: usize, steps: u64) -> Result<(), String> {
    let allowed = 16.0 * epsilon * (flops as f64 + 2.0) * steps as f64;
    for (g, w) in got.iter().zip(want) {
        let scale = w.iter().map(|&v| v.into().abs()).fold(1.0, f64::max);
        let worst = g
            .iter()
            .zip(w)
            .map(|(&a, &b)| {
                let (a, b): (f64, f64) = (a.into(), b.into());
                if a.is_nan() || b.is_nan() { f64::INFINITY } else { (a - b).abs() / scale }
            })
            .fold(0.0, f64::max);
        if worst > allowed {
            return Err(format!("wrong: differs from the reference by {worst:e} (allowed {allowed:e})"));
        }
    }
    Ok(())
}

/// The median of `seconds`.
fn median(mut seconds: Vec<f64>) -> f64 {
    seconds.sort_by(f64::total_cmp);
    seconds[seconds.len() / 2]
}

/// Checks module `$m`'s `$backend` plan against module `$r`'s reference (the
/// same stencil's), then times a session of it on `$shape`, uploading the
/// grids `$g`.
macro_rules! measure {
    ($m:ident, $r:ident, $backend:ident, $stencil:literal, [$($g:literal),*], [$($n:literal),*], $steps:expr, $reps:expr, $fastest:expr) => {{
        use $m as s;
        let err = |e: StencilError| e.to_string();
        let params: Vec<s::Real> = vec![0.1 as s::Real; s::PARAMS.len()];
        let check_shape = small_shape(&s::MIN_SHAPE);
        let check_steps = 2 * s::$backend::TILING.time_block as u64 + 1;
        let cells: usize = check_shape.iter().product();
        let mut want: Vec<Vec<s::Real>> = (0..s::GRIDS.len()).map(|k| random(cells, k as u64)).collect();
        let mut got = want.clone();
        $r::reference::run_grids(&mut slices(&mut want), &check_shape, &params, check_steps).map_err(err)?;
        s::$backend::run_grids(&mut slices(&mut got), &check_shape, &params, check_steps).map_err(err)?;
        compare(&got, &want, s::Real::EPSILON as f64, s::FLOPS_PER_CELL, check_steps)?;
        let shape = [$($n),*];
        let cells: usize = shape.iter().product();
        let data = timing_data::<s::Real>($stencil, s::GRIDS.len(), cells);
        let mut session = s::$backend::Session::new(shape).map_err(err)?;
        session.upload($(&data[$g]),*).map_err(err)?;
        // A session that measures fused launches against single steps decides first.
        for _ in 0..20 {
            if session.fusion() != ::stencil_rt::gpu::Fusion::Measure {
                break;
            }
            session.step(s::Params::default(), 100).map_err(err)?;
        }
        let mut run = |steps: u64| -> Result<f64, String> {
            session.synchronize().map_err(err)?;
            let start = Instant::now();
            session.step(s::Params::default(), steps).map_err(err)?;
            session.synchronize().map_err(err)?;
            Ok(start.elapsed().as_secs_f64())
        };
        let rate = |seconds: f64, steps: u64| cells as f64 * steps as f64 / seconds / 1e9;
        // The probe, then the warm-up: a plan far slower than the fastest stops at either.
        for steps in [$steps.min(PROBE), $steps.min(100)] {
            let first = rate(run(steps)?, steps);
            if first * CUT < $fastest {
                return Ok(first);
            }
        }
        let seconds = (0..$reps.max(1)).map(|_| run($steps)).collect::<Result<Vec<_>, _>>()?;
        Ok(rate(median(seconds), $steps))
    }};
}
