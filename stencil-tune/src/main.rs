//! `stencil-tune`: times the plans of a crate's stencils on the GPU it runs
//! on and writes the fastest of each, beside the spec, to `tuning.toml`,
//! which stencil-build compiles beside the spec's own plan.
//!
//! ```text
//! cargo run -p stencil-tune --release -- [OPTIONS] [SPEC|FOLDER...]
//! ```
//!
//! For each stencil (each dtype of a spec) it lists candidate plans from
//! the plan space (the spec's own, its neighbours and a coarse sweep of
//! every strategy), builds them all as one scratch crate through
//! stencil-build (the code path of a user's build), and runs that crate's
//! benchmark: each candidate is checked against the reference on a small
//! odd grid and timed at the tuning shape. Rounds after the first time the
//! neighbours of the fastest plan so far. Results are kept as they come in
//! (`<work>/results.tsv`): an interrupted run resumes where it stopped.

mod bench;
mod options;
mod plans;
mod progress;
mod results;

use std::process::ExitCode;

fn main() -> ExitCode {
    let options = match options::Options::parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(message) => {
            eprintln!("stencil-tune: {message}\n\n{}", options::USAGE);
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("stencil-tune: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Tunes every stencil `o` names, round by round, then writes the tuning files.
fn run(o: &options::Options) -> Result<(), String> {
    let stencils = plans::stencils(o)?;
    if stencils.is_empty() {
        return Err("no stencil specs found: name spec files or folders".into());
    }
    let started = std::time::Instant::now();
    let cache = o.work.join(results::FILE);
    if let Some(path) = &o.record {
        // Into the work folder's cache: the next `--build-only` then builds
        // the round after these results.
        results::append(path, &cache)?;
    }
    let mut measured = results::Results::load(&cache)?;
    let rounds = if o.record.is_some() { 0 } else { o.rounds };
    for round in 1..=rounds {
        let candidates = plans::round(&stencils, &measured, round, o)?;
        let fresh: Vec<_> = candidates
            .into_iter()
            .filter(|c| !measured.has(&c.id))
            .collect();
        // A round measured before (a resumed run, or recorded results) is done.
        if fresh.is_empty() {
            continue;
        }
        if o.dry_run {
            for c in &fresh {
                let plan = c.tiling.as_deref().unwrap_or("the spec's own\n");
                println!(
                    "{}: {}",
                    stencils[c.stencil].tunable.name,
                    plan.trim().replace('\n', ", ")
                );
            }
            return Ok(());
        }
        eprintln!(
            "round {round}: {} candidate plans for {} stencils",
            fresh.len(),
            stencils.len()
        );
        let binary = bench::build(&fresh, &stencils, o)?;
        if o.build_only {
            println!("{}", bench::command(&binary, o).join(" "));
            return Ok(());
        }
        let left = o.budget.map(|b| b.saturating_sub(started.elapsed()));
        bench::run(&binary, &fresh, o, left)?;
        measured = results::Results::load(&o.work.join(results::FILE))?;
        if o.budget.is_some_and(|b| started.elapsed() >= b) {
            eprintln!("the time budget is spent: keeping the fastest plans measured so far");
            break;
        }
    }
    plans::write_tuning(&stencils, &measured, o)
}
