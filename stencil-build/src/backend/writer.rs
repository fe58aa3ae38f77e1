//! The writer that generated C, CUDA and HIP text goes through: it is a
//! [`fmt::Write`], so text is written with `write!` and `writeln!`, and it
//! indents every line by the scopes open around it ([`Writer::block`]), so
//! no literal carries its own indentation.

use std::fmt::{self, Write as _};

/// Text of a C-family source, indented four spaces per open scope.
pub struct Writer {
    out: String,
    level: usize,
    /// Whether the next text written starts a line.
    line_start: bool,
}

impl Default for Writer {
    fn default() -> Self {
        Writer {
            out: String::new(),
            level: 0,
            line_start: true,
        }
    }
}

impl Writer {
    /// The text `write` writes into a new writer.
    pub fn text(write: impl FnOnce(&mut Self) -> fmt::Result) -> String {
        let mut w = Writer::default();
        // Only a `Display` that fails can fail a write to a `String`, and
        // the generators write none.
        write(&mut w).expect("generated text is written to a String");
        w.finish()
    }

    /// Writes `head {`, then what `body` writes one level deeper, then `}`.
    pub fn block(
        &mut self,
        head: impl fmt::Display,
        body: impl FnOnce(&mut Self) -> fmt::Result,
    ) -> fmt::Result {
        self.enclosed(head, body, "}")
    }

    /// Writes `head {`, what `body` writes one level deeper, and `};`: a C
    /// `struct` or an initializer.
    pub fn declaration(
        &mut self,
        head: impl fmt::Display,
        body: impl FnOnce(&mut Self) -> fmt::Result,
    ) -> fmt::Result {
        self.enclosed(head, body, "};")
    }

    /// Writes `head {`, what `body` writes one level deeper, and `close`.
    fn enclosed(
        &mut self,
        head: impl fmt::Display,
        body: impl FnOnce(&mut Self) -> fmt::Result,
        close: &str,
    ) -> fmt::Result {
        writeln!(self, "{head} {{")?;
        self.scope(body)?;
        writeln!(self, "{close}")
    }

    /// Writes a definition: `head` on a line of its own, then what `body`
    /// writes between braces on lines of their own, one level deeper.
    pub fn definition(
        &mut self,
        head: impl fmt::Display,
        body: impl FnOnce(&mut Self) -> fmt::Result,
    ) -> fmt::Result {
        writeln!(self, "{head}")?;
        self.braces(body)
    }

    /// Writes what `body` writes between braces on lines of their own, one
    /// level deeper.
    pub fn braces(&mut self, body: impl FnOnce(&mut Self) -> fmt::Result) -> fmt::Result {
        writeln!(self, "{{")?;
        self.scope(body)?;
        writeln!(self, "}}")
    }

    /// Writes `head`, an `if` or a loop without braces, and one level
    /// deeper the one line it governs.
    pub fn guarded(&mut self, head: impl fmt::Display, line: impl fmt::Display) -> fmt::Result {
        writeln!(self, "{head}")?;
        self.scope(|w| writeln!(w, "{line}"))
    }

    /// Writes `head {`, what `then` writes, `} else {`, what `otherwise`
    /// writes, and `}`, each branch one level deeper.
    pub fn if_else(
        &mut self,
        head: impl fmt::Display,
        then: impl FnOnce(&mut Self) -> fmt::Result,
        otherwise: impl FnOnce(&mut Self) -> fmt::Result,
    ) -> fmt::Result {
        writeln!(self, "{head} {{")?;
        self.scope(then)?;
        writeln!(self, "}} else {{")?;
        self.scope(otherwise)?;
        writeln!(self, "}}")
    }

    /// Writes a nest of loops without braces of their own, `heads` from the
    /// outermost in, each one level deeper, then what `body` writes between
    /// braces at the innermost loop's level.
    pub fn nest(
        &mut self,
        heads: &[String],
        body: impl FnOnce(&mut Self) -> fmt::Result,
    ) -> fmt::Result {
        let depth = heads.len().saturating_sub(1);
        for (k, head) in heads.iter().enumerate() {
            self.level += usize::from(k > 0);
            writeln!(self, "{head}")?;
        }
        self.braces(body)?;
        self.level -= depth;
        Ok(())
    }

    /// Writes what `body` writes one level deeper.
    pub fn scope(&mut self, body: impl FnOnce(&mut Self) -> fmt::Result) -> fmt::Result {
        self.level += 1;
        body(self)?;
        self.level -= 1;
        Ok(())
    }

    /// Writes `#pragma text` at the current indentation.
    pub fn pragma(&mut self, text: &str) -> fmt::Result {
        writeln!(self, "#pragma {text}")
    }

    /// Writes the preprocessor line `text` (`#if ...`) at the start of its
    /// line, whatever the scopes open around it.
    pub fn directive(&mut self, text: &str) -> fmt::Result {
        let level = std::mem::take(&mut self.level);
        writeln!(self, "{text}")?;
        self.level = level;
        Ok(())
    }

    /// Writes `text`, lines another writer finished, as it is.
    pub fn append(&mut self, text: &str) {
        self.out.push_str(text);
        self.line_start = text.is_empty() || text.ends_with('\n');
    }

    /// The text written.
    pub fn finish(self) -> String {
        self.out
    }
}

impl fmt::Write for Writer {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        for piece in text.split_inclusive('\n') {
            if self.line_start && piece != "\n" {
                for _ in 0..self.level {
                    self.out.push_str("    ");
                }
            }
            self.out.push_str(piece);
            self.line_start = piece.ends_with('\n');
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::Writer;

    #[test]
    fn blocks_indent_what_they_hold_and_blank_lines_stay_empty() {
        let mut w = Writer::default();
        w.block("for (;;)", |w| {
            writeln!(w, "a = {};", 1)?;
            writeln!(w)?;
            w.block("if (a)", |w| write!(w, "b;\nc;\n"))
        })
        .unwrap();
        w.pragma("unroll").unwrap();
        w.definition("int f(void)", |w| writeln!(w, "return 0;"))
            .unwrap();
        assert_eq!(
            w.finish(),
            "for (;;) {\n    a = 1;\n\n    if (a) {\n        b;\n        c;\n    }\n}\n#pragma unroll\nint f(void)\n{\n    return 0;\n}\n"
        );
    }
}
