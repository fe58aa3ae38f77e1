//! What the benchmark measured, one line a candidate, appended as each
//! finishes: the cache an interrupted run resumes from.
//!
//! Each line holds tab-separated fields: the candidate's id, its stencil,
//! the device's name and architecture, whether it computed what the
//! reference computes (`ok`, or `wrong` with the worst difference, or
//! `failed` with the error), its GCells/s, and the seconds its check and
//! timing took (absent in files written before that column).

use std::collections::HashMap;
use std::path::Path;

/// The results file's name in the work folder.
pub const FILE: &str = "results.tsv";

/// One candidate's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub stencil: String,
    pub device: String,
    pub arch: String,
    /// `ok`, else why it was not timed.
    pub status: String,
    pub gcells: f64,
    /// Wall time of the candidate's check and timing runs.
    pub seconds: f64,
}

/// Every outcome by candidate id.
#[derive(Clone, Debug, Default)]
pub struct Results {
    by_id: HashMap<String, Outcome>,
}

impl Results {
    /// Reads a results file; none is no results.
    pub fn load(path: &Path) -> Result<Self, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// The results of `text`, read from `path` (for errors).
    fn parse(text: &str, path: &Path) -> Result<Self, String> {
        let mut by_id = HashMap::new();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let f: Vec<&str> = line.split('\t').collect();
            let (id, stencil, device, arch, status, gcells, seconds) = match f[..] {
                [id, stencil, device, arch, status, gcells] => {
                    (id, stencil, device, arch, status, gcells, "0")
                }
                [id, stencil, device, arch, status, gcells, seconds] => {
                    (id, stencil, device, arch, status, gcells, seconds)
                }
                _ => return Err(format!("{}:{}: not a results line", path.display(), n + 1)),
            };
            let number = |v: &str| {
                v.parse()
                    .map_err(|_| format!("{}:{}: `{v}` is not a number", path.display(), n + 1))
            };
            let outcome = Outcome {
                stencil: stencil.into(),
                device: device.into(),
                arch: arch.into(),
                status: status.into(),
                gcells: number(gcells)?,
                seconds: number(seconds)?,
            };
            by_id.insert(id.to_string(), outcome);
        }
        Ok(Results { by_id })
    }

    /// Whether candidate `id` was measured (or failed).
    pub fn has(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// Candidate `id`'s outcome.
    pub fn get(&self, id: &str) -> Option<&Outcome> {
        self.by_id.get(id)
    }
}

/// Appends the results file `from` (checked first) to `to`, the work
/// folder's cache: a candidate's later line replaces its earlier one as
/// the cache is read.
pub fn append(from: &Path, to: &Path) -> Result<(), String> {
    let mut text = std::fs::read_to_string(from).map_err(|e| format!("{}: {e}", from.display()))?;
    Results::parse(&text, from)?;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if let Some(folder) = to.parent() {
        std::fs::create_dir_all(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(to)
        .map_err(|e| format!("{}: {e}", to.display()))?;
    std::io::Write::write_all(&mut file, text.as_bytes())
        .map_err(|e| format!("{}: {e}", to.display()))
}

/// A candidate's id: a hash of the stencil's spec hash, the backend, the
/// plan, the shape and the steps, so that results of another shape or
/// another version of the stencil are not taken for this one's.
pub fn id(spec: &str, backend: &str, section: &str, shape: &[usize], steps: u64) -> String {
    let text = format!("{spec}|{backend}|{section}|{shape:?}|{steps}");
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_read_back_and_ids_follow_what_was_timed() {
        let dir = std::env::temp_dir().join(format!("stencil-tune-results-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(FILE);
        std::fs::write(
            &path,
            "a1\theat_f32\tNVIDIA H200\tsm_90\tok\t512.5\t1.25\nb2\theat_f32\tNVIDIA H200\tsm_90\twrong 3e-2\t0\n",
        )
        .unwrap();
        let r = Results::load(&path).unwrap();
        assert!(r.has("a1") && r.has("b2") && !r.has("c3"));
        assert_eq!(r.get("a1").unwrap().gcells, 512.5);
        assert_eq!(r.get("a1").unwrap().seconds, 1.25);
        assert_eq!(r.get("b2").unwrap().seconds, 0.0);
        assert_eq!(r.get("b2").unwrap().status, "wrong 3e-2");
        assert!(
            Results::load(&dir.join("none.tsv"))
                .unwrap()
                .by_id
                .is_empty()
        );
        std::fs::write(&path, "a1\tonly two\n").unwrap();
        assert!(
            Results::load(&path)
                .unwrap_err()
                .contains(":1: not a results line")
        );
        let a = id("abc", "cuda", "strategy = \"naive\"", &[64, 64], 10);
        assert_eq!(a, id("abc", "cuda", "strategy = \"naive\"", &[64, 64], 10));
        assert_ne!(a, id("abc", "cuda", "strategy = \"naive\"", &[64, 65], 10));
        assert_ne!(a, id("abd", "cuda", "strategy = \"naive\"", &[64, 64], 10));
    }
}
