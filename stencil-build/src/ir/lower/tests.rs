//! Tests of lowering: each check's message and location, and what is accepted.
//! Here the spec's syntax, names, types and expressions; `tiling.rs` the
//! `[tiling.*]` keys and the strategies a stencil can run; `dtypes.rs`
//! literals, constants and lists of dtypes.

mod dtypes;
mod tiling;

use super::*;
use crate::spec::parse;

const HEAD: &str = "[stencil]\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n";
const FIELDS: &str = "[fields]\nu = { role = \"state\" }\nk = { role = \"input\" }\n[params]\na = \"f64\"\n[constants]\nc = [1.0, 2.0]\ns = 3\n";

fn update(expr: &str) -> String {
    format!("{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n")
}

/// Lowers `text` and checks its GPU plans, expecting an error; returns
/// "line:col: message".
fn error(text: &str) -> (String, Option<String>) {
    let src = Source {
        path: "bad.stencil.toml".into(),
        text: text.into(),
    };
    let d = match parse(&src) {
        Err(d) => d,
        // Lowered and its GPU plans checked, as every spec is.
        Ok(spec) => crate::config::checked(&spec, &src).expect_err("the spec should be rejected"),
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
        got.starts_with(
            "14:1: unknown field `expresion`, expected one of `target`, `expr`, `region`"
        ),
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

/// Lowers `text`, expecting success.
fn lowered(text: &str) -> Stencil {
    let src = Source {
        path: "good.stencil.toml".into(),
        text: text.into(),
    };
    lower(&parse(&src).unwrap(), &src).unwrap()
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
fn boundary_sides_are_named_per_axis() {
    use crate::ir::Side;
    let spec = |boundary: &str| format!("{}[boundary]\n{boundary}\n", update("u[1,0] + u[0,-1]"));
    // An axis's kind for both sides, or [low, high]; `kind` for the others.
    let st = lowered(&spec(
        "kind = \"reflect\"\nx = [\"fixed\", { value = \"a\" }]",
    ));
    assert_eq!(
        st.boundary,
        Boundary::Mixed(vec![[Side::Reflect; 2], [Side::Fixed, Side::Value(0)]])
    );
    // The statement reads `a` past x's high edge: its kernels take it.
    assert_eq!(st.statements[0].edge_params, Vec::<usize>::new());
    let st = lowered(&spec("x = [\"reflect\", { value = \"a\" }]").replace("u[0,-1]", "u[0,1]"));
    assert_eq!(st.statements[0].edge_params, vec![0]);
    // Every side of one kind is that kind's boundary.
    assert_eq!(
        lowered(&spec("y = \"periodic\"\nx = \"periodic\"")).boundary,
        Boundary::Periodic
    );
    assert_eq!(
        lowered(&spec("kind = \"fixed\"\ny = \"fixed\"")).boundary,
        Boundary::Fixed
    );
    let text = spec("z = \"reflect\"");
    assert_error(
        &text,
        "z",
        "z",
        "unknown key `z` in [boundary]",
        Some("`kind` and the axes: kind, y, x"),
    );
    let text = spec("x = [\"periodic\", \"fixed\"]");
    assert_error(
        &text,
        "x",
        "[",
        "axis `x` is periodic on one side only",
        Some("`x = \"periodic\"`"),
    );
    let text = spec("y = [\"reflect\"]");
    assert_error(
        &text,
        "y",
        "[",
        "an axis's sides are [low, high]: 1 given",
        None,
    );
    let text = spec("y = { value = \"b\" }");
    assert_error(
        &text,
        "y",
        "{",
        "the boundary value `b` is not a param",
        Some("declare it in [params]"),
    );
    let text = spec("y = \"value\"");
    assert_error(
        &text,
        "y",
        "\"value\"",
        "a `value` side names the param it reads",
        Some("{ value = \"<param>\" }"),
    );
    let text = spec("x = 3");
    assert_error(
        &text,
        "x",
        "3",
        "unknown boundary integer",
        Some("`\"reflect\"`"),
    );
    // Fused steps would need the remapped reads at every step of a tile.
    for tiling in [
        "[tiling.cuda]\nstrategy = \"temporal\"",
        "[tiling.openmp]\ntime_block = 2",
    ] {
        let (got, _) = error(&format!("{}{tiling}\n", spec("y = \"reflect\"")));
        assert!(
            got.contains("the remapped reads past each side that is not `fixed`"),
            "{got}"
        );
    }
}

#[test]
fn regions_partition_their_fields() {
    use crate::ir::{Bound, Region};
    let spec = |regions: &str, updates: &[(&str, &str)]| {
        let mut text = format!("{HEAD}{FIELDS}[regions]\n{regions}\n");
        for (region, expr) in updates {
            text.push_str(&format!(
                "[[update]]\ntarget = \"u\"\nregion = \"{region}\"\nexpr = \"{expr}\"\n"
            ));
        }
        text
    };
    let boxed = "inner = { y = [2, \"n-2\"], x = [3, \"n\"] }\nouter = { outside = \"inner\" }";
    let st = lowered(&spec(boxed, &[("inner", "u[0,1]"), ("outer", "a*u[0,-1]")]));
    let b = vec![
        [Bound::Low(2), Bound::High(2)],
        [Bound::Low(3), Bound::High(0)],
    ];
    assert_eq!(st.regions[0].region, Region::Box(b.clone()));
    assert_eq!(st.regions[1].region, Region::Outside(b));
    assert_eq!(
        st.statements.iter().map(|s| s.region).collect::<Vec<_>>(),
        [Some(0), Some(1)]
    );
    // Each region's update reads the field as the step found it.
    assert!(
        st.statements[1]
            .slots()
            .iter()
            .all(|s| s.version == Version::Start)
    );
    // Slabs of one axis, in any order.
    let slabs = "ra = { y = [\"n-3\", \"n\"] }\nrb = { y = [0, 4] }\nrc = { y = [4, \"n-3\"] }";
    lowered(&spec(
        slabs,
        &[("ra", "u[0,0]"), ("rb", "u[1,0]"), ("rc", "u[0,0]")],
    ));
    let refused = [
        (
            spec(boxed, &[("inner", "u[0,1]"), ("inne", "u[0,0]")]),
            "region",
            "\"inne\"",
            "unknown region `inne`",
        ),
        (
            spec("ra = { outside = \"rb\" }", &[("ra", "u[0,0]")]),
            "ra =",
            "{",
            "`rb` is not a box declared above",
        ),
        (
            spec(
                "ra = {}\nrb = { outside = \"ra\" }",
                &[("ra", "u[0,0]"), ("rb", "u[0,0]")],
            ),
            "rb =",
            "{",
            "region `ra` is the whole grid: nothing is outside it",
        ),
        (
            spec("ra = { z = [0, 4] }", &[("ra", "u[0,0]")]),
            "ra =",
            "{",
            "`z` is not an axis",
        ),
        (
            spec("ra = { y = [0, \"m-4\"] }", &[("ra", "u[0,0]")]),
            "ra =",
            "{",
            "not a bound",
        ),
        (
            spec("ra = { y = [\"n-4\", 4] }", &[("ra", "u[0,0]")]),
            "ra =",
            "{",
            "`y = [n-4, 4]` has no cells on large grids",
        ),
        (
            spec(
                "ra = { y = [0, 4] }\nrb = { y = [5, \"n\"] }",
                &[("ra", "u[0,0]"), ("rb", "u[0,0]")],
            ),
            "region",
            "\"rb\"",
            "these regions do not partition the field's cells: nothing covers cells from 4 on",
        ),
        (
            spec(
                "ra = { y = [0, 4] }\nrb = { x = [4, \"n\"] }",
                &[("ra", "u[0,0]"), ("rb", "u[0,0]")],
            ),
            "region",
            "\"rb\"",
            "the boxes bound different axes",
        ),
        (
            spec(
                "ra = { y = [0, 1] }\nrb = { y = [1, \"n\"] }",
                &[("rb", "u[1,0]"), ("ra", "u[0,0]")],
            ),
            "region",
            "\"ra\"",
            "region `ra` has no cell this update computes: along `y` it lies in the frame",
        ),
    ];
    let refused = refused.into_iter().chain([(
        spec(
            "ra = { y = [1, \"n\"] }\nrb = { outside = \"ra\" }",
            &[("ra", "u[1,0]"), ("rb", "u[0,0]")],
        ),
        "region",
        "\"rb\"",
        "region `rb` has no cell this update computes: the box it is outside holds all of `u`'s cells",
    )]);
    for (text, key, needle, message) in refused {
        let (got, _) = error(&text);
        assert!(
            got.starts_with(&at(&text, key, needle)),
            "{got} (want at {key} {needle})"
        );
        assert!(got.contains(message), "{got}");
    }
    // Every update of a field in regions names one; they are consecutive.
    let text = format!(
        "{}[[update]]\ntarget = \"u\"\nexpr = \"u[0,0]\"\n",
        spec(boxed, &[("inner", "u[0,1]")])
    );
    let (got, _) = error(&text);
    assert!(
        got.contains("this update of a field written in regions names none"),
        "{got}"
    );
    // Two kernels of one name.
    let text = format!(
        "{HEAD}[fields]\nu = {{ role = \"state\" }}\nu_in_top = {{ role = \"state\" }}\n[regions]\ntop = {{ y = [0, 3] }}\nrest = {{ y = [3, \"n\"] }}\n\
         [[update]]\ntarget = \"u_in_top\"\nexpr = \"u[0,0]\"\n\
         [[update]]\ntarget = \"u\"\nregion = \"rest\"\nexpr = \"u[1,0]\"\n\
         [[update]]\ntarget = \"u\"\nregion = \"top\"\nexpr = \"u_in_top[0,0]\"\n"
    );
    let (got, _) = error(&text);
    assert!(got.starts_with(&at(&text, "region", "\"top\"")), "{got}");
    assert!(
        got.contains("would be named `update_u_in_top`, as the update of `u_in_top` is"),
        "{got}"
    );
    // Fused steps carry an update of every cell.
    let text = format!(
        "{}[tiling.openmp]\ntime_block = 2\n",
        spec(boxed, &[("inner", "u[0,1]"), ("outer", "u[0,0]")])
    );
    let (got, _) = error(&text);
    assert!(got.contains("applies to region `inner`"), "{got}");
}
