fn main() -> Result<(), stencil_build::Error> {
    let mut config = stencil_build::Config::new();
    // Specs the cross-backend tests and the examples hold, as they stand
    // (fixed boundaries; a mixed one and regions, which a session refuses),
    // and this crate's own (`stencils/`: periodic).
    for spec in [
        "../../examples/heat2d/stencils/heat2d.stencil.toml",
        "../stencils/coupled2d.stencil.toml",
        "../stencils/leapfrog3d.stencil.toml",
        "../stencils/boxsum3d.stencil.toml",
        "../stencils/line1d.stencil.toml",
        "../stencils/edges2d.stencil.toml",
        "../stencils/sponge2d.stencil.toml",
        // For `mpi-bench`.
        "../../examples/suite/stencils/j3d7pt.stencil.toml",
        "../../examples/suite/stencils/acoustic25.stencil.toml",
    ] {
        config.spec(spec);
    }
    if std::env::var_os("CARGO_FEATURE_GPU_ON_CPU").is_some() {
        println!("cargo:rerun-if-changed=../cuda-on-cpu");
        let dir = std::fs::canonicalize("../cuda-on-cpu").expect("tests/cuda-on-cpu is there");
        config.gpu_on_cpu(&[dir]);
    }
    config.search_dir("stencils").compile()
}
