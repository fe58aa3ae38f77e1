//! Tests of lowering: each check's message and location, and what is accepted.

use super::*;
use crate::spec::parse;

const HEAD: &str = "[stencil]\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n";
const FIELDS: &str = "[fields]\nu = { role = \"state\" }\nk = { role = \"input\" }\n[params]\na = \"f64\"\n[constants]\nc = [1.0, 2.0]\ns = 3\n";

fn update(expr: &str) -> String {
    format!("{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n")
}

/// Lowers `text`, expecting an error; returns "line:col: message".
fn error(text: &str) -> (String, Option<String>) {
    let src = Source {
        path: "bad.stencil.toml".into(),
        text: text.into(),
    };
    let d = match parse(&src) {
        Err(d) => d,
        Ok(spec) => lower(&spec, &src).expect_err("the spec should be rejected"),
    };
    let shown = d.to_string();
    assert!(
        shown.contains(&format!("--> bad.stencil.toml:{}:{}", d.line, d.column)),
        "{shown}"
    );
    (format!("{}:{}: {}", d.line, d.column, d.message), d.hint)
}

/// `line:col` of `needle` on the last line of `text` that starts with `key`.
fn at(text: &str, key: &str, needle: &str) -> String {
    let (n, l) = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with(key))
        .last()
        .unwrap_or_else(|| panic!("no line starts with {key}"));
    format!(
        "{}:{}",
        n + 1,
        l.find(needle)
            .unwrap_or_else(|| panic!("{needle} not in {l}"))
            + 1
    )
}

/// Expects `text` to be rejected at `needle` on the last line starting with `key`.
fn assert_error(text: &str, key: &str, needle: &str, message: &str, hint: Option<&str>) {
    let (got, got_hint) = error(text);
    assert_eq!(got, format!("{}: {message}", at(text, key, needle)));
    if let Some(h) = hint {
        let got_hint = got_hint.unwrap_or_default();
        assert!(got_hint.contains(h), "hint `{got_hint}` lacks `{h}`");
    }
}

#[test]
fn toml_syntax() {
    let text = format!("{HEAD}[fields\nu = 1\n");
    let (got, _) = error(&text);
    assert!(got.starts_with("4:8: "), "{got}");
}

#[test]
fn unknown_keys() {
    let text = format!("{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpresion = \"u[0,0]\"\n");
    let (got, hint) = error(&text);
    assert!(
        got.starts_with("14:1: unknown field `expresion`, expected `target` or `expr`"),
        "{got}"
    );
    assert!(hint.is_some());
    let text = format!("{HEAD}[tiling.cudaa]\nstrategy = \"naive\"\n");
    let (got, _) = error(&text);
    assert!(got.contains("unknown field `cudaa`"), "{got}");
}

#[test]
fn unknown_names() {
    let text = update("u[0,0] + kk[0,0]");
    assert_error(
        &text,
        "expr",
        "kk",
        "unknown field or table `kk`",
        Some("did you mean `k`?"),
    );
    let text = update("u[0,0] * alpha");
    assert_error(
        &text,
        "expr",
        "alpha",
        "unknown name `alpha`",
        Some("declare it"),
    );
    let text = update("sqr(u[0,0])");
    assert_error(
        &text,
        "expr",
        "sqr",
        "unknown function `sqr`",
        Some("did you mean `sqrt`?"),
    );
    let text = format!("{HEAD}{FIELDS}[[update]]\ntarget = \"w\"\nexpr = \"u[0,0]\"\n");
    assert_error(&text, "target", "\"w\"", "unknown field `w`", None);
}

#[test]
fn offset_arity_and_constness() {
    let text = update("u[0,0,1]");
    assert_error(
        &text,
        "expr",
        "u[0,0,1]",
        "field `u` is read with 3 offsets but the stencil has 2 axes",
        Some("`u[0,0]`"),
    );
    let text = update("u[0,a]");
    assert_error(
        &text,
        "expr",
        "a]",
        "an offset must be a compile-time integer; `a` is a runtime parameter",
        None,
    );
    let text = update("u[0,0.5]");
    assert_error(
        &text,
        "expr",
        "0.5",
        "an offset must be a compile-time integer; `0.5` is not an integer",
        None,
    );
    let text = update("u[0,40]");
    assert_error(
        &text,
        "expr",
        "40",
        "offset 40 is beyond the largest radius supported (32)",
        None,
    );
    let text = update("u[0,s-1] + u[0,-s]");
    let src = Source {
        path: "ok.stencil.toml".into(),
        text,
    };
    assert!(
        lower(&parse(&src).unwrap(), &src).is_ok(),
        "integer constants are compile-time offsets"
    );
}

#[test]
fn writing_an_input_grid() {
    let text = format!("{HEAD}{FIELDS}[[update]]\ntarget = \"k\"\nexpr = \"u[0,0]\"\n");
    assert_error(
        &text,
        "target",
        "\"k\"",
        "`k` is an input grid and cannot be written",
        Some("role = \"state\""),
    );
}

#[test]
fn invalid_identifiers_and_keywords() {
    let text = format!("{HEAD}[fields]\nType = {{ role = \"state\" }}\n");
    assert_error(
        &text,
        "Type",
        "Type",
        "field `Type` is not a lower-case identifier",
        Some("write `type`"),
    );
    let text = format!("{HEAD}[fields]\nfn = {{ role = \"state\" }}\n");
    assert_error(
        &text,
        "fn",
        "fn",
        "field `fn` is a Rust keyword",
        Some("`fn_`"),
    );
    let text = format!("{HEAD}[fields]\nu = {{ role = \"state\" }}\n[params]\nsteps = \"f64\"\n");
    assert_error(
        &text,
        "steps",
        "steps",
        "param `steps` is a reserved name",
        None,
    );
    let text = "[stencil]\nname = \"heat-2d\"\ndtype = \"f64\"\naxes = [\"x\"]\n";
    assert_error(
        text,
        "name",
        "\"heat-2d\"",
        "stencil name `heat-2d` is not a lower-case identifier",
        Some("write `heat_2d`"),
    );
    let text = format!("{HEAD}[fields]\nu__v = {{ role = \"state\" }}\n");
    assert_error(
        &text,
        "u__v",
        "u__v",
        "field `u__v` is not a lower-case identifier",
        None,
    );
}

#[test]
fn duplicate_names() {
    let text = format!("{HEAD}[fields]\nu = {{ role = \"state\" }}\n[params]\nu = \"f64\"\n");
    assert_error(
        &text,
        "u =",
        "u",
        "`u` is already declared as a field",
        Some("one namespace"),
    );
    let text = "[stencil]\ndtype = \"f64\"\naxes = [\"x\", \"x\"]\n";
    assert_error(text, "axes", "\"x\"]", "axis `x` is listed twice", None);
    let text = format!(
        "{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"u[0,0]\"\n[[update]]\ntarget = \"u\"\nexpr = \"u[0,0]\"\n"
    );
    assert_error(
        &text,
        "target",
        "\"u\"",
        "`u` is already written by an earlier [[update]]",
        Some("temp"),
    );
}

#[test]
fn type_mismatches() {
    let text = format!("{HEAD}[fields]\nu = {{ role = \"state\" }}\n[params]\na = \"f32\"\n");
    assert_error(
        &text,
        "a =",
        "\"f32\"",
        "type mismatch: param `a` is declared `f32` but the stencil's dtype is `f64`",
        Some("a = \"f64\""),
    );
    let text = update("c * u[0,0]");
    assert_error(
        &text,
        "expr",
        "c *",
        "type mismatch: `c` is a table of 2 values, not a scalar",
        Some("`c[0]`"),
    );
    let text = update("s[0] * u[0,0]");
    assert_error(
        &text,
        "expr",
        "s[0]",
        "type mismatch: constant `s` is a scalar and cannot be indexed",
        None,
    );
    let text = update("a[1] * u[0,0]");
    assert_error(
        &text,
        "expr",
        "a[1]",
        "type mismatch: `a` is a scalar and cannot be indexed",
        None,
    );
    let text = update("u * 2");
    assert_error(
        &text,
        "expr",
        "u *",
        "field `u` is read without offsets",
        Some("`u[0,0]`"),
    );
    let text = update("u[0,0]^a");
    assert_error(
        &text,
        "expr",
        "a\"",
        "an exponent must be a compile-time integer; `a` is a runtime parameter",
        None,
    );
    let text = update("c[2] * u[0,0]");
    assert_error(
        &text,
        "expr",
        "2]",
        "index 2 is out of range for table `c` of 2 values",
        Some("from 0 to 1"),
    );
    let text = update("min(u[0,0])");
    assert_error(
        &text,
        "expr",
        "min",
        "`min` takes 2 argument(s), not 1",
        None,
    );
    let text = format!("{HEAD}[fields]\nu = {{ role = \"state\" }}\n[constants]\nw = \"big\"\n");
    assert_error(
        &text,
        "w =",
        "\"big\"",
        "constant `w` holds `big`, which is not an expression of numbers: only numbers, `+ - * / ^` and parentheses may appear",
        None,
    );
    let text = text.replace("\"big\"", "true");
    assert_error(
        &text,
        "w =",
        "true",
        "constant `w` must be a number, an expression of numbers in quotes, or a list of them",
        None,
    );
}

#[test]
fn time_levels_and_temps() {
    let text = update("u.prev[0,0]");
    assert_error(
        &text,
        "expr",
        "u.prev",
        "field `u` keeps one time level, so `.prev` cannot be read",
        Some("levels = 2"),
    );
    let text = format!("{HEAD}[fields]\nu = {{ role = \"input\", levels = 2 }}\n");
    assert_error(
        &text,
        "u =",
        "2 }",
        "only state fields keep time levels",
        None,
    );
    let text = format!(
        "{HEAD}[fields]\nu = {{ role = \"state\" }}\nt = {{ role = \"temp\" }}\n[[update]]\ntarget = \"u\"\nexpr = \"t[0,0]\"\n"
    );
    assert_error(
        &text,
        "expr",
        "t[0,0]",
        "temp field `t` is read before any [[update]] writes it",
        Some("move"),
    );
    let text = format!(
        "{HEAD}[fields]\nu = {{ role = \"state\" }}\nv = {{ role = \"state\" }}\n[[update]]\ntarget = \"u\"\nexpr = \"v[0,0]\"\n"
    );
    assert_error(
        &text,
        "v =",
        "v",
        "state field `v` is never updated",
        Some("role = \"input\""),
    );
    let text = format!("{HEAD}[fields]\nu = {{ role = \"stat\" }}\n");
    assert_error(
        &text,
        "u =",
        "\"stat\"",
        "unknown role `stat`",
        Some("`state`"),
    );
}

#[test]
fn sums_and_expression_syntax() {
    let text = update("sum(r, 1, 0, u[0,r])");
    assert_error(&text, "expr", "sum", "`sum` from 1 to 0 cannot work", None);
    let text = update("sum(u, 1, 2, u[0,0])");
    assert_error(
        &text,
        "expr",
        "u, 1",
        "sum index `u` hides a name already in use",
        None,
    );
    let text = update("sum(r, 1, 2)");
    assert_error(
        &text,
        "expr",
        "sum",
        "`sum` takes 4 arguments, not 3",
        Some("sum(r, 1, 4"),
    );
    let text = update("u[0,0] +* 2");
    assert_error(&text, "expr", "* 2", "expected a value, found `*`", None);
    let text = format!("{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = '''u[0,0] + @'''\n");
    assert_error(&text, "expr", "@", "unexpected character `@`", None);
}

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
    let periodic = format!(
        "{}[boundary]\nkind = \"periodic\"\n",
        update("u[0,1] + k[0,0]")
    );
    let (got, hint) = fused(periodic);
    assert!(got.contains(&format!("`{name}` fuses steps")), "{got}");
    assert!(got.contains("fixed boundary"), "{got}");
    assert!(hint.contains("`kind = \"fixed\"`"), "{hint}");
    let two = format!(
        "{HEAD}[fields]\nu = {{ role = \"state\" }}\nt = {{ role = \"temp\" }}\n[[update]]\ntarget = \"t\"\nexpr = \"u[0,1]\"\n[[update]]\ntarget = \"u\"\nexpr = \"t[0,-1]\"\n"
    );
    assert!(fused(two).0.contains("one [[update]]; this one has 2"));
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
    let cases: [(&str, &str, &str, Option<&str>); 14] = [
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
            "`vector` only applies to `strategy = \"stream\"`, `\"temporal\"` or `\"persistent\"`",
            None,
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
    let lowered = |text: &str| {
        let src = Source {
            path: "ok.stencil.toml".into(),
            text: text.into(),
        };
        lower(&parse(&src).unwrap(), &src).unwrap().tiling.openmp
    };
    // A one-level state that reads itself fuses by default; a spec may ask for single steps.
    let fused = update("u[0,1] + u[0,-1]");
    assert_eq!(lowered(&fused).time_block, 8);
    let single = format!("{fused}[tiling.openmp]\ntime_block = 1\n");
    assert_eq!(lowered(&single).time_block, 1);
    let given = format!("{fused}[tiling.openmp]\nblock = [4, 64]\ntime_block = 3\n");
    assert_eq!(lowered(&given).block, [4, 64]);
    assert_eq!(lowered(&given).time_block, 3);
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
    let periodic =
        format!("{fused}[boundary]\nkind = \"periodic\"\n[tiling.openmp]\ntime_block = 2\n");
    assert_error(
        &periodic,
        "time_block",
        "2",
        "the OpenMP backend cannot fuse these steps: fused steps recompute a tile's halo from the last step's values, which a periodic grid's far side would have to supply",
        None,
    );
    let deep = format!("{fused}[tiling.openmp]\ntime_block = 65\n");
    assert_error(
        &deep,
        "time_block",
        "65",
        "time_block 65 cannot work",
        Some("fuse 1"),
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
            "a periodic grid's reads would wrap",
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

/// Lowers `text`, expecting success.
fn lowered(text: &str) -> Stencil {
    let src = Source {
        path: "good.stencil.toml".into(),
        text: text.into(),
    };
    lower(&parse(&src).unwrap(), &src).unwrap()
}

#[test]
fn literals_beyond_the_dtype_and_integers_beyond_i64() {
    let f32_fields = FIELDS.replace("\"f64\"", "\"f32\"");
    let f32_head = HEAD.replace("f64", "f32");
    let text =
        format!("{f32_head}{f32_fields}[[update]]\ntarget = \"u\"\nexpr = \"u[0,0]*1e39\"\n");
    assert_error(
        &text,
        "expr",
        "1e39",
        "`1e39` is beyond the range of f32",
        Some("at most 3.402823e38"),
    );
    // The same literal fits an f64 stencil.
    assert_eq!(lowered(&update("u[0,0]*1e39")).statements.len(), 1);
    let text = format!(
        "{f32_head}[fields]\nu = {{ role = \"state\" }}\n[constants]\nbig = [1.0, 1e39]\n\
         [[update]]\ntarget = \"u\"\nexpr = \"big[0]*u[0,0]\"\n"
    );
    assert_error(
        &text,
        "big",
        "[1.0",
        "constant `big` holds a value beyond the range of f32",
        None,
    );
    assert_error(
        &update("u[0,99999999999999999999]"),
        "expr",
        "9999",
        "an offset `99999999999999999999` is too large",
        Some("at most 32"),
    );
    assert_error(
        &update("u[0,0]^2.0"),
        "expr",
        "2.0",
        "an exponent must be a compile-time integer; `2.0` is not an integer",
        Some("write `2`"),
    );
    assert_error(
        &update("pow(u[0,0], 2)"),
        "expr",
        "pow",
        "unknown function `pow`",
        Some("write `x^n`"),
    );
}

#[test]
fn constants_may_be_expressions_of_numbers() {
    let text = format!(
        "{HEAD}[fields]\nu = {{ role = \"state\" }}\n[constants]\nc = [\"4/3\", -0.5, \"-1/12\", \"2^-3\"]\n\
         d = \"(1 + 2) * 0.5\"\n[[update]]\ntarget = \"u\"\n\
         expr = \"d*u[0,0] + c[0]*u[0,1] + c[2]*u[0,-1] + c[3]*u[1,0]\"\n"
    );
    let mut lits = Vec::new();
    collect_literals(&lowered(&text).statements[0].expr, &mut lits);
    assert_eq!(lits, [1.5, 4.0 / 3.0, -1.0 / 12.0, 0.125]);
    let with = |value: &str| text.replace("d = \"(1 + 2) * 0.5\"", &format!("d = {value}"));
    let (got, _) = error(&with("\"u*2\""));
    assert!(
        got.contains("constant `d` holds `u*2`, which is not an expression of numbers"),
        "{got}"
    );
    let (got, _) = error(&with("[[1, 2], [3, 4]]"));
    assert!(
        got.contains("constant `d` is a nested list; tables have one index"),
        "{got}"
    );
    let unquoted = with("[4/3]");
    let (got, hint) = error(&unquoted);
    assert!(got.starts_with(&at(&unquoted, "d =", "4/3")), "{got}");
    assert!(hint.unwrap_or_default().contains("`\"4/3\"`"));
}

fn collect_literals(e: &crate::ir::Expr, out: &mut Vec<f64>) {
    use crate::ir::Expr;
    match e {
        Expr::Lit(v) => out.push(*v),
        Expr::Neg(x) | Expr::PowI(x, _) => collect_literals(x, out),
        Expr::Bin(_, a, b) => {
            collect_literals(a, out);
            collect_literals(b, out);
        }
        _ => {}
    }
}

#[test]
fn errors_in_multi_line_and_escaped_expressions_point_at_their_text() {
    let lines = "\n  u[0,0]\n  + 0.1 * \\\n        u[0,1] + 0.1*v[1,0]\n";
    let basic = format!("{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"\"\"{lines}\"\"\"\n");
    assert_error(
        &basic,
        "        u[0,1]",
        "v[",
        "unknown field or table `v`",
        None,
    );
    // A literal string keeps its backslash, which is no operator.
    let literal = format!("{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = '''{lines}'''\n");
    assert_error(&literal, "  + 0.1", "\\", "unexpected character `\\`", None);
    let escaped = update("u[0,0] + \\u00e9");
    assert_error(
        &escaped,
        "expr",
        "\\u00e9",
        "unexpected character `é`",
        None,
    );
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
fn stencils_cannot_take_the_names_of_runtime_modules() {
    for module in crate::codegen::rust::RUNTIME_MODULES {
        let text = HEAD.replace("[stencil]\n", &format!("[stencil]\nname = \"{module}\"\n"));
        let text = format!("{text}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"u[0,1]\"\n");
        assert_error(
            &text,
            "name",
            &format!("\"{module}\""),
            &format!("stencil name `{module}` is the name of a generated runtime module"),
            Some(&format!("`{module}_`")),
        );
    }
}

#[test]
fn a_list_of_dtypes_lowers_the_spec_once_per_precision() {
    let text = update("u[0,0] + a*k[0,0]")
        .replace("dtype = \"f64\"", "dtype = [\"f32\", \"f64\"]")
        .replace("a = \"f64\"", "a = \"real\"");
    let src = Source {
        path: "blur.stencil.toml".into(),
        text,
    };
    let all = lower_all(&parse(&src).unwrap(), &src).unwrap();
    let seen: Vec<(&str, Option<&str>, Dtype)> = all
        .iter()
        .map(|st| (st.name.as_str(), st.family.as_deref(), st.dtype))
        .collect();
    assert_eq!(
        seen,
        [
            ("blur_f32", Some("blur"), Dtype::F32),
            ("blur_f64", Some("blur"), Dtype::F64)
        ]
    );
    assert_eq!(all[0].params, ["a"]);
    // One dtype as a string: one stencil of the spec's name, `real` its dtype.
    let one = update("u[0,0] + a*k[0,0]").replace("a = \"f64\"", "a = \"real\"");
    let src = Source {
        path: "blur.stencil.toml".into(),
        text: one,
    };
    let all = lower_all(&parse(&src).unwrap(), &src).unwrap();
    assert_eq!(
        (all.len(), all[0].name.as_str(), all[0].family.as_deref()),
        (1, "blur", None)
    );
}

#[test]
fn lists_of_dtypes_and_their_params_are_checked() {
    let listed =
        update("u[0,0] + a*k[0,0]").replace("dtype = \"f64\"", "dtype = [\"f32\", \"f64\"]");
    let (message, hint) = error(&listed);
    assert_eq!(
        message,
        format!(
            "{}: param `a` is declared `f64` but the stencil lists its dtypes",
            at(&listed, "a = ", "\"f64\"")
        )
    );
    assert!(hint.unwrap().contains("a = \"real\""));
    for (dtype, wanted) in [
        (
            "[\"f64\", \"f64\"]",
            "a list of dtypes names each precision once",
        ),
        ("[]", "a list of dtypes names each precision once"),
        ("[\"f16\"]", "unsupported dtype `f16`"),
        ("64", "unsupported dtype (a integer, not a string)"),
    ] {
        let text = update("u[0,0]").replace("dtype = \"f64\"", &format!("dtype = {dtype}"));
        let (message, _) = error(&text);
        assert!(message.ends_with(wanted), "{dtype}: {message}");
        assert!(message.starts_with("2:9:"), "{dtype}: {message}");
    }
}
