//! Random stencils, differential: proptest draws valid specs
//! ([`RandomStencil`]: 1 to 3 axes, offsets up to 4, several fields, temps,
//! leapfrog, params, f32/f64, fixed/periodic, random cache blocks); each is
//! compiled by stencil-build as a user's crate would compile it (a scratch
//! crate, `cargo run`), and its OpenMP backend is compared with its Rust
//! reference by the cross-backend harness (every shape, 0, 1 and 5 steps).
//! A failure is shrunk to a smallest spec, printed, and its seed kept in
//! `proptest-regressions/random_stencils.txt`, so that it is replayed first.
//!
//! The GPU strategies get random stencils from `build.rs`: a fixed set drawn
//! from the same strategy, built with every strategy as `random_*` variants.
//!
//! `PROPTEST_CASES` sets the number of cases (default 64 with
//! `STENCIL_TESTS=full`, 16 otherwise).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use stencil_rt::openmp::Isa;
use stencil_spec_check::random::{RandomStencil, slow_cases};

/// The scratch crate: its build script compiles `stencils/random.stencil.toml`;
/// its `main` checks the OpenMP backend against the reference and panics
/// with the harness's message on a difference.
fn scratch() -> &'static (PathBuf, PathBuf) {
    static SCRATCH: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    SCRATCH.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("random-stencils");
        let dir = root.join("crate");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::create_dir_all(dir.join("stencils")).unwrap();
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let manifest = format!(
            "[package]\nname = \"random-stencil\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [features]\ndefault = [\"openmp\"]\nopenmp = []\n\n\
             [dependencies]\nstencil-rt = {{ path = {:?} }}\nstencil-test-numbers = {{ path = {:?} }}\n\n\
             [build-dependencies]\nstencil-build = {{ path = {:?} }}\n\n\
             [profile.dev]\nopt-level = 1\n\n[workspace]\n",
            here.join("../stencil-rt").display().to_string(),
            here.join("numbers").display().to_string(),
            here.join("../stencil-build").display().to_string()
        );
        let main = format!(
            "include!(concat!(env!(\"OUT_DIR\"), \"/stencils.rs\"));\n\n\
             #[path = {:?}]\nmod harness;\n\n\
             /// The OpenMP backend with one cell off by 1e-3: what the harness must catch.\n\
             fn wrong(g: &mut [&mut [random::Real]], shape: &[usize], p: &[random::Real], steps: u64) -> Result<(), StencilError> {{\n    \
             random::openmp::run_grids(g, shape, p, steps)?;\n    let mid = g[0].len() / 2;\n    g[0][mid] += 1e-3;\n    Ok(())\n}}\n\n\
             fn main() {{\n    let backends: &'static [(&str, harness::RunGrids<random::Real>)] = if std::env::var_os(\"RANDOM_WRONG\").is_some() {{\n        \
             &[(\"openmp\", wrong)]\n    }} else {{\n        &[(\"openmp\", random::openmp::run_grids)]\n    }};\n    \
             let e = harness::Entry {{\n        name: \"random\",\n        grids: random::GRIDS,\n        \
             params: random::PARAMS,\n        min_shape: &random::MIN_SHAPE,\n        flops: random::FLOPS_PER_CELL,\n        \
             block: &random::openmp::TILING.block,\n        cuda_tiling: None,\n        reference: random::reference::run_grids,\n        \
             backends,\n    }};\n    \
             harness::check_against_reference(&e, \"openmp\");\n}}\n",
            here.join("src/harness.rs").display().to_string()
        );
        let files = [
            ("Cargo.toml", manifest.as_str()),
            (
                "build.rs",
                // Each case names itself in RANDOM_CASE, so that the build
                // script reruns whatever the spec file's time.
                "fn main() -> Result<(), stencil_build::Error> {\n    \
                 println!(\"cargo:rerun-if-env-changed=RANDOM_CASE\");\n    stencil_build::compile()\n}\n",
            ),
            ("src/main.rs", main.as_str()),
        ];
        for (path, text) in files {
            std::fs::write(dir.join(path), text).unwrap();
        }
        // The workspace's lock file: the same, already downloaded, versions.
        std::fs::copy(here.join("../Cargo.lock"), dir.join("Cargo.lock")).unwrap();
        (dir, root.join("target"))
    })
}

/// Compiles `spec` in the scratch crate and runs the comparison (of a
/// deliberately `wrong` backend when asked).
fn compile_and_compare(spec: &str, wrong: bool) -> Result<(), TestCaseError> {
    // One case at a time: the tests share the scratch crate.
    static BUSY: Mutex<()> = Mutex::new(());
    let _busy = BUSY.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, target) = scratch();
    std::fs::write(dir.join("stencils/random.stencil.toml"), spec).unwrap();
    let case = format!("{:016x}", fnv1a(spec.as_bytes()));
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["run", "--quiet", "--offline"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env("RANDOM_CASE", case);
    if wrong {
        cmd.env("RANDOM_WRONG", "1");
    }
    // Only the copy of the widest x86-64 level this machine runs, beside the
    // target's: the harness checks the random stencil at both (a lower
    // level would run the target's copy again), and each copy more is one
    // more compilation of an expression that can be long.
    let top = Isa::detected();
    let levels = if top == Isa::Baseline {
        "none"
    } else {
        top.name()
    };
    cmd.env("STENCIL_OPENMP_LEVELS", levels);
    let out = cmd
        .output()
        .map_err(|e| TestCaseError::fail(format!("cargo run: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(30).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(TestCaseError::fail(format!(
        "spec:\n{spec}\n{}",
        tail.join("\n")
    )))
}

/// FNV-1a: a stable name for a case.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

proptest! {
    #![proptest_config(slow_cases(64, 64))]

    #[test]
    fn random_stencils_match_their_reference_on_openmp(stencil in RandomStencil::strategy()) {
        compile_and_compare(&stencil.to_toml("random"), false)?;
    }
}

/// The comparison can fail: the OpenMP backend of a random-like spec with one
/// cell moved by 1e-3 is caught; and a spec stencil-build rejects fails the
/// case with the build's located error.
#[test]
fn a_wrong_backend_or_a_broken_spec_fails_the_case() {
    let good = "[stencil]\nname = \"random\"\ndtype = \"f32\"\naxes = [\"y\", \"x\"]\n[fields]\nu = { role = \"state\" }\n\
                [[update]]\ntarget = \"u\"\nexpr = \"(0.3)*u[0,0] + (0.2)*u[-1,2] + (-0.2)*u[1,0]\"\n";
    compile_and_compare(good, false).unwrap();
    let err = compile_and_compare(good, true).unwrap_err().to_string();
    assert!(err.contains("> tolerance"), "{err}");
    let broken = good.replace("u[1,0]", "v[1,0]");
    let err = compile_and_compare(&broken, false).unwrap_err().to_string();
    assert!(
        err.contains("random.stencil.toml:9:47") && err.contains("unknown field or table `v`"),
        "{err}"
    );
}
