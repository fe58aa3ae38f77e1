//! `--baseline`: the suite as a user would otherwise write it, measured by
//! `baseline.py` (CuPy array expressions). Its output on the small check
//! grid is compared with the reference before any of its rows is reported,
//! as the runner does for its own kernels.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::report::Row;
use crate::{Options, check};

/// One row of `baseline.py --json`.
#[derive(Deserialize)]
struct Measured {
    library: String,
    backend: String,
    device: String,
    stencil: String,
    dtype: String,
    shape: Vec<usize>,
    steps: u64,
    median_s: f64,
}

/// The folder of check data beside `json`: `<stem>-check/`.
fn check_dir(json: &Path) -> PathBuf {
    let stem = json.file_stem().unwrap_or_default().to_string_lossy();
    json.with_file_name(format!("{stem}-check"))
}

/// Checks the baseline's output for every selected stencil and dtype against
/// the reference, then returns its rows for the backends that ran (`ran`),
/// each on the runner's grid.
pub fn load(
    o: &Options,
    json: &Path,
    ran: &[&'static str],
) -> Result<Vec<Row>, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(json).map_err(|e| format!("{}: {e}", json.display()))?;
    let measured: Vec<Measured> =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", json.display()))?;
    let dir = check_dir(json);
    let mut rows = Vec::new();
    macro_rules! row {
        ($m:ident, $dtype:literal, $stencil:literal, $variant:literal, $set:literal, [$($g:literal),*]) => {
            if $set == "suite" && $variant == "naive" && o.wants($set, $stencil, $dtype, $variant) { 'row: {
                use crate::$m as s;
                let grids = [$($g),*].len();
                let file = dir.join(concat!($stencil, "_", $dtype, ".bin"));
                let measured_here = measured.iter().any(|m| m.stencil == $stencil && m.dtype == $dtype);
                if !measured_here && !file.exists() {
                    // A stencil baseline.py does not write (the leapfrogs): no rows to check.
                    break 'row;
                }
                let cells: usize = crate::CHECK_SHAPE[3 - s::DIMS..].iter().product();
                let values: Vec<s::Real> = read_values(&file, grids, cells, $dtype, |b| {
                    s::Real::from_le_bytes(b.try_into().expect("one value"))
                })?;
                check(
                    &format!("baseline.py {} {}", $stencil, $dtype),
                    s::DIMS,
                    grids,
                    s::FLOPS_PER_CELL,
                    3,
                    |g, _| {
                        for (grid, from) in g.iter_mut().zip(values.chunks_exact(cells)) {
                            grid.copy_from_slice(from);
                        }
                        Ok(())
                    },
                    |g, shape| s::reference::run_grids(g, shape, &[], 3),
                )?;
                for m in measured.iter().filter(|m| m.stencil == $stencil && m.dtype == $dtype) {
                    let Some(&backend) = ran.iter().find(|b| **b == m.backend) else {
                        return Err(format!(
                            "{}: a row for backend `{}`, which this run did not measure",
                            json.display(), m.backend
                        ).into());
                    };
                    let gpu = backend == "cuda";
                    if m.shape != o.shape($stencil, s::DIMS, gpu) {
                        return Err(format!(
                            "{}: {} {} ran on {:?}, the runner on {:?}: run both with the same sizes",
                            json.display(), $stencil, $dtype, m.shape, o.shape($stencil, s::DIMS, gpu)
                        ).into());
                    }
                    rows.push(Row {
                        backend,
                        device: m.device.clone(),
                        stencil: $stencil,
                        dtype: $dtype,
                        variant: "cupy",
                        strategy: format!("{}: array slicing, a kernel per operation", m.library),
                        shape: m.shape.clone(),
                        steps: m.steps,
                        seconds: m.median_s,
                        bytes: s::BYTES_PER_CELL,
                        flops: s::FLOPS_PER_CELL,
                        radius: s::RADIUS.to_vec(),
                        copy_gbs: None,
                    });
                }
            } }
        };
    }
    include!(concat!(env!("OUT_DIR"), "/variants.rs"));
    Ok(rows)
}

/// The `grids` grids of `cells` values of `dtype` in `file`, each value
/// read from its little-endian bytes by `value`.
fn read_values<T>(
    file: &Path,
    grids: usize,
    cells: usize,
    dtype: &str,
    value: impl Fn(&[u8]) -> T,
) -> Result<Vec<T>, String> {
    let data = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let size = std::mem::size_of::<T>();
    if data.len() != grids * cells * size {
        return Err(format!(
            "{}: {} bytes, expected {grids} grids of {cells} {dtype} cells",
            file.display(),
            data.len()
        ));
    }
    Ok(data.chunks_exact(size).map(value).collect())
}
