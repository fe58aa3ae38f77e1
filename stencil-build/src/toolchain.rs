//! Compiling generated kernels with the `cc` crate and linking them into the
//! crate being built.

use std::path::{Path, PathBuf};

use crate::Error;
use crate::backend::gpu;
use crate::backend::openmp::levels::{LEVELS, Level, X86_64_V4};

mod cache;
mod units;

pub use cache::write_if_changed;

/// Removes from the folder of `files` (generated sources, all in one folder
/// that stencil-build owns, `OUT_DIR/stencil-build/<backend>`) every file of
/// their extension that is not one of them: the sources of stencils an
/// earlier build had and this one does not, and an earlier build's
/// compilation units ([`units`]), so that the folder holds what this build
/// generated and nothing a reader could take for it.
pub fn remove_stale(files: &[PathBuf]) -> Result<(), Error> {
    let Some(dir) = files.first().and_then(|f| f.parent()) else {
        return Ok(());
    };
    let extension = files[0].extension();
    let io = |path: &Path, source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(dir).map_err(|e| io(dir, e))? {
        let path = entry.map_err(|e| io(dir, e))?.path();
        if path.is_file() && path.extension() == extension && !files.contains(&path) {
            std::fs::remove_file(&path).map_err(|e| io(&path, e))?;
        }
    }
    Ok(())
}

/// The C compiler flags of the target features Cargo builds for
/// (`CARGO_CFG_TARGET_FEATURE`, comma-separated; what `-C target-cpu` or
/// `-C target-feature` enable), so that the C kernels use the vector
/// instructions the Rust code may: `-mavx2` and not `-march=native`, which
/// would tie the library to the build machine. Only the features whose
/// GCC/Clang flag means the same as Rust's feature of that name, those of
/// the levels' ([`X86_64_V4`]): the vector widths and instructions that
/// decide how the kernels' `omp simd` loops compile.
fn feature_flags(arch: &str, features: &str) -> Vec<String> {
    if arch != "x86_64" {
        return Vec::new();
    }
    features
        .split(',')
        .filter(|f| X86_64_V4.features.contains(f))
        .map(|f| format!("-m{f}"))
        .collect()
}

/// The build's target: `CARGO_CFG_TARGET_ARCH` and `CARGO_CFG_TARGET_FEATURE`.
fn target() -> (String, String) {
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    (arch, features)
}

/// The C compiler flags of the target features a build script builds for
/// (`CARGO_CFG_TARGET_FEATURE`, `CARGO_CFG_TARGET_ARCH`): `-mavx2` and the
/// like, none off x86-64.
pub fn target_feature_flags() -> Vec<String> {
    let (arch, features) = target();
    feature_flags(&arch, &features)
}

/// The instruction-set levels the OpenMP kernels are compiled for beside
/// the build's target: on x86-64, with a compiler of GCC's flags, those
/// whose features the target lacks some of.
fn levels_above(msvc: bool, arch: &str, features: &str) -> Vec<&'static Level> {
    if msvc || arch != "x86_64" {
        return Vec::new();
    }
    let target: Vec<&str> = features.split(',').collect();
    LEVELS
        .into_iter()
        .filter(|level| !level.features.iter().all(|f| target.contains(f)))
        .collect()
}

/// The environment variable that names the levels to compile copies for
/// (comma-separated level names, or `none`); unset, every level the
/// target lacks.
pub const LEVELS_VARIABLE: &str = "STENCIL_OPENMP_LEVELS";

/// [`levels_above`] the target this build script builds for, with the C
/// compiler `cc` picks: those [`LEVELS_VARIABLE`] names where it is set,
/// else those `configured` names (`Config::openmp_levels`), else all.
pub fn openmp_levels(configured: Option<&[String]>) -> Result<Vec<&'static Level>, Error> {
    println!("cargo:rerun-if-env-changed={LEVELS_VARIABLE}");
    let compiler = cc::Build::new()
        .try_get_compiler()
        .map_err(|e| toolchain_error(&e))?;
    let (arch, features) = target();
    let above = levels_above(compiler.is_like_msvc(), &arch, &features);
    choose_levels(above, std::env::var(LEVELS_VARIABLE).ok(), configured)
}

/// Those of `above` that `variable` (the value of [`LEVELS_VARIABLE`])
/// names, else those `configured` names, else all.
fn choose_levels(
    above: Vec<&'static Level>,
    variable: Option<String>,
    configured: Option<&[String]>,
) -> Result<Vec<&'static Level>, Error> {
    match (variable, configured) {
        (Some(names), _) => chosen_levels(above, &names, &format!("{LEVELS_VARIABLE}={names}")),
        (None, Some(names)) => chosen_levels(above, &names.join(","), "Config::openmp_levels"),
        (None, None) => Ok(above),
    }
}

/// Those of `above` that `names` (comma-separated level names, or `none`;
/// from `source`, for errors) lists: a level the target has already needs
/// no copy, whatever it asks.
fn chosen_levels(
    above: Vec<&'static Level>,
    names: &str,
    source: &str,
) -> Result<Vec<&'static Level>, Error> {
    let mut chosen = Vec::new();
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if name == "none" {
            continue;
        }
        let Some(level) = LEVELS.into_iter().find(|l| l.name == name) else {
            let known: Vec<&str> = LEVELS.iter().map(|l| l.name).collect();
            return Err(Error::Environment(format!(
                "{source}: `{name}` is no instruction-set level; write {} or none, comma-separated",
                known.join(", ")
            )));
        };
        chosen.push(level);
    }
    Ok(above.into_iter().filter(|l| chosen.contains(l)).collect())
}

/// Compiles C11 sources with `-O3`, OpenMP, `-fno-math-errno` and
/// `-ffp-contract=fast` into the static library `lib_name`, and links the
/// OpenMP runtime and libm: `files` for the build's target, and each
/// level's `copies` with the level's flags too.
///
/// The C compiler is the one `cc` picks (`CC`, `CFLAGS` and friends apply).
/// GCC links `libgomp`, Clang `libomp`, MSVC its own runtime.
pub fn build_openmp(
    files: &[PathBuf],
    copies: &[(&Level, Vec<PathBuf>)],
    lib_name: &str,
    extra_flags: &[String],
) -> Result<(), Error> {
    let mut build = cc::Build::new();
    build.std("c11").opt_level(3).warnings(true);
    let compiler = build.try_get_compiler().map_err(|e| toolchain_error(&e))?;
    let runtime = if compiler.is_like_msvc() {
        None
    } else if compiler.is_like_clang() {
        Some("omp")
    } else {
        Some("gomp")
    };
    for flag in openmp_flags(compiler.is_like_msvc(), target_feature_flags()) {
        build.flag(flag);
    }
    for flag in extra_flags {
        build.flag(flag);
    }
    let vector_math = has_vector_math(&compiler);
    if vector_math {
        build.define(crate::backend::openmp::VECTOR_MATH, None);
    }
    // A copy's text names its level's flags, so the stamp covers them.
    let inputs: Vec<PathBuf> = files
        .iter()
        .chain(copies.iter().flat_map(|(_, paths)| paths))
        .cloned()
        .collect();
    let flags_only = build.clone();
    build.files(files);
    cache::compile_with(&build, lib_name, &inputs, &|e| toolchain_error(&e), || {
        let mut objects = Vec::new();
        for (level, paths) in copies {
            let mut copy = flags_only.clone();
            for flag in level.flags() {
                copy.flag(flag);
            }
            copy.files(paths);
            objects.extend(
                copy.try_compile_intermediates()
                    .map_err(|e| toolchain_error(&e))?,
            );
        }
        Ok(objects)
    })?;
    if let Some(lib) = runtime {
        println!("cargo:rustc-link-lib={lib}");
    }
    if vector_math {
        println!("cargo:rustc-link-lib=mvec");
    }
    if !compiler.is_like_msvc() {
        println!("cargo:rustc-link-lib=m");
    }
    Ok(())
}

/// Whether the kernels may call glibc's vector math library (libmvec: `exp`,
/// `sin` and `cos` of 2 to 16 lanes, since glibc 2.22): on x86-64 Linux with
/// glibc ([`vector_math_target`]), where `compiler` (GCC or Clang, whose
/// `omp declare simd` call the library's variants by the x86-64 vector ABI)
/// finds `libmvec.so` to link.
fn has_vector_math(compiler: &cc::Tool) -> bool {
    let cfg = |key: &str| std::env::var(format!("CARGO_CFG_TARGET_{key}")).unwrap_or_default();
    vector_math_target(
        compiler.is_like_msvc(),
        &target().0,
        &cfg("OS"),
        &cfg("ENV"),
    ) && finds_library(compiler.to_command(), "libmvec.so")
}

/// Whether a target (MSVC or not, its arch, OS and C library) has glibc's
/// vector math library and its vector ABI.
fn vector_math_target(msvc: bool, arch: &str, os: &str, env: &str) -> bool {
    !msvc && arch == "x86_64" && os == "linux" && env == "gnu"
}

/// Whether the C compiler `compiler` (a command of GCC's flags) finds the
/// library file `file` (`libmvec.so`) where it links: it answers the bare
/// name where it has no such file.
fn finds_library(mut compiler: std::process::Command, file: &str) -> bool {
    compiler
        .arg(format!("-print-file-name={file}"))
        .output()
        .is_ok_and(|out| {
            out.status.success()
                && Path::new(String::from_utf8_lossy(&out.stdout).trim()).is_absolute()
        })
}

/// The OpenMP C's flags past `-std=c11 -O3`, for MSVC or a compiler of GCC's
/// flags, with the target's `features` (`target_feature_flags`).
fn openmp_flags(msvc: bool, features: Vec<String>) -> Vec<String> {
    if msvc {
        return vec!["/openmp".to_owned()];
    }
    // Without errno, `sqrt` under `omp simd` is a packed instruction (GCC 12:
    // `sqrtpd`) instead of a scalar one with a call to `sqrt` for negative
    // arguments; results are the same (correctly rounded either way), and the
    // generated C never reads errno.
    // Contracting `a * b + c` into one multiply-add, as nvcc and hipcc do by
    // default, halves the floating-point instructions of a sum of weighted
    // reads, which is what bounds the wide stencils on many cores (design
    // notes: "Multiply-adds on the CPU"); ISO C11 alone (`-std=c11`) leaves
    // GCC's contraction off. A multiply-add rounds once where the pair rounds
    // twice: within the tolerance the flops give. Fused steps and single
    // steps print the same expression, so they contract alike. A no-op where
    // the target has no FMA.
    let mut flags: Vec<String> = ["-fopenmp", "-fno-math-errno", "-ffp-contract=fast"]
        .map(str::to_owned)
        .to_vec();
    flags.extend(features);
    flags
}

fn toolchain_error(e: &cc::Error) -> Error {
    Error::Toolchain {
        backend: "openmp",
        message: format!(
            "{e}\nThe OpenMP backend needs a C compiler with OpenMP (gcc with libgomp, or clang with libomp); \
             set CC to choose one, or turn off the `openmp` feature."
        ),
    }
}

/// Finds `nvcc`: `NVCC`, then `$CUDA_PATH/bin`, `$CUDA_HOME/bin`, `PATH`,
/// `/usr/local/cuda/bin`. The error lists where it looked.
pub fn find_nvcc() -> Result<PathBuf, Error> {
    find_tool(
        if cfg!(windows) { "nvcc.exe" } else { "nvcc" },
        "NVCC",
        &["CUDA_PATH", "CUDA_HOME"],
        "/usr/local/cuda/bin",
        "cuda",
        "Install the CUDA toolkit (or the nvidia-cuda-nvcc wheels from PyPI) and set CUDA_PATH to its root or NVCC to \
         the nvcc executable, or turn off the `cuda` feature.",
    )
}

/// `-gencode` flags for `archs` (`sm_80`, `90`, `sm_90a`, ...): machine code
/// for each, and PTX of the last for newer GPUs.
pub fn gencode_flags(archs: &[String]) -> Result<Vec<String>, Error> {
    let mut flags = Vec::new();
    let mut last = None;
    for arch in archs {
        let number = arch
            .trim()
            .trim_start_matches("sm_")
            .trim_start_matches("compute_");
        let digits = number.trim_end_matches('a');
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Error::Environment(format!(
                "`{arch}` is not a CUDA architecture: write e.g. `sm_80` or `sm_90` (in Config::cuda_arch or STENCIL_CUDA_ARCH, comma-separated)"
            )));
        }
        flags.push(format!("-gencode=arch=compute_{number},code=sm_{number}"));
        last = Some(number.to_string());
    }
    if let Some(n) = last {
        flags.push(format!("-gencode=arch=compute_{n},code=compute_{n}"));
    }
    Ok(flags)
}

/// Compiles CUDA sources with `nvcc` into static libraries `lib_name_<i>`,
/// one per compilation unit ([`units`]: a source, or several included in
/// one file), and links the static CUDA runtime.
///
/// One library per unit: `cc` compiles the sources of one build as
/// relocatable device code (`--device-c`) when there are several, and
/// `ptxas` then allocated more registers (j3d13pt f64's fused kernel 147
/// instead of 128, a block less per multiprocessor: 118 GCells/s on the
/// H100 where the same kernel compiled whole ran at 168). A unit is compiled whole, as one source was. The
/// sources do not call into each other. The units compile on `NUM_JOBS`
/// threads, as `cc` would have.
///
/// The kernels compile optimized in every Cargo profile: in a debug profile
/// `cc` would pass `-G`, which compiles device code without optimization, so
/// that a crate's debug builds and tests would time (`auto`'s measured
/// fusion) and run other kernels than its release builds.
/// [`Config::cuda_flag`](crate::Config::cuda_flag)`("-G")` asks for device
/// debug information.
pub fn build_cuda(
    files: &[PathBuf],
    lib_name: &str,
    archs: &[String],
    extra_flags: &[String],
) -> Result<(), Error> {
    for var in ["NVCC", "CUDA_PATH", "CUDA_HOME", "STENCIL_CUDA_ARCH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let nvcc = find_nvcc()?;
    let flags: Vec<String> = gencode_flags(archs)?
        .into_iter()
        .chain(extra_flags.iter().cloned())
        .collect();
    // Headers a flag adds (HIP through nvcc): their text counts as every unit's.
    let include_dirs: Vec<PathBuf> = flags
        .iter()
        .filter_map(|f| f.strip_prefix("-I"))
        .map(PathBuf::from)
        .collect();
    let headers = cache::files_under(&include_dirs);
    let compile = |i: usize, unit: &units::Unit| {
        let mut build = cc::Build::new();
        build
            .cuda(true)
            .cudart("static")
            .env("NVCC", &nvcc)
            .file(&unit.path)
            .opt_level(3)
            .debug(false);
        for flag in &flags {
            build.flag(flag);
        }
        let mut inputs = unit.inputs();
        inputs.extend_from_slice(&headers);
        cache::compile(&build, &format!("{lib_name}_{i}"), &inputs, &|e| {
            Error::Toolchain {
                backend: "cuda",
                message: format!("{e}\n(nvcc: {})", nvcc.display()),
            }
        })
    };
    let jobs = jobs();
    compile_on_threads(&units::units(files, jobs)?, jobs, &compile)?;
    link_cudart(&nvcc);
    Ok(())
}

/// Runs `compile(i, unit)` for each of `units` on up to `jobs` threads, each
/// taking a contiguous share; the first error, or a thread's panic as one.
fn compile_on_threads(
    units: &[units::Unit],
    jobs: usize,
    compile: &(dyn Fn(usize, &units::Unit) -> Result<(), Error> + Sync),
) -> Result<(), Error> {
    let indexed: Vec<(usize, &units::Unit)> = units.iter().enumerate().collect();
    let chunk = indexed.len().div_ceil(jobs).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = indexed
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().try_for_each(|&(i, f)| compile(i, f))))
            .collect();
        workers.into_iter().try_for_each(|w| {
            w.join().unwrap_or_else(|_| {
                Err(Error::Toolchain {
                    backend: "cuda",
                    message: "a thread compiling CUDA sources panicked".into(),
                })
            })
        })
    })
}

/// Links the static CUDA runtime of `nvcc`'s toolkit and the system
/// libraries it needs.
fn link_cudart(nvcc: &Path) {
    let root = nvcc
        .parent()
        .and_then(|bin| bin.parent())
        .map(PathBuf::from)
        .unwrap_or_default();
    for dir in [
        root.join("lib64"),
        root.join("lib"),
        root.join("targets/x86_64-linux/lib"),
    ] {
        if dir.join("libcudart_static.a").is_file() {
            println!("cargo:rustc-link-search=native={}", dir.display());
        }
    }
    for lib in ["dl", "rt", "pthread"] {
        println!("cargo:rustc-link-lib={lib}");
    }
}

/// How many compiler runs a build script may keep going at once: Cargo's
/// `NUM_JOBS`, else one.
fn jobs() -> usize {
    std::env::var("NUM_JOBS")
        .ok()
        .and_then(|j| j.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1)
}

/// Test-only: compiles GPU sources as C++ with the host compiler, `include_dirs`
/// first on the include path (an emulation of the runtime: `cuda_runtime.h`
/// and, for HIP, a header mapping HIP onto it), into the static library
/// `lib_name`. Each source is first rewritten by [`host_launches`] into a
/// `.cpp` file beside it, and compiled ([`units`]) at `-O1` after [`prelude`]'s headers,
/// precompiled once: on 2 cores that took the tests' emulated build (the
/// heat3d, wave2d, star3d25 and leapfrog3d variants, 419 tests) from 410 s
/// to 274 s against `-O2` without the prelude, and the tests ran as long
/// (169 s against 177 s).
pub fn build_on_cpu(
    files: &[PathBuf],
    lib_name: &str,
    include_dirs: &[PathBuf],
    d: &gpu::Dialect,
) -> Result<(), Error> {
    let mut build = cc::Build::new();
    build.cpp(true).std("c++17").opt_level(1).warnings(false);
    for dir in include_dirs {
        println!("cargo:rerun-if-changed={}", dir.display());
        build.include(dir);
    }
    if let Some(dir) = files.first().and_then(|f| f.parent()) {
        let prelude = precompile_prelude(&build, dir, include_dirs, d)?;
        build.flag("-include").flag(prelude);
    }
    let mut sources = Vec::with_capacity(files.len());
    for file in files {
        let io = |source| Error::Io {
            path: file.clone(),
            source,
        };
        let text = std::fs::read_to_string(file).map_err(io)?;
        let cpp = file.with_extension("cpp");
        write_if_changed(&cpp, &host_launches(&text))?;
        sources.push(cpp);
    }
    remove_stale(&sources)?;
    let units = units::units(&sources, jobs())?;
    let mut inputs: Vec<PathBuf> = units.iter().flat_map(units::Unit::inputs).collect();
    inputs.extend(cache::files_under(include_dirs));
    build.files(units.iter().map(|u| &u.path));
    cache::compile(&build, lib_name, &inputs, &|e| on_cpu_error(d, e))
}

/// The headers a GPU source of dialect `d` includes ([`gpu::source`]): its
/// runtime and cooperative groups, `stddef.h` and `mutex`. Parsing them took
/// a third of the time GCC 12 spent on a small kernel file for
/// [`build_on_cpu`]. They are guarded by `#pragma once`, so a source's own
/// `#include`s of them are then no-ops.
fn prelude(d: &gpu::Dialect) -> [&'static str; 4] {
    [d.header, d.cooperative_header, "stddef.h", "mutex"]
}

/// Writes [`prelude`]'s header for `d` into `dir` and precompiles it beside
/// it with `build`'s compiler and flags. A source compiled with
/// `-include <header>` then loads `<header>.gch` (GCC, which reads the header itself
/// where the precompiled one does not match the flags) or, by Clang's
/// manual, `<header>.pch` (not tried: CI builds with GCC). Returns the
/// header's path.
fn precompile_prelude(
    build: &cc::Build,
    dir: &Path,
    include_dirs: &[PathBuf],
    d: &gpu::Dialect,
) -> Result<PathBuf, Error> {
    let backend = d.name;
    let header = dir.join(format!("{backend}-on-cpu-prelude.h"));
    let mut text = format!(
        "/* The headers of every {backend} source of the test-only build on the CPU, precompiled once. */\n"
    );
    for include in prelude(d) {
        text.push_str(&format!("#include <{include}>\n"));
    }
    write_if_changed(&header, &text)?;
    let compiler = build.try_get_compiler().map_err(|e| on_cpu_error(d, e))?;
    let precompiled = header.with_extension(if compiler.is_like_clang() {
        "h.pch"
    } else {
        "h.gch"
    });
    let mut inputs = vec![header.clone()];
    inputs.extend(cache::files_under(include_dirs));
    cache::make_once(&precompiled, &compiler, &inputs, || {
        precompile(&compiler, &header, &precompiled, backend)
    })?;
    Ok(header)
}

/// Runs `compiler` on `header` as a C++ header into `precompiled`.
fn precompile(
    compiler: &cc::Tool,
    header: &Path,
    precompiled: &Path,
    backend: &'static str,
) -> Result<(), Error> {
    let output = compiler
        .to_command()
        .args(["-x", "c++-header"])
        .arg(header)
        .arg("-o")
        .arg(precompiled)
        .output()
        .map_err(|source| Error::Io {
            path: compiler.path().to_path_buf(),
            source,
        })?;
    if !output.status.success() {
        return Err(Error::Toolchain {
            backend,
            message: format!(
                "{}\n(precompiling {} for the test-only build of the {backend} kernels on the CPU)",
                String::from_utf8_lossy(&output.stderr),
                header.display()
            ),
        });
    }
    Ok(())
}

/// An error of `cc` in [`build_on_cpu`].
fn on_cpu_error(d: &gpu::Dialect, e: cc::Error) -> Error {
    Error::Toolchain {
        backend: d.name,
        message: format!(
            "{e}\n(the test-only build of the {} kernels on the CPU)",
            d.name
        ),
    }
}

/// The GPU source `text` as C++ for the emulated device: each launch
/// `kernel<<<grid, block[, shared[, stream]]>>>(args)` becomes
/// `cuda_on_cpu::launch(kernel, grid, block, shared, stream, args)` and the
/// declaration of the dynamic shared memory a `using` of the header's
/// `thread_local` array (each thread of the host process has its own
/// emulated device). A block-scope `extern thread_local` redeclaration made
/// GCC 12 call the array's thread-local initialiser, which is not defined
/// (a call to address 0, star3d25 f32's vector kernel).
pub fn host_launches(text: &str) -> String {
    let text = text.replace(
        "extern __shared__ __align__(16) unsigned char shared[];",
        "using ::shared; /* the dynamic shared memory (cuda_runtime.h) */",
    );
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find("<<<") {
        let Some(close) = rest[open..].find(">>>(").map(|c| open + c) else {
            break;
        };
        let before = &rest[..open];
        let name_at = before
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let config = &rest[open + 3..close];
        // Shared memory and stream where the launch leaves them out.
        let shared = match config.split(',').count() {
            2 => ", 0, nullptr",
            3 => ", nullptr",
            _ => "",
        };
        out.push_str(&before[..name_at]);
        out.push_str(&format!(
            "cuda_on_cpu::launch({}, {config}{shared}",
            &before[name_at..]
        ));
        rest = &rest[close + 4..];
        if !rest.starts_with(')') {
            out.push_str(", ");
        }
    }
    out.push_str(rest);
    out
}

/// Finds an executable: `$var`, then `$root/bin` for each root variable,
/// `PATH`, then `fallback`. The error lists where it looked.
fn find_tool(
    exe: &str,
    var: &str,
    roots: &[&str],
    fallback: &str,
    backend: &'static str,
    install: &str,
) -> Result<PathBuf, Error> {
    let mut tried = Vec::new();
    let mut candidates: Vec<(String, PathBuf)> = Vec::new();
    match std::env::var_os(var) {
        Some(p) => candidates.push((var.into(), PathBuf::from(p))),
        None => tried.push(format!("{var} (not set)")),
    }
    for root in roots {
        match std::env::var_os(root) {
            Some(r) => candidates.push((
                format!("${root}/bin"),
                PathBuf::from(r).join("bin").join(exe),
            )),
            None => tried.push(format!("${root}/bin ({root} not set)")),
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| ("PATH".to_string(), d.join(exe))));
    }
    candidates.push((fallback.into(), PathBuf::from(fallback).join(exe)));
    for (source, path) in candidates {
        if path.is_file() {
            return Ok(path);
        }
        if source != "PATH" {
            tried.push(format!("{} ({source})", path.display()));
        }
    }
    tried.push("every folder of PATH".into());
    Err(Error::Toolchain {
        backend,
        message: format!(
            "{exe} was not found. Looked at: {}.\n{install}",
            tried.join("; ")
        ),
    })
}

/// Finds `hipcc`: `HIPCC`, then `$ROCM_PATH/bin`, `$HIP_PATH/bin`, `PATH`, `/opt/rocm/bin`.
pub fn find_hipcc() -> Result<PathBuf, Error> {
    find_tool(
        "hipcc",
        "HIPCC",
        &["ROCM_PATH", "HIP_PATH"],
        "/opt/rocm/bin",
        "hip",
        "Install ROCm/HIP (on Debian: `apt-get install hipcc libamdhip64-dev`) and set ROCM_PATH or HIPCC, \
         or turn off the `hip` feature.",
    )
}

/// Compiles HIP sources with `hipcc` for the AMD targets `archs` (`gfx90a`, ...),
/// in compilation units ([`units`]), into the static library `lib_name`, and
/// links the HIP runtime (`libamdhip64`).
pub fn build_hip(
    files: &[PathBuf],
    lib_name: &str,
    archs: &[String],
    extra_flags: &[String],
) -> Result<(), Error> {
    for var in ["HIPCC", "ROCM_PATH", "HIP_PATH", "STENCIL_HIP_ARCH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let hipcc = find_hipcc()?;
    let units = units::units(files, jobs())?;
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .compiler(&hipcc)
        .files(units.iter().map(|u| &u.path))
        .opt_level(3)
        .warnings(false);
    // hipcc asks the machine for its AMD GPUs whenever it runs without a target (cc's
    // compiler probe does); a default target keeps it from probing a machine without one.
    if let Some(first) = archs.first() {
        build.env("HCC_AMDGPU_TARGET", first.trim());
    }
    // hipcc would pick the NVIDIA platform whenever it finds nvcc on PATH.
    build.env("HIP_PLATFORM", "amd");
    for arch in archs {
        let arch = arch.trim();
        if !arch.starts_with("gfx") || arch.len() < 4 {
            return Err(Error::Environment(format!(
                "`{arch}` is not an AMD GPU target: write e.g. `gfx90a` or `gfx942` (in Config::hip_arch or STENCIL_HIP_ARCH, comma-separated)"
            )));
        }
        build.flag(format!("--offload-arch={arch}"));
    }
    for flag in extra_flags {
        build.flag(flag);
    }
    let inputs: Vec<PathBuf> = units.iter().flat_map(units::Unit::inputs).collect();
    cache::compile(&build, lib_name, &inputs, &|e| Error::Toolchain {
        backend: "hip",
        message: format!("{e}\n(hipcc: {})", hipcc.display()),
    })?;
    let root = hipcc
        .parent()
        .and_then(|bin| bin.parent())
        .map(PathBuf::from)
        .unwrap_or_default();
    for dir in [root.join("lib"), root.join("lib64")] {
        if dir.join("libamdhip64.so").is_file() {
            println!("cargo:rustc-link-search=native={}", dir.display());
        }
    }
    println!("cargo:rustc-link-lib=amdhip64");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_target_features_become_c_flags() {
        let features = "avx,avx2,fma,fxsr,sse,sse2,sse4.1,avx512f,avx512vnni";
        assert_eq!(
            feature_flags("x86_64", features),
            ["-mavx", "-mavx2", "-mfma", "-msse4.1", "-mavx512f"]
        );
        // The baseline (no flags), and other architectures, are left to the compiler.
        assert!(feature_flags("x86_64", "fxsr,sse,sse2").is_empty());
        assert!(feature_flags("aarch64", "neon,sve").is_empty());
    }

    #[test]
    fn levels_are_compiled_where_the_target_lacks_their_features() {
        let names = |levels: Vec<&Level>| levels.iter().map(|l| l.name).collect::<Vec<_>>();
        // A crate built without `-C target-cpu`: both copies.
        let baseline = "fxsr,sse,sse2";
        assert_eq!(
            names(levels_above(false, "x86_64", baseline)),
            ["x86-64-v3", "x86-64-v4"]
        );
        // `-C target-cpu=haswell`: only the AVX-512 one.
        let haswell =
            "avx,avx2,bmi1,bmi2,f16c,fma,fxsr,lzcnt,movbe,popcnt,sse,sse2,sse3,sse4.1,sse4.2,ssse3";
        assert_eq!(names(levels_above(false, "x86_64", haswell)), ["x86-64-v4"]);
        let v4 = format!("{haswell},avx512f,avx512bw,avx512cd,avx512dq,avx512vl");
        assert!(levels_above(false, "x86_64", &v4).is_empty());
        // MSVC (no `-m` flags) and other architectures: none.
        assert!(levels_above(true, "x86_64", baseline).is_empty());
        assert!(levels_above(false, "aarch64", "neon").is_empty());
    }

    #[test]
    fn the_environment_chooses_among_the_levels_the_target_lacks() {
        let names = |levels: Vec<&Level>| levels.iter().map(|l| l.name).collect::<Vec<_>>();
        let above = || levels_above(false, "x86_64", "sse2");
        assert_eq!(
            names(chosen_levels(above(), "x86-64-v4", "t").unwrap()),
            ["x86-64-v4"]
        );
        assert!(chosen_levels(above(), "none", "t").unwrap().is_empty());
        assert_eq!(
            names(chosen_levels(above(), " x86-64-v4, x86-64-v3 ", "t").unwrap()),
            ["x86-64-v3", "x86-64-v4"]
        );
        // A level the target has needs no copy.
        assert!(
            chosen_levels(Vec::new(), "x86-64-v3", "t")
                .unwrap()
                .is_empty()
        );
        let err = chosen_levels(above(), "avx512", "STENCIL_OPENMP_LEVELS=avx512")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("STENCIL_OPENMP_LEVELS") && err.contains("x86-64-v3, x86-64-v4 or none"),
            "{err}"
        );
    }

    #[test]
    fn vector_math_is_glibcs_on_x86_64_linux() {
        assert!(vector_math_target(false, "x86_64", "linux", "gnu"));
        assert!(!vector_math_target(true, "x86_64", "windows", "msvc"));
        assert!(!vector_math_target(false, "aarch64", "linux", "gnu"));
        assert!(!vector_math_target(false, "x86_64", "linux", "musl"));
        assert!(!vector_math_target(false, "x86_64", "macos", ""));
        // The compiler the OpenMP tests build with finds glibc's library
        // there (Debian's libc6-dev), and no library that does not exist.
        let cc = || std::process::Command::new("cc");
        if cfg!(all(
            target_arch = "x86_64",
            target_os = "linux",
            target_env = "gnu"
        )) {
            assert!(finds_library(cc(), "libmvec.so"));
        }
        assert!(!finds_library(cc(), "libstencil_no_such_library.so"));
    }

    #[test]
    fn openmp_c_vectorises_roots_and_contracts_multiply_adds() {
        let features = vec!["-mavx2".to_owned(), "-mfma".to_owned()];
        assert_eq!(
            openmp_flags(false, features.clone()),
            [
                "-fopenmp",
                "-fno-math-errno",
                "-ffp-contract=fast",
                "-mavx2",
                "-mfma"
            ]
        );
        assert_eq!(openmp_flags(true, features), ["/openmp"]);
    }

    #[test]
    fn stale_sources_are_removed() {
        let dir = std::env::temp_dir().join(format!("stencil-build-stale-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub.cu")).unwrap();
        for name in ["heat.cu", "gone.cu", "unit-0.cu", "heat.cpp", "prelude.h"] {
            std::fs::write(dir.join(name), "").unwrap();
        }
        let files = [dir.join("heat.cu"), dir.join("cuda_runtime.cu")];
        std::fs::write(&files[1], "").unwrap();
        remove_stale(&files).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        // Another extension and folders stay; a removed stencil's source and a unit go.
        assert_eq!(
            left,
            [
                "cuda_runtime.cu",
                "heat.cpp",
                "heat.cu",
                "prelude.h",
                "sub.cu"
            ]
        );
        remove_stale(&[]).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn launches_become_calls_for_the_cpu_build() {
        let cu = "    extern __shared__ __align__(16) unsigned char shared[];\n    \
                  k_kernel<<<grid, block>>>(n0, out, levels);\n    \
                  t_kernel<<<grid, block, 27744>>>(n0, out);\n    \
                  s_kernel<<<grid, block, 0, stream>>>(n0, out);\n";
        assert_eq!(
            host_launches(cu),
            "    using ::shared; /* the dynamic shared memory (cuda_runtime.h) */\n    \
             cuda_on_cpu::launch(k_kernel, grid, block, 0, nullptr, n0, out, levels);\n    \
             cuda_on_cpu::launch(t_kernel, grid, block, 27744, nullptr, n0, out);\n    \
             cuda_on_cpu::launch(s_kernel, grid, block, 0, stream, n0, out);\n"
        );
    }

    #[test]
    fn a_missing_tool_says_where_it_looked_and_what_to_do() {
        let err = find_tool(
            "stencil-build-no-such-compiler",
            "STENCIL_BUILD_TEST_UNSET_TOOL",
            &["STENCIL_BUILD_TEST_UNSET_ROOT"],
            "/nonexistent/bin",
            "cuda",
            "Install it or set STENCIL_BUILD_TEST_UNSET_TOOL.",
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("stencil-build: the cuda backend cannot be built: stencil-build-no-such-compiler was not found."), "{err}");
        for place in [
            "STENCIL_BUILD_TEST_UNSET_TOOL (not set)",
            "$STENCIL_BUILD_TEST_UNSET_ROOT/bin (STENCIL_BUILD_TEST_UNSET_ROOT not set)",
            "/nonexistent/bin/stencil-build-no-such-compiler",
            "every folder of PATH",
            "Install it or set STENCIL_BUILD_TEST_UNSET_TOOL.",
        ] {
            assert!(err.contains(place), "`{place}` missing from: {err}");
        }
    }

    #[test]
    fn architectures_become_gencode_flags() {
        let flags = gencode_flags(&["sm_80".into(), "90".into()]).unwrap();
        assert_eq!(
            flags,
            [
                "-gencode=arch=compute_80,code=sm_80",
                "-gencode=arch=compute_90,code=sm_90",
                "-gencode=arch=compute_90,code=compute_90"
            ]
        );
        assert!(
            gencode_flags(&["volta".into()])
                .unwrap_err()
                .to_string()
                .contains("`volta` is not a CUDA architecture")
        );
    }
}
