//! The runner end to end on the CPU, on small grids: every selected
//! configuration is checked against the reference, timed and reported.

use std::process::Command;

#[test]
fn the_runner_checks_times_and_reports_every_selected_configuration() {
    let dir = std::env::temp_dir().join(format!("suite-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, md, svg) = (
        dir.join("rows.json"),
        dir.join("table.md"),
        dir.join("chart.svg"),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_suite"))
        .args([
            "--backend",
            "openmp",
            "--stencil",
            "j2d9pt",
            "--stencil",
            "acoustic25",
        ])
        .args([
            "--size2", "64", "--size3", "20", "--steps", "2", "--reps", "3", "--warmup", "1",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--markdown")
        .arg(&md)
        .arg("--chart")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = std::fs::read_to_string(&json).unwrap();
    // Two stencils x two dtypes x (naive, auto), each with its bound and speed-up.
    assert_eq!(json.matches("\"backend\": \"openmp\"").count(), 8, "{json}");
    for key in [
        "\"shape\": [64, 64]",
        "\"shape\": [20, 20, 20]",
        "\"variant\": \"naive\"",
        "\"variant\": \"auto\"",
        "\"fraction_of_bound\"",
        "\"speedup_vs_naive\": 1.000",
    ] {
        assert!(json.contains(key), "{key} missing from {json}");
    }
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.starts_with("Bound (openmp): STREAM-like copy"), "{md}");
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| openmp |")).count(),
        8,
        "{md}"
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    for text in [
        "j2d9pt",
        "acoustic25",
        "best",
        "f32: GCells/s",
        "f64: GCells/s",
        "the bound",
    ] {
        assert!(svg.contains(text), "{text} missing from the chart");
    }
    // A bar per measured (stencil, dtype, bar): naive, best and auto here.
    assert!(svg.matches("<rect").count() >= 12, "{svg}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&md), "the table is printed too");
}

#[test]
fn options_that_select_nothing_are_an_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_suite"))
        .args(["--backend", "openmp", "--stencil", "no_such_stencil"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to run"));
}
