//! A progress bar on standard error: what is done of how many.

use std::io::{IsTerminal, Write};
use std::time::Instant;

/// One bar, redrawn in place on a terminal, printed every tenth otherwise.
pub struct Progress {
    what: &'static str,
    total: usize,
    done: usize,
    started: Instant,
    terminal: bool,
}

impl Progress {
    /// A bar of `total` things `what` (`compiled`, `timed`).
    pub fn new(what: &'static str, total: usize) -> Self {
        let p = Progress {
            what,
            total,
            done: 0,
            started: Instant::now(),
            terminal: std::io::stderr().is_terminal(),
        };
        p.draw();
        p
    }

    /// Sets how many are done.
    pub fn set(&mut self, done: usize) {
        let before = self.done;
        self.done = done.min(self.total);
        let tenth = |n: usize| n * 10 / self.total.max(1);
        if self.done != before && (self.terminal || tenth(self.done) != tenth(before)) {
            self.draw();
        }
    }

    /// Prints a line above the bar.
    pub fn note(&self, line: &str) {
        if self.terminal {
            eprint!("\r\x1b[K");
        }
        eprintln!("{line}");
        self.draw();
    }

    /// Ends the bar with a newline.
    pub fn finish(&mut self) {
        self.done = self.total;
        self.draw();
        if self.terminal {
            eprintln!();
        }
    }

    fn draw(&self) {
        let width = 30;
        let filled = self.done * width / self.total.max(1);
        let bar = format!(
            "[{}{}] {}/{} {} ({:.0} s)",
            "#".repeat(filled),
            " ".repeat(width - filled),
            self.done,
            self.total,
            self.what,
            self.started.elapsed().as_secs_f64()
        );
        if self.terminal {
            eprint!("\r\x1b[K{bar}");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{bar}");
        }
    }
}
