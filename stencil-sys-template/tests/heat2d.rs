//! The template's stencil, in both precisions its spec lists, against its
//! reference, and the reference against a hand-written step.

use stencil_sys_template::{StencilError, heat2d};

fn grid(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

#[test]
fn the_reference_matches_a_hand_written_update() {
    let shape = [5, 7];
    let (u0, kappa) = (grid(35, 1), grid(35, 2));
    let mut u = u0.clone();
    let alpha = 0.2;
    heat2d::f64::reference::run(&mut u, &kappa, shape, heat2d::f64::Params { alpha }, 1).unwrap();
    for y in 0..5 {
        for x in 0..7 {
            let c = y * 7 + x;
            let want = if y == 0 || y == 4 || x == 0 || x == 6 {
                u0[c]
            } else {
                u0[c]
                    + alpha
                        * kappa[c]
                        * (u0[c - 7] + u0[c + 7] + u0[c - 1] + u0[c + 1] - 4.0 * u0[c])
            };
            assert!(
                (u[c] - want).abs() <= 1e-14,
                "cell ({y}, {x}): {} vs {want}",
                u[c]
            );
        }
    }
}

/// The default backend of precision `$real` against its reference after 25
/// steps: the largest difference at most `$tolerance` (a few ulps of the
/// values, 0..1, per step).
macro_rules! default_backend_matches_reference {
    ($test:ident, $real:ident, $tolerance:expr) => {
        #[test]
        #[cfg_attr(
            any(feature = "cuda", feature = "hip"),
            ignore = "with a GPU feature the default backend needs a device: run with --include-ignored there"
        )]
        fn $test() {
            let shape = [33, 70];
            let cast = |v: Vec<f64>| v.into_iter().map(|x| x as $real).collect::<Vec<$real>>();
            let kappa = cast(grid(33 * 70, 3));
            let mut a = cast(grid(33 * 70, 4));
            let mut b = a.clone();
            let params = heat2d::$real::Params { alpha: 0.2 };
            heat2d::$real::run(&mut a, &kappa, shape, params, 25).unwrap();
            heat2d::$real::reference::run(&mut b, &kappa, shape, params, 25).unwrap();
            let worst = a
                .iter()
                .zip(&b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, $real::max);
            assert!(worst <= $tolerance, "worst difference {worst}");
            assert_ne!(a, cast(grid(33 * 70, 4)), "the steps changed the grid");
        }
    };
}

default_backend_matches_reference!(f32_default_backend_matches_reference, f32, 1e-5);
default_backend_matches_reference!(f64_default_backend_matches_reference, f64, 1e-12);

#[test]
fn wrong_lengths_are_errors() {
    let mut u = vec![0.0; 12];
    let params = heat2d::f64::Params::default();
    let err = heat2d::f64::run(&mut u, &[0.0; 11], [3, 4], params, 1).unwrap_err();
    assert_eq!(
        err,
        StencilError::LengthMismatch {
            stencil: "heat2d_f64",
            field: "kappa",
            expected: 12,
            actual: 11
        }
    );
    let err = heat2d::f64::run(&mut u, &[0.0; 12], [2, 6], params, 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "heat2d_f64: axis `y` has 2 cells but the stencil needs at least 3"
    );
}

/// A CUDA session made here, stepped in a spawned thread (a `Session` is
/// `Send`), against the reference.
#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs a CUDA device: run with --include-ignored on the GPU machine"]
fn cuda_session_moves_into_a_thread_and_matches_reference() {
    let shape = [67, 133];
    let kappa = grid(67 * 133, 5);
    let mut want = grid(67 * 133, 6);
    let params = heat2d::f64::Params { alpha: 0.2 };
    let mut session = heat2d::f64::cuda::Session::new(shape).unwrap();
    session.upload(&want, &kappa).unwrap();
    let worker = std::thread::spawn(move || {
        session.step(params, 7).unwrap();
        session.step(params, 3).unwrap();
        let mut got = vec![0.0; 67 * 133];
        session.download(&mut got).unwrap();
        (session, got)
    });
    let (mut session, got) = worker.join().unwrap();
    heat2d::f64::reference::run(&mut want, &kappa, shape, params, 10).unwrap();
    let worst = got
        .iter()
        .zip(&want)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-12, "worst difference {worst}");
    let err = session.upload(&want[1..], &kappa).unwrap_err();
    assert!(
        matches!(err, StencilError::LengthMismatch { field: "u", .. }),
        "{err}"
    );
}

/// `run_arrays` (feature `ndarray`) in each precision: the slice API's grids.
#[cfg(feature = "ndarray")]
#[test]
#[cfg_attr(
    any(feature = "cuda", feature = "hip"),
    ignore = "with a GPU feature the default backend needs a device: run with --include-ignored there"
)]
fn arrays_give_what_slices_give_in_both_precisions() {
    use stencil_rt::ndarray::Array2;
    let (ny, nx) = (21, 38);
    macro_rules! check {
        ($real:ident) => {{
            let cast = |v: Vec<f64>| v.into_iter().map(|x| x as $real).collect::<Vec<$real>>();
            let (u0, kappa) = (cast(grid(ny * nx, 7)), cast(grid(ny * nx, 8)));
            let params = heat2d::$real::Params { alpha: 0.2 };
            let mut u = Array2::from_shape_vec((ny, nx), u0.clone()).unwrap();
            let k = Array2::from_shape_vec((ny, nx), kappa.clone()).unwrap();
            heat2d::$real::run_arrays(u.view_mut(), k.view(), params, 12).unwrap();
            let mut slices = u0.clone();
            heat2d::$real::run(&mut slices, &kappa, [ny, nx], params, 12).unwrap();
            assert_eq!(u.as_slice().unwrap(), slices);
            assert_ne!(slices, u0);
        }};
    }
    check!(f32);
    check!(f64);
}
