//! The scratch crate that builds every candidate through stencil-build, as
//! a user's build would, and its benchmark, which checks and times them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::options::Options;
use crate::plans::{Candidate, Stencil};
use crate::progress::Progress;

/// The benchmark's source: its helpers (`bench/harness.rs`), then one
/// `measure!` line a candidate, written by [`main_source`].
const HARNESS: &str = include_str!("bench/harness.rs");

/// Writes the scratch crate of `candidates` under the work folder, builds
/// it (release) and returns its binary.
pub fn build(
    candidates: &[Candidate],
    stencils: &[Stencil],
    o: &Options,
) -> Result<PathBuf, String> {
    let dir = o.work.join("bench");
    let specs = dir.join("specs");
    if specs.exists() {
        std::fs::remove_dir_all(&specs).map_err(|e| format!("{}: {e}", specs.display()))?;
    }
    std::fs::create_dir_all(dir.join("src")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&specs).map_err(|e| e.to_string())?;
    for (k, c) in candidates.iter().enumerate() {
        let text = stencils[c.stencil].candidate_spec(c, &module(k), o)?;
        write(&specs.join(format!("{}.stencil.toml", module(k))), &text)?;
    }
    write(&dir.join("Cargo.toml"), &manifest(o))?;
    write(&dir.join("build.rs"), &build_script(o))?;
    write(
        &dir.join("src/main.rs"),
        &main_source(candidates, stencils, o),
    )?;
    let target = o.work.join("target");
    let mut progress = Progress::new("compiled", candidates.len());
    let mut child = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "build",
            "--release",
            "--quiet",
            "--features",
            &o.backend,
            "--manifest-path",
        ])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let sources = target.join("release/build");
    let since = std::time::SystemTime::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            if !status.success() {
                return Err(format!(
                    "building the candidates failed ({status}); see the errors above"
                ));
            }
            break;
        }
        progress.set(compiled(&sources, &o.backend, since).min(candidates.len()));
        std::thread::sleep(Duration::from_millis(500));
    }
    progress.finish();
    Ok(target.join("release/stencil-tune-bench"))
}

/// Candidates compiled so far: the kernel sources each finished compiler
/// run covers (units of up to 8 sources, or one), from the stamps
/// stencil-build writes beside each library it compiled.
fn compiled(build: &Path, backend: &str, since: std::time::SystemTime) -> usize {
    let Ok(dirs) = std::fs::read_dir(build) else {
        return 0;
    };
    let mut done = 0;
    for d in dirs.flatten().filter(|d| {
        d.file_name()
            .to_string_lossy()
            .starts_with("stencil-tune-bench-")
    }) {
        let out = d.path().join("out");
        let sources = out.join("stencil-build").join(backend);
        let units = count(&sources, |e| {
            e.file_name().to_string_lossy().starts_with("unit-")
        });
        let per = if units > 0 { 8 } else { 1 };
        let stamp = |e: &std::fs::DirEntry| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.ends_with(".a.stamp")
                && n.contains(&format!("_{backend}_"))
                && e.metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t >= since)
        };
        done += per * count(&out, stamp);
    }
    done
}

/// The entries of `dir` that `keep` keeps.
fn count(dir: &Path, keep: impl Fn(&std::fs::DirEntry) -> bool) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.flatten().filter(|e| keep(e)).count())
}

/// The benchmark's command line for `binary`.
pub fn command(binary: &Path, o: &Options) -> Vec<String> {
    vec![
        binary.display().to_string(),
        "--steps".into(),
        o.steps.to_string(),
        "--reps".into(),
        o.reps.to_string(),
        "--results".into(),
        o.work.join(crate::results::FILE).display().to_string(),
    ]
}

/// Runs the benchmark, which appends each candidate's outcome to the
/// results file (skipping those it holds), within `left` of the budget.
pub fn run(
    binary: &Path,
    candidates: &[Candidate],
    o: &Options,
    left: Option<Duration>,
) -> Result<(), String> {
    let mut cmd = Command::new(binary);
    cmd.args(&command(binary, o)[1..]);
    if let Some(left) = left {
        cmd.args(["--seconds", &left.as_secs().to_string()]);
    }
    let mut child = cmd
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    let mut progress = Progress::new("timed", candidates.len());
    let stderr = child.stderr.take().expect("piped");
    use std::io::BufRead;
    for line in std::io::BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
    {
        match line.strip_prefix("done ").and_then(|n| n.parse().ok()) {
            Some(n) => progress.set(n),
            None => progress.note(&line),
        }
    }
    progress.finish();
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the benchmark failed ({status})"))
    }
}

/// The scratch crate's build script: every candidate spec compiled, on the
/// emulated device where `--emulated-device` names its headers (tests).
fn build_script(o: &Options) -> String {
    let emulated = if o.emulated.is_empty() {
        String::new()
    } else {
        let dirs: Vec<String> = o
            .emulated
            .iter()
            .map(|d| {
                format!(
                    "{:?}.into()",
                    d.canonicalize().unwrap_or(d.clone()).display().to_string()
                )
            })
            .collect();
        format!("\n        .gpu_on_cpu(&[{}])", dirs.join(", "))
    };
    format!(
        "fn main() -> Result<(), stencil_build::Error> {{\n    stencil_build::Config::new()\n        .search_dir(\"specs\"){emulated}\n        .compile()\n}}\n"
    )
}

/// The module of candidate `k`.
fn module(k: usize) -> String {
    format!("candidate_{k}")
}

/// The scratch crate's manifest: stencil-build and stencil-rt of this
/// tuner's version, from its workspace where it runs from one.
fn manifest(o: &Options) -> String {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dep = |name: &str| {
        let path = here.join("..").join(name);
        if path.join("Cargo.toml").exists() {
            format!(
                "{{ path = {:?} }}",
                path.canonicalize().unwrap_or(path).display().to_string()
            )
        } else {
            format!("\"={}\"", env!("CARGO_PKG_VERSION"))
        }
    };
    let testing = if o.emulated.is_empty() {
        ""
    } else {
        ", features = [\"testing\"]"
    };
    let build = dep("stencil-build").replace(" }", &format!("{testing} }}"));
    format!(
        "[package]\nname = \"stencil-tune-bench\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [workspace]\n\n[features]\ncuda = []\nhip = []\n\n[dependencies]\nstencil-rt = {}\n\n\
         [build-dependencies]\nstencil-build = {}\n\n[profile.release]\ndebug = false\n",
        dep("stencil-rt"),
        build
    )
}

/// The benchmark: the harness, then each candidate's id and measurement.
fn main_source(candidates: &[Candidate], stencils: &[Stencil], o: &Options) -> String {
    let mut text = String::from(HARNESS);
    text.push_str("\n/// Every candidate: its id, its stencil and how it is measured.\nconst CANDIDATES: &[(&str, &str, Measure)] = &[\n");
    for (k, c) in candidates.iter().enumerate() {
        let st = &stencils[c.stencil];
        let grids: Vec<String> = (0..st.tunable.grids.len()).map(|g| g.to_string()).collect();
        let shape: Vec<String> = st.shape.iter().map(usize::to_string).collect();
        // Every candidate of a stencil is checked against its first one's
        // reference: the others' are never called, so never compiled to
        // machine code (a reference of hundreds of terms takes rustc long).
        let first = candidates
            .iter()
            .position(|f| f.stencil == c.stencil)
            .unwrap_or(k);
        let _ = writeln!(
            text,
            "    (\"{}\", \"{}\", |steps, reps, fastest| measure!({}, {}, {}, \"{}\", [{}], [{}], steps, reps, fastest)),",
            c.id,
            st.tunable.name,
            module(k),
            module(first),
            o.backend,
            st.tunable.name,
            grids.join(", "),
            shape.join(", ")
        );
    }
    text.push_str("];\n");
    text
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}
