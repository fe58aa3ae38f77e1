//! Names a user could give that the generated code also uses: every
//! identifier of the code stencil-build generates for a set of sample specs
//! ([`generated_identifiers`]) and the words of C, C++, CUDA and Rust
//! ([`LANGUAGE_WORDS`]); and specs that give such names to every kind of
//! thing a spec names ([`specs_naming`]).

use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Words of C, C++, CUDA, the C library and Rust that a spec could use as
/// a name (the validator refuses Rust's keywords and its own reserved words).
pub const LANGUAGE_WORDS: &[&str] = &[
    // C
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    // C++
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "bitand",
    "bitor",
    "bool",
    "catch",
    "class",
    "compl",
    "concept",
    "const_cast",
    "consteval",
    "constexpr",
    "constinit",
    "co_await",
    "decltype",
    "delete",
    "dynamic_cast",
    "explicit",
    "export",
    "false",
    "friend",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "reinterpret_cast",
    "requires",
    "static_assert",
    "static_cast",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typeid",
    "typename",
    "using",
    "virtual",
    "wchar_t",
    "xor",
    "xor_eq",
    "final",
    "override",
    "std",
    // CUDA, HIP and the C library
    "dim3",
    "min",
    "max",
    "printf",
    "malloc",
    "free",
    "memcpy",
    "memset",
    "exit",
    "abort",
    "errno",
    "main",
    "size_t",
    "ptrdiff_t",
    "int32_t",
    "uint64_t",
    "nan",
    "inf",
    "isnan",
    "fmaf",
    "pow",
    "powf",
    "floor",
    "ceil",
    "round",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "fabs",
    "sqrt",
    "rsqrt",
    "assert",
    "offsetof",
    "null",
    "clock",
    "warp",
    "grid",
    "block",
    "thread",
    // Rust
    "self",
    "crate",
    "super",
    "core",
    "alloc",
    "i32",
    "i64",
    "u32",
    "u64",
    "usize",
    "isize",
    "f32",
    "f64",
    "str",
    "vec",
    "format",
    "println",
    "panic",
    "option",
    "result",
    "some",
    "none",
    "ok",
    "err",
    "string",
    "drop",
    "clone",
    "copy",
    "send",
    "sync",
    "sized",
    "iter",
    "into",
    "from",
    "debug",
    "display",
];

/// Specs covering what the generators emit: 1 to 3 axes, f32 and f64, a
/// leapfrog, a temp, input grids and params, fixed and periodic, and each
/// GPU strategy.
fn samples() -> Vec<String> {
    let mut specs = Vec::new();
    for (dims, dtype, leapfrog) in [
        (1, "f64", false),
        (2, "f32", true),
        (3, "f64", false),
        (3, "f32", true),
    ] {
        for strategy in crate::random::GPU_STRATEGIES {
            specs.push(sample(dims, dtype, leapfrog, strategy, "fixed"));
        }
        specs.push(sample(dims, dtype, false, "auto", "periodic"));
        if dims > 1 {
            // Fused steps on a periodic grid, whose edge tiles load wrapped.
            for strategy in ["temporal", "persistent"] {
                specs.push(sample(dims, dtype, leapfrog, strategy, "periodic"));
            }
        }
        specs.push(sample_with_temp(dims, dtype));
    }
    specs
}

fn axes(dims: usize) -> String {
    let axes: Vec<String> = ["z", "y", "x"][3 - dims..]
        .iter()
        .map(|a| format!("\"{a}\""))
        .collect();
    format!("[{}]", axes.join(", "))
}

/// `u`'s cell with its neighbours along every axis, times `k`'s cell.
fn star(dims: usize, field: &str) -> String {
    let zero = vec!["0"; dims];
    let mut terms = vec![format!("0.4*{field}[{}]", zero.join(","))];
    for axis in 0..dims {
        for d in ["-1", "1"] {
            let mut at = zero.clone();
            at[axis] = d;
            terms.push(format!("0.1*{field}[{}]", at.join(",")));
        }
    }
    terms.join(" + ")
}

fn sample(dims: usize, dtype: &str, leapfrog: bool, strategy: &str, boundary: &str) -> String {
    let zero = vec!["0"; dims].join(",");
    let levels = if leapfrog { ", levels = 2" } else { "" };
    let prev = if leapfrog {
        format!(" - 0.05*u.prev[{zero}]")
    } else {
        String::new()
    };
    let input = if strategy == "tensor" {
        String::new()
    } else {
        format!(" + 0.01*a*k[{zero}]")
    };
    format!(
        "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = {}\n[fields]\nu = {{ role = \"state\"{levels} }}\n\
         k = {{ role = \"input\" }}\n[params]\na = \"{dtype}\"\n[[update]]\ntarget = \"u\"\nexpr = \"{}{prev}{input}\"\n\
         [boundary]\nkind = \"{boundary}\"\n[tiling.cuda]\nstrategy = \"{strategy}\"\n[tiling.hip]\nstrategy = \"{}\"\n",
        axes(dims),
        star(dims, "u"),
        if strategy == "tensor" {
            "auto"
        } else {
            strategy
        }
    )
}

fn sample_with_temp(dims: usize, dtype: &str) -> String {
    let zero = vec!["0"; dims].join(",");
    format!(
        "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = {}\n[fields]\nu = {{ role = \"state\" }}\nw = {{ role = \"state\" }}\n\
         t = {{ role = \"temp\" }}\n[[update]]\ntarget = \"t\"\nexpr = \"{}\"\n[[update]]\ntarget = \"u\"\n\
         expr = \"0.5*u[{zero}] + 0.1*t[{zero}]\"\n[[update]]\ntarget = \"w\"\nexpr = \"0.5*w[{zero}] + 0.1*u[{zero}]\"\n",
        axes(dims),
        star(dims, "u")
    )
}

/// Every identifier in the code generated for `samples` (comments and
/// strings left out) that has the form of a spec's name: a lower-case
/// letter, then lower-case letters, digits and single `_`.
pub fn generated_identifiers() -> Vec<String> {
    let mut names = BTreeSet::new();
    for text in samples() {
        // Strategies a sample cannot take (`stream` in 1-D) are refused.
        let generated = crate::compile::generate("sample.stencil.toml", &text);
        let Some(s) = generated.unwrap_or_else(|e| panic!("{e}")) else {
            continue;
        };
        for code in [&s.rust, &s.openmp, &s.cuda, &s.hip] {
            names.extend(identifiers(&without_comments_and_strings(code)));
        }
    }
    names.into_iter().collect()
}

/// `code` with its comments and string literals blanked.
fn without_comments_and_strings(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(['/', '"']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        // What the comment or string spans, blanked; a lone `/` is kept.
        let (end, kept) = if tail.starts_with("//") {
            (tail.find('\n').unwrap_or(tail.len()), " ")
        } else if tail.starts_with("/*") {
            (tail.find("*/").map_or(tail.len(), |e| e + 2), " ")
        } else if tail.starts_with('"') {
            (string_end(tail), " ")
        } else {
            (1, "/")
        };
        out.push_str(kept);
        rest = &tail[end..];
    }
    out + rest
}

/// The length of the string literal opening `text`, escapes included.
fn string_end(text: &str) -> usize {
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return i + 1,
            _ => escaped = false,
        }
    }
    text.len()
}

fn identifiers(code: &str) -> impl Iterator<Item = String> + '_ {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| is_name(w))
        .map(str::to_string)
}

/// Whether `w` has the form of a name in a spec.
pub fn is_name(w: &str) -> bool {
    w.starts_with(|c: char| c.is_ascii_lowercase())
        && w.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !w.contains("__")
}

/// The name candidates: [`generated_identifiers`] and [`LANGUAGE_WORDS`].
pub fn candidates() -> Vec<String> {
    let mut names: BTreeSet<String> = generated_identifiers().into_iter().collect();
    names.extend(LANGUAGE_WORDS.iter().map(|w| w.to_string()));
    names.into_iter().collect()
}

/// A spec of one state field named `name`, to learn whether the validator
/// takes the name at all.
pub fn spec_of_one(name: &str) -> String {
    format!(
        "[stencil]\nname = \"one\"\ndtype = \"f32\"\naxes = [\"y\", \"x\"]\n[fields]\n{name} = {{ role = \"state\" }}\n\
         [[update]]\ntarget = \"{name}\"\nexpr = \"0.5*{name}[0,0] + 0.1*{name}[0,1]\"\n"
    )
}

/// The layouts [`specs_naming`] gives each batch of names: axes, dtype,
/// whether the first state is a leapfrog, the GPU strategy, and whether a
/// temp field is among the names.
const LAYOUTS: [(usize, &str, bool, &str, bool); 8] = [
    (3, "f64", false, "auto", false),
    (2, "f32", true, "auto", true),
    (3, "f32", false, "stream", false),
    (2, "f64", false, "tiled", true),
    (3, "f32", true, "persistent", false),
    (1, "f64", false, "auto", true),
    (2, "f32", false, "temporal", false),
    (3, "f64", true, "naive", true),
];

/// Specs, each named after its first state field, that together give each
/// of `names` (all of which the validator takes) to a state field (the
/// stencil's name too), an input grid, a param, a constant and a temp field
/// in turn, in every layout of `LAYOUTS`; `per_spec` names a spec.
pub fn specs_naming(names: &[String], per_spec: usize) -> Vec<(String, String)> {
    let mut specs = Vec::new();
    // Batches of even sizes: each holds a first state for every layout.
    let count = names.len().div_ceil(per_spec);
    let batches = (0..count).map(|b| {
        names
            .iter()
            .skip(b)
            .step_by(count)
            .cloned()
            .collect::<Vec<_>>()
    });
    for (b, batch) in batches.enumerate() {
        for (l, layout) in LAYOUTS.iter().enumerate() {
            // Each layout turns the roles by one more name.
            let mut turned = batch.to_vec();
            turned.rotate_left(l % batch.len());
            specs.push((format!("b{b}_{l}"), spec_naming(&turned, *layout)));
        }
    }
    specs
}

fn spec_naming(names: &[String], layout: (usize, &str, bool, &str, bool)) -> String {
    let (dims, dtype, leapfrog, strategy, temps) = layout;
    let fused = matches!(strategy, "temporal" | "persistent");
    let roles: &[&str] = match (fused, temps) {
        (true, _) => &["input", "param", "const"],
        (false, true) => &["state", "input", "param", "const", "temp"],
        (false, false) => &["state", "input", "param", "const"],
    };
    let (first, rest) = names.split_first().expect("a batch holds names");
    let of = |role: &str| -> Vec<&String> {
        rest.iter()
            .enumerate()
            .filter(|(i, _)| roles[i % roles.len()] == role)
            .map(|(_, n)| n)
            .collect()
    };
    let zero = vec!["0"; dims].join(",");
    let mut s = format!(
        "[stencil]\nname = \"{first}\"\ndtype = \"{dtype}\"\naxes = {}\n[fields]\n",
        axes(dims)
    );
    let levels = if leapfrog { ", levels = 2" } else { "" };
    let _ = writeln!(s, "{first} = {{ role = \"state\"{levels} }}");
    for (role, names) in [
        ("state", of("state")),
        ("input", of("input")),
        ("temp", of("temp")),
    ] {
        for n in names {
            let _ = writeln!(s, "{n} = {{ role = \"{role}\" }}");
        }
    }
    s.push_str("[params]\n");
    for n in of("param") {
        let _ = writeln!(s, "{n} = \"{dtype}\"");
    }
    s.push_str("[constants]\n");
    for n in of("const") {
        let _ = writeln!(s, "{n} = 0.01");
    }
    let mut extra: Vec<String> = of("input")
        .iter()
        .map(|n| format!("0.01*{n}[{zero}]"))
        .collect();
    extra.extend(of("param").iter().map(|n| format!("0.01*{n}")));
    extra.extend(of("const").iter().map(|n| n.to_string()));
    for t in of("temp") {
        let _ = writeln!(
            s,
            "[[update]]\ntarget = \"{t}\"\nexpr = \"0.5*{}\"",
            star(dims, first)
        );
        extra.push(format!("0.01*{t}[{zero}]"));
    }
    if extra.is_empty() {
        extra.push(format!("0.1*{first}[{zero}]"));
    }
    let prev = if leapfrog {
        format!(" - 0.1*{first}.prev[{zero}]")
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "[[update]]\ntarget = \"{first}\"\nexpr = \"0.5*{}{prev} + {}\"",
        star(dims, first),
        extra.join(" + ")
    );
    for n in of("state") {
        let _ = writeln!(
            s,
            "[[update]]\ntarget = \"{n}\"\nexpr = \"0.5*{n}[{zero}] + 0.1*{first}[{zero}]\""
        );
    }
    let _ = writeln!(
        s,
        "[tiling.cuda]\nstrategy = \"{strategy}\"\n[tiling.hip]\nstrategy = \"{strategy}\""
    );
    s
}
