//! Snapshots of the generated code, reviewed files under `snapshots/`:
//! every example spec for every backend, and each GPU strategy on a 2-D and
//! a 3-D example, so that a change to a kernel or to the Rust API shows in
//! review as a readable diff. After a change that is meant, review and
//! accept the new text with `cargo insta review` (or rerun the tests with
//! `INSTA_UPDATE=always` and read the diff in version control).

use std::path::Path;

use stencil_build::generate;

/// The example crates, each with one spec named after it.
const EXAMPLES: [&str; 5] = ["heat2d", "heat3d", "hyperdiffusion2d", "star3d25", "wave2d"];

/// The spec of example `name`, and its path from the workspace's root (as
/// the generated files name it, the same on every machine).
fn example(name: &str) -> (String, String) {
    let path = format!("examples/{name}/stencils/{name}.stencil.toml");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(&path);
    let text = std::fs::read_to_string(file).expect("the example's spec");
    (path, text)
}

/// Snapshots in `snapshots/`, named as given.
fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}

#[test]
fn every_example_for_every_backend() {
    settings().bind(|| {
        for name in EXAMPLES {
            let (path, text) = example(name);
            let sources = generate(&path, &text).expect("the example builds");
            insta::assert_snapshot!(format!("{name}.rs"), sources.rust);
            insta::assert_snapshot!(format!("{name}.c"), sources.openmp);
            insta::assert_snapshot!(format!("{name}.cu"), sources.cuda);
            insta::assert_snapshot!(format!("{name}.hip"), sources.hip);
        }
    });
}

/// CUDA's kernels of example `name`, in `dtype` and with a fixed boundary,
/// with each of `strategies` named in `[tiling.cuda]`.
fn strategies(name: &str, dtype: &str, strategies: &[&str]) {
    on_boundary(name, dtype, "fixed", strategies);
}

/// [`strategies`] on a grid with the boundary `kind`, snapshots named with
/// it where it is not `fixed`.
fn on_boundary(name: &str, dtype: &str, kind: &str, strategies: &[&str]) {
    let (path, mut text) = example(name);
    if !text.contains("[boundary]") {
        text.push_str("\n[boundary]\nkind = \"fixed\"\n");
    }
    let text = text
        .replace("\"f32\"", &format!("\"{dtype}\""))
        .replace("\"f64\"", &format!("\"{dtype}\""))
        .replace("\"periodic\"", "\"fixed\"")
        .replace("kind = \"fixed\"", &format!("kind = \"{kind}\""));
    let suffix = if kind == "fixed" {
        String::new()
    } else {
        format!("-{kind}")
    };
    for strategy in strategies {
        let spec = format!("{text}\n[tiling.cuda]\nstrategy = \"{strategy}\"\n");
        let sources = generate(&path, &spec).unwrap_or_else(|e| panic!("{strategy}: {e}"));
        insta::assert_snapshot!(
            format!("{name}-{dtype}-{strategy}{suffix}.cu"),
            sources.cuda
        );
    }
}

#[test]
fn each_gpu_strategy() {
    settings().bind(|| {
        let all = ["naive", "tiled", "stream", "temporal", "persistent"];
        strategies("heat2d", "f32", &all);
        strategies("heat3d", "f64", &all);
        strategies("wave2d", "f64", &["temporal", "persistent"]);
        strategies("star3d25", "f64", &["tensor"]);
        strategies("star3d25", "f32", &["temporal"]);
        // Fused steps on a periodic grid: edge tiles load wrapped.
        on_boundary("heat2d", "f32", "periodic", &["temporal"]);
        on_boundary("wave2d", "f64", "periodic", &["persistent"]);
        on_boundary("heat3d", "f32", "periodic", &["temporal"]);
    });
}

/// The kernel `naive` runs for a step of several statements, every one in
/// one kernel: a temporary read on one side beside a second field read at
/// offsets (a test spec: a single update's temporaries go inline), two
/// fields through a temporary read at the cell (3-D: `auto`'s `stream`
/// marching planes, the step in one kernel), an updated
/// field read at offsets in the frame's reach (1-D, a random stencil of the
/// corpus), two fields of a periodic grid (3-D, `naive` named; 1-D through a temporary,
/// its reads unwrapped away from the ends), and the Rust that launches the
/// first 1-D one.
#[test]
fn one_kernel_for_several_statements() {
    settings().bind(|| {
        let specs = [
            ("coupled2d", "tests/stencils/coupled2d.stencil.toml"),
            ("reaction3d", "tests/stencils/reaction3d.stencil.toml"),
            (
                "random_07",
                "examples/suite/corpus/random/random_07.stencil.toml",
            ),
            (
                "random_14",
                "examples/suite/corpus/random/random_14.stencil.toml",
            ),
            (
                "random_28",
                "examples/suite/corpus/random/random_28.stencil.toml",
            ),
        ];
        for (name, path) in specs {
            let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
            let mut text = std::fs::read_to_string(file).expect("the spec");
            if name == "random_14" {
                // `auto` marches its planes on CUDA, a kernel an update.
                text += "\n[tiling.cuda]\nstrategy = \"naive\"\n";
            }
            let sources = generate(path, &text).expect("the spec builds");
            assert!(
                sources.cuda.contains("one kernel computes every statement"),
                "{name}"
            );
            insta::assert_snapshot!(format!("{name}-step.cu"), sources.cuda);
            if name == "random_07" {
                insta::assert_snapshot!("random_07-step.rs", sources.rust);
            }
        }
    });
}

/// `naive` with several consecutive cells of the slowest axis a thread: a
/// weighted sum's reads loaded once for every cell (star3d25), an update
/// with a product of grids a cell at a time (heat3d), and a step of
/// several statements a cell at a time (a periodic random stencil of the
/// corpus, whose step goes in one kernel).
#[test]
fn naive_columns() {
    settings().bind(|| {
        let corpus = "examples/suite/corpus/random/random_14.stencil.toml";
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(corpus);
        let random = std::fs::read_to_string(file).expect("the spec");
        let specs = [
            ("star3d25", example("star3d25"), 2, "sum1 +="),
            (
                "heat3d",
                example("heat3d"),
                4,
                "for (int k = 0; k < 4; ++k)",
            ),
            (
                "random_14",
                (corpus.to_string(), random),
                2,
                "every statement",
            ),
        ];
        for (name, (path, text), cells, mark) in specs {
            let tiling = format!("\n[tiling.cuda]\nstrategy = \"naive\"\ncoarsen = {cells}\n");
            let sources = generate(&path, &format!("{text}{tiling}")).expect("the spec builds");
            assert!(sources.cuda.contains(mark), "{name}");
            insta::assert_snapshot!(format!("{name}-naive_c{cells}.cu"), sources.cuda);
        }
    });
}

/// `naive` in 1-D, each thread a 16-byte vector of consecutive cells: an
/// update reading two grids in f32 (fixed boundary), and a periodic grid in
/// f64 whose updates each cover a region (the middle one's first cell is
/// not a whole vector's, the right one's a distance from the end).
#[test]
fn naive_rows_in_vectors() {
    settings().bind(|| {
        for (name, dtype, vector) in [("line1d", "f32", "float4"), ("zones1d", "f64", "double2")] {
            let path = format!("tests/stencils/{name}.stencil.toml");
            let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(&path);
            let text = std::fs::read_to_string(file).expect("the spec");
            let text = text.replace("\"f64\"", &format!("\"{dtype}\""));
            let sources = generate(&path, &text).expect("the spec builds");
            let store = format!("*({vector} *)&out[first] = make_{vector}(");
            assert!(sources.cuda.contains(&store), "{name}");
            insta::assert_snapshot!(format!("{name}-{dtype}-rows.cu"), sources.cuda);
        }
    });
}

/// The OpenMP C and CUDA of the tests' spec `name`, snapshots `<name>.c`
/// and `<name>.cu`.
fn test_spec(name: &str) {
    let path = format!("tests/stencils/{name}.stencil.toml");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(&path);
    let text = std::fs::read_to_string(file).expect("the spec");
    settings().bind(|| {
        let sources = generate(&path, &text).expect("the spec builds");
        insta::assert_snapshot!(format!("{name}.c"), sources.openmp);
        insta::assert_snapshot!(format!("{name}.cu"), sources.cuda);
    });
}

/// A spec whose boundary mixes every kind of side: a leapfrog through a
/// temporary, its OpenMP C (interior and frame pass) and its CUDA (the
/// fixed boundary's kernels, the frame kernels and the launchers that run
/// both).
#[test]
fn mixed_boundary_c_and_cuda() {
    test_spec("edges3d");
}

/// A spec with regions: a box and the grid outside it, each with its
/// update; its OpenMP C (the box's blocked loops, the rest by slabs) and
/// its CUDA (the box through the plan's kernel, the rest through a frame
/// kernel alone).
#[test]
fn regions_c_and_cuda() {
    test_spec("sponge2d");
}

/// A flux-limited diffusion: each face's difference divided by a root of
/// itself, and sources divided by roots, one of them `1 / sqrt`.
const LIMITED2D: &str = r#"
[stencil]
name  = "limited2d"
dtype = "f64"
axes  = ["y", "x"]

[fields]
u = { role = "state" }

[[update]]
target = "u"
expr   = "u[0,0] + 0.1*((u[0,1] - u[0,0]) / sqrt(1 + (u[0,1] - u[0,0])^2) - (u[0,0] - u[0,-1]) / sqrt(1 + (u[0,0] - u[0,-1])^2) + (u[1,0] - u[0,0]) / sqrt(1 + (u[1,0] - u[0,0])^2) - (u[0,0] - u[-1,0]) / sqrt(1 + (u[0,0] - u[-1,0])^2)) + 0.01 / sqrt(1 + u[0,0]^2) - 0.01*(1 / sqrt(4 + u[0,0]^2))"
"#;

/// Divisions by roots: the OpenMP C (`stencil_rsqrt` as the root and the
/// division) and the CUDA (`stencil_rsqrt` as the device's reciprocal
/// square root, multiplied by the numerator, or alone for `1 / sqrt`).
/// The tests' `functions3d` runs such divisions through every strategy.
#[test]
fn divisions_by_roots_c_and_cuda() {
    settings().bind(|| {
        let sources = generate("limited2d.stencil.toml", LIMITED2D).expect("the spec builds");
        insta::assert_snapshot!("limited2d.c", sources.openmp);
        insta::assert_snapshot!("limited2d.cu", sources.cuda);
    });
}
