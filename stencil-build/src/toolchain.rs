//! Compiling generated kernels with the `cc` crate and linking them into the
//! crate being built.

use std::path::PathBuf;

use crate::Error;

/// Compiles C11 sources with `-O3` and OpenMP into the static library
/// `lib_name`, and links the OpenMP runtime and libm.
///
/// The C compiler is the one `cc` picks (`CC`, `CFLAGS` and friends apply).
/// GCC links `libgomp`, Clang `libomp`, MSVC its own runtime.
pub fn build_openmp(
    files: &[PathBuf],
    lib_name: &str,
    extra_flags: &[String],
) -> Result<(), Error> {
    let mut build = cc::Build::new();
    build.files(files).std("c11").opt_level(3).warnings(true);
    let compiler = build.try_get_compiler().map_err(|e| toolchain_error(&e))?;
    let runtime = if compiler.is_like_msvc() {
        build.flag("/openmp");
        None
    } else if compiler.is_like_clang() {
        build.flag("-fopenmp");
        Some("omp")
    } else {
        build.flag("-fopenmp");
        Some("gomp")
    };
    for flag in extra_flags {
        build.flag(flag);
    }
    build
        .try_compile(lib_name)
        .map_err(|e| toolchain_error(&e))?;
    if let Some(lib) = runtime {
        println!("cargo:rustc-link-lib={lib}");
    }
    if !compiler.is_like_msvc() {
        println!("cargo:rustc-link-lib=m");
    }
    Ok(())
}

fn toolchain_error(e: &cc::Error) -> Error {
    Error::Toolchain {
        backend: "openmp",
        message: format!(
            "{e}\nThe OpenMP backend needs a C compiler with OpenMP (gcc with libgomp, or clang with libomp); \
             set CC to choose one, or turn off the `openmp` feature."
        ),
    }
}
