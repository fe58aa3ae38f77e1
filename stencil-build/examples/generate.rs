//! Prints what stencil-build generates for a spec, without building it:
//!
//! ```sh
//! cargo run -p stencil-build --example generate -- path/to/x.stencil.toml cuda
//! ```
//!
//! The second argument picks the output: `rust` (the API), `c` (OpenMP-C),
//! `cuda` (the default) or `hip`. A broken spec prints the build's located
//! error and exits with status 1.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(path), kind) = (args.first(), args.get(1).map_or("cuda", String::as_str)) else {
        eprintln!("usage: generate SPEC [rust|c|cuda|hip]");
        return ExitCode::FAILURE;
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let sources = match stencil_build::generate(path, &text) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let out = match kind {
        "rust" => sources.rust,
        "c" => sources.openmp,
        "cuda" => sources.cuda,
        "hip" => sources.hip,
        other => {
            eprintln!("unknown output `{other}`: write rust, c, cuda or hip");
            return ExitCode::FAILURE;
        }
    };
    print!("{out}");
    ExitCode::SUCCESS
}
