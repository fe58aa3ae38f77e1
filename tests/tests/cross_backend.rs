//! Every stencil variant on every enabled backend against the reference.

include!(concat!(env!("OUT_DIR"), "/cross_backend_tests.rs"));

#[test]
fn every_variant_is_registered() {
    // 5 examples + 5 suite stencils + the test specs, each in f32/f64 x
    // fixed/periodic, and the random stencils in one dtype and boundary each;
    // with a GPU backend also `naive` of 3 cells a thread and of blocks of
    // 3 rows of 2 cells, `tiled`, four `stream` variants and `auto`
    // (tests/build.rs), the blocks, the `stream` ones and `auto` not for 1-D stencils,
    // and three `temporal` and two `persistent` variants in every fixed pair
    // and one of each in every periodic pair, of
    // heat2d, heat3d, star3d25, j2d5pt, j3d7pt, j3d13pt, j3d27pt, coefstar3d, boxsum2d and boxsum3d, of the
    // leapfrogs wave2d, leapfrog3d and acoustic25 and of the random stencils that fuse,
    // three `temporal` ones of the random leapfrogs that never read their
    // previous level, and `temporal_vec` (2 steps in threads of vectors) of
    // the stars it suits: star3d25 in f32 (in f64 its registers leave room
    // for one step only), j3d13pt in f32 and f64, and acoustic25 and coefstar3d
    // in f32 (CUDA's ring kernel), and in z sums of 2 columns a thread j3d7pt,
    // j3d27pt and boxsum3d in f32; and two `tensor`
    // variants of the fixed f64 3-D stencils whose in-plane reads are a sum
    // of products (heat3d, star3d25, j3d7pt, j3d13pt, leapfrog3d, acoustic25, coefstar3d and the
    // random ones that are).
    if cfg!(stencil_tests_narrowed) {
        // The counts below name specs a narrowed build leaves out.
        eprintln!("STENCIL_TESTS_ONLY narrowed the build: the registry's count is not checked");
        return;
    }
    let (random, random_1d) = stencil_tests::RANDOM_STENCILS;
    // Each spec in 4 (dtype, boundary) pairs, or 2 (tests/build.rs); the fused
    // variants are of every pair (a fixed or periodic boundary): all five of
    // a fixed one, two of a periodic one (`temporal_v3`, `persistent_c5`;
    // the random leapfrogs' `temporal_v3`); `temporal_vec` and `tensor` of
    // the fixed pairs, which every choice holds.
    // The specs that name their sides (edges*, layers3d, shore2d, acoustic_pml) are
    // built in their own boundary and dtype only, with every single-step strategy.
    let pairs = stencil_tests::PAIRS;
    let (specs, specs_1d) = stencil_tests::PAIRED;
    let (own, own_1d) = stencil_tests::OWN_BOUNDARY;
    let variants = if cfg!(feature = "cuda") || cfg!(feature = "hip") {
        let periodic = stencil_tests::PERIODIC_PAIRS;
        let (fusable, fusable_periodic) = stencil_tests::RANDOM_FUSABLE;
        let (leapfrog, leapfrog_periodic) = stencil_tests::RANDOM_LEAPFROG_FUSABLE;
        let fused = 5 * (13 * (pairs - periodic) + fusable)
            + 2 * (13 * periodic + fusable_periodic)
            + 3 * leapfrog
            + leapfrog_periodic
            + 8;
        let tensor = 2 * (7 + stencil_tests::RANDOM_TENSOR);
        let own = own * 9 - own_1d * 6;
        specs * pairs * 9 - specs_1d * pairs * 6 + own + random * 9 - random_1d * 6 + fused + tensor
    } else {
        specs * pairs + own + random
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

#[cfg(not(stencil_tests_narrowed))]
#[path = "cross_backend/named.rs"]
mod named;
