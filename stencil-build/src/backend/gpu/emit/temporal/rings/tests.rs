use super::super::tests::{cuda, generate, leapfrog, stencil};
use crate::backend::gpu::{CUDA, HIP, resolve};
use crate::ir::{GpuTiling, Stencil, Strategy};

const AXES: &str = "\"z\", \"y\", \"x\"";

/// A star of radius 4 (acoustic25's reads), added to a leapfrog's `2 u - u.prev`.
const STAR4: &str = "0.01*(sum(r, 1, 4, u[-r,0,0] + u[r,0,0] + u[0,-r,0] + u[0,r,0] + u[0,0,-r] + u[0,0,r]) - 24*u[0,0,0])";

fn wave(dtype: &str, tiling: &str) -> Stencil {
    leapfrog(AXES, dtype, STAR4, tiling)
}

#[test]
fn levels_copy_stage_and_store_rows_from_shared_rings() {
    let code = cuda(&wave("f32", "vector = 4\ntime_block = 2\n")).unwrap();
    for line in [
        "cp.async.ca.shared.global [%0], [%1], 8, %2;",
        "static __global__ void __launch_bounds__(512, 1) p_cuda__s__update_u_rings_kernel(",
        // Level 1 reads the previous level, level 2 the launch's current one, at the cell.
        "const float *const g0 = (t.first ? prev_u : cur_u) + at + t.cell;",
        "*(float2 *)&(out_prev + q1 * s0)[t.fdst] = *(const float2 *)&stage[864 + t.fsrc];",
        "const float4 y_p4 = *(const float4 *)&at[(rc + 4) * 52 + cb + 4];",
        "p_cuda__s__update_u_plane<8>(t, uring, sring, stage, p0 + 8,",
        // Pairs: a warp takes 4 column groups of 8 rows; quads: a lane
        // a row, the quarters' groups 3 apart.
        "t.rs = quads ? lane : 8 * (k / 10) + lane % 8;",
        "t.cs = 4 + 4 * (quads ? (u / 24 + 3 * (u % 24 / 8)) % 8 : k % 8);",
        // Rows of 8-byte pairs run the ring kernel; on the other grids
        // the session runs one step a launch, asking first.
        "extern \"C\" int p_cuda__s__update_u_fuses(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, float *out, float *out_prev, const float *prev_u, const float *cur_u)",
        // ... on large planes: single steps ran faster on small ones.
        "    const bool vectors = n0 * n1 * n2 <= 2147483647 && n2 % 4 == 0 && (size_t)out_prev % 16 == 0 && (size_t)prev_u % 16 == 0 && (size_t)cur_u % 16 == 0;",
        "    return n0 * n1 * n2 <= 1073741824 && n2 % 2 == 0 && (size_t)out % 8 == 0 && (size_t)out_prev % 8 == 0 && (size_t)prev_u % 8 == 0 && (size_t)cur_u % 8 == 0 && (ptrdiff_t)n1 * n2 > (vectors ? 458752 : 32768);",
        // Its single steps move 16-byte vectors, marching 64 planes or,
        // on small planes, 4.
        "/* The kernel of launches of one step: `stream`, blocks of 1 x 8 x 32 threads, marching 64 cells along `z` per block, 1 per iteration, 4 along `x` per thread; planes of fewer than 160000 cells run blocks of 1 x 2 x 64 threads marching 4 planes. */",
        "/* The kernel of one step on small planes: `stream`, blocks of 1 x 2 x 64 threads, marching 4 cells along `z` per block, 1 per iteration, 4 along `x` per thread. */",
        // Rows of 8-byte pairs that are not quads: their own kernel.
        "p_cuda__s__update_u_step_pairs_kernel<<<grid, block, 0, stream>>>(n0, n1, n2, out_prev, prev_u, cur_u);",
        // So does the kernel of small planes: into `out_prev` too.
        "p_cuda__s__update_u_step_small_kernel<<<grid, block, 0, stream>>>(n0, n1, n2, out_prev, prev_u, cur_u);",
        "n2 % 2 == 0 && (size_t)out % 8 == 0 && (size_t)out_prev % 8 == 0 && (size_t)prev_u % 8 == 0 && (size_t)cur_u % 8 == 0) {",
        "    return (int)cudaErrorInvalidValue;",
        // Rows of 16-byte quads load a lane's cells of the other grids at once.
        "const bool quads = n2 % 4 == 0 && (size_t)prev_u % 16 == 0 && (size_t)cur_u % 16 == 0;",
        "const float4 v0 = *(const float4 *)g0;",
        "const float2 v0 = *(const float2 *)(g0 + 2 * h);",
        // One step: the single-step kernel, into `out_prev`.
        "p_cuda__s__update_u_step_kernel<<<grid, block, 0, stream>>>(n0, n1, n2, out_prev, prev_u, cur_u);",
    ] {
        assert!(code.contains(line), "{line}: {code}");
    }
    // A leapfrog's ring kernel has no scalar twin.
    assert!(!code.contains("p_cuda__s__update_u_kernel"), "{code}");
}

#[test]
fn a_stencil_of_input_grids_runs_one_step_a_launch_off_its_rows() {
    let expr = format!("u[0,0,0] + k[0,0,0]*{STAR4}");
    let st = stencil(AXES, &expr, "vector = 4\ntime_block = 2\n");
    let code = cuda(&st).unwrap();
    for line in [
        "p_cuda__s__update_u_rings_kernel<<<",
        // Rows of 8-byte pairs run the ring kernel, the others one step a launch.
        "    return n0 * n1 * n2 <= 1073741824 && n2 % 2 == 0 && (size_t)out % 8 == 0 && (size_t)cur_u % 8 == 0 && (size_t)cur_k % 8 == 0 && (ptrdiff_t)n1 * n2 > (vectors ? 458752 : 32768);",
        "if (n0 * n1 * n2 <= 1073741824 && n2 % 2 == 0 && (size_t)out % 8 == 0 && (size_t)cur_u % 8 == 0 && (size_t)cur_k % 8 == 0) {",
        "p_cuda__s__update_u_step_kernel<<<grid, block, 0, stream>>>(n0, n1, n2, out, cur_u, cur_k);",
    ] {
        assert!(code.contains(line), "{line}: {code}");
    }
    // No scalar twin.
    assert!(!code.contains("p_cuda__s__update_u_kernel"), "{code}");
}

#[test]
fn the_window_along_the_slowest_axis_follows_its_own_radius() {
    let expr = "0.01*(sum(r, 1, 3, u[-r,0,0] + u[r,0,0]) + sum(r, 1, 4, u[0,-r,0] + u[0,r,0] + u[0,0,-r] + u[0,0,r]))";
    let code = cuda(&leapfrog(AXES, "f32", expr, "vector = 4\ntime_block = 2\n")).unwrap();
    for line in [
        // 7 planes a window and ring: level 1 at p - 3, level 2 at p - 7.
        "t.w[(M + 6) % 7][0] = c.x;",
        "const int q = p - (t.first ? 3 : 7);",
        "p_cuda__s__update_u_plane<6>(t, uring, sring, stage, p0 + 6,",
    ] {
        assert!(code.contains(line), "{line}: {code}");
    }
    assert!(!code.contains("_plane<7>"), "{code}");
}

#[test]
fn stencils_dialects_and_tilings_that_do_not_suit_are_refused() {
    let refused = |st: &Stencil, d, want: &str| {
        let err = generate(st, d).unwrap_err();
        assert!(err.contains(want), "{want}: {err}");
    };
    let tiling = "vector = 4\ntime_block = 2\n";
    refused(&wave("f32", tiling), &HIP, "CUDA's `cp.async`");
    refused(
        &wave("f64", "vector = 2\ntime_block = 2\n"),
        &CUDA,
        "it takes f32 cells",
    );
    refused(
        &wave("f32", "vector = 4\ntime_block = 3\n"),
        &CUDA,
        "it fuses 2 steps, not 3",
    );
    let star2 = "u[0,0,0] + k[0,0,0] * (u[0,0,-2] + u[0,0,2] + u[0,-2,0] + u[0,2,0] + u[-2,0,0] + u[2,0,0])";
    refused(
        &stencil(AXES, star2, tiling),
        &CUDA,
        "of 4 or 8 along `y` and `x`, not [2, 2, 2]",
    );
    let off_cell = "u[0,0,0] + k[0,0,1] * (u[0,0,-4] + u[0,0,4] + u[0,-4,0] + u[0,4,0] + u[-4,0,0] + u[4,0,0])";
    refused(
        &stencil(AXES, off_cell, tiling),
        &CUDA,
        "`cur_k` is read at [0, 0, 1]",
    );
    let star4 = "u[0,0,0] + k[0,0,0] * (u[0,0,-4] + u[0,0,4] + u[0,-4,0] + u[0,4,0] + u[-4,0,0] + u[4,0,0])";
    assert!(cuda(&stencil(AXES, star4, tiling)).is_ok());
}

#[test]
fn auto_takes_the_rings_for_f32_leapfrogs_of_radius_4_on_cuda() {
    let auto = GpuTiling::model(Strategy::Auto);
    let plan = |st: &Stencil, d| {
        let p = resolve(&auto, st, d).unwrap();
        (p.strategy, p.vector, p.time_block, p.block)
    };
    let f32 = wave("f32", "");
    assert_eq!(
        plan(&f32, &CUDA),
        (Strategy::Temporal, 4, 2, vec![1, 16, 32])
    );
    assert_ne!(
        plan(&f32, &HIP).0,
        Strategy::Temporal,
        "HIP has no `cp.async`"
    );
    assert_ne!(plan(&wave("f64", ""), &CUDA).0, Strategy::Temporal);
}
