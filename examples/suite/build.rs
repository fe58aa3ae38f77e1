//! Compiles each suite stencil in f32 and f64 and, with CUDA, once per GPU
//! strategy (`<name>_<dtype>_<strategy>`), so strategies run side by side.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("suite");
    std::fs::create_dir_all(&out)?;
    // (variant suffix, strategy, chunk): `stream_256` marches 256 cells per block.
    let strategies = [
        ("naive", "naive", None),
        ("tiled", "tiled", None),
        ("stream", "stream", None),
        ("stream_256", "stream", Some(256)),
    ];
    let mut specs = Vec::new();
    for dir in ["stencils", "bound"] {
        println!("cargo:rerun-if-changed={dir}");
        for entry in std::fs::read_dir(dir)? {
            specs.push(entry?.path());
        }
    }
    for path in specs {
        println!("cargo:rerun-if-changed={}", path.display());
        let base: toml::Table = toml::from_str(&std::fs::read_to_string(&path)?)?;
        let name = base["stencil"]["name"]
            .as_str()
            .ok_or("spec without a name")?;
        let fixed_strategy = base.get("tiling").and_then(|t| t.get("cuda")).is_some();
        for dtype in ["f32", "f64"] {
            for (suffix, strategy, chunk) in
                strategies
                    .iter()
                    .take(if fixed_strategy { 1 } else { strategies.len() })
            {
                let variant = if fixed_strategy {
                    format!("{name}_{dtype}")
                } else {
                    format!("{name}_{dtype}_{suffix}")
                };
                let mut t = base.clone();
                let st = t["stencil"].as_table_mut().ok_or("[stencil]")?;
                st.insert("name".into(), variant.clone().into());
                st.insert("dtype".into(), dtype.into());
                if !fixed_strategy {
                    let mut cuda = toml::Table::new();
                    cuda.insert("strategy".into(), (*strategy).into());
                    if let Some(c) = chunk {
                        cuda.insert("chunk".into(), toml::Value::Integer(*c));
                    }
                    let mut tiling = toml::Table::new();
                    tiling.insert("cuda".into(), cuda.into());
                    t.insert("tiling".into(), tiling.into());
                }
                std::fs::write(
                    out.join(format!("{variant}.stencil.toml")),
                    toml::to_string(&t)?,
                )?;
            }
        }
    }
    stencil_build::Config::new().search_dir(&out).compile()?;
    if std::env::var_os("CARGO_FEATURE_CUDA").is_some() {
        // The bound: a timed device-to-device copy (nvcc from NVCC or PATH, as stencil-build found it).
        println!("cargo:rerun-if-changed=src/bound.cu");
        cc::Build::new()
            .cuda(true)
            .cudart("static")
            .file("src/bound.cu")
            .try_compile("suite_bound")?;
    }
    Ok(())
}
