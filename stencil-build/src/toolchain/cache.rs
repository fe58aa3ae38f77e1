//! Kernels compiled once: a build script that runs again (after `touch
//! build.rs`, or a change to another spec) links the libraries an earlier
//! run left in `OUT_DIR` wherever the command that built them and every
//! file they were built from are unchanged, instead of compiling them
//! again; and it rewrites no generated file whose text is the same, so that
//! neither the compilers nor rustc (which would recompile the crate that
//! `include!`s an rewritten `stencils.rs`) see a change.
//!
//! A library's stamp, `lib<name>.a.stamp` beside it, holds a hash of the
//! compiler's path, size and modification time, its full command line and
//! environment as `cc` builds them (flags, `-gencode` targets, `CFLAGS` and
//! the like folded in), and the name and text of each input. Any change
//! rebuilds; a stamp written by another version of stencil-build or of Rust
//! differs, which only costs a rebuild.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use crate::Error;

/// Writes `text` to `path` unless the file holds it already; returns
/// whether it wrote.
pub fn write_if_changed(path: &Path, text: &str) -> Result<bool, Error> {
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(false);
    }
    std::fs::write(path, text).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(true)
}

/// Compiles `build` into the static library `lib_name` and links it, or
/// only links the one an earlier run built from the same command and
/// `inputs` (every file the build reads that the command line does not
/// name: the sources, the files a unit includes, headers of include folders).
pub fn compile(
    build: &cc::Build,
    lib_name: &str,
    inputs: &[PathBuf],
    error: &dyn Fn(cc::Error) -> Error,
) -> Result<(), Error> {
    compile_with(build, lib_name, inputs, error, || Ok(Vec::new()))
}

/// [`compile`], with the objects `objects` compiles (when the library is
/// built) archived beside `build`'s own.
pub fn compile_with(
    build: &cc::Build,
    lib_name: &str,
    inputs: &[PathBuf],
    error: &dyn Fn(cc::Error) -> Error,
    objects: impl FnOnce() -> Result<Vec<PathBuf>, Error>,
) -> Result<(), Error> {
    let out_dir = std::env::var_os("OUT_DIR")
        .map(PathBuf::from)
        .ok_or_else(|| {
            Error::Environment("OUT_DIR is not set: compile() runs from a build script".into())
        })?;
    let library = out_dir.join(format!("lib{lib_name}.a"));
    let tool = build.try_get_compiler().map_err(error)?;
    // `try_compile` links what it builds; a library kept is linked here.
    let made = make_once(&library, &tool, inputs, || {
        let mut build = build.clone();
        build.objects(objects()?);
        build.try_compile(lib_name).map_err(error)
    })?;
    if made {
        Ok(())
    } else {
        cc::try_emit_link_directives(build, &library).map_err(error)
    }
}

/// Whether `output` is current for `tool`'s command and `inputs`, by the
/// stamp `<output>.stamp`; where not, `make` builds it and the stamp is
/// written. Returns whether `make` ran.
pub fn make_once(
    output: &Path,
    tool: &cc::Tool,
    inputs: &[PathBuf],
    make: impl FnOnce() -> Result<(), Error>,
) -> Result<bool, Error> {
    let mut stamp = output.as_os_str().to_owned();
    stamp.push(".stamp");
    let stamp = PathBuf::from(stamp);
    let fingerprint = fingerprint(tool, inputs)?;
    if output.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == fingerprint) {
        return Ok(false);
    }
    // An output half rebuilt must not look current.
    let _ = std::fs::remove_file(&stamp);
    make()?;
    write_if_changed(&stamp, &fingerprint)?;
    Ok(true)
}

/// The hash of `tool` (its executable's path, size and modification time,
/// arguments and environment) and of each input's path and text, in hex.
fn fingerprint(tool: &cc::Tool, inputs: &[PathBuf]) -> Result<String, Error> {
    let mut hasher = DefaultHasher::new();
    let program = executable(tool.path());
    program.hash(&mut hasher);
    if let Ok(meta) = std::fs::metadata(&program) {
        meta.len().hash(&mut hasher);
        meta.modified().ok().hash(&mut hasher);
    }
    tool.args().hash(&mut hasher);
    tool.get_envs().for_each(|pair| pair.hash(&mut hasher));
    for input in inputs {
        let text = std::fs::read(input).map_err(|source| Error::Io {
            path: input.clone(),
            source,
        })?;
        input.hash(&mut hasher);
        text.hash(&mut hasher);
    }
    Ok(format!("{:016x}\n", hasher.finish()))
}

/// `program` as a path: itself where it names a folder, else the first
/// match on `PATH` (a compiler given as `cc` or `nvcc`).
fn executable(program: &Path) -> PathBuf {
    if program.components().count() > 1 {
        return program.to_path_buf();
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| program.to_path_buf())
}

/// Every file under `dirs` (include folders), sorted.
pub fn files_under(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = dirs.to_vec();
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_made_again_only_when_an_input_or_the_command_changes() {
        let dir = std::env::temp_dir().join(format!("stencil-build-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (input, output) = (dir.join("in.c"), dir.join("out.o"));
        assert!(write_if_changed(&input, "int x;").unwrap());
        assert!(!write_if_changed(&input, "int x;").unwrap());
        let tool = |flag: &str| {
            let mut build = cc::Build::new();
            build
                .compiler("true")
                .flag(flag)
                .opt_level(0)
                .target("x86_64-unknown-linux-gnu")
                .host("x86_64-unknown-linux-gnu");
            build.try_get_compiler().unwrap()
        };
        let made = std::cell::Cell::new(0);
        let make = || {
            made.set(made.get() + 1);
            std::fs::write(&output, "o").map_err(|source| Error::Io {
                path: output.clone(),
                source,
            })
        };
        let inputs = [input.clone()];
        make_once(&output, &tool("-DA"), &inputs, make).unwrap();
        make_once(&output, &tool("-DA"), &inputs, make).unwrap();
        assert_eq!(made.get(), 1, "unchanged: made once");
        make_once(&output, &tool("-DB"), &inputs, make).unwrap();
        assert_eq!(made.get(), 2, "another flag");
        write_if_changed(&input, "int y;").unwrap();
        make_once(&output, &tool("-DB"), &inputs, make).unwrap();
        assert_eq!(made.get(), 3, "another input");
        std::fs::remove_file(&output).unwrap();
        make_once(&output, &tool("-DB"), &inputs, make).unwrap();
        assert_eq!(made.get(), 4, "output removed");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
