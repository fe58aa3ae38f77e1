use super::plan::companions::small_plan;
use super::plan::model::*;
use super::plan::*;
use super::*;
use crate::analysis::Analysis;
use crate::ir::{GpuTiling, Strategy};

pub(in crate::backend::gpu) fn heat2d(boundary: &str) -> (Stencil, Analysis) {
    let text = format!(
        "[stencil]\nname = \"h\"\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n[fields]\nu = {{ role = \"state\" }}\n\
         [[update]]\ntarget = \"u\"\nexpr = \"u[-1,0] + u[1,0] + u[0,-1] + u[0,1]\"\n[boundary]\nkind = \"{boundary}\"\n"
    );
    let src = crate::spec::Source {
        path: "h.stencil.toml".into(),
        text,
    };
    let st = crate::ir::lower(&crate::spec::parse(&src).unwrap(), &src).unwrap();
    let an = crate::analysis::analyse(&st);
    (st, an)
}

#[test]
fn stream_moves_a_window_of_planes_through_registers() {
    let (st, an) = heat2d("fixed");
    let plan = Plan {
        strategy: Strategy::Stream,
        block: vec![1, 256],
        chunk: 64,
        coarsen: 2,
        vector: 1,
        time_block: 1,
        occupancy: None,
        chosen: false,
    };
    let code = source(&st, &an, &plan, "p", &CUDA);
    // Planes z - 1 ..= z + 2 for this iteration, z + 3 and z + 4 loaded ahead.
    assert!(code.contains("double w0[6][3];"), "{code}");
    // The first plane is read only at the centre column.
    assert!(
        code.contains("w0[0][1] = cur_u[(z0 - 1) * s0 + i1];") && !code.contains("w0[0][0] ="),
        "{code}"
    );
    // Neighbours are loaded one iteration before their first use: those of
    // plane z + 2 (held since the last iteration) and z + 3 (new) now,
    // those of z + 4 (new, read at the centre column next) later.
    assert!(code.contains("if (z + 2 < z1) {"), "{code}");
    assert!(
        code.contains("w0[3][0] = cur_u[(z + 2) * s0 + i1 - 1];")
            && code.contains("w0[4][2] = cur_u[(z + 3) * s0 + i1 + 1];")
            && code.contains("w0[5][1] = cur_u[(z + 4) * s0 + i1];")
            && !code.contains("w0[5][0] ="),
        "{code}"
    );
    assert!(
        code.contains("if (z + 1 < z1) {"),
        "a partial last iteration is not stored"
    );
    // 2-D kernels test every plane against the grid before loading it
    // (3-D ones skip the planes provably on it: see the 3-D test).
    assert!(
        code.contains("if (z + 3 < n0) {") && code.contains("if (z + 4 < n0) {"),
        "{code}"
    );
    assert!(code.contains("w0[1][0] = w0[3][0];"), "{code}");
    assert!(
        !code.contains("__shared__") && !code.contains("__syncthreads"),
        "{code}"
    );
    assert!(
        !code.contains("stencil_mod"),
        "no wrapping with a fixed boundary"
    );
    let (st, an) = heat2d("periodic");
    let code = source(&st, &an, &plan, "p", &CUDA);
    assert!(
        code.contains("w0[4][0] = cur_u[stencil_mod(z + 3, n0) * s0 + stencil_mod(i1 - 1, n1)];"),
        "{code}"
    );
}

#[test]
fn periodic_naive_steps_run_the_fixed_interior_and_a_wrapping_frame() {
    let (st, an) = heat2d("periodic");
    let naive = resolve(&GpuTiling::model(Strategy::Naive), &st, &CUDA).unwrap();
    let code = source(&st, &an, &naive, "p", &CUDA);
    // The interior's kernel reads unwrapped, under a launcher of its own,
    // which the statement's launcher calls before the frame's slabs.
    assert!(!code.contains("stencil_mod"), "{code}");
    assert!(code.contains("cur_u[c - s0]"), "{code}");
    let launcher = &code[code.find("extern \"C\" int p_cuda__h__update_u(").unwrap()..];
    assert!(
        launcher.contains("p_interior_cuda__h__update_u(n0, n1, out, cur_u, stream)"),
        "{code}"
    );
    assert!(
        code.contains("cur_u[stencil_wrap(i0 - 1, n0) * s0 + i1]"),
        "{code}"
    );
    // `stream` wraps as its window loads, and 3-D `naive` as it reads.
    let stream = resolve(&GpuTiling::model(Strategy::Stream), &st, &CUDA).unwrap();
    let code = source(&st, &an, &stream, "p", &CUDA);
    assert!(
        code.contains("stencil_mod") && !code.contains("_interior"),
        "{code}"
    );
    let st = lowered(
        "[stencil]\nname = \"h\"\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = { role = \"state\" }\n\
         [[update]]\ntarget = \"u\"\nexpr = \"u[-1,0,0] + u[0,0,1]\"\n[boundary]\nkind = \"periodic\"\n"
            .into(),
    );
    let an = crate::analysis::analyse(&st);
    let naive = resolve(&GpuTiling::model(Strategy::Naive), &st, &CUDA).unwrap();
    let code = source(&st, &an, &naive, "p", &CUDA);
    assert!(
        code.contains("stencil_mod") && !code.contains("_interior"),
        "{code}"
    );
}

#[test]
fn periodic_frames_compute_regions_by_the_edge_whole_on_grids_too_small_for_the_interior() {
    // The right region starts 7 cells from the high edge: the grid is
    // legal from 8 cells (the left region's one), but the fixed interior's
    // kernel, which starts there, reads 2 cells back and so holds from 9.
    let st = lowered(
        "[stencil]\nname = \"h\"\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n[fields]\nu = { role = \"state\" }\n\
         [regions]\nleft = { x = [0, \"n-7\"] }\nright = { x = [\"n-7\", \"n\"] }\n\
         [[update]]\ntarget = \"u\"\nregion = \"left\"\nexpr = \"u[0,-2] + u[0,2]\"\n\
         [[update]]\ntarget = \"u\"\nregion = \"right\"\nexpr = \"u[-1,0] + u[0,2]\"\n\
         [boundary]\nkind = \"periodic\"\n"
            .into(),
    );
    let an = crate::analysis::analyse(&st);
    assert_eq!(an.min_shape, vec![3, 8]);
    let naive = resolve(&GpuTiling::model(Strategy::Naive), &st, &CUDA).unwrap();
    let code = source(&st, &an, &naive, "p", &CUDA);
    let right = &code[code
        .find("extern \"C\" int p_cuda__h__update_u_in_right(")
        .unwrap()..];
    let whole = right
        .find("if (n1 < 9) {")
        .unwrap_or_else(|| panic!("{code}"));
    assert!(
        right[whole..].starts_with(
            "if (n1 < 9) {\n        const ptrdiff_t o[] = {lo0, lo1};\n        const ptrdiff_t e[] = {hi0 - lo0, hi1 - lo1};\n        return p_cuda__h__update_u_in_right_slab("
        ),
        "{code}"
    );
    assert!(
        whole
            < right
                .find("p_interior_cuda__h__update_u_in_right(")
                .unwrap()
    );
    // The left region ends there: its interior's span holds on every grid.
    let left = &code[code
        .find("extern \"C\" int p_cuda__h__update_u_in_left(")
        .unwrap()..];
    assert!(
        !left[..left.find("\n}\n").unwrap()].contains(" < 9"),
        "{code}"
    );
}

#[test]
fn frames_whose_reads_stay_on_the_grid_define_no_edge_helper() {
    // A box away from every side and its outside, which reads only its own
    // cell: no frame read passes an edge, and nvcc's `-Werror` refuses a
    // static device function that nothing calls.
    let spec = |rest: &str| {
        format!(
            "[stencil]\nname = \"h\"\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n[fields]\nu = {{ role = \"state\" }}\n\
             [regions]\nmid = {{ y = [3, \"n-3\"], x = [3, \"n-3\"] }}\nrest = {{ outside = \"mid\" }}\n\
             [[update]]\ntarget = \"u\"\nregion = \"mid\"\nexpr = \"u[-1,0] + u[1,0] + u[0,1]\"\n\
             [[update]]\ntarget = \"u\"\nregion = \"rest\"\nexpr = \"{rest}\"\n\
             [boundary]\nkind = \"periodic\"\n"
        )
    };
    let code = |rest: &str| {
        let st = lowered(spec(rest));
        let an = crate::analysis::analyse(&st);
        let naive = resolve(&GpuTiling::model(Strategy::Naive), &st, &CUDA).unwrap();
        source(&st, &an, &naive, "p", &CUDA)
    };
    let own = code("0.5*u[0,0]");
    assert!(own.contains("_frame("), "{own}");
    assert!(!own.contains("stencil_wrap"), "{own}");
    // Where the outside reads past the edge, the helper is there.
    let past = code("u[0,-1]");
    assert!(
        past.contains("ptrdiff_t stencil_wrap(ptrdiff_t i, ptrdiff_t n)")
            && past.contains("stencil_wrap(i1 - 1, n1)"),
        "{past}"
    );
}

#[test]
fn kernels_reading_no_neighbour_define_no_wrap_and_wait_at_no_barrier() {
    // A periodic stencil that reads every grid at its own cell only: no
    // index wraps, and `tiled` stages no tile; nvcc's `-Werror` refuses a
    // helper nothing calls (the random specs found one).
    for (axes, at) in [("\"x\"", "[0]"), ("\"y\", \"x\"", "[0,0]")] {
        let st = lowered(format!(
            "[stencil]\nname = \"h\"\ndtype = \"f64\"\naxes = [{axes}]\n\
             [fields]\nu = {{ role = \"state\" }}\nk = {{ role = \"input\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"0.5*u{at} + 0.05*k{at}\"\n\
             [boundary]\nkind = \"periodic\"\n"
        ));
        let an = crate::analysis::analyse(&st);
        for strategy in [Strategy::Naive, Strategy::Tiled] {
            let plan = resolve(&GpuTiling::model(strategy), &st, &CUDA).unwrap();
            let code = source(&st, &an, &plan, "p", &CUDA);
            assert!(!code.contains("stencil_mod"), "{code}");
            assert!(!code.contains("__syncthreads"), "{code}");
        }
    }
    // A neighbour read wraps, and its tile is waited for.
    let (st, an) = heat2d("periodic");
    let tiled = resolve(&GpuTiling::model(Strategy::Tiled), &st, &CUDA).unwrap();
    let code = source(&st, &an, &tiled, "p", &CUDA);
    assert!(
        code.contains("ptrdiff_t stencil_mod(ptrdiff_t i, ptrdiff_t n)")
            && code.contains("__syncthreads();"),
        "{code}"
    );
}

#[test]
fn autos_single_steps_run_naive_on_small_grids() {
    // A periodic one that does not fuse (a leapfrog reading its previous
    // level off the cell) runs `naive` on every grid (`model::periodic_rows`).
    let periodic = lowered(
        "[stencil]\nname = \"h\"\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n[fields]\nu = { role = \"state\", levels = 2 }\n\
         [[update]]\ntarget = \"u\"\nexpr = \"u[-1,0] + u[1,0] + u[0,-1] + u[0,1] - u.prev[0,1]\"\n[boundary]\nkind = \"periodic\"\n"
            .to_string(),
    );
    let plan = resolve(&GpuTiling::model(Strategy::Auto), &periodic, &CUDA).unwrap();
    assert_eq!((plan.strategy, plan.vector), (Strategy::Naive, 2));
    assert!(naive_plan(&plan, &periodic, &CUDA).is_none());
    let (st, an) = heat2d("fixed");
    let plan = resolve(&GpuTiling::model(Strategy::Auto), &st, &CUDA).unwrap();
    assert!(plan.fuses_steps());
    let code = source(&st, &an, &plan, "p", &CUDA);
    let launcher = &code[code.find("extern \"C\" int p_cuda__h__update_u(").unwrap()..];
    let when = launcher
        .find("if (n0 * n1 < (ptrdiff_t)4096 * multiprocessors) {")
        .unwrap_or_else(|| panic!("{code}"));
    let naive = launcher
        .find("p_cuda__h__update_u_naive_kernel<<<")
        .unwrap();
    // Asked before any other single step; fused launches never.
    assert!(launcher.find("if (levels == 1) {").unwrap() < when);
    assert!(
        when < naive && naive < launcher.find("p_cuda__h__update_u_step").unwrap(),
        "{code}"
    );
    assert!(launcher.contains(
        "const cudaError_t status = stencil_residency((const void *)p_cuda__h__update_u_naive_kernel, 256, 0, &multiprocessors, &per_multiprocessor);"
    ));
    assert!(code.contains(
        "/* The kernel of single steps on small grids: `naive`, blocks of 8 x 32 threads. */"
    ));
    // Named strategies run what they name.
    let named = resolve(&GpuTiling::model(plan.strategy), &st, &CUDA).unwrap();
    assert!(naive_plan(&named, &st, &CUDA).is_none());
    assert!(!source(&st, &an, &named, "p", &CUDA).contains("_naive"));
}

#[test]
fn autos_f64_stars_reading_other_grids_march_vectors_on_large_planes() {
    let star =
        "0.1*sum(r, 1, 4, u[-r,0,0] + u[r,0,0] + u[0,-r,0] + u[0,r,0] + u[0,0,-r] + u[0,0,r])";
    let acoustic = |dtype: &str| {
        lowered(format!(
            "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\n\
             u = {{ role = \"state\", levels = 2 }}\nvel = {{ role = \"input\" }}\n[[update]]\ntarget = \"u\"\n\
             expr = \"2*u[0,0,0] - u.prev[0,0,0] + vel[0,0,0]*vel[0,0,0]*({star})\"\n"
        ))
    };
    let st = acoustic("f64");
    let plan = resolve(&GpuTiling::model(Strategy::Auto), &st, &CUDA).unwrap();
    assert_eq!(
        (plan.strategy, &plan.block[..], plan.chunk, plan.vector),
        (Strategy::Stream, &[1, 8, 32][..], 64, 2)
    );
    assert!(plan.small_grids() && plan.vector_planes());
    assert_eq!(small_step_cells(&plan), SMALL_STEP_CELLS_MORE_GRIDS);
    let (code, launcher) = cuda_launcher(&st, &plan);
    let at = |what: &str| position(&launcher, &code, what);
    // `naive` on the smallest grids, the small kernel on small planes, then the plan's kernels.
    let naive = at("if (n0 * n1 * n2 < (ptrdiff_t)8192 * multiprocessors) {");
    let planes = at(
        "if ((ptrdiff_t)n1 * n2 < 160000 && n0 * n1 * n2 <= 2147483647 && n2 % 2 == 0 && (size_t)out % 16 == 0",
    );
    let small = at("p_cuda__s__update_u_small_kernel<<<");
    let small_wide = at("p_cuda__s__update_u_small_i64_kernel<<<");
    let own = at("p_cuda__s__update_u_kernel<<<");
    let own_scalar = at("p_cuda__s__update_u_scalar_kernel<<<");
    assert!(naive < at("p_cuda__s__update_u_naive_kernel<<<"));
    assert!(naive < planes && planes < small && small < small_wide && small_wide < own);
    assert!(own < own_scalar);
    // Small planes of rows that are not whole vectors run the plan's own scalar twin.
    assert_eq!(
        launcher.matches("(ptrdiff_t)n1 * n2 < 160000 && ").count(),
        2
    );
    assert!(!code.contains("_small_scalar"));
    assert!(code.contains(
        "/* Planes of fewer than 160000 cells: `stream` in 2-cell vectors, blocks of 1 x 2 x 64 threads marching 4 planes (rows that are not whole vectors: the kernels below). */"
    ));
    assert!(code.contains(
        "; planes of fewer than 160000 cells run blocks of 1 x 2 x 64 threads marching 4 planes."
    ));
    assert!(!code.contains("mma"), "no tensor kernel");
    // Named strategies, f32, HIP and the stars that read one grid keep their plans.
    let named = resolve(&GpuTiling::model(Strategy::Stream), &st, &CUDA).unwrap();
    assert!(!named.small_grids() && small_plan(&named, &st, &CUDA).is_none());
    let hip = resolve(&GpuTiling::model(Strategy::Auto), &st, &HIP).unwrap();
    assert!(!hip.vector_planes());
    let f32 = resolve(&GpuTiling::model(Strategy::Auto), &acoustic("f32"), &CUDA).unwrap();
    assert!(!f32.vector_planes());
    // Its single steps read three grids: quads on every row of whole quads.
    let (code, launcher) = cuda_launcher(&acoustic("f32"), &f32);
    assert!(code.contains("_step_pairs_kernel<<<") && !launcher.contains(" / 128 * 2 <= "));
    let one_grid = stencil("\"z\", \"y\", \"x\"", "f64", star);
    let one_grid = resolve(&GpuTiling::model(Strategy::Auto), &one_grid, &CUDA).unwrap();
    assert_eq!(one_grid.strategy, Strategy::Tensor);
    assert!(one_grid.small_grids() && !one_grid.vector_planes());
    assert_eq!(small_step_cells(&one_grid), SMALL_STEP_CELLS);
}

/// `plan`'s CUDA source for `st` (prefix `p`) and its launcher's text.
fn cuda_launcher(st: &Stencil, plan: &Plan) -> (String, String) {
    let code = source(st, &crate::analysis::analyse(st), plan, "p", &CUDA);
    let at = code.find("extern \"C\" int p_cuda__s__update_u(").unwrap();
    (code.clone(), code[at..].to_string())
}

/// Where `what` starts in `launcher` (failing with the whole `code`).
fn position(launcher: &str, code: &str, what: &str) -> usize {
    launcher
        .find(what)
        .unwrap_or_else(|| panic!("{what}: {code}"))
}

#[test]
fn f32_stars_of_reach_4_step_alone_in_planes_stream() {
    let st = stencil(
        "\"z\", \"y\", \"x\"",
        "f32",
        "0.1*sum(r, 1, 4, u[-r,0,0] + u[r,0,0] + u[0,-r,0] + u[0,r,0] + u[0,0,-r] + u[0,0,r])",
    );
    let plan = resolve(&GpuTiling::model(Strategy::Auto), &st, &CUDA).unwrap();
    assert!(
        plan.measures(),
        "the steps fuse, each session measuring the single step too"
    );
    let step = step_plan(&plan, &st, &CUDA).unwrap();
    assert_eq!(
        (step.strategy, &step.block[..], step.chunk, step.vector),
        (Strategy::Stream, &[1, 8, 32][..], 64, 4)
    );
    assert!(step.vector_planes() && step.small_grids());
    let (code, launcher) = cuda_launcher(&st, &plan);
    let at = |what: &str| position(&launcher, &code, what);
    // One step: `naive` on the smallest grids, blocks marching 4 planes on
    // small planes, then 64 planes in quads, pairs, single cells.
    let one = at("if (levels == 1) {");
    let naive = at("p_cuda__s__update_u_naive_kernel<<<");
    let small = at("p_cuda__s__update_u_step_small_kernel<<<");
    let quads = at("p_cuda__s__update_u_step_kernel<<<");
    let pairs = at("if (n0 * n1 * n2 <= 2147483647 && n2 % 2 == 0 && (size_t)out % 8 == 0");
    let pairs_kernel = at("p_cuda__s__update_u_step_pairs_kernel<<<");
    let scalar = at("p_cuda__s__update_u_step_scalar_kernel<<<");
    let fused = at("p_cuda__s__update_u_vector_kernel<0>;");
    assert!(one < naive && naive < small && small < quads && quads < pairs);
    assert!(pairs < pairs_kernel && pairs_kernel < scalar && scalar < fused);
    // Quads only where their rows of 128 cells cover no more of `x` than
    // rows of 64 in pairs would (not on rows of 448 cells: 512 against 448).
    let cover = "(n2 - 4 + 128 - 1) / 128 * 2 <= (n2 - 4 + 64 - 1) / 64";
    assert_eq!(launcher.matches(cover).count(), 2, "32- and 64-bit quads");
    assert!(small < at(cover) && at(cover) < quads);
    assert!(at("(ptrdiff_t)n1 * n2 < 160000 && n0 * n1 * n2 <= 2147483647 && n2 % 4 == 0") < small);
    assert!(code.contains(
        "/* The same in 8-byte pairs, for grids whose rows are whole pairs but not whole vectors. */"
    ));
    assert!(code.contains(
        "/* The kernel of one step on small planes: `stream`, blocks of 1 x 2 x 64 threads, marching 4 cells along `z` per block, 1 per iteration, 4 along `x` per thread. */"
    ));
    // The small planes' kernel has no twins of its own but the 64-bit one.
    assert!(!code.contains("_step_small_pairs") && !code.contains("_step_small_scalar"));
    // Reach 3 and HIP: the step kernels they had.
    let reach3 = stencil(
        "\"z\", \"y\", \"x\"",
        "f32",
        "0.1*sum(r, 1, 3, u[-r,0,0] + u[r,0,0] + u[0,-r,0] + u[0,r,0] + u[0,0,-r] + u[0,0,r])",
    );
    assert!(!wide_planes(&reach3));
    let hip = resolve(&GpuTiling::model(Strategy::Auto), &st, &HIP).unwrap();
    assert!(!hip.vector_planes());
    assert!(step_plan(&hip, &st, &HIP).is_none_or(|step| !step.vector_planes()));
    assert!(!source(&st, &crate::analysis::analyse(&st), &hip, "p", &HIP).contains("_pairs"));
}

#[test]
fn hip_is_the_same_generator_in_another_dialect() {
    let (st, an) = heat2d("fixed");
    let auto = GpuTiling::model(Strategy::Tiled);
    let plan = resolve(&auto, &st, &HIP).unwrap();
    assert_eq!(plan.block, vec![4, 64], "64-wide wavefronts on AMD");
    let hip = source(&st, &an, &plan, "p", &HIP);
    let cuda = source(&st, &an, &plan, "p", &CUDA);
    assert!(
        hip.contains("#include <hip/hip_runtime.h>")
            && hip.contains("return (int)hipGetLastError();"),
        "{hip}"
    );
    assert!(
        hip.contains("extern \"C\" int p_hip__h__update_u("),
        "{hip}"
    );
    let swapped = cuda
        .replace("cuda_runtime.h", "hip/hip_runtime.h")
        .replace("cuda", "hip")
        .replace("CUDA", "HIP");
    assert_eq!(hip, swapped, "the dialect changes names only");
    let runtime = runtime_source("p", &HIP);
    assert!(
        runtime.contains("return (int)hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost);"),
        "{runtime}"
    );
    // Waits for the legacy stream, never the device (which breaks other threads' captures).
    for (d, api) in [(&HIP, "hip"), (&CUDA, "cuda")] {
        let runtime = runtime_source("p", d);
        assert!(
            runtime.contains(&format!("return (int){api}StreamSynchronize(0);"))
                && !runtime.contains("DeviceSynchronize"),
            "{runtime}"
        );
    }
}

#[test]
fn blocks_fit_the_shared_memory_budget() {
    let text = "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = { role = \"state\" }\n\
                [[update]]\ntarget = \"u\"\nexpr = \"sum(r, 1, 4, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])\"\n";
    let st = lowered(text.into());
    let tiled = Plan {
        strategy: Strategy::Tiled,
        block: vec![2, 2, 64],
        chunk: 1,
        coarsen: 1,
        vector: 1,
        time_block: 1,
        occupancy: None,
        chosen: false,
    };
    assert_eq!(
        fit::shared_bytes(&st, &tiled),
        10 * 10 * 72 * 8,
        "radius 4 on every side, f64"
    );
    let fitted = fit(tiled.clone(), false, &st, &HIP).unwrap();
    assert_eq!(
        fitted.block,
        vec![1, 1, 64],
        "9 x 9 x 72 x 8 = 46 656 bytes"
    );
    assert!(fit::shared_bytes(&st, &fitted) <= SHARED_BUDGET);
    let err = fit(tiled.clone(), true, &st, &HIP).unwrap_err();
    assert!(
        err.contains(
            "needs 57 KiB of shared memory per block for `s`, more than the 48 KiB budget"
        ),
        "{err}"
    );
    // Two grids at radius 4: one row of 64 threads is too many, so a default
    // block narrows along the contiguous axis too.
    let two = lowered(
        text.replace(
            "u = { role = \"state\" }",
            "u = { role = \"state\" }\nv = { role = \"input\" }",
        )
        .replace("u[0,0,-r])", "u[0,0,-r] + v[r,0,0] + v[0,r,0] + v[0,0,-r])"),
    );
    assert_eq!(fit::shared_bytes(&two, &tiled), 2 * 10 * 10 * 72 * 8);
    let fitted = fit(tiled.clone(), false, &two, &HIP).unwrap();
    assert_eq!(
        fitted.block,
        vec![1, 1, 16],
        "2 x 9 x 9 x 24 x 8 = 31 104 bytes (at 32 threads: 51 840)"
    );
    // Radius 32: 65^3 values a block even at one thread.
    let far = lowered(text.replace(
        "sum(r, 1, 4, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])",
        "u[32,0,0] + u[0,32,0] + u[0,0,32]",
    ));
    let err = fit(tiled, false, &far, &HIP).unwrap_err();
    assert!(
        err.contains("[1, 1, 1] threads")
            && err.contains("overflow even at one thread a block: set another `strategy`"),
        "{err}"
    );
    let stream = Plan {
        strategy: Strategy::Stream,
        block: vec![1, 8, 32],
        chunk: 64,
        coarsen: 1,
        vector: 1,
        time_block: 1,
        occupancy: None,
        chosen: false,
    };
    assert_eq!(
        fit::shared_bytes(&st, &stream),
        0,
        "registers and caches only"
    );
}

/// A one-field stencil of `axes` in `dtype` computing `expr`.
pub(in crate::backend::gpu) fn stencil(axes: &str, dtype: &str, expr: &str) -> Stencil {
    let text = format!(
        "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [{axes}]\n[fields]\nu = {{ role = \"state\" }}\n\
         [[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n"
    );
    lowered(text)
}

/// The stencil spec `text` (as `s.stencil.toml`) lowered.
pub(in crate::backend) fn lowered(text: String) -> Stencil {
    let src = crate::spec::Source {
        path: "s.stencil.toml".into(),
        text,
    };
    crate::ir::lower(&crate::spec::parse(&src).unwrap(), &src).unwrap()
}

/// Every `w<g>[m][k]` of `code` within the bounds `w<g>` is declared with.
fn window_indices_in_bounds(code: &str) {
    let mut sizes: Vec<(String, usize, usize)> = Vec::new();
    for line in code.lines().map(str::trim).filter(|l| !l.starts_with("/*")) {
        let decl = line.strip_prefix("float ").or(line.strip_prefix("double "));
        if let Some(d) = decl.filter(|d| d.starts_with('w') && d.ends_with("];")) {
            let (name, dims) = d.split_once('[').unwrap();
            let dims: Vec<usize> = dims
                .trim_end_matches("];")
                .split("][")
                .map(|n| n.parse().unwrap())
                .collect();
            sizes.retain(|(n, _, _)| n != name);
            sizes.push((name.to_string(), dims[0], dims[1]));
            continue;
        }
        for (name, planes, cells) in &sizes {
            for (at, _) in line.match_indices(&format!("{name}[")) {
                let rest = &line[at + name.len() + 1..];
                let (m, rest) = rest.split_once("][").unwrap();
                let k = rest.split(']').next().unwrap();
                let (m, k): (i64, i64) = (m.parse().unwrap(), k.parse().unwrap());
                assert!(
                    (0..*planes as i64).contains(&m) && (0..*cells as i64).contains(&k),
                    "{name}[{m}][{k}] outside {name}[{planes}][{cells}] in `{line}`"
                );
            }
        }
    }
}

#[test]
fn windows_of_rows_read_to_one_side_hold_the_threads_own_vector() {
    // Each row group but the middle one is read only right of the
    // thread's cells (`u[1,1,1]`) or only left (`u[-1,-1,-1]`): its window still holds the
    // vector the thread loads for its own cells. Found by the random
    // stencils of the cross-backend tests.
    let st = stencil(
        "\"z\", \"y\", \"x\"",
        "f64",
        "u[1,1,1] + 0.5*u[-1,-1,-1] + u[0,0,0]",
    );
    for (chunk, coarsen) in [(3, 3), (8, 3)] {
        let plan = Plan {
            strategy: Strategy::Stream,
            block: vec![1, 2, 64],
            chunk,
            coarsen,
            vector: 2,
            time_block: 1,
            occupancy: None,
            chosen: false,
        };
        let code = source(&st, &crate::analysis::analyse(&st), &plan, "p", &CUDA);
        assert!(code.contains("const double2 q"), "{code}");
        window_indices_in_bounds(&code);
    }
}

#[test]
fn vectors_are_at_most_16_bytes() {
    let st = stencil("\"y\", \"x\"", "f64", "u[0,-1] + u[0,1]");
    let plan = Plan {
        strategy: Strategy::Stream,
        block: vec![1, 64],
        chunk: 2,
        coarsen: 2,
        vector: 4,
        time_block: 1,
        occupancy: None,
        chosen: false,
    };
    let err = fit(plan.clone(), true, &st, &CUDA).unwrap_err();
    assert!(
        err.contains("`vector = 4` makes vectors of 32 bytes for `s`")
            && err.contains("set `vector = 2` or less in [tiling.cuda]"),
        "{err}"
    );
    let ok = Plan { vector: 2, ..plan };
    assert_eq!(fit(ok.clone(), true, &st, &CUDA).unwrap(), ok);
    let code = source(&st, &crate::analysis::analyse(&st), &ok, "p", &CUDA);
    assert!(
        code.contains("if (n1 % 2 == 0 && (size_t)out % 16 == 0 && (size_t)cur_u % 16 == 0) {")
            && code.contains("p_cuda__s__update_u_scalar_kernel<<<grid, block, 0, stream>>>"),
        "the launcher falls back to the scalar twin: {code}"
    );
    assert!(
        !code.contains("_i64") && !code.contains("const int"),
        "2-D indices stay 64-bit"
    );
}

#[test]
fn scalar_twins_of_3d_vectors_run_stream_defaults_on_the_launchers_chunk() {
    let st = stencil(
        "\"z\", \"y\", \"x\"",
        "f32",
        "u[-2,0,0] + u[0,0,-1] + u[0,0,1] + u[0,1,0] + u[2,0,0]",
    );
    let plan = resolve(&vector_stream(&st, &CUDA), &st, &CUDA).unwrap();
    assert_eq!(
        (plan.block.as_slice(), plan.vector),
        ([1, 2, 64].as_slice(), 4)
    );
    let code = source(&st, &crate::analysis::analyse(&st), &plan, "p", &CUDA);
    window_indices_in_bounds(&code);
    let kernel = |name: &str| {
        let at = code.find(&format!("{name}(const int n0")).unwrap();
        code[..at].lines().last().unwrap().to_string()
    };
    assert!(kernel("update_u_kernel").contains("__launch_bounds__(128)"));
    // The twins: one cell a thread, 256 threads, the chunk an argument.
    for name in ["update_u_scalar_kernel", "update_u_scalar_i64_kernel"] {
        let at = code.find(&format!("{name}(const")).unwrap();
        let line = &code[at..code[at..].find('\n').unwrap() + at];
        assert!(
            line.ends_with("const float *__restrict__ cur_u, int chunk)"),
            "{line}"
        );
        assert!(
            code[..at].ends_with("__launch_bounds__(256) p_cuda__s__"),
            "{name}"
        );
    }
    assert!(code.contains(
        "/* The same without vectors, for grids whose rows are not whole vectors: `stream`'s blocks of 1 x 8 x 32 threads, chunks of at most 64 planes. */"
    ));
    assert!(
        code.contains("const int z1 = z0 + chunk < n0 - 2 ? z0 + chunk : n0 - 2;"),
        "{code}"
    );
    let launcher = &code[code.find("extern \"C\" int p_cuda__s__update_u(").unwrap()..];
    for line in [
        // Capped at 64 planes; each block loads 4 planes more than its chunk.
        "for (ptrdiff_t n = (cells + 64 - 1) / 64; n <= most && n <= cells; ++n) {",
        "const ptrdiff_t time = waves * (planes + 4);",
        "const dim3 block(32, 8, 1);",
        "const dim3 grid((unsigned)((n2 - 1 + 32 - 1) / 32), (unsigned)(((n1 - 1 - 1) + 8 - 1) / 8), (unsigned)(((n0 - 2 - 2) + chunk - 1) / chunk));",
        "p_cuda__s__update_u_scalar_kernel<<<grid, block, 0, stream>>>(n0, n1, n2, out, cur_u, chunk);",
    ] {
        assert!(
            launcher.contains(line),
            "`{line}` missing from:\n{launcher}"
        );
    }
}

#[test]
fn single_pass_3d_kernels_index_with_32_bits_where_the_grid_allows() {
    let st = stencil(
        "\"z\", \"y\", \"x\"",
        "f32",
        "u[-1,0,0] + u[0,0,1] + u[0,1,0]",
    );
    let plan = Plan {
        strategy: Strategy::Stream,
        block: vec![1, 4, 32],
        chunk: 2,
        coarsen: 2,
        vector: 4,
        time_block: 1,
        occupancy: None,
        chosen: false,
    };
    let code = source(&st, &crate::analysis::analyse(&st), &plan, "p", &CUDA);
    let kernels: Vec<&str> = code
        .lines()
        .filter(|l| l.starts_with("static __global__"))
        .collect();
    assert_eq!(kernels.len(), 4, "{code}");
    for (k, name) in [
        "_kernel(",
        "_scalar_kernel(",
        "_i64_kernel(",
        "_scalar_i64_kernel(",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            kernels[k].contains(&format!("update_u{name}")),
            "{}",
            kernels[k]
        );
    }
    // The planes read, z0 - 1 ..= z0 + 1, are on the grid whenever z0 is in
    // the region (its frame is one plane wide): no test before loading.
    assert!(!code.contains(" < n0) {"), "{code}");
    let launcher = &code[code.find("extern \"C\" int p_cuda__s__update_u(").unwrap()..];
    let cells = "n0 * n1 * n2 <= 2147483647";
    let vectors = "n2 % 4 == 0 && (size_t)out % 16 == 0 && (size_t)cur_u % 16 == 0";
    let order = [
        format!("if ({cells} && {vectors}) {{"),
        format!("if ({cells}) {{"),
        format!("if ({vectors}) {{"),
        "p_cuda__s__update_u_scalar_i64_kernel<<<".to_string(),
    ];
    let at: Vec<usize> = order
        .iter()
        .map(|o| {
            launcher
                .find(o.as_str())
                .unwrap_or_else(|| panic!("{o}: {launcher}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{launcher}");
    assert!(
        code.contains("const int s0 = n1 * n2;") && code.contains("const ptrdiff_t s0 = n1 * n2;")
    );
}

/// A 1-D stencil of `expr` over field `u` in `dtype`, fixed boundary.
fn line(dtype: &str, expr: &str) -> (Stencil, Analysis) {
    let st = stencil("\"x\"", dtype, expr);
    let an = crate::analysis::analyse(&st);
    (st, an)
}

/// A 1-D `naive` plan of blocks of 256 threads, `coarsen` cells a thread.
fn row_plan(coarsen: usize) -> Plan {
    Plan {
        strategy: Strategy::Naive,
        block: vec![256],
        chunk: 1,
        coarsen,
        vector: 1,
        time_block: 1,
        occupancy: None,
        chosen: false,
    }
}

/// A 1-D step of several statements in one kernel moves vectors as a
/// single update does: its window holds what the statements and their
/// recomputations read (v's read of u at -1, recomputed, reads v at -2),
/// each cell's locals carry the cell, a held frame asks about the cell's
/// own index, and each field the step updates is stored as vectors.
#[test]
fn one_dimensional_steps_of_several_statements_load_one_window_and_store_each_field_as_vectors() {
    let st = lowered(
        "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"x\"]\n[fields]\n\
         u = { role = \"state\" }\nv = { role = \"state\" }\n\
         [[update]]\ntarget = \"u\"\nexpr = \"0.5 * u[0] + 0.25 * (v[-1] + v[1])\"\n\
         [[update]]\ntarget = \"v\"\nexpr = \"v[0] + u[-1] - u[1]\"\n"
            .into(),
    );
    let an = crate::analysis::analyse(&st);
    let code = source(&st, &an, &row_plan(4), "p", &CUDA);
    for line in [
        "const float2 cur_v__m2 = *(const float2 *)&cur_v[first - 2];",
        "const float2 cur_v__p4 = *(const float2 *)&cur_v[first + 4];",
        "const float new_u__1 = 0.5f * cur_u__0.y + 0.25f * (cur_v__0.x + cur_v__0.z);",
        "(first >= 1 ? 0.5f * cur_u__0.x + 0.25f * (cur_v__m2.y + cur_v__0.y) : cur_u__0.x)",
        "*(float4 *)&out_u[first] = make_float4(new_u__0, new_u__1, new_u__2, new_u__3);",
        "*(float4 *)&out_v[first] = make_float4(new_v__0, new_v__1, new_v__2, new_v__3);",
        "(size_t)out_u | (size_t)out_v) % 16 == 0",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    let code = source(&st, &an, &row_plan(3), "p", &CUDA);
    assert!(
        !code.contains("make_float4") && code.contains("first + k * 256"),
        "{code}"
    );
}

/// A 1-D `naive` thread's window goes in the narrowest aligned loads that
/// hold its reads: an upwind read 3 cells back takes the whole vector before
/// the thread's (its cells -3 to -1 straddle both pairs), a read one cell
/// back in f64 one cell; a `coarsen` of no whole vectors loads cell by cell,
/// a block apart.
#[test]
fn one_dimensional_rows_load_the_narrowest_aligned_vectors_that_hold_their_reads() {
    let (st, an) = line("f32", "u[0] - 0.5*(u[0] - u[-3])");
    let code = source(&st, &an, &row_plan(4), "p", &CUDA);
    for line in [
        "const float4 cur_u__m4 = *(const float4 *)&cur_u[first - 4];",
        "const float4 cur_u__0 = *(const float4 *)&cur_u[first];",
        "const float r0 = cur_u__0.x - 0.5f * (cur_u__0.x - cur_u__m4.y);",
        "*(float4 *)&out[first] = make_float4(r0, r1, r2, r3);",
        "if (first >= 4 && first + 3 < n0 - 3 && ((size_t)cur_u | (size_t)out) % 16 == 0) {",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    let (st, an) = line("f64", "u[-1] + u[1]");
    let code = source(&st, &an, &row_plan(2), "p", &CUDA);
    assert!(
        code.contains("const double cur_u__m1 = cur_u[first - 1];"),
        "{code}"
    );
    assert!(
        code.contains("const double cur_u__p2 = cur_u[first + 2];"),
        "{code}"
    );
    let code = source(&st, &an, &row_plan(3), "p", &CUDA);
    assert!(
        !code.contains("make_double2") && code.contains("first + k * 256"),
        "{code}"
    );
}

/// A 2-D or 3-D `naive` plan of `vector` cells a thread along the
/// contiguous axis.
fn rows_plan(block: &[usize], vector: usize) -> Plan {
    Plan {
        block: block.to_vec(),
        vector,
        ..row_plan(1)
    }
}

/// In 2-D and 3-D a `naive` thread's `vector` cells of the contiguous axis
/// load a window row by row (one per offset along the other axes), each in
/// the narrowest aligned loads that hold its reads, where the rows' reads
/// lie on the grid; the launcher runs that kernel on grids of whole aligned
/// vectors only, a cell a thread on the others.
#[test]
fn rows_of_vectors_in_three_dimensions_load_each_row_of_their_window() {
    let st = lowered(
        "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\n\
         u = { role = \"state\" }\n[[update]]\ntarget = \"u\"\n\
         expr = \"u[0,0,0] + 0.5 * (u[-1,0,0] + u[0,1,-1])\"\n"
            .into(),
    );
    let an = crate::analysis::analyse(&st);
    let code = source(&st, &an, &rows_plan(&[2, 4, 32], 2), "p", &CUDA);
    for line in [
        "const ptrdiff_t first = ((ptrdiff_t)blockIdx.x * 32 + threadIdx.x) * 2;",
        "if (i0 >= n0 - 1 || i1 >= n1 - 1 || first >= n2 - 1)",
        "if (first >= 1 && first + 1 < n2 - 1) {",
        "const double2 cur_u__m1_0_0 = *(const double2 *)&cur_u[c - s0];",
        "const double cur_u__0_p1_m1 = cur_u[c + s1 - 1];",
        "const double cur_u__0_p1_0 = cur_u[c + s1];",
        "const double r1 = cur_u__0_0_0.y + 0.5 * (cur_u__m1_0_0.y + cur_u__0_p1_0);",
        "*(double2 *)&out[c] = make_double2(r0, r1);",
        "if (n2 % 2 == 0 && (size_t)out % 16 == 0 && (size_t)cur_u % 16 == 0) {",
        "p_cuda__s__update_u_scalar_kernel<<<grid, block, 0, stream>>>",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
}

/// A 2-D step of several statements in one kernel, periodic: its window
/// holds every statement's reads; the rows' reads keep off the grid's ends
/// along both axes (so no read wraps), and the cells by the ends, one at a
/// time, wrap.
#[test]
fn periodic_steps_of_rows_of_vectors_read_unwrapped_away_from_the_ends() {
    let st = lowered(
        "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"y\", \"x\"]\n[fields]\n\
         u = { role = \"state\" }\nv = { role = \"state\" }\n\
         [[update]]\ntarget = \"u\"\nexpr = \"0.5 * u[0,0] + 0.25 * v[-2,1]\"\n\
         [[update]]\ntarget = \"v\"\nexpr = \"v[0,0] + u[0,-1]\"\n\
         [boundary]\nkind = \"periodic\"\n"
            .into(),
    );
    let an = crate::analysis::analyse(&st);
    let code = source(&st, &an, &rows_plan(&[8, 32], 4), "p", &CUDA);
    for line in [
        "if (i0 >= 2 && first >= 1 && first + 4 < n1) {",
        "const float cur_v__m2_p4 = cur_v[c - 2 * s0 + 4];",
        "const float new_u__3 = 0.5f * cur_u__0_0.w + 0.25f * cur_v__m2_p4;",
        "const float new_v__0 = cur_v__0_0.x + (0.5f * cur_u__0_m1 + 0.25f * cur_v__m2_0.x);",
        "*(float4 *)&out_v[c] = make_float4(new_v__0, new_v__1, new_v__2, new_v__3);",
        "stencil_mod(i1 - 1, n1)",
        "(size_t)out_u % 16 == 0 && (size_t)out_v % 16 == 0 && (size_t)cur_u % 16 == 0",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
}

/// With `coarsen` and `vector` a 2-D or 3-D `naive` thread computes a block
/// of cells: `coarsen` rows of the slowest axis, each a row of vectors; its
/// window holds every row its rows read, each loaded once for all of them,
/// and the cells by the ends go one at a time, row by row.
#[test]
fn blocks_of_rows_of_vectors_load_each_row_once_for_every_row_of_the_block() {
    let st = lowered(
        "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"y\", \"x\"]\n[fields]\n\
         u = { role = \"state\" }\n[[update]]\ntarget = \"u\"\n\
         expr = \"u[-1,0] + u[1,0] + u[0,-1] + u[0,1]\"\n"
            .into(),
    );
    let an = crate::analysis::analyse(&st);
    let plan = Plan {
        coarsen: 2,
        ..rows_plan(&[8, 32], 4)
    };
    let code = source(&st, &an, &plan, "p", &CUDA);
    for line in [
        "const ptrdiff_t row = 1 + ((ptrdiff_t)blockIdx.y * 8 + threadIdx.y) * 2;",
        "if (row >= n0 - 1 || first >= n1 - 1)",
        "if (row + 1 < n0 - 1 && first >= 1 && first + 3 < n1 - 1) {",
        "const float4 cur_u__p2_0 = *(const float4 *)&cur_u[c + 2 * s0];",
        "const float r1_3 = cur_u__0_0.w + cur_u__p2_0.w + cur_u__p1_0.z + cur_u__p1_p4;",
        "*(float4 *)&out[c + s0] = make_float4(r1_0, r1_1, r1_2, r1_3);",
        "const ptrdiff_t i0 = row + j;",
        "break;",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    assert_eq!(code.matches("cur_u__p1_0 = ").count(), 1, "{code}");
}
