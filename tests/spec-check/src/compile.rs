//! The contract's check: a spec is either refused with located errors, or
//! its generated code compiles for every backend. [`generate`] runs
//! stencil-build on one spec; [`compile`] compiles what it generated for
//! several specs with each backend's compiler, as strictly as a user's
//! build could: the OpenMP-C with `-Wall -Wextra -Werror`, the Rust API
//! with `-D warnings` and, where clippy is installed, its default lints and
//! `undocumented_unsafe_blocks`, the CUDA with nvcc (every warning an
//! error) and the HIP with hipcc.
//! Rust, CUDA and HIP compile as one unit per call (each spec in a module or
//! namespace of its own), so that a batch costs one run of each compiler.
//!
//! [`Depth::FrontEnd`] stops after the compilers' front ends (names, types,
//! syntax), for checks of many specs: nvcc's front end alone takes about 2 s
//! a generated source, so there the CUDA is checked as the emulated device's
//! C++ (`tests/cuda-on-cpu`, the launches rewritten as the test build does).

use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub use stencil_build::Sources;

/// The compilers of the backends on this machine.
#[derive(Clone, Debug)]
pub struct Compilers {
    /// A C compiler with OpenMP: `CC`, else `cc`.
    pub c: PathBuf,
    /// `clippy-driver` where clippy is installed, else `rustc`.
    pub rust: PathBuf,
    /// Whether [`Compilers::rust`] is clippy's driver.
    pub clippy: bool,
    /// nvcc (`NVCC`, `$CUDA_PATH/bin`, `PATH`), where found.
    pub nvcc: Option<PathBuf>,
    /// hipcc (`HIPCC`, `$ROCM_PATH/bin`, `PATH`), where found.
    pub hipcc: Option<PathBuf>,
}

impl Compilers {
    /// The compilers found. Under CI (`CI` set and not `false`), a missing
    /// GPU compiler is an error: there the check must cover every backend.
    pub fn find() -> Result<Compilers, String> {
        let c = std::env::var_os("CC").map_or_else(|| PathBuf::from("cc"), PathBuf::from);
        let clippy = runs(Path::new("clippy-driver"));
        let rust = PathBuf::from(if clippy { "clippy-driver" } else { "rustc" });
        let nvcc = found("NVCC", &["CUDA_PATH", "CUDA_HOME"], "nvcc");
        let hipcc = found("HIPCC", &["ROCM_PATH", "HIP_PATH"], "hipcc");
        let compilers = Compilers {
            c,
            rust,
            clippy,
            nvcc,
            hipcc,
        };
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
        match compilers.missing() {
            missing if ci && !missing.is_empty() => Err(format!(
                "CI must compile every backend, but no compiler was found for: {}",
                missing.join(", ")
            )),
            _ => Ok(compilers),
        }
    }

    /// The backends whose compiler is missing (their sources are not compiled).
    pub fn missing(&self) -> Vec<&'static str> {
        [("cuda", &self.nvcc), ("hip", &self.hipcc)]
            .into_iter()
            .filter(|(_, c)| c.is_none())
            .map(|(b, _)| b)
            .collect()
    }
}

/// Whether `program --version` runs.
fn runs(program: &Path) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `$var`, else `$root/bin/name` for the first root variable set, else
/// `name` on `PATH`: the first that runs.
fn found(var: &str, roots: &[&str], name: &str) -> Option<PathBuf> {
    let from_var = std::env::var_os(var).map(PathBuf::from);
    let from_roots = roots
        .iter()
        .filter_map(std::env::var_os)
        .map(|root| PathBuf::from(root).join("bin").join(name));
    from_var
        .into_iter()
        .chain(from_roots)
        .chain([PathBuf::from(name)])
        .find(|p| runs(p))
}

/// One spec stencil-build accepted, with what it generated.
#[derive(Clone, Debug)]
pub struct Accepted {
    /// The stencil's name: unique within a call of [`compile`].
    pub name: String,
    /// The spec.
    pub text: String,
    /// The generated code.
    pub sources: Sources,
}

/// Runs stencil-build on `text` (shown as `file`): `Ok(Some)` with the
/// generated code, `Ok(None)` where it refused the spec with errors that
/// each point at a line and column of `file`; `Err` for a panic or any
/// other failure, saying which.
pub fn generate(file: &str, text: &str) -> Result<Option<Sources>, String> {
    let result = catch_unwind(AssertUnwindSafe(|| stencil_build::generate(file, text))).map_err(
        |panic| {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            format!("stencil-build panicked ({message}) on:\n{text}")
        },
    )?;
    match result {
        Ok(sources) => Ok(Some(sources)),
        Err(stencil_build::Error::Spec(diagnostics)) => {
            for d in &diagnostics {
                let located = format!("{file}:{}:{}", d.line, d.column);
                if d.line == 0 || d.column == 0 || !d.to_string().contains(&located) {
                    return Err(format!("an error without its location ({d}) for:\n{text}"));
                }
            }
            Ok(None)
        }
        Err(e) => Err(format!("not a spec error: {e}\nfor:\n{text}")),
    }
}

/// How far [`compile`] takes the code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Object code, with each backend's compiler.
    Full,
    /// The front ends only; the CUDA as the emulated device's C++.
    FrontEnd,
}

/// Compiles every backend's code of `specs` in `dir` to `depth`: `Err`
/// names the backend, the spec whose code failed and the compiler's message.
pub fn compile(
    compilers: &Compilers,
    specs: &[Accepted],
    dir: &Path,
    depth: Depth,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for spec in specs {
        compile_c(compilers, spec, dir, depth)?;
    }
    for backend in [Backend::Rust, Backend::Cuda, Backend::Hip] {
        compile_unit(
            &Job {
                compilers,
                backend,
                depth,
            },
            specs,
            dir,
        )?;
    }
    Ok(())
}

fn compile_c(
    compilers: &Compilers,
    spec: &Accepted,
    dir: &Path,
    depth: Depth,
) -> Result<(), String> {
    let source = dir.join(format!("{}.c", spec.name));
    write(&source, &spec.sources.openmp)?;
    let mut cmd = Command::new(&compilers.c);
    cmd.args([
        "-std=c11", "-O2", "-fPIC", "-fopenmp", "-Wall", "-Wextra", "-Werror",
    ]);
    // As a build that found glibc's vector math compiles it: the `exp`,
    // `sin` and `cos` it declares for their vector variants included.
    cmd.arg(format!("-D{}", stencil_build::__private::VECTOR_MATH));
    match depth {
        Depth::Full => cmd
            .arg("-c")
            .arg(&source)
            .arg("-o")
            .arg(source.with_extension("o")),
        Depth::FrontEnd => cmd.arg("-fsyntax-only").arg(&source),
    };
    run(cmd, "c").map_err(|e| failure("OpenMP-C", spec, &e))
}

/// `stencil-rt` (the runtime the generated Rust calls) compiled once per
/// process by `rustc` from its sources in this repository, for the Rust
/// units' `--extern`; `None` where that failed (the unit then fails, saying
/// `stencil_rt` is missing).
fn runtime_library() -> Option<&'static Path> {
    static LIBRARY: OnceLock<Option<PathBuf>> = OnceLock::new();
    LIBRARY
        .get_or_init(|| {
            let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../stencil-rt/src/lib.rs");
            let dir =
                std::env::temp_dir().join(format!("stencil-spec-check-rt-{}", std::process::id()));
            std::fs::create_dir_all(&dir).ok()?;
            let mut cmd = Command::new("rustc");
            cmd.args([
                "--edition=2024",
                "--crate-type=rlib",
                "--crate-name=stencil_rt",
            ])
            .arg(source)
            .arg("--out-dir")
            .arg(&dir);
            run(cmd, "Rust").ok()?;
            Some(dir.join("libstencil_rt.rlib"))
        })
        .as_deref()
}

/// The folders of the emulated device's headers (`cuda_runtime.h`, and HIP's
/// mapped onto it), beside this crate.
fn emulated_device_headers() -> [PathBuf; 2] {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    [tests.join("cuda-on-cpu"), tests.join("hip-on-cuda")]
}

/// A backend compiled as one unit of every spec's code.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Backend {
    Rust,
    Cuda,
    Hip,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Rust => "Rust",
            Backend::Cuda => "CUDA",
            Backend::Hip => "HIP",
        }
    }

    fn code(self, s: &Sources) -> &str {
        match self {
            Backend::Rust => &s.rust,
            Backend::Cuda => &s.cuda,
            Backend::Hip => &s.hip,
        }
    }
}

/// One backend's compile of a unit.
struct Job<'a> {
    compilers: &'a Compilers,
    backend: Backend,
    depth: Depth,
}

impl Job<'_> {
    /// The compiler command for `unit` (writing next to it), if the compiler is here.
    fn command(&self, unit: &Path) -> Option<Command> {
        let c = self.compilers;
        let front_end = self.depth == Depth::FrontEnd;
        let mut cmd = match self.backend {
            Backend::Rust => {
                let mut cmd = Command::new(&c.rust);
                cmd.args(["--edition=2024", "--crate-type=lib", "--emit=metadata"])
                    .args(["-D", "warnings"]);
                if let Some(library) = runtime_library() {
                    cmd.arg("--extern")
                        .arg(format!("stencil_rt={}", library.display()));
                }
                if c.clippy {
                    cmd.args(["-D", "clippy::undocumented_unsafe_blocks"]);
                }
                cmd.arg("-o").arg(unit.with_extension("rmeta"));
                cmd
            }
            Backend::Cuda | Backend::Hip if self.emulated() => {
                let cxx =
                    std::env::var_os("CXX").map_or_else(|| PathBuf::from("c++"), PathBuf::from);
                let mut cmd = Command::new(cxx);
                cmd.args(["-std=c++17", "-fsyntax-only"]);
                for dir in emulated_device_headers() {
                    cmd.arg("-I").arg(dir);
                }
                cmd
            }
            Backend::Cuda => {
                let mut cmd = Command::new(c.nvcc.as_ref()?);
                cmd.args(["-O3", "-arch=sm_90", "--Werror=all-warnings"])
                    .args(["-Xcompiler", "-fPIC", "-c", "-o"])
                    .arg(unit.with_extension("o"));
                cmd
            }
            Backend::Hip => {
                let mut cmd = Command::new(c.hipcc.as_ref()?);
                // hipcc picks the NVIDIA platform whenever it finds nvcc.
                cmd.env("HIP_PLATFORM", "amd").args([
                    "-O3",
                    "--offload-arch=gfx90a",
                    "-fPIC",
                    "-x",
                    "hip",
                ]);
                if front_end {
                    cmd.arg("-fsyntax-only");
                } else {
                    cmd.arg("-c").arg("-o").arg(unit.with_extension("o"));
                }
                cmd
            }
        };
        cmd.arg(unit);
        Some(cmd)
    }

    /// Whether the GPU code is checked as the emulated device's C++: for
    /// the front end, CUDA always (nvcc's is slow) and HIP without hipcc.
    fn emulated(&self) -> bool {
        self.depth == Depth::FrontEnd
            && match self.backend {
                Backend::Cuda => true,
                Backend::Hip => self.compilers.hipcc.is_none(),
                Backend::Rust => false,
            }
    }

    /// The unit's text for `specs` (see [`unit_text`]); for the emulated
    /// device with its launches rewritten as C++.
    fn text(&self, specs: &[Accepted]) -> String {
        let text = unit_text(self.backend, specs);
        if self.emulated() {
            stencil_build::__private::host_launches(&text)
        } else {
            text
        }
    }

    fn extension(&self) -> &'static str {
        match self.backend {
            _ if self.emulated() => "cpp",
            Backend::Rust => "rs",
            Backend::Cuda => "cu",
            Backend::Hip => "hip",
        }
    }
}

/// Compiles `specs`' code as one unit for `job`; where that fails, compiles
/// each spec's alone to name the one that fails.
fn compile_unit(job: &Job, specs: &[Accepted], dir: &Path) -> Result<(), String> {
    let (name, ext) = (job.backend.name(), job.extension());
    let unit = dir.join(format!("unit.{ext}"));
    write(&unit, &job.text(specs))?;
    let Some(cmd) = job.command(&unit) else {
        return Ok(());
    };
    let Err(whole) = run(cmd, name) else {
        return Ok(());
    };
    for spec in specs {
        let alone = dir.join(format!("{}.{ext}", spec.name));
        write(&alone, &job.text(std::slice::from_ref(spec)))?;
        if let Some(Err(e)) = job.command(&alone).map(|c| run(c, name)) {
            return Err(failure(name, spec, &e));
        }
    }
    Err(format!(
        "the {name} unit of these specs failed, though each compiles alone:\n{whole}"
    ))
}

/// The unit of `specs`' code for `backend`: for Rust each spec's API in a
/// module named after it, under `#![deny(warnings)]`; for CUDA and HIP the
/// headers first, then each spec's code in a namespace (their static
/// helpers share names; the `extern "C"` entry points are the stencils').
fn unit_text(backend: Backend, specs: &[Accepted]) -> String {
    let mut text = String::new();
    if backend == Backend::Rust {
        text.push_str("#![deny(warnings)]\n");
        for s in specs {
            let _ = writeln!(text, "pub mod {} {{\n{}\n}}", s.name, s.sources.rust);
        }
        return text;
    }
    let mut bodies = String::new();
    for s in specs {
        let _ = writeln!(bodies, "namespace unit_{} {{", s.name);
        for line in backend.code(&s.sources).lines() {
            if line.starts_with("#include") {
                if !text.contains(line) {
                    let _ = writeln!(text, "{line}");
                }
            } else {
                let _ = writeln!(bodies, "{line}");
            }
        }
        let _ = writeln!(bodies, "}}");
    }
    text + &bodies
}

/// Runs `cmd`; `Err` with its output where it fails.
fn run(mut cmd: Command, what: &str) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run the {what} compiler {cmd:?}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stdout));
    // The first errors say what is wrong; the rest is often their echo.
    let head: Vec<&str> = text.lines().take(60).collect();
    Err(format!("{cmd:?} failed:\n{}", head.join("\n")))
}

fn failure(backend: &str, spec: &Accepted, error: &str) -> String {
    format!(
        "the {backend} code of an accepted spec does not compile.\nspec:\n{}\n{error}",
        spec.text
    )
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}
