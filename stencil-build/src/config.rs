//! The builder behind [`crate::compile`]: where the specs are, which backends
//! to build, where the output goes. Runs the pipeline spec -> IR -> analysis
//! -> kernels + Rust API.

use std::collections::HashSet;
use std::env;
use std::path::{Path, PathBuf};

use heck::ToSnakeCase;

use crate::analysis::{Analysis, analyse};
use crate::backend::{gpu, openmp};
use crate::codegen::rust::{self, Compiled, GpuLink, Linked};
use crate::diagnostic::Diagnostic;
use crate::ir::{Stencil, lower_all};
use crate::{Error, spec, toolchain, tuning};

/// A kernel backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// C11 with OpenMP, compiled by the C compiler `cc` finds.
    OpenMp,
    /// CUDA, compiled by `nvcc`, linked with the static CUDA runtime.
    Cuda,
    /// HIP (AMD GPUs), compiled by `hipcc`, linked with `libamdhip64`.
    Hip,
}

impl Backend {
    /// The Cargo feature that enables it.
    pub fn feature(self) -> &'static str {
        match self {
            Backend::OpenMp => "openmp",
            Backend::Cuda => "cuda",
            Backend::Hip => "hip",
        }
    }
}

/// Builder for a stencil compilation, for when [`crate::compile`]'s defaults
/// do not fit.
///
/// ```no_run
/// // build.rs
/// fn main() -> Result<(), stencil_build::Error> {
///     stencil_build::Config::new()
///         .spec("kernels/heat.stencil.toml")
///         .openmp_flag("-march=native")
///         .compile()
/// }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Config {
    specs: Vec<PathBuf>,
    search_dirs: Vec<PathBuf>,
    backends: Option<Vec<Backend>>,
    out_dir: Option<PathBuf>,
    out_file: Option<String>,
    openmp_flags: Vec<String>,
    openmp_levels: Option<Vec<String>>,
    cuda_flags: Vec<String>,
    cuda_archs: Vec<String>,
    hip_flags: Vec<String>,
    hip_archs: Vec<String>,
    hip_through_nvcc: Option<PathBuf>,
    on_cpu: Vec<PathBuf>,
    arrays: Option<bool>,
}

impl Config {
    /// Defaults: every spec under the crate, backends from Cargo features,
    /// output `$OUT_DIR/stencils.rs`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Compiles this spec file. Once a spec or a search folder is given, the
    /// crate is no longer searched.
    pub fn spec(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.specs.push(path.as_ref().to_path_buf());
        self
    }

    /// Compiles every `*.stencil.toml` under this folder (hidden folders,
    /// `target/` and nested packages skipped).
    pub fn search_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.search_dirs.push(dir.as_ref().to_path_buf());
        self
    }

    /// Builds this backend. Once called, Cargo features are no longer read:
    /// only the backends named are built.
    pub fn backend(&mut self, backend: Backend) -> &mut Self {
        self.backends.get_or_insert_with(Vec::new).push(backend);
        self
    }

    /// Builds only the pure-Rust reference, whatever the Cargo features say.
    pub fn no_backends(&mut self) -> &mut Self {
        self.backends = Some(Vec::new());
        self
    }

    /// Where generated files go (default: `$OUT_DIR`).
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Name of the generated Rust file in the output folder (default: `stencils.rs`).
    pub fn out_file(&mut self, name: impl Into<String>) -> &mut Self {
        self.out_file = Some(name.into());
        self
    }

    /// Compiles the OpenMP C again for these x86-64 levels (`x86-64-v3`,
    /// `x86-64-v4`; none: the build's target only), each call running the
    /// widest the processor has (`stencil_rt::openmp::isa`). Default: every
    /// level the target lacks, on x86-64 with GCC or Clang; a level the
    /// target has needs no copy. The environment variable
    /// `STENCIL_OPENMP_LEVELS` (comma-separated, or `none`) overrides it.
    pub fn openmp_levels<S: AsRef<str>>(&mut self, levels: &[S]) -> &mut Self {
        self.openmp_levels = Some(levels.iter().map(|l| l.as_ref().to_owned()).collect());
        self
    }

    /// Passes an extra flag to the C compiler for the OpenMP kernels.
    pub fn openmp_flag(&mut self, flag: impl Into<String>) -> &mut Self {
        self.openmp_flags.push(flag.into());
        self
    }

    /// Passes an extra flag to `nvcc` for the CUDA kernels. They compile
    /// optimized (`-O3`) in every Cargo profile, without device debug
    /// information: `-G` asks for it (`-lineinfo` for the line tables a
    /// profiler reads).
    pub fn cuda_flag(&mut self, flag: impl Into<String>) -> &mut Self {
        self.cuda_flags.push(flag.into());
        self
    }

    /// Builds CUDA machine code for this architecture (`sm_90`, ...); PTX of the
    /// last one is embedded too. Default: `sm_80` and `sm_90`. The environment
    /// variable `STENCIL_CUDA_ARCH` (comma-separated) overrides both.
    pub fn cuda_arch(&mut self, arch: impl Into<String>) -> &mut Self {
        self.cuda_archs.push(arch.into());
        self
    }

    fn cuda_archs(&self) -> Vec<String> {
        archs("STENCIL_CUDA_ARCH", &self.cuda_archs, &["sm_80", "sm_90"])
    }

    /// Passes an extra flag to `hipcc` for the HIP kernels.
    pub fn hip_flag(&mut self, flag: impl Into<String>) -> &mut Self {
        self.hip_flags.push(flag.into());
        self
    }

    /// Builds HIP code for this AMD target (`gfx90a`, ...). Default: `gfx90a`
    /// and `gfx942`. The environment variable `STENCIL_HIP_ARCH`
    /// (comma-separated) overrides both.
    pub fn hip_arch(&mut self, arch: impl Into<String>) -> &mut Self {
        self.hip_archs.push(arch.into());
        self
    }

    /// Whether each stencil gets `run_arrays`, taking `ndarray` views
    /// (through `stencil_rt::ndarray`, so `stencil-rt`'s feature `ndarray`
    /// must be on). Default: whether the crate being built has a feature
    /// `ndarray` turned on (declare it `ndarray = ["stencil-rt/ndarray"]`).
    pub fn ndarray(&mut self, on: bool) -> &mut Self {
        self.arrays = Some(on);
        self
    }

    /// Test-only: compiles the HIP kernels with `nvcc` for the CUDA targets
    /// instead of with `hipcc`, `include_dir` holding a `hip/hip_runtime.h` that
    /// maps the HIP runtime calls onto CUDA. Runs the generated HIP source on an
    /// NVIDIA GPU; not a way to ship HIP code.
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn hip_through_nvcc(&mut self, include_dir: impl AsRef<Path>) -> &mut Self {
        self.hip_through_nvcc = Some(include_dir.as_ref().to_path_buf());
        self
    }

    /// Test-only: compiles the CUDA and HIP kernels as C++ for the CPU,
    /// `include_dirs` first on the include path: one holding a
    /// `cuda_runtime.h` that emulates the device (each GPU thread a fiber)
    /// and, for HIP, one holding a `hip/hip_runtime.h` that maps HIP onto it.
    /// Runs the generated kernels' logic on machines without a GPU; says
    /// nothing of their speed, and is not a way to ship.
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn gpu_on_cpu(&mut self, include_dirs: &[PathBuf]) -> &mut Self {
        self.on_cpu = include_dirs.to_vec();
        self
    }

    /// Checks every spec, generates the kernels and the Rust API, and compiles
    /// the kernels. Prints the `cargo:` directives a build script needs.
    pub fn compile(&self) -> Result<(), Error> {
        crate::on_deep_stack(|| self.compile_here())
    }

    /// [`Config::compile`] on the calling thread.
    fn compile_here(&self) -> Result<(), Error> {
        let out_dir = self.output_dir()?;
        let files = self.spec_files()?;
        let stencils = load_all(&files)?;
        let (tunings, warnings) = tuning::tunings(&files, &stencils)?;
        for w in warnings {
            println!("cargo:warning={w}");
        }
        let backends = self.enabled_backends();
        let prefix = symbol_prefix();
        let mut linked = Linked {
            arrays: self
                .arrays
                .unwrap_or_else(|| env::var_os("CARGO_FEATURE_NDARRAY").is_some()),
            ..Linked::default()
        };
        if backends.contains(&Backend::OpenMp) {
            let levels = toolchain::openmp_levels(self.openmp_levels.as_deref())?;
            build_openmp(&stencils, &out_dir, &prefix, (&levels, &self.openmp_flags))?;
            linked.openmp = Some(prefix.clone());
        }
        if backends.contains(&Backend::Cuda) {
            linked.cuda = Some(build_gpu(
                &stencils,
                &tunings,
                &out_dir,
                &prefix,
                &gpu::CUDA,
                |files, lib| {
                    if self.on_cpu.is_empty() {
                        toolchain::build_cuda(files, lib, &self.cuda_archs(), &self.cuda_flags)
                    } else {
                        toolchain::build_on_cpu(files, lib, &self.on_cpu, &gpu::CUDA)
                    }
                },
            )?);
        }
        if backends.contains(&Backend::Hip) {
            linked.hip = Some(build_gpu(
                &stencils,
                &tunings,
                &out_dir,
                &prefix,
                &gpu::HIP,
                |files, lib| match &self.hip_through_nvcc {
                    _ if !self.on_cpu.is_empty() => {
                        toolchain::build_on_cpu(files, lib, &self.on_cpu, &gpu::HIP)
                    }
                    Some(include) => {
                        let mut flags = vec![
                            "-x".to_string(),
                            "cu".to_string(),
                            format!("-I{}", include.display()),
                        ];
                        flags.extend(self.hip_flags.iter().cloned());
                        toolchain::build_cuda(files, lib, &self.cuda_archs(), &flags)
                    }
                    None => {
                        let archs =
                            archs("STENCIL_HIP_ARCH", &self.hip_archs, &["gfx90a", "gfx942"]);
                        toolchain::build_hip(files, lib, &archs, &self.hip_flags)
                    }
                },
            )?);
        }
        let code = rust_api(&stencils, &linked)?;
        let out_file = out_dir.join(self.out_file.as_deref().unwrap_or("stencils.rs"));
        write(&out_file, &code)
    }

    fn output_dir(&self) -> Result<PathBuf, Error> {
        match &self.out_dir {
            Some(d) => Ok(d.clone()),
            None => env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or_else(|| Error::Environment("OUT_DIR is not set: call compile() from a build script, or set Config::out_dir".into())),
        }
    }

    /// The spec files to compile, sorted; prints `rerun-if-changed` for them
    /// and for every folder searched, so a new spec triggers a rebuild (but
    /// not for those in `OUT_DIR`, which a build script writes: [`rerun_if_changed`]).
    fn spec_files(&self) -> Result<Vec<(PathBuf, PathBuf)>, Error> {
        let mut files: Vec<PathBuf> = self.specs.clone();
        let mut dirs = self.search_dirs.clone();
        let root = env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
        if files.is_empty() && dirs.is_empty() {
            let root = root.clone().ok_or_else(|| Error::Environment("CARGO_MANIFEST_DIR is not set: call compile() from a build script, or name specs with Config::spec".into()))?;
            // The crate root holds target/ and the Rust sources: only its
            // folders that hold specs are watched, so that editing a source
            // file does not regenerate and recompile every kernel.
            discover(&root, &mut files, Watch::SpecFolders)?;
        }
        for dir in dirs.drain(..) {
            discover(&dir, &mut files, Watch::Folder)?;
        }
        files.sort();
        let files = distinct_files(files);
        for f in &files {
            utf8_path(f)?;
            rerun_if_changed(f);
        }
        let shown = |p: &Path| {
            root.as_ref()
                .and_then(|r| p.strip_prefix(r).ok())
                .map_or_else(|| p.to_path_buf(), Path::to_path_buf)
        };
        Ok(files.into_iter().map(|f| (shown(&f), f)).collect())
    }

    fn enabled_backends(&self) -> Vec<Backend> {
        match &self.backends {
            Some(b) => b.clone(),
            None => [Backend::OpenMp, Backend::Cuda, Backend::Hip]
                .into_iter()
                .filter(|b| {
                    env::var_os(format!("CARGO_FEATURE_{}", b.feature().to_uppercase())).is_some()
                })
                .collect(),
        }
    }
}

/// GPU targets: `$var` (comma-separated) if set, else the ones configured, else `defaults`.
fn archs(var: &str, configured: &[String], defaults: &[&str]) -> Vec<String> {
    match env::var(var) {
        Ok(list) if !list.trim().is_empty() => {
            list.split(',').map(|a| a.trim().to_string()).collect()
        }
        _ if !configured.is_empty() => configured.to_vec(),
        _ => defaults.iter().map(|a| a.to_string()).collect(),
    }
}

/// Tells Cargo to rerun the build script when `path` changes, unless `path`
/// lies in `OUT_DIR`: specs a build script writes there itself are newer than
/// the start of its run (the time Cargo compares with), so watching them
/// would rerun it, and recompile every kernel, on every build.
pub(crate) fn rerun_if_changed(path: &Path) {
    if !generated(path) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// Whether `path` lies in the build script's `OUT_DIR`.
fn generated(path: &Path) -> bool {
    let Some(out) = env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    path.starts_with(&out)
        || matches!((path.canonicalize(), out.canonicalize()), (Ok(p), Ok(o)) if p.starts_with(&o))
}

/// Which folders [`discover`] tells Cargo to watch (Cargo scans a watched
/// folder's whole subtree, so a spec added anywhere in it is seen).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Watch {
    /// None.
    No,
    /// The folder searched.
    Folder,
    /// The folders directly inside it whose subtree holds a spec.
    SpecFolders,
}

/// Adds every `*.stencil.toml` under `dir` to `out`, skipping hidden folders,
/// `target/` and nested packages, and following symbolic links to folders
/// (each folder once); prints `rerun-if-changed` as `watch` says.
fn discover(dir: &Path, out: &mut Vec<PathBuf>, watch: Watch) -> Result<(), Error> {
    discover_in(dir, out, watch, &mut HashSet::new())
}

fn discover_in(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    watch: Watch,
    seen: &mut HashSet<PathBuf>,
) -> Result<(), Error> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    // A link back up the tree would otherwise be searched forever.
    if !seen.insert(dir.canonicalize().map_err(io(dir))?) {
        return Ok(());
    }
    if watch == Watch::Folder {
        rerun_if_changed(dir);
    }
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let mut kind = entry.file_type().map_err(io(&path))?;
        if kind.is_symlink() {
            // A dangling link is not a folder; a spec's name on one fails at load, saying so.
            kind = std::fs::metadata(&path).map_or(kind, |m| m.file_type());
        }
        if kind.is_dir() {
            if name != "target" && !path.join("Cargo.toml").exists() {
                let before = out.len();
                discover_in(&path, out, Watch::No, seen)?;
                if watch == Watch::SpecFolders && out.len() > before {
                    rerun_if_changed(&path);
                }
            }
        } else if name.ends_with(".stencil.toml") {
            out.push(path);
        }
    }
    Ok(())
}

/// `files` without the second and later paths of one file (`a.stencil.toml`
/// and `./a.stencil.toml`, or a file under two searched folders).
fn distinct_files(files: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = HashSet::new();
    files
        .into_iter()
        .filter(|f| seen.insert(f.canonicalize().unwrap_or_else(|_| f.clone())))
        .collect()
}

/// Refuses a spec path that is not UTF-8: Cargo could not watch it (its
/// `rerun-if-changed` line would name another path, rerunning the build
/// script on every build), and a stencil's default name comes from it.
fn utf8_path(path: &Path) -> Result<(), Error> {
    if path.to_str().is_some() {
        return Ok(());
    }
    Err(Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the path is not valid UTF-8, which Cargo cannot watch: rename the file or its folders",
        ),
    })
}

/// Loads, checks and analyses every spec; all problems are reported together.
fn load_all(files: &[(PathBuf, PathBuf)]) -> Result<Vec<(Stencil, Analysis)>, Error> {
    let mut stencils: Vec<(Stencil, Analysis)> = Vec::new();
    let mut errors = Vec::new();
    for (shown, path) in files {
        let checked = spec::load(path, shown).and_then(|(s, src)| {
            let all = checked(&s, &src)?;
            for st in &all {
                let clash = |other: &Stencil| {
                    other.name == st.name
                        || other.family.as_ref().unwrap_or(&other.name) == family(st)
                };
                if let Some((other, _)) = stencils.iter().find(|(other, _)| clash(other)) {
                    return Err(duplicate(&s, &src, family(st), other));
                }
            }
            Ok(all)
        });
        match checked {
            Ok(all) => stencils.extend(all.into_iter().map(|st| {
                let an = analyse(&st);
                (st, an)
            })),
            Err(d) => errors.push(d),
        }
    }
    if errors.is_empty() {
        Ok(stencils)
    } else {
        Err(Error::Spec(errors))
    }
}

/// The stencils of spec `s` (one per dtype it lists), lowered and with
/// their GPU plans checked.
pub(crate) fn checked(s: &spec::Spec, src: &spec::Source) -> Result<Vec<Stencil>, Diagnostic> {
    let mut all = lower_all(s, src)?;
    for st in &mut all {
        check_gpu_plans(s, src, st)?;
        if crate::ir::settled_by_form(st) {
            let form = openmp::host_form(st).into_owned();
            crate::ir::fuse_form(&s.tiling, st, &form, src)?;
        }
    }
    Ok(all)
}

/// The name a stencil's module has in the generated Rust: its family's for
/// a spec that lists its dtypes.
fn family(st: &Stencil) -> &str {
    st.family.as_deref().unwrap_or(&st.name)
}

/// The GPU kernels that `[tiling.cuda]` and `[tiling.hip]` ask for, checked
/// where the spec is at hand, for every spec whatever the backends built: a
/// strategy its GPU form cannot run (`temporal` of a stencil of several
/// statements that stay apart, say) is an error at `strategy`; a plan that
/// no kernel can run (vectors, steps, blocks or shared memory the strategy
/// cannot take) is an error at the key it names, else at `strategy`;
/// each saying what to write instead. `auto`'s plans are checked when
/// their backend is built.
fn check_gpu_plans(s: &spec::Spec, src: &spec::Source, st: &Stencil) -> Result<(), Diagnostic> {
    let asked = [
        (&gpu::CUDA, &s.tiling.cuda, &st.tiling.cuda),
        (&gpu::HIP, &s.tiling.hip, &st.tiling.hip),
    ];
    let form = gpu::gpu_form(st);
    for (d, section, tiling) in asked {
        if let Some(section) = section {
            crate::ir::check_strategy(section, tiling, (st, &form), d.name, src)?;
            checked_plan(section, tiling, &form, d, src)?;
        }
    }
    Ok(())
}

/// The plan `tiling` (checked from `section`, of `src`) asks of `form` (a
/// stencil's [`gpu::gpu_form`]) on `d`, settled and checked: an error at
/// the key its message names, else at `strategy`.
pub(crate) fn checked_plan(
    section: &toml::Spanned<spec::GpuTilingSection>,
    tiling: &crate::ir::GpuTiling,
    form: &Stencil,
    d: &gpu::Dialect,
    src: &spec::Source,
) -> Result<gpu::Plan, Diagnostic> {
    gpu::resolve(tiling, form, d)
        .and_then(|plan| gpu::fit(plan, tiling.block.is_some(), form, d))
        .map_err(|message| src.error(plan_key(section, &message), message))
}

/// Where in `section` the plan error `message` points: the first key it
/// names, else `strategy`, else the table.
fn plan_key(
    section: &toml::Spanned<spec::GpuTilingSection>,
    message: &str,
) -> std::ops::Range<usize> {
    let g = section.get_ref();
    let keys = [
        ("vector", g.vector.as_ref().map(|v| v.span())),
        ("time_block", g.time_block.as_ref().map(|v| v.span())),
        ("block", g.block.as_ref().map(|v| v.span())),
        ("chunk", g.chunk.as_ref().map(|v| v.span())),
        ("coarsen", g.coarsen.as_ref().map(|v| v.span())),
        ("occupancy", g.occupancy.as_ref().map(|v| v.span())),
    ];
    keys.into_iter()
        .filter_map(|(key, at)| Some((message.find(&format!("`{key}"))?, at?)))
        .min_by_key(|(found, _)| *found)
        .map(|(_, at)| at)
        .or_else(|| g.strategy.as_ref().map(|s| s.span()))
        .unwrap_or_else(|| section.span())
}

fn duplicate(s: &spec::Spec, src: &spec::Source, name: &str, other: &Stencil) -> Diagnostic {
    let span = s.stencil.get_ref().name.as_ref().map_or(0..0, |n| n.span());
    src.error(
        span,
        format!(
            "a stencil named `{name}` is already defined in {}",
            other.path.display()
        ),
    )
    .with_hint("give each stencil its own `name` in [stencil]")
}

/// C symbols are prefixed with the package name and version so that two
/// crates' kernels never clash at link time.
fn symbol_prefix() -> String {
    let name = env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "stencils".into());
    let version = env::var("CARGO_PKG_VERSION").unwrap_or_default();
    format!("{}_{}", name, version)
        .to_snake_case()
        .replace("__", "_")
}

fn build_openmp(
    stencils: &[(Stencil, Analysis)],
    out_dir: &Path,
    prefix: &str,
    (levels, flags): (&[&'static openmp::levels::Level], &[String]),
) -> Result<(), Error> {
    let dir = out_dir.join("stencil-build").join("openmp");
    std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
        path: dir.clone(),
        source,
    })?;
    let mut files = Vec::new();
    let mut copies: Vec<(&openmp::levels::Level, Vec<PathBuf>)> =
        levels.iter().map(|&level| (level, Vec::new())).collect();
    for (st, an) in stencils {
        on_form(openmp::host_form(st), an, |st, an| {
            let kernels = format!("{}.c", st.name);
            let path = dir.join(&kernels);
            write(&path, &openmp::source(st, an, prefix))?;
            files.push(path);
            let path = dir.join(openmp::levels::dispatch_file(st));
            write(&path, &openmp::levels::dispatch_source(st, prefix, levels))?;
            files.push(path);
            for (level, paths) in &mut copies {
                let path = dir.join(openmp::levels::copy_file(st, level));
                write(
                    &path,
                    &openmp::levels::copy_source(st, prefix, level, &kernels),
                )?;
                paths.push(path);
            }
            Ok::<_, Error>(())
        })?;
    }
    let runtime = dir.join("openmp_runtime.c");
    write(&runtime, &openmp::runtime_source(prefix))?;
    files.push(runtime);
    let every: Vec<PathBuf> = files
        .iter()
        .chain(copies.iter().flat_map(|(_, paths)| paths))
        .cloned()
        .collect();
    toolchain::remove_stale(&every)?;
    toolchain::build_openmp(&files, &copies, &format!("{prefix}_openmp"), flags)
}

/// Generates one GPU dialect's kernels for every stencil, its own plan's
/// and those its tuning file lists, and has `compile` build them.
fn build_gpu(
    stencils: &[(Stencil, Analysis)],
    tunings: &tuning::Tunings,
    out_dir: &Path,
    prefix: &str,
    d: &gpu::Dialect,
    compile: impl FnOnce(&[PathBuf], &str) -> Result<(), Error>,
) -> Result<GpuLink, Error> {
    let dir = out_dir.join("stencil-build").join(d.name);
    std::fs::create_dir_all(&dir).map_err(|source| Error::Io {
        path: dir.clone(),
        source,
    })?;
    let mut files = Vec::new();
    let mut plans = Vec::new();
    for (k, (st, an)) in stencils.iter().enumerate() {
        let compiled = on_gpu_form(st, an, |form, form_an| {
            let own = Compiled::own(gpu_plan(form, d)?, prefix);
            let tuned = tunings
                .of(k, d)
                .into_iter()
                .enumerate()
                .map(|(j, t)| Compiled {
                    plan: t.plan,
                    prefix: format!("{prefix}_tuned{}", j + 1),
                    tuned: Some(t.entry),
                });
            let compiled: Vec<Compiled> = std::iter::once(own).chain(tuned).collect();
            for (j, c) in compiled.iter().enumerate() {
                let file = match j {
                    0 => format!("{}.{}", st.name, d.extension),
                    _ => format!("{}.tuned{j}.{}", st.name, d.extension),
                };
                let path = dir.join(file);
                write(&path, &gpu::source(form, form_an, &c.plan, &c.prefix, d))?;
                files.push(path);
            }
            Ok::<_, Error>(compiled)
        })?;
        plans.push(compiled);
    }
    let runtime = dir.join(format!("{}_runtime.{}", d.name, d.extension));
    write(&runtime, &gpu::runtime_source(prefix, d))?;
    files.push(runtime);
    toolchain::remove_stale(&files)?;
    compile(&files, &format!("{prefix}_{}", d.name))?;
    Ok(GpuLink {
        prefix: prefix.to_string(),
        dialect: *d,
        plans,
    })
}

/// The Rust API of `stencils`, linked to the kernels of `linked`.
fn rust_api(stencils: &[(Stencil, Analysis)], linked: &Linked) -> Result<String, Error> {
    rust::generate(stencils, linked).map_err(|e| {
        Error::Environment(format!(
            "generated Rust does not parse (a stencil-build bug): {e}"
        ))
    })
}

/// `f` of a stencil's GPU form ([`gpu::gpu_form`], what its kernels
/// compute) and the form's analysis, as [`on_form`].
fn on_gpu_form<R>(st: &Stencil, an: &Analysis, f: impl FnOnce(&Stencil, &Analysis) -> R) -> R {
    on_form(gpu::gpu_form(st), an, f)
}

/// `f` of a backend's form of a stencil and the form's analysis (`an`, the
/// stencil's, where the form is the stencil itself), each computed once.
fn on_form<R>(
    form: std::borrow::Cow<'_, Stencil>,
    an: &Analysis,
    f: impl FnOnce(&Stencil, &Analysis) -> R,
) -> R {
    match form {
        std::borrow::Cow::Borrowed(st) => f(st, an),
        std::borrow::Cow::Owned(form) => f(&form, &analyse(&form)),
    }
}

/// The plan the `[tiling.<d>]` of `form` (a stencil's [`gpu::gpu_form`])
/// asks for, settled and checked.
fn gpu_plan(form: &Stencil, d: &gpu::Dialect) -> Result<gpu::Plan, Error> {
    let tiling = if *d == gpu::HIP {
        &form.tiling.hip
    } else {
        &form.tiling.cuda
    };
    gpu::resolve(tiling, form, d)
        .and_then(|plan| gpu::fit(plan, tiling.block.is_some(), form, d))
        .map_err(|message| Error::Toolchain {
            backend: d.name,
            message: format!("{}: {message}", form.path.display()),
        })
}

/// The spec `text` (reported as coming from `path`), checked and lowered:
/// one stencil per dtype it lists.
pub(crate) fn lowered(path: &Path, text: &str) -> Result<Vec<Stencil>, Error> {
    let src = spec::Source {
        path: path.to_path_buf(),
        text: text.to_string(),
    };
    spec::parse(&src)
        .and_then(|s| checked(&s, &src))
        .map_err(|d| Error::Spec(vec![d]))
}

/// What stencil-build generates for one spec, every backend included, before
/// any compiler runs: the files [`Config::compile`] writes to `OUT_DIR`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Sources {
    /// The Rust API (`stencils.rs`), with the reference and every backend's module.
    pub rust: String,
    /// The OpenMP-C kernels, each stencil's followed by its entry points as
    /// a build for the baseline x86-64 compiles them (with copies for
    /// `x86-64-v3` and `x86-64-v4`).
    pub openmp: String,
    /// The CUDA kernels.
    pub cuda: String,
    /// The HIP kernels.
    pub hip: String,
}

/// Checks the spec `text` (reported as coming from `path`) and generates its
/// code for every backend without compiling anything: to see what a spec
/// becomes, or to validate specs outside a build. Errors are the ones
/// [`compile`](crate::compile) reports, located in `text`. For a spec that
/// lists its dtypes, each kernel text holds one file per precision, in the
/// spec's order, each headed with its stencil.
pub fn generate(path: impl AsRef<Path>, text: &str) -> Result<Sources, Error> {
    let path = path.as_ref();
    crate::on_deep_stack(|| generate_here(path, text))
}

/// [`generate`] on the calling thread.
fn generate_here(path: &Path, text: &str) -> Result<Sources, Error> {
    let stencils: Vec<(Stencil, Analysis)> = lowered(path, text)?
        .into_iter()
        .map(|st| {
            let an = analyse(&st);
            (st, an)
        })
        .collect();
    let prefix = "stencils";
    let mut sources = Sources {
        rust: String::new(),
        openmp: String::new(),
        cuda: String::new(),
        hip: String::new(),
    };
    let mut linked = Linked {
        openmp: Some(prefix.to_string()),
        ..Linked::default()
    };
    for (dialect, text) in [(gpu::CUDA, &mut sources.cuda), (gpu::HIP, &mut sources.hip)] {
        let mut plans = Vec::new();
        for (st, an) in &stencils {
            let own = on_gpu_form(st, an, |form, form_an| {
                let plan = gpu_plan(form, &dialect)?;
                text.push_str(&gpu::source(form, form_an, &plan, prefix, &dialect));
                Ok::<_, Error>(Compiled::own(plan, prefix))
            })?;
            plans.push(vec![own]);
        }
        let link = Some(GpuLink {
            prefix: prefix.to_string(),
            dialect,
            plans,
        });
        if dialect == gpu::CUDA {
            linked.cuda = link;
        } else {
            linked.hip = link;
        }
    }
    for (st, an) in &stencils {
        on_form(openmp::host_form(st), an, |st, an| {
            sources.openmp.push_str(&openmp::source(st, an, prefix));
            let levels = openmp::levels::LEVELS;
            sources
                .openmp
                .push_str(&openmp::levels::dispatch_source(st, prefix, &levels));
        });
    }
    sources.rust = rust_api(&stencils, &linked)?;
    Ok(sources)
}

/// The GPU plans around the one a spec gets on one backend, each as the
/// `[tiling.<backend>]` section a spec writes to ask for it: what to time
/// when tuning a stencil.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PlanSpace {
    /// The plan the spec gets: `auto`'s where it names no strategy (written
    /// out, it names its strategy: the same kernels, without the kernels
    /// `auto` adds for small grids or its timing of fused launches).
    pub chosen: String,
    /// Its neighbours that the stencil accepts: each of its parameters
    /// halved or doubled (`time_block` and `occupancy` one less or more),
    /// and each other strategy's model plan.
    pub around: Vec<String>,
    /// A coarse sweep of the space: every strategy's model plan, and each
    /// with one key at a time set to each of a few values (block shapes,
    /// `chunk`, `coarsen`, `vector`, `time_block`, `occupancy`).
    pub sweep: Vec<String>,
}

impl PlanSpace {
    /// The plan space of `st` on `d`, planned on `form` (its GPU form);
    /// with `exhaustive`, its sweep holds every combination of the swept
    /// values. Neighbours and sweep hold only plans a spec may name (the
    /// strategy checks of a written `[tiling.*]`, [`crate::ir::refused_for`]).
    pub(crate) fn of(
        st: &Stencil,
        form: &Stencil,
        d: &gpu::Dialect,
        exhaustive: bool,
    ) -> Result<Self, Error> {
        let plan = gpu_plan(form, d)?;
        let sections = |plans: Vec<gpu::Plan>| {
            plans
                .iter()
                .filter(|p| crate::ir::refused_for(&p.tiling(), (st, form), d.name).is_none())
                .map(|p| p.section(d.name))
                .collect()
        };
        Ok(PlanSpace {
            chosen: plan.section(d.name),
            around: sections(gpu::plan::candidates(&plan, form, d)),
            sweep: sections(gpu::plan::sweep(form, d, exhaustive)),
        })
    }
}

/// The GPU plan spaces of one spec ([`plan_space`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PlanSpaces {
    /// CUDA's.
    pub cuda: PlanSpace,
    /// HIP's.
    pub hip: PlanSpace,
}

/// Checks the spec `text` (reported as coming from `path`) and lists, for
/// each GPU backend, the plan it gets and the plans around it (of its first
/// dtype, where it lists several: `[tiling.*]` applies to each). Errors are
/// the ones [`compile`](crate::compile) reports, located in `text`.
pub fn plan_space(path: impl AsRef<Path>, text: &str) -> Result<PlanSpaces, Error> {
    let path = path.as_ref();
    crate::on_deep_stack(|| plan_space_here(path, text))
}

/// [`plan_space`] on the calling thread.
fn plan_space_here(path: &Path, text: &str) -> Result<PlanSpaces, Error> {
    let st = lowered(path, text)?.remove(0);
    let form = gpu::gpu_form(&st);
    Ok(PlanSpaces {
        cuda: PlanSpace::of(&st, &form, &gpu::CUDA, false)?,
        hip: PlanSpace::of(&st, &form, &gpu::HIP, false)?,
    })
}

/// Writes a generated file where its text changed (rewritten, an unchanged
/// `stencils.rs` would recompile the crate that includes it, and an
/// unchanged source its kernels).
fn write(path: &Path, text: &str) -> Result<(), Error> {
    toolchain::write_if_changed(path, text).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::archs;

    #[test]
    fn targets_come_from_the_environment_then_the_config_then_the_defaults() {
        let var = "STENCIL_BUILD_TEST_ARCHS";
        assert_eq!(archs(var, &[], &["sm_80", "sm_90"]), ["sm_80", "sm_90"]);
        assert_eq!(archs(var, &["sm_75".into()], &["sm_80"]), ["sm_75"]);
        // SAFETY: this variable is read by this test alone.
        unsafe { std::env::set_var(var, " gfx90a, gfx1100 ") };
        assert_eq!(
            archs(var, &["sm_75".into()], &["sm_80"]),
            ["gfx90a", "gfx1100"]
        );
        unsafe { std::env::remove_var(var) };
    }
}
