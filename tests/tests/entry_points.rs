//! The CPU entry points beside `run`: `run_in` with a `Workspace` (the
//! same grids as `run`, call after call, the workspace's scratch grids
//! reused: coupled2d has a state field's level, a temporary and a
//! leapfrog), and `run_arrays` on `ndarray` views (the same grids as `run`;
//! other shapes and layouts refused before anything runs).

use stencil_rt::ndarray::{Array2, ShapeBuilder};
use stencil_tests::{StencilError, coupled2d_f64_fixed as coupled};

fn grid(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| ((i as u64 * 2654435761 + seed * 97) % 1000) as f64 / 1000.0)
        .collect()
}

#[test]
fn run_in_matches_run_and_reuses_its_grids() {
    let shape = [9, 14];
    let cells = 9 * 14;
    let params = coupled::Params { dt: 0.05 };
    let (mut u, mut v, mut v_prev) = (grid(cells, 1), grid(cells, 2), grid(cells, 3));
    let (mut u2, mut v2, mut v2_prev) = (u.clone(), v.clone(), v_prev.clone());
    let mut work = coupled::Workspace::new();
    for steps in [3, 1, 4] {
        coupled::reference::run(&mut u, &mut v, &mut v_prev, shape, params, steps).unwrap();
        coupled::reference::run_in(
            &mut work,
            &mut u2,
            &mut v2,
            &mut v2_prev,
            shape,
            params,
            steps,
        )
        .unwrap();
        assert_eq!(
            (&u, &v, &v_prev),
            (&u2, &v2, &v2_prev),
            "after {steps} more steps"
        );
        // u's and v's levels and the temporary f.
        assert_eq!(work.len(), 3 * cells);
    }
    #[cfg(feature = "openmp")]
    {
        coupled::openmp::run_in(&mut work, &mut u2, &mut v2, &mut v2_prev, shape, params, 2)
            .unwrap();
        coupled::reference::run(&mut u, &mut v, &mut v_prev, shape, params, 2).unwrap();
        let (worst, at) = stencil_tests::worst_difference(&u2, &u);
        let allowed = stencil_tests::tolerance::<f64>(coupled::FLOPS_PER_CELL, 2);
        assert!(worst <= allowed, "{worst:e} at cell {at}");
    }
}

#[test]
fn run_arrays_matches_run_and_refuses_other_shapes_and_layouts() {
    let (ny, nx) = (9, 14);
    let params = coupled::Params { dt: 0.05 };
    let array = |seed| Array2::from_shape_vec((ny, nx), grid(ny * nx, seed)).unwrap();
    let (mut u, mut v, mut v_prev) = (array(1), array(2), array(3));
    let (mut su, mut sv, mut sv_prev) = (grid(ny * nx, 1), grid(ny * nx, 2), grid(ny * nx, 3));
    coupled::run_arrays(u.view_mut(), v.view_mut(), v_prev.view_mut(), params, 5).unwrap();
    coupled::run(&mut su, &mut sv, &mut sv_prev, [ny, nx], params, 5).unwrap();
    assert_eq!(u.as_slice().unwrap(), su);
    assert_eq!(v_prev.as_slice().unwrap(), sv_prev);
    // Another shape, and a column-major array: errors that changed nothing.
    let before = u.clone();
    let mut small = Array2::<f64>::zeros((ny, nx - 1));
    let err =
        coupled::run_arrays(u.view_mut(), v.view_mut(), small.view_mut(), params, 1).unwrap_err();
    assert_eq!(
        err,
        StencilError::ShapeMismatch {
            stencil: "coupled2d_f64_fixed",
            field: "v_prev",
            expected: vec![ny, nx],
            actual: vec![ny, nx - 1]
        }
    );
    let mut fortran = Array2::<f64>::zeros((ny, nx).f());
    let err = coupled::run_arrays(
        u.view_mut(),
        fortran.view_mut(),
        v_prev.view_mut(),
        params,
        1,
    )
    .unwrap_err();
    assert!(
        matches!(err, StencilError::NotContiguous { field: "v", .. }),
        "{err}"
    );
    assert_eq!(u, before);
}
