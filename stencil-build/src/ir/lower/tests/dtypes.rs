//! Literals and constants within a dtype's range, and lists of dtypes.

use super::*;

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
