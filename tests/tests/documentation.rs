//! The repository's documentation holds together: every relative link of
//! its Markdown files names a file that exists (and a heading of it, where
//! the link has an anchor), the guide's table of contents holds every
//! chapter, the README stays short, and nothing the product ships points
//! into the benchmark journal that left the tree (`docs/design-notes.md`
//! keeps its lessons).

use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the repository")
        .to_path_buf()
}

/// Every file under `dir` whose name ends with one of `exts`, skipping
/// build output, hidden folders and the fuzzer's corpus.
fn files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            let skipped = ["target", "book", "corpus", "artifacts", "coverage"];
            if !name.starts_with('.') && !skipped.contains(&name.as_str()) {
                files(&path, exts, out);
            }
        } else if exts.iter().any(|e| name.ends_with(e)) {
            out.push(path);
        }
    }
}

/// The Markdown files of the repository.
fn markdown() -> Vec<PathBuf> {
    let mut out = Vec::new();
    files(&root(), &[".md"], &mut out);
    out.sort();
    out
}

/// The targets of the inline links `[text](target)` in `text`, outside code.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code spans may hold brackets that are no links.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    out
}

/// GitHub's and mdBook's anchor of a heading: lower case, spaces to `-`,
/// punctuation but `-` and `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of `file`'s headings.
fn anchors(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

#[test]
fn every_relative_link_names_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    let files = markdown();
    assert!(files.len() >= 10, "found only {files:?}");
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable Markdown");
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if path.is_empty() {
                file.clone()
            } else {
                file.parent().expect("a file's folder").join(path)
            };
            if !target.exists() {
                broken.push(format!("{}: {link} (no such file)", file.display()));
            } else if !anchor.is_empty()
                && target.is_file()
                && !anchors(&target).contains(&anchor.to_string())
            {
                broken.push(format!("{}: {link} (no such heading)", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_check_finds_a_broken_link() {
    let text = "see [the guide](docs/none.md) and `[not](a link)`\n```\n[nor](this)\n```\n";
    assert_eq!(links(text), ["docs/none.md"]);
    assert_eq!(slug("What `auto` does"), "what-auto-does");
}

#[test]
fn the_guide_lists_every_chapter() {
    let src = root().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("docs/src/SUMMARY.md");
    let listed = links(&summary);
    let mut chapters = Vec::new();
    files(&src, &[".md"], &mut chapters);
    for chapter in chapters {
        let name = chapter.strip_prefix(&src).expect("under src");
        let name = name.to_string_lossy();
        if name != "SUMMARY.md" {
            assert!(
                listed.iter().any(|l| *l == name),
                "{name} is not in SUMMARY.md"
            );
        }
    }
}

#[test]
fn the_readme_stays_short() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; the guide holds the rest"
    );
}

#[test]
fn the_product_points_into_no_journal() {
    let mut sources = Vec::new();
    for dir in [
        "stencil-build",
        "tests",
        "examples",
        "stencil-sys-template",
        "fuzz",
        "scripts",
        "docs",
    ] {
        files(
            &root().join(dir),
            &[".rs", ".toml", ".md", ".sh", ".py", ".h", ".cu"],
            &mut sources,
        );
    }
    for file in ["README.md", "ARCHITECTURE.md", "Cargo.toml", ".ci/run"] {
        sources.push(root().join(file));
    }
    let journal = [
        "benchmarks/experiments",
        "scripts/gpu/experiments",
        "BENCHMARKS.md, 20",
    ];
    let mut pointers = Vec::new();
    for file in &sources {
        // The design notes say where the deleted experiments are kept.
        if file.ends_with("documentation.rs") || file.ends_with("design-notes.md") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            let session = line
                .split("session ")
                .skip(1)
                .any(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
            if session || journal.iter().any(|j| line.contains(j)) {
                pointers.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        pointers.is_empty(),
        "pointers into the journal (give the reason instead):\n{}",
        pointers.join("\n")
    );
}
