//! Launches captured once and replayed: a session captures runs of its
//! launches on a [`Stream`] of its own, instantiates them as a [`Graph`]
//! and replays that on the legacy stream, which saves most of each launch's
//! cost where steps are short.

use std::marker::PhantomData;
use std::os::raw::c_void;

use super::{Runtime, check};
use crate::StencilError;

/// A stream of a session's own, on which its launches are captured, never run.
pub struct Stream<R: Runtime> {
    ptr: *mut c_void,
    runtime: PhantomData<R>,
}

// SAFETY: the stream has one owner; stream handles are valid in every host
// thread of the process, and a capture begun on one (thread-local mode) is
// ended within the same call, on the same thread.
unsafe impl<R: Runtime> Send for Stream<R> {}

impl<R: Runtime> Stream<R> {
    /// A new non-blocking stream; `stencil` names the caller in errors.
    pub fn new(stencil: &'static str) -> Result<Self, StencilError> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one handle; nothing is destroyed unless it was created.
        let code = unsafe { (R::CALLS.stream_create)(&mut ptr) };
        check::<R>(stencil, "stream_create", code)?;
        Ok(Stream {
            ptr,
            runtime: PhantomData,
        })
    }

    /// The handle, for a launch's stream argument.
    pub fn ptr(&self) -> *mut c_void {
        self.ptr
    }
}

impl<R: Runtime> Drop for Stream<R> {
    fn drop(&mut self) {
        // SAFETY: created by the runtime, destroyed once; no capture is left open on it.
        unsafe { (R::CALLS.stream_destroy)(self.ptr) };
    }
}

/// Launches captured on a [`Stream`], not instantiated.
pub struct Captured<R: Runtime> {
    graph: *mut c_void,
    runtime: PhantomData<R>,
}

impl<R: Runtime> Captured<R> {
    /// Captures what `record` launches on `stream` (it must launch there and
    /// nowhere else). `None` where the runtime refused the capture,
    /// something invalidated it (another thread's device synchronization) or
    /// `record` failed: then nothing ran, and the caller launches the steps
    /// itself.
    pub fn record(
        stream: &Stream<R>,
        record: &mut dyn FnMut() -> Result<(), StencilError>,
    ) -> Option<Self> {
        // SAFETY: the stream is alive and captures nothing yet.
        let begun = unsafe { (R::CALLS.begin_capture)(stream.ptr) };
        if begun != 0 {
            return None;
        }
        let recorded = record();
        let mut graph: *mut c_void = std::ptr::null_mut();
        // SAFETY: ends the capture begun above (also after a failed launch), writes one handle.
        let ended = unsafe { (R::CALLS.end_capture)(stream.ptr, &mut graph) };
        if ended != 0 || graph.is_null() {
            return None;
        }
        let captured = Captured {
            graph,
            runtime: PhantomData,
        };
        recorded.is_ok().then_some(captured)
    }
}

impl<R: Runtime> Drop for Captured<R> {
    fn drop(&mut self) {
        // SAFETY: captured by the runtime, destroyed once; an executable graph
        // made from it does not need it.
        unsafe { (R::CALLS.graph_destroy)(self.graph) };
    }
}

/// Captured launches, instantiated, replayed on the legacy stream.
pub struct Graph<R: Runtime> {
    exec: *mut c_void,
    runtime: PhantomData<R>,
}

// SAFETY: the graph has one owner; executable graph handles are valid in
// every host thread of the process, and its replays go to the legacy stream,
// which every thread shares.
unsafe impl<R: Runtime> Send for Graph<R> {}

impl<R: Runtime> Graph<R> {
    /// `captured` instantiated; `None` where the runtime refused.
    pub fn new(captured: &Captured<R>) -> Option<Self> {
        let mut exec: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one handle from a graph the runtime captured.
        let made = unsafe { (R::CALLS.instantiate)(&mut exec, captured.graph) };
        (made == 0 && !exec.is_null()).then_some(Graph {
            exec,
            runtime: PhantomData,
        })
    }

    /// Takes `captured`'s launches in place, where they are this graph's with
    /// other arguments (no instantiation, and replays already queued run what
    /// they had). `false` where the runtime refused (other kernels or
    /// grids): then the graph must not be replayed again.
    pub fn update(&mut self, captured: &Captured<R>) -> bool {
        // SAFETY: an instantiated graph and a captured one, both alive.
        let updated = unsafe { (R::CALLS.exec_update)(self.exec, captured.graph) };
        updated == 0
    }

    /// Queues the captured launches on the legacy stream, after what is queued there.
    pub fn replay(&self, stencil: &'static str) -> Result<(), StencilError> {
        // SAFETY: an instantiated graph of a session's launches, whose buffers it owns.
        let code = unsafe { (R::CALLS.replay)(self.exec) };
        check::<R>(stencil, "graph launch", code)
    }
}

impl<R: Runtime> Drop for Graph<R> {
    fn drop(&mut self) {
        // SAFETY: instantiated by the runtime, destroyed once, after its
        // replays ran. A failure here (a device already in error) cannot be
        // reported from `drop`.
        unsafe {
            (R::CALLS.synchronize)();
            (R::CALLS.exec_destroy)(self.exec);
        }
    }
}
