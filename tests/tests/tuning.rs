//! A stencil with a tuning file (`tests/build.rs` writes one beside the
//! variants): its GPU module carries the spec's own plan and the two tuned
//! ones, a session picks the plan tuned for its device (the emulated
//! device's, under `gpu-on-cpu`), else the spec's own, and every plan
//! computes what the reference computes. The stale entry of the file is
//! not compiled (its stencil carries one plan).
#![cfg(any(feature = "cuda", feature = "hip"))]

use stencil_tests::{Device, Plan};
use stencil_tests::{StencilError, heat2d_f32_fixed, heat2d_f64_fixed as heat2d};

/// `steps` steps of `PLANS[plan]` on odd grids, against the reference.
macro_rules! tuned_plan_tests {
    ($name:ident, $backend:ident, $runtime:ident, $feature:literal, $title:literal) => {
        #[cfg(feature = $feature)]
        #[test]
        #[cfg_attr(
            not(feature = "gpu-on-cpu"),
            ignore = concat!("needs a ", $title, " device: run with --include-ignored on a machine with one")
        )]
        fn $name() {
            use heat2d::$backend::{PLANS, Session};
            let strategies: Vec<_> = PLANS.iter().map(|p| p.tiling.strategy).collect();
            assert_eq!(strategies, ["naive", "stream", "temporal"]);
            assert_eq!(PLANS[0].tuned, None);
            assert_eq!(PLANS[1].tuned.unwrap().device, "Emulated device");
            assert_eq!(PLANS[2].tuned.unwrap().device, "NVIDIA H200");
            assert_eq!(heat2d_f32_fixed::$backend::PLANS.len(), 1, "the stale entry is left out");

            let shape = [37, 45];
            let device = stencil_tests::$runtime::device().unwrap();
            if cfg!(feature = "gpu-on-cpu") {
                assert_eq!(device, Device::new("Emulated device", "sm_90"));
            }
            let session = Session::new(shape).unwrap();
            assert_eq!(session.plan(), &PLANS[Plan::pick(PLANS, &device)]);
            let h200 = Session::for_device(shape, &Device::new("NVIDIA H200", "sm_90")).unwrap();
            assert_eq!(h200.plan(), &PLANS[2]);
            let other = Session::for_device(shape, &Device::new("NVIDIA A100-SXM4-80GB", "sm_80"));
            assert_eq!(other.unwrap().plan(), &PLANS[0]);
            assert!(matches!(
                Session::with_plan(shape, 3),
                Err(StencilError::NoSuchPlan { plan: 3, plans: 3, .. })
            ));

            let cells = shape[0] * shape[1];
            let u0 = stencil_tests::random_grid::<f64>(cells, 7);
            let params = heat2d::Params { alpha: 0.2 };
            // Two fused launches of the temporal plan and one single step.
            let steps = 7;
            let mut want = u0.clone();
            heat2d::reference::run(&mut want, shape, params, steps).unwrap();
            for plan in 0..PLANS.len() {
                let mut session = Session::with_plan(shape, plan).unwrap();
                assert_eq!(session.plan(), &PLANS[plan]);
                session.upload(&u0).unwrap();
                session.step(params, steps).unwrap();
                let mut got = vec![0.0; cells];
                session.download(&mut got).unwrap();
                let (worst, at) = stencil_tests::worst_difference(&got, &want);
                let allowed = stencil_tests::tolerance::<f64>(heat2d::FLOPS_PER_CELL, steps);
                assert!(worst <= allowed, "plan {plan}: {worst:e} at cell {at} (allowed {allowed:e})");
            }
        }
    };
}

tuned_plan_tests!(
    cuda_sessions_pick_the_plan_tuned_for_their_device,
    cuda,
    stencil_cuda,
    "cuda",
    "CUDA"
);
tuned_plan_tests!(
    hip_sessions_pick_the_plan_tuned_for_their_device,
    hip,
    stencil_hip,
    "hip",
    "HIP"
);
