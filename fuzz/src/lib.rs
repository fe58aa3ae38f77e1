//! What every fuzz target asserts of one spec text.

/// Checks and generates `text`: `Ok` with code for every backend, or located
/// spec errors (a line and column inside the text) and nothing else.
pub fn check(text: &str) {
    match stencil_build::generate("fuzz.stencil.toml", text) {
        Ok(sources) => assert!(!sources.rust.is_empty() && !sources.openmp.is_empty()),
        Err(stencil_build::Error::Spec(diagnostics)) => {
            assert!(!diagnostics.is_empty());
            let lines = text.lines().count().max(1);
            for d in diagnostics {
                assert!(d.line >= 1 && d.line <= lines + 1, "{d}");
                assert!(d.column >= 1, "{d}");
            }
        }
        Err(e) => panic!("not a spec error: {e}"),
    }
}
