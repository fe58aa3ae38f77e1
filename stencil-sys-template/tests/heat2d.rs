//! The template's stencil against its reference, and against a hand-written step.

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
    heat2d::reference::run(&mut u, &kappa, shape, heat2d::Params { alpha }, 1).unwrap();
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

#[test]
#[cfg_attr(
    any(feature = "cuda", feature = "hip"),
    ignore = "with a GPU feature the default backend needs a device: run with --include-ignored there"
)]
fn default_backend_matches_reference() {
    let shape = [33, 70];
    let kappa = grid(33 * 70, 3);
    let mut a = grid(33 * 70, 4);
    let mut b = a.clone();
    let params = heat2d::Params { alpha: 0.2 };
    heat2d::run(&mut a, &kappa, shape, params, 25).unwrap();
    heat2d::reference::run(&mut b, &kappa, shape, params, 25).unwrap();
    let worst = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-12, "worst difference {worst}");
}

#[test]
fn wrong_lengths_are_errors() {
    let mut u = vec![0.0; 12];
    let err = heat2d::run(&mut u, &[0.0; 11], [3, 4], heat2d::Params::default(), 1).unwrap_err();
    assert_eq!(
        err,
        StencilError::LengthMismatch {
            stencil: "heat2d",
            field: "kappa",
            expected: 12,
            actual: 11
        }
    );
    let err = heat2d::run(&mut u, &[0.0; 12], [2, 6], heat2d::Params::default(), 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "heat2d: axis `y` has 2 cells but the stencil needs at least 3"
    );
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs a CUDA device: run with --include-ignored on the GPU machine"]
fn cuda_session_matches_reference() {
    let shape = [67, 133];
    let kappa = grid(67 * 133, 5);
    let mut want = grid(67 * 133, 6);
    let mut got = vec![0.0; want.len()];
    let params = heat2d::Params { alpha: 0.2 };
    let mut session = heat2d::cuda::Session::new(shape).unwrap();
    session.upload(&want, &kappa).unwrap();
    session.step(params, 7).unwrap();
    session.step(params, 3).unwrap();
    session.download(&mut got).unwrap();
    heat2d::reference::run(&mut want, &kappa, shape, params, 10).unwrap();
    let worst = got
        .iter()
        .zip(&want)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-12, "worst difference {worst}");
    let err = session.upload(&want[1..], &kappa).unwrap_err();
    assert!(
        matches!(
            err,
            stencil_sys_template::StencilError::LengthMismatch { field: "u", .. }
        ),
        "{err}"
    );
}
