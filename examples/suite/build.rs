//! Compiles each suite stencil in f32 and f64 as `naive` and `auto` and, with
//! CUDA, once per GPU variant of [`VARIANTS`] (`<name>_<dtype>_<variant>`), so strategies run
//! side by side: every variant for the stencils tuned on ([`TUNED`]), the
//! [`CORE`] ones for the others; with the feature `corpus`, each stencil of
//! [`CORPUS`] once, as its spec stands. Writes `variants.rs` (one `row!` per
//! variant, with the indices of the grids its session uploads and its set)
//! and `compiled.rs` (the list of them) for the runner.

use std::fmt::Write as _;
use std::path::PathBuf;

/// A GPU variant: its suffix, its strategy and the other `[tiling.cuda]` keys,
/// with the block per number of axes (`None`: the model's).
struct Variant {
    suffix: &'static str,
    strategy: &'static str,
    block2: Option<[i64; 2]>,
    block3: Option<[i64; 3]>,
    chunk: Option<i64>,
    coarsen: Option<i64>,
    /// Cells per thread along the contiguous axis, in (f32, f64).
    vector: Option<(i64, i64)>,
    /// Steps fused per launch (`temporal`).
    time_block: Option<i64>,
    /// Blocks per multiprocessor, at most (`persistent`).
    occupancy: Option<i64>,
    /// The number of axes it is for (`None`: any).
    dims: Option<usize>,
    /// The dtype it is for (`None`: both).
    dtype: Option<&'static str>,
    /// Whether every stencil (of `dims` axes) gets it, not only [`TUNED`].
    every: bool,
}

const fn v(suffix: &'static str, strategy: &'static str) -> Variant {
    Variant {
        suffix,
        strategy,
        block2: None,
        block3: None,
        chunk: None,
        coarsen: None,
        vector: None,
        time_block: None,
        occupancy: None,
        dims: None,
        dtype: None,
        every: false,
    }
}

/// A `temporal` variant fusing `t` steps, for stencils of `dims` axes.
const fn temporal(suffix: &'static str, dims: usize, t: i64) -> Variant {
    Variant {
        time_block: Some(t),
        dims: Some(dims),
        ..v(suffix, "temporal")
    }
}

/// A 3-D `temporal` variant: blocks of `block` threads, `rows` rows each, `t` steps.
const fn planes(suffix: &'static str, block: [i64; 3], rows: i64, t: i64, every: bool) -> Variant {
    Variant {
        block3: Some(block),
        coarsen: Some(rows),
        every,
        ..temporal(suffix, 3, t)
    }
}

/// The stencils every variant is compiled for; the others get [`CORE`].
const TUNED: &[&str] = &["j2d5pt", "j3d7pt"];

/// The variants of every stencil: each strategy once, and what `auto` picks.
const CORE: &[&str] = &["naive", "tiled", "stream", "temporal", "persistent", "auto"];

const VARIANTS: &[Variant] = &[
    v("naive", "naive"),
    v("tiled", "tiled"),
    v("stream", "stream"),
    Variant {
        coarsen: Some(4),
        chunk: Some(256),
        ..v("stream_c4", "stream")
    },
    Variant {
        coarsen: Some(4),
        chunk: Some(4),
        ..v("stream_s4", "stream")
    },
    Variant {
        coarsen: Some(4),
        chunk: Some(4),
        vector: Some((4, 2)),
        block2: Some([1, 64]),
        block3: Some([1, 8, 32]),
        ..v("stream_s4_v", "stream")
    },
    Variant {
        coarsen: Some(2),
        chunk: Some(2),
        block3: Some([1, 4, 64]),
        ..v("stream_s2_w", "stream")
    },
    Variant {
        coarsen: Some(3),
        chunk: Some(3),
        ..v("stream_s3", "stream")
    },
    Variant {
        coarsen: Some(2),
        chunk: Some(2),
        vector: Some((4, 2)),
        block2: Some([1, 128]),
        block3: Some([1, 2, 64]),
        ..v("stream_s2_v_w", "stream")
    },
    Variant {
        chunk: Some(4),
        vector: Some((4, 2)),
        block2: Some([1, 64]),
        block3: Some([1, 2, 64]),
        every: true,
        ..v("stream_q4_v", "stream")
    },
    Variant {
        chunk: Some(8),
        vector: Some((4, 2)),
        block2: Some([1, 64]),
        block3: Some([1, 2, 64]),
        ..v("stream_q8_v", "stream")
    },
    v("temporal", "temporal"),
    v("persistent", "persistent"),
    // `persistent` with fewer blocks than fit: one or two per multiprocessor,
    // and one of 512 threads (2-D: 16 warp tiles; 3-D: 32 x 64 cells).
    Variant {
        occupancy: Some(1),
        ..v("persistent_o1", "persistent")
    },
    Variant {
        occupancy: Some(2),
        ..v("persistent_o2", "persistent")
    },
    Variant {
        occupancy: Some(1),
        block2: Some([1, 512]),
        dims: Some(2),
        every: true,
        ..v("persistent_o1_b512", "persistent")
    },
    Variant {
        occupancy: Some(1),
        block3: Some([1, 16, 32]),
        coarsen: Some(4),
        dims: Some(3),
        ..v("persistent_o1_b512", "persistent")
    },
    temporal("temporal_t4", 2, 4),
    temporal("temporal_t6", 2, 6),
    temporal("temporal_t8", 2, 8),
    Variant {
        vector: Some((2, 1)),
        ..temporal("temporal_t8_v2", 2, 8)
    },
    Variant {
        chunk: Some(512),
        ..temporal("temporal_t12", 2, 12)
    },
    Variant {
        chunk: Some(256),
        ..temporal("temporal_t8_c256", 2, 8)
    },
    Variant {
        chunk: Some(256),
        ..temporal("temporal_t10_c256", 2, 10)
    },
    Variant {
        chunk: Some(256),
        ..temporal("temporal_t12_c256", 2, 12)
    },
    // 3-D: tiles of 32 x 32 cells (32 x 8 threads of 4 rows, 32 x 32 of 1)
    // and 32 x 16 (32 x 8 threads of 2 rows), 1 to 3 steps, for every 3-D
    // stencil; 4 steps and other tiles for j3d7pt.
    planes("temporal_t1", [1, 8, 32], 4, 1, true),
    planes("temporal_t2", [1, 8, 32], 4, 2, true),
    planes("temporal_t3", [1, 8, 32], 4, 3, true),
    planes("temporal_t2_s", [1, 8, 32], 2, 2, true),
    planes("temporal_t2_r1", [1, 32, 32], 1, 2, true),
    planes("temporal_t3_r1", [1, 32, 32], 1, 3, false),
    planes("temporal_t2_r2", [1, 16, 32], 2, 2, false),
    planes("temporal_t3_w8", [1, 8, 64], 4, 3, false),
    planes("temporal_t4", [1, 8, 32], 4, 4, false),
    // Taller columns per thread: more rows above and below from registers.
    // (4 steps of these tiles, `temporal_t4_c8`, wrote past the rings on the
    // H100 though not on the emulated device: left out.)
    planes("temporal_t3_c8", [1, 4, 32], 8, 3, false),
    planes("temporal_t3_c8_w", [1, 4, 64], 8, 3, false),
    // Wider tiles with 2 steps for every 3-D stencil: less of each tile
    // recomputed (64 x 32 cells as 64 x 8 threads of 4 rows or 64 x 4 of 8,
    // and 64 x 64 as 64 x 8 of 8).
    planes("temporal_t2_w", [1, 8, 64], 4, 2, true),
    planes("temporal_t2_c8_w", [1, 4, 64], 8, 2, true),
    planes("temporal_t2_ww", [1, 8, 64], 8, 2, true),
    // 3-D stars whose threads own a vector of one row (`gpu/temporal/vectors.rs`),
    // 2 steps: 16-byte vectors, and in f32 vectors of 2 cells (radius 2).
    Variant {
        vector: Some((4, 2)),
        every: true,
        ..temporal("temporal_vec", 3, 2)
    },
    Variant {
        vector: Some((2, 2)),
        dtype: Some("f32"),
        every: true,
        ..temporal("temporal_vec2", 3, 2)
    },
    // In f64, 24 rows of 32 threads (the j3d13pt prototype's tile, 1.24x
    // `auto`): 768 threads.
    Variant {
        vector: Some((2, 2)),
        block3: Some([1, 24, 32]),
        dtype: Some("f64"),
        every: true,
        ..temporal("temporal_vec_24", 3, 2)
    },
    // `stream`'s defaults in 16-byte vectors: what `auto` runs on large
    // planes for the f64 stars that `tensor` could sum in-plane but that read
    // other grids at the cell (acoustic25; `gpu::planes_stream`); in f32 also
    // in 8-byte pairs, for rows that are not whole 16-byte vectors
    // (acoustic25's 750 cells).
    Variant {
        vector: Some((4, 2)),
        dims: Some(3),
        every: true,
        ..v("stream_v", "stream")
    },
    Variant {
        vector: Some((2, 1)),
        dims: Some(3),
        dtype: Some("f32"),
        every: true,
        ..v("stream_v2", "stream")
    },
    // f64 3-D stencils whose in-plane sum is a sum of products: one step a
    // plane with that sum on the tensor cores (`gpu/tensor.rs`).
    Variant {
        dims: Some(3),
        dtype: Some("f64"),
        every: true,
        ..v("tensor", "tensor")
    },
    v("auto", "auto"),
];

/// The variants the runner times on the OpenMP backend (`src/cpu.rs`).
const CPU_VARIANTS: &[&str] = &["naive", "auto"];

/// The performance corpus (feature `corpus`): AN5D's 21 stencils and the
/// families beside the suite's in f32 and f64, and the random stencils in
/// the dtype they were drawn with, each compiled once, as `auto` builds it.
const CORPUS: &[&str] = &["corpus/an5d", "corpus/families", "corpus/random"];

/// What `build.rs` writes for the runner: the `row!`s and the compiled list.
struct Lists {
    runs: String,
    compiled: String,
}

impl Lists {
    /// Adds the module `variant` of `name` in `dtype`, of `set`.
    fn add(
        &mut self,
        variant: &str,
        dtype: &str,
        name: &str,
        suffix: &str,
        set: &str,
        grids: &str,
    ) {
        // Writing to a String cannot fail.
        let _ = writeln!(
            self.runs,
            "row!({variant}, \"{dtype}\", \"{name}\", \"{suffix}\", \"{set}\", [{grids}]);"
        );
        let _ = writeln!(
            self.compiled,
            "    (\"{variant}\", \"{dtype}\", \"{name}\", \"{suffix}\", \"{set}\"),"
        );
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cuda = std::env::var_os("CARGO_FEATURE_CUDA").is_some();
    let corpus = std::env::var_os("CARGO_FEATURE_CORPUS").is_some();
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    let specs_dir = out.join("suite");
    // Start empty: a variant removed from the table must not linger.
    if specs_dir.exists() {
        std::fs::remove_dir_all(&specs_dir)?;
    }
    std::fs::create_dir_all(&specs_dir)?;
    // A developer's narrowing for a quick measurement: only the stencils named
    // (comma-separated, as in their specs) are built; the bounds always are.
    println!("cargo:rerun-if-env-changed=SUITE_ONLY");
    let only = std::env::var("SUITE_ONLY").ok();
    let picked = |base: &toml::Table| {
        only.as_deref()
            .is_none_or(|o| spec_name(base).is_ok_and(|name| o.split(',').any(|n| n == name)))
    };
    let mut lists = Lists {
        runs: String::from("// Generated by build.rs: every measured variant.\n{\n"),
        compiled: String::from("&[\n"),
    };
    for dir in ["stencils", "bound"] {
        for path in specs(dir)? {
            let base: toml::Table = toml::from_str(&std::fs::read_to_string(&path)?)?;
            if dir == "bound" {
                let name = spec_name(&base)?;
                for dtype in ["f32", "f64"] {
                    write(
                        &specs_dir,
                        &retyped(&base, &format!("{name}_{dtype}"), dtype),
                    )?;
                }
            } else if picked(&base) {
                suite_variants(&base, cuda, &specs_dir, &mut lists)?;
            }
        }
    }
    println!("cargo:rerun-if-changed=corpus");
    for dir in CORPUS.iter().filter(|_| corpus) {
        for path in specs(dir)? {
            let base: toml::Table = toml::from_str(&std::fs::read_to_string(&path)?)?;
            if !picked(&base) {
                continue;
            }
            corpus_variants(&base, dir.ends_with("random"), &specs_dir, &mut lists)?;
        }
    }
    lists.compiled.push(']');
    lists.runs.push_str("}\n");
    std::fs::write(out.join("variants.rs"), lists.runs)?;
    std::fs::write(out.join("compiled.rs"), lists.compiled)?;
    let mut config = stencil_build::Config::new();
    config.search_dir(&specs_dir);
    if corpus {
        // The corpus is measured on GPUs (and on CPUs built for
        // `x86-64-v4`, which compile no copies); CI checks it against its
        // reference on the CPU, which the target's code does as well as a
        // copy would (the tests' crate checks every copy). Its 200 stencils'
        // C compiled once instead of three times saves CI over a minute.
        config.openmp_levels::<&str>(&[]);
    }
    config.compile()?;
    compile_bounds(cuda)
}

/// The specs in `dir`, sorted (and a rerun of the build when it changes).
fn specs(dir: &str) -> Result<Vec<PathBuf>, Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed={dir}");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    paths.retain(|p| p.to_string_lossy().ends_with(".stencil.toml"));
    paths.sort();
    Ok(paths)
}

fn spec_name(base: &toml::Table) -> Result<&str, Box<dyn std::error::Error>> {
    Ok(base["stencil"]["name"]
        .as_str()
        .ok_or("spec without a name")?)
}

/// Writes the variants of a suite stencil in both dtypes and lists them.
fn suite_variants(
    base: &toml::Table,
    cuda: bool,
    specs_dir: &std::path::Path,
    lists: &mut Lists,
) -> Result<(), Box<dyn std::error::Error>> {
    let name = spec_name(base)?;
    let dims = base["stencil"]["axes"].as_array().map_or(0, Vec::len);
    let grids = grid_indices(base);
    for dtype in ["f32", "f64"] {
        // (What a fused strategy refuses is left out below.) Without
        // CUDA only the variants the OpenMP runs tell apart
        // (`cpu::VARIANTS`): the others are the same C under other
        // names, and their Rust API doubled the suite's build.
        let wanted = |v: &&Variant| {
            (cuda || CPU_VARIANTS.contains(&v.suffix))
                && (TUNED.contains(&name) || CORE.contains(&v.suffix) || v.every)
                && v.dims.is_none_or(|d| d == dims)
                && v.dtype.is_none_or(|d| d == dtype)
        };
        for var in VARIANTS.iter().filter(wanted) {
            let variant = format!("{name}_{dtype}_{}", var.suffix);
            let mut t = retyped(base, &variant, dtype);
            t.insert("tiling".into(), tiling(var, dims, dtype).into());
            // A variant stencil-build refuses for this stencil (tiles
            // that store nothing, rings beyond the shared memory) is
            // left out.
            if stencil_build::generate(&variant, &toml::to_string(&t)?).is_err() {
                continue;
            }
            write(specs_dir, &t)?;
            lists.add(&variant, dtype, name, var.suffix, "suite", &grids);
        }
    }
    Ok(())
}

/// Writes a corpus stencil as `auto` builds it, in both dtypes, or in its
/// own where it was drawn at random. The random draws carry the property
/// tests' odd `[tiling.openmp]` blocks (`[27, 2]`, `[41, 19, 8]`), which
/// exercise the kernels' edges, not their speed: a row of the corpus
/// measures the plan `auto` picks for a stencil nobody tuned, so its
/// `[tiling]` is left out.
fn corpus_variants(
    base: &toml::Table,
    random: bool,
    specs_dir: &std::path::Path,
    lists: &mut Lists,
) -> Result<(), Box<dyn std::error::Error>> {
    let name = spec_name(base)?;
    let grids = grid_indices(base);
    let own = base["stencil"]["dtype"]
        .as_str()
        .ok_or("spec without a dtype")?;
    let dtypes: &[&str] = if random { &[own] } else { &["f32", "f64"] };
    for &dtype in dtypes {
        let variant = format!("{name}_{dtype}_auto");
        let mut t = retyped(base, &variant, dtype);
        t.remove("tiling");
        write(specs_dir, &t)?;
        lists.add(&variant, dtype, name, "auto", "corpus", &grids);
    }
    Ok(())
}

/// The runner's bounds: with CUDA a timed device-to-device copy and an FMA
/// throughput kernel (nvcc from NVCC or PATH, as stencil-build found it);
/// with OpenMP the FMA throughput kernel in C, built as stencil-build builds
/// its OpenMP kernels.
fn compile_bounds(cuda: bool) -> Result<(), Box<dyn std::error::Error>> {
    if cuda {
        println!("cargo:rerun-if-changed=src/bound.cu");
        cc::Build::new()
            .cuda(true)
            .cudart("static")
            .file("src/bound.cu")
            .try_compile("suite_bound")?;
    }
    if std::env::var_os("CARGO_FEATURE_OPENMP").is_some() {
        println!("cargo:rerun-if-changed=src/bound.c");
        let mut build = cc::Build::new();
        build.file("src/bound.c").flag("-fopenmp").opt_level(3);
        // The kernels' vector width: without it the bound counted 128-bit
        // multiply-adds against AVX-512 kernels.
        for flag in stencil_build::__private::target_feature_flags() {
            build.flag(flag);
        }
        // And each level's, which the kernels run where the processor has it
        // (`cpu.rs` picks the one they run at).
        if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
            for level in stencil_build::__private::LEVELS {
                let mut copy = build.clone();
                for flag in level.flags() {
                    copy.flag(flag);
                }
                for name in ["suite_fma_flops_f32", "suite_fma_flops_f64"] {
                    copy.define(name, level.symbol(name).as_str());
                }
                copy.try_compile(&level.symbol("suite_bound_c"))?;
            }
        }
        build.try_compile("suite_bound_c")?;
    }
    Ok(())
}

/// `0, 1, ..`: one index per grid a session uploads (every level of the
/// state fields, then the inputs; temps live on the device only).
fn grid_indices(base: &toml::Table) -> String {
    let fields = base.get("fields").and_then(toml::Value::as_table);
    let count: i64 = fields
        .into_iter()
        .flat_map(|f| f.values())
        .map(|f| match f.get("role").and_then(toml::Value::as_str) {
            Some("state") => f
                .get("levels")
                .and_then(toml::Value::as_integer)
                .unwrap_or(1),
            Some("input") => 1,
            _ => 0,
        })
        .sum();
    (0..count)
        .map(|k| k.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `base` named `variant`, in `dtype`.
fn retyped(base: &toml::Table, variant: &str, dtype: &str) -> toml::Table {
    let mut t = base.clone();
    if let Some(st) = t.get_mut("stencil").and_then(toml::Value::as_table_mut) {
        st.insert("name".into(), variant.into());
        st.insert("dtype".into(), dtype.into());
    }
    t
}

/// The `[tiling]` table of `var` for a stencil of `dims` axes.
fn tiling(var: &Variant, dims: usize, dtype: &str) -> toml::Table {
    let mut cuda = toml::Table::new();
    cuda.insert("strategy".into(), var.strategy.into());
    let block = match dims {
        2 => var.block2.map(|b| b.to_vec()),
        _ => var.block3.map(|b| b.to_vec()),
    };
    if let Some(b) = block {
        cuda.insert("block".into(), b.into());
    }
    let vector = var
        .vector
        .map(|(f32, f64)| if dtype == "f32" { f32 } else { f64 });
    for (key, value) in [
        ("chunk", var.chunk),
        ("coarsen", var.coarsen),
        ("vector", vector),
        ("time_block", var.time_block),
        ("occupancy", var.occupancy),
    ] {
        if let Some(x) = value {
            cuda.insert(key.into(), x.into());
        }
    }
    let mut tiling = toml::Table::new();
    tiling.insert("cuda".into(), cuda.into());
    if var.suffix == "naive" {
        // One parallel loop over rows, no cache blocking, single steps: OpenMP's naive.
        let mut block = vec![1i64; dims];
        block[dims - 1] = 1 << 24;
        let mut openmp = toml::Table::new();
        openmp.insert("block".into(), block.into());
        openmp.insert("time_block".into(), 1.into());
        tiling.insert("openmp".into(), openmp.into());
    }
    tiling
}

fn write(dir: &std::path::Path, t: &toml::Table) -> Result<(), Box<dyn std::error::Error>> {
    let name = t["stencil"]["name"].as_str().ok_or("spec without a name")?;
    std::fs::write(
        dir.join(format!("{name}.stencil.toml")),
        toml::to_string(t)?,
    )?;
    Ok(())
}
