//! Hand-written tests of named variants: sessions over several calls, fused
//! launches against single steps, graphs, grids past 2^31 cells. They name
//! variants a narrowed build (`STENCIL_TESTS_ONLY`) leaves out, so such a
//! build compiles the generated tests alone (`tests/build.rs` sets
//! `stencil_tests_narrowed`).

/// One step of heat3d variant `$module` (strategy `$strategy`) on a grid
/// of more than 2^31 - 1 cells matches the reference: 2049 x 1024 x 1024
/// cells, 8 GiB per f32 grid.
#[cfg(feature = "cuda")]
macro_rules! big_grid {
    ($module:ident, $strategy:literal) => {{
        use stencil_tests::$module as heat3d;
        assert_eq!(heat3d::cuda::TILING.strategy, $strategy);
        let shape = [2049, 1024, 1024];
        let cells: usize = shape.iter().product();
        assert!(cells > i32::MAX as usize);
        let pattern = |k: usize| (k.wrapping_mul(2_654_435_761) % 1000) as f32 / 1000.0;
        let kappa: Vec<f32> = (0..cells).map(|k| pattern(k + 7)).collect();
        let mut gpu: Vec<f32> = (0..cells).map(pattern).collect();
        let mut cpu = gpu.clone();
        let params = heat3d::Params { alpha: 0.1 };
        heat3d::cuda::run(&mut gpu, &kappa, shape, params, 1).unwrap();
        heat3d::reference::run(&mut cpu, &kappa, shape, params, 1).unwrap();
        let (err, at) = stencil_tests::worst_difference(&gpu, &cpu);
        let tol = stencil_tests::tolerance::<f32>(heat3d::FLOPS_PER_CELL, 1);
        assert!(err <= tol, "difference {err:e} > {tol:e} at {at}");
    }};
}

/// A grid of more than 2^31 - 1 cells runs the 64-bit twin of a 32-bit
/// single-pass 3-D `stream` kernel and still matches the reference.
#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs a CUDA device with 20 GB free: run with --include-ignored on a machine with one"]
fn cuda_grids_of_2_31_cells_or_more_take_64_bit_indices() {
    big_grid!(heat3d_f32_fixed_stream_s3v, "stream");
}

/// The same grid through fused steps, whose kernels index with 64 bits throughout.
#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs a CUDA device with 20 GB free: run with --include-ignored on a machine with one"]
fn cuda_temporal_grids_of_2_31_cells_or_more() {
    big_grid!(heat3d_f32_fixed_temporal, "temporal");
}

/// Steps a measuring session on until it has decided, in calls of 40 steps
/// (more than any trial part of `time_block` steps here takes, so each call
/// runs one part or more), then, where the trial started its cycles again in
/// parts of whole graphs (quick steps on a GPU), of 48 x 40: within 70 calls
/// of each, as a trial has at most 70 parts (two untimed, a first cycle of 4,
/// then `Trial::MOST_CYCLES` cycles of 4).
#[cfg(any(feature = "cuda", feature = "hip"))]
macro_rules! until_decided {
    ($s:ident, $params:expr) => {{
        assert_eq!(stencil_rt::gpu::Trial::MOST_CYCLES, 16);
        if $s.fusion() == stencil_tests::Fusion::Measure {
            assert_eq!($s.measurement(), None);
        }
        for steps in [40, 48 * 40] {
            for _ in 0..70 {
                if $s.fusion() != stencil_tests::Fusion::Measure {
                    break;
                }
                $s.step($params, steps).unwrap();
            }
        }
        assert_ne!($s.fusion(), stencil_tests::Fusion::Measure);
        // What it timed says what it kept; a session that ran one step a launch
        // from the start (a kernel that cannot take its grids) timed nothing.
        if let Some(m) = $s.measurement() {
            assert_eq!(m.faster(), $s.fusion(), "{m:?}");
            assert!(m.steps > 1 && m.fused > std::time::Duration::ZERO, "{m:?}");
        }
    }};
}

/// Leapfrog `$module` run on `$backend` in one session over several `step`
/// calls (`persistent`'s first sweep after an upload runs alone; the caller's
/// previous level, whose frame differs, is then written; later launches run
/// several sweeps, the last one short; launches of one step run the
/// single-step kernel into the buffer of the level before the last, first
/// in a session, twice in a row and after fused launches): after each call
/// both levels match the reference's after as many steps, and not after one
/// step fewer.
#[cfg(any(feature = "cuda", feature = "hip"))]
macro_rules! leapfrog_over_calls {
    ($backend:ident, $module:ident, $shape:expr, $params:expr $(, $input:ident)*) => {
        leapfrog_over_calls!($backend, $module, $shape, $params, None, [1, 1, 7, 0, 1, 13] $(, $input)*)
    };
    ($backend:ident, $module:ident, $shape:expr, $params:expr, $fusion:expr, $calls:expr $(, $input:ident)*) => {{
        use stencil_tests::$module as m;
        let shape = $shape;
        let cells: usize = shape.iter().product();
        let start: [Vec<m::Real>; 2] = [
            stencil_tests::random_grid(cells, 1),
            stencil_tests::random_grid(cells, 2),
        ];
        $(let $input = stencil_tests::random_grid(cells, 3);)*
        let reference = |steps| {
            let [mut u, mut u_prev] = start.clone();
            m::reference::run(&mut u, &mut u_prev $(, &$input)*, shape, $params, steps).unwrap();
            [u, u_prev]
        };
        let mut s = m::$backend::Session::new(shape).unwrap();
        if let Some(fusion) = $fusion {
            s.set_fusion(fusion);
        }
        s.upload(&start[0], &start[1] $(, &$input)*).unwrap();
        let mut total = 0;
        for steps in $calls {
            s.step($params, steps).unwrap();
            total += steps;
            let [mut u, mut u_prev] = start.clone();
            s.download(&mut u, &mut u_prev).unwrap();
            let (want, fewer) = (reference(total), reference(total - 1));
            let tol = stencil_tests::tolerance::<m::Real>(m::FLOPS_PER_CELL, total);
            for (level, got) in [u, u_prev].iter().enumerate() {
                let (err, at) = stencil_tests::worst_difference(got, &want[level]);
                let name = stringify!($module);
                assert!(err <= tol, "{name}, {total} steps, level {level}: {err:e} > {tol:e} at {at}");
                let (err, _) = stencil_tests::worst_difference(got, &fewer[level]);
                assert!(err > tol, "{name}, {total} steps, level {level}: within tolerance of one step fewer");
            }
        }
        // A session told how to fuse keeps it; one told to measure decides.
        let fusion: Option<stencil_tests::Fusion> = $fusion;
        match fusion {
            Some(stencil_tests::Fusion::Measure) => until_decided!(s, $params),
            Some(fusion) => assert_eq!(s.fusion(), fusion),
            None => {}
        }
        s
    }};
}

#[cfg(feature = "cuda")]
#[test]
#[cfg_attr(
    not(feature = "gpu-on-cpu"),
    ignore = "needs a CUDA device: run with --include-ignored on a machine with one"
)]
fn cuda_fused_leapfrogs_over_several_calls() {
    // `persistent_c5` runs one block per multiprocessor, each taking many tiles in turn.
    assert_eq!(
        stencil_tests::wave2d_f32_fixed_persistent_c5::cuda::TILING.occupancy,
        Some(1)
    );
    assert_eq!(
        stencil_tests::wave2d_f64_fixed_persistent::cuda::TILING.occupancy,
        None
    );
    leapfrog_over_calls!(
        cuda,
        wave2d_f32_fixed_persistent_c5,
        [37, 45],
        stencil_tests::wave2d_f32_fixed_persistent_c5::Params { c2: 0.1 }
    );
    leapfrog_over_calls!(
        cuda,
        wave2d_f64_fixed_persistent,
        [37, 45],
        stencil_tests::wave2d_f64_fixed_persistent::Params { c2: 0.1 }
    );
    leapfrog_over_calls!(
        cuda,
        wave2d_f64_fixed_temporal_c5,
        [37, 45],
        stencil_tests::wave2d_f64_fixed_temporal_c5::Params { c2: 0.1 }
    );
    leapfrog_over_calls!(
        cuda,
        leapfrog3d_f64_fixed_persistent_c5,
        [13, 17, 23],
        stencil_tests::leapfrog3d_f64_fixed_persistent_c5::Params {},
        vel
    );
    leapfrog_over_calls!(
        cuda,
        leapfrog3d_f32_fixed_persistent,
        [13, 17, 23],
        stencil_tests::leapfrog3d_f32_fixed_persistent::Params {},
        vel
    );
}

/// `auto`'s fused plans measure a fused launch against single steps on the
/// session's grids (`Fusion::Measure`, over several calls: the parts that fit
/// run in each) and keep the faster; `Fused` and `Single` force either, and
/// `Measure` can be asked of a strategy named in the spec (`persistent` here,
/// whose measurement times two sweeps). Each way matches the reference after
/// every call, and a measured session has decided once the calls ran enough
/// steps.
#[cfg(feature = "cuda")]
#[test]
#[cfg_attr(
    not(feature = "gpu-on-cpu"),
    ignore = "needs a CUDA device: run with --include-ignored on a machine with one"
)]
fn cuda_auto_measures_fused_launches_against_single_steps() {
    use stencil_tests::Fusion;
    use stencil_tests::leapfrog3d_f32_fixed_persistent as persistent;
    use stencil_tests::star3d25_f32_fixed_auto as star;
    use stencil_tests::wave2d_f32_fixed_auto as wave;
    // A temporal star whose kernel has no scalar twin and a 2-D leapfrog, both `auto`'s, measure
    // by default; `persistent` by name runs fused launches.
    assert_eq!(star::cuda::TILING.strategy, "temporal");
    assert_eq!(wave::cuda::TILING.strategy, "temporal");
    // `auto`'s single steps run `naive`'s kernel on small grids; named strategies never do.
    assert!(star::cuda::TILING.small_steps && wave::cuda::TILING.small_steps);
    assert!(!persistent::cuda::TILING.small_steps);
    assert_eq!(
        wave::cuda::Session::new([37, 45]).unwrap().fusion(),
        Fusion::Measure
    );
    assert_eq!(
        persistent::cuda::Session::new([13, 17, 23])
            .unwrap()
            .fusion(),
        Fusion::Fused
    );
    let calls = [1, 2, 7, 13, 40, 30];
    for fusion in [Fusion::Measure, Fusion::Fused, Fusion::Single] {
        leapfrog_over_calls!(
            cuda,
            wave2d_f32_fixed_auto,
            [37, 45],
            wave::Params { c2: 0.1 },
            Some(fusion),
            calls
        );
        leapfrog_over_calls!(
            cuda,
            leapfrog3d_f32_fixed_persistent,
            [13, 17, 23],
            persistent::Params {},
            Some(fusion),
            calls,
            vel
        );
        // Rows of whole 4-cell vectors, which the star's fused kernel takes (`_fuses`).
        let shape = [29, 45, 132];
        let start: Vec<f32> = stencil_tests::random_grid(29 * 45 * 132, 1);
        let params = star::Params { nu: 0.01 };
        let mut s = star::cuda::Session::new(shape).unwrap();
        s.set_fusion(fusion);
        s.upload(&start).unwrap();
        let mut total = 0;
        for steps in calls {
            s.step(params, steps).unwrap();
            total += steps;
            star_matches_its_reference(&s, &start, params, total, &format!("{fusion:?}"));
        }
        if fusion == Fusion::Measure {
            until_decided!(s, params);
        } else {
            assert_eq!(s.fusion(), fusion);
        }
    }
}

/// Rows of 131 cells, not whole vectors: the star's fused kernel declines
/// the grid, so the session runs single steps and says so from its first
/// step instead of measuring.
#[cfg(feature = "cuda")]
#[test]
#[cfg_attr(
    not(feature = "gpu-on-cpu"),
    ignore = "needs a CUDA device: run with --include-ignored on a machine with one"
)]
fn cuda_a_fused_kernel_that_declines_the_grid_runs_single_steps() {
    use stencil_tests::Fusion;
    use stencil_tests::star3d25_f32_fixed_auto as star;
    let shape = [29, 45, 131];
    let start: Vec<f32> = stencil_tests::random_grid(29 * 45 * 131, 2);
    let params = star::Params { nu: 0.01 };
    let mut s = star::cuda::Session::new(shape).unwrap();
    s.upload(&start).unwrap();
    assert_eq!(s.fusion(), Fusion::Measure);
    s.step(params, 3).unwrap();
    assert_eq!(s.fusion(), Fusion::Single);
    assert_eq!(s.measurement(), None);
    star_matches_its_reference(&s, &start, params, 3, "declined grid");
}

/// star3d25 f32 `auto`'s session after `steps` steps of `params` from
/// `start`, against the reference within the tolerance of that many steps.
#[cfg(feature = "cuda")]
fn star_matches_its_reference(
    s: &stencil_tests::star3d25_f32_fixed_auto::cuda::Session,
    start: &[f32],
    params: stencil_tests::star3d25_f32_fixed_auto::Params,
    steps: u64,
    what: &str,
) {
    use stencil_tests::star3d25_f32_fixed_auto as star;
    let mut got = start.to_vec();
    s.download(&mut got).unwrap();
    let mut want = start.to_vec();
    star::reference::run(&mut want, s.shape(), params, steps).unwrap();
    let (err, at) = stencil_tests::worst_difference(&got, &want);
    let tol = stencil_tests::tolerance::<f32>(star::FLOPS_PER_CELL, steps);
    assert!(
        err <= tol,
        "{what}, {steps} steps: {err:e} > {tol:e} at {at}"
    );
}

/// heat3d `$module` (f64: one state field, an input grid, a parameter) on
/// `$backend` over calls, each `(steps, alpha, set_graphs, graphs, replays,
/// captures)`: the call's steps and parameter, graphs turned on or off
/// before it (or left), and whether graphs are on and how many were replayed
/// and captured after it. After each call `u` matches the reference's after
/// the same calls, and not after one step fewer. By default, calls of 60
/// steps: a graph (48 launches) each call, a new one where the parameter
/// changed, the first one again where it changed back (and, the second time
/// they come, the last 12 launches as a short graph), none with graphs off.
/// `$before`, where given, runs before each call with the call's index.
#[cfg(any(feature = "cuda", feature = "hip"))]
macro_rules! heat_graphs_over_calls {
    ($backend:ident, $module:ident) => {
        heat_graphs_over_calls!(
            $backend,
            $module,
            [
                (60, 0.1, None, true, 1, 1),
                (60, 0.12, None, true, 2, 2),
                (60, 0.1, None, true, 4, 3),
                (60, 0.1, Some(false), false, 4, 3),
            ]
        )
    };
    ($backend:ident, $module:ident, $calls:expr) => {
        heat_graphs_over_calls!($backend, $module, $calls, |_| ())
    };
    ($backend:ident, $module:ident, $calls:expr, $before:expr) => {{
        use stencil_tests::$module as m;
        let shape = [13, 17, 23];
        let cells: usize = shape.iter().product();
        let start: Vec<m::Real> = stencil_tests::random_grid(cells, 1);
        let kappa: Vec<m::Real> = stencil_tests::random_grid::<m::Real>(cells, 2)
            .into_iter()
            .map(|k: m::Real| k.abs())
            .collect();
        let mut s = m::$backend::Session::new(shape).unwrap();
        assert!(s.graphs());
        s.upload(&start, &kappa).unwrap();
        let mut want = start.clone();
        let mut total = 0;
        let calls: &[(u64, m::Real, Option<bool>, bool, u64, u64)] = &$calls;
        for (call, &(steps, alpha, set_graphs, graphs, replays, captures)) in
            calls.iter().enumerate()
        {
            ($before)(call);
            if let Some(on) = set_graphs {
                s.set_graphs(on);
                assert_eq!(s.graphs(), on);
            }
            let params = m::Params { alpha };
            s.step(params, steps).unwrap();
            total += steps;
            let fewer = {
                let mut fewer = want.clone();
                m::reference::run(&mut fewer, &kappa, shape, params, steps - 1).unwrap();
                fewer
            };
            m::reference::run(&mut want, &kappa, shape, params, steps).unwrap();
            let mut got = start.clone();
            s.download(&mut got).unwrap();
            let tol = stencil_tests::tolerance::<m::Real>(m::FLOPS_PER_CELL, total);
            let (err, at) = stencil_tests::worst_difference(&got, &want);
            assert!(
                err <= tol,
                "call {call}, {total} steps: {err:e} > {tol:e} at {at}"
            );
            let (err, _) = stencil_tests::worst_difference(&got, &fewer);
            assert!(
                err > tol,
                "call {call}, {total} steps: within tolerance of one step fewer"
            );
            assert_eq!(s.graphs(), graphs, "call {call}");
            assert_eq!(s.replays(), replays, "call {call}");
            assert_eq!(s.captures(), captures, "call {call}");
        }
        s
    }};
}

/// heat3d f64 (`naive`, two buffers) in calls of 49 steps: a graph of 48
/// launches and one launch more, so each call leaves the buffers in the
/// other order and the next call's graph is the other one. The session keeps
/// both: two captures for four replays (one kept graph: four). Then a third
/// parameter, and the first two graphs still replay. `u` matches the
/// reference after every call (`heat_graphs_over_calls!`).
#[cfg(feature = "cuda")]
#[test]
#[cfg_attr(
    not(feature = "gpu-on-cpu"),
    ignore = "needs a CUDA device: run with --include-ignored on a machine with one"
)]
fn cuda_sessions_keep_a_graph_for_each_order_of_the_buffers() {
    heat_graphs_over_calls!(
        cuda,
        heat3d_f64_fixed,
        [
            (49, 0.1, None, true, 1, 1),
            (49, 0.1, None, true, 2, 2),
            (49, 0.1, None, true, 3, 2),
            (49, 0.1, None, true, 4, 2),
            (49, 0.12, None, true, 5, 3),
            (49, 0.1, None, true, 6, 3),
            (49, 0.1, None, true, 7, 3),
        ]
    );
}

/// heat3d f64 (`naive`) in calls of 48 steps, one graph each, with a
/// parameter that changes every call: past the 4 graphs a session keeps,
/// each capture updates the least recently replayed graph in place (no
/// instantiation), and a graph kept replays again. `u` matches the
/// reference after every call (`heat_graphs_over_calls!`).
#[cfg(feature = "cuda")]
#[test]
#[cfg_attr(
    not(feature = "gpu-on-cpu"),
    ignore = "needs a CUDA device: run with --include-ignored on a machine with one"
)]
fn cuda_sessions_update_their_oldest_graph_past_the_ones_they_keep() {
    let s = heat_graphs_over_calls!(
        cuda,
        heat3d_f64_fixed,
        [
            (48, 0.1, None, true, 1, 1),
            (48, 0.11, None, true, 2, 2),
            (48, 0.12, None, true, 3, 3),
            (48, 0.13, None, true, 4, 4),
            (48, 0.14, None, true, 5, 5),
            (48, 0.1, None, true, 6, 6),
            (48, 0.11, None, true, 7, 7),
            (48, 0.14, None, true, 8, 7),
        ]
    );
    // 0.14 took 0.1's graph, 0.1 then 0.11's, 0.11 then 0.12's.
    assert_eq!(s.updates(), 3);
}

/// heat3d f64 (`naive`, one launch a step) in calls of fewer than 48
/// launches: a run of 8 to 47 launches is captured the second time it comes
/// (the same launches, parameter and order of the buffers) and replayed
/// after; 7 launches never; runs that differ from call to call launch one by
/// one. `u` matches the reference after every call (`heat_graphs_over_calls!`).
#[cfg(feature = "cuda")]
#[test]
#[cfg_attr(
    not(feature = "gpu-on-cpu"),
    ignore = "needs a CUDA device: run with --include-ignored on a machine with one"
)]
fn cuda_sessions_replay_short_runs_the_second_time_they_come() {
    heat_graphs_over_calls!(
        cuda,
        heat3d_f64_fixed,
        [
            (20, 0.1, None, true, 0, 0),
            (20, 0.1, None, true, 1, 1),
            (20, 0.1, None, true, 2, 1),
            (7, 0.1, None, true, 2, 1),
            // 7 launches left the buffers in the other order: 21 from there, then 22.
            (21, 0.1, None, true, 2, 1),
            (22, 0.1, None, true, 2, 1),
            (22, 0.1, None, true, 3, 2),
            (8, 0.1, None, true, 3, 2),
            (8, 0.1, None, true, 4, 3),
        ]
    );
}

/// A graph update the runtime refuses (another kind of launches) leaves the
/// session to instantiate the capture instead: the results stay right and
/// graphs stay on. The emulated device refuses on request
/// (`cuda_on_cpu_refuse_updates`).
#[cfg(all(feature = "cuda", feature = "gpu-on-cpu"))]
#[test]
fn cuda_a_refused_graph_update_instantiates_the_capture() {
    unsafe extern "C" {
        fn cuda_on_cpu_refuse_updates(count: std::os::raw::c_int);
    }
    // SAFETY: sets a count in this thread's emulated device.
    unsafe { cuda_on_cpu_refuse_updates(1) };
    let s = heat_graphs_over_calls!(
        cuda,
        heat3d_f64_fixed,
        [
            (48, 0.1, None, true, 1, 1),
            (48, 0.11, None, true, 2, 2),
            (48, 0.12, None, true, 3, 3),
            (48, 0.13, None, true, 4, 4),
            (48, 0.14, None, true, 5, 5),
            (48, 0.15, None, true, 6, 6),
            (48, 0.15, None, true, 7, 6),
        ]
    );
    // The first update was refused (0.14 instantiated), the second not (0.15).
    assert_eq!(s.updates(), 1);
}

/// Sessions replay runs of many launches as graphs (`Session::graphs`), each
/// captured once per steps a launch, parameters and order of the buffers:
/// leapfrogs whose levels turn through 3 buffers (`naive`) and 4 (`auto`'s
/// fused kernel, one step a launch and fused launches of `time_block`, whole
/// graphs and calls of 20 fused launches), after the first launches copy the
/// previous level's frame; heat3d with its
/// parameter changed between calls and with graphs turned off; `persistent`
/// one step a launch (graphs) and fused (none). Each matches the reference
/// after every call, and graphs ran where they should.
#[cfg(feature = "cuda")]
#[test]
#[cfg_attr(
    not(feature = "gpu-on-cpu"),
    ignore = "needs a CUDA device: run with --include-ignored on a machine with one"
)]
fn cuda_sessions_replay_graphs_of_launches() {
    use stencil_tests::Fusion;
    use stencil_tests::wave2d_f32_fixed_auto as wave;
    let params = wave::Params { c2: 0.1 };
    let s = leapfrog_over_calls!(
        cuda,
        wave2d_f32_fixed,
        [37, 45],
        stencil_tests::wave2d_f32_fixed::Params { c2: 0.1 },
        None,
        [1, 1, 100, 7, 49]
    );
    assert_eq!(s.replays(), 3);
    let s = leapfrog_over_calls!(
        cuda,
        wave2d_f32_fixed_auto,
        [37, 45],
        params,
        Some(Fusion::Single),
        [1, 1, 100, 7, 49]
    );
    assert_eq!(s.replays(), 3);
    let t = wave::cuda::TILING.time_block as u64;
    assert!(t > 1);
    let s = leapfrog_over_calls!(
        cuda,
        wave2d_f32_fixed_auto,
        [37, 45],
        params,
        Some(Fusion::Fused),
        [1, 1, 48 * t + 5, 48 * t]
    );
    assert_eq!(s.replays(), 2);
    // Calls of 20 fused launches: a short run, captured the second time.
    let s = leapfrog_over_calls!(
        cuda,
        wave2d_f32_fixed_auto,
        [37, 45],
        params,
        Some(Fusion::Fused),
        [1, 1, 20 * t, 20 * t, 20 * t]
    );
    assert_eq!((s.replays(), s.captures()), (2, 1));
    // `persistent` replays its launches of one step (the single-step kernel's); a fused
    // launch is cooperative and runs all of a call's steps.
    let persistent = stencil_tests::wave2d_f32_fixed_persistent::Params { c2: 0.1 };
    let s = leapfrog_over_calls!(
        cuda,
        wave2d_f32_fixed_persistent,
        [37, 45],
        persistent,
        Some(Fusion::Single),
        [1, 1, 100, 7, 49]
    );
    assert_eq!(s.replays(), 3);
    let s = leapfrog_over_calls!(
        cuda,
        wave2d_f32_fixed_persistent,
        [37, 45],
        persistent,
        Some(Fusion::Fused),
        [1, 1, 100, 7, 49]
    );
    assert_eq!(s.replays(), 0);
    heat_graphs_over_calls!(cuda, heat3d_f64_fixed);
    heat_graphs_over_calls!(cuda, heat3d_f64_fixed_stream);
    heat_graphs_over_calls!(cuda, heat3d_f64_fixed_tensor);
}

/// A capture that gives no graph (invalidated: another thread synchronized
/// the device) is tried again at the next launch's run, and graphs stay on;
/// three in a row turn graphs off, and the session launches every step
/// itself. Each call is 60 steps (a graph where a capture of 48 launches
/// took), and heat3d matches the reference after it, not after one step
/// fewer: no step is lost or run twice by a capture that gave none. The
/// emulated device refuses on request (`cuda_on_cpu_refuse_captures`), as
/// CUDA ends a capture that something invalidated.
#[cfg(all(feature = "cuda", feature = "gpu-on-cpu"))]
#[test]
fn cuda_captures_that_give_no_graph_are_tried_again_then_turn_graphs_off() {
    unsafe extern "C" {
        fn cuda_on_cpu_refuse_captures(count: std::os::raw::c_int);
    }
    let refusals = [1, 2, 2, 3, 0];
    heat_graphs_over_calls!(
        cuda,
        heat3d_f64_fixed,
        [
            // One refused, the next captured.
            (60, 0.1, None, true, 1, 1),
            // Two refused, then one captured, which starts the count again.
            (60, 0.12, None, true, 2, 2),
            (60, 0.14, None, true, 3, 3),
            // Three refused: graphs off.
            (60, 0.16, None, false, 3, 3),
            (60, 0.1, Some(true), true, 4, 4),
        ],
        // SAFETY: sets a count in this thread's emulated device.
        |call: usize| unsafe { cuda_on_cpu_refuse_captures(refusals[call]) }
    );
}

/// Sessions in three threads at once, each capturing a graph every call (a
/// parameter that changes), updating kept ones and dropping its graphs,
/// while a fourth thread's session synchronizes over and over: no call
/// fails, and each call of 48 steps replays its graph (a capture that gave
/// none would leave the call without one). A device synchronization fails
/// while another thread captures and ends that capture
/// (design notes, `capture-threads`; the emulated device does the
/// same), so sessions wait for the legacy stream instead.
#[cfg(any(feature = "cuda", feature = "hip"))]
macro_rules! graphs_in_threads {
    ($backend:ident) => {{
        use std::sync::atomic::{AtomicBool, Ordering};
        let done = AtomicBool::new(false);
        std::thread::scope(|threads| {
            let syncing = threads.spawn(|| {
                let s =
                    stencil_tests::heat3d_f64_fixed::$backend::Session::new([13, 17, 23]).unwrap();
                let mut syncs = 0u64;
                while !done.load(Ordering::Relaxed) {
                    s.synchronize().unwrap();
                    syncs += 1;
                    std::thread::sleep(std::time::Duration::from_micros(10));
                }
                syncs
            });
            let capturing: Vec<_> = (0..3)
                .map(|_| {
                    threads.spawn(|| {
                        for _ in 0..4 {
                            let s = heat_graphs_over_calls!(
                                $backend,
                                heat3d_f64_fixed,
                                [
                                    (48, 0.1, None, true, 1, 1),
                                    (48, 0.11, None, true, 2, 2),
                                    (48, 0.12, None, true, 3, 3),
                                    (48, 0.13, None, true, 4, 4),
                                    (48, 0.14, None, true, 5, 5),
                                ]
                            );
                            assert_eq!(s.updates(), 1);
                        }
                    })
                })
                .collect();
            let ended: Vec<_> = capturing.into_iter().map(|t| t.join()).collect();
            done.store(true, Ordering::Relaxed);
            assert!(syncing.join().unwrap() > 0);
            for end in ended {
                if let Err(panic) = end {
                    std::panic::resume_unwind(panic);
                }
            }
        })
    }};
}

#[cfg(feature = "cuda")]
#[test]
#[cfg_attr(
    not(feature = "gpu-on-cpu"),
    ignore = "needs a CUDA device: run with --include-ignored on a machine with one"
)]
fn cuda_sessions_in_several_threads_keep_their_graphs() {
    graphs_in_threads!(cuda);
}

#[cfg(feature = "hip")]
#[test]
#[cfg_attr(
    not(feature = "gpu-on-cpu"),
    ignore = "needs a HIP device: run with --include-ignored on a machine with one"
)]
fn hip_sessions_in_several_threads_keep_their_graphs() {
    graphs_in_threads!(hip);
}

#[cfg(feature = "hip")]
#[test]
#[cfg_attr(
    not(feature = "gpu-on-cpu"),
    ignore = "needs a HIP device: run with --include-ignored on a machine with one"
)]
fn hip_sessions_replay_graphs_of_launches() {
    let s = leapfrog_over_calls!(
        hip,
        wave2d_f32_fixed,
        [37, 45],
        stencil_tests::wave2d_f32_fixed::Params { c2: 0.1 },
        None,
        [1, 1, 100, 7, 49]
    );
    assert_eq!(s.replays(), 3);
    heat_graphs_over_calls!(hip, heat3d_f64_fixed);
    // Past the 4 graphs kept, a fifth parameter updates the oldest in place.
    let s = heat_graphs_over_calls!(
        hip,
        heat3d_f64_fixed,
        [
            (48, 0.1, None, true, 1, 1),
            (48, 0.11, None, true, 2, 2),
            (48, 0.12, None, true, 3, 3),
            (48, 0.13, None, true, 4, 4),
            (48, 0.14, None, true, 5, 5),
            (48, 0.13, None, true, 6, 5),
        ]
    );
    assert_eq!(s.updates(), 1);
}

#[cfg(feature = "hip")]
#[test]
#[cfg_attr(
    not(feature = "gpu-on-cpu"),
    ignore = "needs a HIP device: run with --include-ignored on a machine with one"
)]
fn hip_fused_leapfrogs_over_several_calls() {
    leapfrog_over_calls!(
        hip,
        wave2d_f32_fixed_persistent_c5,
        [37, 45],
        stencil_tests::wave2d_f32_fixed_persistent_c5::Params { c2: 0.1 }
    );
    leapfrog_over_calls!(
        hip,
        leapfrog3d_f64_fixed_persistent_c5,
        [13, 17, 23],
        stencil_tests::leapfrog3d_f64_fixed_persistent_c5::Params {},
        vel
    );
}

/// A session's `upload` and `download` check every length before they copy
/// anything: a short second grid is an `Err` that leaves the device and the
/// host grids as they were.
#[cfg(feature = "cuda")]
#[test]
#[cfg_attr(
    not(feature = "gpu-on-cpu"),
    ignore = "needs a CUDA device: run with --include-ignored on a machine with one"
)]
fn cuda_sessions_check_every_length_before_copying() {
    use stencil_tests::{StencilError, random_grid, wave2d_f32_fixed as wave};
    let shape = [7, 9];
    let (u, prev): (Vec<f32>, Vec<f32>) = (random_grid(63, 1), random_grid(63, 2));
    let mut s = wave::cuda::Session::new(shape).unwrap();
    s.upload(&u, &prev).unwrap();
    let short = vec![0.0f32; 62];
    assert!(matches!(
        s.upload(&vec![5.0; 63], &short),
        Err(StencilError::LengthMismatch {
            field: "u_prev",
            actual: 62,
            ..
        })
    ));
    let (mut got_u, mut got_prev) = (vec![-1.0f32; 63], vec![-1.0f32; 62]);
    assert!(matches!(
        s.download(&mut got_u, &mut got_prev),
        Err(StencilError::LengthMismatch {
            field: "u_prev",
            actual: 62,
            ..
        })
    ));
    assert_eq!(got_u, vec![-1.0; 63], "download wrote `u` before it failed");
    // The failed upload changed nothing on the device.
    let mut got_prev = vec![0.0f32; 63];
    s.download(&mut got_u, &mut got_prev).unwrap();
    assert_eq!((got_u, got_prev), (u, prev));
}
