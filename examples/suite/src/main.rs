//! The suite runner: every SUITE.md stencil, in f32 and f64, with every
//! compiled strategy on every enabled backend, and with the feature `corpus`
//! the performance corpus (`corpus/`: AN5D's stencils, families of user
//! stencils, random ones) as `auto` builds it, each beside its own bound: the
//! lower of the memory bound (its bytes a cell at the copy bandwidth) and the
//! arithmetic bound (its flops a cell at the multiply-add throughput), both
//! measured in the same run on the same device. Each configuration is first
//! checked against the reference on a small grid of odd extents, then timed:
//! warm-up steps, then the median of several timed runs (CUDA events on the
//! GPU, a monotonic clock on the CPU).
//!
//! `cargo run --release -p suite [--features cuda] -- --help`

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));

mod baseline;
mod chart;
#[cfg(feature = "openmp")]
mod cpu;
#[cfg(feature = "cuda")]
mod gpu;
mod report;

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// A backend the runner can measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The CUDA kernels (feature `cuda`), on the first GPU.
    Cuda,
    /// The OpenMP-C kernels (feature `openmp`), on every core.
    Openmp,
}

/// A set of stencils the runner measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Set {
    /// The SUITE.md stencils (`stencils/`), with every compiled variant.
    Suite,
    /// The performance corpus (`corpus/`, feature `corpus`), as `auto` builds it.
    Corpus,
}

impl Set {
    /// The set's name, as `build.rs` lists it.
    fn name(self) -> &'static str {
        match self {
            Set::Suite => "suite",
            Set::Corpus => "corpus",
        }
    }
}

/// What to run, and where the results go.
#[derive(Parser, Debug)]
#[command(
    about = "Runs the SUITE.md stencils with every compiled strategy beside the bandwidth bound"
)]
pub struct Options {
    /// A stencil to run (e.g. j3d7pt, or j2d9pt-gol as SUITE.md spells it:
    /// `-` stands for `_`); repeat for several. Default: all.
    #[arg(long = "stencil", value_name = "NAME")]
    pub stencils: Vec<String>,
    /// A set of stencils to run; repeat for several. Default: every one compiled in.
    #[arg(long = "set", value_enum)]
    pub sets: Vec<Set>,
    /// A backend to run; repeat for several. Default: every one compiled in.
    #[arg(long = "backend", value_enum)]
    pub backends: Vec<Backend>,
    /// A variant (strategy) to run beside `naive`, which always runs. Default: all.
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
    /// An element type to run. Default: both.
    #[arg(long = "dtype", value_parser = ["f32", "f64"])]
    pub dtypes: Vec<String>,
    /// Cells of the 1-D grids [default: 2^28 on the GPU, 2^24 on the CPU].
    #[arg(long)]
    pub size1: Option<usize>,
    /// Extent of each axis of the 2-D grids, and of the CPU's copy bound
    /// [default: 16384 on the GPU, 8192 on the CPU].
    #[arg(long)]
    pub size2: Option<usize>,
    /// Extent of each axis of the 3-D grids [default: 512 on the GPU (acoustic25:
    /// 300 x 994 x 750), 512 on the CPU].
    #[arg(long)]
    pub size3: Option<usize>,
    /// Extents of the 3-D grids, slowest axis first, as `Z,Y,X` (in place of
    /// `--size3`'s cube).
    #[arg(long, value_name = "Z,Y,X", value_parser = parse_shape3)]
    pub shape3: Option<[usize; 3]>,
    /// Time steps per timed run [default: 100 on the GPU, 16 on the CPU: a
    /// multiple of the OpenMP kernels' default steps a sweep].
    #[arg(long)]
    pub steps: Option<u64>,
    /// Steps per call of a stencil (`Session::step` on the GPU, `run` on the
    /// CPU), as a program that steps a few at a time calls it; the fused
    /// strategies fuse at most these [default: every step of a run in one call].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub steps_per_call: Option<u64>,
    /// GPU sessions launch every step themselves, never replaying graphs of
    /// launches (`Session::set_graphs(false)`), to measure what graphs gain.
    #[arg(long)]
    pub no_graphs: bool,
    /// Where a GPU session measured fused launches against single steps
    /// (`auto`'s fused plans), also time each way set after the trial
    /// (`Session::set_fusion`), their runs in turn, as rows `<variant>
    /// fused` and `<variant> single`: what the trial kept, checked against
    /// both.
    #[arg(long)]
    pub both_ways: bool,
    /// OpenMP thread counts to run at, in turn (e.g. `1,2,4,8,16`): every
    /// OpenMP row at each, beside the bound measured at that count
    /// [default: the OpenMP runtime's, from `OMP_NUM_THREADS`].
    #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Vec<u32>,
    /// Timed runs per configuration; the median is reported.
    #[arg(long, default_value_t = 5)]
    pub reps: usize,
    /// Warm-up steps before the timed runs (on the GPU, after the steps a
    /// session takes to decide between fused launches and single steps,
    /// where `auto` chose a fused plan).
    #[arg(long, default_value_t = 10)]
    pub warmup: u64,
    /// Write the rows as JSON (one object per row) to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the Markdown table (also printed) to this file.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Draw GCells/s per stencil and strategy, with the bound, as SVG to this
    /// file (with several backends, one `<stem>-<backend>.svg` each).
    #[arg(long)]
    pub chart: Option<PathBuf>,
    /// Add the rows of `baseline.py --json FILE` (the suite as CuPy array
    /// expressions), after checking its output in `<stem>-check/` against
    /// the reference.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
}

/// `--shape3`'s value: three positive extents separated by commas.
fn parse_shape3(s: &str) -> Result<[usize; 3], String> {
    let extents: Vec<usize> = s
        .split(',')
        .map(|e| e.trim().parse().ok().filter(|&n| n > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("`{s}`: write three positive extents, e.g. 300,994,750"))?;
    extents
        .try_into()
        .map_err(|_| format!("`{s}`: write three extents (Z,Y,X), e.g. 300,994,750"))
}

impl Options {
    /// Whether the configuration is selected; `naive` always is, as every
    /// row's speed-up is measured against it.
    pub fn wants(&self, set: &str, stencil: &str, dtype: &str, variant: &str) -> bool {
        let any = |list: &[String], x: &str| list.is_empty() || list.iter().any(|l| l == x);
        // SUITE.md's `j2d9pt-gol` is the runner's `j2d9pt_gol`.
        let stencils: Vec<String> = self.stencils.iter().map(|s| s.replace('-', "_")).collect();
        (self.sets.is_empty() || self.sets.iter().any(|s| s.name() == set))
            && any(&stencils, stencil)
            && any(&self.dtypes, dtype)
            && (variant == "naive" || any(&self.variants, variant))
    }

    /// Whether `backend` is to run.
    pub fn runs(&self, backend: Backend) -> bool {
        self.backends.is_empty() || self.backends.contains(&backend)
    }

    /// The grid of `stencil` with `dims` axes on the GPU (`gpu`) or the CPU.
    pub fn shape(&self, stencil: &str, dims: usize, gpu: bool) -> Vec<usize> {
        if let (3, Some(shape)) = (dims, self.shape3) {
            return shape.to_vec();
        }
        match (dims, self.size2, self.size3) {
            (1, _, _) => vec![self.size1.unwrap_or(if gpu { 1 << 28 } else { 1 << 24 })],
            (2, Some(n), _) | (3, _, Some(n)) => vec![n; dims],
            (3, _, None) if gpu && stencil == "acoustic25" => vec![300, 994, 750],
            // Grids larger than a server's L3 on the CPU too: each step streams from memory.
            (2, None, _) => vec![if gpu { 16384 } else { 8192 }; 2],
            _ => vec![512; dims],
        }
    }

    /// Runs `steps` steps through `call` in calls of `--steps-per-call` steps.
    pub fn in_calls<E>(
        &self,
        steps: u64,
        mut call: impl FnMut(u64) -> Result<(), E>,
    ) -> Result<(), E> {
        let per_call = self.steps_per_call.unwrap_or(steps.max(1));
        let mut done = 0;
        while done < steps {
            let n = per_call.min(steps - done);
            call(n)?;
            done += n;
        }
        Ok(())
    }

    /// `strategy` as a row reports it: with the steps a call where they are limited.
    pub fn per_call(&self, strategy: String) -> String {
        match self.steps_per_call {
            Some(1) => format!("{strategy}; 1 step a call"),
            Some(k) => format!("{strategy}; {k} steps a call"),
            None => strategy,
        }
    }

    /// Time steps per timed run.
    pub fn steps(&self, gpu: bool) -> u64 {
        self.steps.unwrap_or(if gpu { 100 } else { 16 })
    }
}

/// Every compiled configuration: (module, dtype, stencil, variant, set).
pub const COMPILED: &[(&str, &str, &str, &str, &str)] =
    include!(concat!(env!("OUT_DIR"), "/compiled.rs"));

/// The median of `reps` (at least one) measurements by `once`.
pub fn median<E>(reps: usize, mut once: impl FnMut() -> Result<f64, E>) -> Result<f64, E> {
    let t = (0..reps.max(1))
        .map(|_| once())
        .collect::<Result<Vec<f64>, E>>()?;
    Ok(middle(t))
}

/// The median of `t` (not empty): its middle value, the upper one of an even count.
pub fn middle(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// Deterministic, non-trivial values in [0.5, 1.5), different per grid `k`:
/// none zero, so that a stencil dividing by a grid's values (a depth, a sum of
/// coefficients) computes numbers in the check and the timed runs alike.
pub fn pattern<T: From<f32>>(cells: usize, k: usize) -> Vec<T> {
    (0..cells)
        .map(|c| T::from((((c + 37 * k) * 7919) % 1000) as f32 / 1000.0 + 0.5))
        .collect()
}

/// The grid of [`check`] (its last `dims` extents): odd, and not a multiple of any block.
pub const CHECK_SHAPE: [usize; 3] = [29, 45, 133];

/// Runs 3 steps of a backend and of the reference from the same data on a
/// small grid of odd extents and fails unless they agree within a tolerance
/// that follows from the dtype and the flops.
pub fn check<T: Copy + From<f32> + Into<f64>>(
    name: &str,
    dims: usize,
    grids: usize,
    flops: usize,
    steps: u64,
    backend: impl Fn(&mut [&mut [T]], &[usize]) -> Result<(), StencilError>,
    reference: impl Fn(&mut [&mut [T]], &[usize]) -> Result<(), StencilError>,
) -> Result<(), Box<dyn std::error::Error>> {
    let shape: Vec<usize> = CHECK_SHAPE[3 - dims..].to_vec();
    let cells: usize = shape.iter().product();
    let mut a: Vec<Vec<T>> = (0..grids).map(|k| pattern(cells, k)).collect();
    let mut b = a.clone();
    backend(
        &mut a.iter_mut().map(Vec::as_mut_slice).collect::<Vec<_>>(),
        &shape,
    )?;
    reference(
        &mut b.iter_mut().map(Vec::as_mut_slice).collect::<Vec<_>>(),
        &shape,
    )?;
    let eps = if std::mem::size_of::<T>() == 4 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let (worst, largest) = difference(a.iter().flatten(), b.iter().flatten());
    let tolerance = 16.0 * eps * (flops as f64 + 2.0) * steps as f64 * largest.max(1.0);
    if worst > tolerance {
        return Err(format!(
            "{name} differs from the reference by {worst:e} (tolerance {tolerance:e})"
        )
        .into());
    }
    Ok(())
}

/// The largest difference between the cells of `got` and of `want`
/// (infinite where either holds a NaN, which `f64::max` would pass over) and
/// the largest magnitude in `want`.
fn difference<'a, T: Copy + Into<f64> + 'a>(
    got: impl IntoIterator<Item = &'a T>,
    want: impl IntoIterator<Item = &'a T>,
) -> (f64, f64) {
    let (mut worst, mut largest) = (0.0f64, 0.0f64);
    for (x, y) in got.into_iter().zip(want) {
        let (x, y): (f64, f64) = ((*x).into(), (*y).into());
        let d = (x - y).abs();
        worst = if d.is_nan() {
            f64::INFINITY
        } else {
            worst.max(d)
        };
        largest = largest.max(y.abs());
    }
    (worst, largest)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o = Options::parse();
    let mut rows = Vec::new();
    let mut bounds = Vec::new();
    #[cfg(feature = "cuda")]
    if o.runs(Backend::Cuda) {
        gpu::run(&o, &mut rows, &mut bounds)?;
    }
    #[cfg(feature = "openmp")]
    if o.runs(Backend::Openmp) {
        cpu::run(&o, &mut rows, &mut bounds)?;
    }
    if let Some(json) = &o.baseline {
        let mut ran: Vec<&str> = rows.iter().map(|r| r.backend).collect();
        ran.dedup();
        rows.extend(baseline::load(&o, json, &ran)?);
        // The baseline's rows beside the runner's, stencil by stencil.
        rows.sort_by(|a, b| (a.backend, a.stencil, a.dtype).cmp(&(b.backend, b.stencil, b.dtype)));
    }
    if rows.is_empty() {
        return Err(
            "nothing to run: no compiled backend or configuration matches the options".into(),
        );
    }
    report::write(&o, &rows, &bounds)?;
    if let Some(path) = &o.chart {
        chart::write(path, &rows, &bounds)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Options, difference};
    use clap::Parser;

    #[test]
    fn steps_go_in_calls_of_steps_per_call_the_last_one_shorter() {
        let calls = |args: &[&str], steps| {
            let o = Options::parse_from([&["suite"], args].concat());
            let mut calls = Vec::new();
            o.in_calls(steps, |n| -> Result<(), ()> {
                calls.push(n);
                Ok(())
            })
            .unwrap();
            calls
        };
        assert_eq!(calls(&[], 7), [7]);
        assert_eq!(calls(&["--steps-per-call", "3"], 7), [3, 3, 1]);
        assert_eq!(calls(&["--steps-per-call", "1"], 3), [1, 1, 1]);
        assert_eq!(calls(&["--steps-per-call", "9"], 7), [7]);
        assert!(calls(&["--steps-per-call", "2"], 0).is_empty());
        assert!(Options::try_parse_from(["suite", "--steps-per-call", "0"]).is_err());
    }

    #[test]
    fn shape3_takes_three_positive_extents_slowest_first() {
        let o = Options::parse_from(["suite", "--size3", "64", "--shape3", "40,512,513"]);
        assert_eq!(o.shape("star3d25", 3, true), [40, 512, 513]);
        assert_eq!(o.shape("j2d5pt", 2, true), [16384, 16384]);
        for bad in ["40,512", "40,512,513,2", "40,0,513", "40,x,513"] {
            assert!(
                Options::try_parse_from(["suite", "--shape3", bad]).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_nan_is_the_worst_difference_there_is() {
        let want = [1.0f32, -3.0, 2.0];
        assert_eq!(difference(&[1.0f32, -3.0, 2.5], &want), (0.5, 3.0));
        assert_eq!(difference(&[f32::NAN, -3.0, 2.0], &want).0, f64::INFINITY);
        assert_eq!(
            difference(&[1.0f32, -3.0, f32::NAN], &want).0,
            f64::INFINITY
        );
    }
}
