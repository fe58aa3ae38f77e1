//! The runner end to end on the CPU, on small grids: every selected
//! configuration is checked against the reference, timed and reported.

use std::process::{Command, Output};

/// Runs `cmd`; fails the test with its stderr unless it succeeds.
fn succeeded(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn the_runner_checks_times_and_reports_every_selected_configuration() {
    let dir = std::env::temp_dir().join(format!("suite-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, md, svg) = (
        dir.join("rows.json"),
        dir.join("table.md"),
        dir.join("chart.svg"),
    );
    let out = succeeded(
        Command::new(env!("CARGO_BIN_EXE_suite"))
            .args([
                "--backend",
                "openmp",
                "--stencil",
                "j2d9pt-gol",
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
            .arg(&svg),
    );
    let json = std::fs::read_to_string(&json).unwrap();
    // Two stencils x two dtypes x (naive, auto), each with its bound and speed-up.
    assert_eq!(json.matches("\"backend\": \"openmp\"").count(), 8, "{json}");
    for key in [
        // SUITE.md's spelling selects the runner's stencil.
        "\"stencil\": \"j2d9pt_gol\"",
        "\"shape\": [64, 64]",
        "\"shape\": [20, 20, 20]",
        "\"variant\": \"naive\"",
        "\"variant\": \"auto\"",
        "\"fraction_of_bound\"",
        "\"speedup_vs_naive\": 1.000",
    ] {
        assert!(json.contains(key), "{key} missing from {json}");
    }
    // GB/s counts every grid a step reads and writes: acoustic25 reads u,
    // u.prev and the velocity and writes u; j2d9pt-gol reads one grid, writes one.
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    // (Both figures are rounded: GB/s to 0.1, GCells/s to 0.001.)
    for row in &rows {
        let bytes = match (row["stencil"].as_str(), row["dtype"].as_str()) {
            (Some("acoustic25"), Some("f32")) => 16.0,
            (Some("acoustic25"), _) => 32.0,
            (_, Some("f32")) => 8.0,
            _ => 16.0,
        };
        assert_eq!(row["bytes_per_cell"].as_f64(), Some(bytes), "{row}");
        // The bound is the lower of the memory and the arithmetic bound, and
        // the fraction is of it.
        let bound = row["bound_gcells_per_s"].as_f64().unwrap();
        assert!(bound > 0.0, "{row}");
        assert!(
            ["memory", "arithmetic"].contains(&row["bound_by"].as_str().unwrap()),
            "{row}"
        );
        // The bound keeps three significant digits (a relative error of
        // 0.5% at most), GCells/s three decimals; on a loaded machine a
        // small grid's bound can be a thousandth of a GCell/s.
        // Each OpenMP row's memory bound is the copy timed between its runs.
        let copy = row["copy_gb_per_s"].as_f64().unwrap();
        if row["bound_by"] == "memory" {
            assert!(
                (bound - copy / bytes).abs() <= 0.005 * bound + 0.05 / bytes,
                "{row}"
            );
        }
        let fraction = row["fraction_of_bound"].as_f64().unwrap();
        let gcells = row["gcells_per_s"].as_f64().unwrap();
        let slack = 0.005 * gcells / bound + 0.0005 / bound + 0.0001;
        assert!((fraction - gcells / bound).abs() <= slack, "{row}");
        let (gcells, gbs) = (
            row["gcells_per_s"].as_f64().unwrap(),
            row["gb_per_s"].as_f64().unwrap(),
        );
        assert!(
            (gbs - bytes * gcells).abs() <= 0.051 + 0.0005 * bytes,
            "{row}"
        );
    }
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.starts_with("Bounds (openmp): STREAM-like copy"), "{md}");
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
        "the bound of each stencil",
    ] {
        assert!(svg.contains(text), "{text} missing from the chart");
    }
    // A bar per measured (stencil, dtype, bar): naive, best and auto here.
    assert!(svg.matches("<rect").count() >= 12, "{svg}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&md), "the table is printed too");
}

/// The runner on j2d5pt f32 on 64^2 on the CPU (3 steps, one repetition).
fn small_j2d5pt_command() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_suite"));
    cmd.args([
        "--backend",
        "openmp",
        "--stencil",
        "j2d5pt",
        "--dtype",
        "f32",
        "--size2",
        "64",
        "--steps",
        "3",
        "--reps",
        "1",
        "--warmup",
        "1",
    ]);
    cmd
}

/// [`small_j2d5pt_command`]'s table, with `extra` options.
fn small_j2d5pt(extra: &[&str]) -> String {
    let out = succeeded(small_j2d5pt_command().args(extra));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The device names the instruction-set level the OpenMP kernels (and the
/// FMA bound) run at, which `STENCIL_OPENMP_ISA` caps.
#[test]
fn the_device_names_the_level_its_kernels_run_at() {
    let device = |env: Option<&str>| {
        let mut cmd = small_j2d5pt_command();
        match env {
            Some(level) => cmd.env("STENCIL_OPENMP_ISA", level),
            None => cmd.env_remove("STENCIL_OPENMP_ISA"),
        };
        let stdout = String::from_utf8_lossy(&succeeded(&mut cmd).stdout).into_owned();
        let line = stdout.lines().find(|l| l.starts_with("Devices: "));
        line.unwrap_or_else(|| panic!("{stdout}")).to_owned()
    };
    let detected = stencil_rt::openmp::Isa::detected();
    assert!(device(None).ends_with(&format!(" threads, {detected}")));
    assert!(device(Some("baseline")).ends_with(" threads, baseline"));
}

/// `--threads` runs every OpenMP row at each count, each beside the bound
/// measured at that count and against the `naive` row of that count.
#[test]
fn each_thread_count_has_its_rows_and_its_bound() {
    let stdout = small_j2d5pt(&["--threads", "1,2"]);
    for threads in ["1 threads", "2 threads"] {
        let bound = "Bounds (openmp): STREAM-like copy of a 64^2 f64 grid (OpenMP, ";
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(bound) && l.contains(&format!(", {threads}, "))),
            "{threads}: {stdout}"
        );
    }
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("| openmp |"))
        .collect();
    assert_eq!(rows.len(), 4, "naive and auto at each count: {stdout}");
    for (row, threads) in rows.iter().zip([
        "; 1 threads |",
        "; 1 threads |",
        "; 2 threads |",
        "; 2 threads |",
    ]) {
        assert!(row.contains(threads), "{row}");
    }
    // Each count's naive row is its own baseline.
    assert_eq!(
        rows.iter()
            .filter(|l| l.contains("| naive |") && l.ends_with("| 1.00x |"))
            .count(),
        2,
        "{stdout}"
    );
    assert!(
        stdout.contains("Devices: ")
            && stdout.contains(" 1 threads, ")
            && stdout.contains(" 2 threads, ")
    );
}

#[test]
fn rows_timed_a_few_steps_a_call_say_so() {
    let stdout = small_j2d5pt(&["--steps-per-call", "1"]);
    assert_eq!(
        stdout.matches("; 1 step a call |").count(),
        2,
        "naive and auto: {stdout}"
    );
}

#[test]
fn both_ways_adds_rows_only_where_a_gpu_session_measured() {
    // CPU runs measure nothing: `--both-ways` leaves the rows as they are.
    let stdout = small_j2d5pt(&["--both-ways"]);
    assert_eq!(
        stdout.matches("| j2d5pt | f32 |").count(),
        2,
        "naive and auto: {stdout}"
    );
    assert!(!stdout.contains("| auto fused |"), "{stdout}");
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

/// The interpreter for `baseline.py`: `SUITE_PYTHON`, or `python3`.
fn python() -> String {
    std::env::var("SUITE_PYTHON").unwrap_or_else(|_| "python3".into())
}

#[test]
#[ignore = "needs python3 with numpy (SUITE_PYTHON names another interpreter); .ci/run runs it"]
fn the_baseline_is_checked_against_the_reference_before_its_rows_are_reported() {
    let dir = std::env::temp_dir().join(format!("suite-baseline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("cupy.json");
    // The baseline's stencils, run by numpy on the check grid.
    succeeded(
        Command::new(python())
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/baseline.py"))
            .args(["--xp", "numpy", "--check-only", "--json"])
            .arg(&json),
    );
    // A measured row as baseline.py writes it (here for the CPU backend).
    std::fs::write(
        &json,
        r#"[{"library": "CuPy 0.0", "backend": "openmp", "device": "test", "stencil": "j2d9pt",
             "dtype": "f32", "shape": [64, 64], "steps": 2, "warmup_steps": 1, "reps": 3, "median_s": 0.001}]"#,
    )
    .unwrap();
    let suite = |stencil: &str| {
        Command::new(env!("CARGO_BIN_EXE_suite"))
            .args([
                "--backend",
                "openmp",
                "--stencil",
                stencil,
                "--variant",
                "none",
            ])
            .args([
                "--size2", "64", "--size3", "20", "--steps", "2", "--reps", "1",
            ])
            .arg("--baseline")
            .arg(&json)
            .output()
            .unwrap()
    };
    // Every stencil's output agrees with the reference; the row is reported
    // beside naive: 60 x 60 cells (radius 2) x 2 steps in 1 ms. wave2d, which
    // baseline.py does not write, runs without baseline rows.
    for stencil in [
        "wave2d",
        "j2d5pt",
        "j2d9pt",
        "j2d9pt_gol",
        "j2d25pt",
        "j3d7pt",
        "j3d13pt",
        "j3d17pt",
        "j3d27pt",
        "poisson",
        "star3d25",
        "acoustic25",
    ] {
        let out = suite(stencil);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stencil}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if stencil == "j2d9pt" {
            assert!(
                stdout.contains("| j2d9pt | f32 | 64 x 64 | cupy | CuPy 0.0: array slicing, a kernel per operation | 0.007 |"),
                "{stdout}"
            );
        }
    }
    // One cell of the baseline's output changed by 0.01%: the run fails.
    let file = dir.join("cupy-check/j3d27pt_f64.bin");
    let mut data = std::fs::read(&file).unwrap();
    let at = 8 * (45 * 133 * 10 + 45 * 5 + 60);
    let v = f64::from_le_bytes(data[at..at + 8].try_into().unwrap());
    data[at..at + 8].copy_from_slice(&(v * 1.0001).to_le_bytes());
    std::fs::write(&file, data).unwrap();
    let out = suite("j3d27pt");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("baseline.py j3d27pt f64 differs from the reference"),
        "{stderr}"
    );
}

/// The performance corpus (feature `corpus`): every stencil of `corpus/`
/// checked against its reference and timed, AN5D's and the families' in
/// both dtypes, the random ones in their own.
#[cfg(feature = "corpus")]
#[test]
fn the_corpus_runs_every_stencil_against_its_bound() {
    let out = succeeded(Command::new(env!("CARGO_BIN_EXE_suite")).args([
        "--backend",
        "openmp",
        "--set",
        "corpus",
        "--size1",
        "4099",
        // The wide boxes' blocks of 8 rows by 2 vectors (32 cells in f32)
        // run whole and last, ending at the last row and cell, in 2-D and
        // in 3-D (rows of 150 cells).
        "--size2",
        "67",
        "--shape3",
        "33,33,150",
        "--steps",
        "2",
        "--reps",
        "1",
        "--warmup",
        "1",
    ]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("| openmp |"))
        .collect();
    let count = |dir: &str| {
        std::fs::read_dir(format!("{}/corpus/{dir}", env!("CARGO_MANIFEST_DIR")))
            .unwrap()
            .count()
    };
    assert_eq!(count("an5d"), 21);
    assert_eq!(count("random"), 30);
    assert_eq!(
        rows.len(),
        2 * (count("an5d") + count("families")) + count("random"),
        "{stdout}"
    );
    // No suite stencil, and every row against a bound.
    assert!(!stdout.contains("| j3d7pt |"), "{stdout}");
    for stencil in [
        "an5d_box3d4r",
        "line_r4_periodic",
        "wave3d_r4",
        "flux3d_t3",
        "random_29",
    ] {
        assert!(
            stdout.contains(&format!("| {stencil} |")),
            "{stencil}: {stdout}"
        );
    }
    assert!(stdout.contains("| 4099 |") && stdout.contains("| 33 x 33 x 150 |"));
    // Rows are `auto`'s plans: random_16's spec draws blocks of [41, 19, 8]
    // (the property tests' odd tiling), which its row must not run.
    let random_16 = rows.iter().find(|r| r.contains("| random_16 |")).unwrap();
    assert!(
        random_16.contains("| auto | bands of") && !random_16.contains("41, 19, 8"),
        "{random_16}"
    );
    assert!(
        rows.iter()
            .all(|r| r.contains("(memory)") || r.contains("(arithmetic)"))
    );
}
