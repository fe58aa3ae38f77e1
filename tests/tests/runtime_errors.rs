//! Misuse at run time is an `Err` naming what is wrong, and leaves the grids untouched.

use stencil_tests::{StencilError, heat3d_f64_fixed as heat3d, wave2d_f64_fixed as wave};

#[test]
fn wrong_lengths() {
    let mut u = vec![1.0; 27];
    let err = heat3d::run(&mut u, &[0.5; 26], [3, 3, 3], heat3d::Params::default(), 1).unwrap_err();
    assert_eq!(
        err,
        StencilError::LengthMismatch {
            stencil: "heat3d_f64_fixed",
            field: "kappa",
            expected: 27,
            actual: 26
        }
    );
    assert_eq!(
        err.to_string(),
        "heat3d_f64_fixed: `kappa` has 26 elements but the shape has 27 cells"
    );
    let (mut u, mut prev) = (vec![1.0f64; 9], vec![1.0f64; 10]);
    let err = wave::run(&mut u, &mut prev, [3, 3], wave::Params::default(), 1).unwrap_err();
    assert!(
        matches!(
            err,
            StencilError::LengthMismatch {
                field: "u_prev",
                expected: 9,
                actual: 10,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn shapes_too_small_or_zero() {
    let mut u = vec![1.0; 18];
    for shape in [[2, 3, 3], [3, 2, 3], [3, 3, 2], [0, 3, 3]] {
        let err = heat3d::run(&mut u, &[0.5; 18], shape, heat3d::Params::default(), 1).unwrap_err();
        assert!(
            matches!(err, StencilError::ShapeTooSmall { min: 3, .. }),
            "{shape:?}: {err:?}"
        );
    }
    let err = heat3d::reference::run(&mut u, &[0.5; 18], [2, 3, 3], heat3d::Params::default(), 1)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "heat3d_f64_fixed: axis `z` has 2 cells but the stencil needs at least 3"
    );
}

#[test]
fn shapes_whose_cell_count_overflows() {
    let mut u = vec![1.0; 27];
    let huge = usize::MAX / 2;
    let err = heat3d::run(
        &mut u,
        &[0.5; 27],
        [huge, huge, 3],
        heat3d::Params::default(),
        1,
    )
    .unwrap_err();
    assert_eq!(
        err,
        StencilError::ShapeOverflow {
            stencil: "heat3d_f64_fixed"
        }
    );
}

#[test]
fn generic_entry_point_counts() {
    let mut a = vec![1.0; 27];
    let mut b = vec![1.0; 27];
    let err = heat3d::run_grids(&mut [&mut a], &[3, 3, 3], &[0.1], 1).unwrap_err();
    assert_eq!(err.to_string(), "heat3d_f64_fixed: takes 2 grids, got 1");
    let err = heat3d::run_grids(&mut [&mut a, &mut b], &[3, 9], &[0.1], 1).unwrap_err();
    assert_eq!(
        err,
        StencilError::ArgumentCount {
            stencil: "heat3d_f64_fixed",
            what: "axes",
            expected: 3,
            actual: 2
        }
    );
    let err = heat3d::run_grids(&mut [&mut a, &mut b], &[3, 3, 3], &[], 1).unwrap_err();
    assert!(matches!(
        err,
        StencilError::ArgumentCount {
            what: "params",
            expected: 1,
            actual: 0,
            ..
        }
    ));
}

#[test]
fn errors_leave_grids_untouched_and_zero_steps_is_a_no_op() {
    let mut u: Vec<f64> = stencil_tests::random_grid(27, 1);
    let before = u.clone();
    assert!(
        heat3d::run(
            &mut u,
            &[0.5; 26],
            [3, 3, 3],
            heat3d::Params { alpha: 0.1 },
            5
        )
        .is_err()
    );
    assert_eq!(u, before);
    heat3d::run(
        &mut u,
        &[0.5; 27],
        [3, 3, 3],
        heat3d::Params { alpha: 0.1 },
        0,
    )
    .unwrap();
    assert_eq!(u, before);
}

#[test]
fn constants_describe_the_stencil() {
    assert_eq!(heat3d::RADIUS, [1, 1, 1]);
    assert_eq!(heat3d::MIN_SHAPE, [3, 3, 3]);
    assert_eq!(heat3d::FIELDS, ["u", "kappa"]);
    assert_eq!(
        (
            heat3d::POINTS,
            heat3d::FLOPS_PER_CELL,
            heat3d::BYTES_PER_CELL
        ),
        (8, 10, 24)
    );
    assert_eq!(wave::GRIDS, ["u", "u_prev"]);
    assert_eq!(stencil_tests::star3d25_f64_fixed::RADIUS, [4, 4, 4]);
    assert_eq!(stencil_tests::star3d25_f64_fixed::POINTS, 25);
}

/// A device allocation that fails is `Err(Device)` with the runtime's message,
/// and the buffers allocated before it are freed: heat3d f64 holds three
/// grids (two levels of `u`, `kappa`); 2^33 cells make three 64 GiB buffers,
/// more than any GPU here holds (80 GB on an H100, 141 GB on an H200) once
/// one or two are allocated. A session of three 16 GiB buffers then fits
/// on either only if those were freed.
#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs a CUDA device: run with --include-ignored on a machine with one"]
fn a_device_allocation_that_fails_is_an_error_and_frees_the_rest() {
    for _ in 0..3 {
        let err = match heat3d::cuda::Session::new([2048, 2048, 2048]) {
            Err(err) => err,
            Ok(_) => panic!("192 GiB were allocated"),
        };
        match &err {
            StencilError::Device { call, message, .. } => {
                assert_eq!(*call, "malloc");
                assert!(message.contains("memory"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }
    let mut s = heat3d::cuda::Session::new([512, 2048, 2048]).unwrap();
    s.step(heat3d::Params::default(), 1).unwrap();
    s.synchronize().unwrap();
}

/// With no device (or no driver), GPU calls are `Err(Device)` carrying the
/// runtime's message, and the host grids are left as they were; with one,
/// the same call runs. CI has no GPU, so there this checks the first case.
#[cfg(any(feature = "cuda", feature = "hip"))]
#[test]
fn without_a_device_gpu_calls_are_errors_with_the_runtime_message() {
    #[cfg(feature = "cuda")]
    let (count, run): (_, fn(&mut [f64], &[f64]) -> Result<(), StencilError>) =
        (stencil_tests::cuda_device_count(), |u, kappa| {
            heat3d::cuda::run(u, kappa, [3, 3, 3], heat3d::Params::default(), 1)
        });
    #[cfg(all(not(feature = "cuda"), feature = "hip"))]
    let (count, run): (_, fn(&mut [f64], &[f64]) -> Result<(), StencilError>) =
        (stencil_tests::hip_device_count(), |u, kappa| {
            heat3d::hip::run(u, kappa, [3, 3, 3], heat3d::Params::default(), 1)
        });
    let mut u: Vec<f64> = (0..27).map(f64::from).collect();
    let result = run(&mut u, &[0.5; 27]);
    match count {
        Ok(n) if n > 0 => result.unwrap(),
        _ => {
            match result.unwrap_err() {
                StencilError::Device { call, message, .. } => {
                    assert!(!call.is_empty() && !message.is_empty());
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(u, (0..27).map(f64::from).collect::<Vec<_>>());
        }
    }
}
