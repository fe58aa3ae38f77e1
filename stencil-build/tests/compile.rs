//! The public API end to end: `Config` on real files, good and bad.

use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("stencil-build-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("specs/nested")).unwrap();
    dir
}

const GOOD: &str = "[stencil]\ndtype = \"f32\"\naxes = [\"x\"]\n[fields]\nu = { role = \"state\" }\n[[update]]\ntarget = \"u\"\nexpr = \"0.5*(u[-1] + u[1])\"\n";

#[test]
fn generates_one_module_per_spec_found() {
    let dir = scratch("good");
    std::fs::write(dir.join("specs/smooth-1d.stencil.toml"), GOOD).unwrap();
    std::fs::write(
        dir.join("specs/nested/other.stencil.toml"),
        GOOD.replace("[stencil]", "[stencil]\nname = \"other\""),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("specs/.hidden")).unwrap();
    std::fs::write(dir.join("specs/.hidden/skipped.stencil.toml"), "not toml").unwrap();
    stencil_build::Config::new()
        .search_dir(dir.join("specs"))
        .out_dir(&dir)
        .out_file("api.rs")
        .no_backends()
        .compile()
        .unwrap();
    let code = std::fs::read_to_string(dir.join("api.rs")).unwrap();
    assert!(
        code.contains("pub mod smooth_1d {"),
        "the file stem, in snake case, names the module"
    );
    assert!(code.contains("pub mod other {"));
    assert!(!code.contains("pub mod openmp"), "no backend was asked for");
}

#[test]
fn a_broken_spec_fails_with_its_location() {
    let dir = scratch("bad");
    let bad = GOOD.replace("u[1]", "v[1]");
    std::fs::write(dir.join("specs/broken.stencil.toml"), &bad).unwrap();
    std::fs::write(
        dir.join("specs/nested/typo.stencil.toml"),
        GOOD.replace("dtype", "dtpye"),
    )
    .unwrap();
    let err = stencil_build::Config::new()
        .search_dir(dir.join("specs"))
        .out_dir(&dir)
        .no_backends()
        .compile()
        .unwrap_err();
    let text = format!("{err:?}");
    assert!(text.contains("broken.stencil.toml:8:22"), "{text}");
    assert!(text.contains("error: unknown field or table `v`"), "{text}");
    assert!(text.contains("8 | expr = \"0.5*(u[-1] + v[1])\""), "{text}");
    assert!(text.contains("typo.stencil.toml:2:1"), "{text}");
    assert!(
        text.starts_with("stencil-build: 2 errors in stencil specs\n\nerror: "),
        "{text}"
    );
    assert!(
        !dir.join("stencils.rs").exists(),
        "nothing is generated from broken specs"
    );
}

#[test]
fn a_tiling_no_kernel_can_run_fails_at_its_key() {
    // HIP has no counterpart for the ring kernel's `cp.async` copies.
    let spec = "[stencil]\nname = \"hv\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\n\
                [fields]\nu = { role = \"state\" }\nk = { role = \"input\" }\n\n\
                [[update]]\ntarget = \"u\"\n\
                expr = \"u[0,0,0] + 0.01*k[0,0,0]*(sum(r, 1, 4, u[-r,0,0] + u[r,0,0] + u[0,-r,0] + u[0,r,0] + u[0,0,-r] + u[0,0,r]) - 24*u[0,0,0])\"\n\n\
                [tiling.hip]\nstrategy = \"temporal\"\ntime_block = 2\nvector = 4\n";
    let err = stencil_build::generate("specs/hv.stencil.toml", spec)
        .unwrap_err()
        .to_string();
    assert!(err.contains("specs/hv.stencil.toml:17:10"), "{err}");
    assert!(err.contains("remove `vector` from [tiling.hip]"), "{err}");
    // In a build, whatever its backends.
    let dir = scratch("plan");
    std::fs::write(dir.join("specs/hv.stencil.toml"), spec).unwrap();
    let err = stencil_build::Config::new()
        .search_dir(dir.join("specs"))
        .out_dir(&dir)
        .no_backends()
        .compile()
        .unwrap_err();
    assert!(
        format!("{err:?}").contains("hv.stencil.toml:17:10"),
        "{err:?}"
    );
    // Without `vector` it builds.
    let fused = spec.replace("vector = 4\n", "");
    assert!(stencil_build::generate("specs/hv.stencil.toml", &fused).is_ok());
}

#[test]
fn two_stencils_with_one_name_are_an_error() {
    let dir = scratch("dup");
    let named = GOOD.replace("[stencil]", "[stencil]\nname = \"same\"");
    std::fs::write(dir.join("specs/a.stencil.toml"), &named).unwrap();
    std::fs::write(dir.join("specs/b.stencil.toml"), &named).unwrap();
    let err = stencil_build::Config::new()
        .search_dir(dir.join("specs"))
        .out_dir(&dir)
        .no_backends()
        .compile()
        .unwrap_err();
    assert!(err.to_string().contains("b.stencil.toml:2:8"), "{err}");
    assert!(
        err.to_string()
            .contains("a stencil named `same` is already defined in"),
        "{err}"
    );
}

#[test]
fn outside_a_build_script_the_environment_error_says_what_to_do() {
    let err = stencil_build::Config::new()
        .spec("x.stencil.toml")
        .compile()
        .unwrap_err();
    assert!(err.to_string().contains("OUT_DIR is not set"), "{err}");
}

#[test]
fn generate_shows_every_backend_s_code_without_compiling() {
    let text = GOOD
        .replace("axes = [\"x\"]", "axes = [\"y\", \"x\"]")
        .replace(
            "0.5*(u[-1] + u[1])",
            "0.25*(u[-1,0] + u[1,0] + u[0,-1] + u[0,1])",
        );
    let s = stencil_build::generate("specs/blur.stencil.toml", &text).unwrap();
    assert!(s.rust.contains("pub mod blur {") && s.rust.contains("pub mod reference"));
    assert!(s.rust.contains("pub mod openmp") && s.rust.contains("pub mod cuda"));
    assert!(s.openmp.contains("#pragma omp parallel"), "{}", s.openmp);
    assert!(s.cuda.contains("__global__") && s.cuda.contains("cudaGetLastError"));
    assert!(s.hip.contains("hip/hip_runtime.h") && !s.hip.contains("cudaGetLastError"));
    let err = stencil_build::generate(
        "specs/blur.stencil.toml",
        &text.replace("u[0,1]", "u[0,1,2]"),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("specs/blur.stencil.toml:8:44"), "{err}");
}

#[test]
fn a_named_stream_whose_windows_cannot_stay_in_registers_is_refused_at_its_strategy() {
    // A box of radius `r` in 3-D: (2r + 1)^3 reads.
    let spec = |r: i64, dtype: &str| {
        let reads: Vec<String> = (-r..=r)
            .flat_map(|z| {
                (-r..=r).flat_map(move |y| (-r..=r).map(move |x| format!("u[{z},{y},{x}]")))
            })
            .collect();
        format!(
            "[stencil]\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"0.001*({})\"\n[tiling.hip]\nstrategy = \"naive\"\n\
             [tiling.cuda]\nstrategy = \"stream\"\n",
            reads.join(" + ")
        )
    };
    // Radius 3: 7 rows of 7 cells over 8 planes, 392 registers in f32.
    let err = stencil_build::generate("cube.stencil.toml", &spec(3, "f32"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cube.stencil.toml:12:12")
            && err.contains("would keep windows of 392 registers")
            && err.contains("set `strategy = \"naive\"`"),
        "{err}"
    );
    // Radius 2 in f64 (300) stays in registers; `auto` never takes `stream` there.
    stencil_build::generate("cube.stencil.toml", &spec(2, "f64")).unwrap();
    let auto = spec(3, "f32").replace("strategy = \"stream\"", "strategy = \"auto\"");
    stencil_build::generate("cube.stencil.toml", &auto).unwrap();
}

#[test]
fn fused_steps_on_a_periodic_grid_build_in_one_cell_a_row_and_refuse_vectors() {
    let spec = |tiling: &str| {
        format!(
            "[stencil]\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"0.5*u[0,0,0] + 0.1*(u[-2,0,0] + u[2,0,0] + u[0,-2,0] + u[0,2,0] + u[0,0,-2] + u[0,0,2])\"\n\
             [boundary]\nkind = \"periodic\"\n[tiling.cuda]\n{tiling}\n"
        )
    };
    for strategy in ["temporal", "persistent", "auto"] {
        let sources = stencil_build::generate(
            "star.stencil.toml",
            &spec(&format!("strategy = \"{strategy}\"")),
        )
        .unwrap();
        assert!(
            sources.cuda.contains("stencil_mod(z, n0) * s0;"),
            "{strategy}"
        );
    }
    // The same star with a fixed boundary fuses in vectors of 2 cells; a
    // periodic one refuses them at `vector` (line 13, after `strategy`).
    let err = stencil_build::generate(
        "star.stencil.toml",
        &spec("strategy = \"temporal\"\nvector = 2"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("star.stencil.toml:13:10")
            && err.contains("is periodic, whose fused steps wrap each cell's loads")
            && err.contains("remove `vector`"),
        "{err}"
    );
    let fixed = spec("strategy = \"temporal\"\nvector = 2").replace("periodic", "fixed");
    stencil_build::generate("star.stencil.toml", &fixed).unwrap();
}

#[test]
fn long_and_deep_expressions_are_errors_or_code_never_a_stack_overflow() {
    let spec = |expr: &str| GOOD.replace("0.5*(u[-1] + u[1])", expr);
    // As tall as accepted, through every pass (on a test thread's 2 MiB stack).
    let tall = vec!["0.001*u[1]"; 990].join(" + ");
    stencil_build::generate("tall.stencil.toml", &spec(&tall)).unwrap();
    let chain = vec!["u[1]"; 100_000].join(" + ");
    let nested = "(".repeat(100_000) + "u[1]" + &")".repeat(100_000);
    let powers = vec!["u[1]"; 10_000].join("^");
    let negated = "-".repeat(100_000) + "u[1]";
    for (expr, message) in [
        (chain, "more than 1000 operations deep"),
        (nested, "nested more than 200 levels deep"),
        (powers, "nested more than 200 levels deep"),
        (negated, "nested more than 200 levels deep"),
    ] {
        let err = stencil_build::generate("deep.stencil.toml", &spec(&expr))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("deep.stencil.toml:8:") && err.contains(message),
            "{err}"
        );
    }
}

/// Discovery reads each spec once and only what is a spec: it follows
/// links to folders (once, however they loop), refuses a FIFO (a build
/// must not wait on one), a file of more than 1 MiB and a path that is not
/// UTF-8, and a file named twice is one stencil, not two with one name.
#[cfg(unix)]
#[test]
fn discovery_follows_linked_folders_and_refuses_what_is_not_a_spec_file() {
    use std::os::unix::ffi::OsStrExt;
    let dir = scratch("discovery");
    let compile = |config: &mut stencil_build::Config| config.out_dir(&dir).no_backends().compile();
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("linked.stencil.toml"), GOOD).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.join("specs/link")).unwrap();
    std::os::unix::fs::symlink(dir.join("specs"), dir.join("specs/nested/loop")).unwrap();
    compile(stencil_build::Config::new().search_dir(dir.join("specs"))).unwrap();
    let code = std::fs::read_to_string(dir.join("stencils.rs")).unwrap();
    assert!(
        code.contains("pub mod linked {"),
        "a linked folder's spec is built"
    );
    // The same file by two paths.
    let good = dir.join("specs/good.stencil.toml");
    std::fs::write(&good, GOOD).unwrap();
    compile(
        stencil_build::Config::new()
            .spec(&good)
            .spec(dir.join("specs/nested/../good.stencil.toml")),
    )
    .unwrap();
    std::fs::remove_file(&good).unwrap();
    // A FIFO named like a spec.
    let fifo = dir.join("specs/nested/pipe.stencil.toml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let err = compile(stencil_build::Config::new().search_dir(dir.join("specs"))).unwrap_err();
    assert!(format!("{err}").contains("pipe.stencil.toml:1:1"), "{err}");
    assert!(format!("{err}").contains("not a regular file"), "{err}");
    std::fs::remove_file(&fifo).unwrap();
    // A spec larger than 1 MiB.
    let big = dir.join("specs/big.stencil.toml");
    std::fs::write(&big, format!("{GOOD}#{}\n", "x".repeat(1 << 20))).unwrap();
    let err = compile(stencil_build::Config::new().spec(&big)).unwrap_err();
    assert!(
        format!("{err}").contains("larger than 1048576 bytes"),
        "{err}"
    );
    std::fs::remove_file(&big).unwrap();
    // A file name that is not UTF-8.
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.stencil.toml");
    std::fs::write(dir.join("specs").join(name), GOOD).unwrap();
    let err = compile(stencil_build::Config::new().search_dir(dir.join("specs"))).unwrap_err();
    assert!(format!("{err}").contains("not valid UTF-8"), "{err}");
}
