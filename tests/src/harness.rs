//! The comparison of a compiled stencil's backends with its reference: the
//! entry a stencil is described by, random grids, the tolerance, the shapes
//! and the check. Also compiled into the scratch crates of
//! `tests/random_stencils.rs` (it needs only the generated `StencilError`, and
//! `stencil-test-numbers`).

use stencil_rt::openmp::{Isa, set_max_isa};

use crate::StencilError;

/// A generated `run_grids` entry point.
pub type RunGrids<T> = fn(&mut [&mut [T]], &[usize], &[T], u64) -> Result<(), StencilError>;

/// One compiled stencil variant.
pub struct Entry<T: 'static> {
    /// Module name.
    pub name: &'static str,
    /// Grid names, in `run_grids` order.
    pub grids: &'static [&'static str],
    /// Param names.
    pub params: &'static [&'static str],
    /// Smallest legal shape.
    pub min_shape: &'static [usize],
    /// Flops per cell and step.
    pub flops: usize,
    /// OpenMP cache block (empty without that backend).
    pub block: &'static [usize],
    /// CUDA's strategy, vector and whether `auto`'s small grids run another
    /// kernel (`GpuTiling::small_grids`; without that backend, `None`).
    pub cuda_tiling: Option<(&'static str, usize, bool)>,
    /// The oracle.
    pub reference: RunGrids<T>,
    /// Every enabled backend.
    pub backends: &'static [(&'static str, RunGrids<T>)],
}

pub use stencil_test_numbers::Real;

/// Uniform values in [0.5, 1.5) from a fixed seed (splitmix64).
pub fn random_grid<T: Real>(cells: usize, seed: u64) -> Vec<T> {
    T::random_grid(cells, seed)
}

/// Largest difference allowed between a backend and the reference, relative
/// to the largest magnitude of the reference's grid (at least 1): each flop
/// may round once by half an ulp, compilers may contract `a*b + c` into an
/// FMA, and cancellation in a weighted sum can make intermediate values a few
/// times larger than the result; errors add up over steps. 16 eps per flop
/// and step covers that with margin, and stays far below what a wrong offset,
/// region or boundary produces (checked by [`check_against_reference`]).
pub fn tolerance<T: Real>(flops: usize, steps: u64) -> f64 {
    16.0 * T::EPSILON * (flops as f64 + 2.0) * steps.max(1) as f64
}

/// Worst difference over `got` vs `want`, relative to the largest |want| (at
/// least 1), with the index where it occurs.
pub fn worst_difference<T: Real>(got: &[T], want: &[T]) -> (f64, usize) {
    T::worst_difference(got, want)
}

/// The shapes each variant is checked on: the smallest legal one, a small one
/// of odd extents (in 3-D, rows 9 cells longer than the smallest: for a
/// radius of 4 or 8 along them, 8-byte pairs of f32 that are not 16-byte
/// quads), one whose rows are
/// whole vectors of 4 cells (so that vector kernels run, on rows longer than
/// one GPU block; in 2-D, with 29 rows more than the smallest, so that fused
/// kernels with chunks of 5 or 7 rows have tiles wholly inside the region,
/// which run without checks), (with OpenMP) one that spans more than one
/// cache block per axis without being a multiple of it, where 2-D blocks
/// are whole rows, one whose rows are a multiple of 4 KiB apart (which go
/// through a ring of rows where a nest touches more lines at a column than
/// the machine's L1 has ways), where 3-D
/// blocks span the slowest axis, one whose planes are a multiple of 4 KiB
/// apart (which march through a ring of planes), and (CUDA's ring
/// kernels: f32, 3-D `temporal` of 4-cell vectors reading other grids at the
/// cell) planes large enough for the session to launch them
/// (`rings_preferred` in stencil-build: more than 32768 cells, rows of 8-byte
/// pairs that are not quads; on a device, also more than 458752 cells of
/// whole quads, too slow for the CPU's emulated device), and (CUDA's
/// `tensor` kernels) rows of an odd number of cells over several blocks
/// along both fast axes, which start at even and odd cells in turn, rows of
/// an even number over several blocks (where the update reads no other grid,
/// warps of 16 x 8 cells, whose second block along `y` is partly outside the
/// region), and, on a
/// device, for `tensor` and for `auto`'s plans whose small grids run another
/// kernel, two grids too large for `auto`'s `naive` single steps
/// (`small_step_cells` in stencil-build: at least 1.44M cells, over the rule
/// of 8192 cells per multiprocessor up to 175 of them): one that `auto`
/// sends to `stream` in blocks of 1 x 2 x 64 threads (planes of 45150 cells,
/// under `SMALL_PLANES`' 160000, and on the H100 one wave of 10 x 5 tiles of
/// `tensor` marching 15 planes, under `SMALL_GRID_EFFICIENCY`), and one on
/// which it runs its own kernel (planes of 160000 cells or more; `tensor`:
/// 12 x 22 tiles of 32 x 32 cells, on the H100 two waves of 132 blocks
/// marching 24 planes, 75% of their time on the region), both of rows of
/// an odd number of cells, and for `stream` (`planes_stream` in
/// stencil-build) one of planes of 160800 cells in rows of whole 16-byte
/// vectors, which its kernel of vectors runs, and (CUDA's 3-D fused kernels)
/// one of planes of 161408 cells in rows of whole 16-byte vectors, where
/// their single steps of `planes_stream` run its kernel of 16-byte vectors
/// (rows of 388 cells, whose vectors cover no more than pairs would;
/// smaller planes run its kernel of small planes, and its twin of 8-byte
/// pairs where rows are pairs, or where the update reads one grid and
/// vectors would cover more); all too slow for the emulated device. A 1-D
/// grid also runs over 1093 cells more than the smallest: GPU `naive`'s
/// blocks of 256 threads of 4 f32 cells each then cover all their cells in
/// the first block, whose threads away from a periodic grid's ends read
/// without wrapping, and one at a time in the second.
pub fn shapes<T>(e: &Entry<T>) -> Vec<Vec<usize>> {
    let min = e.min_shape;
    let mut rows: Vec<usize> = min.iter().zip([5, 9, 11]).map(|(m, k)| m + k).collect();
    if let Some(x) = rows.last_mut() {
        *x = (*x + 300).next_multiple_of(4);
    }
    if let [y, _] = rows.as_mut_slice() {
        *y = min[0] + 29;
    }
    let mut shapes = vec![
        min.to_vec(),
        min.iter().zip([3, 5, 9]).map(|(m, k)| m + k).collect(),
        rows,
    ];
    if !e.block.is_empty() {
        // One block and 3 cells along each axis; a whole axis's block fits any grid.
        let past_block = |(m, &b): (&usize, &usize)| {
            if b >= stencil_rt::openmp::WHOLE_AXIS {
                m + 3
            } else {
                m + b + 3
            }
        };
        shapes.push(min.iter().zip(e.block).map(past_block).collect());
        if min.len() == 2 && e.block[1] >= stencil_rt::openmp::WHOLE_AXIS {
            // Rows a multiple of 4 KiB apart, which go through a ring of
            // rows where a nest touches more of their lines than L1 has
            // ways, over blocks of rows that start inside the grid and end
            // past it.
            shapes.push(vec![min[0] + e.block[0].min(64) + 7, 1024]);
        }
        if min.len() == 3 && e.block[0] >= stencil_rt::openmp::WHOLE_AXIS {
            // Planes a multiple of 4 KiB apart, which march through the ring.
            shapes.push(vec![
                min[0] + 5,
                min[1].max(16).next_multiple_of(16),
                min[2].max(64).next_multiple_of(64),
            ]);
        }
    }
    let rings = e.cuda_tiling == Some(("temporal", 4, false))
        && min.len() == 3
        && e.grids.len() > 1
        && std::mem::size_of::<T>() == 4;
    if rings {
        shapes.push(vec![min[0] + 1, 130, 258]);
        if !cfg!(feature = "gpu-on-cpu") {
            shapes.push(vec![min[0] + 1, 680, 680]);
        }
    }
    let tensor = e.cuda_tiling.is_some_and(|(s, _, _)| s == "tensor");
    if tensor {
        shapes.push(vec![min[0] + 2, 41, 75]);
        shapes.push(vec![min[0] + 1, 45, 70]);
    }
    let small_grids = e.cuda_tiling.is_some_and(|(_, _, small)| small);
    if (tensor || small_grids) && !cfg!(feature = "gpu-on-cpu") {
        shapes.push(vec![min[0] + 29, 150, 301]);
        shapes.push(vec![min[0] + 23, 391, 711]);
        if !tensor {
            shapes.push(vec![min[0] + 3, 400, 402]);
        }
    }
    let fused = e
        .cuda_tiling
        .is_some_and(|(s, _, _)| s == "temporal" || s == "persistent");
    if fused && min.len() == 3 && !cfg!(feature = "gpu-on-cpu") {
        shapes.push(vec![min[0] + 1, 416, 388]);
    }
    if min.len() == 1 {
        shapes.push(vec![min[0] + 1093]);
    }
    shapes
}

/// Runs `run` on fresh random grids of `shape` for `steps` steps; returns the grids.
pub fn run_case<T: Real>(
    e: &Entry<T>,
    run: RunGrids<T>,
    shape: &[usize],
    steps: u64,
) -> Vec<Vec<T>> {
    let (mut grids, params) = inputs(e, shape);
    let mut views: Vec<&mut [T]> = grids.iter_mut().map(Vec::as_mut_slice).collect();
    run(&mut views, shape, &params, steps).unwrap_or_else(|err| panic!("{}: {err}", e.name));
    grids
}

/// The random grids of `shape` and the params every run of `e` starts from.
pub fn inputs<T: Real>(e: &Entry<T>, shape: &[usize]) -> (Vec<Vec<T>>, Vec<T>) {
    let cells: usize = shape.iter().product();
    let grids = (0..e.grids.len())
        .map(|g| random_grid(cells, 1000 * g as u64 + cells as u64))
        .collect();
    let params = (0..e.params.len())
        .map(|i| T::from_f64(0.043 + 0.0107 * i as f64))
        .collect();
    (grids, params)
}

/// The worst relative difference over all grids, with a description of where.
pub fn compare<T: Real>(e: &Entry<T>, got: &[Vec<T>], want: &[Vec<T>]) -> (f64, String) {
    let mut worst = (0.0, String::new());
    for (g, (a, b)) in got.iter().zip(want).enumerate() {
        let (d, i) = worst_difference(a, b);
        if d >= worst.0 {
            worst = (
                d,
                format!(
                    "grid `{}` cell {i}: {:?} vs reference {:?}",
                    e.grids[g], a[i], b[i]
                ),
            );
        }
    }
    worst
}

/// `backend` against the reference, on every shape of [`shapes`],
/// for 0, 1 and 5 steps; and, to prove the comparison can fail, the backend
/// run for 2 steps must be told apart from the reference's 1 step (later
/// steps can converge too close to a fixed point on the smallest shapes).
/// The smallest shape is let off where the reference's own second step
/// changes nothing: with a fixed boundary, a step that does not read its own
/// cell (Lax-Friedrichs') computes that shape's one cell from the frame alone.
/// The OpenMP kernels are checked at every instruction-set level this
/// processor runs: each level is a copy of its own (`stencil_rt::openmp::isa`).
pub fn check_against_reference<T: Real>(e: &Entry<T>, backend: &str) {
    let Some(&(backend, run)) = e.backends.iter().find(|(b, _)| *b == backend) else {
        panic!("{}: backend `{backend}` is not built", e.name);
    };
    if backend != "openmp" {
        return check_run(e, run, backend);
    }
    for level in Isa::ALL.into_iter().filter(|l| l.supported()) {
        assert_eq!(set_max_isa(level), level);
        check_run(e, run, &format!("openmp at {level}"));
    }
}

/// [`check_against_reference`] of one `run`, described as `backend`.
fn check_run<T: Real>(e: &Entry<T>, run: RunGrids<T>, backend: &str) {
    for shape in shapes(e) {
        for steps in [0, 1, 5] {
            let want = run_case(e, e.reference, &shape, steps);
            let tol = tolerance::<T>(e.flops, steps);
            let got = run_case(e, run, &shape, steps);
            let (err, at) = compare(e, &got, &want);
            assert!(
                err <= tol,
                "{} on {backend}, shape {shape:?}, {steps} steps: difference {err:.3e} > tolerance {tol:.3e} at {at}",
                e.name
            );
            if steps == 1 {
                check_could_fail(e, run, backend, &shape, &want, tol);
            }
        }
    }
}

/// Panics where `run`'s 2 steps are within `tol` of the reference's 1 step
/// (`want`) on `shape`, unless `shape` is the smallest and the reference's
/// own 2 steps are within `tol` of its 1 step too: there the stencil's first
/// step can reach a fixed point, which no check can see past, and the larger
/// shapes are left to prove the comparison can fail.
fn check_could_fail<T: Real>(
    e: &Entry<T>,
    run: RunGrids<T>,
    backend: &str,
    shape: &[usize],
    want: &[Vec<T>],
    tol: f64,
) {
    let further = run_case(e, run, shape, 2);
    let (err, _) = compare(e, &further, want);
    let settled = || compare(e, &run_case(e, e.reference, shape, 2), want).0 <= tol;
    assert!(
        err > tol || (shape == e.min_shape && settled()),
        "{} on {backend}, shape {shape:?}: 2 steps are within tolerance of 1 ({err:.3e}); the check could not fail",
        e.name
    );
}
