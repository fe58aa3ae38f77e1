//! Rows, the bound they are measured against, and the outputs: a Markdown
//! table (printed, and written with `--markdown`) and JSON (`--json`).

use std::fmt::Write as _;
use std::io::IsTerminal;

use crate::Options;

/// One measured configuration.
#[derive(Clone, Debug)]
pub struct Row {
    /// `cuda` or `openmp`.
    pub backend: &'static str,
    /// The device, as its runtime or the OS names it.
    pub device: String,
    /// The SUITE.md stencil.
    pub stencil: &'static str,
    /// `f32` or `f64`.
    pub dtype: &'static str,
    /// The suite's variant (`naive`, `auto`, ...).
    pub variant: &'static str,
    /// Strategy and parameters, as the kernels were compiled.
    pub strategy: String,
    /// The grid.
    pub shape: Vec<usize>,
    /// Time steps per timed run.
    pub steps: u64,
    /// Median seconds of one timed run.
    pub seconds: f64,
    /// Bytes a step must move per cell: every grid it reads read once,
    /// every field it updates written once, its temporaries none (the
    /// generated `BYTES_PER_CELL`: 2 x 4 for a one-field f32 stencil, 4 x 4
    /// for acoustic25's u, u.prev, velocity and new u).
    pub bytes: usize,
    /// Flops per cell and step (the generated `FLOPS_PER_CELL`).
    pub flops: usize,
    /// The stencil's radius per axis: the frame that is not updated.
    pub radius: Vec<usize>,
    /// GB/s of the copy timed between this row's runs, where the runner
    /// timed one there (the OpenMP rows): its memory bound, in place of the
    /// backend's [`Bound::gbs`].
    pub copy_gbs: Option<f64>,
}

impl Row {
    /// Cells updated per step: the interior, `radius` cells from every edge.
    fn updated(&self) -> f64 {
        self.shape
            .iter()
            .zip(&self.radius)
            .map(|(n, r)| (n - 2 * r) as f64)
            .product()
    }
}

/// A backend's measured bounds: memory bandwidth and arithmetic throughput.
#[derive(Clone, Debug)]
pub struct Bound {
    /// The backend it bounds.
    pub backend: &'static str,
    /// The device it was measured on, as its rows name it (an OpenMP
    /// bound's names its thread count).
    pub device: String,
    /// How it was measured.
    pub what: String,
    /// Bytes read + written per second (GB/s) of a copy.
    pub gbs: f64,
    /// Flops per second of independent multiply-adds (each two flops), in f32 and in f64.
    pub flops: [f64; 2],
}

/// What bounds a row: the lower of its memory bound (its bytes a cell at the
/// copy bandwidth) and its arithmetic bound (its flops a cell at the
/// multiply-add throughput), in GCells/s.
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    /// The bound, GCells/s.
    pub gcells: f64,
    /// `memory` or `arithmetic`.
    pub by: &'static str,
}

/// The bound of `r` among `bounds`: its backend's on its device, else its
/// backend's first (NaN where its backend measured none); its memory bound
/// from the copy beside the row where it has one.
pub fn limit(r: &Row, bounds: &[Bound]) -> Limit {
    let of_backend = || bounds.iter().filter(|b| b.backend == r.backend);
    let Some(b) = of_backend()
        .find(|b| b.device == r.device)
        .or_else(|| of_backend().next())
    else {
        return Limit {
            gcells: f64::NAN,
            by: "memory",
        };
    };
    let memory = r.copy_gbs.unwrap_or(b.gbs) / r.bytes as f64;
    let flops = b.flops[usize::from(r.dtype == "f64")];
    let arithmetic = flops / 1e9 / r.flops.max(1) as f64;
    if arithmetic < memory {
        Limit {
            gcells: arithmetic,
            by: "arithmetic",
        }
    } else {
        Limit {
            gcells: memory,
            by: "memory",
        }
    }
}

/// ANCHORS.md: GCells/s measured elsewhere on the GPU model of the GPU
/// machine (H100 80GB HBM3): a naive kernel, and AN5D's tuned temporal
/// blocking (1000 steps; its 3-D stencils are "-like": the same shape).
const ANCHORS: &[(&str, &str, Option<f64>, Option<f64>)] = &[
    ("j2d5pt", "f32", Some(228.0), Some(1511.0)),
    ("j2d5pt", "f64", Some(164.0), Some(270.0)),
    ("j2d9pt_gol", "f64", None, Some(162.0)),
    ("j3d7pt", "f32", Some(240.0), Some(471.0)),
    ("j3d7pt", "f64", Some(165.0), Some(210.0)),
    ("j3d27pt", "f32", None, Some(287.0)),
    ("j3d27pt", "f64", None, Some(131.0)),
];

fn anchor(stencil: &str, dtype: &str) -> (Option<f64>, Option<f64>) {
    ANCHORS
        .iter()
        .find(|a| a.0 == stencil && a.1 == dtype)
        .map_or((None, None), |a| (a.2, a.3))
}

/// `x` with three significant digits (at least one decimal).
pub fn three_digits(x: f64) -> String {
    let decimals = if x >= 100.0 {
        1
    } else if x >= 10.0 {
        2
    } else {
        3
    };
    format!("{x:.decimals$}")
}

/// A rate for the JSON rows: three decimals, and more where the rate is
/// small enough that three would round it to zero (a tiny grid on a loaded
/// machine), so a row's fraction can always be recomputed from its figures.
fn rate(x: f64) -> String {
    let magnitude = if x > 0.0 { x.log10().floor() as i32 } else { 0 };
    let decimals = (2 - magnitude).max(3) as usize;
    format!("{x:.decimals$}")
}

fn or_dash(x: Option<f64>) -> String {
    x.map_or("–".into(), |x| format!("{x:.0}"))
}

/// A row's derived figures: GCells/s, GB/s of one step, the bound, the
/// speed-up over `naive` on the same backend (NaN where none ran).
struct Figures {
    gcells: f64,
    gbs: f64,
    limit: Limit,
    speedup: f64,
}

/// A row's GCells/s: cells updated x steps / seconds.
pub fn gcells(r: &Row) -> f64 {
    r.updated() * r.steps as f64 / r.seconds / 1e9
}

fn figures(r: &Row, rows: &[Row], bounds: &[Bound]) -> Figures {
    let gcells = gcells(r);
    let naive = rows
        .iter()
        .find(|n| {
            n.backend == r.backend
                && n.device == r.device
                && n.stencil == r.stencil
                && n.dtype == r.dtype
                && n.variant == "naive"
        })
        .map_or(f64::NAN, self::gcells);
    Figures {
        gcells,
        gbs: r.bytes as f64 * gcells,
        limit: limit(r, bounds),
        speedup: gcells / naive,
    }
}

/// Prints the table (and the bounds), and writes the files asked for.
pub fn write(
    o: &Options,
    rows: &[Row],
    bounds: &[Bound],
) -> Result<(), Box<dyn std::error::Error>> {
    let (md, json) = render(o, rows, bounds)?;
    files(o, &md, &json)?;
    let devices: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r.device.as_str()).collect();
    println!(
        "Devices: {}\n\n{md}",
        devices.into_iter().collect::<Vec<_>>().join("; ")
    );
    Ok(())
}

/// Writes the rows measured so far to the files asked for (`--markdown`,
/// `--json`), as the runners do after each row, so that a run cut short
/// keeps what it measured; with neither asked for, does nothing.
pub fn save(o: &Options, rows: &[Row], bounds: &[Bound]) -> Result<(), Box<dyn std::error::Error>> {
    if o.markdown.is_none() && o.json.is_none() {
        return Ok(());
    }
    let (md, json) = render(o, rows, bounds)?;
    Ok(files(o, &md, &json)?)
}

/// Writes `md` and `json` to the files asked for.
fn files(o: &Options, md: &str, json: &str) -> std::io::Result<()> {
    if let Some(path) = &o.markdown {
        std::fs::write(path, md)?;
    }
    if let Some(path) = &o.json {
        std::fs::write(path, json)?;
    }
    Ok(())
}

/// The table (after the bounds) as Markdown, and the rows as JSON.
fn render(
    o: &Options,
    rows: &[Row],
    bounds: &[Bound],
) -> Result<(String, String), std::fmt::Error> {
    let h100 = rows.iter().any(|r| r.device.contains("H100"));
    let mut md = markdown_head(bounds, h100)?;
    let mut json = String::from("[\n");
    for (k, r) in rows.iter().enumerate() {
        let f = figures(r, rows, bounds);
        markdown_row(&mut md, r, &f, h100)?;
        json_row(&mut json, o, r, &f)?;
        json.push_str(if k + 1 < rows.len() { ",\n" } else { "\n" });
    }
    json.push_str("]\n");
    if h100 {
        md.push_str("\n\\* ANCHORS.md: measured elsewhere on the same GPU model (H100 80GB HBM3); AN5D fuses time steps (1000 steps).\n");
    }
    Ok((md, json))
}

/// The bounds, then the table's head (with the anchors' columns on an H100).
fn markdown_head(bounds: &[Bound], h100: bool) -> Result<String, std::fmt::Error> {
    let mut md = String::new();
    for b in bounds {
        writeln!(
            md,
            "Bounds ({}): {}: copy {:.0} GB/s; multiply-adds {:.0} GFlop/s in f32, {:.0} in f64.",
            b.backend,
            b.what,
            b.gbs,
            b.flops[0] / 1e9,
            b.flops[1] / 1e9
        )?;
    }
    md.push('\n');
    md.push_str("| backend | stencil | dtype | shape | variant | strategy, parameters | GCells/s | GB/s (1 step) | bound GCells/s | of bound | vs naive |");
    md.push_str(if h100 {
        " naive, ANCHORS* | AN5D, ANCHORS* |\n"
    } else {
        "\n"
    });
    md.push_str("|---|---|---|---|---|---|---|---|---|---|---|");
    md.push_str(if h100 { "---|---|\n" } else { "\n" });
    Ok(md)
}

/// Row `r` of the Markdown table, with its figures `f`.
fn markdown_row(md: &mut String, r: &Row, f: &Figures, h100: bool) -> std::fmt::Result {
    let shape: Vec<String> = r.shape.iter().map(usize::to_string).collect();
    let speedup = if f.speedup.is_nan() {
        "–".to_string()
    } else {
        format!("{:.2}x", f.speedup)
    };
    write!(
        md,
        "| {} | {} | {} | {} | {} | {} | {} | {:.0} | {} ({}) | {:.1}% | {speedup} |",
        r.backend,
        r.stencil,
        r.dtype,
        shape.join(" x "),
        r.variant,
        r.strategy,
        three_digits(f.gcells),
        f.gbs,
        three_digits(f.limit.gcells),
        f.limit.by,
        100.0 * f.gcells / f.limit.gcells,
    )?;
    if h100 {
        let (naive, an5d) = anchor(r.stencil, r.dtype);
        write!(md, " {} | {} |", or_dash(naive), or_dash(an5d))?;
    }
    md.push('\n');
    Ok(())
}

/// Row `r` as a JSON object (no separator after it), with its figures `f`.
fn json_row(json: &mut String, o: &Options, r: &Row, f: &Figures) -> std::fmt::Result {
    write!(
        json,
        "  {{\"backend\": \"{}\", \"device\": \"{}\", \"stencil\": \"{}\", \"dtype\": \"{}\", \"shape\": {:?}, \"variant\": \"{}\", \"strategy\": \"{}\", \"steps\": {}, \"warmup_steps\": {}, \"reps\": {}, \"median_s\": {:.6}, \"gcells_per_s\": {}, \"gb_per_s\": {:.1}, \"bytes_per_cell\": {}, \"flops_per_cell\": {}, \"bound_gcells_per_s\": {}, \"bound_by\": \"{}\", \"copy_gb_per_s\": {}, \"fraction_of_bound\": {:.4}, \"speedup_vs_naive\": {}}}",
        r.backend,
        r.device.replace('"', "'"),
        r.stencil,
        r.dtype,
        r.shape,
        r.variant,
        r.strategy,
        r.steps,
        o.warmup,
        o.reps,
        r.seconds,
        rate(f.gcells),
        f.gbs,
        r.bytes,
        r.flops,
        rate(f.limit.gcells),
        f.limit.by,
        // JSON has no NaN: a row without a copy beside it has null.
        r.copy_gbs.map_or("null".to_string(), |g| format!("{g:.1}")),
        f.gcells / f.limit.gcells,
        // JSON has no NaN: a row without a `naive` beside it has null.
        if f.speedup.is_nan() {
            "null".to_string()
        } else {
            format!("{:.3}", f.speedup)
        },
    )
}

/// The progress line on stderr: configuration `done` of `total`.
pub struct Progress {
    done: usize,
    total: usize,
}

impl Progress {
    /// Counts the compiled configurations `o` selects of `variants` (all when empty).
    pub fn new(o: &Options, variants: &[&str]) -> Self {
        let total = crate::COMPILED
            .iter()
            .filter(|(_, dtype, stencil, variant, set)| {
                o.wants(set, stencil, dtype, variant)
                    && (variants.is_empty() || variants.contains(variant))
            })
            .count();
        Progress { done: 0, total }
    }

    /// Says what runs next: on one line rewritten in place on a terminal,
    /// a line each in a log.
    pub fn next(&mut self, what: &str) {
        self.done += 1;
        if std::io::stderr().is_terminal() {
            eprint!("\r\x1b[2K[{}/{}] {what}", self.done, self.total);
        } else {
            eprintln!("[{}/{}] {what}", self.done, self.total);
        }
    }

    /// Ends the line.
    pub fn finish(&self) {
        if std::io::stderr().is_terminal() {
            eprintln!();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Bound, Row, limit, rate, save};
    use crate::Options;
    use clap::Parser;

    #[test]
    fn small_rates_keep_three_significant_digits() {
        assert_eq!(rate(958.12345), "958.123");
        assert_eq!(rate(0.5), "0.500");
        assert_eq!(rate(0.000712345), "0.000712");
        assert_eq!(rate(0.0), "0.000");
    }

    fn row(dtype: &'static str, bytes: usize, flops: usize) -> Row {
        Row {
            backend: "cuda",
            device: "test".into(),
            stencil: "box",
            dtype,
            variant: "auto",
            strategy: String::new(),
            shape: vec![64, 64],
            steps: 1,
            seconds: 1.0,
            bytes,
            flops,
            radius: vec![1, 1],
            copy_gbs: None,
        }
    }

    #[test]
    fn the_bound_is_the_lower_of_memory_and_arithmetic() {
        let bounds = [Bound {
            backend: "cuda",
            device: "test".into(),
            what: String::new(),
            gbs: 4000.0,
            flops: [60e12, 30e12],
        }];
        // 16 bytes a cell: 250 GCells/s of memory; 10 flops: 3000 in f64.
        let l = limit(&row("f64", 16, 10), &bounds);
        assert_eq!((l.gcells, l.by), (250.0, "memory"));
        // 1000 flops a cell: 30 GCells/s in f64, 60 in f32.
        let l = limit(&row("f64", 16, 1000), &bounds);
        assert_eq!((l.gcells, l.by), (30.0, "arithmetic"));
        let l = limit(&row("f32", 8, 1000), &bounds);
        assert_eq!((l.gcells, l.by), (60.0, "arithmetic"));
        // A copy timed beside the row is its memory bound: 2000 GB/s, 125
        // GCells/s at 16 bytes a cell.
        let beside = Row {
            copy_gbs: Some(2000.0),
            ..row("f64", 16, 10)
        };
        let l = limit(&beside, &bounds);
        assert_eq!((l.gcells, l.by), (125.0, "memory"));
        // Several bounds of a backend (one a thread count): the row's device's.
        let two = [
            bounds[0].clone(),
            Bound {
                device: "other".into(),
                gbs: 1000.0,
                ..bounds[0].clone()
            },
        ];
        let other = Row {
            device: "other".into(),
            ..row("f64", 16, 10)
        };
        assert_eq!(limit(&other, &two).gcells, 62.5);
        assert_eq!(limit(&row("f64", 16, 10), &two).gcells, 250.0);
        // No bound measured for the backend: NaN.
        let mut other = row("f32", 8, 10);
        other.backend = "openmp";
        assert!(limit(&other, &bounds).gcells.is_nan());
    }

    #[test]
    fn save_writes_the_rows_so_far_to_the_files_asked_for_only() {
        let dir = std::env::temp_dir().join(format!("suite-save-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (md, json) = (dir.join("rows.md"), dir.join("rows.json"));
        let bounds = [Bound {
            backend: "cuda",
            device: "test".into(),
            what: "test".into(),
            gbs: 4000.0,
            flops: [60e12, 30e12],
        }];
        let rows = [row("f64", 16, 10)];
        let none = Options::parse_from(["suite"]);
        save(&none, &rows, &bounds).unwrap();
        assert!(!md.exists() && !json.exists());
        let both = Options::parse_from([
            "suite",
            "--markdown",
            md.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ]);
        save(&both, &rows, &bounds).unwrap();
        assert!(
            std::fs::read_to_string(&md)
                .unwrap()
                .contains("| cuda | box | f64 |")
        );
        assert!(
            std::fs::read_to_string(&json)
                .unwrap()
                .contains("\"stencil\": \"box\"")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
