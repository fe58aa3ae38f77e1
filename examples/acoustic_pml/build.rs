fn main() -> Result<(), stencil_build::Error> {
    stencil_build::compile()
}
