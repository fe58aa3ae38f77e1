//! A GPU `Session` is `Send`: it moves into a spawned thread, runs there,
//! and gives what the same session gives on the thread that made it.
#![cfg(any(feature = "cuda", feature = "hip"))]

use stencil_tests::{Fusion, heat3d_f64_fixed as heat3d};

/// Compiles only where `T` is `Send`.
fn send<T: Send>() {}

#[test]
fn sessions_are_send() {
    #[cfg(feature = "cuda")]
    send::<heat3d::cuda::Session>();
    #[cfg(feature = "hip")]
    send::<heat3d::hip::Session>();
}

/// 20 steps of heat3d on 13 x 17 x 19 cells (odd extents), single steps
/// so that both runs launch the same kernels, in a session made on this
/// thread and stepped in a spawned one, then in this one.
macro_rules! moved_session_test {
    ($name:ident, $backend:ident, $feature:literal, $title:literal) => {
        #[cfg(feature = $feature)]
        #[test]
        #[cfg_attr(
            not(feature = "gpu-on-cpu"),
            ignore = concat!("needs a ", $title, " device: run with --include-ignored on a machine with one")
        )]
        fn $name() {
            let shape = [13, 17, 19];
            let cells: usize = shape.iter().product();
            let u0: Vec<f64> = (0..cells).map(|i| ((i * 7919) % 101) as f64 / 101.0).collect();
            let kappa: Vec<f64> = (0..cells).map(|i| 0.05 + ((i * 31) % 7) as f64 / 100.0).collect();
            fn run(session: &mut heat3d::$backend::Session, u0: &[f64], kappa: &[f64]) -> Vec<f64> {
                session.set_fusion(Fusion::Single);
                session.upload(u0, kappa).unwrap();
                session.step(heat3d::Params { alpha: 0.1 }, 20).unwrap();
                let mut u = vec![0.0; u0.len()];
                session.download(&mut u).unwrap();
                u
            }
            let session = heat3d::$backend::Session::new(shape).unwrap();
            let (u, k) = (u0.clone(), kappa.clone());
            let (moved, session) = std::thread::spawn(move || {
                let mut session = session;
                (run(&mut session, &u, &k), session)
            })
            .join()
            .unwrap();
            let mut session = session;
            assert_eq!(moved, run(&mut session, &u0, &kappa));
            assert_ne!(moved, u0, "the steps changed the grid");
        }
    };
}

moved_session_test!(
    a_cuda_session_moves_into_a_spawned_thread,
    cuda,
    "cuda",
    "CUDA"
);
moved_session_test!(a_hip_session_moves_into_a_spawned_thread, hip, "hip", "HIP");
