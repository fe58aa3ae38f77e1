//! Any spec text: stencil-build checks it and generates every backend's code,
//! or reports located errors. It must never panic, hang or overflow its stack.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    stencil_build_fuzz::check(text);
});
