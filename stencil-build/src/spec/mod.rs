//! The `*.stencil.toml` format: serde structures mirroring the file, with the
//! byte span of every value kept for error messages.
//!
//! Everything here is syntax. Names are resolved, expressions parsed and
//! checked when the spec is lowered to the IR ([`crate::ir`]).

pub mod expr;

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use toml::Spanned;

use crate::diagnostic::Diagnostic;

/// A whole spec file, as written.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// `[stencil]`: name, dtype, axes, doc.
    pub stencil: Spanned<StencilSection>,
    /// `[fields]`: the grids, in declaration order.
    #[serde(default)]
    pub fields: Named<FieldDecl>,
    /// `[params]`: runtime scalars and their types.
    #[serde(default)]
    pub params: Named<String>,
    /// `[constants]`: compile-time scalars and tables.
    #[serde(default)]
    pub constants: Named<toml::Value>,
    /// `[regions]`: named boxes of cells (`{ z = [0, 16] }`, bounds from
    /// the high edge as `"n-16"`) and the grid outside one (`{ outside =
    /// "<region>" }`).
    #[serde(default)]
    pub regions: Named<toml::Value>,
    /// `[[update]]`: the statements run each step, in order.
    #[serde(default)]
    pub update: Vec<Spanned<Update>>,
    /// `[boundary]`: `kind` (every side not named), and per axis name the
    /// kind of both sides or `[low, high]`; a kind is `"fixed"`,
    /// `"periodic"`, `"reflect"` or `{ value = "<param>" }`.
    pub boundary: Option<Spanned<Named<toml::Value>>>,
    /// `[tiling.<backend>]`.
    #[serde(default)]
    pub tiling: TilingSection,
}

/// `[stencil]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StencilSection {
    /// Rust module name; defaults to the file stem.
    pub name: Option<Spanned<String>>,
    /// `"f32"` or `"f64"`, or a list of them: one stencil per precision.
    pub dtype: Spanned<toml::Value>,
    /// Axis names, slowest to fastest.
    pub axes: Spanned<Vec<Spanned<String>>>,
    /// Documentation copied onto the generated module.
    pub doc: Option<String>,
}

/// One entry of `[fields]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldDecl {
    /// `state`, `input` or `temp`.
    pub role: Spanned<String>,
    /// Time levels kept for a state field: 1 (default) or 2 (enables `f.prev[..]`).
    pub levels: Option<Spanned<i64>>,
    /// Documentation for the generated argument.
    pub doc: Option<String>,
}

/// One `[[update]]` statement.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Update {
    /// The field written.
    pub target: Spanned<String>,
    /// The expression computed at every cell.
    pub expr: Spanned<String>,
    /// The region of `[regions]` it applies to; all of its field's cells
    /// where absent.
    pub region: Option<Spanned<String>>,
}

/// `[tiling]`: one optional table per backend.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TilingSection {
    /// `[tiling.openmp]`.
    pub openmp: Option<Spanned<OpenmpTilingSection>>,
    /// `[tiling.cuda]`.
    pub cuda: Option<Spanned<GpuTilingSection>>,
    /// `[tiling.hip]`.
    pub hip: Option<Spanned<GpuTilingSection>>,
}

/// `[tiling.openmp]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenmpTilingSection {
    /// Cache-block extent per axis, in axis order.
    pub block: Option<Spanned<Vec<Spanned<i64>>>>,
    /// Most steps fused in one sweep (1: single steps).
    pub time_block: Option<Spanned<i64>>,
}

/// `[tiling.cuda]` and `[tiling.hip]`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuTilingSection {
    /// `auto`, `naive`, `tiled`, `stream`, `tensor`, `temporal` or `persistent`.
    pub strategy: Option<Spanned<String>>,
    /// Threads per block along each axis, in axis order.
    pub block: Option<Spanned<Vec<Spanned<i64>>>>,
    /// Time steps fused per kernel (temporal strategies).
    pub time_block: Option<Spanned<i64>>,
    /// Cells per thread along the streamed axis.
    pub coarsen: Option<Spanned<i64>>,
    /// Cells of the slowest axis each block marches through (`stream`).
    pub chunk: Option<Spanned<i64>>,
    /// Cells of the contiguous axis per thread, as one vector (`stream`).
    pub vector: Option<Spanned<i64>>,
    /// Blocks per multiprocessor a `persistent` launch keeps resident, at most.
    pub occupancy: Option<Spanned<i64>>,
}

/// A TOML table read as `(key, value)` pairs in document order, keys and
/// values spanned.
#[derive(Debug)]
pub struct Named<T>(pub Vec<(Spanned<String>, Spanned<T>)>);

impl<T> Default for Named<T> {
    fn default() -> Self {
        Named(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Named<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Entries<T> {
            type Value = Named<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Named<T>, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Named(entries))
            }
        }
        deserializer.deserialize_map(Entries(PhantomData))
    }
}

/// A spec file's text, for turning spans into [`Diagnostic`]s.
#[derive(Clone, Debug)]
pub struct Source {
    /// The file, as given to the build (relative paths stay relative).
    pub path: PathBuf,
    /// Its contents.
    pub text: String,
}

impl Source {
    /// A diagnostic pointing at `span` in this file.
    pub fn error(&self, span: Range<usize>, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(&self.path, &self.text, span, message)
    }

    /// Maps a span inside the string value spanned by `value` (quotes
    /// included) to a span of the file: exact through escapes, line-ending
    /// backslashes and the newline that may open a multi-line string; the
    /// whole value where the text does not decode to the value.
    pub fn inner_span(&self, value: &Spanned<String>, inner: Range<usize>) -> Range<usize> {
        let outer = value.span();
        let raw = &self.text[outer.clone()];
        let quote = ["\"\"\"", "'''", "\"", "'"]
            .into_iter()
            .find(|q| raw.starts_with(q));
        let Some(quote) = quote else { return outer };
        let body = &raw[quote.len()..raw.len().saturating_sub(quote.len())];
        let multi_line = quote.len() == 3;
        let body_at = quote.len() + leading_newline(body, multi_line);
        let body = &raw[body_at..raw.len() - quote.len()];
        let Some(map) = decoded_offsets(body, quote.starts_with('"'), multi_line) else {
            return outer;
        };
        if map.len() != value.get_ref().len() + 1 {
            return outer;
        }
        let at = |i: usize| outer.start + body_at + map[i.min(map.len() - 1)];
        at(inner.start)..at(inner.end)
    }
}

/// The bytes of a newline that opens the body of a multi-line string (TOML
/// leaves it out of the value).
fn leading_newline(body: &str, multi_line: bool) -> usize {
    match () {
        _ if !multi_line => 0,
        _ if body.starts_with("\r\n") => 2,
        _ if body.starts_with('\n') => 1,
        _ => 0,
    }
}

/// For each byte of the value that the string body `body` decodes to (and
/// one past its end), the offset in `body` it comes from; `None` where an
/// escape is not TOML's. Literal strings (`basic` false) decode to
/// themselves.
fn decoded_offsets(body: &str, basic: bool, multi_line: bool) -> Option<Vec<usize>> {
    let bytes = body.as_bytes();
    let mut map = Vec::with_capacity(body.len() + 1);
    let mut i = 0;
    while i < bytes.len() {
        if !basic || bytes[i] != b'\\' {
            map.push(i);
            i += 1;
            continue;
        }
        let escape = *bytes.get(i + 1)?;
        let (decoded_len, raw_len) = match escape {
            b'b' | b't' | b'n' | b'f' | b'r' | b'"' | b'\\' | b'e' => (1, 2),
            b'u' | b'U' => {
                let digits = if escape == b'u' { 4 } else { 8 };
                let hex = body.get(i + 2..i + 2 + digits)?;
                let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                (c.len_utf8(), 2 + digits)
            }
            b' ' | b'\t' | b'\r' | b'\n' if multi_line => {
                // A line-ending backslash: it and the whitespace after it are left out.
                let rest = &body[i + 1..];
                (0, 1 + rest.len() - rest.trim_start().len())
            }
            _ => return None,
        };
        map.extend(std::iter::repeat_n(i, decoded_len));
        i += raw_len;
    }
    map.push(bytes.len());
    Some(map)
}

/// Reads and parses the spec file `path`, naming it `shown` in messages;
/// TOML syntax errors, unknown keys and wrongly typed values come back located.
pub fn load(path: &Path, shown: &Path) -> Result<(Spec, Source), Diagnostic> {
    let source = read_source(path, shown, "spec")?;
    let spec = parse(&source)?;
    Ok((spec, source))
}

/// Reads the file `path` (a `what`: a spec, a tuning file), naming it
/// `shown` in messages; a file that cannot be read is an error at its start.
pub fn read_source(path: &Path, shown: &Path, what: &str) -> Result<Source, Diagnostic> {
    let text = read(path).map_err(|e| Diagnostic {
        path: shown.to_path_buf(),
        line: 1,
        column: 1,
        source_line: String::new(),
        width: 1,
        message: format!("cannot read the {what}: {e}"),
        hint: None,
    })?;
    Ok(Source {
        path: shown.to_path_buf(),
        text,
    })
}

/// The most bytes a spec file may hold: far more than any stencil needs, and
/// a bound on what a build reads from a path that is not what it seems.
pub const MAX_SPEC_BYTES: u64 = 1 << 20;

/// The text of the spec (or tuning) file `path`: a regular file (after links) of at most
/// [`MAX_SPEC_BYTES`], in UTF-8. A FIFO or a device is refused before it is
/// opened, so that a build never waits on one.
fn read(path: &Path) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read};
    if !std::fs::metadata(path)?.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_SPEC_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_SPEC_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("larger than {MAX_SPEC_BYTES} bytes"),
        ));
    }
    Ok(text)
}

/// Parses spec text (already read) from `source`.
pub fn parse(source: &Source) -> Result<Spec, Diagnostic> {
    parse_as(source, toml_hint)
}

/// Parses the TOML text of `source` as a `T`: syntax errors, unknown keys
/// and wrongly typed values come back located, with `hint`'s advice for
/// the message where it has some.
pub fn parse_as<T: serde::de::DeserializeOwned>(
    source: &Source,
    hint: fn(&str) -> Option<String>,
) -> Result<T, Diagnostic> {
    toml::from_str(&source.text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let message = e.message().trim().to_string();
        let hint = hint(&message);
        let d = source.error(span, message);
        match hint {
            Some(h) => d.with_hint(h),
            None => d,
        }
    })
}

/// What to write instead, for the TOML-level errors users hit most.
fn toml_hint(message: &str) -> Option<String> {
    if message.contains("unknown field") {
        Some("remove the key or fix its spelling; the expected keys are listed above".into())
    } else if message.contains("missing field `stencil`") {
        Some("start the file with a [stencil] table: name, dtype, axes".into())
    } else if message.contains("missing field `dtype`") {
        Some("add `dtype = \"f64\"` (or \"f32\") to [stencil]".into())
    } else if message.contains("missing field `axes`") {
        Some("add `axes = [\"y\", \"x\"]` to [stencil], slowest axis first".into())
    } else if message.contains("string values must be quoted") {
        Some(
            "quote it: a dtype as `\"f64\"`, an expression of numbers in [constants] as `\"4/3\"`"
                .into(),
        )
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> Source {
        Source {
            path: "t.stencil.toml".into(),
            text: text.into(),
        }
    }

    #[test]
    fn keeps_declaration_order() {
        let s = source(
            "[stencil]\ndtype = \"f64\"\naxes = [\"x\"]\n[fields]\nz = { role = \"state\" }\na = { role = \"input\" }\n",
        );
        let spec = parse(&s).unwrap();
        let names: Vec<_> = spec
            .fields
            .0
            .iter()
            .map(|(k, _)| k.get_ref().as_str())
            .collect();
        assert_eq!(names, ["z", "a"]);
    }

    #[test]
    fn maps_spans_inside_strings() {
        let s = source("expr = \"u[1] + v\"\nraw = '''w'''\nesc = \"a\\tb\"\n");
        #[derive(serde::Deserialize)]
        struct T {
            expr: Spanned<String>,
            raw: Spanned<String>,
            esc: Spanned<String>,
        }
        let t: T = toml::from_str(&s.text).unwrap();
        let v = s.inner_span(&t.expr, 7..8);
        assert_eq!(&s.text[v], "v");
        let w = s.inner_span(&t.raw, 0..1);
        assert_eq!(&s.text[w], "w");
        // Exact through escapes: `\t` is one byte of the value, two of the file.
        let spans = [0..1, 1..2, 2..3].map(|r| &s.text[s.inner_span(&t.esc, r)]);
        assert_eq!(spans, ["a", "\\t", "b"]);
    }
}
