//! Every stencil variant on every enabled backend against the reference.

include!(concat!(env!("OUT_DIR"), "/cross_backend_tests.rs"));

#[test]
fn every_variant_is_registered() {
    // 5 examples + 2 suite stencils + 3 test specs, each in f32/f64 x fixed/periodic;
    // with a GPU backend also `tiled`, four `stream` variants and `auto`
    // (tests/build.rs), the `stream` ones and `auto` not for the one 1-D spec.
    let variants = if cfg!(feature = "cuda") || cfg!(feature = "hip") {
        10 * 4 * 7 - 4 * 5
    } else {
        10 * 4
    };
    assert_eq!(
        stencil_tests::F32.len() + stencil_tests::F64.len(),
        variants
    );
}

#[test]
fn the_comparison_catches_a_single_wrong_cell() {
    let want: Vec<f64> = stencil_tests::random_grid(1000, 7);
    let mut got = want.clone();
    got[417] += 1e-9;
    let (err, at) = stencil_tests::worst_difference(&got, &want);
    assert_eq!(at, 417);
    assert!(err > stencil_tests::tolerance::<f64>(50, 5), "{err}");
    got[417] = f64::NAN;
    assert_eq!(
        stencil_tests::worst_difference(&got, &want).0,
        f64::INFINITY
    );
}
