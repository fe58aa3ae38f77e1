//! The tuner end to end on the emulated device: a spec's candidates are
//! built through stencil-build as a scratch crate, checked against the
//! reference and timed, the fastest is written to `tuning.toml` beside the
//! spec (a file stencil-build reads back), and a second run resumes from
//! the results instead of timing again.

use std::path::Path;
use std::process::Command;

const SPEC: &str = r#"
[stencil]
name = "smooth"
dtype = "f32"
axes = ["y", "x"]

[fields]
u = { role = "state" }
k = { role = "input" }

[params]
alpha = "f32"

[[update]]
target = "u"
expr = "u[0,0] + alpha * k[0,0] * (u[-1,0] + u[1,0] + u[0,-1] + u[0,1] - 4*u[0,0])"
"#;

fn tune(dir: &Path, work: &Path) -> std::process::Output {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests");
    Command::new(env!("CARGO_BIN_EXE_stencil-tune"))
        .arg("--emulated-device")
        .arg(tests.join("cuda-on-cpu"))
        .arg("--emulated-device")
        .arg(tests.join("hip-on-cuda"))
        .args([
            "--shape", "48x40", "--steps", "5", "--reps", "1", "--rounds", "1", "--work",
        ])
        .arg(work)
        .arg(dir)
        .output()
        .expect("the tuner runs")
}

#[test]
fn the_fastest_checked_plan_goes_to_the_tuning_file() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("emulated-tuning");
    let (dir, work) = (root.join("specs"), root.join("work"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(work.join("results.tsv"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("smooth.stencil.toml"), SPEC).unwrap();

    let first = tune(&dir, &work);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{stderr}");
    assert!(
        stderr.contains("compiled") && stderr.contains("timed"),
        "{stderr}"
    );
    let results = std::fs::read_to_string(work.join("results.tsv")).unwrap();
    let lines: Vec<&str> = results.lines().collect();
    assert!(lines.len() > 20, "{results}");
    for line in &lines {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(
            f[1..5],
            ["smooth", "Emulated device", "sm_90", "ok"],
            "{line}"
        );
    }
    let entries = stencil_build::tuning::read(&dir.join("tuning.toml")).unwrap();
    assert!(entries.len() <= 1);
    for e in &entries {
        assert_eq!(
            (e.stencil.as_str(), e.device.as_str()),
            ("smooth", "Emulated device")
        );
        assert!(e.gcells > e.own_gcells && e.shape == [48, 40]);
    }

    // A second run times nothing: every candidate is in the results.
    let again = tune(&dir, &work);
    assert!(again.status.success());
    assert!(!String::from_utf8_lossy(&again.stderr).contains("timed"));
    assert_eq!(
        std::fs::read_to_string(work.join("results.tsv")).unwrap(),
        results
    );
}
