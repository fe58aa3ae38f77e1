//! Compiles every `*.stencil.toml` of this crate for the backends its features enable.

fn main() -> Result<(), stencil_build::Error> {
    stencil_build::compile()
}
