//! Compilation units: several generated GPU sources compiled in one run of
//! the compiler, so that their headers are parsed once.
//!
//! A generated source spends much of its compile time on its headers: on
//! a 2-core machine like CI's, nvcc took 1.9 s for a source of one trivial
//! kernel that includes what every generated `.cu` does (`cuda_runtime.h`,
//! `stddef.h`, `mutex`), and 3.9-4.6 s for a whole generated `.cu` (heat3d
//! f64 `temporal`, star3d25 f32 `auto`); hipcc 1.7 s for the headers against
//! 2.6 s. Eight of the test crate's sources compiled
//! in one unit took nvcc 6.0-7.3 s instead of 17.1-19.4 s one by one,
//! hipcc 4.2-4.3 s instead of 16.0-16.6 s and the emulated device's C++
//! 4.1-4.4 s instead of 12.7-14.2 s, with the same PTX and registers for
//! every kernel.
//!
//! Each source stays its own readable file. A unit `#include`s them, each
//! inside a namespace of its own (they define the same helpers, such as
//! `stencil_residency`), after hoisting their headers to the top so that
//! the headers' own include guards make the sources' `#include`s no-ops.
//! Their `extern "C"` entry points keep their names: C linkage ignores the
//! namespace. Compiler messages name the source file and line.

use std::path::{Path, PathBuf};

use crate::Error;

/// The most sources one unit holds: past eight, a unit saves little more
/// (the headers are then an eighth of its time or less) and the units are
/// fewer to spread over the compiler's parallel runs.
const MOST_PER_UNIT: usize = 8;

/// How many compiler runs each parallel job should have at least, so that
/// jobs finishing at different times still keep every core busy.
const UNITS_PER_JOB: usize = 4;

/// One file to compile: a source, or a unit that includes several.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The file the compiler is given.
    pub path: PathBuf,
    /// The generated sources it compiles (itself, for a source alone).
    pub sources: Vec<PathBuf>,
}

impl Unit {
    /// Every file the unit's compilation reads that stencil-build wrote:
    /// the unit and its sources.
    pub fn inputs(&self) -> Vec<PathBuf> {
        let mut inputs = vec![self.path.clone()];
        inputs.extend(self.sources.iter().filter(|s| **s != self.path).cloned());
        inputs
    }
}

/// The files to compile for `sources` on `jobs` parallel compiler runs:
/// the sources themselves where they are too few to share runs, else units
/// of up to [`MOST_PER_UNIT`] consecutive sources each, written beside the
/// first source as `unit-<k>.<extension>` (an earlier build's units are
/// removed with the other stale files, [`super::remove_stale`]).
pub fn units(sources: &[PathBuf], jobs: usize) -> Result<Vec<Unit>, Error> {
    let Some(first) = sources.first() else {
        return Ok(Vec::new());
    };
    let dir = first.parent().unwrap_or(Path::new("."));
    let extension = first.extension().and_then(|e| e.to_str()).unwrap_or("");
    let sizes = unit_sizes(sources.len(), jobs);
    let mut rest = sources;
    let mut paths = Vec::with_capacity(sizes.len());
    for (k, &n) in sizes.iter().enumerate() {
        let (members, tail) = rest.split_at(n);
        rest = tail;
        let path = match members {
            [alone] => alone.clone(),
            _ => {
                let path = dir.join(format!("unit-{k}.{extension}"));
                write_unit(&path, k, sizes.len(), members)?;
                path
            }
        };
        paths.push(Unit {
            path,
            sources: members.to_vec(),
        });
    }
    Ok(paths)
}

/// How many of `count` sources each unit holds, in order: as few units as
/// [`MOST_PER_UNIT`] allows, but at least [`UNITS_PER_JOB`] for each of
/// `jobs` (or one source each when there are fewer sources than that), their
/// sizes differing by one at most.
fn unit_sizes(count: usize, jobs: usize) -> Vec<usize> {
    let wanted = (UNITS_PER_JOB * jobs.max(1)).min(count);
    let units = count.div_ceil(MOST_PER_UNIT).max(wanted);
    if units == 0 {
        return Vec::new();
    }
    (0..units)
        .map(|k| count / units + usize::from(k < count % units))
        .collect()
}

/// Writes unit `k` of `count`, holding `members`, to `path`.
fn write_unit(path: &Path, k: usize, count: usize, members: &[PathBuf]) -> Result<(), Error> {
    let mut texts = Vec::with_capacity(members.len());
    for path in members {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        texts.push((path.as_path(), text));
    }
    super::cache::write_if_changed(path, &unit_source(k, count, &texts)).map(|_| ())
}

/// The text of unit `k` of `count`: the members' `#include <...>` lines, in
/// the order they first appear, then each member (path and text) included
/// in namespace `stencil_unit_<i>`.
fn unit_source(k: usize, count: usize, members: &[(&Path, String)]) -> String {
    let mut text = format!(
        "/*\n * Compilation unit {} of {count}, generated by stencil-build: {} generated sources compiled in one\n \
         * run of the compiler, which then parses their headers once. Each source is included in a namespace\n \
         * of its own (they define the same helpers); their `extern \"C\"` entry points keep their names.\n */\n",
        k + 1,
        members.len()
    );
    let mut headers: Vec<&str> = Vec::new();
    for (_, source) in members {
        for line in source.lines().map(str::trim) {
            if line.starts_with("#include <") && !headers.contains(&line) {
                headers.push(line);
            }
        }
    }
    for header in headers {
        text.push_str(header);
        text.push('\n');
    }
    for (i, (path, _)) in members.iter().enumerate() {
        text.push_str(&format!(
            "\nnamespace stencil_unit_{i} {{\n#include \"{}\"\n}} // namespace stencil_unit_{i}\n",
            path.display()
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_share_units_only_when_every_job_keeps_several() {
        // Few sources for the jobs: each compiles alone.
        assert_eq!(unit_sizes(3, 16), [1, 1, 1]);
        assert_eq!(unit_sizes(8, 2), [1; 8]);
        assert!(unit_sizes(0, 2).is_empty());
        // Enough: as few units as eight a unit allows, at least four a job.
        assert_eq!(unit_sizes(9, 2), [2, 1, 1, 1, 1, 1, 1, 1]);
        assert_eq!(unit_sizes(27, 2), [4, 4, 4, 3, 3, 3, 3, 3]);
        let many = unit_sizes(651, 2);
        assert_eq!(many.len(), 82);
        assert_eq!(many.iter().sum::<usize>(), 651);
        assert!(many.iter().all(|&n| n == 7 || n == 8));
        // A job count of 0 (a bad NUM_JOBS) counts as one.
        assert_eq!(unit_sizes(4, 0), [1; 4]);
    }

    #[test]
    fn a_unit_hoists_headers_and_wraps_each_source_in_a_namespace() {
        let a = "/* a */\n#include <hip/hip_runtime.h>\n#include <stddef.h>\nstatic int f() { return 1; }\n";
        let b = "/* b */\n#include <hip/hip_runtime.h>\n#include <mutex>\n  #include <hip/hip_cooperative_groups.h>\n";
        let text = unit_source(
            2,
            5,
            &[
                (Path::new("/o/a.hip"), a.into()),
                (Path::new("/o/b.hip"), b.into()),
            ],
        );
        assert!(text.starts_with(
            "/*\n * Compilation unit 3 of 5, generated by stencil-build: 2 generated sources"
        ));
        let body = text.split(" */\n").nth(1).unwrap();
        assert_eq!(
            body,
            "#include <hip/hip_runtime.h>\n#include <stddef.h>\n#include <mutex>\n#include <hip/hip_cooperative_groups.h>\n\
             \nnamespace stencil_unit_0 {\n#include \"/o/a.hip\"\n} // namespace stencil_unit_0\n\
             \nnamespace stencil_unit_1 {\n#include \"/o/b.hip\"\n} // namespace stencil_unit_1\n"
        );
    }

    #[test]
    fn units_are_written_beside_the_sources() {
        let dir = std::env::temp_dir().join(format!("stencil-build-units-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sources: Vec<PathBuf> = (0..9)
            .map(|i| {
                let path = dir.join(format!("s{i}.cu"));
                std::fs::write(&path, format!("#include <cuda_runtime.h>\nint s{i};\n")).unwrap();
                path
            })
            .collect();
        // 9 sources on 2 jobs: a unit of s0 and s1, then the others alone.
        let units = units(&sources, 2).unwrap();
        let paths: Vec<PathBuf> = units.iter().map(|u| u.path.clone()).collect();
        assert_eq!(paths.len(), 8);
        assert_eq!(paths[0], dir.join("unit-0.cu"));
        assert_eq!(paths[1..], sources[2..]);
        assert_eq!(
            units[0].inputs(),
            [paths[0].clone(), sources[0].clone(), sources[1].clone()]
        );
        assert_eq!(units[1].inputs(), [sources[2].clone()]);
        let unit = std::fs::read_to_string(&paths[0]).unwrap();
        assert!(unit.contains(&format!("#include \"{}\"", sources[1].display())));
        // With many jobs every source compiles alone.
        let alone: Vec<PathBuf> = super::units(&sources[..4], 8)
            .unwrap()
            .into_iter()
            .map(|u| u.path)
            .collect();
        assert_eq!(alone, sources[..4]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
