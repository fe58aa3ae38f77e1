//! The OpenMP half of the runner: the bound (a STREAM-like copy through the
//! `copy2d` stencil's OpenMP kernel) and the OpenMP kernels of the `naive`
//! variant (one parallel loop over rows, no cache blocking, single steps)
//! and of `auto` (the default cache blocks, fused steps where the stencil
//! allows them), timed with a monotonic clock. Each row's timed runs
//! alternate with copies, whose bandwidth is that row's memory bound. Each
//! holds its scratch grids in a `Workspace` from its warm-up on, so that
//! the timed runs allocate nothing.

use std::time::Instant;

use crate::report::{Bound, Progress, Row};

use crate::{Options, StencilError, check, median, pattern};

/// The FMA throughput kernels of `src/bound.c`, built for the target and,
/// on x86-64, for each instruction-set level the OpenMP kernels have a
/// copy for (`build.rs`).
macro_rules! fma_kernels {
    ($($f32:ident, $f64:ident;)*) => {
        #[allow(non_snake_case)]
        unsafe extern "C" {
            $(
                fn $f32(iters: std::os::raw::c_long) -> f64;
                fn $f64(iters: std::os::raw::c_long) -> f64;
            )*
        }
    };
}
fma_kernels! {
    suite_fma_flops_f32, suite_fma_flops_f64;
}
#[cfg(target_arch = "x86_64")]
fma_kernels! {
    suite_fma_flops_f32__x86_64_v3, suite_fma_flops_f64__x86_64_v3;
    suite_fma_flops_f32__x86_64_v4, suite_fma_flops_f64__x86_64_v4;
}

/// Flops per second of multiply-adds in f32 and f64 on every thread, at
/// the instruction-set level the OpenMP kernels run at.
fn fma_flops() -> [f64; 2] {
    use stencil_rt::openmp::{Isa, isa};
    let iters = 1 << 22;
    // SAFETY: pure functions of their argument (they time their own loops),
    // each level's run only where the processor has it (`isa` is at most
    // the level detected).
    unsafe {
        match isa() {
            #[cfg(target_arch = "x86_64")]
            Isa::X86_64V4 => [
                suite_fma_flops_f32__x86_64_v4(iters),
                suite_fma_flops_f64__x86_64_v4(iters),
            ],
            #[cfg(target_arch = "x86_64")]
            Isa::X86_64V3 => [
                suite_fma_flops_f32__x86_64_v3(iters),
                suite_fma_flops_f64__x86_64_v3(iters),
            ],
            _ => [suite_fma_flops_f32(iters), suite_fma_flops_f64(iters)],
        }
    }
}

/// The variants with their own OpenMP tiling (the others share `auto`'s).
const VARIANTS: &[&str] = &["naive", "auto"];

/// The CPU model, the threads OpenMP may use and the instruction-set level
/// its kernels run at.
fn device_name() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "CPU".into());
    let threads = crate::openmp_max_threads();
    let isa = stencil_rt::openmp::isa();
    format!("{model}, {threads} threads, {isa}")
}

/// `strategy` as a row reports it where `--threads` runs several counts:
/// with the count it ran at.
fn with_threads(o: &Options, strategy: String) -> String {
    if o.threads.is_empty() {
        strategy
    } else {
        format!("{strategy}; {} threads", crate::openmp_max_threads())
    }
}

/// What an OpenMP tiling does, as the report names it.
fn openmp_strategy(t: &stencil_rt::openmp::OpenmpTiling) -> String {
    use stencil_rt::openmp::WHOLE_AXIS;
    match (t.time_block, t.block) {
        (1, [rest @ .., last]) if *last >= WHOLE_AXIS && rest.iter().all(|&b| b == 1) => {
            "rows, a step at a time".into()
        }
        // A block spanning the slowest axis of a 3-D grid: bands of rows
        // marching it (the generated kernels' `planes`).
        (1, [planes, rows, _]) if *planes >= WHOLE_AXIS => {
            format!("bands of {rows} rows marching the slowest axis, a step at a time")
        }
        (1, block) => {
            let extents: Vec<String> = block
                .iter()
                .map(|&b| {
                    if b >= WHOLE_AXIS {
                        "all".into()
                    } else {
                        b.to_string()
                    }
                })
                .collect();
            format!("cache blocks [{}]", extents.join(", "))
        }
        (n, [planes, rows, _]) => format!("tiles of {planes} x {rows}, up to {n} steps a sweep"),
        (n, _) => format!("bands of rows, up to {n} steps a sweep"),
    }
}

/// The bound's copy: `copy2d` (v -> u, one read and one write per cell) on
/// two f64 grids of the run's 2-D extent, so that it meets the same level
/// of the memory hierarchy as the stencils (the default 8192^2: 2 x 512
/// MiB, beyond a server's L3; at 4096^2 a 300 MiB L3 held both grids).
struct BoundCopy {
    n: usize,
    u: Vec<f64>,
    v: Vec<f64>,
    work: crate::copy2d_f64::Workspace,
}

impl BoundCopy {
    fn new(o: &Options) -> Self {
        let n = o.shape("copy2d", 2, false)[0];
        BoundCopy {
            n,
            u: pattern(n * n, 0),
            v: pattern(n * n, 1),
            work: crate::copy2d_f64::Workspace::new(),
        }
    }

    /// Copies `steps` times.
    fn run(&mut self, steps: u64) -> Result<(), StencilError> {
        let params = crate::copy2d_f64::Params {};
        let shape = [self.n, self.n];
        crate::copy2d_f64::openmp::run_in(
            &mut self.work,
            &mut self.u,
            &self.v,
            shape,
            params,
            steps,
        )
    }

    /// GB/s of `steps` copies in `seconds`.
    fn gbs(&self, steps: u64, seconds: f64) -> f64 {
        2.0 * 8.0 * (self.n * self.n) as f64 * steps as f64 / seconds / 1e9
    }
}

/// Seconds of `run(steps)`.
fn seconds(
    steps: u64,
    run: &mut impl FnMut(u64) -> Result<(), StencilError>,
) -> Result<f64, StencilError> {
    let start = Instant::now();
    run(steps)?;
    Ok(start.elapsed().as_secs_f64())
}

/// Runs `run(n)` for `o.warmup` steps, then `o.reps` runs of `steps` steps,
/// each after `steps` copies, and returns the median wall seconds of the
/// runs and the median GB/s of the copies between them: a bound taken in the
/// same seconds as the row, which this shared machine's drift in bandwidth
/// (up to 1.3x between invocations) falls on alike.
fn timed_beside_copies(
    o: &Options,
    steps: u64,
    copy: &mut BoundCopy,
    mut run: impl FnMut(u64) -> Result<(), StencilError>,
) -> Result<(f64, f64), StencilError> {
    run(o.warmup)?;
    let mut copies = Vec::with_capacity(o.reps);
    let row = median(o.reps, || {
        let copied = seconds(steps, &mut |k| copy.run(k))?;
        copies.push(copy.gbs(steps, copied));
        seconds(steps, &mut run)
    })?;
    Ok((row, crate::middle(copies)))
}

/// At each thread count `--threads` asks for (else at the runtime's), the
/// bound, then every selected variant with its own OpenMP tiling.
pub fn run(
    o: &Options,
    rows: &mut Vec<Row>,
    bounds: &mut Vec<Bound>,
) -> Result<(), Box<dyn std::error::Error>> {
    if o.threads.is_empty() {
        return run_at(o, rows, bounds);
    }
    for &threads in &o.threads {
        crate::openmp_set_threads(threads as usize);
        run_at(o, rows, bounds)?;
    }
    Ok(())
}

/// The bound, then every selected variant, at the threads set now.
fn run_at(
    o: &Options,
    rows: &mut Vec<Row>,
    bounds: &mut Vec<Bound>,
) -> Result<(), Box<dyn std::error::Error>> {
    let device = device_name();
    let mut copy = BoundCopy::new(o);
    let steps = 20;
    copy.run(o.warmup)?;
    let copied = median(o.reps, || seconds(steps, &mut |k| copy.run(k)))?;
    bounds.push(Bound {
        backend: "openmp",
        device: device.clone(),
        what: format!(
            "STREAM-like copy of a {n}^2 f64 grid (OpenMP, {device}; each row's memory bound is \
             the copy timed between its runs)",
            n = copy.n
        ),
        gbs: copy.gbs(steps, copied),
        flops: fma_flops(),
    });
    let mut progress = Progress::new(o, VARIANTS);
    macro_rules! row {
        ($m:ident, $dtype:literal, $stencil:literal, $variant:literal, $set:literal, [$($g:literal),*]) => {
            if VARIANTS.contains(&$variant) && o.wants($set, $stencil, $dtype, $variant) {
                use crate::$m as s;
                progress.next(&format!("openmp {}", s::NAME));
                let grids = [$($g),*].len();
                // Params (the random stencils' `p0`, `p1`) at their default.
                let params = vec![s::Real::default(); s::PARAMS.len()];
                check(
                    s::NAME,
                    s::DIMS,
                    grids,
                    s::FLOPS_PER_CELL,
                    3,
                    |g, shape| s::openmp::run_grids(g, shape, &params, 3),
                    |g, shape| s::reference::run_grids(g, shape, &params, 3),
                )?;
                let shape = o.shape($stencil, s::DIMS, false);
                let cells: usize = shape.iter().product();
                let mut data: Vec<Vec<s::Real>> = (0..grids).map(|k| pattern(cells, k)).collect();
                let mut refs: Vec<&mut [s::Real]> = data.iter_mut().map(Vec::as_mut_slice).collect();
                let steps = o.steps(false);
                // One workspace for the warm-up and every timed run, as a
                // time loop that calls the stencil again and again keeps it:
                // a run allocates nothing and times the steps.
                let mut work = s::Workspace::new();
                let (seconds, copy_gbs) = timed_beside_copies(o, steps, &mut copy, |n| {
                    o.in_calls(n, |k| s::openmp::run_grids_in(&mut work, &mut refs, &shape, &params, k))
                })?;
                rows.push(Row {
                    backend: "openmp",
                    device: device.clone(),
                    stencil: $stencil,
                    dtype: $dtype,
                    variant: $variant,
                    strategy: with_threads(o, o.per_call(openmp_strategy(&s::openmp::TILING))),
                    shape,
                    steps,
                    seconds,
                    bytes: s::BYTES_PER_CELL,
                    flops: s::FLOPS_PER_CELL,
                    radius: s::RADIUS.to_vec(),
                    copy_gbs: Some(copy_gbs),
                });
                crate::report::save(o, rows, bounds)?;
            }
        };
    }
    include!(concat!(env!("OUT_DIR"), "/variants.rs"));
    progress.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::openmp_strategy;
    use stencil_rt::openmp::{OpenmpTiling, WHOLE_AXIS};

    #[test]
    fn each_openmp_tiling_is_named_for_what_its_kernels_do() {
        let name = |block: &'static [usize], time_block| {
            openmp_strategy(&OpenmpTiling { block, time_block })
        };
        assert_eq!(name(&[1, 1, WHOLE_AXIS], 1), "rows, a step at a time");
        assert_eq!(
            name(&[WHOLE_AXIS, 32, WHOLE_AXIS], 1),
            "bands of 32 rows marching the slowest axis, a step at a time"
        );
        assert_eq!(name(&[8, 16, 512], 1), "cache blocks [8, 16, 512]");
        assert_eq!(
            name(&[64, 16, 512], 4),
            "tiles of 64 x 16, up to 4 steps a sweep"
        );
        assert_eq!(
            name(&[32, WHOLE_AXIS], 8),
            "bands of rows, up to 8 steps a sweep"
        );
    }
}
