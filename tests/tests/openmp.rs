//! The OpenMP backend is really multi-threaded, its answer does not depend on the thread count, and its fused steps compute what single steps do.
#![cfg(feature = "openmp")]

use stencil_tests::{
    heat2d_f64_fixed as heat2d, heat3d_f64_fixed as heat3d, openmp_max_threads, openmp_set_threads,
    random_grid, tolerance, worst_difference,
};

#[test]
fn threads_are_set_and_results_do_not_depend_on_them() {
    let shape = [19, 33, 531];
    let cells = shape.iter().product();
    let kappa: Vec<f64> = random_grid(cells, 2);
    let mut runs = Vec::new();
    for threads in [1, 2, 3] {
        assert_eq!(openmp_set_threads(threads), threads);
        assert_eq!(openmp_max_threads(), threads);
        let mut u: Vec<f64> = random_grid(cells, 1);
        heat3d::openmp::run(&mut u, &kappa, shape, heat3d::Params { alpha: 0.1 }, 3).unwrap();
        runs.push(u);
    }
    assert!(
        runs[0] == runs[1] && runs[1] == runs[2],
        "results differ with the thread count"
    );
    // heat3d can fuse steps: 4 a sweep over tiles of 64 planes by 16 rows.
    assert_eq!(heat3d::openmp::TILING.block, [64, 16, 512]);
    assert_eq!(heat3d::openmp::TILING.time_block, 4);
    // `run` prefers a GPU backend when one is built too.
    let default = if cfg!(feature = "cuda") {
        "cuda"
    } else if cfg!(feature = "hip") {
        "hip"
    } else {
        "openmp"
    };
    assert_eq!(heat3d::BACKEND, default);
}

/// Counts no machine can start are bounded, not passed to the runtime (which
/// crashed the process at 100000 threads and aborted it at `usize::MAX`).
#[test]
fn impossible_thread_counts_are_bounded() {
    let shape = [5, 6, 7];
    let cells = shape.iter().product();
    let kappa: Vec<f64> = random_grid(cells, 2);
    for threads in [100_000, usize::MAX] {
        let set = openmp_set_threads(threads);
        assert!((1..100_000).contains(&set), "{threads} -> {set}");
        assert_eq!(openmp_max_threads(), set);
        let mut u: Vec<f64> = random_grid(cells, 1);
        heat3d::openmp::run(&mut u, &kappa, shape, heat3d::Params { alpha: 0.1 }, 2).unwrap();
    }
    assert_eq!(openmp_set_threads(0), 1);
}

/// Fused steps through a reused workspace: its scratch grid holds what an
/// earlier run of another shape left, and the frame is copied into it once,
/// not the whole grid.
#[test]
fn fused_steps_in_a_reused_workspace_match_the_reference() {
    let mut work = heat3d::Workspace::new();
    let params = heat3d::Params { alpha: 0.1 };
    for (shape, steps) in [([9, 40, 23], 3), ([21, 19, 35], 9), ([5, 6, 7], 5)] {
        let cells = shape.iter().product();
        let kappa: Vec<f64> = random_grid(cells, 4);
        let mut want: Vec<f64> = random_grid(cells, 5);
        let mut got = want.clone();
        heat3d::reference::run(&mut want, &kappa, shape, params, steps).unwrap();
        heat3d::openmp::run_in(&mut work, &mut got, &kappa, shape, params, steps).unwrap();
        let (worst, at) = worst_difference(&got, &want);
        let allowed = tolerance::<f64>(heat3d::FLOPS_PER_CELL, steps);
        assert!(
            worst <= allowed,
            "{shape:?}, {steps} steps: {worst:e} at cell {at}"
        );
    }
}

/// Fused steps compute each cell's expression as a single step does, in the
/// same order and contracted into the same multiply-adds (the same
/// expression's text), so a run of fused steps equals the same steps one
/// call at a time, bit for bit: any slice or row a tile's sweep got wrong
/// shows.
#[test]
fn fused_steps_equal_single_steps_bit_for_bit() {
    assert_eq!(heat2d::openmp::TILING.time_block, 8);
    assert_eq!(heat3d::openmp::TILING.time_block, 4);
    // 67 rows make one band a thread; 1201 make 21 bands (each band's
    // recomputed halo within an eighth of its rows), 8 a thread at most:
    // several a thread, handed out, at the 2 or 3 threads of a test run.
    for shape2 in [[67, 45], [1201, 45]] {
        let mut fused: Vec<f64> = random_grid(shape2[0] * shape2[1], 7);
        let mut single = fused.clone();
        let p2 = heat2d::Params { alpha: 0.2 };
        heat2d::openmp::run(&mut fused, shape2, p2, 11).unwrap();
        for _ in 0..11 {
            heat2d::openmp::run(&mut single, shape2, p2, 1).unwrap();
        }
        assert!(
            fused == single,
            "2-D {shape2:?}: fused steps differ from single steps"
        );
    }
    let shape3 = [23, 37, 29];
    let cells = shape3.iter().product();
    let kappa: Vec<f64> = random_grid(cells, 8);
    let mut fused: Vec<f64> = random_grid(cells, 9);
    let mut single = fused.clone();
    let p3 = heat3d::Params { alpha: 0.1 };
    heat3d::openmp::run(&mut fused, &kappa, shape3, p3, 7).unwrap();
    for _ in 0..7 {
        heat3d::openmp::run(&mut single, &kappa, shape3, p3, 1).unwrap();
    }
    assert!(fused == single, "3-D: fused steps differ from single steps");
}

/// A leapfrog's fused launches leave their last two steps in the two free
/// buffers of four, which become its levels: after runs of fused steps (3
/// a launch, as the tests build fixed leapfrogs, ending in a shorter launch
/// or a single step, after several launches or after one, when the single
/// step writes the one buffer no launch has given the frame) both levels
/// equal those of the same steps one call at a time, bit for bit, and those
/// of the reference within its tolerance.
#[test]
fn fused_leapfrog_steps_equal_single_steps_bit_for_bit() {
    use stencil_tests::{leapfrog3d_f64_fixed as leapfrog3d, wave2d_f64_fixed as wave2d};
    assert_eq!(wave2d::openmp::TILING.time_block, 3);
    assert_eq!(leapfrog3d::openmp::TILING.time_block, 3);
    let shape2 = [61, 47];
    let p2 = wave2d::Params { c2: 0.2 };
    for steps in [2, 4, 10, 17] {
        let mut fused: [Vec<f64>; 2] = [random_grid(61 * 47, 1), random_grid(61 * 47, 2)];
        let mut single = fused.clone();
        let mut want = fused.clone();
        let [u, prev] = &mut fused;
        wave2d::openmp::run(u, prev, shape2, p2, steps).unwrap();
        for _ in 0..steps {
            let [u, prev] = &mut single;
            wave2d::openmp::run(u, prev, shape2, p2, 1).unwrap();
        }
        assert!(
            fused == single,
            "2-D, {steps} steps: fused differ from single steps"
        );
        let [u, prev] = &mut want;
        wave2d::reference::run(u, prev, shape2, p2, steps).unwrap();
        for (got, want) in fused.iter().zip(&want) {
            let (worst, at) = worst_difference(got, want);
            let allowed = tolerance::<f64>(wave2d::FLOPS_PER_CELL, steps);
            assert!(
                worst <= allowed,
                "2-D, {steps} steps: {worst:e} at cell {at}"
            );
        }
    }
    let shape3 = [21, 35, 29];
    let cells = shape3.iter().product();
    let vel: Vec<f64> = random_grid(cells, 3);
    for steps in [3, 4, 7] {
        let mut fused: [Vec<f64>; 2] = [random_grid(cells, 4), random_grid(cells, 5)];
        let mut single = fused.clone();
        let [u, prev] = &mut fused;
        leapfrog3d::openmp::run(u, prev, &vel, shape3, leapfrog3d::Params {}, steps).unwrap();
        for _ in 0..steps {
            let [u, prev] = &mut single;
            leapfrog3d::openmp::run(u, prev, &vel, shape3, leapfrog3d::Params {}, 1).unwrap();
        }
        assert!(
            fused == single,
            "3-D, {steps} steps: fused differ from single steps"
        );
    }
}

/// Each instruction-set level this processor runs has a copy of the kernels
/// of its own: built for the baseline x86-64 (no FMA), the baseline copy
/// rounds every product as the reference does, bit for bit, and the copies
/// from `x86-64-v3` on contract multiply-adds, so they differ from it in
/// the last bits, within the tolerance.
#[test]
fn each_instruction_set_level_runs_a_copy_of_its_own() {
    use stencil_rt::openmp::{Isa, isa, set_max_isa};
    let shape = [23, 41, 67];
    let cells = shape.iter().product();
    let kappa: Vec<f64> = random_grid(cells, 6);
    let params = heat3d::Params { alpha: 0.1 };
    let start: Vec<f64> = random_grid(cells, 7);
    let mut want = start.clone();
    heat3d::reference::run(&mut want, &kappa, shape, params, 2).unwrap();
    let at = |level: Isa| {
        assert_eq!(set_max_isa(level), level);
        assert_eq!(isa(), level);
        let mut u = start.clone();
        heat3d::openmp::run(&mut u, &kappa, shape, params, 2).unwrap();
        u
    };
    let baseline = at(Isa::Baseline);
    let contracts = cfg!(target_feature = "fma");
    if !contracts {
        assert!(
            baseline == want,
            "the baseline copy differs from the reference"
        );
    }
    for level in Isa::ALL[1..].iter().copied().filter(|l| l.supported()) {
        let got = at(level);
        let (worst, cell) = worst_difference(&got, &want);
        let allowed = tolerance::<f64>(heat3d::FLOPS_PER_CELL, 2);
        assert!(worst <= allowed, "{level}: {worst:e} at cell {cell}");
        if !contracts {
            assert!(
                got != baseline,
                "{level} computes what the baseline copy does"
            );
        }
    }
}

/// The copies are compiled with the flags of the features stencil-rt
/// detects before it runs them (`Isa::features`): a copy built with one
/// more would fault on a processor without it.
#[test]
#[cfg(target_arch = "x86_64")]
fn each_level_s_copy_is_compiled_for_the_features_detected() {
    use stencil_rt::openmp::Isa;
    let dir = std::path::Path::new(env!("OUT_DIR")).join("stencil-build/openmp");
    // A target with a level's features compiles no copy of it.
    let levels = [
        (
            Isa::X86_64V3,
            cfg!(all(target_feature = "avx2", target_feature = "fma")),
        ),
        (Isa::X86_64V4, cfg!(target_feature = "avx512f")),
    ];
    for (level, target_has) in levels {
        let path = dir.join(format!("heat3d_f64_fixed.{level}.c"));
        if target_has && !path.exists() {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let flags: Vec<String> = level.features().iter().map(|f| format!("-m{f}")).collect();
        assert!(
            text.contains(&format!("Compiled with {}, ", flags.join(" "))),
            "{}:\n{text}",
            path.display()
        );
    }
}
