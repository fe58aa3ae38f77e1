//! The stencils to tune, the candidate plans of each round, and the tuning
//! files written from the results.

use std::path::{Path, PathBuf};

use stencil_build::tuning::{self, Entry, Tunable};

use crate::options::Options;
use crate::results::{self, Results};

/// A stencil to tune: one dtype of a spec.
#[derive(Clone, Debug)]
pub struct Stencil {
    /// The spec file.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// The stencil as stencil-build lists it, with its plan spaces.
    pub tunable: Tunable,
    /// The shape it is timed at.
    pub shape: Vec<usize>,
}

/// A plan to time.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// [`results::id`].
    pub id: String,
    /// Index into the stencils.
    pub stencil: usize,
    /// The keys of its `[tiling.<backend>]`, one a line; `None` for the
    /// spec's own plan, compiled as the spec stands.
    pub tiling: Option<String>,
}

/// Every stencil of the specs under `o.paths`, in order (those `--stencil` names).
pub fn stencils(o: &Options) -> Result<Vec<Stencil>, String> {
    let mut files = Vec::new();
    for p in &o.paths {
        specs_under(p, &mut files)?;
    }
    files.sort();
    files.dedup();
    let mut out = Vec::new();
    for path in files {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let tunables = tuning::tunables(&path, &text, o.exhaustive).map_err(|e| e.to_string())?;
        for tunable in tunables {
            if o.stencils.is_empty() || o.stencils.contains(&tunable.name) {
                let shape = o.shape_for(tunable.dims);
                out.push(Stencil {
                    path: path.clone(),
                    text: text.clone(),
                    tunable,
                    shape,
                });
            }
        }
    }
    Ok(out)
}

/// Adds `path` (a spec) or the specs under it (a folder: hidden folders,
/// `target` and nested packages skipped, as a build's discovery does).
fn specs_under(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if path.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let entries = std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for entry in entries.flatten() {
        let p = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if p.is_dir() {
            if name != "target" && !p.join("Cargo.toml").exists() {
                specs_under(&p, out)?;
            }
        } else if name.ends_with(".stencil.toml") {
            out.push(p);
        }
    }
    Ok(())
}

impl Stencil {
    /// The plans of the first round besides the spec's own: its
    /// neighbours and the sweep, each as the keys of a `[tiling.<backend>]`.
    fn first_round(&self, o: &Options) -> Vec<String> {
        let space = space(&self.tunable, o);
        space
            .around
            .iter()
            .chain(&space.sweep)
            .map(|s| keys(s))
            .collect()
    }

    /// The plans one parameter away from plan `tiling` (the keys of a
    /// `[tiling.<backend>]`) of stencil `k`: the candidates of a round after
    /// the first.
    fn around(&self, k: usize, tiling: String, o: &Options) -> Result<Vec<String>, String> {
        let c = self.candidate(k, Some(tiling), o);
        let text = self.candidate_spec(&c, &self.tunable.name, o)?;
        let tunables = tuning::tunables(&self.path, &text, false).map_err(|e| e.to_string())?;
        Ok(space(&tunables[0], o)
            .around
            .iter()
            .map(|s| keys(s))
            .collect())
    }

    /// The candidate of plan `tiling` (`None`: the spec's own).
    fn candidate(&self, index: usize, tiling: Option<String>, o: &Options) -> Candidate {
        let plan = tiling.as_deref().unwrap_or("own");
        Candidate {
            id: results::id(&self.tunable.spec, &o.backend, plan, &self.shape, o.steps),
            stencil: index,
            tiling,
        }
    }

    /// The spec of candidate `c`, a module named `module` of one dtype.
    pub fn candidate_spec(
        &self,
        c: &Candidate,
        module: &str,
        o: &Options,
    ) -> Result<String, String> {
        let mut table: toml::Table = toml::from_str(&self.text).map_err(|e| e.to_string())?;
        let stencil = table
            .get_mut("stencil")
            .and_then(toml::Value::as_table_mut)
            .ok_or("a spec without [stencil]")?;
        stencil.insert("name".into(), module.into());
        stencil.insert("dtype".into(), self.tunable.dtype.into());
        if let Some(keys) = &c.tiling {
            let gpu: toml::Table = toml::from_str(keys).map_err(|e| e.to_string())?;
            let tiling = table
                .entry("tiling")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .ok_or("`tiling` is not a table")?;
            tiling.insert(o.backend.clone(), toml::Value::Table(gpu));
        }
        toml::to_string(&table).map_err(|e| e.to_string())
    }
}

/// `t`'s plan space on the backend tuned.
fn space<'a>(t: &'a Tunable, o: &Options) -> &'a stencil_build::PlanSpace {
    if o.backend == "hip" { &t.hip } else { &t.cuda }
}

/// The keys of a `[tiling.<backend>]` section, without its header.
fn keys(section: &str) -> String {
    section
        .lines()
        .filter(|l| !l.trim_start().starts_with('['))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The candidates of round `round`: in the first, each stencil's own plan,
/// its neighbours and the sweep; after, the neighbours of its fastest plan
/// so far, where that is not its own (whose neighbours the first round timed).
pub fn round(
    stencils: &[Stencil],
    measured: &Results,
    round: usize,
    o: &Options,
) -> Result<Vec<Candidate>, String> {
    let mut out: Vec<Candidate> = Vec::new();
    for (k, st) in stencils.iter().enumerate() {
        let plans: Vec<String> = if round == 1 {
            out.push(st.candidate(k, None, o));
            st.first_round(o)
        } else {
            let Some((Some(best), _)) = fastest(st, k, measured, o).best else {
                continue;
            };
            st.around(k, best, o)?
        };
        for p in plans {
            let c = st.candidate(k, Some(p), o);
            if !out.iter().any(|d| d.id == c.id) {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// What the search of one stencil found.
struct Search {
    /// The fastest plan (`None`: the spec's own) and its outcome.
    best: Option<(Option<String>, results::Outcome)>,
    /// Candidates the search measured, and the seconds they took.
    timed: usize,
    seconds: f64,
}

/// The fastest plan measured for stencil `k` among the candidates of the
/// first round and those around it that `measured` holds.
fn fastest(st: &Stencil, k: usize, measured: &Results, o: &Options) -> Search {
    let mut plans: Vec<Option<String>> = vec![None];
    plans.extend(st.first_round(o).into_iter().map(Some));
    let mut seen = 0;
    // Every measured candidate the search reached, once (plans written
    // differently can be one candidate).
    let mut reached = std::collections::HashSet::new();
    let mut best: Option<(Option<String>, results::Outcome)> = None;
    // Rounds add the neighbours of the best: follow them while they improve.
    while seen < plans.len() {
        let fresh: Vec<Option<String>> = plans[seen..].to_vec();
        seen = plans.len();
        for plan in fresh {
            let c = st.candidate(k, plan.clone(), o);
            let Some(outcome) = measured.get(&c.id) else {
                continue;
            };
            reached.insert(c.id);
            if outcome.status == "ok"
                && best.as_ref().is_none_or(|(_, b)| outcome.gcells > b.gcells)
            {
                best = Some((plan, outcome.clone()));
            }
        }
        if let Some((Some(b), _)) = &best {
            for p in st.around(k, b.clone(), o).unwrap_or_default() {
                let p = Some(p);
                if !plans.contains(&p) {
                    plans.push(p);
                }
            }
        }
    }
    let seconds = reached
        .iter()
        .filter_map(|id| measured.get(id))
        .map(|r| r.seconds)
        .sum();
    Search {
        best,
        timed: reached.len(),
        seconds,
    }
}

/// Plans that beat the spec's own by less than this fraction are not
/// written: within the noise of a timing, the spec's own plan (with what
/// `auto` adds for small grids) is the safer choice.
const MARGIN: f64 = 0.01;

/// Writes, beside each spec, the tuning file with the fastest plan of each
/// of its stencils on the device measured, where it beats the spec's own by
/// more than [`MARGIN`] (an earlier entry for that device is dropped where
/// it does not), and prints what was chosen.
pub fn write_tuning(stencils: &[Stencil], measured: &Results, o: &Options) -> Result<(), String> {
    let date = today();
    let mut files: Vec<(PathBuf, Vec<Entry>)> = Vec::new();
    println!(
        "{:<28} {:>10} {:>10} {:>7} {:>6} {:>8}  plan",
        "stencil", "own", "tuned", "gain", "timed", "seconds"
    );
    for (k, st) in stencils.iter().enumerate() {
        let own = measured
            .get(&st.candidate(k, None, o).id)
            .filter(|r| r.status == "ok");
        let search = fastest(st, k, measured, o);
        let (Some(own), Some((best, fast))) = (own, search.best) else {
            println!("{:<28} not measured", st.tunable.name);
            continue;
        };
        let file = st
            .path
            .parent()
            .unwrap_or(Path::new("."))
            .join(tuning::FILE_NAME);
        if !files.iter().any(|(f, _)| *f == file) {
            let existing = if file.exists() {
                tuning::read(&file).map_err(|e| e.to_string())?
            } else {
                Vec::new()
            };
            files.push((file.clone(), existing));
        }
        let entries = &mut files
            .iter_mut()
            .find(|(f, _)| *f == file)
            .expect("added above")
            .1;
        entries.retain(|e| {
            !(e.stencil == st.tunable.name
                && e.backend.feature() == o.backend
                && e.device == own.device
                && e.arch == own.arch)
        });
        let gain = fast.gcells / own.gcells;
        let plan = best.as_deref().map_or("the spec's own".to_string(), |p| {
            p.trim().replace('\n', ", ")
        });
        println!(
            "{:<28} {:>10.1} {:>10.1} {:>6.2}x {:>6} {:>8.1}  {plan}",
            st.tunable.name, own.gcells, fast.gcells, gain, search.timed, search.seconds
        );
        if let Some(tiling) = best.filter(|_| gain > 1.0 + MARGIN) {
            let backend = if o.backend == "hip" {
                stencil_build::Backend::Hip
            } else {
                stencil_build::Backend::Cuda
            };
            entries.push(Entry {
                stencil: st.tunable.name.clone(),
                spec: st.tunable.spec.clone(),
                backend,
                device: own.device.clone(),
                arch: own.arch.clone(),
                shape: st.shape.clone(),
                steps: o.steps,
                gcells: fast.gcells,
                own_gcells: own.gcells,
                date: date.clone(),
                tiling,
            });
        }
    }
    for (file, entries) in files {
        std::fs::write(&file, tuning::render(&entries))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        eprintln!("wrote {} ({} plans)", file.display(), entries.len());
    }
    Ok(())
}

/// Today's date, `YYYY-MM-DD` (UTC), from the system clock.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_lose_their_header() {
        assert_eq!(
            keys("[tiling.cuda]\nstrategy = \"naive\"\nblock = [8, 32]\n"),
            "strategy = \"naive\"\nblock = [8, 32]\n"
        );
        assert_eq!(today().len(), 10);
    }
}
