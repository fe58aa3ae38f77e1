//! What the generated code of every spec in the repository holds (the
//! examples, the tests' specs and the performance corpus), beyond what the
//! snapshots show: no declaration that nothing reads, no helper that nothing
//! calls.

use std::path::{Path, PathBuf};

use stencil_build::generate;

/// Every `*.stencil.toml` under `dir`, recursively.
fn specs(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && !path.ends_with("target") {
            specs(&path, out);
        } else if path.to_string_lossy().ends_with(".stencil.toml") {
            out.push(path);
        }
    }
}

/// The names `const <type> <name> = ...;` declares in `code` (C, CUDA or
/// HIP) that neither the rest of its line nor a later line of the same
/// function reads.
fn unread_declarations(code: &str) -> Vec<String> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut unread = Vec::new();
    for function in code.split("\n}\n") {
        let lines: Vec<&str> = function.lines().collect();
        for (k, line) in lines.iter().enumerate() {
            let line = line.trim();
            let Some((head, after)) = line.split_once(" = ") else {
                continue;
            };
            if !line.starts_with("const ") || head.contains('(') {
                continue;
            }
            let Some(name) = head.split(|c| !ident(c)).rfind(|w| !w.is_empty()) else {
                continue;
            };
            let reads = |l: &str| l.split(|c| !ident(c)).any(|w| w == name);
            if !reads(after) && !lines[k + 1..].iter().any(|l| reads(l)) {
                unread.push(name.to_string());
            }
        }
    }
    unread
}

/// The `static` functions (C's and the devices' helpers, kernels) that
/// `code` defines and never names again. nvcc refuses an uncalled device
/// helper under `--Werror`; the C compilers do not warn of an uncalled
/// `static inline` one, which is dead code all the same.
fn uncalled_functions(code: &str) -> Vec<String> {
    fn words(line: &str) -> impl Iterator<Item = &str> {
        line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
    }
    let mut uses = std::collections::HashMap::new();
    for word in code.lines().flat_map(words) {
        *uses.entry(word).or_insert(0) += 1;
    }
    let mut uncalled = Vec::new();
    for line in code.lines().filter(|l| l.starts_with("static ")) {
        // The name is the word before the parameters' parenthesis (after
        // `__launch_bounds__(..)`, if any).
        let head = line
            .rsplit_once("__launch_bounds__")
            .map_or(line, |(_, h)| h.split_once(')').map_or(h, |(_, rest)| rest));
        let Some((before, _)) = head.split_once('(') else {
            continue;
        };
        if let Some(name) = words(before).last()
            && uses[name] < 2
        {
            uncalled.push(name.to_string());
        }
    }
    uncalled
}

#[test]
fn the_checker_finds_an_uncalled_function() {
    let code = "static inline int twice(int n)\n{\n    return 2 * n;\n}\n\n\
                static __global__ void __launch_bounds__(256) k(int *p)\n{\n    p[0] = 1;\n}\n\n\
                static inline int once(int n)\n{\n    return n;\n}\n\n\
                int f(int *p)\n{\n    k<<<1, 1>>>(p);\n    return twice(p[0]);\n}\n";
    assert_eq!(uncalled_functions(code), vec!["once".to_string()]);
}

#[test]
fn the_checker_finds_an_unread_declaration() {
    let code = "int f(int n)\n{\n    const ptrdiff_t lo0 = 0;\n    const double *const at = p + n;\n    return at[1];\n}\n";
    assert_eq!(unread_declarations(code), vec!["lo0".to_string()]);
}

#[test]
fn no_generated_declaration_goes_unread_and_no_helper_uncalled() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["examples", "tests/stencils"] {
        specs(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "{} specs", files.len());
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let sources = generate(file, &text).unwrap_or_else(|e| panic!("{e}"));
        for (backend, code) in [
            ("c", &sources.openmp),
            ("cuda", &sources.cuda),
            ("hip", &sources.hip),
        ] {
            for name in unread_declarations(code) {
                found.push(format!("{} ({backend}): {name}", file.display()));
            }
            for name in uncalled_functions(code) {
                found.push(format!("{} ({backend}): {name}()", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn region_launchers_declare_only_the_spans_they_read() {
    // The region outside a half-space box is one slab of whole rows, which
    // runs the plan's kernels through a launcher of its own: the
    // statement's launcher reads no span. In 3-D with a fixed boundary the
    // plan's kernels cover that whole slab but on small grids: its launcher
    // reads `lo` and `hi` for the fallback, no `in_lo` or `in_hi`.
    let plane = "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n\
                 [fields]\nu = { role = \"state\" }\n\
                 [regions]\ntop = { y = [6, \"n\"] }\nrest = { outside = \"top\" }\n\
                 [[update]]\ntarget = \"u\"\nregion = \"top\"\nexpr = \"u[0,0] + 0.1*(u[-1,0] + u[1,1])\"\n\
                 [[update]]\ntarget = \"u\"\nregion = \"rest\"\nexpr = \"0.5*(u[1,0] + u[0,-1])\"\n\
                 [boundary]\ny = [\"periodic\", \"periodic\"]\nx = [\"fixed\", \"reflect\"]\n";
    let space = "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n\
                 [fields]\nu = { role = \"state\" }\n\
                 [regions]\ntop = { z = [4, \"n\"] }\nrest = { outside = \"top\" }\n\
                 [[update]]\ntarget = \"u\"\nregion = \"top\"\nexpr = \"u[0,0,0] + 0.1*(u[-1,0,0] + u[0,1,1])\"\n\
                 [[update]]\ntarget = \"u\"\nregion = \"rest\"\nexpr = \"0.5*(u[1,0,0] + u[0,0,-1])\"\n";
    let cases = [(plane, "_in_rest_below_y("), (space, "_in_rest_below_z(")];
    for (text, slab) in cases {
        let sources = generate("s.stencil.toml", text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        for (dialect, code) in [("cuda", &sources.cuda), ("hip", &sources.hip)] {
            assert!(code.contains(slab), "{dialect}: {code}");
            assert_eq!(unread_declarations(code), Vec::<String>::new(), "{dialect}");
        }
    }
}
