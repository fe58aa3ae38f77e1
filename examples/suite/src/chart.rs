//! The chart (`--chart`): GCells/s per stencil and strategy, one panel per
//! dtype, each stencil's bound (`report::limit`: the lower of its memory and
//! arithmetic bounds) dashed across its bars, as SVG (plotters).

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::report::{Bound, Row, gcells, limit};

/// The bars drawn per stencil: each strategy once, the fastest variant, what
/// `auto` picks, and the CuPy baseline (`--baseline`).
const BARS: &[&str] = &["naive", "tiled", "stream", "best", "auto", "cupy"];

const COLOURS: &[RGBColor] = &[
    RGBColor(120, 120, 120),
    RGBColor(214, 140, 69),
    RGBColor(90, 160, 90),
    RGBColor(60, 100, 190),
    RGBColor(150, 80, 170),
    RGBColor(40, 170, 170),
];

/// Writes one chart per backend measured: to `path`, or with one backend
/// each, `<stem>-<backend>.svg` beside it.
pub fn write(
    path: &Path,
    rows: &[Row],
    bounds: &[Bound],
) -> Result<(), Box<dyn std::error::Error>> {
    let mut backends: Vec<&str> = rows.iter().map(|r| r.backend).collect();
    backends.dedup();
    for backend in &backends {
        let file = if backends.len() == 1 {
            path.to_path_buf()
        } else {
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            path.with_file_name(format!("{stem}-{backend}.svg"))
        };
        let rows: Vec<&Row> = rows.iter().filter(|r| r.backend == *backend).collect();
        draw(&file, backend, &rows, bounds)?;
    }
    Ok(())
}

/// The value of bar `bar` for `stencil` in `dtype`, if measured.
fn bar(rows: &[&Row], stencil: &str, dtype: &str, bar: &str) -> Option<f64> {
    let mut of = rows
        .iter()
        .filter(|r| r.stencil == stencil && r.dtype == dtype);
    match bar {
        "best" => of
            .filter(|r| r.variant != "cupy")
            .map(|r| gcells(r))
            .reduce(f64::max),
        v => of.find(|r| r.variant == v).map(|r| gcells(r)),
    }
}

fn draw(
    file: &PathBuf,
    backend: &str,
    rows: &[&Row],
    bounds: &[Bound],
) -> Result<(), Box<dyn std::error::Error>> {
    let mut stencils: Vec<&str> = rows.iter().map(|r| r.stencil).collect();
    stencils.sort();
    stencils.dedup();
    let device = rows.first().map_or("", |r| r.device.as_str());
    let root = SVGBackend::new(file, (1400, 900)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((2, 1));
    for (panel, dtype) in panels.iter().zip(["f32", "f64"]) {
        let title =
            format!("{backend} on {device}, {dtype}: GCells/s (dashed: the bound of each stencil)");
        draw_panel(panel, &title, dtype, &stencils, rows, bounds)?;
    }
    root.present()?;
    Ok(())
}

/// One panel: the bars of `dtype` for each of `stencils`, under `title`,
/// each stencil's bound dashed across its bars.
fn draw_panel(
    panel: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    title: &str,
    dtype: &str,
    stencils: &[&str],
    rows: &[&Row],
    bounds: &[Bound],
) -> Result<(), Box<dyn std::error::Error>> {
    // Each stencil's bound in cells per second: its first row's (an OpenMP
    // row's copy beside it differs from its neighbours' by the machine's drift).
    let limits: Vec<f64> = stencils
        .iter()
        .map(|s| {
            rows.iter()
                .find(|r| r.stencil == *s && r.dtype == dtype)
                .map_or(f64::NAN, |r| limit(r, bounds).gcells)
        })
        .collect();
    let values: Vec<Vec<Option<f64>>> = stencils
        .iter()
        .map(|s| BARS.iter().map(|b| bar(rows, s, dtype, b)).collect())
        .collect();
    let top = values
        .iter()
        .flatten()
        .flatten()
        .copied()
        .chain(limits.iter().copied())
        .fold(0.0, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(panel)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..stencils.len() as f64, 0f64..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(stencils.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let k = x.floor() as usize;
            if (x - k as f64 - 0.5).abs() < 0.01 {
                stencils.get(k).map_or(String::new(), |s| s.to_string())
            } else {
                String::new()
            }
        })
        .y_desc("GCells/s")
        .draw()?;
    let width = 0.8 / BARS.len() as f64;
    for (b, (name, colour)) in BARS.iter().zip(COLOURS).enumerate() {
        let bars = values.iter().enumerate().filter_map(|(k, v)| {
            let x = k as f64 + 0.1 + b as f64 * width;
            v[b].map(|y| Rectangle::new([(x, 0.0), (x + width * 0.9, y)], colour.filled()))
        });
        chart
            .draw_series(bars)?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled()));
    }
    let dashes = (0..stencils.len() * 8)
        .map(|k| (k as f64 / 8.0, limits[k / 8]))
        .filter(|(_, bound)| bound.is_finite())
        .map(|(x, bound)| {
            PathElement::new(vec![(x, bound), (x + 0.08, bound)], RED.stroke_width(2))
        });
    chart.draw_series(dashes)?;
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}
