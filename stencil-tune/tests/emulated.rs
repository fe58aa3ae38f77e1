//! The tuner end to end on the emulated device: a spec's candidates are
//! built through stencil-build as a scratch crate, checked against the
//! reference and timed, the fastest is written to `tuning.toml` beside the
//! spec (a file stencil-build reads back), and a second run resumes from
//! the results instead of timing again. Then the other ways of running
//! it: `--dry-run`, `--build-only` with the benchmark run by hand and
//! `--record`, and a `--budget` spent before any timing.
//!
//! Needs a C++ compiler (the emulated device) and spawns cargo: ignored by
//! the README's test command, run by CI's emulated-device stage.

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

fn tune(dir: &Path, work: &Path, extra: &[&str]) -> std::process::Output {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests");
    Command::new(env!("CARGO_BIN_EXE_stencil-tune"))
        .arg("--emulated-device")
        .arg(tests.join("cuda-on-cpu"))
        .arg("--emulated-device")
        .arg(tests.join("hip-on-cuda"))
        .args(["--shape", "48x40", "--reps", "1", "--rounds", "1", "--work"])
        .arg(work)
        .args(if extra.is_empty() {
            &["--steps", "5"][..]
        } else {
            extra
        })
        .arg(dir)
        .output()
        .expect("the tuner runs")
}

#[test]
#[ignore = "needs a C++ compiler for the emulated device; CI's emulated-device stage runs it"]
fn the_fastest_checked_plan_goes_to_the_tuning_file() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("emulated-tuning");
    let (dir, work) = (root.join("specs"), root.join("work"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(work.join("results.tsv"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("smooth.stencil.toml"), SPEC).unwrap();

    let first = tune(&dir, &work, &[]);
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
    let again = tune(&dir, &work, &[]);
    assert!(again.status.success());
    assert!(!String::from_utf8_lossy(&again.stderr).contains("timed"));
    assert_eq!(
        std::fs::read_to_string(work.join("results.tsv")).unwrap(),
        results
    );

    // The first round's candidates, listed without building anything.
    let listed = tune(&dir, &work, &["--steps", "6", "--dry-run"]);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert_eq!(listed.lines().count(), lines.len(), "{listed}");
    assert!(listed.starts_with("smooth: the spec's own\n"), "{listed}");

    // Built here, timed "elsewhere" (the printed command), recorded here.
    std::fs::remove_file(dir.join("tuning.toml")).ok();
    let split = ["--steps", "6", "--build-only"];
    let built = tune(&dir, &work, &split);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let command = String::from_utf8_lossy(&built.stdout).trim().to_string();
    let mut words = command.split(' ');
    let elsewhere = root.join("elsewhere.tsv");
    let _ = std::fs::remove_file(&elsewhere);
    let ran = Command::new(words.next().unwrap())
        .args(words.take_while(|w| *w != "--results"))
        .arg("--results")
        .arg(&elsewhere)
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&elsewhere).unwrap().lines().count(),
        lines.len()
    );
    assert!(!dir.join("tuning.toml").exists());
    let record = ["--steps", "6", "--record", elsewhere.to_str().unwrap()];
    assert!(tune(&dir, &work, &record).status.success());
    assert!(
        stencil_build::tuning::read(&dir.join("tuning.toml"))
            .unwrap()
            .len()
            <= 1
    );
    // The recorded results are the work folder's: the next build is the
    // second round's, the neighbours of the fastest, none timed before.
    let next = ["--steps", "6", "--rounds", "2", "--build-only"];
    let built = tune(&dir, &work, &next);
    let said = String::from_utf8_lossy(&built.stderr);
    assert!(
        built.status.success() && said.contains("round 2: "),
        "{said}"
    );
    let neighbours = tune(&dir, &work, &["--steps", "6", "--rounds", "2", "--dry-run"]);
    let neighbours = String::from_utf8_lossy(&neighbours.stdout).into_owned();
    assert!(!neighbours.is_empty(), "no second round");
    assert!(
        neighbours.lines().all(|l| !listed.contains(l)),
        "{neighbours}"
    );

    // A budget spent while building times nothing.
    let before = std::fs::read_to_string(work.join("results.tsv")).unwrap();
    let spent = tune(&dir, &work, &["--steps", "7", "--budget", "1s"]);
    assert!(spent.status.success());
    assert!(String::from_utf8_lossy(&spent.stderr).contains("the time budget is spent"));
    let timed = std::fs::read_to_string(work.join("results.tsv")).unwrap();
    assert_eq!(timed, before, "nothing timed at 7 steps");
}
