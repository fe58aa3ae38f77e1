//! Every spec stencil-build accepts builds on every backend: random specs
//! (a proptest strategy, shrunk on failure) and specs whose names are the
//! generated code's own identifiers or words of the target languages are
//! either refused with located errors or generate code that compiles with
//! the C compiler (`-Wall -Wextra -Werror`), rustc or clippy (`-D
//! warnings`, `undocumented_unsafe_blocks`), nvcc and hipcc.
//!
//! Without nvcc or hipcc their sources are not compiled here (CI has both
//! and fails without them). `PROPTEST_CASES` sets the number of random
//! batches (default 8 with `STENCIL_TESTS=full`, 2 otherwise, each of
//! [`PER_CASE`] specs).

use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use stencil_spec_check::compile::{self, Accepted, Compilers, Depth};
use stencil_spec_check::names;
use stencil_spec_check::random::{self, RandomStencil, slow_cases};

/// Random specs compiled together in one case.
const PER_CASE: usize = 6;

fn compilers() -> &'static Compilers {
    static FOUND: OnceLock<Compilers> = OnceLock::new();
    FOUND.get_or_init(|| {
        let c = Compilers::find().unwrap_or_else(|e| panic!("{e}"));
        for backend in c.missing() {
            eprintln!(
                "note: no compiler for {backend} here: its sources are generated, not compiled"
            );
        }
        c
    })
}

/// A scratch folder of this test binary's.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("accepted-specs")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Generates each of `specs` (name, text); compiles those accepted.
/// Returns how many were accepted.
fn check(specs: &[(String, String)], dir: &str, depth: Depth) -> Result<usize, String> {
    let mut accepted = Vec::new();
    for (name, text) in specs {
        if let Some(sources) = compile::generate(&format!("{name}.stencil.toml"), text)? {
            accepted.push(Accepted {
                name: name.clone(),
                text: text.clone(),
                sources,
            });
        }
    }
    compile::compile(compilers(), &accepted, &scratch(dir), depth)?;
    Ok(accepted.len())
}

proptest! {
    #![proptest_config(slow_cases(8, 32))]

    #[test]
    fn random_specs_are_refused_where_located_or_compile_on_every_backend(
        batch in proptest::collection::vec(RandomStencil::compilable(), PER_CASE)
    ) {
        let specs: Vec<(String, String)> = batch
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("random_{i}"), s.to_toml(&format!("random_{i}"))))
            .collect();
        let accepted = check(&specs, "random", Depth::Full).map_err(TestCaseError::fail)?;
        eprintln!("{accepted} of {PER_CASE} random specs accepted and compiled");
    }
}

/// Each identifier of the generated code and each word of C, C++, CUDA and
/// Rust, as a field, param, constant, temp and stencil name, in several
/// layouts and strategies: refused where located, else compiling.
#[test]
fn names_of_the_generated_code_and_the_languages_never_break_a_build() {
    let mut taken = Vec::new();
    let started = std::time::Instant::now();
    for name in names::candidates() {
        let spec = names::spec_of_one(&name);
        if compile::generate("one.stencil.toml", &spec)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_some()
        {
            taken.push(name);
        }
    }
    assert!(taken.len() > 400, "only {} names were taken", taken.len());
    eprintln!("{} names taken, {:.1?}", taken.len(), started.elapsed());
    let specs = names::specs_naming(&taken, 24);
    // Units of a few dozen specs: one compiler run each; every fourth unit
    // unless the whole matrix is asked for (each unit mixes layouts and roles).
    let step = if random::whole_matrix() { 1 } else { 4 };
    for (k, part) in specs.chunks(48).enumerate().step_by(step) {
        let accepted =
            check(part, &format!("names-{k}"), Depth::FrontEnd).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            accepted,
            part.len(),
            "a spec of names the validator takes one by one was refused"
        );
    }
}

/// A change to generated code.
type Edit = fn(&mut compile::Sources);

/// The check can fail: code that does not compile is reported with its
/// spec, for every backend whose compiler is here; a panic or an error
/// without a location is reported too.
#[test]
fn the_check_catches_code_that_does_not_compile() {
    let text = names::spec_of_one("u");
    let sources = compile::generate("one.stencil.toml", &text)
        .unwrap()
        .unwrap();
    let broken = |edit: Edit| {
        let mut sources = sources.clone();
        edit(&mut sources);
        let spec = Accepted {
            name: "one".into(),
            text: text.clone(),
            sources,
        };
        compile::compile(compilers(), &[spec], &scratch("broken"), Depth::FrontEnd)
    };
    let backends: [(&str, Edit); 4] = [
        (
            "OpenMP-C",
            (|s| {
                s.openmp
                    .push_str("\nint unused(void) { int x; return 0; }\n")
            }),
        ),
        ("Rust", (|s| s.rust.push_str("\nfn unused() {}\n"))),
        ("CUDA", (|s| s.cuda.push_str("\nint clash = undeclared;\n"))),
        ("HIP", (|s| s.hip.push_str("\nint clash = undeclared;\n"))),
    ];
    for (backend, edit) in &backends {
        let err = broken(*edit).expect_err(backend);
        assert!(
            err.contains(&format!(
                "the {backend} code of an accepted spec does not compile"
            )),
            "{err}"
        );
        assert!(err.contains("[stencil]"), "the spec is shown: {err}");
    }
    let refused = compile::generate(
        "bad.stencil.toml",
        &text.replace("0.1*u[0,1]", "0.1*v[0,1]"),
    );
    assert!(matches!(refused, Ok(None)));
}
