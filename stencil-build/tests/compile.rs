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
