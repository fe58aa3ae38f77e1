//! What every stencil-build example shares: its command line, progress
//! reports for long runs, timing and the closing report (checksum, GCells/s).

use std::time::{Duration, Instant};

/// Command-line options of an example.
#[derive(Clone, Debug)]
pub struct Args {
    /// Cells per axis.
    pub size: usize,
    /// Time steps.
    pub steps: u64,
    /// Run the pure-Rust reference instead of the default backend.
    pub reference: bool,
}

impl Args {
    /// Parses `--size N --steps S --reference` with the example's defaults.
    pub fn parse(example: &str, size: usize, steps: u64) -> Result<Args, String> {
        let usage = format!(
            "usage: {example} [--size N] [--steps S] [--reference]  (defaults: --size {size} --steps {steps})"
        );
        let mut args = Args {
            size,
            steps,
            reference: false,
        };
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            let mut value = |name: &str| {
                it.next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or_else(|| format!("{name} needs a number\n{usage}"))
            };
            match a.as_str() {
                "--size" => args.size = value("--size")? as usize,
                "--steps" => args.steps = value("--steps")?,
                "--reference" => args.reference = true,
                "-h" | "--help" => return Err(usage),
                other => return Err(format!("unknown argument `{other}`\n{usage}")),
            }
        }
        Ok(args)
    }

    /// The backend name to print.
    pub fn backend<'a>(&self, default: &'a str) -> &'a str {
        if self.reference { "reference" } else { default }
    }
}

/// What an example prints about the stencil it runs; build it with [`describe!`].
#[derive(Clone, Debug)]
pub struct Stencil {
    /// Module name.
    pub name: &'static str,
    /// `"fixed"`, `"periodic"`, or a mixed boundary's sides.
    pub boundary: &'static str,
    /// The default backend.
    pub backend: &'static str,
    /// Grid reads per cell.
    pub points: usize,
    /// Flops per cell.
    pub flops: usize,
    /// The cells by each edge (`[low, high]` per axis) a step leaves as they are.
    pub frame: &'static [[usize; 2]],
    /// OpenMP threads, when that backend is built.
    pub threads: Option<usize>,
}

/// [`Stencil`] from the constants of a generated stencil module.
#[macro_export]
macro_rules! describe {
    ($m:ident) => {
        $crate::Stencil {
            name: $m::NAME,
            boundary: $m::BOUNDARY,
            backend: $m::BACKEND,
            points: $m::POINTS,
            flops: $m::FLOPS_PER_CELL,
            frame: &$m::FRAME,
            #[cfg(feature = "openmp")]
            threads: Some(openmp_max_threads()),
            #[cfg(not(feature = "openmp"))]
            threads: None,
        }
    };
}

/// Prints what is about to run, then runs `args.steps` steps through
/// `step(reference, k)` with [`run_steps`]; `reference` asks for the
/// pure-Rust reference instead of the default backend.
pub fn simulate<E>(
    args: &Args,
    st: &Stencil,
    shape: &[usize],
    mut step: impl FnMut(bool, u64) -> Result<(), E>,
) -> Result<Duration, E> {
    println!(
        "{}: {} grid {shape:?}, {} steps, backend {}, {} points, {} flops per cell",
        st.name,
        st.boundary,
        args.steps,
        args.backend(st.backend),
        st.points,
        st.flops
    );
    if let (Some(t), false) = (st.threads, args.reference) {
        println!("OpenMP threads: {t}");
    }
    run_steps(args.steps, |k| step(args.reference, k))
}

/// Runs `steps` steps through `step(k)` (which runs `k` steps), in about ten
/// chunks, printing progress once the run has taken more than a second.
pub fn run_steps<E>(steps: u64, mut step: impl FnMut(u64) -> Result<(), E>) -> Result<Duration, E> {
    let chunk = steps.div_ceil(10).max(1);
    let start = Instant::now();
    let mut done = 0;
    while done < steps {
        let k = chunk.min(steps - done);
        step(k)?;
        done += k;
        let t = start.elapsed();
        if t > Duration::from_secs(1) && done < steps {
            eprintln!(
                "  step {done}/{steps}  ({:.1} s, about {:.1} s left)",
                t.as_secs_f64(),
                t.as_secs_f64() * (steps - done) as f64 / done as f64
            );
        }
    }
    Ok(start.elapsed())
}

/// Cells updated per step: those beyond the frame a step leaves as it is.
pub fn updated_cells(shape: &[usize], frame: &[[usize; 2]]) -> usize {
    shape
        .iter()
        .zip(frame)
        .map(|(n, [lo, hi])| n - lo - hi)
        .product()
}

/// Prints the closing report: checksum (sum and largest magnitude) and GCells/s.
pub fn report<T: Into<f64>>(
    values: impl IntoIterator<Item = T>,
    st: &Stencil,
    shape: &[usize],
    steps: u64,
    elapsed: Duration,
) {
    let updated_per_step = updated_cells(shape, st.frame);
    let (mut sum, mut max) = (0.0f64, 0.0f64);
    for v in values {
        let v: f64 = v.into();
        sum += v;
        max = max.max(v.abs());
    }
    let secs = elapsed.as_secs_f64();
    let gcells = updated_per_step as f64 * steps as f64 / secs / 1e9;
    println!("checksum: sum = {sum:.12e}, max |u| = {max:.12e}");
    println!(
        "time: {secs:.3} s for {steps} steps, {gcells:.3} GCells/s ({updated_per_step} cells updated per step)"
    );
}

/// A smooth bump: 1 at the centre of the grid of `shape`, falling off with `width`
/// (as a fraction of the extent).
pub fn bump(shape: &[usize], width: f64) -> Vec<f64> {
    let cells: usize = shape.iter().product();
    (0..cells)
        .map(|c| {
            let mut rest = c;
            let mut r2 = 0.0;
            for &n in shape.iter().rev() {
                let x = ((rest % n) as f64 + 0.5) / n as f64 - 0.5;
                rest /= n;
                r2 += x * x;
            }
            (-r2 / (width * width)).exp()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interior_cells() {
        assert_eq!(updated_cells(&[10, 20], &[[1, 1], [2, 2]]), 8 * 16);
        assert_eq!(updated_cells(&[10, 20], &[[0, 0], [0, 0]]), 200);
        assert_eq!(updated_cells(&[10, 20], &[[1, 0], [0, 2]]), 9 * 18);
    }

    #[test]
    fn steps_in_chunks() {
        let mut seen = Vec::new();
        run_steps::<()>(25, |k| {
            seen.push(k);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.iter().sum::<u64>(), 25);
        assert!(seen.iter().all(|&k| k == 3 || k == 1), "{seen:?}");
    }

    #[test]
    fn bump_peaks_in_the_middle() {
        let b = bump(&[5, 5], 0.2);
        assert_eq!(b[12], 1.0);
        assert!(b[0] < 0.01);
    }
}
