//! Random specs, drawn from the bytes as a seed: each must be refused with
//! located errors, or its generated code must compile with every backend's
//! compiler found here (`stencil_spec_check::compile`, as
//! `tests/spec-check/tests/accepted_specs.rs` does for a bounded number).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use stencil_spec_check::compile::{self, Accepted, Compilers, Depth};
use stencil_spec_check::random::RandomStencil;

fn compilers() -> &'static Compilers {
    static FOUND: OnceLock<Compilers> = OnceLock::new();
    FOUND.get_or_init(|| Compilers::find().unwrap_or_else(|e| panic!("{e}")))
}

fuzz_target!(|data: &[u8]| {
    let mut seed = [0u8; 32];
    for (i, b) in data.iter().enumerate() {
        seed[i % 32] ^= b.rotate_left((i / 32) as u32);
    }
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let Ok(tree) = RandomStencil::compilable().new_tree(&mut runner) else {
        return;
    };
    let text = tree.current().to_toml("fuzzed");
    let sources = compile::generate("fuzzed.stencil.toml", &text).unwrap_or_else(|e| panic!("{e}"));
    if let Some(sources) = sources {
        let spec = Accepted {
            name: "fuzzed".into(),
            text,
            sources,
        };
        let dir = std::env::temp_dir().join(format!("stencil-fuzz-accepted-{}", std::process::id()));
        if let Err(e) = compile::compile(compilers(), &[spec], &dir, Depth::Full) {
            panic!("{e}");
        }
    }
});
