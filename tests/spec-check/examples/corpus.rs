//! Writes the random stencils of the performance corpus: `COUNT` specs drawn
//! from [`RandomStencil::strategy`] (the property tests' runnable stencils)
//! by a runner seeded with [`SEED`], as `random_NN.stencil.toml` in `DIR`.
//!
//! `cargo run -p stencil-spec-check --example corpus -- DIR [COUNT]`
//! (the corpus holds `examples/suite/corpus/random`, 30 of them).

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use stencil_spec_check::random::RandomStencil;

/// The seed of the corpus's draw: 32 bytes for ChaCha, fixed so that the
/// same specs come out on every machine.
const SEED: [u8; 32] = *b"stencil-build performance corpus";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().ok_or("usage: corpus DIR [COUNT]")?);
    let count: usize = args.next().map_or(Ok(30), |c| c.parse())?;
    std::fs::create_dir_all(&dir)?;
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &SEED);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = RandomStencil::strategy();
    for k in 0..count {
        let stencil = strategy
            .new_tree(&mut runner)
            .map_err(|e| e.to_string())?
            .current();
        let name = format!("random_{k:02}");
        let header = format!(
            "# Random stencil {k} of the corpus: drawn from the property tests' strategy \
             (tests/spec-check/examples/corpus.rs, seed {:?}).\n",
            std::str::from_utf8(&SEED)?
        );
        std::fs::write(
            dir.join(format!("{name}.stencil.toml")),
            header + &stencil.to_toml(&name),
        )?;
    }
    Ok(())
}
