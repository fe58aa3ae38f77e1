//! Generates every variant under test: each example stencil and each spec in
//! `stencils/`, in f32 and f64 with fixed and periodic boundaries (two of
//! the four where `STENCIL_TESTS` asks for fewer: [`pairs`]), and
//! [`RANDOM_STENCILS`] random stencils, each in its own dtype and boundary
//! (all of them, with the `cuda` or `hip` feature, with each GPU strategy);
//! compiles them with stencil-build; and writes a registry and one `#[test]`
//! per variant and backend.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use stencil_spec_check::random;

/// How many random stencils (`random_<n>`) are drawn for the variants, each
/// in its own dtype and boundary.
const RANDOM_STENCILS: usize = 8;

type Error = Box<dyn std::error::Error>;

/// The backends the variants are built for, from the crate's features.
struct Backends {
    openmp: bool,
    cuda: bool,
    hip: bool,
    /// The GPU kernels built for the CPU (`cuda-on-cpu/`): their tests run
    /// here, not only on a GPU.
    on_cpu: bool,
}

impl Backends {
    fn from_features() -> Self {
        let on = |f: &str| std::env::var_os(format!("CARGO_FEATURE_{f}")).is_some();
        Self {
            openmp: on("OPENMP"),
            cuda: on("CUDA"),
            hip: on("HIP"),
            on_cpu: on("GPU_ON_CPU"),
        }
    }

    fn gpu(&self) -> bool {
        self.cuda || self.hip
    }
}

/// A developer's narrowing (`STENCIL_TESTS_ONLY`): only the specs and
/// random stencils (`random_<n>`) whose name holds one of these
/// comma-separated texts, for the generated tests alone (the others name
/// variants it leaves out).
struct Only(Option<Vec<String>>);

impl Only {
    fn from_env() -> Self {
        println!("cargo:rerun-if-env-changed=STENCIL_TESTS_ONLY");
        Self(
            std::env::var("STENCIL_TESTS_ONLY")
                .ok()
                .map(|o| o.split(',').map(str::to_string).collect()),
        )
    }

    fn picks(&self, name: &str) -> bool {
        self.0
            .as_ref()
            .is_none_or(|o| o.iter().any(|t| name.contains(t.as_str())))
    }
}

/// A base spec, with the (dtype, boundary) pairs it is built in.
type Base = (toml::Table, Vec<(&'static str, &'static str)>);

/// How many of each kind of stencil are built, for the registry's
/// constants: specs built in the pairs and in their own boundary (each
/// with how many have one axis), and the random stencils.
#[derive(Default)]
struct Counts {
    pairs: usize,
    periodic_pairs: usize,
    paired: (usize, usize),
    own: (usize, usize),
    random: (usize, usize),
    /// The random stencils that fuse, with a fixed boundary and a periodic one.
    random_fusable: (usize, usize),
    /// The random leapfrogs whose steps only `temporal` fuses, likewise.
    random_leapfrog: (usize, usize),
    random_tensor: usize,
}

fn main() -> Result<(), Error> {
    let backends = Backends::from_features();
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    let variants_dir = out.join("variants");
    // Start empty: a variant this build no longer writes must not linger.
    if variants_dir.exists() {
        std::fs::remove_dir_all(&variants_dir)?;
    }
    std::fs::create_dir_all(&variants_dir)?;
    let only = Only::from_env();
    // A narrowed build leaves out the variants the hand-written tests name:
    // they compile only without it, and the registry's count is not checked.
    println!("cargo::rustc-check-cfg=cfg(stencil_tests_narrowed)");
    if only.0.is_some() {
        println!("cargo::rustc-cfg=stencil_tests_narrowed");
    }
    let mut counts = Counts::default();
    let mut bases = spec_bases(&only, backends.gpu(), &mut counts)?;
    bases.extend(random_bases(&only, &mut counts)?);
    let mut generated = Generated::default();
    for base in &bases {
        generated.variants(base, &backends, &variants_dir)?;
    }
    std::fs::write(out.join("registry.rs"), generated.registry(&counts))?;
    std::fs::write(out.join("cross_backend_tests.rs"), &generated.tests)?;
    if backends.gpu() && only.0.is_none() {
        write_tuning(&variants_dir)?;
    }
    compile(&variants_dir, &backends)
}

/// The example stencils and the specs in `stencils/` that `only` picks,
/// each with its pairs (its own boundary and dtype where it names its
/// axes' sides), counted in `counts`.
fn spec_bases(only: &Only, gpu: bool, counts: &mut Counts) -> Result<Vec<Base>, Error> {
    let mut specs: Vec<PathBuf> = Vec::new();
    for dir in ["../examples", "stencils"] {
        println!("cargo:rerun-if-changed={dir}");
        collect(Path::new(dir), &mut specs)?;
    }
    specs.sort();
    specs.retain(|p| {
        p.file_name()
            .is_some_and(|f| only.picks(&f.to_string_lossy()))
    });
    let pairs = pairs(gpu);
    counts.pairs = pairs.len();
    counts.periodic_pairs = pairs.iter().filter(|p| p.1 == "periodic").count();
    let mut bases = Vec::new();
    for spec in &specs {
        println!("cargo:rerun-if-changed={}", spec.display());
        let base: toml::Table = toml::from_str(&std::fs::read_to_string(spec)?)?;
        let dims = base["stencil"]["axes"].as_array().map_or(0, Vec::len);
        let (count, pairs) = if sides_named(&base) {
            (&mut counts.own, vec![(own_dtype(&base), MIXED)])
        } else {
            (&mut counts.paired, pairs.clone())
        };
        count.0 += 1;
        count.1 += usize::from(dims == 1);
        bases.push((base, pairs));
    }
    Ok(bases)
}

/// The random stencils of [`random_draws`] that `only` picks, each in its
/// own dtype and boundary, counted in `counts` (all draws, and those the
/// fused strategies and `tensor` build).
fn random_bases(only: &Only, counts: &mut Counts) -> Result<Vec<Base>, Error> {
    let draws = random_draws()?;
    let random = random_stencils(draws.end)?;
    let random: Vec<(usize, random::RandomStencil)> =
        random.into_iter().enumerate().skip(draws.start).collect();
    counts.random = (
        random.len(),
        random.iter().filter(|(_, s)| s.axes.len() == 1).count(),
    );
    let mut bases = Vec::new();
    for (n, stencil) in random {
        if !only.picks(&format!("random_{n}")) {
            continue;
        }
        let base: toml::Table = toml::from_str(&stencil.to_toml(&format!("random_{n}")))?;
        let dims = stencil.axes.len();
        let fuses = |strategy| fusable(&base, dims, stencil.boundary, strategy);
        let (fusable, leapfrog) = if stencil.boundary == "periodic" {
            (&mut counts.random_fusable.1, &mut counts.random_leapfrog.1)
        } else {
            (&mut counts.random_fusable.0, &mut counts.random_leapfrog.0)
        };
        *fusable += usize::from(fuses("persistent"));
        *leapfrog += usize::from(fuses("temporal") && !fuses("persistent"));
        if dims == 3 && stencil.dtype == "f64" && stencil.boundary == "fixed" {
            let name = format!("random_{n}_tensor");
            let table = retyped(&base, &name, stencil.dtype, "fixed", "tensor");
            counts.random_tensor += usize::from(tensor_builds(&table, &name)?);
        }
        bases.push((base, vec![(stencil.dtype, stencil.boundary)]));
    }
    Ok(bases)
}

/// The GPU strategies every variant is also built with where a GPU backend
/// is; `naive` keeps the plain name.
fn strategies(gpu: bool) -> &'static [&'static str] {
    if !gpu {
        return &["naive"];
    }
    &[
        "naive",
        "naive_c3",
        "naive_b3",
        "tiled",
        "stream",
        "stream_c3",
        "stream_s4",
        "stream_s3v",
        "temporal",
        "temporal_c5",
        "temporal_v3",
        "temporal_vec",
        "persistent",
        "persistent_c5",
        "tensor",
        "tensor_c5",
        "auto",
    ]
}

/// Whether `strategy` fuses steps (`temporal*`, `persistent*`).
fn fused(strategy: &str) -> bool {
    strategy.starts_with("temporal") || strategy.starts_with("persistent")
}

/// The fused strategies a periodic pair is built with: the tilings whose
/// shapes differ most from `auto`'s (which builds the model's in every
/// pair): 2 steps of 3-cell lanes (2-D) or 3-row threads (3-D) through
/// chunks of 7, and `persistent` of odd steps through chunks of 5, one
/// block a multiprocessor. A periodic grid's fused kernels are the fixed
/// ones with their tiles' loads wrapped; the fixed pairs build every
/// tiling, and each of these two caught the wrapped loads set one cell off.
const PERIODIC_FUSED: [&str; 2] = ["temporal_v3", "persistent_c5"];

/// Whether `strategy` cannot build a variant of `base` in `dims` axes, `dtype`
/// and `boundary`: what the strategies refuse, before a spec is written.
fn skipped(
    base: &toml::Table,
    dims: usize,
    (dtype, boundary): (&str, &str),
    strategy: &str,
) -> bool {
    (strategy.starts_with("stream") || strategy == "auto" || strategy == "naive_b3") && dims < 2
        || fused(strategy) && !fusable(base, dims, boundary, strategy)
        || fused(strategy) && boundary == "periodic" && !PERIODIC_FUSED.contains(&strategy)
        || strategy == "temporal_vec" && dims != 3
        || strategy.starts_with("tensor") && (dims != 3 || dtype != "f64" || boundary != "fixed")
}

/// The registry's entries (one list a dtype) and the tests of the
/// variants written so far.
struct Generated {
    tests: String,
    f32s: Vec<String>,
    f64s: Vec<String>,
}

impl Default for Generated {
    fn default() -> Self {
        Self {
            tests: String::from(
                "// Generated by tests/build.rs: one test per stencil variant and backend.\n",
            ),
            f32s: Vec::new(),
            f64s: Vec::new(),
        }
    }
}

impl Generated {
    /// Writes the variants of `base` (each pair with each strategy that
    /// builds it) into `dir`, with their entries and tests.
    fn variants(
        &mut self,
        (base, pairs): &Base,
        backends: &Backends,
        dir: &Path,
    ) -> Result<(), Error> {
        let name = base["stencil"]["name"]
            .as_str()
            .ok_or("spec without a name")?
            .to_string();
        let dims = base["stencil"]["axes"].as_array().map_or(0, Vec::len);
        for &(dtype, boundary) in pairs {
            for &strategy in strategies(backends.gpu()) {
                if skipped(base, dims, (dtype, boundary), strategy) {
                    continue;
                }
                let variant = match strategy {
                    "naive" => format!("{name}_{dtype}_{boundary}"),
                    s => format!("{name}_{dtype}_{boundary}_{s}"),
                };
                let mut table = retyped(base, &variant, dtype, boundary, strategy);
                if strategy == "temporal_c5" && dims == 3 {
                    fit_three_steps(&mut table, &variant);
                }
                if strategy == "temporal_vec" && !fit_vector(&mut table, &variant)
                    || strategy.starts_with("tensor") && !tensor_builds(&table, &variant)?
                {
                    continue;
                }
                fit_hip(&mut table, &variant)?;
                std::fs::write(
                    dir.join(format!("{variant}.stencil.toml")),
                    toml::to_string(&table)?,
                )?;
                let at = self.entry(&variant, dtype, backends);
                self.tests_of(&variant, &at, strategy, backends)?;
            }
        }
        Ok(())
    }

    /// Adds `variant`'s registry entry to its dtype's list; returns the
    /// entry's place (`&stencil_tests::F32[n]`).
    fn entry(&mut self, variant: &str, dtype: &str, backends: &Backends) -> String {
        let mut runs = Vec::new();
        for (backend, built) in [
            ("openmp", backends.openmp),
            ("cuda", backends.cuda),
            ("hip", backends.hip),
        ] {
            if built {
                runs.push(format!("(\"{backend}\", {variant}::{backend}::run_grids)"));
            }
        }
        let block = if backends.openmp {
            format!("{variant}::openmp::TILING.block")
        } else {
            "&[]".into()
        };
        let cuda_tiling = if backends.cuda {
            format!(
                "Some(({variant}::cuda::TILING.strategy, {variant}::cuda::TILING.vector, {variant}::cuda::TILING.small_grids))"
            )
        } else {
            "None".into()
        };
        let entry = format!(
            "Entry {{ name: \"{variant}\", grids: {variant}::GRIDS, params: {variant}::PARAMS, min_shape: &{variant}::MIN_SHAPE, \
                 flops: {variant}::FLOPS_PER_CELL, block: {block}, cuda_tiling: {cuda_tiling}, reference: {variant}::reference::run_grids, backends: &[{}] }}",
            runs.join(", ")
        );
        let (list, table) = if dtype == "f32" {
            (&mut self.f32s, "F32")
        } else {
            (&mut self.f64s, "F64")
        };
        list.push(entry);
        format!("&stencil_tests::{table}[{}]", list.len() - 1)
    }

    /// The tests of `variant` (its entry `at`): the OpenMP kernels' (of
    /// `naive` variants) and each GPU backend's, ignored without a device
    /// unless the GPU kernels run on the CPU.
    fn tests_of(
        &mut self,
        variant: &str,
        at: &str,
        strategy: &str,
        backends: &Backends,
    ) -> Result<(), Error> {
        if backends.openmp && strategy == "naive" {
            writeln!(
                self.tests,
                "#[test]\nfn {variant}() {{\n    stencil_tests::check_against_reference({at}, \"openmp\");\n}}\n"
            )?;
        }
        for (gpu, title) in [("cuda", "CUDA"), ("hip", "HIP")]
            .into_iter()
            .filter(|(g, _)| {
                if *g == "cuda" {
                    backends.cuda
                } else {
                    backends.hip
                }
            })
        {
            let ignore = if backends.on_cpu {
                String::new()
            } else {
                format!(
                    "#[ignore = \"needs a {title} device: run with --include-ignored on a machine with one\"]\n"
                )
            };
            // And its parts, as a distributed session's overlap steps them.
            let m = format!("stencil_tests::{variant}");
            writeln!(
                self.tests,
                "#[test]\n{ignore}fn {gpu}_{variant}() {{\n    stencil_tests::check_against_reference({at}, \"{gpu}\");\n    \
                 let exact = {m}::HALO == {m}::RADIUS && {m}::BOUNDARY == \"fixed\" && {m}::REGIONS.is_empty();\n    \
                 stencil_tests::check_parts({at}, {m}::{gpu}::DEVICES, {m}::RADIUS[0], exact);\n}}\n"
            )?;
        }
        Ok(())
    }

    /// The registry: the counts the tests check the build against, and
    /// every variant's entry.
    fn registry(&self, c: &Counts) -> String {
        format!(
            "// Generated by tests/build.rs.\n/// How many random stencils are built, and how many of them have one axis.\n\
             pub const RANDOM_STENCILS: (usize, usize) = ({}, {});\n\
             /// How many (dtype, boundary) pairs each spec is built in (`STENCIL_TESTS`: 4, or 2).\n\
             pub const PAIRS: usize = {};\n\
             /// How many of those pairs have a periodic boundary.\n\
             pub const PERIODIC_PAIRS: usize = {};\n\
             /// How many specs are built in those pairs, and how many of them have one axis.\n\
             pub const PAIRED: (usize, usize) = ({}, {});\n\
             /// How many specs name their axes' sides and are built in their own boundary and dtype only, and how many of them have one axis.\n\
             pub const OWN_BOUNDARY: (usize, usize) = ({}, {});\n\
             /// How many of the random stencils `temporal` and `persistent` can fuse the steps of: with a fixed boundary, with a periodic one.\n\
             pub const RANDOM_FUSABLE: (usize, usize) = {:?};\n\
             /// How many of the random stencils are leapfrogs whose steps only `temporal` fuses (they never read their previous level): with a fixed boundary, with a periodic one.\n\
             pub const RANDOM_LEAPFROG_FUSABLE: (usize, usize) = {:?};\n\
             /// How many of the random stencils `tensor` builds (3-D, f64, fixed, an in-plane sum of products).\n\
             pub const RANDOM_TENSOR: usize = {};\n/// Every f32 variant.\npub static F32: &[Entry<f32>] = &[\n    {}\n];\n/// Every f64 variant.\npub static F64: &[Entry<f64>] = &[\n    {}\n];\n",
            c.random.0,
            c.random.1,
            c.pairs,
            c.periodic_pairs,
            c.paired.0,
            c.paired.1,
            c.own.0,
            c.own.1,
            c.random_fusable,
            c.random_leapfrog,
            c.random_tensor,
            self.f32s.join(",\n    "),
            self.f64s.join(",\n    ")
        )
    }
}

/// Compiles the variants in `dir` for `backends` (through the emulated
/// device where the GPU kernels run on the CPU).
fn compile(dir: &Path, backends: &Backends) -> Result<(), Error> {
    let mut config = stencil_build::Config::new();
    config.search_dir(dir).ndarray(true);
    if std::env::var_os("CARGO_FEATURE_HIP_ON_CUDA").is_some() {
        println!("cargo:rerun-if-changed=hip-on-cuda");
        config.hip_through_nvcc(std::fs::canonicalize("hip-on-cuda")?);
    }
    if backends.on_cpu {
        config.gpu_on_cpu(&[
            std::fs::canonicalize("cuda-on-cpu")?,
            std::fs::canonicalize("hip-on-cuda")?,
        ]);
    } else {
        // Generated code holds nothing nvcc warns of (an unread variable is
        // dead code): every warning fails the tests' build. (hipcc's
        // optimizer warns where it cannot unroll a loop as asked, which is
        // not a defect of the source.)
        config.cuda_flag("--Werror=all-warnings");
        if std::env::var_os("CARGO_FEATURE_HIP_ON_CUDA").is_some() {
            config.hip_flag("--Werror=all-warnings");
        }
    }
    config.compile()?;
    Ok(())
}

/// The tuned stencil of `tests/tests/tuning.rs`, and what its tuning file holds.
const TUNED: &str = "heat2d_f64_fixed";

/// Writes `tuning.toml` beside the variants: for [`TUNED`] on each GPU
/// backend, a plan tuned for the emulated device (`stream` in pairs) and
/// one for an H200 (`temporal` of 3 steps), and a stale entry (of another
/// spec) for its f32 twin, which the build warns of and leaves out.
fn write_tuning(dir: &Path) -> Result<(), Error> {
    use stencil_build::tuning::{Entry, render, tunables};
    let hash = |name: &str| -> Result<String, Box<dyn std::error::Error>> {
        let path = dir.join(format!("{name}.stencil.toml"));
        let tunable = tunables(&path, &std::fs::read_to_string(&path)?, false)?;
        Ok(tunable[0].spec.clone())
    };
    let entry = |backend, device: &str, tiling: &str, spec: String| Entry {
        stencil: TUNED.into(),
        spec,
        backend,
        device: device.into(),
        arch: "sm_90".into(),
        shape: vec![4096, 4096],
        steps: 100,
        gcells: 2.0,
        own_gcells: 1.0,
        date: "2026-12-02".into(),
        tiling: tiling.into(),
    };
    let spec = hash(TUNED)?;
    let mut entries = Vec::new();
    for backend in [stencil_build::Backend::Cuda, stencil_build::Backend::Hip] {
        entries.push(entry(
            backend,
            "Emulated device",
            "strategy = \"stream\"\nvector = 2\n",
            spec.clone(),
        ));
        entries.push(entry(
            backend,
            "NVIDIA H200",
            "strategy = \"temporal\"\ntime_block = 3\n",
            spec.clone(),
        ));
    }
    entries.push(Entry {
        stencil: "heat2d_f32_fixed".into(),
        ..entry(
            stencil_build::Backend::Cuda,
            "Emulated device",
            "strategy = \"tiled\"\n",
            spec,
        )
    });
    std::fs::write(dir.join("tuning.toml"), render(&entries))?;
    Ok(())
}

/// The (dtype, boundary) pairs each spec is built in, from `STENCIL_TESTS`
/// and whether a GPU backend (`gpu`) is built:
/// - `full` (CI's workspace and emulated-device builds) or unset with a GPU
///   feature (the GPU machine's test binaries): all four;
/// - `fixed`: f32 and f64 with a fixed boundary, the pairs every GPU
///   strategy builds (a periodic variant's kernels are the same with
///   wrapped indices): CI's build with nvcc and
///   hipcc, whose emulated twin compiles and runs every pair (and
///   `stencil-spec-check` compiles periodic fused samples with both);
/// - unset without a GPU feature (the README's `cargo test --workspace` on
///   a contributor's machine): f64 fixed and f32 periodic, half the OpenMP
///   variants' build, with every spec, both dtypes and both boundaries still
///   covered (the tests that name a variant use these).
fn pairs(gpu: bool) -> Vec<(&'static str, &'static str)> {
    println!("cargo:rerun-if-env-changed=STENCIL_TESTS");
    match std::env::var("STENCIL_TESTS").as_deref() {
        Ok("full") => all_pairs(),
        Ok("fixed") => vec![("f32", "fixed"), ("f64", "fixed")],
        _ if gpu => all_pairs(),
        _ => vec![("f64", "fixed"), ("f32", "periodic")],
    }
}

/// The boundary of a variant built with its spec's own `[boundary]`.
const MIXED: &str = "mixed";

/// Whether `spec`'s `[boundary]` names the kinds of an axis's sides: such
/// a spec is built with its own boundary only, in its own dtype.
fn sides_named(spec: &toml::Table) -> bool {
    spec.get("boundary")
        .and_then(toml::Value::as_table)
        .is_some_and(|b| b.keys().any(|k| k != "kind"))
}

/// The dtype a spec names (its first, where it lists them), in which a
/// spec built with its own boundary ([`MIXED`]) is built.
fn own_dtype(spec: &toml::Table) -> &'static str {
    let dtype = &spec["stencil"]["dtype"];
    let first = dtype.as_array().and_then(|a| a.first()).unwrap_or(dtype);
    if first.as_str() == Some("f32") {
        "f32"
    } else {
        "f64"
    }
}

/// f32 and f64, each with a fixed and a periodic boundary.
fn all_pairs() -> Vec<(&'static str, &'static str)> {
    ["f32", "f64"]
        .into_iter()
        .flat_map(|d| [(d, "fixed"), (d, "periodic")])
        .collect()
}

/// Which draws of the random stencils' deterministic sequence become
/// variants: `STENCIL_TESTS_RANDOM` (`A..B`, or `N` for `0..N`), else the
/// first [`RANDOM_STENCILS`]. Each keeps its place in the sequence as its
/// name (`random_<n>`), so that a soak over later draws names a failure
/// the same way when it is built again.
fn random_draws() -> Result<std::ops::Range<usize>, String> {
    println!("cargo:rerun-if-env-changed=STENCIL_TESTS_RANDOM");
    let Ok(text) = std::env::var("STENCIL_TESTS_RANDOM") else {
        return Ok(0..RANDOM_STENCILS);
    };
    let number = |t: &str| {
        t.trim().parse::<usize>().map_err(|_| {
            format!(
                "STENCIL_TESTS_RANDOM={text}: write a count (`8`) or a range of draws (`8..24`)"
            )
        })
    };
    let Some((a, b)) = text.split_once("..") else {
        return Ok(0..number(&text)?);
    };
    let (start, end) = (number(a)?, number(b)?);
    if start >= end {
        return Err(format!("STENCIL_TESTS_RANDOM={text}: the range is empty"));
    }
    Ok(start..end)
}

/// `count` stencils drawn from [`random::RandomStencil::strategy`] by
/// proptest's deterministic runner: the same ones on every build.
fn random_stencils(count: usize) -> Result<Vec<random::RandomStencil>, String> {
    use proptest::strategy::{Strategy, ValueTree};
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = random::RandomStencil::strategy();
    (0..count)
        .map(|_| {
            Ok(strategy
                .new_tree(&mut runner)
                .map_err(|e| e.to_string())?
                .current())
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() && !path.ends_with("target") {
            collect(&path, out)?;
        } else if path.to_string_lossy().ends_with(".stencil.toml")
            && path.parent().is_some_and(|p| p.ends_with("stencils"))
            && !benchmark_only(&path)
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Whether `spec` is one of the benchmark suite's that only its runner checks
/// (against the reference, with every compiled strategy, before timing it):
/// the suite's j2d5pt and j3d7pt, whose tuned kernels `auto` picks, are
/// tested here too, and j3d13pt, j3d27pt and acoustic25, whose fused kernels
/// `auto` picks and no other spec here builds (a star of radius 2 in 64 x 32
/// tiles; a box: in f32 z sums, in f64 rings that hold every plane it reads,
/// both with loads clamped to the grid; CUDA's ring kernel of a leapfrog of radius 4 that
/// reads a velocity grid); the others would double the GPU variants (and one
/// shares its name with an example).
fn benchmark_only(spec: &Path) -> bool {
    let in_suite = spec.components().any(|c| c.as_os_str() == "suite");
    let tuned = [
        "j2d5pt.stencil.toml",
        "j3d7pt.stencil.toml",
        "j3d13pt.stencil.toml",
        "j3d27pt.stencil.toml",
        "acoustic25.stencil.toml",
    ]
    .iter()
    .any(|t| spec.ends_with(t));
    in_suite && !tuned
}

/// The `[tiling.cuda]` table of a variant built with `strategy` (a GPU
/// strategy, or one of the variants of one below) in `dtype`, of `base`'s
/// axes.
fn gpu_tiling(base: &toml::Table, dtype: &str, strategy: &str) -> toml::Table {
    let mut gpu = toml::Table::new();
    // `naive_c3`: 3 cells a thread (a block apart in 1-D, consecutive
    // along the slowest axis otherwise), so that most shapes end in a
    // thread's partial column. `naive_b3` (2-D, 3-D): blocks of 3 rows of
    // 2 cells a thread (`auto`'s rows of 2-D sums of many reads, and a
    // partial block of rows at most shapes' end). `stream` variants beside the defaults: a
    // window of vectors (16 bytes) moved through a chunk that is not a
    // multiple of the coarsening;
    // single-pass blocks; and single-pass blocks of vectors. `temporal`
    // variants beside the model's: 3 fused steps in 2-D, in 3-D 3 where they
    // build ([`fit_three_steps`]) and else 2 (the tiles grow in two axes),
    // through chunks of 5 planes (5 steps run as 3 + 2 or 2 + 2 + 1); and 2 steps through chunks of 7 with 3 cells per
    // lane (2-D) or 3 rows per thread of 64 x 6-thread blocks (3-D).
    // `persistent`: the model's tiling, and `temporal_c5`'s with one block
    // per multiprocessor (`occupancy`: many tiles per block, and sweeps that
    // end with a shorter one). `temporal_vec`: 2 steps of 3-D stars in
    // threads of 16-byte vectors, or of 2 cells ([`fit_vector`]).
    // `tensor` and `tensor_c5`: the in-plane sums of fixed f64 3-D stencils
    // on CUDA's tensor cores ([`tensor_builds`]), marching chunks of 256
    // planes and of 5 (several chunks a column); HIP, which has no such
    // kernel, streams.
    let vector = if dtype == "f32" { 4 } else { 2 };
    let dims = base["stencil"]["axes"].as_array().map_or(0, Vec::len);
    let odd_steps = if dims == 3 { 2 } else { 3 };
    let (name, keys): (&str, &[(&str, i64)]) = match strategy {
        "naive_c3" => ("naive", &[("coarsen", 3)]),
        "naive_b3" => ("naive", &[("coarsen", 3), ("vector", 2)]),
        "stream_c3" => (
            "stream",
            &[("chunk", 8), ("coarsen", 3), ("vector", vector)],
        ),
        "stream_s4" => ("stream", &[("chunk", 4), ("coarsen", 4)]),
        "stream_s3v" => (
            "stream",
            &[("chunk", 3), ("coarsen", 3), ("vector", vector)],
        ),
        "temporal_c5" => ("temporal", &[("time_block", odd_steps), ("chunk", 5)]),
        "persistent_c5" => (
            "persistent",
            &[("time_block", odd_steps), ("chunk", 5), ("occupancy", 1)],
        ),
        "temporal_v3" if dims == 3 => (
            "temporal",
            &[("time_block", 2), ("chunk", 7), ("coarsen", 3)],
        ),
        "temporal_v3" => (
            "temporal",
            &[("time_block", 2), ("chunk", 7), ("vector", 3)],
        ),
        "temporal_vec" => ("temporal", &[("time_block", 2), ("vector", vector)]),
        "tensor_c5" => ("tensor", &[("chunk", 5)]),
        s => (s, &[]),
    };
    gpu.insert("strategy".into(), name.into());
    for &(key, value) in keys {
        gpu.insert(key.into(), value.into());
    }
    if strategy == "temporal_v3" && dims == 3 {
        let block = toml::Value::Array(vec![1.into(), 6.into(), 64.into()]);
        gpu.insert("block".into(), block);
    }
    gpu
}

/// The spec with another name, dtype (params follow it), boundary and GPU strategy.
fn retyped(
    base: &toml::Table,
    name: &str,
    dtype: &str,
    boundary: &str,
    strategy: &str,
) -> toml::Table {
    let mut t = base.clone();
    let stencil = t["stencil"].as_table_mut().expect("[stencil] is a table");
    stencil.insert("name".into(), name.into());
    stencil.insert("dtype".into(), dtype.into());
    if let Some(params) = t.get_mut("params").and_then(|p| p.as_table_mut()) {
        for (_, ty) in params.iter_mut() {
            *ty = dtype.into();
        }
    }
    if boundary != MIXED {
        let mut b = toml::Table::new();
        b.insert("kind".into(), boundary.into());
        t.insert("boundary".into(), b.into());
    }
    let tiling = t
        .entry("tiling")
        .or_insert_with(|| toml::Table::new().into())
        .as_table_mut()
        .expect("[tiling] is a table");
    let gpu = gpu_tiling(base, dtype, strategy);
    let kernel = gpu["strategy"].as_str().expect("a strategy").to_owned();
    let dims = base["stencil"]["axes"].as_array().map_or(0, Vec::len);
    tiling.insert("cuda".into(), gpu.clone().into());
    if cpu_fusable_leapfrog(base, dims, boundary) {
        // The OpenMP backend fuses a leapfrog's steps where its spec asks
        // (by default it runs single steps): 3 a sweep, so that runs end in
        // shorter launches and single steps.
        let omp = tiling
            .entry("openmp")
            .or_insert_with(|| toml::Table::new().into())
            .as_table_mut()
            .expect("[tiling.openmp] is a table");
        omp.insert("time_block".into(), 3.into());
    }
    if kernel == "tensor" {
        // HIP has no `tensor` kernel: its variant streams.
        let mut stream = toml::Table::new();
        stream.insert("strategy".into(), "stream".into());
        tiling.insert("hip".into(), stream.into());
    } else {
        tiling.insert("hip".into(), gpu.into());
    }
    t
}

/// Whether a `tensor` variant builds: stencil-build refuses `tensor` for
/// stencils of several updates and where the update's in-plane reads are not
/// a sum that matrix products can take (`ir::plane_sum`). Any other refusal
/// is the build's error.
fn tensor_builds(table: &toml::Table, name: &str) -> Result<bool, String> {
    match generated(table, name) {
        Ok(()) => Ok(true),
        Err(e)
            if [
                "`tensor` cannot compute",
                "`tensor` runs stencils of one",
                "`tensor` computes every cell",
            ]
            .iter()
            .any(|why| e.contains(why)) =>
        {
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// Whether stencil-build generates variant `name` from `table`, or its error.
fn generated(table: &toml::Table, name: &str) -> Result<(), String> {
    let text = toml::to_string(table).map_err(|e| e.to_string())?;
    stencil_build::generate(name, &text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Gives a 3-D `temporal_c5` variant 3 fused steps where stencil-build
/// takes them (the stencils whose overlap of 3 steps fits its tiles and
/// shared memory: radius 1), else keeps its 2.
fn fit_three_steps(table: &mut toml::Table, name: &str) {
    let mut three = table.clone();
    for gpu in ["cuda", "hip"] {
        if let Some(t) = gpu_table(&mut three, gpu) {
            t.insert("time_block".into(), 3.into());
        }
    }
    if generated(&three, name).is_ok() {
        *table = three;
    }
}

/// Whether a `temporal_vec` variant builds, with its 16-byte vectors or
/// else with vectors of 2 cells (a star of radius 2 in f32; for f32 weighted
/// sums of radius 1, j3d7pt and j3d27pt, z sums of 2 columns): stencil-build
/// refuses vectors to stencils that are not stars, that divide the radius
/// along the contiguous axis, and that read only the field they update or,
/// in CUDA's ring kernel, other grids at the cell (f32, 2 steps; HIP's
/// variant then fuses without vectors).
fn fit_vector(table: &mut toml::Table, name: &str) -> bool {
    let attempt = |table: &toml::Table| generated(table, name);
    match attempt(table) {
        Ok(()) => return true,
        // HIP has no ring kernel (stencils that read other grids): its variant fuses without vectors.
        Err(e) if e.contains("CUDA's `cp.async`") => {
            if let Some(hip) = gpu_table(table, "hip") {
                hip.remove("vector");
            }
            if attempt(table).is_ok() {
                return true;
            }
        }
        Err(_) => {}
    }
    for gpu in ["cuda", "hip"] {
        if let Some(t) = gpu_table(table, gpu) {
            t.insert("vector".into(), 2.into());
        }
    }
    attempt(table).is_ok()
}

/// The spec's `[tiling.<gpu>]`, if it has one.
fn gpu_table<'a>(table: &'a mut toml::Table, gpu: &str) -> Option<&'a mut toml::Table> {
    table
        .get_mut("tiling")
        .and_then(|t| t.get_mut(gpu))
        .and_then(|t| t.as_table_mut())
}

/// Fits a 3-D fused variant's `[tiling.hip]` to what HIP's kernels take:
/// where the rings need more than HIP's 64 KiB of shared memory (a box's 2
/// fused f64 steps over 32 x 32 tiles take 73 KiB), fewer rows per thread,
/// halved; where a tile then recomputes all of its rows (`temporal_v3`'s
/// blocks of 6 rows of threads, one row each, and a radius of 2 along
/// `y`), one more row of threads at a time; until stencil-build accepts
/// the spec. Any other refusal is the build's error.
fn fit_hip(table: &mut toml::Table, name: &str) -> Result<(), String> {
    loop {
        let text = toml::to_string(table).map_err(|e| e.to_string())?;
        let Err(e) = stencil_build::generate(name, &text) else {
            return Ok(());
        };
        let e = e.to_string();
        let hip = gpu_table(table, "hip").ok_or_else(|| e.clone())?;
        let refit = if e.contains("HIP allows") {
            halve_coarsen(hip)
        } else if e.contains("leaves none to store") {
            add_row(hip)
        } else {
            false
        };
        if !refit {
            return Err(e);
        }
    }
}

/// Halves a HIP table's rows per thread; false where it is 1.
fn halve_coarsen(hip: &mut toml::Table) -> bool {
    let coarsen = hip.get("coarsen").and_then(|c| c.as_integer()).unwrap_or(4);
    if coarsen <= 1 {
        return false;
    }
    hip.insert("coarsen".into(), (coarsen / 2).into());
    true
}

/// Gives a 3-D HIP block one more row of threads along `y`; false where it
/// has no block or would pass 1024 threads.
fn add_row(hip: &mut toml::Table) -> bool {
    let Some(block) = hip.get_mut("block").and_then(|b| b.as_array_mut()) else {
        return false;
    };
    let extents: Vec<i64> = block.iter().filter_map(toml::Value::as_integer).collect();
    if extents.len() != 3 || (extents[1] + 1) * extents[2] > 1024 {
        return false;
    }
    block[1] = (extents[1] + 1).into();
    true
}

/// Whether `strategy` (`temporal*` or `persistent*`) can fuse the steps of
/// `spec` (stencil-build refuses the others at build time): 2 or 3 axes, a
/// fixed or periodic boundary, one update of a state field that keeps one time level,
/// or two (a leapfrog) whose previous level is read only at the cell itself
/// (and in `persistent`, whose sweeps start from it, read there).
fn fusable(spec: &toml::Table, dims: usize, boundary: &str, strategy: &str) -> bool {
    let Some((target, levels, expr)) = single_update(spec) else {
        return false;
    };
    let prev = format!("{target}.prev[");
    let starts_from_prev = strategy.starts_with("temporal") || expr.contains(&prev);
    let leapfrog = levels == 2 && prev_at_cell(expr, target) && starts_from_prev;
    let tiles = boundary == "fixed" || boundary == "periodic";
    (2..=3).contains(&dims) && tiles && (levels == 1 || leapfrog)
}

/// Whether the OpenMP backend can fuse the steps of a leapfrog `spec`
/// (`ir::cpu_unfusable`): 2-D or 3-D, a fixed or periodic boundary, one
/// update of a two-level state that reads its own current level.
fn cpu_fusable_leapfrog(spec: &toml::Table, dims: usize, boundary: &str) -> bool {
    single_update(spec).is_some_and(|(target, levels, expr)| {
        (2..=3).contains(&dims)
            && ["fixed", "periodic"].contains(&boundary)
            && levels == 2
            && reads_current(expr, target)
    })
}

/// Whether `expr` reads `target[..]` (its current level), not only
/// `target.prev[..]` or a field whose name ends in `target`.
fn reads_current(expr: &str, target: &str) -> bool {
    let read = format!("{target}[");
    expr.match_indices(&read).any(|(at, _)| {
        !expr[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
    })
}

/// The one `[[update]]` of `spec`, if it has one: its target, the
/// target's time levels and its expression.
fn single_update(spec: &toml::Table) -> Option<(&str, i64, &str)> {
    let [update] = spec.get("update")?.as_array()?.as_slice() else {
        return None;
    };
    let target = update.get("target").and_then(|t| t.as_str()).unwrap_or("");
    let levels = spec
        .get("fields")
        .and_then(|f| f.get(target))
        .and_then(|f| f.get("levels"))
        .and_then(|l| l.as_integer())
        .unwrap_or(1);
    let expr = update.get("expr").and_then(|e| e.as_str()).unwrap_or("");
    Some((target, levels, expr))
}

/// Whether every read of `target`'s previous level in `expr` is at offset 0.
fn prev_at_cell(expr: &str, target: &str) -> bool {
    let prefix = format!("{target}.prev[");
    expr.match_indices(&prefix).all(|(at, _)| {
        let rest = &expr[at + prefix.len()..];
        let offsets = rest.split(']').next().unwrap_or("");
        offsets.split(',').all(|o| o.trim() == "0")
    })
}
