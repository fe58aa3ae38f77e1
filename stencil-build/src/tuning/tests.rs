use std::path::{Path, PathBuf};

use super::*;
use crate::analysis::analyse;

const HEAT: &str = r#"
[stencil]
name = "heat"
dtype = ["f32", "f64"]
axes = ["y", "x"]

[fields]
u = { role = "state" }

[params]
alpha = "real"

[[update]]
target = "u"
expr = "u[0,0] + alpha*(u[-1,0] + u[1,0] + u[0,-1] + u[0,1] - 4*u[0,0])"
"#;

/// A fresh folder holding `heat.stencil.toml` (`spec`) and, where given,
/// `tuning.toml`.
fn folder(name: &str, spec: &str, tuning: Option<&str>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "stencil-build-tuning-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("heat.stencil.toml"), spec).unwrap();
    if let Some(t) = tuning {
        std::fs::write(dir.join(FILE_NAME), t).unwrap();
    }
    dir
}

/// What checking a tuning file gives: the plans and the warnings.
type Checked = Result<(Tunings, Vec<String>), Error>;

/// The stencils of `dir`'s spec, and its tuning file checked against them.
fn check(dir: &Path) -> (Vec<Stencil>, Checked) {
    let spec = dir.join("heat.stencil.toml");
    let text = std::fs::read_to_string(&spec).unwrap();
    let stencils = crate::config::lowered(&spec, &text).unwrap();
    let analysed: Vec<_> = stencils
        .iter()
        .map(|st| (st.clone(), analyse(st)))
        .collect();
    let result = tunings(&[(spec.clone(), spec)], &analysed);
    (stencils, result)
}

fn entry(st: &Stencil, device: &str, tiling: &str) -> Entry {
    Entry {
        stencil: st.name.clone(),
        spec: spec_hash(st),
        backend: Backend::Cuda,
        device: device.into(),
        arch: "sm_90".into(),
        shape: vec![8192, 8192],
        steps: 1000,
        gcells: 512.25,
        own_gcells: 470.5,
        date: "2026-12-02".into(),
        tiling: tiling.into(),
    }
}

fn stencils() -> Vec<Stencil> {
    crate::config::lowered(Path::new("heat.stencil.toml"), HEAT).unwrap()
}

#[test]
fn a_file_reads_back_what_was_rendered() {
    let sts = stencils();
    let entries = vec![
        entry(
            &sts[0],
            "NVIDIA H200",
            "strategy = \"temporal\"\nblock = [8, 32]\ntime_block = 4\n",
        ),
        entry(&sts[1], "Odd \"name\" \\ device", "strategy = \"naive\"\n"),
    ];
    let text = render(&entries);
    assert!(text.contains("tiling = { strategy = \"temporal\", block = [8, 32], time_block = 4 }"));
    let dir = folder("round-trip", HEAT, Some(&text));
    assert_eq!(read(&dir.join(FILE_NAME)).unwrap(), entries);
}

#[test]
fn the_hash_follows_what_the_stencil_computes() {
    let sts = stencils();
    let (f32, f64) = (&sts[0], &sts[1]);
    assert_ne!(spec_hash(f32), spec_hash(f64));
    assert_eq!(spec_hash(f32).len(), 16);
    let renamed = HEAT
        .replace("name = \"heat\"", "name = \"other\"\ndoc = \"words\"")
        .replace(
            "[[update]]",
            "[tiling.cuda]\nstrategy = \"naive\"\n\n[[update]]",
        );
    let dir = folder("renamed", &renamed, None);
    let same = check(&dir).0;
    assert_eq!(spec_hash(&same[0]), spec_hash(f32));
    let dir = folder("changed", &HEAT.replace("4*u", "4.5*u"), None);
    assert_ne!(spec_hash(&check(&dir).0[0]), spec_hash(f32));
}

#[test]
fn matching_entries_become_plans_and_stale_ones_warnings() {
    let sts = stencils();
    let good = entry(
        &sts[0],
        "NVIDIA H200",
        "strategy = \"stream\"\nvector = 2\n",
    );
    let stale = Entry {
        spec: "0123456789abcdef".into(),
        ..entry(&sts[1], "NVIDIA H200", "strategy = \"naive\"\n")
    };
    let unknown = Entry {
        stencil: "gone".into(),
        ..good.clone()
    };
    let text = render(&[good, stale, unknown]);
    let dir = folder("stale", HEAT, Some(&text));
    let (tunings, warnings) = check(&dir).1.unwrap();
    let plans = tunings.of(0, &gpu::CUDA);
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0].plan.strategy, crate::ir::Strategy::Stream);
    assert_eq!(plans[0].plan.vector, 2);
    assert!(tunings.of(0, &gpu::HIP).is_empty());
    assert!(tunings.of(1, &gpu::CUDA).is_empty());
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains(":20:8: stencil `heat_f64` changed since"),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].contains("run stencil-tune again"));
    assert!(warnings[1].contains("no spec in this folder defines a stencil `gone`"));
}

/// The located error of a tuning file `text` beside the heat spec.
fn error(name: &str, text: &str) -> String {
    let dir = folder(name, HEAT, Some(text));
    let Err(e) = check(&dir).1 else {
        panic!("{name}: accepted");
    };
    e.to_string()
}

#[test]
fn corrupt_files_and_plans_that_cannot_run_fail_located() {
    let sts = stencils();
    let good = render(&[entry(&sts[0], "NVIDIA H200", "strategy = \"naive\"\n")]);
    let typo = good.replace("own_gcells", "own_gcell");
    assert!(
        error("typo", &typo).contains("tuning.toml:14:1"),
        "{}",
        error("typo", &typo)
    );
    let backend = good.replace("\"cuda\"", "\"cuda12\"");
    assert!(error("backend", &backend).contains("unknown GPU backend `cuda12`"));
    let shape = good.replace("[8192, 8192]", "[8192]");
    assert!(error("shape", &shape).contains("`shape` has 1 extents but `heat_f32` has 2 axes"));
    let vector = good.replace("strategy = \"naive\"", "strategy = \"stream\", vector = 3");
    let e = error("vector", &vector);
    assert!(
        e.contains("tuning.toml:16:42") && e.contains("`vector = 3` cannot work"),
        "{e}"
    );
    let twice = format!(
        "{good}{}",
        good.lines().skip(3).collect::<Vec<_>>().join("\n")
    );
    let e = error("twice", &twice);
    assert!(
        e.contains("has a plan for this device already (line 9)"),
        "{e}"
    );
    let e = error("syntax", &good.replace("steps = 1000", "steps = "));
    assert!(
        e.contains("error in tuning files") && e.contains("tuning.toml:12:9"),
        "{e}"
    );
}
