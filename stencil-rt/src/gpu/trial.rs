//! [`Trial`]: a session's measurement of fused launches against single
//! steps, run in parts within its `step` calls.

use std::time::{Duration, Instant};

use super::Measurement;
use crate::StencilError;

/// A session's measurement of fused launches against single steps, in
/// parts, each run within one `step` call that has the steps for it: a
/// fused launch and a single step (the first launches of a kernel load it),
/// then cycles of four timed parts, `span` fused steps, `span` single steps,
/// `span` single steps and `span` fused steps, each timed from an idle
/// device to an idle device (in that order, so that a clock still rising
/// favours neither). Each way's time is its fastest part's (a part that
/// waited on the host or ran at a lower clock is slower, never faster). Once
/// the timed parts have taken [`Trial::SPENT`] in all, the trial ends after
/// [`Trial::CYCLES`] cycles, or after [`Trial::CLEAR_CYCLES`] where one way
/// took under half the other's time (where parts take that long, each part
/// of the slower way costs much); parts that never add up to it end after
/// [`Trial::MOST_CYCLES`]. Where the session replays graphs of launches and
/// the first cycle's single steps took under [`Trial::QUICK`] each (steps
/// whose launch is much of their time, which graphs save), the cycles start
/// again with parts of a whole graph of each way's launches.
#[derive(Clone, Copy, Debug)]
pub struct Trial {
    part: u32,
    /// Parts are `span` steps times this: 1, or the launches of a graph.
    scale: u64,
    fused: Duration,
    single: Duration,
    spent: Duration,
}

impl Default for Trial {
    fn default() -> Self {
        Trial {
            part: 0,
            scale: 1,
            fused: Duration::MAX,
            single: Duration::MAX,
            spent: Duration::ZERO,
        }
    }
}

impl Trial {
    /// The fewest cycles of timed parts.
    pub const CYCLES: u32 = 4;
    /// The fewest cycles where one way takes under half the other's time.
    pub const CLEAR_CYCLES: u32 = 1;
    /// The time the timed parts take in all before the trial may end.
    pub const SPENT: Duration = Duration::from_millis(1);
    /// The most cycles of timed parts, however long they took.
    pub const MOST_CYCLES: u32 = 16;
    /// A single step under which parts are timed as whole graphs.
    pub const QUICK: Duration = Duration::from_micros(20);

    /// The steps the next part runs: the caller runs it in a call with that many left.
    pub fn steps(&self, span: u64) -> u64 {
        match self.part {
            0 => span,
            1 => 1,
            _ => span * self.scale,
        }
    }

    /// Runs the next part: `run(steps, each)` runs `steps` steps in launches
    /// of `each` (fused where `each > 1`), replaying runs of `graph` launches
    /// as graphs where `graph > 1`; `wait` waits for the device. Returns the
    /// steps run and, after the last part, what the trial timed (whose
    /// `faster` is the way to keep).
    pub fn next(
        &mut self,
        span: u64,
        graph: u64,
        run: &mut dyn FnMut(u64, u64) -> Result<(), StencilError>,
        wait: &dyn Fn() -> Result<(), StencilError>,
    ) -> Result<(u64, Option<Measurement>), StencilError> {
        let steps = span * self.scale;
        let ran = match self.part {
            0 => {
                run(span, span)?;
                span
            }
            1 => {
                run(1, 1)?;
                1
            }
            p => {
                let fused = matches!((p - 2) % 4, 0 | 3);
                wait()?;
                let start = Instant::now();
                run(steps, if fused { span } else { 1 })?;
                wait()?;
                let took = start.elapsed();
                let best = if fused {
                    &mut self.fused
                } else {
                    &mut self.single
                };
                *best = (*best).min(took);
                self.spent += took;
                steps
            }
        };
        self.part += 1;
        Ok((ran, self.finished(span, graph)))
    }

    /// After a part: what the trial timed where it is over (and the trial
    /// back to its start), else `None`, the cycles starting again with whole
    /// graphs where single steps were quick.
    fn finished(&mut self, span: u64, graph: u64) -> Option<Measurement> {
        // Timed parts run, and whole cycles of them.
        let timed_parts = self.part.saturating_sub(2);
        let quick = self.single < Self::QUICK.saturating_mul(span as u32);
        if timed_parts == 4 && self.scale == 1 && graph > 1 && quick {
            *self = Trial {
                part: 2,
                scale: graph,
                ..Trial::default()
            };
            return None;
        }
        let cycles = timed_parts / 4;
        let clear = self.fused.min(self.single).saturating_mul(2) < self.fused.max(self.single);
        let enough = if self.spent >= Self::SPENT {
            cycles >= Self::CYCLES || clear && cycles >= Self::CLEAR_CYCLES
        } else {
            cycles >= Self::MOST_CYCLES
        };
        if cycles * 4 != timed_parts || !enough {
            return None;
        }
        let measured = Measurement {
            steps: span * self.scale,
            fused: self.fused,
            single: self.single,
        };
        *self = Trial::default();
        Some(measured)
    }
}
