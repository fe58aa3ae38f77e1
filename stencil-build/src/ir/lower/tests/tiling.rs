//! `[tiling.*]`: each key's checks, and the strategies a stencil can run.

use super::*;

#[test]
fn sections_that_cannot_work() {
    let text = "[stencil]\ndtype = \"f16\"\naxes = [\"x\"]\n";
    assert_error(
        text,
        "dtype",
        "\"f16\"",
        "unsupported dtype `f16`",
        Some("\"f32\""),
    );
    let text = "[stencil]\ndtype = \"f64\"\naxes = [\"a\", \"b\", \"c\", \"d\"]\n";
    assert_error(text, "axes", "[", "a stencil has 1 to 3 axes, not 4", None);
    let text = format!("{HEAD}{FIELDS}[boundary]\nkind = \"wrap\"\n");
    assert_error(
        &text,
        "kind",
        "\"wrap\"",
        "unknown boundary `wrap`",
        Some("periodic"),
    );
    let text = format!("{HEAD}[fields]\nu = {{ role = \"state\" }}\n");
    assert_error(
        &text,
        "[stencil]",
        "[stencil]",
        "the stencil has no [[update]] statement",
        None,
    );
}

#[test]
fn temporal_keys_that_belong_to_the_other_dimension_are_refused_where_written() {
    let fused = |strategy: &str, head: &str, expr: &str, key: &str| {
        format!(
            "{head}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n[tiling.cuda]\nstrategy = \"{strategy}\"\n{key} = 3\n"
        )
    };
    let temporal = |head: &str, expr: &str, key: &str| fused("temporal", head, expr, key);
    let head3 = HEAD.replace("[\"y\", \"x\"]", "[\"z\", \"y\", \"x\"]");
    assert_error(
        &fused("persistent", &head3, "u[0,0,1]", "vector"),
        "vector",
        "3",
        "`vector` of `persistent` sets the cells per lane of a 2-D stencil",
        Some("set its rows with `coarsen`"),
    );
    assert_error(
        &temporal(&head3, "u[0,0,1]", "vector"),
        "vector",
        "3",
        "`vector = 3` cannot work",
        Some("use 1, 2 or 4 cells"),
    );
    assert_error(
        &temporal(HEAD, "u[0,1]", "coarsen"),
        "coarsen",
        "3",
        "`coarsen` of `temporal` sets the cells per thread along the middle axis of a 3-D stencil",
        Some("a 2-D `temporal` thread computes one row"),
    );
}

#[test]
fn a_3d_temporal_block_of_vectors_counts_the_warp_in_cells() {
    let head3 = HEAD.replace("[\"y\", \"x\"]", "[\"z\", \"y\", \"x\"]");
    let spec = |block: &str| {
        format!(
            "{head3}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"u[0,0,-2] + u[0,0,2]\"\n\
             [tiling.cuda]\nstrategy = \"temporal\"\nvector = 2\nblock = {block}\n"
        )
    };
    // 16 threads of 2 cells: a warp's 32 cells.
    let src = Source {
        path: "ok.stencil.toml".into(),
        text: spec("[1, 8, 16]"),
    };
    lower(&parse(&src).unwrap(), &src).expect("16 threads of 2 cells fill a warp");
    assert_error(
        &spec("[1, 8, 12]"),
        "block",
        "12]",
        "the contiguous axis gets 12 threads of 2 cells, not a multiple of the cuda warp (32)",
        Some("try block = [1, 8, 16]"),
    );
}

#[test]
fn fused_strategies_refuse_what_they_cannot_fuse_at_the_strategy_that_asks() {
    for name in ["temporal", "persistent"] {
        refuses_what_it_cannot_fuse(name);
    }
}

/// The refusals of fused strategy `name` (`temporal`, `persistent`), each at its `strategy` key.
fn refuses_what_it_cannot_fuse(name: &str) {
    let temporal = format!("[tiling.hip]\nstrategy = \"{name}\"\n");
    let fused = |spec: String| {
        let text = format!("{spec}{temporal}");
        let (got, hint) = error(&text);
        assert!(
            got.starts_with(&at(&text, "strategy", &format!("\"{name}\""))),
            "{got}"
        );
        (got, hint.unwrap_or_default())
    };
    // A periodic grid fuses (edge tiles load wrapped); a mixed one does not.
    let periodic = format!(
        "{}[boundary]\nkind = \"periodic\"\n",
        update("u[0,1] + k[0,0]")
    );
    assert!(crate::generate("periodic", &format!("{periodic}{temporal}")).is_ok());
    let head3 = HEAD.replace("[\"y\", \"x\"]", "[\"z\", \"y\", \"x\"]");
    let periodic3 = format!(
        "{head3}[fields]\nu = {{ role = \"state\" }}\n[[update]]\ntarget = \"u\"\nexpr = \"u[0,0,1] + u[1,0,0]\"\n\
         [boundary]\nkind = \"periodic\"\n"
    );
    assert!(crate::generate("periodic3", &format!("{periodic3}{temporal}")).is_ok());
    let mixed = format!(
        "{}[boundary]\ny = [\"reflect\", \"fixed\"]\n",
        update("u[0,1] + k[0,0]")
    );
    let (got, hint) = fused(mixed);
    assert!(got.contains(&format!("`{name}` fuses steps")), "{got}");
    assert!(
        got.contains("a fixed or periodic boundary; the edge tiles"),
        "{got}"
    );
    assert!(got.contains("the remapped reads past each side"), "{got}");
    assert!(hint.contains("`kind = \"fixed\"`"), "{hint}");
    // Two fields, each reading the other's new values: two updates on the GPU too.
    let two = format!(
        "{HEAD}[fields]\nu = {{ role = \"state\" }}\nw = {{ role = \"state\" }}\n[[update]]\ntarget = \"u\"\nexpr = \"u[0,1] + w[0,0]\"\n[[update]]\ntarget = \"w\"\nexpr = \"w[0,0] + u[0,-1]\"\n"
    );
    assert!(fused(two).0.contains("one [[update]]; this one has 2"));
    // A temporary its reader computes inline: one update on the GPU, whose steps fuse.
    let inlined = format!(
        "{HEAD}[fields]\nu = {{ role = \"state\" }}\nt = {{ role = \"temp\" }}\n[[update]]\ntarget = \"t\"\nexpr = \"u[0,1] - u[0,0]\"\n[[update]]\ntarget = \"u\"\nexpr = \"u[0,0] + 0.1 * (t[0,0] - t[0,-1])\"\n{temporal}"
    );
    assert!(crate::generate("inlined", &inlined).is_ok(), "{name}");
    let leapfrog = |prev: &str| {
        format!(
            "{HEAD}[fields]\nu = {{ role = \"state\", levels = 2 }}\n[[update]]\ntarget = \"u\"\nexpr = \"u[0,1] - u.prev[{prev}]\"\n"
        )
    };
    // Leapfrog steps fuse where the previous level is read at the cell itself.
    let ok = format!("{}{temporal}", leapfrog("0,0"));
    assert!(crate::generate("ok", &ok).is_ok());
    let (got, hint) = fused(leapfrog("0,1"));
    assert!(
        got.contains("read the previous level at the cell itself; this update reads `u.prev[0,1]`"),
        "{got}"
    );
    assert!(hint.contains("stream"), "{hint}");
    // `persistent` starts its sweeps from the previous level: the update must read it.
    let unread = format!(
        "{HEAD}[fields]\nu = {{ role = \"state\", levels = 2 }}\n[[update]]\ntarget = \"u\"\nexpr = \"u[0,1]\"\n"
    );
    if name == "temporal" {
        assert!(crate::generate("ok", &format!("{unread}{temporal}")).is_ok());
    } else {
        let (got, hint) = fused(unread);
        assert!(got.contains("this update never reads `u.prev`"), "{got}");
        assert!(hint.contains("`levels = 1`"), "{hint}");
    }
    let line = "[stencil]\ndtype = \"f64\"\naxes = [\"x\"]\n[fields]\nu = { role = \"state\" }\n[[update]]\ntarget = \"u\"\nexpr = \"u[1]\"\n";
    let (got, _) = error(&format!("{line}{temporal}"));
    assert!(
        got.contains(&format!(
            "`{name}` marches along the slowest axis and needs at least 2 axes"
        )),
        "{got}"
    );
    let text = format!("{}{temporal}coarsen = 4\n", update("u[0,1]"));
    let (got, _) = error(&text);
    assert!(
        got.contains(&format!("`coarsen` of `{name}` sets")),
        "{got}"
    );
    assert!(got.contains("the middle axis of a 3-D stencil"), "{got}");
    let text = format!("{}{temporal}block = [2, 64]\n", update("u[0,1]"));
    let (got, hint) = error(&text);
    assert!(
        got.contains(&format!("`{name}` marches each block")),
        "{got}"
    );
    assert!(got.contains("its block extent there is 1, not 2"), "{got}");
    assert!(hint.unwrap_or_default().contains("[1, 64]"));
}

#[test]
fn tiling_values_that_cannot_work() {
    let base = update("u[0,0]");
    let cases: [(&str, &str, &str, Option<&str>); 15] = [
        (
            "[tiling.openmp]\nblock = [4]\n",
            "[4]",
            "`block` has 1 entries but the stencil has 2 axes",
            Some("[8, 32]"),
        ),
        (
            "[tiling.openmp]\nblock = [0, 64]\n",
            "0",
            "block extent 0 cannot work",
            None,
        ),
        (
            "[tiling.cuda]\nstrategy = \"fastest\"\n",
            "\"fastest\"",
            "unknown strategy `fastest`",
            Some("naive"),
        ),
        (
            "[tiling.cuda]\nstrategy = \"tiled\"\nblock = [32, 8]\n",
            "8]",
            "the contiguous axis gets 8 threads, not a multiple of the cuda warp (32)",
            Some("[32, 32]"),
        ),
        (
            "[tiling.cuda]\nstrategy = \"naive\"\nblock = [64, 32]\n",
            "[64, 32]",
            "a block of 2048 threads is more than the 1024 a GPU block can hold",
            None,
        ),
        (
            "[tiling.hip]\nstrategy = \"stream\"\nblock = [4, 32]\n",
            "32]",
            "the contiguous axis gets 32 threads, not a multiple of the hip warp (64)",
            None,
        ),
        (
            "[tiling.cuda]\nstrategy = \"tiled\"\ntime_block = 4\n",
            "4",
            "`time_block` only applies to the temporal strategies",
            None,
        ),
        (
            "[tiling.cuda]\nstrategy = \"temporal\"\ntime_block = 0\n",
            "0",
            "`time_block = 0` cannot work",
            Some("between 1 and 64"),
        ),
        (
            "[tiling.cuda]\nstrategy = \"tiled\"\ncoarsen = 2\n",
            "2",
            "`coarsen` only applies to `strategy = \"naive\"`, `\"stream\"`, `\"temporal\"` or `\"persistent\"`",
            None,
        ),
        (
            "[tiling.cuda]\nstrategy = \"stream\"\ncoarsen = 17\n",
            "17",
            "`coarsen = 17` cannot work",
            Some("between 1 and 16"),
        ),
        (
            "[tiling.cuda]\nstrategy = \"tiled\"\nvector = 2\n",
            "2",
            "`vector` only applies to `strategy = \"naive\"`, `\"stream\"`, `\"temporal\"` or `\"persistent\"`",
            None,
        ),
        (
            "[tiling.cuda]\nstrategy = \"naive\"\nvector = 3\n",
            "3",
            "`vector = 3` cannot work",
            Some("1, 2 or 4 cells"),
        ),
        (
            "[tiling.cuda]\nstrategy = \"stream\"\nchunk = 4\ncoarsen = 4\nvector = 3\n",
            "3",
            "`vector = 3` cannot work",
            Some("1, 2 or 4 cells"),
        ),
        (
            "[tiling.cuda]\nstrategy = \"temporal\"\noccupancy = 1\n",
            "1",
            "`occupancy` only applies to the `persistent` strategy",
            Some("set `strategy = \"persistent\"`, or remove `occupancy`"),
        ),
        (
            "[tiling.hip]\nstrategy = \"persistent\"\noccupancy = 0\n",
            "0",
            "`occupancy = 0` cannot work",
            Some("between 1 and 64"),
        ),
    ];
    for (section, needle, message, hint) in cases {
        let text = format!("{base}{section}");
        let key = section
            .lines()
            .rfind(|l| l.contains(needle) && !l.starts_with('['))
            .and_then(|l| l.split(' ').next())
            .unwrap_or("[");
        assert_error(&text, key, needle, message, hint);
    }
}

#[test]
fn openmp_fused_steps_where_the_stencil_allows_them() {
    let lowered = |text: &str| lowered(text).tiling.openmp;
    // A one-level state that reads itself fuses by default; a spec may ask for single steps.
    let fused = update("u[0,1] + u[0,-1]");
    assert_eq!(lowered(&fused).time_block, 8);
    let single = format!("{fused}[tiling.openmp]\ntime_block = 1\n");
    assert_eq!(lowered(&single).time_block, 1);
    let given = format!("{fused}[tiling.openmp]\nblock = [4, 64]\ntime_block = 3\n");
    assert_eq!(lowered(&given).block, [4, 64]);
    assert_eq!(lowered(&given).time_block, 3);
    // A leapfrog fuses by default too; a spec may ask for single steps.
    let leapfrog = update("2*u[0,0] - u.prev[1,0] + u[0,1]").replace(
        "u = { role = \"state\" }",
        "u = { role = \"state\", levels = 2 }",
    );
    assert_eq!(lowered(&leapfrog).time_block, 8);
    let asked = format!("{leapfrog}[tiling.openmp]\ntime_block = 1\n");
    assert_eq!(lowered(&asked).time_block, 1);
    // An update that never reads its field has nothing to carry between steps.
    let free = update("k[0,1]");
    assert_eq!(lowered(&free).time_block, 1);
    let asked = format!("{free}[tiling.openmp]\ntime_block = 4\n");
    assert_error(
        &asked,
        "time_block",
        "4",
        "the OpenMP backend cannot fuse these steps: the update never reads `u`: its steps do not depend on each other",
        Some("write `time_block = 1`"),
    );
    // A periodic grid fuses as a fixed one does (its tiles' first step
    // reads wrapped); sides of other kinds cannot.
    let periodic = format!("{fused}[boundary]\nkind = \"periodic\"\n");
    assert_eq!(lowered(&periodic).time_block, 8);
    let mixed = format!(
        "{fused}[boundary]\ny = \"reflect\"\nx = \"periodic\"\n[tiling.openmp]\ntime_block = 2\n"
    );
    assert_error(
        &mixed,
        "time_block",
        "2",
        "the OpenMP backend cannot fuse these steps: fused steps recompute a tile's halo from the last step's values, which the remapped reads past each side that is not `fixed` would have to supply",
        None,
    );
    let deep = format!("{fused}[tiling.openmp]\ntime_block = 65\n");
    assert_error(
        &deep,
        "time_block",
        "65",
        "`time_block = 65` cannot work",
        Some("between 1 and 64"),
    );
}

#[test]
fn tensor_keys_and_the_stencils_it_cannot_run() {
    let star = |dtype: &str, expr: &str| {
        format!(
            "[stencil]\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n"
        )
    };
    let ok = star("f64", "u[0,0,0] + u[0,0,1] + u[0,-1,0] + u[1,0,0]");
    let tensor = "[tiling.cuda]\nstrategy = \"tensor\"\n";
    assert!(crate::generate("ok", &format!("{ok}{tensor}chunk = 7\n")).is_ok());
    let keys = [
        (
            "block = [1, 16, 32]\n",
            "[1, 16, 32]",
            "`tensor` blocks are 16 warps",
            "remove `block`",
        ),
        (
            "coarsen = 2\n",
            "2",
            "`coarsen` does not apply to `tensor`",
            "remove `coarsen`",
        ),
        (
            "vector = 2\n",
            "2",
            "`vector` does not apply to `tensor`",
            "`chunk`",
        ),
    ];
    for (line, needle, message, hint) in keys {
        let (got, got_hint) = error(&format!("{ok}{tensor}{line}"));
        let key = line.split(' ').next().unwrap_or_default();
        assert!(
            got.starts_with(&at(&format!("{ok}{tensor}{line}"), key, needle)),
            "{got}"
        );
        assert!(got.contains(message), "{got}");
        assert!(got_hint.unwrap_or_default().contains(hint));
    }
    let (got, _) = error(&format!(
        "{ok}[tiling.cuda]\nstrategy = \"naive\"\nchunk = 4\n"
    ));
    assert!(
        got.contains("`chunk` only applies to `strategy = \"stream\"`, `\"tensor\"`"),
        "{got}"
    );
    // What `tensor` cannot run is refused at `strategy`, saying why and what to write.
    let refused = [
        (
            ok.clone(),
            "[tiling.hip]\nstrategy = \"tensor\"\n",
            "the HIP backend has no such kernel",
        ),
        (
            star("f32", "u[0,0,1]"),
            tensor,
            "an f32 stencil there would round",
        ),
        (
            update("u[0,1] + u[1,0]"),
            tensor,
            "streams a 3-D stencil plane by plane; this one has 2 axes",
        ),
        (
            format!("{ok}[boundary]\nkind = \"periodic\"\n"),
            tensor,
            "reads past a side that is not `fixed` are remapped",
        ),
        (
            format!("{ok}[boundary]\nz = [\"reflect\", \"fixed\"]\n"),
            tensor,
            "reads past a side that is not `fixed` are remapped",
        ),
        (
            star("f64", "u[0,1,1] + u[0,0,0]"),
            tensor,
            "it reads `u[0,1,1]` off the axes",
        ),
        (
            star("f64", "u[0,0,1]*u[0,1,0]"),
            tensor,
            "not a sum of reads times constants",
        ),
        (
            "[stencil]\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = { role = \"state\" }\n\
             t = { role = \"temp\" }\n[[update]]\ntarget = \"t\"\nexpr = \"u[0,0,1] + u[0,0,-1]\"\n\
             [[update]]\ntarget = \"u\"\nexpr = \"t[0,1,0] + t[0,-1,0]\"\n"
                .to_string(),
            tensor,
            "`tensor` runs stencils of one [[update]]; this one has 2",
        ),
    ];
    for (spec, section, message) in refused {
        let text = format!("{spec}{section}");
        let (got, hint) = error(&text);
        assert!(
            got.starts_with(&at(&text, "strategy", "\"tensor\"")),
            "{got}"
        );
        assert!(got.contains(message), "{got}");
        assert!(hint.unwrap_or_default().contains("`strategy = \"stream\"`"));
    }
}

#[test]
fn fused_strategies_refuse_updates_that_do_not_read_their_target_and_1d_grids() {
    for name in ["temporal", "persistent"] {
        let text = format!(
            "{HEAD}[fields]\nout = {{ role = \"state\" }}\nimg = {{ role = \"input\" }}\n[[update]]\ntarget = \"out\"\n\
             expr = \"img[-1,0] + img[1,0] - 2*img[0,0]\"\n[tiling.cuda]\nstrategy = \"{name}\"\n"
        );
        let (got, hint) = error(&text);
        assert!(got.starts_with(&at(&text, "strategy", "\"")), "{got}");
        assert!(got.contains("this update never reads `out`"), "{got}");
        assert!(hint.unwrap_or_default().contains("stream"));
        let st = lowered(&text.replace(&format!("strategy = \"{name}\""), "strategy = \"auto\""));
        assert!(crate::ir::unfusable(&st, name).is_some());
    }
    let leapfrog = "[stencil]\ndtype = \"f64\"\naxes = [\"x\"]\n[fields]\nu = { role = \"state\", levels = 2 }\n\
                    [[update]]\ntarget = \"u\"\nexpr = \"2*u[0] - u.prev[0] + 0.1*(u[1] + u[-1] - 2*u[0])\"\n";
    let (why, hint) = crate::ir::unfusable(&lowered(leapfrog), "temporal").unwrap();
    assert!(why.contains("this stencil has 1"), "{why}");
    assert!(hint.contains("naive"), "{hint}");
}

#[test]
fn openmp_single_steps_reaching_4_planes_march_the_slowest_axis() {
    let text = |reach: usize, extra: &str| {
        format!(
            "[stencil]\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[-{reach},0,0] + u[{reach},0,0] + u[0,1,0]\"\n\
             [boundary]\nkind = \"periodic\"\n{extra}"
        )
    };
    let omp = |t: String| lowered(&t).tiling.openmp;
    let whole = crate::ir::WHOLE_AXIS;
    let marching = omp(text(4, ""));
    assert_eq!(
        marching.block,
        [whole, 32, whole],
        "reach 4: bands of 32 rows"
    );
    assert_eq!(marching.time_block, 1);
    let near = omp(text(3, ""));
    assert_eq!(
        (near.block, near.time_block),
        (vec![64, 16, 512], 4),
        "reach 3: fused tiles"
    );
    let given = omp(text(4, "[tiling.openmp]\nblock = [4, 8, 64]\n"));
    assert_eq!(given.block, [4, 8, 64], "a spec's block stands");
    let fixed64 = text(4, "").replace("[boundary]\nkind = \"periodic\"\n", "");
    let fixed32 = fixed64.replace("\"f64\"", "\"f32\"");
    for fixed in [&fixed64, &fixed32] {
        let tiling = omp(fixed.clone());
        assert_eq!(
            (tiling.block, tiling.time_block),
            (vec![whole, 32, whole], 1),
            "steps that could fuse march one at a time, in either dtype"
        );
    }
    let asked = format!("{fixed32}[tiling.openmp]\ntime_block = 4\n");
    assert_eq!(omp(asked).time_block, 4, "a spec may ask to fuse them");
    let near = text(3, "").replace("[boundary]\nkind = \"periodic\"\n", "");
    assert_eq!(omp(near).time_block, 4, "reach 3 fuses on a fixed grid too");
}

#[test]
fn openmp_steps_bound_by_arithmetic_march_rather_than_fuse() {
    // A 3-D box of radius `r` with distinct weights: (2r + 1)^3 products
    // and one add fewer, against a grid read and written a cell.
    let box3d = |r: i64, dtype: &str| {
        let mut terms = Vec::new();
        for z in -r..=r {
            for y in -r..=r {
                for x in -r..=r {
                    terms.push(format!(
                        "{}*u[{z},{y},{x}]",
                        0.01 * (terms.len() + 1) as f64
                    ));
                }
            }
        }
        let text = format!(
            "[stencil]\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"{}\"\n",
            terms.join(" + ")
        );
        lowered(&text).tiling.openmp
    };
    let whole = crate::ir::WHOLE_AXIS;
    let marching = (vec![whole, 32, whole], 1);
    // 249 flops over 16 bytes (f64) or 8 (f32): at least 12 a byte.
    for dtype in ["f64", "f32"] {
        let t = box3d(2, dtype);
        assert_eq!((t.block, t.time_block), marching, "radius 2, {dtype}");
    }
    // 53 flops: 3.3 a byte in f64, 6.6 in f32; their steps fuse.
    for dtype in ["f64", "f32"] {
        assert_eq!(box3d(1, dtype).time_block, 4, "radius 1, {dtype}");
    }
}

#[test]
fn openmp_2d_boxes_bound_by_arithmetic_keep_single_steps() {
    // A 2-D box of radius `r` with distinct weights, `extra` added.
    let box2d = |r: i64, dtype: &str, extra: &str| {
        let mut terms = Vec::new();
        for y in -r..=r {
            for x in -r..=r {
                terms.push(format!("{}*u[{y},{x}]", 0.01 * (terms.len() + 1) as f64));
            }
        }
        let text = format!(
            "[stencil]\ndtype = \"{dtype}\"\naxes = [\"y\", \"x\"]\n[fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"{}{extra}\"\n",
            terms.join(" + ")
        );
        lowered(&text).tiling.openmp
    };
    let single = (vec![32, crate::ir::WHOLE_AXIS], 1);
    // Radius 3: 97 flops over 16 bytes (f64) or 8 (f32), 6 a byte or more.
    for dtype in ["f64", "f32"] {
        let t = box2d(3, dtype, "");
        assert_eq!((t.block, t.time_block), single, "radius 3, {dtype}");
    }
    // Radius 2: 49 flops, 6.1 a byte in f32 (single steps), 3.1 in f64.
    assert_eq!(box2d(2, "f32", "").time_block, 1);
    assert_eq!(box2d(2, "f64", "").time_block, 8, "radius 2 in f64 fuses");
    // A product of reads makes it no weighted sum: its steps fuse.
    assert_eq!(box2d(3, "f32", " + u[0,0]*u[0,1]").time_block, 8);
}
