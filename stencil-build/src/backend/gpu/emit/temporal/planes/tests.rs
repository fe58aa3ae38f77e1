use super::super::tests::{cuda, generate, stencil};
use crate::backend::gpu::{CUDA, HIP, fit, resolve, source};

const J3D7PT: &str =
    "u[-1,0,0] + u[0,-1,0] + u[0,0,-1] + u[0,0,0] + u[0,0,1] + u[0,1,0] + u[1,0,0] + k[0,0,0]";

#[test]
fn levels_read_neighbours_from_rings_and_their_column_from_registers() {
    let st = stencil(
        "\"z\", \"y\", \"x\"",
        J3D7PT,
        "time_block = 3\ncoarsen = 2\nblock = [1, 4, 32]\n",
    );
    let code = cuda(&st).unwrap();
    for line in [
        // 32 x 8 tiles, 3 cells on each side recomputed, levels two planes apart.
        "const int i2 = 1 + (int)blockIdx.x * 26 - 3 + threadIdx.x;",
        "const int i1 = 1 + (int)blockIdx.y * 2 - 3 + threadIdx.y * 2;",
        "const int q = p - 2 * s;",
        // The same kernel with 64-bit indices, for grids of more than 2^30 cells.
        "const ptrdiff_t q = p - 2 * s;",
        "if (n0 * n1 * n2 <= 1073741824) {",
        "/* The same with 64-bit indices, for grids of more than 2^30 cells. */",
        // A star reads in-plane neighbours in plane q alone: rings of 2 planes.
        "float (*const ring)[2][10][34] = (float (*)[2][10][34])shared;",
        "const unsigned at0 = (slot + 10 - 2 * s) % 2; /* plane q */",
        // Rows above and below in the thread's own column come from its window where it holds them.
        // (An input grid's reads come from registers, loaded an iteration ahead: the update is selected.)
        "const float u = win[s - 1][0][j] + (j >= 1 ? win[s - 1][1][j - 1] : ring[s - 1][at0][ty * 2 + j][tx + 1]) \
         + ring[s - 1][at0][ty * 2 + j + 1][tx] + win[s - 1][1][j] + ring[s - 1][at0][ty * 2 + j + 1][tx + 2] \
         + (j < 1 ? win[s - 1][1][j + 1] : ring[s - 1][at0][ty * 2 + j + 2][tx + 1]) + win[s - 1][2][j] + in0[s - 1][j];",
        "const float v = step && in_y[j] && in_x ? u : win[s - 1][1][j];",
        "float in_ahead0[3][2]; /* cur_k */",
        "const int q = p + 1 - 2 * s;",
        "in_ahead0[s - 1][j] = on && in_y[j] && in_x ? cur_k[c] : 0;",
        "in0[s][j] = in_ahead0[s][j];",
        // Each level publishes plane q - 1, which the level above reads first in the next iteration.
        "/* Level s's plane q - 1 (window plane 1) for the level above, whose next iteration reads it. */",
        "ring[s][(slot + 9 - 2 * s) % 2][ty * 2 + j + 1][tx + 1] = win[s][1][j];",
        "ring[0][(slot + 9) % 2][ty * 2 + j + 1][tx + 1] = win[0][1][j];",
        // The rings are addressed by thread coordinates the compiler cannot merge with the grid's indices.
        "const unsigned tx = stencil_thread_x(), ty = stencil_thread_y();",
        "asm volatile(\"mov.u32 %0, %%tid.x;\" : \"=r\"(v));",
        // A window of 3 planes: the loop is unrolled by 3, and the 32-bit kernel keeps 768 threads resident.
        "#pragma unroll 3\n    for (int p = z0 - 3; p < z1 + 6; ++p) {",
        "static __global__ void __launch_bounds__(128, 6) p_cuda__s__update_u_kernel(",
        "static __global__ void __launch_bounds__(128) p_cuda__s__update_u_i64_kernel(",
        "const dim3 block(32, 4);",
        "<<<grid, block, 8160, stream>>>",
    ] {
        assert!(code.contains(line), "{line}: {code}");
    }
    assert_eq!(
        code.matches("__syncthreads();").count(),
        4,
        "one barrier after zeroing the rings, one per plane, in each kernel"
    );
    assert!(
        !code.contains("FuncSetAttribute"),
        "within the default: {code}"
    );
}

#[test]
fn small_grids_split_the_planes_into_as_many_chunks_as_blocks_stay_resident() {
    let st = stencil("\"z\", \"y\", \"x\"", J3D7PT, "time_block = 2\n");
    let code = cuda(&st).unwrap();
    for line in [
        // The 32-bit kernel marches a chunk of 128 planes or the chunk its launcher
        // passes (unbounded: 2 steps of 8 rows hold 48 cells of windows and 32 of `k`).
        "template <int CHUNK>\nstatic __global__ void __launch_bounds__(256) p_cuda__s__update_u_kernel(",
        "int levels, int chunk)",
        "const int span = CHUNK > 0 ? CHUNK : chunk;",
        "const int z0 = 1 + (int)blockIdx.z * span;",
        "const int z1 = z0 + span < n0 - 1 ? z0 + span : n0 - 1;",
        // The launcher asks the runtime how many blocks of the second stay resident...
        "const cudaError_t status = stencil_residency((const void *)p_cuda__s__update_u_kernel<0>, 256, 35904, &multiprocessors, &per_multiprocessor);",
        "const ptrdiff_t cells = (n0 - 1 - 1), across = (((n2 - 1 - 1) + 60 - 1) / 60) * (((n1 - 1 - 1) + 28 - 1) / 28);",
        "const ptrdiff_t parts = across > 0 ? (ptrdiff_t)multiprocessors * per_multiprocessor / across : 0;",
        // ...and shortens the chunks only where chunks of 128 leave some without a block.
        "const int chunk = cells > 0 && parts > (cells + 128 - 1) / 128 ? (int)((cells + parts - 1) / parts) : 128;",
        "(unsigned)(((n0 - 1 - 1) + chunk - 1) / chunk));",
        "auto *const kernel = chunk == 128 ? p_cuda__s__update_u_kernel<128> : p_cuda__s__update_u_kernel<0>;",
        "kernel<<<grid, block, 35904, stream>>>(n0, n1, n2, out, cur_u, cur_k, levels, chunk);",
        // The 64-bit twin, for grids too large for a small chunk, keeps its constant one.
        "const ptrdiff_t z0 = 1 + (ptrdiff_t)blockIdx.z * 128;",
        "p_cuda__s__update_u_i64_kernel<<<grid, block, 35904, stream>>>(n0, n1, n2, out, cur_u, cur_k, levels);",
    ] {
        assert!(code.contains(line), "{line}: {code}");
    }
    // The same in HIP.
    let hip = generate(&st, &crate::backend::gpu::HIP).unwrap();
    assert!(
        hip.contains("static hipError_t stencil_residency(const void *kernel, const int threads, const size_t bytes, int *multiprocessors, int *per_multiprocessor)"),
        "{hip}"
    );
}

#[test]
fn updates_without_inputs_select_and_only_cuda_f32_windows_are_bounded() {
    let star = "u[-1,0,0] + u[0,-1,0] + u[0,0,-1] + u[0,0,0] + u[0,0,1] + u[0,1,0] + u[1,0,0]";
    let tiling = "time_block = 3\ncoarsen = 4\nblock = [1, 8, 64]\n";
    let code = cuda(&stencil("\"z\", \"y\", \"x\"", star, tiling)).unwrap();
    for line in [
        "const float u = win[s - 1][0][j] + ",
        "const float v = step && in_y[j] && in_x ? u : win[s - 1][1][j];",
        "static __global__ void __launch_bounds__(512, 2) p_cuda__s__update_u_kernel(",
    ] {
        assert!(code.contains(line), "{line}: {code}");
    }
    // f64: no second bound (it would spill); HIP: its second bound means something else.
    let mut f64 = stencil("\"z\", \"y\", \"x\"", star, tiling);
    f64.dtype = crate::ir::Dtype::F64;
    let code = cuda(&f64).unwrap();
    assert!(
        code.contains("__launch_bounds__(512) p_cuda__s__update_u_kernel("),
        "{code}"
    );
    let st = stencil("\"z\", \"y\", \"x\"", star, tiling);
    let plan = resolve(&st.tiling.cuda, &st, &HIP)
        .and_then(|p| fit(p, false, &st, &HIP))
        .unwrap();
    let hip = source(&st, &crate::analysis::analyse(&st), &plan, "p", &HIP);
    assert!(hip.contains("__launch_bounds__(512) "), "{hip}");
    assert!(!hip.contains("__launch_bounds__(512, 2)"), "{hip}");
    // 8 rows over 4 steps: windows too large to bound.
    let big = stencil(
        "\"z\", \"y\", \"x\"",
        star,
        "time_block = 4\ncoarsen = 8\nblock = [1, 4, 32]\n",
    );
    assert!(
        cuda(&big)
            .unwrap()
            .contains("__launch_bounds__(128) p_cuda__s__update_u_kernel(")
    );
    let r2 = stencil(
        "\"z\", \"y\", \"x\"",
        "u[-2,0,0] + u[0,-1,0] + u[0,0,0] + u[2,0,0]",
        "time_block = 2\n",
    );
    // Radius 2 along `z`: unrolled by 5 in f32, not in f64 (where that
    // measured slower); a star of radius 2 fuses in 64 x 32 tiles.
    let code = cuda(&r2).unwrap();
    assert!(code.contains("#pragma unroll 5"), "{code}");
    assert!(
        code.contains("__launch_bounds__(512, 2) p_cuda__s__update_u_kernel("),
        "{code}"
    );
    // `persistent`, or windows of more than 48 registers: windows of 5 planes are not unrolled.
    let mut persistent = r2.clone();
    persistent.tiling.cuda.strategy = crate::ir::Strategy::Persistent;
    assert!(!cuda(&persistent).unwrap().contains("#pragma unroll 5"));
    let deep = stencil(
        "\"z\", \"y\", \"x\"",
        "u[-2,0,0] + u[0,-1,0] + u[0,0,0] + u[2,0,0]",
        "time_block = 3\n",
    );
    assert!(!cuda(&deep).unwrap().contains("#pragma unroll 5"));
    let mut r2 = r2;
    r2.dtype = crate::ir::Dtype::F64;
    let code = cuda(&r2).unwrap();
    assert!(!code.contains("#pragma unroll 5"), "{code}");
    assert!(code.contains("win[s][3][j] = win[s][4][j];"), "{code}");
}

#[test]
fn box_stencils_ring_the_planes_they_read_and_big_rings_are_asked_for() {
    let box3 = "sum(a, -1, 1, sum(b, -1, 1, sum(c, -1, 1, u[a,b,c])))";
    let st = stencil(
        "\"z\", \"y\", \"x\"",
        box3,
        "time_block = 4\ncoarsen = 8\nblock = [1, 4, 64]\nvector = 1\n",
    );
    let code = cuda(&st).unwrap();
    for line in [
        "float (*const ring)[4][34][66] = (float (*)[4][34][66])shared;",
        "const unsigned at_1 = (slot + 11 - 2 * s) % 4; /* plane q - 1 */",
        "const unsigned at1 = (slot + 13 - 2 * s) % 4; /* plane q + 1 */",
        // Both instances of the 32-bit kernel ask for their rings.
        "allowed = cudaFuncSetAttribute((const void *)p_cuda__s__update_u_kernel<128>, cudaFuncAttributeMaxDynamicSharedMemorySize, 143616);",
        "allowed = cudaFuncSetAttribute((const void *)p_cuda__s__update_u_kernel<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, 143616);",
        "allowed = cudaFuncSetAttribute((const void *)p_cuda__s__update_u_i64_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 143616);",
    ] {
        assert!(code.contains(line), "{line}: {code}");
    }
    let err = resolve(&st.tiling.cuda, &st, &HIP)
        .and_then(|p| fit(p, true, &st, &HIP))
        .unwrap_err();
    assert!(
        err.contains(
            "141 KiB of planes in shared memory per block for `s`, more than the 64 KiB HIP allows"
        ),
        "{err}"
    );
}

#[test]
fn boxes_and_f64_stars_of_radius_1_clamp_their_loads_other_stars_take_a_predicate() {
    let box3 = "sum(a, -1, 1, sum(b, -1, 1, sum(c, -1, 1, u[a,b,c])))";
    let star2 = "u[-2,0,0] + u[0,-2,0] + u[0,0,-2] + u[0,0,0] + u[0,0,2] + u[0,2,0] + u[2,0,0]";
    let clamped = [
        "const int x = i2 < 0 ? 0 : i2 < n2 ? i2 : n2 - 1; /* the column, clamped to the grid */",
        "in_rows |= (unsigned)(in_x && c >= 1 && c < n1 - 1) << j;",
        "row_at[j] = (c < 0 ? 0 : c < n1 ? c : n1 - 1) * s1 + x;",
        "const int plane_at = (z < 0 ? 0 : z < n0 ? z : n0 - 1) * s0;",
        "ahead[j] = cur_u[plane_at + row_at[j]];",
        "if (own_rows >> j & 1u) {",
        "const float v = step && (in_rows >> j & 1u) ? u : win[s - 1][1][j];",
    ];
    let predicated = [
        "grid_y[j] = c >= 0 && c < n1;",
        "ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;",
        "if (own_y[j] && own_x) {",
    ];
    let mut f64_star = stencil("\"z\", \"y\", \"x\"", J3D7PT, "");
    f64_star.dtype = crate::ir::Dtype::F64;
    let mut f64_star2 = stencil("\"z\", \"y\", \"x\"", star2, "");
    f64_star2.dtype = crate::ir::Dtype::F64;
    // `persistent`: boxes alone.
    let mut persistent_box = stencil("\"z\", \"y\", \"x\"", box3, "");
    persistent_box.tiling.cuda.strategy = crate::ir::Strategy::Persistent;
    let mut persistent_f64_star = f64_star.clone();
    persistent_f64_star.tiling.cuda.strategy = crate::ir::Strategy::Persistent;
    for (st, clamps) in [
        (stencil("\"z\", \"y\", \"x\"", box3, "vector = 1\n"), true),
        (f64_star, true),
        (persistent_box, true),
        (persistent_f64_star, false),
        (stencil("\"z\", \"y\", \"x\"", J3D7PT, ""), false),
        (stencil("\"z\", \"y\", \"x\"", star2, ""), false),
        (f64_star2, false),
    ] {
        let code = cuda(&st).unwrap().replace("double", "float");
        let (expected, absent) = if clamps {
            (&clamped[..], "grid_y")
        } else {
            (&predicated[..], "row_at")
        };
        for line in expected {
            let line = line.replace(
                "c >= 1 && c < n1 - 1",
                &format!("c >= {0} && c < n1 - {0}", st_radius(&st)),
            );
            assert!(code.contains(&line), "{line}: {code}");
        }
        assert!(!code.contains(absent), "{code}");
    }
}

/// The radius of `st` along its middle axis.
fn st_radius(st: &crate::ir::Stencil) -> usize {
    super::super::radius(st)[1]
}

#[test]
fn a_time_block_from_the_spec_widens_the_default_tiles() {
    let st = stencil("\"z\", \"y\", \"x\"", J3D7PT, "time_block = 10\n");
    let plan = resolve(&st.tiling.cuda, &st, &CUDA).unwrap();
    assert_eq!(
        (plan.block, plan.coarsen, plan.time_block),
        (vec![1, 4, 64], 10, 10),
        "64 x 40 cells, storing 44 x 20"
    );
    assert!(cuda(&st).is_ok());
    let st = stencil(
        "\"z\", \"y\", \"x\"",
        J3D7PT,
        "time_block = 40\ncoarsen = 4\n",
    );
    let err = cuda(&st).unwrap_err();
    assert!(
        err.contains(
            "widens the default tiles of `s` to blocks of [1, 8, 160] threads, more than the 1024"
        ),
        "{err}"
    );
}
