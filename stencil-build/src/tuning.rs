//! Tuning files: the plans `stencil-tune` measured fastest, per stencil and
//! device, kept in a `tuning.toml` beside the specs and committed with
//! them. A build compiles each plan listed for a stencil beside the spec's
//! own, and the generated GPU module picks, when a session starts, the plan
//! tuned for the device it runs on, else the spec's own.
//!
//! ```toml
//! [[plan]]
//! stencil = "heat2d_f32"
//! spec = "9c1e5d0b7a2f4e63"
//! backend = "cuda"
//! device = "NVIDIA H200"
//! arch = "sm_90"
//! shape = [8192, 8192]
//! steps = 1000
//! gcells = 512.3
//! own_gcells = 470.2
//! date = "2026-12-02"
//! tiling = { strategy = "temporal", block = [8, 32], time_block = 4 }
//! ```
//!
//! `spec` is a hash of what the stencil computes ([`Tunable::spec`]): an entry
//! whose stencil has changed since it was tuned is not compiled, with a
//! warning that says to retune. A file that does not parse, or a plan the
//! stencil cannot take, fails the build with a located error.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toml::Spanned;

use crate::backend::gpu;
use crate::config::{Backend, checked_plan};
use crate::diagnostic::Diagnostic;
use crate::ir::{Stencil, check_gpu, check_strategy};
use crate::spec::{self, GpuTilingSection, Source};
use crate::{Error, PlanSpace, on_deep_stack};

/// A tuning file's name, in the folder of the specs it tunes.
pub const FILE_NAME: &str = "tuning.toml";

/// One tuned plan: a stencil's fastest plan on one device, where and how it
/// was measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The stencil (`<name>_<dtype>` for a spec that lists its dtypes).
    pub stencil: String,
    /// The hash of what the stencil it was tuned for computes ([`Tunable::spec`]).
    pub spec: String,
    /// The GPU backend.
    pub backend: Backend,
    /// The runtime's name of the device.
    pub device: String,
    /// The device's architecture: `sm_90`, `gfx90a`.
    pub arch: String,
    /// The grid it was timed on.
    pub shape: Vec<usize>,
    /// The steps of each timed run.
    pub steps: u64,
    /// Cells updated per second, in billions, with this plan.
    pub gcells: f64,
    /// The same with the spec's own plan, measured beside it.
    pub own_gcells: f64,
    /// When it was measured (`YYYY-MM-DD`).
    pub date: String,
    /// The plan: the keys of the `[tiling.<backend>]` section that asks for
    /// it, one `key = value` a line (as a [`PlanSpace`] lists plans, without the header).
    pub tiling: String,
}

/// A hash of what stencil `st` computes: its element type, axes, grids and
/// their roles, parameters, statements (as lowered: constants folded, sums
/// unrolled), boundary and regions; not its name, documentation, expression text or
/// tiling. Sixteen hex digits (64-bit FNV-1a), the same on every machine.
pub(crate) fn spec_hash(st: &Stencil) -> String {
    let statements: Vec<_> = st.statements.iter().map(|s| (s.target, &s.expr)).collect();
    let fields: Vec<_> = st.fields.iter().map(|f| (&f.name, f.role)).collect();
    let mut text = format!(
        "{:?}|{}|{fields:?}|{:?}|{statements:?}|{:?}",
        st.dtype,
        st.dims(),
        st.params,
        st.boundary
    );
    // Regions, where there are some (a spec without keeps its hash).
    if !st.regions.is_empty() {
        let pieces: Vec<_> = st.statements.iter().map(|s| s.region).collect();
        text.push_str(&format!("|{:?}|{pieces:?}", st.regions));
    }
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// The text of a tuning file holding `entries`, in their order.
pub fn render(entries: &[Entry]) -> String {
    let mut text = String::from(
        "# Plans measured fastest by stencil-tune, per stencil and device. stencil-build\n\
         # compiles each beside the spec's own plan; a session runs the plan tuned for\n\
         # its device. Commit this file; run stencil-tune again after changing a spec.\n",
    );
    for e in entries {
        let shape: Vec<String> = e.shape.iter().map(usize::to_string).collect();
        let tiling: Vec<&str> = e
            .tiling
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let _ = write!(
            text,
            "\n[[plan]]\nstencil = {}\nspec = {}\nbackend = {}\ndevice = {}\narch = {}\n\
             shape = [{}]\nsteps = {}\ngcells = {:.3}\nown_gcells = {:.3}\ndate = {}\n\
             tiling = {{ {} }}\n",
            quoted(&e.stencil),
            quoted(&e.spec),
            quoted(e.backend.feature()),
            quoted(&e.device),
            quoted(&e.arch),
            shape.join(", "),
            e.steps,
            e.gcells,
            e.own_gcells,
            quoted(&e.date),
            tiling.join(", "),
        );
    }
    text
}

/// One stencil of a spec as a tuner sees it: one per dtype the spec lists.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Tunable {
    /// Its name (`<name>_<dtype>` for a spec that lists its dtypes), the
    /// key of its tuning entries.
    pub name: String,
    /// Its number of axes.
    pub dims: usize,
    /// `f32` or `f64`.
    pub dtype: &'static str,
    /// The grids a session uploads, in its `upload`'s order (each 2-level
    /// field followed by its `_prev` level).
    pub grids: Vec<String>,
    /// The hash of what it computes, its entries' `spec`: its element
    /// type, axes, grids and their roles, parameters, statements (as
    /// lowered: constants folded, sums unrolled) and boundary; not its
    /// name, documentation, expression text or tiling. Sixteen hex digits,
    /// the same on every machine.
    pub spec: String,
    /// Its CUDA plan space.
    pub cuda: PlanSpace,
    /// Its HIP plan space.
    pub hip: PlanSpace,
}

/// Checks the spec `text` (reported as coming from `path`) and lists its
/// stencils with their plan spaces, a sweep of every combination of the
/// swept values where `exhaustive`. Errors are the ones
/// [`compile`](crate::compile) reports, located in `text`.
pub fn tunables(
    path: impl AsRef<Path>,
    text: &str,
    exhaustive: bool,
) -> Result<Vec<Tunable>, Error> {
    let path = path.as_ref();
    on_deep_stack(|| {
        crate::config::lowered(path, text)?
            .iter()
            .map(|st| {
                let form = gpu::gpu_form(st);
                Ok(Tunable {
                    name: st.name.clone(),
                    dims: st.dims(),
                    dtype: st.dtype.rust(),
                    grids: crate::codegen::rust::grid_names_where(st, |_| true),
                    spec: spec_hash(st),
                    cuda: PlanSpace::of(st, &form, &gpu::CUDA, exhaustive)?,
                    hip: PlanSpace::of(st, &form, &gpu::HIP, exhaustive)?,
                })
            })
            .collect()
    })
}

/// `s` as a TOML basic string.
fn quoted(s: &str) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Reads the tuning file `path`: its entries in order, or the located
/// error of the first that does not parse.
pub fn read(path: &Path) -> Result<Vec<Entry>, Error> {
    on_deep_stack(|| {
        let file = load(path, path).map_err(|d| Error::Tuning(vec![d]))?;
        Ok(file.entries.into_iter().map(|(entry, _)| entry).collect())
    })
}

/// `[[plan]]` as written.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EntrySection {
    stencil: Spanned<String>,
    spec: Spanned<String>,
    backend: Spanned<String>,
    device: Spanned<String>,
    arch: Spanned<String>,
    shape: Spanned<Vec<Spanned<i64>>>,
    steps: Spanned<i64>,
    gcells: f64,
    own_gcells: f64,
    date: Spanned<String>,
    tiling: Spanned<GpuTilingSection>,
}

/// A tuning file as written.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSection {
    #[serde(default)]
    plan: Vec<EntrySection>,
}

/// A tuning file, parsed: each entry with what it was read from.
pub(crate) struct File {
    source: Source,
    entries: Vec<(Entry, EntrySection)>,
}

/// Reads and parses the tuning file `path`, naming it `shown` in messages.
pub(crate) fn load(path: &Path, shown: &Path) -> Result<File, Diagnostic> {
    let source = spec::read_source(path, shown, "tuning file")?;
    let file: FileSection = spec::parse_as(&source, |message| {
        Some(if message.contains("unknown field") {
            "remove the key or fix its spelling; the expected keys are listed above".into()
        } else {
            "fix the value, or run stencil-tune again to rewrite the file".into()
        })
    })?;
    let entries = file
        .plan
        .into_iter()
        .map(|s| Ok((entry(&s, &source)?, s)))
        .collect::<Result<_, Diagnostic>>()?;
    Ok(File { source, entries })
}

/// The entry `s` describes, its values checked in form.
fn entry(s: &EntrySection, src: &Source) -> Result<Entry, Diagnostic> {
    let backend = match s.backend.get_ref().as_str() {
        "cuda" => Backend::Cuda,
        "hip" => Backend::Hip,
        other => {
            return Err(src
                .error(s.backend.span(), format!("unknown GPU backend `{other}`"))
                .with_hint("write `backend = \"cuda\"` or `backend = \"hip\"`"));
        }
    };
    let positive = |v: &Spanned<i64>, what: &str| {
        usize::try_from(*v.get_ref())
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                src.error(v.span(), format!("{what} must be a positive whole number"))
                    .with_hint("run stencil-tune again to rewrite the entry")
            })
    };
    let shape = s
        .shape
        .get_ref()
        .iter()
        .map(|n| positive(n, "an extent of `shape`"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Entry {
        stencil: s.stencil.get_ref().clone(),
        spec: s.spec.get_ref().clone(),
        backend,
        device: s.device.get_ref().clone(),
        arch: s.arch.get_ref().clone(),
        shape,
        steps: positive(&s.steps, "`steps`")? as u64,
        gcells: s.gcells,
        own_gcells: s.own_gcells,
        date: s.date.get_ref().clone(),
        tiling: tiling_text(s.tiling.get_ref()),
    })
}

/// The keys of a tiling section, one `key = value` a line.
fn tiling_text(t: &GpuTilingSection) -> String {
    let mut text = String::new();
    if let Some(s) = &t.strategy {
        let _ = writeln!(text, "strategy = \"{}\"", s.get_ref());
    }
    if let Some(b) = &t.block {
        let b: Vec<i64> = b.get_ref().iter().map(|v| *v.get_ref()).collect();
        let _ = writeln!(text, "block = {b:?}");
    }
    let keys = [
        ("time_block", &t.time_block),
        ("coarsen", &t.coarsen),
        ("chunk", &t.chunk),
        ("vector", &t.vector),
        ("occupancy", &t.occupancy),
    ];
    for (key, value) in keys {
        if let Some(v) = value {
            let _ = writeln!(text, "{key} = {}", v.get_ref());
        }
    }
    text
}

/// A plan of a tuning file that a build compiles: the plan, settled and
/// checked for the stencil's GPU form, and its entry.
#[derive(Clone, Debug)]
pub(crate) struct TunedPlan {
    /// The plan.
    pub plan: gpu::Plan,
    /// Where and how it was measured.
    pub entry: Entry,
}

/// The tuned plans of a build: per stencil (in the build's order), those of
/// the tuning file beside its spec whose spec hash matches, per backend.
#[derive(Debug, Default)]
pub(crate) struct Tunings {
    plans: Vec<Vec<TunedPlan>>,
}

impl Tunings {
    /// The tuned plans of stencil `index` (of the build's order) for `d`.
    pub fn of(&self, index: usize, d: &gpu::Dialect) -> Vec<TunedPlan> {
        self.plans.get(index).map_or_else(Vec::new, |plans| {
            plans
                .iter()
                .filter(|p| p.entry.backend.feature() == d.name)
                .cloned()
                .collect()
        })
    }
}

/// The tuning files beside `specs` (each `(shown, real)` path), checked
/// against `stencils`: the plans to compile, and warnings for entries that
/// are not compiled (a stencil changed since it was tuned, or one that no
/// spec of the folder defines). Every file's errors are reported together.
pub(crate) fn tunings(
    specs: &[(PathBuf, PathBuf)],
    stencils: &[(Stencil, crate::analysis::Analysis)],
) -> Result<(Tunings, Vec<String>), Error> {
    let stencils: Vec<&Stencil> = stencils.iter().map(|(st, _)| st).collect();
    let mut tunings = Tunings {
        plans: vec![Vec::new(); stencils.len()],
    };
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    for (shown, real) in folders(specs) {
        if !real.is_file() {
            continue;
        }
        crate::config::rerun_if_changed(&real);
        let checked = load(&real, &shown)
            .and_then(|file| file.check(&stencils, &shown, &mut tunings.plans, &mut warnings));
        if let Err(d) = checked {
            errors.push(d);
        }
    }
    if errors.is_empty() {
        Ok((tunings, warnings))
    } else {
        Err(Error::Tuning(errors))
    }
}

/// The tuning file of each folder holding a spec, `(shown, real)`, once each.
fn folders(specs: &[(PathBuf, PathBuf)]) -> Vec<(PathBuf, PathBuf)> {
    let mut out: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (shown, real) in specs {
        let parent = |p: &Path| p.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        let file = (parent(shown).join(FILE_NAME), parent(real).join(FILE_NAME));
        if !out.iter().any(|(_, r)| *r == file.1) {
            out.push(file);
        }
    }
    out
}

impl File {
    /// Checks every entry against the stencils whose spec lies in this
    /// file's folder (`folder_file`, the file's shown path), adding the
    /// plans to compile to `plans` (per stencil) and a warning for each
    /// entry not compiled.
    fn check(
        &self,
        stencils: &[&Stencil],
        folder_file: &Path,
        plans: &mut [Vec<TunedPlan>],
        warnings: &mut Vec<String>,
    ) -> Result<(), Diagnostic> {
        let folder = folder_file.parent().unwrap_or(Path::new(""));
        let mut seen: Vec<(&Entry, &EntrySection)> = Vec::new();
        for (entry, section) in &self.entries {
            let found = stencils.iter().position(|st| {
                st.name == entry.stencil && st.path.parent().unwrap_or(Path::new("")) == folder
            });
            let Some(index) = found else {
                warnings.push(self.warning(
                    section.stencil.span(),
                    format!(
                        "no spec in this folder defines a stencil `{}`: its tuned plan is not compiled",
                        entry.stencil
                    ),
                ));
                continue;
            };
            let st = stencils[index];
            if entry.spec != spec_hash(st) {
                warnings.push(self.warning(
                    section.spec.span(),
                    format!(
                        "stencil `{}` changed since its plan for {} ({}) was tuned: that plan is not \
                         compiled; run stencil-tune again to retune it",
                        entry.stencil, entry.device, entry.arch
                    ),
                ));
                continue;
            }
            let same = |(e, _): &&(&Entry, &EntrySection)| {
                (&e.stencil, e.backend, &e.device, &e.arch)
                    == (&entry.stencil, entry.backend, &entry.device, &entry.arch)
            };
            if let Some((_, first)) = seen.iter().find(same) {
                let line = self.source.error(first.device.span(), "").line;
                return Err(self
                    .source
                    .error(
                        section.device.span(),
                        format!(
                            "`{}` has a plan for this device already (line {line})",
                            entry.stencil
                        ),
                    )
                    .with_hint("keep one entry per stencil, backend and device"));
            }
            seen.push((entry, section));
            let plan = self.plan(st, entry, section)?;
            plans[index].push(TunedPlan {
                plan,
                entry: entry.clone(),
            });
        }
        Ok(())
    }

    /// A warning about the text at `span`: `path:line:col: message`.
    fn warning(&self, span: std::ops::Range<usize>, message: String) -> String {
        let d = self.source.error(span, message);
        format!(
            "{}:{}:{}: {}",
            d.path.display(),
            d.line,
            d.column,
            d.message
        )
    }

    /// The plan `section` asks of `st`, checked as a spec's `[tiling.<backend>]`.
    fn plan(
        &self,
        st: &Stencil,
        entry: &Entry,
        section: &EntrySection,
    ) -> Result<gpu::Plan, Diagnostic> {
        let src = &self.source;
        if entry.shape.len() != st.dims() {
            return Err(src
                .error(
                    section.shape.span(),
                    format!(
                        "`shape` has {} extents but `{}` has {} axes",
                        entry.shape.len(),
                        st.name,
                        st.dims()
                    ),
                )
                .with_hint("run stencil-tune again to rewrite the entry"));
        }
        let d = if entry.backend == Backend::Hip {
            &gpu::HIP
        } else {
            &gpu::CUDA
        };
        let tiling = check_gpu(&section.tiling, st.dims(), d.name, src)?;
        let form = gpu::gpu_form(st);
        check_strategy(&section.tiling, &tiling, (st, &form), d.name, src)?;
        checked_plan(&section.tiling, &tiling, &form, d, src)
    }
}

#[cfg(test)]
mod tests;
