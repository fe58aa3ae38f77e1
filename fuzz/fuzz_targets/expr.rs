//! Any update expression, in an otherwise valid 2-D spec with two fields and
//! a parameter: parsed, checked, lowered and generated for every backend.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(expr) = std::str::from_utf8(data) else {
        return;
    };
    let quoted = toml::Value::String(expr.to_string()).to_string();
    let text = format!(
        "[stencil]\nname = \"fuzzed\"\ndtype = \"f32\"\naxes = [\"y\", \"x\"]\n\n\
         [fields]\nu = {{ role = \"state\" }}\nk = {{ role = \"input\" }}\n\n\
         [params]\nalpha = \"f32\"\n\n\
         [constants]\nc = [1.0, 2.0, 3.0]\nr0 = 1\n\n\
         [[update]]\ntarget = \"u\"\nexpr = {quoted}\n"
    );
    stencil_build_fuzz::check(&text);
});
