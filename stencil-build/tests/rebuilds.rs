//! A crate that uses stencil-build, built again and again with `cargo build
//! -v`: editing a spec, adding one and changing `STENCIL_CUDA_ARCH` rerun its
//! build script; nothing else does, not even the specs a build script
//! writes into `OUT_DIR` itself. A build script that runs again with the
//! same specs (after `touch build.rs`) compiles no kernel and rewrites no
//! generated file. A missing toolchain fails the build with a message
//! saying where it looked and what to set. A debug build compiles its CUDA
//! kernels without `-G`. The OpenMP C's x86-64 copies are the levels
//! `Config::openmp_levels` and `STENCIL_OPENMP_LEVELS` ask for.

use std::path::{Path, PathBuf};
use std::process::Command;

const SPEC: &str = "[stencil]\ndtype = \"f32\"\naxes = [\"y\", \"x\"]\n[fields]\nu = { role = \"state\" }\n[[update]]\ntarget = \"u\"\nexpr = \"0.25*(u[-1,0] + u[1,0] + u[0,-1] + u[0,1])\"\n";

/// A scratch downstream crate (`probe-<name>`); the probes share one target
/// folder (and so build stencil-build once), so each has its own name.
struct Probe {
    name: String,
    root: PathBuf,
    dir: PathBuf,
    target: PathBuf,
}

impl Probe {
    fn new(name: &str) -> Probe {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        let dir = root.join("crate");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::create_dir_all(dir.join("stencils")).unwrap();
        let stencil_build = Path::new(env!("CARGO_MANIFEST_DIR"));
        let manifest = format!(
            "[package]\nname = \"probe-{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [features]\nopenmp = []\ncuda = []\n\n\
             [dependencies]\nstencil-rt = {{ path = {:?} }}\n\n\
             [build-dependencies]\nstencil-build = {{ path = {:?} }}\n\n[workspace]\n",
            stencil_build.join("../stencil-rt").display().to_string(),
            stencil_build.display().to_string()
        );
        let files = [
            ("Cargo.toml", manifest.as_str()),
            (
                "build.rs",
                "fn main() -> Result<(), stencil_build::Error> {\n    stencil_build::compile()\n}\n",
            ),
            (
                "src/lib.rs",
                "include!(concat!(env!(\"OUT_DIR\"), \"/stencils.rs\"));\n",
            ),
            ("stencils/blur.stencil.toml", SPEC),
        ];
        for (path, text) in files {
            std::fs::write(dir.join(path), text).unwrap();
        }
        // The workspace's lock file: the same, already downloaded, versions.
        std::fs::copy(stencil_build.join("../Cargo.lock"), dir.join("Cargo.lock")).unwrap();
        let target = root.parent().unwrap().join("rebuild-probes-target");
        let name = format!("probe-{name}-");
        // An earlier run's build script outputs (its kernels) are not this run's.
        for entry in std::fs::read_dir(target.join("debug/build"))
            .into_iter()
            .flatten()
        {
            let path = entry.unwrap().path();
            if path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&name)
            {
                std::fs::remove_dir_all(&path).unwrap();
            }
        }
        Probe {
            name,
            root,
            dir,
            target,
        }
    }

    /// `cargo build -v --offline` with `features` and the environment changed
    /// by `env` (`None` removes a variable); returns success and what it
    /// printed (stderr, then stdout).
    fn build(&self, features: &str, env: &[(&str, Option<&str>)]) -> (bool, String) {
        self.cargo_build("-v", features, env)
    }

    /// [`Self::build`] at `verbosity` (`-vv` also shows what build scripts print).
    fn cargo_build(
        &self,
        verbosity: &str,
        features: &str,
        env: &[(&str, Option<&str>)],
    ) -> (bool, String) {
        // File times must differ from the last build's for Cargo to see a change.
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", verbosity, "--offline", "--features", features])
            .current_dir(&self.dir)
            .env("CARGO_TARGET_DIR", &self.target);
        for (var, value) in env {
            match value {
                Some(v) => cmd.env(var, v),
                None => cmd.env_remove(var),
            };
        }
        let out = cmd.output().unwrap();
        // With `-vv` the build scripts' output comes on stdout.
        let printed = [&out.stderr, &out.stdout].map(|b| String::from_utf8_lossy(b).into_owned());
        (out.status.success(), printed.concat())
    }

    /// Builds and says whether the probe's build script ran.
    fn rebuilt(&self, features: &str, env: &[(&str, Option<&str>)]) -> bool {
        let (ok, log) = self.build(features, env);
        assert!(ok, "{log}");
        log.lines().any(|l| {
            l.contains("Running `") && l.contains(&self.name) && l.contains("build-script-build")
        })
    }

    /// The modification time of every file of the probe's `OUT_DIR` (of its
    /// latest build script run) but `cc`'s flag probes, by name.
    fn out_files(&self) -> Vec<(String, std::time::SystemTime)> {
        let build = self.target.join("debug/build");
        let out = std::fs::read_dir(&build)
            .unwrap()
            .map(|e| e.unwrap().path().join("out"))
            .filter(|out| {
                out.join("stencils.rs").is_file()
                    && out
                        .parent()
                        .unwrap()
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with(&self.name)
            })
            .max_by_key(|out| {
                out.join("stencils.rs")
                    .metadata()
                    .unwrap()
                    .modified()
                    .unwrap()
            })
            .expect("a build script's OUT_DIR with stencils.rs");
        let mut files = Vec::new();
        let mut stack = vec![out.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let name = path.strip_prefix(&out).unwrap().display().to_string();
                    // `cc`'s probe of a flag the compiler may not take, run on every build.
                    if !name.starts_with("flag_check") {
                        files.push((name, path.metadata().unwrap().modified().unwrap()));
                    }
                }
            }
        }
        files.sort();
        files
    }

    /// Touches `build.rs` and builds with `features`: the build script runs
    /// again, compiles no kernel and rewrites no file of `OUT_DIR`. Returns
    /// how long the build took.
    fn touched_build_compiles_nothing(
        &self,
        features: &str,
        env: &[(&str, Option<&str>)],
    ) -> std::time::Duration {
        let before = self.out_files();
        let script = std::fs::read_to_string(self.dir.join("build.rs")).unwrap();
        self.write("build.rs", &script);
        let start = std::time::Instant::now();
        // `build` sleeps first so that the touch is seen; time the build alone.
        let (ok, log) = self.cargo_build("-v", features, env);
        let took = start.elapsed() - std::time::Duration::from_millis(1100);
        assert!(ok, "{log}");
        assert!(
            log.lines().any(|l| l.contains("Running `")
                && l.contains(&self.name)
                && l.contains("build-script-build")),
            "the build script ran again: {log}"
        );
        assert_eq!(
            self.out_files(),
            before,
            "no file of OUT_DIR was written again"
        );
        took
    }

    fn write(&self, path: &str, text: &str) {
        let path = self.dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

#[test]
fn specs_and_only_specs_rerun_the_build_script() {
    let p = Probe::new("rebuild-openmp");
    assert!(p.rebuilt("openmp", &[]), "the first build runs it");
    assert!(!p.rebuilt("openmp", &[]), "nothing changed");
    p.write("notes.md", "not a spec\n");
    p.write(
        "src/lib.rs",
        "// edited\ninclude!(concat!(env!(\"OUT_DIR\"), \"/stencils.rs\"));\n",
    );
    assert!(
        !p.rebuilt("openmp", &[]),
        "a new file and an edited source are not specs"
    );
    p.write("stencils/blur.stencil.toml", &SPEC.replace("0.25", "0.2"));
    assert!(p.rebuilt("openmp", &[]), "an edited spec");
    p.write(
        "stencils/more/sharpen.stencil.toml",
        &SPEC.replace("0.25*(", "2*u[0,0] - 0.25*("),
    );
    assert!(p.rebuilt("openmp", &[]), "a new spec in a sub-folder");
    assert!(!p.rebuilt("openmp", &[]), "and then nothing again");
}

#[test]
fn a_build_script_run_again_on_the_same_specs_compiles_no_kernel() {
    let p = Probe::new("touch-openmp");
    assert!(p.rebuilt("openmp", &[]), "the first build runs it");
    let took = p.touched_build_compiles_nothing("openmp", &[]);
    println!("openmp: `touch build.rs`, then `cargo build`: {took:?}");
    // An edited spec compiles its kernels again, and only that spec's file changes.
    p.write("stencils/blur.stencil.toml", &SPEC.replace("0.25", "0.2"));
    let before = p.out_files();
    assert!(p.rebuilt("openmp", &[]));
    let after = p.out_files();
    let changed: Vec<&str> = after
        .iter()
        .filter(|f| !before.contains(f))
        .map(|(name, _)| name.as_str())
        .collect();
    assert!(changed.iter().any(|n| n.ends_with("blur.c")), "{changed:?}");
    assert!(
        !changed.iter().any(|n| n.ends_with("openmp_runtime.c")),
        "{changed:?}"
    );
}

/// The x86-64 copies of the OpenMP C a build of the baseline target
/// compiles: both levels by default, those `Config::openmp_levels` names,
/// and over it those `STENCIL_OPENMP_LEVELS` names (a change of which reruns
/// the build script); a name that is no level fails the build, naming it.
#[test]
#[cfg(target_arch = "x86_64")]
fn the_levels_asked_for_are_the_copies_compiled() {
    if cfg!(target_feature = "avx2") {
        // A target with a level's features compiles no copy of it.
        return;
    }
    let p = Probe::new("openmp-levels");
    let copies = || -> Vec<String> {
        let mut names: Vec<String> = (p.out_files().into_iter())
            .map(|(name, _)| name)
            .filter(|name| name.starts_with("stencil-build/openmp/") && name.contains(".x86-64-"))
            .collect();
        names.sort();
        names
    };
    let unset = [("STENCIL_OPENMP_LEVELS", None)];
    assert!(p.rebuilt("openmp", &unset));
    let both = [
        "stencil-build/openmp/blur.x86-64-v3.c",
        "stencil-build/openmp/blur.x86-64-v4.c",
    ];
    assert_eq!(copies(), both);
    p.write(
        "build.rs",
        "fn main() -> Result<(), stencil_build::Error> {\n    \
         stencil_build::Config::new().openmp_levels(&[\"x86-64-v3\"]).compile()\n}\n",
    );
    assert!(p.rebuilt("openmp", &unset));
    assert_eq!(copies(), both[..1]);
    assert!(p.rebuilt("openmp", &[("STENCIL_OPENMP_LEVELS", Some("x86-64-v4"))]));
    assert_eq!(copies(), both[1..]);
    assert!(p.rebuilt("openmp", &[("STENCIL_OPENMP_LEVELS", Some("none"))]));
    assert!(copies().is_empty());
    let (ok, log) = p.build("openmp", &[("STENCIL_OPENMP_LEVELS", Some("avx512"))]);
    assert!(!ok);
    assert!(
        log.contains("STENCIL_OPENMP_LEVELS=avx512: `avx512` is no instruction-set level"),
        "{log}"
    );
}

#[test]
#[ignore = "needs nvcc on PATH or in CUDA_PATH/NVCC; .ci/run runs it after installing nvcc"]
fn a_cuda_build_script_run_again_on_the_same_specs_compiles_no_kernel() {
    let p = Probe::new("touch-cuda");
    let arch = [("STENCIL_CUDA_ARCH", Some("sm_90"))];
    let start = std::time::Instant::now();
    assert!(p.rebuilt("cuda", &arch), "the first build runs it");
    println!("cuda: the first build: {:?}", start.elapsed());
    let took = p.touched_build_compiles_nothing("cuda", &arch);
    println!("cuda: `touch build.rs`, then `cargo build`: {took:?}");
}

#[test]
fn specs_a_build_script_writes_to_out_dir_do_not_rerun_it() {
    let p = Probe::new("rebuild-generated");
    // The build script writes its spec into OUT_DIR (as tests/build.rs and the
    // suite do) from a template it watches itself.
    p.write(
        "build.rs",
        "fn main() -> Result<(), Box<dyn std::error::Error>> {\n    \
         println!(\"cargo:rerun-if-changed=stencils\");\n    \
         let dir = std::path::PathBuf::from(std::env::var(\"OUT_DIR\")?).join(\"generated\");\n    \
         std::fs::create_dir_all(&dir)?;\n    \
         std::fs::copy(\"stencils/blur.stencil.toml\", dir.join(\"blur.stencil.toml\"))?;\n    \
         stencil_build::Config::new().search_dir(&dir).compile()?;\n    \
         Ok(())\n}\n",
    );
    assert!(p.rebuilt("openmp", &[]), "the first build runs it");
    assert!(
        !p.rebuilt("openmp", &[]),
        "the spec it wrote during its run is not a change"
    );
    p.write("stencils/blur.stencil.toml", &SPEC.replace("0.25", "0.2"));
    assert!(p.rebuilt("openmp", &[]), "an edited template");
    assert!(!p.rebuilt("openmp", &[]), "and then nothing again");
}

#[test]
#[ignore = "needs nvcc on PATH or in CUDA_PATH/NVCC; .ci/run runs it after installing nvcc"]
fn changing_stencil_cuda_arch_reruns_the_build_script() {
    let p = Probe::new("rebuild-cuda");
    let arch = |a| [("STENCIL_CUDA_ARCH", Some(a))];
    assert!(p.rebuilt("cuda", &arch("sm_80")));
    assert!(!p.rebuilt("cuda", &arch("sm_80")));
    assert!(p.rebuilt("cuda", &arch("sm_90")));
    assert!(!p.rebuilt("cuda", &arch("sm_90")));
}

#[test]
#[ignore = "needs nvcc on PATH or in CUDA_PATH/NVCC; .ci/run runs it after installing nvcc"]
fn a_debug_build_compiles_its_kernels_without_device_debug() {
    let p = Probe::new("cuda-debug");
    // `cc` prints each command it runs with CC_ENABLE_DEBUG_OUTPUT; `-vv` shows it.
    let (ok, log) = p.cargo_build("-vv", "cuda", &[("CC_ENABLE_DEBUG_OUTPUT", Some("1"))]);
    assert!(ok, "{log}");
    let nvcc = log
        .lines()
        .find(|l| l.contains("running: ") && l.contains("blur.cu\""))
        .unwrap_or_else(|| panic!("no nvcc command for blur.cu: {log}"));
    // In a debug profile `cc` would add `-G`: device code without optimization.
    assert!(!nvcc.contains("\"-G\""), "{nvcc}");
}

#[test]
fn a_missing_nvcc_fails_the_build_saying_where_it_looked() {
    let p = Probe::new("missing-nvcc");
    // A PATH with the Rust toolchain and the C compiler rustc links with, no nvcc.
    let bin = p.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let cc = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("cc"))
        .find(|c| c.is_file())
        .expect("a C compiler `cc` on PATH");
    let link = bin.join("cc");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(cc, &link).unwrap();
    let toolchain = Path::new(env!("CARGO")).parent().unwrap();
    let path = std::env::join_paths([toolchain, &bin]).unwrap();
    let path = path.to_str().unwrap();
    let (ok, log) = p.build(
        "cuda",
        &[
            ("PATH", Some(path)),
            ("NVCC", Some("/nonexistent/nvcc")),
            ("CUDA_PATH", None),
            ("CUDA_HOME", None),
        ],
    );
    assert!(!ok, "{log}");
    for needle in [
        "the cuda backend cannot be built: nvcc was not found",
        "/nonexistent/nvcc (NVCC)",
        "CUDA_PATH not set",
        "set CUDA_PATH",
    ] {
        assert!(log.contains(needle), "`{needle}` missing from:\n{log}");
    }
}
