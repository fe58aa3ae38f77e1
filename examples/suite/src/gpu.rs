//! The CUDA half of the runner: the bound (a device-to-device `cudaMemcpy`)
//! and every compiled variant, timed with CUDA events.

use std::os::raw::{c_char, c_int};

use crate::report::{Bound, Progress, Row};
use crate::{Options, StencilError, check, middle, pattern};

unsafe extern "C" {
    fn suite_timer_start() -> c_int;
    fn suite_timer_stop(seconds: *mut f64) -> c_int;
    fn suite_copy_seconds(bytes: usize, reps: c_int, seconds: *mut f64) -> c_int;
    fn suite_device_name(name: *mut c_char, len: c_int) -> c_int;
    fn suite_fma_flops(bytes: c_int, flops_per_second: *mut f64) -> c_int;
}

fn cuda(what: &str, code: c_int) -> Result<(), String> {
    match code {
        0 => Ok(()),
        e => Err(format!("{what} failed with CUDA error {e}")),
    }
}

/// The name of the first CUDA device.
fn device_name() -> Result<String, String> {
    let mut buf = [0 as c_char; 256];
    // SAFETY: writes at most `len` bytes, NUL-terminated.
    cuda("cudaGetDeviceProperties", unsafe {
        suite_device_name(buf.as_mut_ptr(), buf.len() as c_int)
    })?;
    // SAFETY: NUL-terminated by the callee.
    Ok(unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

/// GB/s (bytes read + written) of a device-to-device `cudaMemcpy` of `bytes`.
fn copy_bandwidth(bytes: usize, reps: usize) -> Result<f64, String> {
    let mut seconds = 0.0;
    // SAFETY: writes one f64; the function allocates and frees its own buffers.
    cuda("cudaMemcpy bound", unsafe {
        suite_copy_seconds(bytes, reps as c_int, &mut seconds)
    })?;
    Ok(2.0 * bytes as f64 / seconds / 1e9)
}

/// Flops per second of multiply-adds (each two flops) in `bytes`-byte reals.
fn fma_flops(bytes: usize) -> Result<f64, String> {
    let mut flops = 0.0;
    // SAFETY: writes one f64; the function allocates and frees its own buffer.
    cuda("FMA bound", unsafe {
        suite_fma_flops(bytes as c_int, &mut flops)
    })?;
    Ok(flops)
}

/// Runs `run(n)` for `o.warmup` steps, then returns the median seconds of
/// `o.reps` runs of `steps` steps, each timed with CUDA events recorded
/// around what it queues (and its final synchronize).
fn timed(
    o: &Options,
    steps: u64,
    mut run: impl FnMut(u64) -> Result<(), StencilError>,
) -> Result<f64, Box<dyn std::error::Error>> {
    Ok(timed_in_turn(o, steps, 1, |_, n| run(n))?[0])
}

/// [`timed`] for `ways` ways of running the same steps (`run(way, n)`),
/// their runs in turn: after each way's warm-up, `o.reps` rounds of one
/// timed run each, the order rotated every round, so that a device that
/// speeds up or slows down over the rounds favours none. The median
/// seconds of each way.
fn timed_in_turn(
    o: &Options,
    steps: u64,
    ways: usize,
    mut run: impl FnMut(usize, u64) -> Result<(), StencilError>,
) -> Result<Vec<f64>, Box<dyn std::error::Error>> {
    for way in 0..ways {
        run(way, o.warmup)?;
    }
    let mut seconds = vec![Vec::new(); ways];
    for round in 0..o.reps.max(1) {
        for k in 0..ways {
            let way = (round + k) % ways;
            // SAFETY: records an event; the function owns its events.
            cuda("cudaEventRecord", unsafe { suite_timer_start() })?;
            run(way, steps)?;
            let mut s = 0.0;
            // SAFETY: writes one f64.
            cuda("cudaEventElapsedTime", unsafe { suite_timer_stop(&mut s) })?;
            seconds[way].push(s);
        }
    }
    Ok(seconds.into_iter().map(middle).collect())
}

/// GB/s of the `copy2d` stencil kernel (one read, one write per cell) on 16384^2 cells.
macro_rules! copy_kernel {
    ($m:ident, $o:expr) => {{
        use crate::$m as s;
        let n = 16384;
        let mut session = s::cuda::Session::new([n, n])?;
        session.upload(&pattern(n * n, 0), &pattern(n * n, 1))?;
        let seconds = timed($o, 100, |k| {
            session.step(s::Params::default(), k)?;
            session.synchronize()
        })?;
        2.0 * std::mem::size_of::<s::Real>() as f64 * (n * n) as f64 * 100.0 / seconds / 1e9
    }};
}

/// Measures the bound, then every selected variant.
pub fn run(
    o: &Options,
    rows: &mut Vec<Row>,
    bounds: &mut Vec<Bound>,
) -> Result<(), Box<dyn std::error::Error>> {
    let device = device_name()?;
    bounds.push(bound(o, &device)?);
    let mut progress = Progress::new(o, &[]);
    macro_rules! row {
        ($m:ident, $dtype:literal, $stencil:literal, $variant:literal, $set:literal, [$($g:literal),*]) => {
            if o.wants($set, $stencil, $dtype, $variant) {
                use crate::$m as s;
                progress.next(&format!("cuda {}", s::NAME));
                let grids = [$($g),*].len();
                // Params (the random stencils' `p0`, `p1`) at their default, as `Params::default()`.
                let params = vec![s::Real::default(); s::PARAMS.len()];
                // Past two whole time blocks and a partial one, where steps are fused.
                let fused = 3.max(2 * s::cuda::TILING.time_block as u64 + 1);
                check(
                    s::NAME,
                    s::DIMS,
                    grids,
                    s::FLOPS_PER_CELL,
                    fused,
                    |g, shape| s::cuda::run_grids(g, shape, &params, fused),
                    |g, shape| s::reference::run_grids(g, shape, &params, fused),
                )?;
                let shape: [usize; s::DIMS] = o.shape($stencil, s::DIMS, true).try_into().unwrap();
                let cells: usize = shape.iter().product();
                let data: Vec<Vec<s::Real>> = (0..grids).map(|k| pattern(cells, k)).collect();
                let mut session = s::cuda::Session::new(shape)?;
                session.set_graphs(!o.no_graphs);
                session.upload($(&data[$g]),*)?;
                let steps = o.steps(true);
                let calls = Calls {
                    step: |session: &mut s::cuda::Session, k| session.step(s::Params::default(), k),
                    synchronize: s::cuda::Session::synchronize,
                    fusion: s::cuda::Session::fusion,
                    set_fusion: s::cuda::Session::set_fusion,
                    measurement: s::cuda::Session::measurement,
                };
                let t = s::cuda::TILING;
                let named = [$variant, concat!($variant, " fused"), concat!($variant, " single")];
                let ways = time_session(o, &mut session, &calls, &t, steps, named)?;
                let row = Row {
                    backend: "cuda",
                    device: device.clone(),
                    stencil: $stencil,
                    dtype: $dtype,
                    variant: $variant,
                    strategy: String::new(),
                    shape: shape.to_vec(),
                    steps,
                    // Each way's own, set by `push_ways`.
                    seconds: 0.0,
                    bytes: s::BYTES_PER_CELL,
                    flops: s::FLOPS_PER_CELL,
                    radius: s::RADIUS.to_vec(),
                    copy_gbs: None,
                };
                push_ways(o, rows, bounds, row, t.small_steps, ways)?;
            }
        };
    }
    include!(concat!(env!("OUT_DIR"), "/variants.rs"));
    progress.finish();
    Ok(())
}

/// A way a session ran: the row's variant, its strategy, the median seconds.
type Way = (&'static str, String, f64);

/// What the runner calls on a stencil's CUDA session, as plain functions:
/// each stencil's `Session` is a type of its own, generated without a trait
/// in common.
struct Calls<S> {
    step: fn(&mut S, u64) -> Result<(), StencilError>,
    synchronize: fn(&S) -> Result<(), StencilError>,
    fusion: fn(&S) -> crate::Fusion,
    set_fusion: fn(&mut S, crate::Fusion),
    measurement: fn(&S) -> Option<crate::Measurement>,
}

/// Times `steps` steps of `session` (its grids uploaded), named as `named`
/// says (the variant, then its fused and single ways): the way it kept,
/// and with `--both-ways`, where it measured, each way set in turn.
fn time_session<S>(
    o: &Options,
    session: &mut S,
    calls: &Calls<S>,
    t: &crate::GpuTiling,
    steps: u64,
    named: [&'static str; 3],
) -> Result<Vec<Way>, Box<dyn std::error::Error>> {
    // A session that measures fused launches against single steps (`auto`'s fused
    // plans) decides before the timed runs, so that none holds its trial's parts: at
    // most 20 runs of 100 steps, then, where the trial times quick steps in parts of
    // whole graphs, 70 of 2000 (in calls of `--steps-per-call`; the parts run in
    // calls that have the steps for them).
    for (runs, run) in [(20, 100), (70, 2000)] {
        for _ in 0..runs {
            if (calls.fusion)(session) != crate::Fusion::Measure {
                break;
            }
            o.in_calls(run, |k| (calls.step)(session, k))?;
        }
    }
    let seconds = timed(o, steps, |n| {
        o.in_calls(n, |k| (calls.step)(session, k))?;
        (calls.synchronize)(session)
    })?;
    let kept = Measured::Kept((calls.fusion)(session), (calls.measurement)(session));
    let mut ways = vec![(named[0], strategy(t, &kept), seconds)];
    if o.both_ways && (calls.measurement)(session).is_some() {
        let both = [
            (crate::Fusion::Fused, named[1]),
            (crate::Fusion::Single, named[2]),
        ];
        let seconds = timed_in_turn(o, steps, both.len(), |way, n| {
            (calls.set_fusion)(session, both[way].0);
            o.in_calls(n, |k| (calls.step)(session, k))?;
            (calls.synchronize)(session)
        })?;
        for ((way, variant), seconds) in both.into_iter().zip(seconds) {
            ways.push((variant, strategy(t, &Measured::Set(way)), seconds));
        }
    }
    Ok(ways)
}

/// The bound: `cudaMemcpy` device to device of 2 GiB (one 16384^2 f64 grid),
/// our own naive copy kernel (`copy2d`) beside it for reference, and the
/// multiply-adds a second in each dtype.
fn bound(o: &Options, device: &str) -> Result<Bound, Box<dyn std::error::Error>> {
    let gbs = copy_bandwidth(16384 * 16384 * 8, 20)?;
    let (k32, k64) = (copy_kernel!(copy2d_f32, o), copy_kernel!(copy2d_f64, o));
    let flops = [fma_flops(4)?, fma_flops(8)?];
    Ok(Bound {
        backend: "cuda",
        device: device.to_string(),
        what: format!(
            "device-to-device cudaMemcpy of 2 GiB on {device}, CUDA events \
             (our naive copy kernel beside it: {k32:.0} GB/s in f32, {k64:.0} in f64); \
             multiply-adds: chains of 8 a thread, 8 blocks of 256 a multiprocessor"
        ),
        gbs,
        flops,
    })
}

/// Adds a row for each of `ways` (variant, strategy, seconds) timed on the
/// variant `row` describes, its strategy noting small grids' single steps
/// (`small_steps`) and graphs turned off, and saves the report after each.
fn push_ways(
    o: &Options,
    rows: &mut Vec<Row>,
    bounds: &[Bound],
    row: Row,
    small_steps: bool,
    ways: Vec<Way>,
) -> Result<(), Box<dyn std::error::Error>> {
    for (variant, strategy, seconds) in ways {
        let strategy = if small_steps {
            format!("{strategy}; small grids: naive single steps")
        } else {
            strategy
        };
        let strategy = if o.no_graphs {
            format!("{strategy}; no graphs")
        } else {
            strategy
        };
        rows.push(Row {
            variant,
            strategy: o.per_call(strategy),
            seconds,
            ..row.clone()
        });
        crate::report::save(o, rows, bounds)?;
    }
    Ok(())
}

/// How a session ran launches of several steps, for a row's strategy.
enum Measured {
    /// As its plan or its trial decided: `fusion` (`Measure` where it has not
    /// decided yet), with what the trial timed, if it ran.
    Kept(crate::Fusion, Option<crate::Measurement>),
    /// Set with `Session::set_fusion` after the trial (`--both-ways`).
    Set(crate::Fusion),
}

/// A row's strategy and parameters: `t`'s, and for the fused strategies how
/// the session ran launches of several steps.
fn strategy(t: &crate::GpuTiling, measured: &Measured) -> String {
    if t.strategy == "stream" {
        format!(
            "stream {:?}, chunk {}, coarsen {}, vector {}{}",
            t.block,
            t.chunk,
            t.coarsen,
            t.vector,
            if t.small_grids {
                ", small planes: stream [1, 2, 64], chunk 4"
            } else {
                ""
            }
        )
    } else if t.strategy == "temporal" || t.strategy == "persistent" {
        let occupancy = t
            .occupancy
            .map_or(String::new(), |k| format!(", {k} per multiprocessor"));
        let way = |f: &crate::Fusion| match f {
            crate::Fusion::Measure => "launches not yet measured",
            crate::Fusion::Fused => "fused launches",
            crate::Fusion::Single => "single steps",
        };
        let launches = match measured {
            // What the measurement timed, a step: the evidence for its choice.
            Measured::Kept(f, Some(m)) => format!(
                "{} (measured: fused {:.2} us, single {:.2} us a step, parts of {} steps)",
                way(f),
                m.fused.as_secs_f64() * 1e6 / m.steps as f64,
                m.single.as_secs_f64() * 1e6 / m.steps as f64,
                m.steps
            ),
            Measured::Kept(f, None) => way(f).to_string(),
            Measured::Set(f) => format!("{}, set after the trial", way(f)),
        };
        format!(
            "{} {:?}, time_block {}, chunk {}, coarsen {}, vector {}{occupancy}, {launches}",
            t.strategy, t.block, t.time_block, t.chunk, t.coarsen, t.vector
        )
    } else if t.small_grids {
        format!(
            "{} {:?}, small grids: stream in 16-byte vectors",
            t.strategy, t.block
        )
    } else {
        format!("{} {:?}", t.strategy, t.block)
    }
}
