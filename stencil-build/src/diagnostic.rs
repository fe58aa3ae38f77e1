//! Located build errors: `path:line:col`, the offending source line, what is
//! wrong and what to write instead.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// One problem found in a spec, pointing at the bytes that caused it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The spec file.
    pub path: PathBuf,
    /// 1-based line of the offending text.
    pub line: usize,
    /// 1-based column (in characters) of the offending text.
    pub column: usize,
    /// The whole source line, for display.
    pub source_line: String,
    /// Width in characters of the underlined text (at least 1).
    pub width: usize,
    /// What is wrong.
    pub message: String,
    /// What to write instead, when there is something to suggest.
    pub hint: Option<String>,
}

impl Diagnostic {
    /// Locates `span` (byte offsets into `source`) in the file `path`.
    pub fn new(path: &Path, source: &str, span: Range<usize>, message: impl Into<String>) -> Self {
        let start = floor_char_boundary(source, span.start.min(source.len()));
        let end = floor_char_boundary(source, span.end.clamp(start, source.len()));
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..]
            .find('\n')
            .map_or(source.len(), |i| start + i);
        let source_line = source[line_start..line_end]
            .trim_end_matches('\r')
            .to_string();
        let column = source[line_start..start].chars().count() + 1;
        let width = source[start..end.min(line_end)].chars().count().max(1);
        Diagnostic {
            path: path.to_path_buf(),
            line: source[..start].matches('\n').count() + 1,
            column,
            source_line,
            width,
            message: message.into(),
            hint: None,
        }
    }

    /// Adds what to write instead.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gutter = " ".repeat(self.line.to_string().len());
        writeln!(f, "error: {}", self.message)?;
        writeln!(
            f,
            "{gutter}--> {}:{}:{}",
            self.path.display(),
            self.line,
            self.column
        )?;
        writeln!(f, "{gutter} |")?;
        writeln!(f, "{} | {}", self.line, self.source_line)?;
        let pad: String = self
            .source_line
            .chars()
            .take(self.column - 1)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        write!(f, "{gutter} | {pad}{}", "^".repeat(self.width))?;
        if let Some(hint) = &self.hint {
            write!(f, "\n{gutter} = help: {hint}")?;
        }
        Ok(())
    }
}

/// Suggests the known name closest to `name`, if one is close enough to be a typo.
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|k| (edit_distance(name, k), k))
        .filter(|&(d, k)| d <= 2.max(k.len() / 3) && d < k.len().max(name.len()))
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (prev + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_line_and_column() {
        let src = "a = 1\nexpr = \"u[0] + v\"\n";
        let at = src.find('v').unwrap();
        let d = Diagnostic::new(Path::new("x.toml"), src, at..at + 1, "unknown name `v`");
        assert_eq!((d.line, d.column, d.width), (2, 16, 1));
        let text = d.with_hint("write `u`").to_string();
        assert!(text.contains("--> x.toml:2:16"), "{text}");
        assert!(text.contains("2 | expr = \"u[0] + v\""), "{text}");
        assert!(
            text.contains("  |                ^\n  = help: write `u`"),
            "{text}"
        );
    }

    #[test]
    fn suggests_typos_only() {
        assert_eq!(closest("kapa", ["u", "kappa"]), Some("kappa"));
        assert_eq!(closest("zzz", ["u", "kappa"]), None);
    }
}
