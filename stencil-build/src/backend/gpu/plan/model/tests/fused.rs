//! Where `auto` fuses steps, and in which launches.

use super::*;

#[test]
fn auto_fuses_the_steps_where_fused_launches_measured_faster() {
    let auto = GpuTiling::model(Strategy::Auto);
    let line = stencil("\"x\"", "f32", "u[-1] + u[1]");
    assert_eq!(
        plan(&line, &auto, &CUDA),
        (Strategy::Naive, vec![256], 1, 4, 1),
        "1-D threads compute 16 bytes of cells"
    );
    let j2d32 = stencil("\"y\", \"x\"", "f32", J2D5PT);
    assert_eq!(
        register_words(&j2d32, 4, 4, 4),
        6 * 6,
        "6 planes of 6 cells"
    );
    assert_eq!(
        plan(&j2d32, &auto, &CUDA),
        (Strategy::Temporal, vec![1, 128], 256, 1, 4),
        "2-D steps that fuse are fused"
    );
    let j2d64 = stencil("\"y\", \"x\"", "f64", J2D5PT);
    assert_eq!(
        plan(&j2d64, &auto, &CUDA),
        (Strategy::Temporal, vec![1, 128], 256, 1, 2)
    );
    let (periodic, _) = heat2d("periodic");
    assert_eq!(
        plan(&periodic, &auto, &CUDA),
        (Strategy::Temporal, vec![1, 128], 256, 1, 2),
        "periodic 2-D steps fuse as the fixed ones do"
    );
    let j3d13 = "sum(r, 1, 2, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])";
    let periodic3 = Stencil {
        boundary: crate::ir::Boundary::Periodic,
        ..stencil("\"z\", \"y\", \"x\"", "f32", j3d13)
    };
    assert_eq!(
        plan(&periodic3, &auto, &CUDA).0,
        Strategy::Temporal,
        "periodic 3-D steps fuse"
    );
    assert_eq!(
        resolve(&auto, &periodic3, &CUDA).unwrap().vector,
        1,
        "in the kernel of one cell a row, which wraps its loads (no vectors)"
    );
    let j3d32 = stencil("\"z\", \"y\", \"x\"", "f32", J3D7PT);
    assert_eq!(
        plan(&j3d32, &auto, &CUDA),
        (Strategy::Temporal, vec![1, 4, 64], 128, 8, 1),
        "3-D stars of radius 1 fuse, over tiles of 64 x 32 cells (f32: 8 rows a thread)"
    );
    assert_eq!(
        plan(&j3d32, &auto, &HIP),
        (Strategy::Temporal, vec![1, 8, 32], 128, 4, 1),
        "tiles of 32 x 32 cells where shared memory holds 64 KiB"
    );
    let j3d64 = stencil("\"z\", \"y\", \"x\"", "f64", J3D7PT);
    assert_eq!(register_words(&j3d64, 2, 2, 2), 4 * 4 * 2 + 2 * (2 * 2 * 2));
    assert_eq!(plan(&j3d64, &auto, &HIP).0, Strategy::Temporal);
    let skew32 = stencil("\"z\", \"y\", \"x\"", "f32", SKEW);
    assert_eq!(
        plan(&skew32, &auto, &CUDA).0,
        Strategy::Temporal,
        "3-D f32 stencils of radius 1 or 2 fuse"
    );
    let skew64 = stencil("\"z\", \"y\", \"x\"", "f64", SKEW);
    assert_eq!(
        plan(&skew64, &auto, &CUDA).0,
        Strategy::Temporal,
        "3-D f64 stencils of radius 1 fuse"
    );
    let r2 = stencil(
        "\"z\", \"y\", \"x\"",
        "f64",
        "u[-2,0,0] + u[0,0,0] + u[0,2,0]",
    );
    assert_eq!(
        plan(&r2, &auto, &CUDA).0,
        Strategy::Temporal,
        "3-D f64 stars of radius 2 fuse"
    );
}

#[test]
fn auto_fuses_leapfrogs_of_radius_1() {
    let auto = GpuTiling::model(Strategy::Auto);
    let wave2d = leapfrog("\"y\", \"x\"", "u[-1,0] + u[0,1]");
    assert_eq!(
        plan(&wave2d, &auto, &CUDA).0,
        Strategy::Temporal,
        "2-D leapfrogs fuse"
    );
    let wave3d = leapfrog("\"z\", \"y\", \"x\"", "u[-1,0,0] + u[0,0,1]");
    assert_eq!(
        plan(&wave3d, &auto, &CUDA),
        (Strategy::Persistent, vec![1, 8, 64], 128, 4, 1),
        "3-D leapfrogs of radius 1 fuse, in f32 in one launch"
    );
    let wave3d64 =
        emit::temporal::tests::leapfrog("\"z\", \"y\", \"x\"", "f64", "u[-1,0,0] + u[0,0,1]", "");
    assert_eq!(plan(&wave3d64, &auto, &CUDA).0, Strategy::Temporal);
    let wave3d_vel = lowered(
        "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = { role = \"state\", levels = 2 }\nvel = { role = \"input\" }\n\
         [[update]]\ntarget = \"u\"\nexpr = \"2*u[0,0,0] - u.prev[0,0,0] + vel[0,0,0]*(u[-1,0,0] + u[1,0,0] + \
         u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,1] - 6*u[0,0,0])\"\n"
        .to_string(),
    );
    assert!(register_words(&wave3d_vel, 2, 2, 4) > AUTO_REGISTER_WORDS);
    assert_eq!(
        one_step(&wave3d_vel, &CUDA),
        (
            Strategy::Persistent,
            (Strategy::Stream, vec![1, 2, 64], 4, 1, 4)
        ),
        "one step of wave3d: 16-byte vectors, though it reads two more grids"
    );
    let wide3d = leapfrog("\"z\", \"y\", \"x\"", "u[-2,0,0] + u[0,0,1]");
    assert_eq!(
        plan(&wide3d, &auto, &CUDA).0,
        Strategy::Stream,
        "wider 3-D leapfrogs step one at a time"
    );
    let box2 = stencil(
        "\"z\", \"y\", \"x\"",
        "f64",
        "u[-2,0,0] + u[0,2,0] + u[1,2,0]",
    );
    assert_eq!(
        plan(&box2, &auto, &CUDA).0,
        Strategy::Stream,
        "other 3-D f64 stencils of radius 2 stay single-step"
    );
    let skew_small = stencil(
        "\"z\", \"y\", \"x\"",
        "f32",
        "u[0,-1,0] + u[0,1,0] + u[1,1,1]",
    );
    assert_eq!(
        plan(&skew_small, &auto, &HIP),
        (Strategy::Temporal, vec![1, 8, 32], 128, 4, 2),
        "the fused 3-D tiling on HIP too, in z sums (in-plane reads in two planes)"
    );
}

#[test]
fn fused_3d_f64_steps_reading_two_grids_or_more_run_two_steps_a_persistent_launch_on_cuda() {
    let auto = GpuTiling::model(Strategy::Auto);
    let fused = |st: &Stencil, d: &Dialect| {
        let p = resolve(&auto, st, d).unwrap();
        (p.strategy, p.time_block)
    };
    assert_eq!(
        fused(&varcoef3d("f64", 2), &CUDA),
        (Strategy::Persistent, 2),
        "two coefficient grids"
    );
    assert_eq!(
        fused(&varcoef3d("f64", 4), &CUDA),
        (Strategy::Persistent, 2),
        "four"
    );
    assert_eq!(
        fused(&varcoef3d("f64", 1), &CUDA).0,
        Strategy::Temporal,
        "one grid keeps temporal's defaults"
    );
    assert_eq!(
        fused(&varcoef3d("f32", 2), &CUDA).0,
        Strategy::Temporal,
        "f32 keeps temporal's defaults"
    );
    assert_eq!(
        fused(&varcoef3d("f64", 2), &HIP).0,
        Strategy::Temporal,
        "unmeasured on HIP"
    );
    let wave3d64 =
        emit::temporal::tests::leapfrog("\"z\", \"y\", \"x\"", "f64", "u[-1,0,0] + u[0,0,1]", "");
    assert_eq!(
        fused(&wave3d64, &CUDA).0,
        Strategy::Temporal,
        "leapfrogs are not coefficient stencils"
    );
}
