//! `auto`'s model: what it picks for each family of stencils, and the
//! defaults it fills in for the strategies a spec names.

use crate::backend::gpu::plan::model::{AUTO_REGISTER_WORDS, COLUMN_CELLS, WIDE_REGISTER_WORDS};
use crate::backend::gpu::plan::{Plan, register_words, resolve, small_planes_plan, step_plan};
use crate::backend::gpu::tests::{heat2d, lowered, stencil};
use crate::backend::gpu::{CUDA, Dialect, HIP, emit, step};
use crate::backend::step::rows_read;
use crate::ir::{GpuTiling, Stencil, Strategy};

/// A plan's strategy, block, chunk, coarsening and vector.
type Shape = (Strategy, Vec<usize>, usize, usize, usize);

fn shape(r: Plan) -> Shape {
    (r.strategy, r.block, r.chunk, r.coarsen, r.vector)
}

/// The plan `t` resolves to for `st` on `d`.
fn plan(st: &Stencil, t: &GpuTiling, d: &Dialect) -> Shape {
    shape(resolve(t, st, d).unwrap())
}

/// `auto`'s strategy, and the plan of its launches of one step.
fn one_step(st: &Stencil, d: &Dialect) -> (Strategy, Shape) {
    let fused = resolve(&GpuTiling::model(Strategy::Auto), st, d).unwrap();
    let r = step_plan(&fused, st, d).unwrap();
    (fused.strategy, shape(r))
}

/// A 3-D leapfrog in f32 reading `reads`.
fn leapfrog(axes: &str, reads: &str) -> Stencil {
    emit::temporal::tests::leapfrog(axes, "f32", reads, "")
}

const J2D5PT: &str = "u[-1,0] + u[0,-1] + u[0,0] + u[0,1] + u[1,0]";
const J3D7PT: &str =
    "u[-1,0,0] + u[0,-1,0] + u[0,0,-1] + u[0,0,0] + u[0,0,1] + u[0,1,0] + u[1,0,0]";
const SKEW: &str = "u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,1] + u[1,1,0]";
const STAR4: &str =
    "sum(r, 1, 4, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])";

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
        (Strategy::Naive, vec![8, 32], 1, 1, 2),
        "periodic steps do not fuse: 2-D ones run rows of vectors"
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
fn auto_single_steps_keep_their_windows_within_the_register_budget() {
    let auto = GpuTiling::model(Strategy::Auto);
    let wide = stencil("\"z\", \"y\", \"x\"", "f32", STAR4);
    assert!(register_words(&wide, 2, 2, 4) > AUTO_REGISTER_WORDS);
    assert_eq!(
        plan(&wide, &auto, &HIP),
        (Strategy::Stream, vec![1, 2, 64], 4, 1, 4),
        "too many registers for single-pass blocks: 16-byte vectors marching chunks of 4 planes"
    );
    assert_eq!(
        plan(&wide, &auto, &CUDA),
        (Strategy::Temporal, vec![1, 32, 16], 128, 1, 4),
        "f32 stars of radius 4 fuse in threads of vectors where the rings fit"
    );
    let star2 = stencil(
        "\"z\", \"y\", \"x\"",
        "f32",
        "sum(r, 1, 2, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])",
    );
    assert_eq!(
        plan(&star2, &auto, &CUDA),
        (Strategy::Temporal, vec![1, 32, 32], 128, 1, 2),
        "f32 stars of radius 2 fuse in 64 x 32 tiles of 2-cell vectors (j3d13pt)"
    );
    assert_eq!(
        plan(&star2, &auto, &HIP),
        (Strategy::Temporal, vec![1, 8, 32], 128, 4, 1),
        "on HIP, whose rings hold a lead of 1 only, in columns of 4 rows"
    );
    assert_eq!(register_words(&wide, 4, 1, 4), WIDE_REGISTER_WORDS);
    let wide_f64 = stencil("\"z\", \"y\", \"x\"", "f64", STAR4);
    assert_eq!(
        plan(&wide_f64, &auto, &HIP),
        (Strategy::Stream, vec![1, 4, 64], 64, 1, 1),
        "its f64 window is over the budget: one cell per thread through chunks of 64 planes"
    );
    assert_eq!(
        plan(&wide_f64, &auto, &CUDA),
        (Strategy::Tensor, vec![1, 16, 32], 256, 1, 1),
        "on CUDA its in-plane sum goes to the FP64 tensor cores, a plane at a time"
    );
    let star3_f64 = stencil(
        "\"z\", \"y\", \"x\"",
        "f64",
        "sum(r, 1, 3, u[r,0,0] + u[-r,0,0] + u[0,r,0] + u[0,-r,0] + u[0,0,r] + u[0,0,-r])",
    );
    assert_eq!(
        plan(&star3_f64, &auto, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 2),
        "reaching 3 in-plane: 16-byte vectors marching 64 planes, not the tensor cores"
    );
    let star2_f64 = Stencil {
        dtype: crate::ir::Dtype::F64,
        ..star2.clone()
    };
    assert!(register_words(&star2_f64, 4, 1, 2) <= WIDE_REGISTER_WORDS);
    let wide_inputs = lowered(format!(
        "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = {{ role = \"state\" }}\nk = {{ role = \"input\" }}\n\
         [[update]]\ntarget = \"u\"\nexpr = \"k[0,0,0] * ({STAR4})\"\n"
    ));
    assert!(register_words(&wide_inputs, 4, 1, 4) > WIDE_REGISTER_WORDS);
    assert_eq!(
        plan(&wide_inputs, &auto, &HIP),
        (Strategy::Stream, vec![1, 4, 64], 64, 1, 1),
        "reading another grid too, over the budget: one cell per thread through chunks of 64 planes"
    );
    assert_eq!(
        plan(&wide_inputs, &auto, &CUDA),
        (Strategy::Temporal, vec![1, 16, 32], 128, 1, 4),
        "on CUDA, the ring kernel (on large planes) and single steps in 16-byte vectors"
    );
    let steps = step_plan(
        &resolve(&auto, &wide_inputs, &CUDA).unwrap(),
        &wide_inputs,
        &CUDA,
    )
    .unwrap();
    assert_eq!(
        (steps.strategy, &steps.block[..], steps.chunk, steps.vector),
        (Strategy::Stream, &[1, 8, 32][..], 64, 4),
        "a star of reach 4 in-plane: `planes_stream`'s blocks marching 64 planes"
    );
    assert!(steps.vector_planes());
    let small = small_planes_plan(&steps, &wide_inputs, &CUDA).unwrap();
    assert_eq!(
        (&small.block[..], small.chunk, small.vector),
        (&[1, 2, 64][..], 4, 4),
        "and on small planes blocks marching 4"
    );
}

#[test]
fn auto_single_steps_of_wider_stencils_compute_a_cell_a_thread() {
    let auto = GpuTiling::model(Strategy::Auto);
    let wider = stencil(
        "\"z\", \"y\", \"x\"",
        "f32",
        "sum(r, 1, 6, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])",
    );
    assert!(register_words(&wider, 4, 1, 4) > WIDE_REGISTER_WORDS);
    assert_eq!(
        plan(&wider, &auto, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 1),
        "wider still: one cell per thread"
    );
    let wide_2d = stencil(
        "\"y\", \"x\"",
        "f64",
        "sum(r, 1, 5, u[r,0] + u[0,r] + u[-r,0] + u[0,-r])",
    );
    assert!(register_words(&wide_2d, 4, 4, 1) > AUTO_REGISTER_WORDS);
    assert!(register_words(&wide_2d, 4, 1, 2) > WIDE_REGISTER_WORDS);
    let periodic_2d = Stencil {
        boundary: crate::ir::Boundary::Periodic,
        ..wide_2d
    };
    assert_eq!(
        plan(&periodic_2d, &auto, &HIP),
        (Strategy::Stream, vec![1, 256], 64, 1, 1),
        "2-D stencils that neither fuse nor fit the vectors' window: one cell per thread through chunks of 64 rows"
    );
    assert_eq!(
        plan(&periodic_2d, &auto, &CUDA),
        (Strategy::Naive, vec![8, 32], 1, 1, 2),
        "on CUDA, periodic ones run rows of vectors"
    );
    let j2d9pt = stencil(
        "\"y\", \"x\"",
        "f32",
        "u[-2,0] + u[-1,0] + u[0,-2] + u[0,-1] + u[0,0] + u[0,1] + u[0,2] + u[1,0] + u[2,0]",
    );
    assert!(register_words(&j2d9pt, 4, 4, 4) > AUTO_REGISTER_WORDS);
    assert_eq!(
        one_step(&j2d9pt, &HIP),
        (Strategy::Temporal, (Strategy::Stream, vec![1, 64], 4, 1, 4)),
        "one step of a 2-D stencil of radius 2: 16-byte vectors marching chunks of 4 rows"
    );
    let periodic_9pt = Stencil {
        boundary: crate::ir::Boundary::Periodic,
        dtype: crate::ir::Dtype::F64,
        ..j2d9pt
    };
    assert_eq!(
        plan(&periodic_9pt, &auto, &HIP),
        (Strategy::Stream, vec![1, 64], 4, 1, 2),
        "and where it does not fuse"
    );
}

#[test]
fn named_strategies_get_the_models_defaults() {
    let auto = GpuTiling::model(Strategy::Auto);
    let j2d64 = stencil("\"y\", \"x\"", "f64", J2D5PT);
    let j3d64 = stencil("\"z\", \"y\", \"x\"", "f64", J3D7PT);
    let skew64 = stencil("\"z\", \"y\", \"x\"", "f64", SKEW);
    let stream = GpuTiling {
        strategy: Strategy::Stream,
        ..auto.clone()
    };
    assert_eq!(
        plan(&j3d64, &stream, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 1)
    );
    let tiled = GpuTiling {
        strategy: Strategy::Tiled,
        ..auto.clone()
    };
    assert_eq!(plan(&j2d64, &tiled, &CUDA).1, vec![8, 32]);
    let temporal = GpuTiling {
        strategy: Strategy::Temporal,
        ..auto.clone()
    };
    let t = resolve(&temporal, &j2d64, &CUDA).unwrap();
    assert_eq!(
        (t.block, t.chunk, t.vector, t.time_block),
        (vec![1, 128], 256, 2, 7),
        "2-D f64: 64-cell warp tiles, 7 skewed steps in seven eighths of the register budget"
    );
    // Skewed steps of stencils that are not lean keep three quarters of it.
    let steps_in = |dtype: &str, expr: &str, fields: &str| {
        let st = lowered(format!(
            "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [\"y\", \"x\"]\n[fields]\n\
             u = {{ role = \"state\" }}\n{fields}[[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n"
        ));
        resolve(&temporal, &st, &CUDA).unwrap().time_block
    };
    let steps = |expr: &str, fields: &str| steps_in("f64", expr, fields);
    let star2 =
        "u[-2,0] + u[-1,0] + u[0,-2] + u[0,-1] + u[0,0] + u[0,1] + u[0,2] + u[1,0] + u[2,0]";
    assert_eq!(steps(star2, ""), 4, "a lean star of radius 2");
    assert_eq!(
        steps(&format!("({star2}) / 118"), ""),
        4,
        "divided by a constant"
    );
    assert_eq!(
        steps(&format!("u[0,0] + 1 / sqrt({star2})"), ""),
        3,
        "a square root"
    );
    assert_eq!(
        steps(&format!("k[0,0] * ({star2})"), "k = { role = \"input\" }\n"),
        3,
        "an input grid"
    );
    assert_eq!(steps(J2D5PT, ""), 7);
    assert_eq!(
        steps(
            &format!("k[0,0] * ({J2D5PT})"),
            "k = { role = \"input\" }\n"
        ),
        6
    );
    // Chained (f32) steps: the whole budget, seven eighths for a box (a
    // weighted sum whose columns along the rows are full).
    let box2 = (-2..=2)
        .flat_map(|y| (-2..=2).map(move |x| format!("0.04*u[{y},{x}]")))
        .collect::<Vec<_>>()
        .join(" + ");
    assert_eq!(steps_in("f32", star2, ""), 6, "a star of radius 2");
    assert_eq!(steps_in("f32", &box2, ""), 5, "a box of radius 2");
    let diamond = "u[-2,0] + u[-1,-1] + u[-1,0] + u[-1,1] + u[0,-2] + u[0,-1] + u[0,0] \
                   + u[0,1] + u[0,2] + u[1,-1] + u[1,0] + u[1,1] + u[2,0]";
    assert_eq!(steps_in("f32", diamond, ""), 6, "a diamond of radius 2");
    let column = "u[-2,0] + u[-1,0] + u[0,0] + u[1,0] + u[2,0]";
    assert_eq!(steps_in("f32", column, ""), 6, "a column of radius 2");
    assert_eq!(
        steps_in(
            "f32",
            &format!("k[0,0] * ({star2})"),
            "k = { role = \"input\" }\n"
        ),
        6,
        "a star of radius 2 and an input grid"
    );
    assert_eq!(
        steps_in("f32", J2D5PT, ""),
        10,
        "radius 1: the most steps either way"
    );
    let t = resolve(&temporal, &j3d64, &CUDA).unwrap();
    assert_eq!(
        (t.block, t.chunk, t.coarsen, t.vector, t.time_block),
        (vec![1, 8, 64], 128, 4, 1, 3),
        "3-D f64 stars of radius 1: tiles of 64 x 32 cells, 3 steps (rings of 2 planes, 108 KiB)"
    );
    let t = resolve(&temporal, &skew64, &CUDA).unwrap();
    assert_eq!(
        (t.block, t.coarsen, t.time_block),
        (vec![1, 8, 32], 4, 2),
        "other 3-D f64 stencils of radius 1: tiles of 32 x 32 cells, 2 steps (rings of 3 planes here, 55 KiB)"
    );
    let t = resolve(&temporal, &j3d64, &HIP).unwrap();
    assert_eq!(
        (t.block, t.time_block),
        (vec![1, 8, 32], 3),
        "HIP: rings within its 64 KiB (55 KiB)"
    );
    let persistent = GpuTiling {
        strategy: Strategy::Persistent,
        ..auto
    };
    let p = resolve(&persistent, &j2d64, &CUDA).unwrap();
    assert_eq!(
        (p.strategy, p.block, p.chunk, p.vector, p.time_block),
        (Strategy::Persistent, vec![1, 128], 256, 2, 7),
        "`persistent` takes `temporal`'s tiling"
    );
}

/// The `(2r+1)^3` box of radius `r`, every weight 1.
fn box3(r: i64) -> String {
    let mut terms = Vec::new();
    for z in -r..=r {
        for y in -r..=r {
            for x in -r..=r {
                terms.push(format!("u[{z},{y},{x}]"));
            }
        }
    }
    terms.join(" + ")
}

#[test]
fn arithmetic_bound_or_spilling_windows_run_naive() {
    // Boxes of 729 reads are chains that deep: walked on a deep stack.
    crate::on_deep_stack(|| {
        let auto = GpuTiling::model(Strategy::Auto);
        for d in [&CUDA, &HIP] {
            for (r, dtype) in [(2, "f32"), (2, "f64"), (3, "f32"), (4, "f64")] {
                let st = stencil("\"z\", \"y\", \"x\"", dtype, &box3(r));
                let (strategy, _, _, cells, _) = plan(&st, &auto, d);
                assert_eq!(
                    (strategy, cells),
                    (Strategy::Naive, COLUMN_CELLS),
                    "the box of radius {r} in {dtype} on {}: a weighted sum, in columns",
                    d.name
                );
                assert!(crate::backend::gpu::plan::model::loads_from_l1(&st));
                // A product of grid values is no weighted sum: a cell a thread.
                let squared = stencil(
                    "\"z\", \"y\", \"x\"",
                    dtype,
                    &format!("u[0,0,0] * ({})", box3(r)),
                );
                assert_eq!(plan(&squared, &auto, d).3, 1);
            }
        }
        // 2-D boxes with weights: of radius 3 (49 reads) the single step goes in
        // columns, which the trial times against the fused steps; of radius 2
        // (25 reads, 49 flops) in f64 `stream`'s windows.
        let weighted = |r: i64, dtype| {
            let cells = (-r..=r).flat_map(|y| (-r..=r).map(move |x| (y, x)));
            let terms: Vec<String> = cells
                .enumerate()
                .map(|(k, (y, x))| format!("{}*u[{y},{x}]", 0.01 * (k + 1) as f64))
                .collect();
            stencil("\"y\", \"x\"", dtype, &terms.join(" + "))
        };
        // On CUDA, from 25 reads, in blocks of 64 bytes of results, rows of 2
        // cells (8 rows in f32, 4 in f64), where it waits on memory or is
        // f32; the box of radius 4 in f64 (10 flops a byte) keeps the
        // columns, as HIP does from 49 reads.
        for (r, dtype, rows) in [
            (2, "f32", 8),
            (2, "f64", 4),
            (3, "f32", 8),
            (3, "f64", 4),
            (4, "f32", 8),
        ] {
            let (fused, single) = one_step(&weighted(r, dtype), &CUDA);
            assert_eq!(
                (fused, single.0, single.1, single.3, single.4),
                (Strategy::Temporal, Strategy::Naive, vec![2, 128], rows, 2),
                "radius {r}, {dtype}"
            );
            let (_, hip) = one_step(&weighted(r, dtype), &HIP);
            let hip_cells = if r == 2 { 1 } else { COLUMN_CELLS };
            assert_eq!(
                (hip.3, hip.4 == 1),
                (hip_cells, r > 2),
                "radius {r}, {dtype} on HIP"
            );
        }
        let (_, single) = one_step(&weighted(4, "f64"), &CUDA);
        assert_eq!(
            (single.0, single.3, single.4),
            (Strategy::Naive, COLUMN_CELLS, 1)
        );
        let (_, single) = one_step(&weighted(2, "f64"), &HIP);
        assert_eq!(single.0, Strategy::Stream);
        // The radius-4 star in f64 holds 212 words, 2 flops a byte: `stream`'s
        // defaults (on HIP); so does the box of radius 1 (3.4 flops a byte).
        let star = stencil("\"z\", \"y\", \"x\"", "f64", STAR4);
        assert!(!crate::backend::gpu::plan::model::loads_from_l1(&star));
        let box1 = stencil("\"z\", \"y\", \"x\"", "f64", &box3(1));
        assert!(!crate::backend::gpu::plan::model::loads_from_l1(&box1));
    });
}

/// A star of reach 4 reading `k`, absorbed in layers of 8 cells (a region
/// outside a box) and reflected at the low side of `z`, in `dtype`.
fn layered(dtype: &str) -> Stencil {
    lowered(format!(
        "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = {{ role = \"state\" }}\nk = {{ role = \"input\" }}\n\
         [regions]\ninner = {{ z = [0, \"n-8\"], y = [8, \"n-8\"], x = [8, \"n-8\"] }}\n\
         layers = {{ outside = \"inner\" }}\n\
         [boundary]\nz = [\"reflect\", \"fixed\"]\n\
         [[update]]\ntarget = \"u\"\nregion = \"inner\"\nexpr = \"k[0,0,0] * ({STAR4})\"\n\
         [[update]]\ntarget = \"u\"\nregion = \"layers\"\nexpr = \"k[0,0,0] * ({STAR4}) / (1 + k[0,0,0])\"\n"
    ))
}

#[test]
fn updates_in_regions_of_one_field_step_as_that_update_would() {
    let auto = GpuTiling::model(Strategy::Auto);
    let f32 = layered("f32");
    assert!(f32.one_update(), "the pieces of one field's update");
    assert_eq!(
        plan(&f32, &auto, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 4),
        "`planes_stream`'s blocks, as for the stencil without regions (not `naive`)"
    );
    assert_eq!(
        plan(&layered("f64"), &auto, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 2),
        "f64: `tensor` cannot run regions; `planes_stream` in its place"
    );
    let two_fields = lowered(format!(
        "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = {{ role = \"state\" }}\nv = {{ role = \"state\" }}\n\
         [[update]]\ntarget = \"u\"\nexpr = \"{STAR4}\"\n\
         [[update]]\ntarget = \"v\"\nexpr = \"u[0,0,0] + v[0,0,0]\"\n"
    ));
    assert!(!two_fields.one_update(), "two fields' updates");
}

#[test]
fn unfused_3d_steps_reaching_2_planes_march_64_on_cuda() {
    let auto = GpuTiling::model(Strategy::Auto);
    let star = |r: usize| {
        let sum = format!(
            "sum(r, 1, {r}, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])"
        );
        Stencil {
            boundary: crate::ir::Boundary::Periodic,
            ..stencil("\"z\", \"y\", \"x\"", "f64", &sum)
        }
    };
    assert_eq!(
        plan(&star(2), &auto, &HIP),
        (Strategy::Stream, vec![1, 2, 64], 4, 1, 2),
        "a star whose steps do not fuse: 16-byte vectors marching 4 planes"
    );
    assert_eq!(
        plan(&star(2), &auto, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 2),
        "on CUDA, reaching 2 planes: blocks of [1, 8, 32] marching 64"
    );
    let near = "u[-1,0,0] + u[1,0,0] + u[0,-2,0] + u[0,2,0] + u[0,0,-2] + u[0,0,2]";
    let near = Stencil {
        boundary: crate::ir::Boundary::Periodic,
        ..stencil("\"z\", \"y\", \"x\"", "f64", near)
    };
    assert_eq!(
        plan(&near, &auto, &CUDA),
        (Strategy::Stream, vec![1, 2, 64], 4, 1, 2),
        "reaching 1 plane: blocks marching 4"
    );
}

#[test]
fn steps_of_coupled_fields_march_planes_in_one_stream_kernel() {
    let auto = GpuTiling::model(Strategy::Auto);
    let spec = |axes: &str, laplacian: &dyn Fn(&str) -> String, here: &str| {
        let (lu, lv) = (laplacian("u"), laplacian("v"));
        lowered(format!(
            "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [{axes}]\n\
             [fields]\nu = {{ role = \"state\" }}\nv = {{ role = \"state\" }}\nr = {{ role = \"temp\" }}\n\
             [[update]]\ntarget = \"r\"\nexpr = \"u[{here}]*v[{here}]*v[{here}]\"\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[{here}] - r[{here}] + 0.2*({lu})\"\n\
             [[update]]\ntarget = \"v\"\nexpr = \"v[{here}] + r[{here}] + 0.1*({lv})\"\n\
             [boundary]\nkind = \"periodic\"\n"
        ))
    };
    // Gray-Scott's shape: the temporary read at the cell only, so the one
    // kernel recomputes nothing; its windows hold both fields' planes. Its
    // `naive` kernel would read 10 rows, more than the 9 values a cell its
    // kernels an update move, so `auto` marches planes on CUDA.
    let star3 = |f: &str| {
        format!("{f}[-1,0,0] + {f}[1,0,0] + {f}[0,-1,0] + {f}[0,1,0] + {f}[0,0,-1] + {f}[0,0,1]")
    };
    let coupled = spec("\"z\", \"y\", \"x\"", &star3, "0,0,0");
    assert!(rows_read(&coupled) > step::kernels_traffic(&coupled));
    let named = GpuTiling {
        vector: Some(4),
        ..GpuTiling::model(Strategy::Stream)
    };
    let planes = resolve(&named, &coupled, &CUDA).unwrap();
    assert!(step::one_kernel(&coupled, &planes), "in one kernel");
    // `auto` marches the same planes in one kernel: the statements share
    // the fields' rows (6 rows and 2 stores a cell, against 10 and 3).
    let chosen = resolve(&auto, &coupled, &CUDA).unwrap();
    assert_eq!(shape(chosen.clone()), shape(planes.clone()));
    assert!(step::shares_rows(&coupled));
    assert!(step::one_kernel(&coupled, &chosen));
    // Statements that read rows of their own (random_14's shape) would save
    // only memory traffic: `stream`, `auto`'s or named, keeps a kernel a
    // statement.
    let apart = lowered(
        "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = { role = \"state\" }\nw = { role = \"state\" }\n\
         [[update]]\ntarget = \"u\"\nexpr = \"0.5*u[0,0,0] + 0.1*u[2,1,-1] + 0.2*w[3,1,1]\"\n\
         [[update]]\ntarget = \"w\"\nexpr = \"0.5*w[0,0,0] + 0.1*w[3,-1,2] + 0.2*u[-1,2,0]\"\n\
         [boundary]\nkind = \"periodic\"\n"
            .to_string(),
    );
    assert!(!step::shares_rows(&apart));
    let chosen = resolve(&auto, &apart, &CUDA).unwrap();
    assert_eq!(chosen.strategy, Strategy::Stream);
    assert!(!step::one_kernel(&apart, &chosen));
    let named = resolve(&named, &apart, &CUDA).unwrap();
    assert!(!step::one_kernel(&apart, &named));
    // In 2-D too.
    let star2 = |f: &str| format!("{f}[-1,0] + {f}[1,0] + {f}[0,-1] + {f}[0,1]");
    let flat = spec("\"y\", \"x\"", &star2, "0,0");
    let rows = resolve(&GpuTiling::model(Strategy::Stream), &flat, &CUDA).unwrap();
    assert!(step::one_kernel(&flat, &rows));
    // A `stream` whose windows of the whole step would not fit its
    // registers runs a kernel a statement.
    let mut deep = resolve(&GpuTiling::model(Strategy::Stream), &coupled, &CUDA).unwrap();
    assert!(step::one_kernel(&coupled, &deep));
    deep.chunk = 256;
    deep.coarsen = 64;
    let words = crate::backend::gpu::plan::step_register_words(&coupled, 256, 64, deep.vector);
    assert!(words > step::STREAM_WORDS);
    assert!(
        !step::one_kernel(&coupled, &deep),
        "windows over the budget"
    );
    // With a fixed boundary, a field read again at an offset after its
    // update is its value held in the frame there. Here the recomputation's
    // reads reach 2 cells, past the frame of 1, which a thread's windows
    // would load before it asks, so each statement marches planes of its own.
    let held = lowered(
        "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = { role = \"state\" }\nv = { role = \"state\" }\n\
         [[update]]\ntarget = \"u\"\nexpr = \"u[0,0,0] + 0.1*(v[0,0,1] - v[0,0,-1])\"\n\
         [[update]]\ntarget = \"v\"\nexpr = \"v[0,0,0] + 0.1*(u[0,0,1] - u[0,0,-1])\"\n\
         [boundary]\nkind = \"fixed\"\n"
            .to_string(),
    );
    let stream = resolve(&GpuTiling::model(Strategy::Stream), &held, &CUDA).unwrap();
    assert!(step::fits(&held) && !step::one_kernel(&held, &stream));
    // A staggered grid's pressure reads the new velocity one cell back,
    // whose recomputation reads the pressure there and at the cell: within
    // the frame, so the windows lie on the grid.
    let staggered = lowered(
        "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\np = { role = \"state\" }\nv = { role = \"state\" }\n\
         [[update]]\ntarget = \"v\"\nexpr = \"v[0,0,0] - 0.1*(p[1,0,0] - p[0,0,0])\"\n\
         [[update]]\ntarget = \"p\"\nexpr = \"p[0,0,0] - 0.2*(v[0,0,0] - v[-1,0,0])\"\n\
         [boundary]\nkind = \"fixed\"\n"
            .to_string(),
    );
    let stream = resolve(&GpuTiling::model(Strategy::Stream), &staggered, &CUDA).unwrap();
    assert!(
        step::one_kernel(&staggered, &stream),
        "held within the frame"
    );
    // `auto` runs it so rather than `naive`'s one kernel: 2 row groups a
    // cell against 5 rows.
    assert!(super::planes_in_one_kernel(&staggered, &CUDA));
    let chosen = resolve(&auto, &staggered, &CUDA).unwrap();
    assert_eq!(chosen.strategy, Strategy::Stream);
    assert!(step::one_kernel(&staggered, &chosen));
}

#[test]
fn one_kernels_reading_many_rows_become_a_kernel_an_update_on_cuda() {
    let auto = GpuTiling::model(Strategy::Auto);
    let spec = |fields: &str, updates: &[(&str, &str)]| {
        let updates: String = updates
            .iter()
            .map(|(t, e)| format!("[[update]]\ntarget = \"{t}\"\nexpr = \"{e}\"\n"))
            .collect();
        lowered(format!(
            "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
             [fields]\n{fields}\n{updates}[boundary]\nkind = \"fixed\"\n"
        ))
    };
    // A temporary of far reads, read again 4 planes away: the one kernel
    // reads it at 8 rows, and the step at 4 more.
    let scattered = spec(
        "u = { role = \"state\" }\nk = { role = \"input\" }\nt = { role = \"temp\" }",
        &[
            (
                "t",
                "k[-3,-3,-3] + k[-1,-4,-4] + k[2,4,4] + k[-3,-1,-2]*k[-2,2,3]",
            ),
            (
                "u",
                "u[0,0,0] + t[0,0,0] + u[-1,3,3] + u[0,4,-2] + k[0,1,-3] - t[4,3,0]",
            ),
        ],
    );
    assert!(step::fits(&scattered));
    assert!(rows_read(&scattered) > step::kernels_traffic(&scattered));
    assert_eq!(
        plan(&scattered, &auto, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 4),
        "on CUDA: a kernel an update, marching 64 planes"
    );
    assert_eq!(
        plan(&scattered, &auto, &HIP).0,
        Strategy::Naive,
        "HIP keeps the one kernel"
    );
    // Face fluxes (as written, before the inliner, which would make them
    // one update): each temporary would cross memory twice for few rows, so
    // the step stays one kernel; `stream`'s loads 3 rows a cell where
    // `naive`'s reads 5, so it is `stream`'s, in the blocks that march 64
    // planes.
    let flux = spec(
        "u = { role = \"state\" }\nfx = { role = \"temp\" }\nfy = { role = \"temp\" }\nfz = { role = \"temp\" }",
        &[
            ("fx", "u[0,0,1] - u[0,0,0]"),
            ("fy", "u[0,1,0] - u[0,0,0]"),
            ("fz", "u[1,0,0] - u[0,0,0]"),
            (
                "u",
                "u[0,0,0] + 0.15*(fx[0,0,0] - fx[0,0,-1] + fy[0,0,0] - fy[0,-1,0] + fz[0,0,0] - fz[-1,0,0])",
            ),
        ],
    );
    assert!(step::fits(&flux));
    assert!(rows_read(&flux) <= step::kernels_traffic(&flux));
    assert_eq!((step::stream_rows(&flux), rows_read(&flux)), (3, 5));
    let chosen = resolve(&auto, &flux, &CUDA).unwrap();
    assert_eq!(
        shape(chosen.clone()),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 4)
    );
    assert!(step::one_kernel(&flux, &chosen), "the one kernel");
    assert_eq!(
        plan(&flux, &auto, &HIP).0,
        Strategy::Naive,
        "HIP keeps `naive`'s"
    );
}

#[test]
fn steps_of_several_kernels_march_planes_on_cuda() {
    // A leapfrog through a temporary whose step does not fit one kernel
    // (its mixed boundary's frame is a pass after each statement's kernel).
    // The spec is written out here: the packaged crate's tests cannot read
    // the repository's `tests/stencils`.
    let st = lowered(
        r#"
[stencil]
name  = "edges3d"
dtype = "f64"
axes  = ["z", "y", "x"]

[fields]
u   = { role = "state", levels = 2 }
lap = { role = "temp" }
vel = { role = "input" }

[params]
dt   = "f64"
wall = "f64"

[boundary]
z = ["reflect", "fixed"]
x = [{ value = "wall" }, "reflect"]

[[update]]
target = "lap"
expr   = "u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,2] - 6*u[0,0,0]"

[[update]]
target = "u"
expr   = "2*u[0,0,0] - u.prev[0,0,0] + dt*vel[0,0,0]*(lap[0,0,0] + 0.25*(lap[1,0,0] + lap[0,0,-1]))"
"#
        .to_string(),
    );
    assert!(!step::fits(&st) && !st.one_update());
    let auto = GpuTiling::model(Strategy::Auto);
    assert_eq!(
        plan(&st, &auto, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 1),
        "on CUDA: stream's defaults, 64 planes a block"
    );
    assert_eq!(plan(&st, &auto, &HIP).0, Strategy::Naive, "HIP: naive");
}

/// A 3-D star of radius 1 in `dtype` whose update reads `inputs` coefficient
/// grids at the cell.
fn varcoef3d(dtype: &str, inputs: usize) -> Stencil {
    let fields: String = (0..inputs)
        .map(|k| format!("k{k} = {{ role = \"input\" }}\n"))
        .collect();
    let weights: Vec<String> = (0..inputs).map(|k| format!("k{k}[0,0,0]")).collect();
    lowered(format!(
        "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = {{ role = \"state\" }}\n{fields}\
         [[update]]\ntarget = \"u\"\nexpr = \"u[0,0,0] + ({})*({J3D7PT})\"\n",
        weights.join(" + ")
    ))
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

/// A 3-D diffusion in `dtype` whose face coefficients are harmonic means of
/// coefficient grid `k` at the cell and its neighbour: `k` read at 7 offsets.
fn harmonic3d(dtype: &str) -> Stencil {
    let faces: Vec<String> = ["-1,0,0", "1,0,0", "0,-1,0", "0,1,0", "0,0,-1", "0,0,1"]
        .iter()
        .map(|o| format!("2*k[0,0,0]*k[{o}]/(k[0,0,0] + k[{o}])*(u[{o}] - u[0,0,0])"))
        .collect();
    lowered(format!(
        "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = {{ role = \"state\" }}\nk = {{ role = \"input\" }}\n\
         [[update]]\ntarget = \"u\"\nexpr = \"u[0,0,0] + 0.1*({})\"\n",
        faces.join(" + ")
    ))
}

#[test]
fn fused_3d_tiles_take_fewer_steps_or_rows_where_input_reads_would_not_fit_the_registers() {
    use crate::backend::gpu::plan::temporal::planes::{HELD_WORDS, Planes};
    let temporal = GpuTiling::model(Strategy::Temporal);
    let held = |st: &Stencil, t: &GpuTiling| {
        let p = resolve(t, st, &CUDA).unwrap();
        let sh = Planes::new(&p, st, CUDA.shared_max);
        (p.block, p.coarsen, p.time_block, sh.held_words())
    };
    // k read at 7 offsets: 8 rows over 3 steps would hold 72 cells of
    // windows, 16 of the plane ahead and 336 of input reads (424 words);
    // 2 steps of 8 rows 288; 2 steps of 4 rows 144.
    let f32 = harmonic3d("f32");
    let sh = Planes::new(
        &resolve(&temporal, &f32, &CUDA).unwrap(),
        &f32,
        CUDA.shared_max,
    );
    assert_eq!((sh.inputs, sh.prev), (7, false), "k at 7 offsets");
    assert_eq!(held(&f32, &temporal), (vec![1, 4, 64], 4, 2, 144));
    assert_eq!(
        held(&harmonic3d("f64"), &temporal),
        (vec![1, 8, 32], 2, 2, 144)
    );
    assert!(
        sh.t * sh.window() * sh.c <= crate::backend::gpu::plan::temporal::planes::BOUNDED_WINDOWS
            && !sh.bounded(),
        "the input reads take the windows past the bound to 768 threads"
    );
    // Blocks of 512 threads leave each 128 registers; of 256, 255.
    let wide = Planes {
        bx: 64,
        by: 8,
        ..sh.clone()
    };
    assert_eq!(wide.held_limit(), 96);
    assert_eq!(
        Planes {
            by: 4,
            ..wide.clone()
        }
        .held_limit(),
        HELD_WORDS[0]
    );
    assert_eq!(
        Planes {
            by: 4,
            f64: true,
            ..wide
        }
        .held_limit(),
        HELD_WORDS[1]
    );
    // Coefficient grids read at the cell: two keep 3 steps of 8 rows (184
    // words), three take 2 steps (160), four 4 rows (140: 3 steps of 4 rows
    // do more than 2 of 4).
    assert_eq!(
        held(&varcoef3d("f32", 2), &temporal),
        (vec![1, 4, 64], 8, 3, 184)
    );
    assert_eq!(
        held(&varcoef3d("f32", 3), &temporal),
        (vec![1, 4, 64], 8, 2, 160)
    );
    assert_eq!(
        held(&varcoef3d("f32", 4), &temporal),
        (vec![1, 4, 64], 4, 3, 140)
    );
    // With 3 steps from the spec, the tiles keep the rows that store half their cells.
    let three = GpuTiling {
        time_block: Some(3),
        ..temporal.clone()
    };
    assert_eq!(held(&f32, &three), (vec![1, 4, 64], 4, 3, 212));
    // Stencils that read no input grid keep their tiles.
    let j3d7pt = stencil("\"z\", \"y\", \"x\"", "f32", J3D7PT);
    assert_eq!(
        plan(&j3d7pt, &temporal, &CUDA),
        (Strategy::Temporal, vec![1, 4, 64], 128, 8, 1)
    );
}

#[test]
fn dense_3d_sums_bound_by_arithmetic_run_in_blocks_of_planes() {
    let auto = GpuTiling::model(Strategy::Auto);
    let axes = "\"z\", \"y\", \"x\"";
    // The box of radius 2 in f32 (125 reads, 15 flops a byte): 8 planes by 2
    // cells a thread on CUDA, in `naive`'s own thread blocks.
    let box2 = stencil(axes, "f32", &box3(2));
    assert_eq!(
        plan(&box2, &auto, &CUDA),
        (Strategy::Naive, vec![2, 4, 32], 1, 8, 2)
    );
    // HIP, f64, and the box of radius 3 (343 reads): columns of 8 cells.
    let box3r = stencil(axes, "f32", &box3(3));
    for (st, d) in [
        (&box2, &HIP),
        (&stencil(axes, "f64", &box3(2)), &CUDA),
        (&box3r, &CUDA),
    ] {
        let (strategy, _, _, cells, vector) = plan(st, &auto, d);
        assert_eq!(
            (strategy, cells, vector),
            (Strategy::Naive, COLUMN_CELLS, 1)
        );
    }
    // The box of radius 1 waits on memory: its single step is no block.
    let box1 = stencil(axes, "f32", &box3(1));
    assert_ne!(one_step(&box1, &CUDA).1.4, 2);
    // A star of 73 weighted reads (18 flops a byte) shares few reads between
    // planes: a star's columns are mostly zeros.
    let star = stencil(
        axes,
        "f32",
        "sum(r, 1, 12, 0.5*u[r,0,0] + 0.5*u[0,r,0] + 0.5*u[0,0,r] + 0.5*u[-r,0,0] + 0.5*u[0,-r,0] + 0.5*u[0,0,-r]) + 0.5*u[0,0,0]",
    );
    assert!(crate::backend::gpu::plan::model::sums_columns(&star));
    assert!(!crate::backend::gpu::plan::model::sums_blocks(&star));
    assert!(crate::backend::gpu::plan::model::sums_blocks(&box2));
}
