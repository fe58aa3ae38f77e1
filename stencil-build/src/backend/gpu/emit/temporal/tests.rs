use crate::backend::gpu::{CUDA, HIP, fit, resolve, source};
use crate::ir::{Stencil, Strategy};

/// A `temporal` stencil of `axes` updating `u` with `expr`, with `tiling` added to `[tiling.cuda]`.
pub(in crate::backend::gpu) fn stencil(axes: &str, expr: &str, tiling: &str) -> Stencil {
    let text = format!(
        "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [{axes}]\n[fields]\nu = {{ role = \"state\" }}\n\
         k = {{ role = \"input\" }}\n[[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n\
         [tiling.cuda]\nstrategy = \"temporal\"\n{tiling}"
    );
    crate::backend::gpu::tests::lowered(text)
}

/// A `temporal` leapfrog of `axes` in `dtype`: `u` keeps two time levels, `expr` adds to `2*u - u.prev`.
pub(in crate::backend::gpu) fn leapfrog(
    axes: &str,
    dtype: &str,
    expr: &str,
    tiling: &str,
) -> Stencil {
    let text = format!(
        "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [{axes}]\n[fields]\nu = {{ role = \"state\", levels = 2 }}\n\
         [[update]]\ntarget = \"u\"\nexpr = \"2*u{zero} - u.prev{zero} + {expr}\"\n\
         [tiling.cuda]\nstrategy = \"temporal\"\n{tiling}",
        zero = if axes.matches(',').count() == 1 {
            "[0,0]"
        } else {
            "[0,0,0]"
        }
    );
    crate::backend::gpu::tests::lowered(text)
}

#[test]
fn a_leapfrog_steps_its_last_levels_and_writes_the_last_two() {
    let expr2 = "0.1*(u[-1,0] + u[1,0] + u[0,-1] + u[0,1])";
    // f32: chained levels read level s - 2's row q from the oldest row of its window.
    let code = cuda(&leapfrog("\"y\", \"x\"", "f32", expr2, "time_block = 3\n")).unwrap();
    for line in [
        "float *__restrict__ out, float *__restrict__ out_prev, const float *__restrict__ prev_u, const float *__restrict__ cur_u",
        // The first levels keep their value when the launch runs fewer steps than the time block.
        "const bool step = !EDGE || (s > 3 - levels && q >= 1 && q < n0 - 1);",
        // The first level that steps reads the launch's previous level, the others level s - 2.
        "v = 2.0f * nb1[k + 1] - (s == 4 - levels ? prev_u[c] : win[s >= 2 ? s - 2 : 0][0][k])",
        "out[q * s0 + i1 + k] = next[k];",
        "out_prev[q * s0 + i1 + k] = win[s - 1][1][k];",
        "kernel<<<grid, block, 0, stream>>>(n0, n1, out, out_prev, prev_u, cur_u, levels, chunk);",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    assert!(!code.contains("old["), "{code}");
    // f64: skewed levels read it from the row that last left its window.
    let code = cuda(&leapfrog("\"y\", \"x\"", "f64", expr2, "time_block = 3\n")).unwrap();
    for line in [
        "double old[3][2] = {};",
        "old[s][k] = win[s][0][k];",
        "old[0][k] = win[0][0][k];",
        "(s == 4 - levels ? prev_u[c] : old[s >= 2 ? s - 2 : 0][k])",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    // 3-D: the same, from the thread's rows.
    let expr3 = "0.1*(u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,1])";
    let code = cuda(&leapfrog(
        "\"z\", \"y\", \"x\"",
        "f32",
        expr3,
        "time_block = 2\n",
    ))
    .unwrap();
    for line in [
        "const bool step = s > 2 - levels && q >= 1 && q < n0 - 1;",
        "float old[2][8] = {};",
        // The previous level is loaded an iteration ahead, for the first level that steps.
        "(s == 3 - levels ? prev_in[j] : old[s >= 2 ? s - 2 : 0][j])",
        "const int q = p + 1 - 2 * (3 - levels);",
        "prev_ahead[j] = on && in_y[j] && in_x ? prev_u[c] : 0;",
        "old[0][j] = win[0][0][j];",
        "out_prev[q * s0 + (i1 + j) * s1 + i2] = win[s - 1][1][j];",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    // One step a launch: the previous level always comes from the launch's grid.
    let code = cuda(&leapfrog(
        "\"z\", \"y\", \"x\"",
        "f32",
        expr3,
        "time_block = 1\n",
    ))
    .unwrap();
    assert!(
        code.contains("const float u = 2.0f * win[s - 1][1][j] - prev_in[j] + "),
        "{code}"
    );
    assert!(!code.contains("old["), "{code}");
}

#[test]
fn two_d_tiles_unroll_their_rows_by_the_window() {
    let unroll = |st: &Stencil| {
        let code = cuda(st).unwrap();
        let lines: Vec<&str> = code.lines().map(str::trim).collect();
        let at = lines.iter().position(|l| l.starts_with("for (I p = "));
        let before = lines[at.unwrap_or_else(|| panic!("{code}")) - 1];
        before.strip_prefix("#pragma unroll ").map(str::to_string)
    };
    let star = |r: i64| {
        let mut terms = vec!["u[0,0]".to_string()];
        for d in (-r..=r).filter(|&d| d != 0) {
            terms.extend([format!("u[{d},0]"), format!("u[0,{d}]")]);
        }
        terms.join(" + ")
    };
    assert_eq!(
        unroll(&stencil("\"y\", \"x\"", &star(1), "")).as_deref(),
        Some("3")
    );
    assert_eq!(
        unroll(&stencil("\"y\", \"x\"", &star(2), "")).as_deref(),
        Some("5")
    );
    // A box of radius 2 reads 25 cells: its loop is not unrolled.
    let cells: Vec<String> = (-2..=2)
        .flat_map(|a| (-2..=2).map(move |b| format!("u[{a},{b}]")))
        .collect();
    assert_eq!(
        unroll(&stencil("\"y\", \"x\"", &cells.join(" + "), "")),
        None
    );
    // Leapfrogs: only the copy without checks (f32); f64 has none.
    let expr = "0.1*(u[-1,0] + u[1,0] + u[0,-1] + u[0,1])";
    for (dtype, expected) in [("f32", Some("(EDGE ? 1 : 3)")), ("f64", None)] {
        let st = leapfrog("\"y\", \"x\"", dtype, expr, "");
        assert_eq!(unroll(&st).as_deref(), expected, "{dtype}");
    }
    // Not measured in `persistent`; not in HIP, whose compiler leaves the loop.
    let mut st = stencil("\"y\", \"x\"", &star(1), "");
    let hip = generate(&st, &HIP).unwrap();
    assert!(!hip.contains("#pragma unroll 3\n    for (I p"), "{hip}");
    assert!(hip.contains("    for (I p = "), "{hip}");
    st.tiling.cuda.strategy = Strategy::Persistent;
    assert_eq!(unroll(&st), None);
}

#[test]
fn f64_tiles_read_literals_passed_by_value_and_select_their_levels() {
    let expr = "(5.1*u[-1,0] + 12.1*u[0,-1] + 15.0*u[0,0] + 12.2*u[0,1] + 5.2*u[1,0]) / 118";
    let mut st = stencil("\"y\", \"x\"", expr, "");
    st.dtype = crate::ir::Dtype::F64;
    let code = cuda(&st).unwrap();
    for line in [
        "struct p_cuda__s__update_u_literals {\n    double v[6];\n};",
        "const double (&lit)[6] = lits.v;",
        // The kernels take the table last but the launch's own arguments,
        // the tile function after the grids, the launcher makes it.
        "double *__restrict__ out, const double *__restrict__ cur_u, const p_cuda__s__update_u_literals lits, int levels, int chunk)",
        "const double *__restrict__ cur_u, const p_cuda__s__update_u_literals lits, int levels)",
        "p_cuda__s__update_u_tile<int>(n0, n1, out, cur_u, lits, levels, tile, z0, z1);",
        "const p_cuda__s__update_u_literals lits = {{0.00847457627118644, 5.1, 12.1, 15.0, 12.2, 5.2}};",
        "kernel<<<grid, block, 0, stream>>>(n0, n1, out, cur_u, lits, levels, chunk);",
        "p_cuda__s__update_u_i64_kernel<<<grid, block, 0, stream>>>(n0, n1, out, cur_u, lits, levels);",
        "const double u = (lit[1] * nb0[k + 1] + lit[2] * nb1[k] + lit[3] * nb1[k + 1] + lit[4] * nb1[k + 2] + lit[5] * nb2[k + 1]) * lit[0];",
        "const double v = step && in_x[k] ? u : win[s - 1][1][k];",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    assert!(code.contains("#pragma unroll 3"), "{code}");
    // `persistent` reads the table and selects too, but keeps its loop over the rows.
    let mut persistent = st.clone();
    persistent.tiling.cuda.strategy = Strategy::Persistent;
    let code = cuda(&persistent).unwrap();
    assert!(
        code.contains("const double v = step && in_x[k] ? u : win[s - 1][1][k];")
        && code.contains("const double (&lit)[6] = lits.v;")
        && code.contains("void *arguments[] = {(void *)&n0_32, (void *)&n1_32, (void *)&out, (void *)&cur_u, (void *)&lits, (void *)&steps};")
        && !code.contains("#pragma unroll 3"),
        "{code}"
    );
    // No `__constant__` variable: one costs every launch of the file's kernels.
    assert!(!code.contains("static __constant__"), "{code}");
    // HIP keeps its literals and branches; f32 (immediate operands, a copy without checks) too.
    let hip = generate(&st, &HIP).unwrap();
    assert!(
        !hip.contains("lit[") && hip.contains("if (step && in_x[k]) {"),
        "{hip}"
    );
    st.dtype = crate::ir::Dtype::F32;
    let code = cuda(&st).unwrap();
    assert!(
        !code.contains("lit[") && code.contains("if (step && in_x[k]) {"),
        "{code}"
    );
    // An update without literals has no table (a C array has at least one entry).
    let mut bare = stencil("\"y\", \"x\"", "u[-1,0] + u[0,1] - u[0,0]", "");
    bare.dtype = crate::ir::Dtype::F64;
    let code = cuda(&bare).unwrap();
    assert!(
        !code.contains("_literals") && !code.contains("lit["),
        "{code}"
    );
    assert!(
        code.contains("const double v = step && in_x[k] ? u : "),
        "{code}"
    );
    // A leapfrog reads its previous level from global memory: it branches.
    let wave = leapfrog("\"y\", \"x\"", "f64", "0.1*(u[-1,0] + u[1,0])", "");
    let code = cuda(&wave).unwrap();
    assert!(
        code.contains("lit[") && code.contains("if (step && in_x[k]) {"),
        "{code}"
    );
}

pub(in crate::backend::gpu) fn cuda(st: &Stencil) -> Result<String, String> {
    generate(st, &CUDA)
}

/// `st`'s `d` source with the `[tiling.cuda]` plan, symbols prefixed `p`.
pub(in crate::backend::gpu) fn generate(
    st: &Stencil,
    d: &super::super::Dialect,
) -> Result<String, String> {
    let plan = resolve(&st.tiling.cuda, st, d).and_then(|p| fit(p, false, st, d))?;
    Ok(source(st, &crate::analysis::analyse(st), &plan, "p", d))
}

#[test]
fn launches_of_one_step_run_the_single_step_kernel() {
    let mut st = stencil(
        "\"z\", \"y\", \"x\"",
        "u[-1,0,0] + u[0,-1,0] + u[0,0,1] + u[1,0,0] + k[0,0,0]",
        "time_block = 3\n",
    );
    let code = cuda(&st).unwrap();
    let (fused, single) = code
    .split_once("/* The kernel of launches of one step: `stream`, blocks of 1 x 2 x 64 threads, marching 2 cells")
    .unwrap_or_else(|| panic!("a single-step kernel after the fused ones:\n{code}"));
    assert!(fused.contains("int levels"), "{fused}");
    // The single step's own kernels, named after the launcher, without `levels`.
    assert!(single.contains("__update_u_step_kernel("), "{single}");
    let launcher = &single[single.find("extern \"C\"").unwrap()..];
    let one = launcher.find("if (levels == 1) {").expect(launcher);
    let step = launcher.find("__update_u_step_kernel<<<").expect(launcher);
    let fused_launch = launcher.find("__update_u_kernel<").expect(launcher);
    assert!(one < step && step < fused_launch, "{launcher}");
    // A fused kernel of one step a launch has no other kernel to leave them to.
    st.tiling.cuda.time_block = Some(1);
    let code = cuda(&st).unwrap();
    assert!(
        !code.contains("_step_kernel") && !code.contains("levels == 1"),
        "{code}"
    );
}

#[test]
fn lanes_trade_neighbours_by_shuffles_and_store_only_their_own_cells() {
    let st = stencil(
        "\"y\", \"x\"",
        "u[-1,0] + u[0,-1] + u[0,0] + u[0,1] + u[1,0] + k[0,0]",
        "time_block = 3\nvector = 2\n",
    );
    let code = cuda(&st).unwrap();
    // The cells either side of a lane's pair: the last of the lane before, the first of the one after.
    assert!(
        code.contains("nb1[0] = __shfl_up_sync(0xffffffffu, win[s - 1][1][1], 1, 32);"),
        "{code}"
    );
    assert!(
        code.contains("nb1[3] = __shfl_down_sync(0xffffffffu, win[s - 1][1][0], 1, 32);"),
        "{code}"
    );
    assert_eq!(
        code.matches("__shfl_").count(),
        2,
        "planes above and below come from registers"
    );
    // 64-cell warp tiles of which 3 on each side are recomputed.
    assert!(code.contains("threadIdx.x / 32) * 58;"), "{code}");
    assert!(
        code.contains("own_x[k] = in_x[k] && lane * 2 + k >= 3 && lane * 2 + k < 61;"),
        "{code}"
    );
    // In f32 each fused step works a plane behind the one before; the launch says how many to run.
    assert!(code.contains("const I q = p - 1 * s;"), "{code}");
    assert!(
        code.contains("const bool step = !EDGE || (s <= levels && q >= 1 && q < n0 - 1);"),
        "{code}"
    );
    assert!(
        code.contains(
            "_kernel(const int n0, const int n1, float *__restrict__ out, const float *__restrict__ cur_u, \
             const float *__restrict__ cur_k, int levels, int chunk)"
        ),
        "{code}"
    );
    // The input comes from global memory at the cell the step computes.
    assert!(code.contains("+ cur_k[c];"), "{code}");
    let fused = &code[..code.find("/* The kernel of launches of one step").unwrap()];
    assert_eq!(
        fused.matches("__global__").count(),
        2,
        "one fused kernel for every step count, with 32- and with 64-bit indices"
    );
    // Tiles inside the region (rows z0 - 6 to z1 + 2 computed, to z1 + 3
    // loaded; 61 cells on from the tile) run without checks.
    for line in [
        "if (levels == 3 && z0 - 6 >= 1 && z1 + 2 <= n0 - 1 && z1 + 3 <= n0 && tile >= 3 && 1 + tile + 61 <= n1 - 1)",
        "    p_cuda__s__update_u_tile<int, false>(n0, n1, out, cur_u, cur_k, levels, tile, z0, z1);",
        "    p_cuda__s__update_u_tile<ptrdiff_t, true>(n0, n1, out, cur_u, cur_k, levels, tile, z0, z1);",
        "template <typename I, bool EDGE>",
    ] {
        assert!(code.contains(line), "{line}: {code}");
    }
    // In f64 (skewed steps) every tile runs the one copy, with its checks.
    let mut st64 = st.clone();
    st64.dtype = crate::ir::Dtype::F64;
    let code = cuda(&st64).unwrap();
    assert!(!code.contains("EDGE"), "{code}");
    assert!(
        code.contains(
            "    p_cuda__s__update_u_tile<int>(n0, n1, out, cur_u, cur_k, levels, tile, z0, z1);"
        ),
        "{code}"
    );
    let hip = source(
        &st,
        &crate::analysis::analyse(&st),
        &resolve(&st.tiling.cuda, &st, &HIP).unwrap(),
        "p",
        &HIP,
    );
    assert!(
        hip.contains("nb1[0] = __shfl_up(win[s - 1][1][1], 1, 32);"),
        "{hip}"
    );
}

#[test]
fn wide_reach_shuffles_across_lanes() {
    let st = stencil(
        "\"y\", \"x\"",
        "u[0,-2] + u[0,2]",
        "time_block = 2\nvector = 1\n",
    );
    let code = cuda(&st).unwrap();
    assert!(
        code.contains("nb0[0] = __shfl_up_sync(0xffffffffu, win[s - 1][0][0], 2, 32);"),
        "{code}"
    );
    assert!(
        code.contains("nb0[4] = __shfl_down_sync(0xffffffffu, win[s - 1][0][0], 2, 32);"),
        "{code}"
    );
}

#[test]
fn tiles_that_would_store_nothing_are_refused() {
    let st = stencil(
        "\"z\", \"y\", \"x\"",
        "u[0,-2,0] + u[0,0,1]",
        "time_block = 3\ncoarsen = 3\nblock = [1, 4, 128]\n",
    );
    let err = cuda(&st).unwrap_err();
    assert!(err.contains("recomputes 12 cells along `y`"), "{err}");
    assert!(
        err.contains("lower `time_block` or raise `coarsen` or `block`"),
        "{err}"
    );
    let st = stencil("\"y\", \"x\"", "u[0,-4] + u[0,4]", "time_block = 9\n");
    let plan = resolve(&st.tiling.cuda, &st, &CUDA).unwrap();
    assert_eq!(
        plan.vector, 5,
        "the default tile widened to 160 cells, to keep the 88 not recomputed"
    );
    assert!(cuda(&st).is_ok());
}

#[test]
fn periodic_2d_tiles_wrap_their_loads_and_input_reads_at_the_edges_only() {
    let text = "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"y\", \"x\"]\n[fields]\nu = { role = \"state\" }\n\
                k = { role = \"input\" }\n[[update]]\ntarget = \"u\"\n\
                expr = \"u[0,0] + 0.1*(u[-1,0] + u[1,0] + u[0,-1] + u[0,1]) + k[0,0]*k[1,-1]\"\n\
                [boundary]\nkind = \"periodic\"\n[tiling.cuda]\nstrategy = \"temporal\"\ntime_block = 4\n";
    let code = cuda(&crate::backend::gpu::tests::lowered(text.to_string())).unwrap();
    for line in [
        // Every cell of the grid updates; the copy without checks wraps nothing.
        "col[k] = (EDGE ? (I)stencil_mod(c, n1) : c);",
        "own_x[k] = (!EDGE || (c >= 0 && c < n1)) && lane * 4 + k >= 4 && lane * 4 + k < 124;",
        "const I row = (EDGE ? (I)stencil_mod(p, n0) : p);",
        "plane[k] = cur_u[row * s0 + col[k]];",
        "const bool step = !EDGE || (s <= levels);",
        // Input reads wrap each coordinate that moves.
        "cur_k[(EDGE ? (I)stencil_mod(q, n0) : q) * s0 + col[k]] * cur_k[(EDGE ? (I)stencil_mod(q + 1, n0) : q + 1) * s0 + (EDGE ? (I)stencil_mod(i1 + k - 1, n1) : i1 + k - 1)]",
        // Tiles without checks keep the inputs' reads on the grid: a radius inside each side.
        "if (levels == 4 && z0 - 9 >= 0 && z1 + 4 <= n0 && z1 + 4 <= n0 && tile >= 5 && tile + 125 <= n1)",
        "out[q * s0 + i1 + k] = next[k];",
    ] {
        assert!(code.contains(line), "{line}\n{code}");
    }
    assert!(!code.contains("in_x") && !code.contains("grid_x"), "{code}");
}
