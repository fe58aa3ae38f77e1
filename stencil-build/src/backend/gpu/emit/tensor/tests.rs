use super::*;
use crate::backend::gpu::plan::model::auto_tensor;
use crate::backend::gpu::{CUDA, resolve, source, tests::lowered};
use crate::ir::{GpuTiling, Strategy};

/// A 3-D stencil of `dtype` updating `u` by `expr`, with a velocity grid and a leapfrog's two levels where `leapfrog`.
fn stencil(dtype: &str, expr: &str, leapfrog: bool) -> crate::ir::Stencil {
    let levels = if leapfrog { ", levels = 2" } else { "" };
    lowered(format!(
        "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\n\
         u = {{ role = \"state\"{levels} }}\nvel = {{ role = \"input\" }}\n[[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n"
    ))
}

const STAR4: &str = "u[0,0,0] + 0.1*sum(r, 1, 4, u[-r,0,0] + u[r,0,0] + u[0,-r,0] + u[0,r,0] + u[0,0,-r] + u[0,0,r])";

fn cuda(st: &crate::ir::Stencil) -> String {
    let plan = resolve(&GpuTiling::model(Strategy::Tensor), st, &CUDA).unwrap();
    source(st, &crate::analysis::analyse(st), &plan, "p", &CUDA)
}

#[test]
fn bands_start_every_4_columns_and_the_last_overlaps_the_one_before() {
    assert_eq!(band(4), (vec![0, 4, 8, 12], 0));
    assert_eq!(band(2), (vec![0, 4, 8], 0));
    assert_eq!(band(3), (vec![0, 4, 8, 10], 2));
    assert_eq!(band(1), (vec![0, 4, 6], 2));
    assert_eq!((pitch(40), pitch(34), pitch(32)), (44, 36, 36));
}

#[test]
fn rows_g_plus_8_take_the_band_8_rows_further_through_the_same_coefficients() {
    let (both, wide) = y_steps(4);
    let c = Some;
    assert_eq!(
        both,
        vec![
            (0, c(0), None),
            (4, c(1), None),
            (8, c(2), c(0)),
            (12, c(3), c(1))
        ]
    );
    assert_eq!(wide, vec![(16, None, c(2)), (20, None, c(3))]);
    // Reach 3: the last product of a band overlaps the one before.
    let (both, wide) = y_steps(3);
    assert_eq!(
        both,
        vec![
            (0, c(0), None),
            (4, c(1), None),
            (8, c(2), c(0)),
            (10, c(3), None)
        ]
    );
    assert_eq!(
        wide,
        vec![(12, None, c(1)), (16, None, c(2)), (18, None, c(3))]
    );
}

#[test]
fn a_star_of_radius_4_runs_8_products_a_warp_and_plane_in_pairs_of_cells() {
    let code = cuda(&stencil("f64", STAR4, false));
    assert_eq!(
        code.matches("stencil_mma_rows<H>(sx, ax + ").count(),
        4,
        "{code}"
    );
    // A warp of 8 rows takes 4 products along `y`; one of 16 rows 2 more,
    // its rows g + 8 through the same coefficients 8 rows further.
    let y = code.find("stencil_mma<H>(sy, cy[0], 0.0, ay[0]);").unwrap();
    let wide = "if (H == 2) {\n                    stencil_mma<H>(sy, 0.0, cy[2], ay[704]);\n                    stencil_mma<H>(sy, 0.0, cy[3], ay[880]);\n                }";
    assert!(code[y..].starts_with(&format!(
        "stencil_mma<H>(sy, cy[0], 0.0, ay[0]);\n                stencil_mma<H>(sy, cy[1], 0.0, ay[176]);\n                stencil_mma<H>(sy, cy[2], cy[0], ay[352]);\n                stencil_mma<H>(sy, cy[3], cy[1], ay[528]);\n                {wide}"
    )));
    // 16 x 8 cells a warp where rows are even: the odd instance keeps 8 x 8.
    assert!(code.contains("const bool wide = n2 % 2 == 0;"));
    assert!(code.contains("const int threads = wide ? 256 : 512;"));
    assert!(code.contains(
        "auto *const kernel = !aligned ? (wide ? p_cuda__s__update_u_kernel<2, 1, false> : p_cuda__s__update_u_kernel<1, 1, false>) : wide ? p_cuda__s__update_u_kernel<2, 2, false> : p_cuda__s__update_u_kernel<1, 2, true>;"
    ));
    assert!(
        code.contains(
            "static __global__ void __launch_bounds__(512 / H) p_cuda__s__update_u_kernel("
        )
    );
    assert!(code.contains("const dim3 block(threads);"));
    // 4 planes in flight, the window's 9 and one more: 10 slots of 40 rows of 44 doubles.
    assert!(
        code.contains("/* 10 planes of the 40-by-40 tile of `cur_u` (rows 44 doubles apart). */")
    );
    assert!(code.contains("FuncAttributeMaxDynamicSharedMemorySize, 140800);"));
    // Pairs on aligned grids; on rows of odd length, those that start at an even cell.
    assert!(code.contains("if (V == 2 && ODD && (((odd + r) & 1) || on != on1)) {"));
    assert!(code.contains("if (V == 2 && (!ODD || ch % 2 == 0) && mine1[h]) {"));
    assert!(code.contains("stencil_copies_wait<4>();"));
    // Chunks of at most 256 planes, shortened where waves of blocks end sooner.
    assert!(
        code.contains(
            "for (ptrdiff_t n = (cells + 256 - 1) / 256; n <= most && n <= cells; ++n) {"
        )
    );
    assert!(
        code.contains("const ptrdiff_t time = waves * (planes + 8);"),
        "the window's 8 planes"
    );
    assert!(
        code.contains("kernel<<<grid, block, 140800, stream>>>(n0, n1, n2, out, cur_u, chunk);")
    );
    assert!(code.contains("w0[h][(ph + 8) % 9] = fresh.x;"));
    // The update reads the window along `z`: `u[-4,0,0]` is the oldest plane.
    assert!(code.contains("w0[h][(ph + 0) % 9]"));
    assert!(!code.contains("cells_"), "it reads no other grid");
}

#[test]
fn other_grids_are_read_at_the_lanes_cells_and_odd_reaches_copy_single_cells() {
    let leapfrog = "2*u[0,0,0] - u.prev[0,0,0] + vel[0,0,0]*(u[0,0,-1] + u[0,0,1] + u[0,-1,0] + u[0,1,0] - 4*u[0,0,0])";
    let code = cuda(&stencil("f64", leapfrog, true));
    // Loaded a plane ahead, for the next iteration.
    assert!(
        code.contains(
            "next_cells_prev_u[h] = stencil_load_pair<ODD ? 1 : V>(prev_u + ch + s0, on0, on1);"
        ),
        "{code}"
    );
    assert!(code.contains(
        "next_cells_cur_vel[h] = stencil_load_pair<ODD ? 1 : V>(cur_vel + ch + s0, on0, on1);"
    ));
    assert!(code.contains("cells_cur_vel[h] = next_cells_cur_vel[h];"));
    assert!(code.contains(
        "2.0 * w0[h][0] - cells_prev_u[h].x + cells_cur_vel[h].x * (in0 - 4.0 * w0[h][0])"
    ));
    // Other grids read at the cell: warps of 8 x 8 cells only.
    assert!(code.contains("const int threads = 512; /* 16 warps of 8 x 8 cells */"));
    assert!(!code.contains("update_u_kernel<2") && !code.contains("(sy, 0.0, "));
    // Reach 1: the third product of each axis starts at column 6; its lanes 0 and 1 repeat the second's.
    assert!(code.contains("cx[2] = t < 2 ? 0.0 : p_cuda__s__update_u_cx(6 + t - 1 - g);"));
    // Odd reach and frame: no aligned pairs, so one instance of single cells.
    assert!(code.contains("auto *const kernel = p_cuda__s__update_u_kernel<1, 1, false>;"));
}

#[test]
fn auto_takes_tensor_for_f64_stars_reaching_3_cells_in_plane_on_cuda() {
    assert!(auto_tensor(&stencil("f64", STAR4, false)));
    let acoustic = format!("2*u[0,0,0] - u.prev[0,0,0] + vel[0,0,0]*vel[0,0,0]*({STAR4})");
    assert!(auto_tensor(&stencil("f64", &acoustic, true)));
    assert!(!auto_tensor(&stencil("f32", STAR4, false)), "f32");
    let star1 = "u[0,0,0] + u[0,0,1] + u[0,0,-1] + u[0,1,0] + u[0,-1,0] + u[1,0,0] + u[-1,0,0]";
    assert!(!auto_tensor(&stencil("f64", star1, false)), "reach 1");
    let box1 = "u[0,0,0] + u[0,1,1] + u[0,0,3] + u[0,0,-3]";
    assert!(!auto_tensor(&stencil("f64", box1, false)), "off the axes");
}

#[test]
fn auto_runs_naive_then_stream_on_small_grids_and_tensor_by_name_does_not() {
    let star = stencil("f64", STAR4, false);
    let auto = |st| {
        let plan = resolve(&GpuTiling::model(Strategy::Auto), st, &CUDA).unwrap();
        assert_eq!(plan.strategy, Strategy::Tensor);
        assert!(plan.small_grids());
        source(st, &crate::analysis::analyse(st), &plan, "p", &CUDA)
    };
    let code = auto(&star);
    // After the chunk rule, on the share of the resident blocks' time spent on the region's cells.
    let launcher = &code[code.find("extern \"C\" int p_cuda__s__update_u(").unwrap()..];
    let rule = launcher.find("chunk = (int)planes;").unwrap();
    // `naive`'s kernel first, on grids under 4096 cells per multiprocessor.
    let naive = |launcher: &str, cells: usize| {
        let when = format!("if (n0 * n1 * n2 < (ptrdiff_t){cells} * multiprocessors) {{");
        let when = launcher.find(&when).expect(launcher);
        let kernel = launcher
            .find("p_cuda__s__update_u_naive_kernel<<<")
            .unwrap();
        assert!(when < kernel);
        kernel
    };
    assert!(naive(launcher, 4096) < rule);
    let when = "if (100 * cells * (n1 - 4 - 4) * (n2 - 4 - 4) < 62 * 1024 * resident * waves * (chunk + 8)) {";
    let small = launcher.find(when).expect(launcher);
    assert!(rule < small);
    assert!(launcher.contains("const ptrdiff_t waves = resident > 0 ? (across * ((cells + chunk - 1) / chunk) + resident - 1) / resident : 0;"));
    // Then 16-byte vectors where rows allow and 32-bit indices where the grid does.
    let vectors = launcher
        .find("p_cuda__s__update_u_small_kernel<<<")
        .unwrap();
    assert!(small < vectors);
    assert!(
        vectors
            < launcher
                .find("p_cuda__s__update_u_small_scalar_kernel<<<")
                .unwrap()
    );
    assert!(
        vectors
            < launcher
                .find("p_cuda__s__update_u_small_i64_kernel<<<")
                .unwrap()
    );
    assert!(
        vectors
            < launcher
                .find("kernel<<<grid, block, 140800, stream>>>")
                .unwrap()
    );
    assert!(code.contains("/* The kernel of small grids: `stream`, blocks of 1 x 2 x 64 threads"));
    assert!(code.contains("; small grids run `stream` in 16-byte vectors."));
    // Residency is asked of the runtime through the file's one cached helper.
    assert_eq!(
        code.matches("static cudaError_t stencil_residency(")
            .count(),
        1
    );
    assert!(code.contains("#include <mutex>"));
    assert!(code.contains("const cudaError_t status = stencil_residency((const void *)kernel, threads, 140800, &multiprocessors, &per_multiprocessor);"));
    let naive = resolve(&GpuTiling::model(Strategy::Naive), &star, &CUDA).unwrap();
    let naive = source(&star, &crate::analysis::analyse(&star), &naive, "p", &CUDA);
    assert!(
        !naive.contains("stencil_residency") && !naive.contains("<mutex>"),
        "{naive}"
    );
    let by_name = cuda(&star);
    assert!(
        !by_name.contains("_small") && !by_name.contains("_naive"),
        "{by_name}"
    );
    assert!(!by_name.contains("small grids"));
}
