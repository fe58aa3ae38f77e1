//! [`Graphs`]: a session's runs of launches, each captured once as a graph
//! and replayed after, and [`Recorder`], what the session lends a capture.
//!
//! On the H100 a launch took 3.3-4.1 us from the host, so that a 7-point
//! stencil took about 4 us a step up to 80^3 cells; replayed from a graph,
//! 1.5-3.2 us, and 1.1x-1.2x less on 100^3-128^3 (the repository's design
//! notes, `launch-floor`).

use std::os::raw::c_void;

use super::{Captured, Graph, Runtime, Stream};
use crate::StencilError;

/// What a capture needs of a session: the order of its state fields'
/// buffers (a run of launches turns them), and the run's launches.
pub trait Recorder {
    /// Each state field's turn ([`Levels::turn`](super::Levels::turn)).
    fn turns(&self) -> Vec<usize>;
    /// Puts each state field's buffers at `turns`.
    fn set_turns(&mut self, turns: &[usize]);
    /// Launches the run on `stream`, where they are captured, not run (the
    /// session's count of steps run left as it was).
    fn record(&mut self, stream: *mut c_void) -> Result<(), StencilError>;
}

/// A run of launches kept as a graph: the session's key for it and the
/// turns its launches leave.
struct Kept<R: Runtime> {
    key: Vec<u64>,
    after: Vec<usize>,
    graph: Graph<R>,
}

/// A session's graphs: each run of launches (by the session's key: the
/// launches, steps a launch, parameters and order of the buffers) captured
/// once on a stream of the session's own and replayed on the legacy stream
/// from then on.
pub struct Graphs<R: Runtime> {
    stream: Option<Stream<R>>,
    kept: Vec<Kept<R>>,
    on: bool,
    replays: u64,
    captures: u64,
    updates: u64,
    failed: u32,
    seen: Vec<Vec<u64>>,
}

impl<R: Runtime> Default for Graphs<R> {
    fn default() -> Self {
        Graphs {
            stream: None,
            kept: Vec::new(),
            on: true,
            replays: 0,
            captures: 0,
            updates: 0,
            failed: 0,
            seen: Vec::new(),
        }
    }
}

impl<R: Runtime> Graphs<R> {
    /// Graphs kept: one per order of the buffers a field turns through (up
    /// to 4). A call whose launches outside whole graphs turn the buffers by
    /// an odd count leaves them in the other order, so consecutive calls
    /// alternate between two graphs; with one kept, each call captured its
    /// graph again (on the H100 `temporal` j2d5pt f64 on 512^2, whose calls
    /// of 1000 steps end with 23 launches outside graphs, ran 0.90x-0.95x
    /// `naive` in such calls and 1.00x in calls of 10000).
    ///
    /// Past 4, a new capture updates the least recently replayed graph in
    /// place where the runtime allows (the same launches with other
    /// arguments: parameters that change every call), which spares the
    /// instantiation (41-45 us against 15 for 48 launches on the H100;
    /// design notes, `graph-update`) and the wait for the old graph's
    /// replays before it is destroyed.
    pub const KEPT: usize = 4;

    /// Captures in a row that may give no graph before graphs are turned
    /// off. A capture that another thread's device synchronization
    /// invalidated (any thread of the process, on the same device, whatever
    /// the capture mode: design notes, `capture-threads`) gives none once;
    /// the next run of launches captures again. A runtime that refuses every
    /// capture costs this many tries, each of which records its launches
    /// without running them.
    pub const CAPTURE_TRIES: u32 = 3;

    /// Graphs on, none kept yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs the run of launches `key` names as one graph: the one captured
    /// for it, else one captured now from `run` (a `short` run only where
    /// the same run came before since its last capture). `false` where
    /// nothing ran: graphs off, a short run seen for the first time, or a
    /// capture that gave no graph (after [`Graphs::CAPTURE_TRIES`] such in a
    /// row, graphs are off from then on). After a replay, `run`'s buffers
    /// are in the order the launches leave.
    pub fn replay(
        &mut self,
        stencil: &'static str,
        key: &[u64],
        short: bool,
        run: &mut dyn Recorder,
    ) -> Result<bool, StencilError> {
        if !self.on {
            return Ok(false);
        }
        let kept = match self.kept.iter().position(|kept| kept.key == key) {
            Some(at) => self.kept.remove(at),
            None => match self.capture(stencil, key, short, run)? {
                Some(kept) => kept,
                None => return Ok(false),
            },
        };
        kept.graph.replay(stencil)?;
        run.set_turns(&kept.after);
        self.kept.push(kept);
        self.replays += 1;
        Ok(true)
    }

    /// A graph of `run`'s launches for `key`, the session's buffers as
    /// before them; `None` for a short run seen for the first time and where
    /// the capture gave no graph.
    fn capture(
        &mut self,
        stencil: &'static str,
        key: &[u64],
        short: bool,
        run: &mut dyn Recorder,
    ) -> Result<Option<Kept<R>>, StencilError> {
        if short && !self.seen_before(key) {
            return Ok(None);
        }
        let stream = match self.stream.take() {
            Some(stream) => stream,
            None => Stream::new(stencil)?,
        };
        let turns = run.turns();
        let captured = Captured::record(&stream, &mut || run.record(stream.ptr()));
        // What the captured launches leave, then the session as before them.
        let after = run.turns();
        run.set_turns(&turns);
        self.stream = Some(stream);
        let Some(graph) = captured.and_then(|captured| self.graph_of(&captured)) else {
            // Another thread may have invalidated the capture: the next run
            // of launches tries again, up to a limit.
            self.failed += 1;
            if self.failed == Self::CAPTURE_TRIES {
                self.on = false;
                self.kept.clear();
            }
            return Ok(None);
        };
        self.failed = 0;
        self.captures += 1;
        Ok(Some(Kept {
            key: key.to_vec(),
            after,
            graph,
        }))
    }

    /// `captured` as a graph: where as many are kept as may be, the least
    /// recently replayed takes it in place; else, or where the runtime
    /// refuses that, it is instantiated (the old graph dropped after its
    /// replays ran).
    fn graph_of(&mut self, captured: &Captured<R>) -> Option<Graph<R>> {
        if self.kept.len() == Self::KEPT {
            let mut oldest = self.kept.remove(0).graph;
            if oldest.update(captured) {
                self.updates += 1;
                return Some(oldest);
            }
        }
        Graph::new(captured)
    }

    /// Whether the run of `key` came before since it was last captured
    /// (remembering as many such runs as graphs are kept); notes it where
    /// not, and forgets it where so.
    fn seen_before(&mut self, key: &[u64]) -> bool {
        if let Some(at) = self.seen.iter().position(|seen| seen == key) {
            self.seen.remove(at);
            return true;
        }
        if self.seen.len() == Self::KEPT {
            self.seen.remove(0);
        }
        self.seen.push(key.to_vec());
        false
    }

    /// Whether runs are replayed as graphs (on by default; off after
    /// captures in a row gave no graph).
    pub fn on(&self) -> bool {
        self.on
    }

    /// Turns graphs on or off (either way, the kept ones are dropped and the
    /// failed captures forgotten).
    pub fn set_on(&mut self, on: bool) {
        self.on = on;
        self.failed = 0;
        self.kept.clear();
    }

    /// Graphs replayed.
    pub fn replays(&self) -> u64 {
        self.replays
    }

    /// Graphs captured.
    pub fn captures(&self) -> u64 {
        self.captures
    }

    /// Captures that updated a kept graph in place instead of instantiating one.
    pub fn updates(&self) -> u64 {
        self.updates
    }
}
