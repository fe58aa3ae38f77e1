//! The command line.

use std::path::PathBuf;
use std::time::Duration;

/// What `--help` and a wrong argument print.
pub const USAGE: &str = "\
usage: stencil-tune [OPTIONS] [SPEC|FOLDER...]

Times candidate plans of each stencil on this machine's GPU and writes the
fastest, where it beats the spec's own plan, to tuning.toml beside the spec.
Without paths, tunes every *.stencil.toml under the current folder.

options:
  --backend cuda|hip    the GPU backend to tune (default: cuda)
  --shape NxN[xN]       the grid timed (default: 16777216, 8192x8192 or 512x512x512)
  --steps N             steps of each timed run (default: 1000)
  --reps N              timed runs of each candidate, the median kept (default: 3)
  --rounds N            rounds of neighbours around the fastest (default: 3)
  --budget DURATION     stop timing after this long (90s, 20m, 2h), keep the best so far
  --stencil NAME        tune only this stencil (repeatable)
  --exhaustive          sweep every combination of the swept values (slow)
  --work FOLDER         scratch crate, builds and results (default: target/stencil-tune)
  --build-only          build the candidates of the next round and print the command
                        that times them (to run it on another machine)
  --record FILE         take results a `--build-only` command wrote into the work
                        folder's results (a next --build-only builds the round
                        after them), and write tuning.toml
  --dry-run             list the candidates of the next round and stop
";

/// Parsed options.
#[derive(Clone, Debug)]
pub struct Options {
    pub backend: String,
    pub shape: Option<Vec<usize>>,
    pub steps: u64,
    pub reps: usize,
    pub rounds: usize,
    pub budget: Option<Duration>,
    pub stencils: Vec<String>,
    pub exhaustive: bool,
    pub work: PathBuf,
    pub build_only: bool,
    pub record: Option<PathBuf>,
    pub dry_run: bool,
    /// Test-only: the folders of the emulated device's headers
    /// (`tests/cuda-on-cpu`, `tests/hip-on-cuda`): candidates run on the CPU.
    pub emulated: Vec<PathBuf>,
    pub paths: Vec<PathBuf>,
}

impl Options {
    /// Parses the arguments after the program's name.
    pub fn parse(args: impl Iterator<Item = String>) -> Result<Self, String> {
        let mut o = Options {
            backend: "cuda".into(),
            shape: None,
            steps: 1000,
            reps: 3,
            rounds: 3,
            budget: None,
            stencils: Vec::new(),
            exhaustive: false,
            work: PathBuf::from("target/stencil-tune"),
            build_only: false,
            record: None,
            dry_run: false,
            emulated: Vec::new(),
            paths: Vec::new(),
        };
        let mut args = args.peekable();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| args.next().ok_or(format!("{name} takes a value"));
            match arg.as_str() {
                "--help" | "-h" => return Err("help".into()),
                "--backend" => o.backend = backend(&value("--backend")?)?,
                "--shape" => o.shape = Some(shape(&value("--shape")?)?),
                "--steps" => o.steps = number(&value("--steps")?, "--steps")?,
                "--reps" => o.reps = number(&value("--reps")?, "--reps")? as usize,
                "--rounds" => o.rounds = number(&value("--rounds")?, "--rounds")? as usize,
                "--budget" => o.budget = Some(duration(&value("--budget")?)?),
                "--stencil" => o.stencils.push(value("--stencil")?),
                "--exhaustive" => o.exhaustive = true,
                "--work" => o.work = PathBuf::from(value("--work")?),
                "--build-only" => o.build_only = true,
                "--record" => o.record = Some(PathBuf::from(value("--record")?)),
                "--dry-run" => o.dry_run = true,
                "--emulated-device" => o.emulated.push(PathBuf::from(value("--emulated-device")?)),
                a if a.starts_with("--") => return Err(format!("unknown option `{a}`")),
                path => o.paths.push(PathBuf::from(path)),
            }
        }
        if o.paths.is_empty() {
            o.paths.push(PathBuf::from("."));
        }
        Ok(o)
    }

    /// The grid timed for a stencil of `dims` axes: `--shape` where its
    /// axes match, else the default (about 2^24 to 2^27 cells).
    pub fn shape_for(&self, dims: usize) -> Vec<usize> {
        match &self.shape {
            Some(s) if s.len() == dims => s.clone(),
            _ => match dims {
                1 => vec![1 << 24],
                2 => vec![8192, 8192],
                _ => vec![512, 512, 512],
            },
        }
    }
}

fn backend(v: &str) -> Result<String, String> {
    match v {
        "cuda" | "hip" => Ok(v.into()),
        _ => Err(format!("unknown backend `{v}`: write cuda or hip")),
    }
}

fn number(v: &str, name: &str) -> Result<u64, String> {
    v.parse::<u64>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or(format!("{name} takes a positive whole number, not `{v}`"))
}

fn shape(v: &str) -> Result<Vec<usize>, String> {
    let extents: Result<Vec<usize>, _> = v
        .split('x')
        .map(|n| number(n, "--shape"))
        .map(|n| n.map(|n| n as usize))
        .collect();
    match extents {
        Ok(e) if (1..=3).contains(&e.len()) => Ok(e),
        _ => Err(format!(
            "--shape takes 1 to 3 extents joined by `x` (8192x8192), not `{v}`"
        )),
    }
}

fn duration(v: &str) -> Result<Duration, String> {
    let (n, unit) = v.split_at(v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len()));
    let n = number(n, "--budget")?;
    let seconds = match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => {
            return Err(format!(
                "--budget takes a duration such as 90s, 20m or 2h, not `{v}`"
            ));
        }
    };
    Ok(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, String> {
        Options::parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn options_parse_and_refuse_what_cannot_work() {
        let o = parse(&[
            "--shape",
            "4096x2048",
            "--budget",
            "20m",
            "--stencil",
            "heat",
            "specs",
        ])
        .unwrap();
        assert_eq!(o.shape_for(2), [4096, 2048]);
        assert_eq!(o.shape_for(3), [512, 512, 512]);
        assert_eq!(o.budget, Some(Duration::from_secs(1200)));
        assert_eq!(o.stencils, ["heat"]);
        assert_eq!(o.paths, [PathBuf::from("specs")]);
        assert_eq!(parse(&[]).unwrap().paths, [PathBuf::from(".")]);
        assert!(parse(&["--shape", "0x4"]).is_err());
        assert!(parse(&["--budget", "5 days"]).is_err());
        assert!(parse(&["--backend", "opencl"]).is_err());
        assert!(parse(&["--steps"]).is_err());
        assert!(parse(&["--fast"]).is_err());
    }
}
