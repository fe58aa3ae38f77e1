//! `auto`'s single steps: their windows, cells a thread and marches.

use super::*;

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
    let wide = "sum(r, 1, 5, u[r,0] + u[0,r] + u[-r,0] + u[0,-r])";
    let wide_2d = unfused2d("f64", "fixed", wide);
    assert!(register_words(&wide_2d, 4, 4, 1) > AUTO_REGISTER_WORDS);
    assert!(register_words(&wide_2d, 4, 1, 2) > WIDE_REGISTER_WORDS);
    let periodic_2d = unfused2d("f64", "periodic", wide);
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
        one_step(&periodic_9pt, &HIP),
        (Strategy::Temporal, (Strategy::Stream, vec![1, 64], 4, 1, 2)),
        "in f64 on a periodic grid, pairs"
    );
    // On CUDA too a periodic grid's one step streams, where `auto` runs
    // `naive`'s rows of vectors for steps that do not fuse; so does a
    // leapfrog's.
    assert_eq!(
        one_step(&periodic_9pt, &CUDA).1,
        (Strategy::Stream, vec![1, 64], 4, 1, 2),
        "on CUDA, 16-byte vectors marching chunks of 4 rows"
    );
    let wave = lowered(
        "[stencil]\nname = \"w\"\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n\
         [fields]\nu = { role = \"state\", levels = 2 }\n\
         [[update]]\ntarget = \"u\"\nexpr = \"2*u[0,0] - u.prev[0,0] + u[-1,0] + u[1,0] + u[0,-1] + u[0,1]\"\n\
         [boundary]\nkind = \"periodic\"\n"
            .to_string(),
    );
    assert_eq!(
        one_step(&wave, &CUDA).1.0,
        Strategy::Stream,
        "a periodic leapfrog's one step streams"
    );
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

#[test]
fn unfused_3d_steps_reaching_2_planes_march_64_on_cuda() {
    let auto = GpuTiling::model(Strategy::Auto);
    let star = |r: usize| {
        let sum = format!(
            "sum(r, 1, {r}, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])"
        );
        // A leapfrog of radius 2, whose steps `auto` does not fuse.
        crate::backend::gpu::emit::temporal::tests::leapfrog("\"z\", \"y\", \"x\"", "f64", &sum, "")
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
    let near = crate::backend::gpu::emit::temporal::tests::leapfrog(
        "\"z\", \"y\", \"x\"",
        "f64",
        near,
        "",
    );
    assert_eq!(
        plan(&near, &auto, &CUDA),
        (Strategy::Stream, vec![1, 2, 64], 4, 1, 2),
        "reaching 1 plane: blocks marching 4"
    );
}

#[test]
fn fused_3d_steps_reaching_2_planes_launch_one_step_marching_64_on_cuda() {
    // The radius-2 star (j3d13pt): its fused plan's launches of one step
    // run the blocks `auto` runs where steps do not fuse.
    let sum = "sum(r, 1, 2, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])";
    for dtype in ["f32", "f64"] {
        let star = stencil("\"z\", \"y\", \"x\"", dtype, sum);
        let vector = 16 / star.dtype.size();
        assert_eq!(
            one_step(&star, &CUDA),
            (
                Strategy::Temporal,
                (Strategy::Stream, vec![1, 8, 32], 64, 1, vector)
            ),
            "{dtype} on CUDA: blocks of [1, 8, 32] marching 64 planes"
        );
        assert_eq!(
            one_step(&star, &HIP).1,
            (Strategy::Stream, vec![1, 2, 64], 4, 1, vector),
            "{dtype} on HIP: blocks marching 4"
        );
    }
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
