//! The GPU half of the runner.

use std::fmt::Write as _;

use super::*;

/// Options: `--steps N --reps R --json PATH`.
struct Options {
    steps: u64,
    reps: usize,
    json: Option<String>,
    filter: Option<String>,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        steps: 100,
        reps: 5,
        json: None,
        filter: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--steps" => o.steps = value()?.parse().map_err(|e| format!("--steps: {e}"))?,
            "--reps" => o.reps = value()?.parse().map_err(|e| format!("--reps: {e}"))?,
            "--json" => o.json = Some(value()?),
            "--filter" => o.filter = Some(value()?),
            other => {
                return Err(format!(
                    "unknown argument `{other}`; use --steps N --reps R --json PATH"
                ));
            }
        }
    }
    Ok(o)
}

/// One measured configuration.
struct Row {
    stencil: &'static str,
    dtype: &'static str,
    variant: &'static str,
    strategy: &'static str,
    block: &'static [usize],
    chunk: usize,
    coarsen: usize,
    vector: usize,
    shape: Vec<usize>,
    steps: u64,
    seconds: f64,
    gcells: f64,
    gbs: f64,
}

/// Deterministic, non-trivial values.
fn pattern<T: From<f32>>(cells: usize) -> Vec<T> {
    (0..cells)
        .map(|c| T::from(((c * 7919) % 1000) as f32 / 1000.0))
        .collect()
}

/// The median of `reps` runs of `f`, in seconds of GPU time (CUDA events
/// recorded around what `f` queues).
fn median(
    reps: usize,
    mut f: impl FnMut() -> Result<(), StencilError>,
) -> Result<f64, Box<dyn std::error::Error>> {
    let mut t = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        // SAFETY: records an event; the function owns its events.
        event_check(unsafe { suite_timer_start() })?;
        f()?;
        let mut seconds = 0.0;
        // SAFETY: writes one f64.
        event_check(unsafe { suite_timer_stop(&mut seconds) })?;
        t.push(seconds);
    }
    t.sort_by(f64::total_cmp);
    Ok(t[t.len() / 2])
}

fn event_check(code: std::os::raw::c_int) -> Result<(), String> {
    match code {
        0 => Ok(()),
        e => Err(format!("CUDA event timing failed with CUDA error {e}")),
    }
}

/// Runs `run(n)` (n steps, then a synchronize) for 10 warm-up steps, then
/// returns the median seconds of `o.reps` runs of `o.steps` steps.
fn timed(
    o: &Options,
    mut run: impl FnMut(u64) -> Result<(), StencilError>,
) -> Result<f64, Box<dyn std::error::Error>> {
    run(10)?;
    median(o.reps, || run(o.steps))
}

macro_rules! check_and_time {
    ($m:ident, $dtype:literal, $stencil:literal, $variant:literal, $o:expr, $rows:expr) => {
        // A closure, so that a variant the filter leaves out returns from it alone.
        (|| -> Result<(), Box<dyn std::error::Error>> {
            use $m as s;
            if $o
                .filter
                .as_ref()
                .is_some_and(|f| !s::NAME.contains(f.as_str()))
            {
                return Ok(());
            }
            // Correctness first: the GPU result against the reference on a small odd grid.
            let small: Vec<usize> = [29usize, 45, 133][3 - s::DIMS..].to_vec();
            let cells: usize = small.iter().product();
            let (mut a, mut b) = (pattern(cells), pattern(cells));
            s::cuda::run(&mut a, small.clone().try_into().unwrap(), s::Params {}, 3)?;
            s::reference::run(&mut b, small.clone().try_into().unwrap(), s::Params {}, 3)?;
            let worst = a
                .iter()
                .zip(&b)
                .map(|(x, y)| (f64::from(*x) - f64::from(*y)).abs())
                .fold(0.0, f64::max);
            assert!(
                worst < 1e-4,
                "{}: differs from the reference by {worst}",
                s::NAME
            );
            // The suite's sizes (SUITE.md; 16384^2 as in ANCHORS.md): 1 GiB to 2 GiB per grid.
            let shape = [if s::DIMS == 2 { 16384 } else { 512 }; s::DIMS];
            let cells: usize = shape.iter().product();
            let mut session = s::cuda::Session::new(shape)?;
            session.upload(&pattern(cells))?;
            let seconds = timed(&$o, |n| {
                session.step(s::Params {}, n)?;
                session.synchronize()
            })?;
            let updated: usize = shape
                .iter()
                .zip(s::RADIUS)
                .map(|(n, r)| n - 2 * r)
                .product();
            let per_step = seconds / $o.steps as f64;
            let size = if $dtype == "f32" { 4.0 } else { 8.0 };
            $rows.push(Row {
                stencil: $stencil,
                dtype: $dtype,
                variant: $variant,
                strategy: s::cuda::TILING.strategy,
                block: s::cuda::TILING.block,
                chunk: s::cuda::TILING.chunk,
                coarsen: s::cuda::TILING.coarsen,
                vector: s::cuda::TILING.vector,
                shape: shape.to_vec(),
                steps: $o.steps,
                seconds,
                gcells: updated as f64 / per_step / 1e9,
                gbs: 2.0 * size * updated as f64 / per_step / 1e9,
            });
            eprintln!(
                "  {}: {:.1} GCells/s",
                s::NAME,
                $rows.last().unwrap().gcells
            );
            Ok(())
        })()?;
    };
}

unsafe extern "C" {
    fn suite_timer_start() -> std::os::raw::c_int;
    fn suite_timer_stop(seconds: *mut f64) -> std::os::raw::c_int;
    fn suite_copy_seconds(
        bytes: usize,
        reps: std::os::raw::c_int,
        seconds: *mut f64,
    ) -> std::os::raw::c_int;
}

/// GB/s (bytes read + written) of a device-to-device `cudaMemcpy` of `bytes`.
fn copy_bandwidth(bytes: usize, reps: usize) -> Result<f64, String> {
    let mut seconds = 0.0;
    // SAFETY: writes one f64; the function allocates and frees its own buffers.
    let code = unsafe { suite_copy_seconds(bytes, reps as std::os::raw::c_int, &mut seconds) };
    if code != 0 {
        return Err(format!("cudaMemcpy bound failed with CUDA error {code}"));
    }
    Ok(2.0 * bytes as f64 / seconds / 1e9)
}

/// GB/s of the `copy2d` stencil kernel (one read, one write per cell) on `n` x `n` cells.
macro_rules! copy_kernel {
    ($m:ident, $n:expr, $o:expr) => {{
        use $m as s;
        let shape = [$n, $n];
        let cells = $n * $n;
        let mut session = s::cuda::Session::new(shape)?;
        session.upload(&pattern(cells), &pattern(cells))?;
        let seconds = timed(&$o, |n| {
            session.step(s::Params {}, n)?;
            session.synchronize()
        })?;
        let size = std::mem::size_of::<s::Real>() as f64;
        2.0 * size * cells as f64 * $o.steps as f64 / seconds / 1e9
    }};
}

pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o = options()?;
    eprintln!("CUDA devices: {}", cuda_device_count()?);
    // The bound: cudaMemcpy device to device of one 16384^2 f64 grid (2 GiB), and our own
    // naive copy kernel (`copy2d`) beside it for reference.
    let memcpy = copy_bandwidth(16384 * 16384 * 8, 20)?;
    let kernel32 = copy_kernel!(copy2d_f32, 16384, o);
    let kernel64 = copy_kernel!(copy2d_f64, 16384, o);
    eprintln!(
        "bound: cudaMemcpy D2D {memcpy:.0} GB/s; copy kernel {kernel32:.0} GB/s (f32), {kernel64:.0} GB/s (f64)"
    );
    let (bound32, bound64) = (memcpy, memcpy);
    let mut rows: Vec<Row> = Vec::new();
    include!(concat!(env!("OUT_DIR"), "/variants.rs"));
    let mut table = String::from(
        "| stencil | dtype | shape | variant | strategy | block | GCells/s | GB/s (1 step) | bound GB/s | of bound | vs naive |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut json = String::from("[\n");
    for r in &rows {
        let bound = if r.dtype == "f32" { bound32 } else { bound64 };
        let naive = rows
            .iter()
            .find(|n| n.stencil == r.stencil && n.dtype == r.dtype && n.variant == "naive")
            .map_or(f64::NAN, |n| n.gcells);
        writeln!(
            table,
            "| {} | {} | {:?} | {} | {} | {:?}{} | {:.1} | {:.0} | {:.0} | {:.1}% | {:.2}x |",
            r.stencil,
            r.dtype,
            r.shape,
            r.variant,
            r.strategy,
            r.block,
            if r.strategy == "stream" {
                format!(
                    ", chunk {}, coarsen {}, vector {}",
                    r.chunk, r.coarsen, r.vector
                )
            } else {
                String::new()
            },
            r.gcells,
            r.gbs,
            bound,
            100.0 * r.gbs / bound,
            r.gcells / naive
        )?;
        writeln!(
            json,
            "  {{\"stencil\": \"{}\", \"dtype\": \"{}\", \"shape\": {:?}, \"variant\": \"{}\", \"strategy\": \"{}\", \"block\": {:?}, \"chunk\": {}, \"coarsen\": {}, \"vector\": {}, \"steps\": {}, \"reps\": {}, \"median_s\": {:.6}, \"gcells_per_s\": {:.3}, \"gb_per_s\": {:.1}, \"bound_gb_per_s\": {:.1}, \"fraction_of_bound\": {:.4}, \"speedup_vs_naive\": {:.3}}},",
            r.stencil,
            r.dtype,
            r.shape,
            r.variant,
            r.strategy,
            r.block,
            r.chunk,
            r.coarsen,
            r.vector,
            r.steps,
            o.reps,
            r.seconds,
            r.gcells,
            r.gbs,
            bound,
            r.gbs / bound,
            r.gcells / naive
        )?;
    }
    let json = json.trim_end_matches(",\n").to_string() + "\n]\n";
    println!("{table}");
    if let Some(path) = &o.json {
        std::fs::write(path, json)?;
    }
    Ok(())
}
