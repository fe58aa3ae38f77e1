//! Kernel generators, one module per backend.

pub mod openmp;

/// An indenting writer for generated C-family source.
#[derive(Default)]
pub struct CWriter {
    out: String,
    level: usize,
}

impl CWriter {
    /// Writes one line at the current indentation.
    pub fn line(&mut self, text: &str) {
        for _ in 0..self.level {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Writes `#pragma text` at the current indentation.
    pub fn pragma(&mut self, text: &str) {
        self.line(&format!("#pragma {text}"));
    }

    /// Writes an empty line.
    pub fn blank(&mut self) {
        self.out.push('\n');
    }

    /// Indents the following lines one level more.
    pub fn indent(&mut self) {
        self.level += 1;
    }

    /// Indents the following lines one level less.
    pub fn dedent(&mut self) {
        self.dedent_by(1);
    }

    /// Indents the following lines `n` levels less.
    pub fn dedent_by(&mut self, n: usize) {
        self.level = self.level.saturating_sub(n);
    }

    /// The text written.
    pub fn finish(self) -> String {
        self.out
    }
}
