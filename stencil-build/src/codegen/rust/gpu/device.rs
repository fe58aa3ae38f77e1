//! The module shared by every stencil of a crate for one dialect: runtime
//! calls and their errors, RAII device buffers, streams, captured and
//! replayed graphs, and the time levels of a session's state grids.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::backend::gpu::Dialect;
use crate::codegen::rust::docs;

/// The module shared by every stencil of a crate: runtime calls, device
/// buffers and time levels. Emitted once per dialect.
/// `copy` (device to device) is only emitted when a stencil needs it:
/// `frame_copies`, a two-level field with a fixed boundary.
pub fn runtime_module(prefix: &str, d: &Dialect, frame_copies: bool) -> TokenStream {
    let module = format_ident!("stencil_{}", d.name);
    let f = |name: &str| format_ident!("{prefix}_{}_{name}", d.name);
    let (copy, sync) = (f("copy"), f("synchronize"));
    let graphs = graphs_module(&f, &sync);
    let calls = calls(&f, d.name);
    let (buffer, buffer_drop) = buffer(&f);
    let levels = levels();
    let (copy_extern, copy_impl) = if frame_copies {
        (
            quote! { unsafe extern "C" { fn #copy(dst: *mut c_void, src: *const c_void, bytes: usize) -> c_int; } },
            quote! {
                impl<T: Copy> Buffer<T> {
                    /// Copies another device buffer of the same length into this one.
                    pub fn copy_from(&mut self, stencil: &'static str, src: *const T) -> Result<(), StencilError> {
                        stencil_safety!("`src` is a buffer of the same stencil and shape, so of `len` values.");
                        let code = unsafe { #copy(self.ptr.cast(), src.cast(), self.bytes()) };
                        check(stencil, "copy", code)
                    }

                }
            },
        )
    } else {
        (quote!(), quote!())
    };
    let count_fn = format_ident!("{}_device_count", d.name);
    let count_doc = docs(&format!(
        "The number of {} devices, or the runtime's error (for instance when no driver or device is present).",
        d.title
    ));
    quote! {
        #count_doc
        pub fn #count_fn() -> Result<usize, StencilError> {
            #module::device_count()
        }

        /// Runtime calls, device buffers and time levels of one GPU backend.
        #[doc(hidden)]
        mod #module {
            use super::StencilError;
            use ::std::os::raw::{c_char, c_int, c_void};

            #copy_extern

            #calls

            #buffer

            #copy_impl

            #graphs

            #buffer_drop

            #levels
        }
    }
}

/// The runtime's calls (`f` names them), the check of their status, the
/// device count and the synchronization.
fn calls(f: &dyn Fn(&str) -> Ident, backend: &str) -> TokenStream {
    let (malloc, free, upload, download, zero, sync, count, error) = (
        f("malloc"),
        f("free"),
        f("upload"),
        f("download"),
        f("zero"),
        f("synchronize"),
        f("device_count"),
        f("error_string"),
    );
    quote! {
    unsafe extern "C" {
        fn #malloc(ptr: *mut *mut c_void, bytes: usize) -> c_int;
        fn #free(ptr: *mut c_void) -> c_int;
        fn #upload(dst: *mut c_void, src: *const c_void, bytes: usize) -> c_int;
        fn #download(dst: *mut c_void, src: *const c_void, bytes: usize) -> c_int;
        fn #zero(ptr: *mut c_void, bytes: usize) -> c_int;
        fn #sync() -> c_int;
        fn #count(count: *mut c_int) -> c_int;
        fn #error(code: c_int) -> *const c_char;
    }

    /// `Ok` for status 0, else the runtime's message for `call`.
    pub fn check(stencil: &'static str, call: &'static str, code: c_int) -> Result<(), StencilError> {
        if code == 0 {
            return Ok(());
        }
        stencil_safety!("the runtime returns a static NUL-terminated string for every code.");
        let message = unsafe { ::std::ffi::CStr::from_ptr(#error(code)) }.to_string_lossy().into_owned();
        Err(StencilError::Device { stencil, backend: #backend, call, message })
    }

    pub fn device_count() -> Result<usize, StencilError> {
        let mut n: c_int = 0;
        stencil_safety!("writes one int.");
        let code = unsafe { #count(&mut n) };
        check("", "device_count", code)?;
        Ok(n.max(0) as usize)
    }

    /// Waits for every kernel launched so far; reports their errors.
    pub fn synchronize(stencil: &'static str) -> Result<(), StencilError> {
        stencil_safety!("no arguments.");
        let code = unsafe { #sync() };
        check(stencil, "synchronize", code)
    }
    }
}

/// `Buffer`: `len` values on the device, and its `Drop`.
fn buffer(f: &dyn Fn(&str) -> Ident) -> (TokenStream, TokenStream) {
    let (malloc, free, upload, download, zero) = (
        f("malloc"),
        f("free"),
        f("upload"),
        f("download"),
        f("zero"),
    );
    let buffer = quote! {
    /// `len` values on the device, zeroed, freed on drop.
    pub struct Buffer<T> {
        ptr: *mut T,
        len: usize,
    }

    impl<T: Copy> Buffer<T> {
        pub fn new(stencil: &'static str, len: usize) -> Result<Self, StencilError> {
            let bytes = len.checked_mul(::std::mem::size_of::<T>()).ok_or(StencilError::ShapeOverflow { stencil })?;
            let mut ptr: *mut c_void = ::std::ptr::null_mut();
            stencil_safety!("writes one pointer; nothing is freed unless the allocation succeeded.");
            let code = unsafe { #malloc(&mut ptr, bytes) };
            check(stencil, "malloc", code)?;
            let buffer = Buffer { ptr: ptr.cast(), len };
            stencil_safety!("`ptr` holds `bytes` bytes.");
            let code = unsafe { #zero(ptr, bytes) };
            check(stencil, "memset", code)?;
            Ok(buffer)
        }

        fn bytes(&self) -> usize {
            self.len * ::std::mem::size_of::<T>()
        }

        /// Copies `src` (of exactly `len` values) to the device.
        pub fn upload(&mut self, stencil: &'static str, field: &'static str, src: &[T]) -> Result<(), StencilError> {
            super::stencil_runtime::check_len(stencil, field, self.len, src.len())?;
            stencil_safety!("both sides hold `len` values.");
            let code = unsafe { #upload(self.ptr.cast(), src.as_ptr().cast(), self.bytes()) };
            check(stencil, "upload", code)
        }

        /// Copies the device values to `dst` (of exactly `len` values); waits for the kernels before.
        pub fn download(&self, stencil: &'static str, field: &'static str, dst: &mut [T]) -> Result<(), StencilError> {
            super::stencil_runtime::check_len(stencil, field, self.len, dst.len())?;
            stencil_safety!("both sides hold `len` values.");
            let code = unsafe { #download(dst.as_mut_ptr().cast(), self.ptr.cast(), self.bytes()) };
            check(stencil, "download", code)
        }

        pub fn ptr(&self) -> *mut T {
            self.ptr
        }
    }
    };
    let drop = quote! {
    impl<T> Drop for Buffer<T> {
        fn drop(&mut self) {
            stencil_safety!("`ptr` came from the runtime's malloc and is freed once. A failure here (a device already in error) cannot be reported from `drop`.");
            unsafe { #free(self.ptr.cast()) };
        }
    }
    };
    (buffer, drop)
}

/// `Levels`: the time levels of one state field, rotated each launch.
fn levels() -> TokenStream {
    let turns = turns();
    quote! {
    /// The time levels of one state field on the device, rotated each launch.
    pub struct Levels<T> {
        /// Physical buffers: `[prev,] cur, [next_prev,] next` at turn 0.
        pub bufs: Vec<Buffer<T>>,
        /// Time levels a launch reads (1, or 2 for a leapfrog).
        levels: usize,
        turn: usize,
    }

    impl<T: Copy> Levels<T> {
        /// `levels` time levels, and the buffers a launch writes: `next`, and with
        /// `fused_leapfrog` also `next_prev` (a launch of fused leapfrog steps
        /// writes the last two time levels).
        pub fn new(stencil: &'static str, levels: usize, fused_leapfrog: bool, len: usize) -> Result<Self, StencilError> {
            let count = levels + 1 + usize::from(fused_leapfrog);
            let bufs = (0..count).map(|_| Buffer::new(stencil, len)).collect::<Result<_, _>>()?;
            Ok(Levels { bufs, levels, turn: 0 })
        }

        /// The level `cur` is: 0, or 1 after `prev`.
        pub fn cur_level(&self) -> usize {
            self.levels - 1
        }

        /// The buffer holding `level` (0 = prev, `cur_level()` = cur, len - 1 = next).
        pub fn level(&self, level: usize) -> &Buffer<T> {
            &self.bufs[(level + self.turn) % self.bufs.len()]
        }

        pub fn level_mut(&mut self, level: usize) -> &mut Buffer<T> {
            let n = self.bufs.len();
            &mut self.bufs[(level + self.turn) % n]
        }

        #[allow(dead_code)] // only stencils reading this level use it
        pub fn cur(&self) -> *mut T {
            self.level(self.cur_level()).ptr()
        }

        #[allow(dead_code)] // only fused leapfrog steps write it
        pub fn next_prev(&self) -> *mut T {
            self.level(self.bufs.len() - 2).ptr()
        }

        #[allow(dead_code)] // only stencils reading this level use it
        pub fn next(&self) -> *mut T {
            self.level(self.bufs.len() - 1).ptr()
        }

        #[allow(dead_code)] // only stencils reading this level use it
        pub fn prev(&self) -> *mut T {
            self.level(0).ptr()
        }

        #turns
    }
    }
}

/// The methods of `Levels` that turn its buffers.
fn turns() -> TokenStream {
    quote! {
    /// Which buffer holds each level: the turn, modulo the buffers.
    pub fn turn(&self) -> usize {
        self.turn % self.bufs.len()
    }

    /// Puts the buffers in the order of `turn` (a value of [`Levels::turn`]).
    pub fn set_turn(&mut self, turn: usize) {
        self.turn = turn;
    }

    /// Back to turn 0, where the buffers are in order `[prev,] cur, next`.
    pub fn reset(&mut self) {
        self.turn = 0;
    }

    /// Back to turn 0, with `src` in every buffer but `prev`: the frame
    /// a launch does not write.
    pub fn upload_from(&mut self, stencil: &'static str, field: &'static str, src: &[T]) -> Result<(), StencilError> {
        self.reset();
        for level in self.cur_level()..self.bufs.len() {
            self.level_mut(level).upload(stencil, field, src)?;
        }
        Ok(())
    }

    /// After a launch: what it wrote (the buffers past those it read) is read next.
    pub fn advance(&mut self) {
        self.turn += self.bufs.len() - self.levels;
    }

    /// After a launch of one step of fused leapfrog steps, which wrote only
    /// `next_prev`'s buffer: `cur` becomes `prev` and that buffer `cur`.
    #[allow(dead_code)] // only fused leapfrog steps use it
    pub fn advance_one(&mut self) {
        self.turn += 1;
    }
    }
}

/// The dev module's streams and graphs: a session captures its launches on a
/// stream of its own and replays them as one graph on the legacy stream
/// (`f` names a runtime call of `runtime_source`).
fn graphs_module(f: &dyn Fn(&str) -> Ident, sync: &Ident) -> TokenStream {
    let (stream_create, stream_destroy, begin, end) = (
        f("stream_create"),
        f("stream_destroy"),
        f("begin_capture"),
        f("end_capture"),
    );
    let (instantiate, graph_destroy, replay, exec_destroy, exec_update) = (
        f("instantiate"),
        f("graph_destroy"),
        f("replay"),
        f("exec_destroy"),
        f("exec_update"),
    );
    let graph = graph(f, sync);
    quote! {
        unsafe extern "C" {
            fn #stream_create(stream: *mut *mut c_void) -> c_int;
            fn #stream_destroy(stream: *mut c_void) -> c_int;
            fn #begin(stream: *mut c_void) -> c_int;
            fn #end(stream: *mut c_void, graph: *mut *mut c_void) -> c_int;
            fn #instantiate(exec: *mut *mut c_void, graph: *mut c_void) -> c_int;
            fn #graph_destroy(graph: *mut c_void) -> c_int;
            fn #replay(exec: *mut c_void) -> c_int;
            fn #exec_destroy(exec: *mut c_void) -> c_int;
            fn #exec_update(exec: *mut c_void, graph: *mut c_void) -> c_int;
        }

        /// A stream of a session's own, on which its launches are captured, never run.
        pub struct Stream {
            ptr: *mut c_void,
        }

        impl Stream {
            pub fn new(stencil: &'static str) -> Result<Self, StencilError> {
                let mut ptr: *mut c_void = ::std::ptr::null_mut();
                stencil_safety!("writes one handle; nothing is destroyed unless it was created.");
                let code = unsafe { #stream_create(&mut ptr) };
                check(stencil, "stream_create", code)?;
                Ok(Stream { ptr })
            }

            pub fn ptr(&self) -> *mut c_void {
                self.ptr
            }
        }

        impl Drop for Stream {
            fn drop(&mut self) {
                stencil_safety!("created by the runtime, destroyed once; no capture is left open on it.");
                unsafe { #stream_destroy(self.ptr) };
            }
        }

        /// Launches captured on a [`Stream`], not instantiated.
        pub struct Captured {
            graph: *mut c_void,
        }

        impl Captured {
            /// Captures what `record` launches on `stream` (it must launch there and nowhere
            /// else). `None` where the runtime refused the capture, something invalidated it
            /// (another thread's device synchronization) or `record` failed: then nothing
            /// ran, and the caller launches the steps itself.
            pub fn record(stream: &Stream, record: &mut dyn FnMut() -> Result<(), StencilError>) -> Option<Captured> {
                stencil_safety!("the stream is alive and captures nothing yet.");
                let begun = unsafe { #begin(stream.ptr) };
                if begun != 0 {
                    return None;
                }
                let recorded = record();
                let mut graph: *mut c_void = ::std::ptr::null_mut();
                stencil_safety!("ends the capture begun above (also after a failed launch), writes one handle.");
                let ended = unsafe { #end(stream.ptr, &mut graph) };
                if ended != 0 || graph.is_null() {
                    return None;
                }
                let captured = Captured { graph };
                recorded.is_ok().then_some(captured)
            }
        }

        impl Drop for Captured {
            fn drop(&mut self) {
                stencil_safety!("captured by the runtime, destroyed once; an executable graph made from it does not need it.");
                unsafe { #graph_destroy(self.graph) };
            }
        }

        #graph
    }
}

/// `Graph`: captured launches, instantiated and replayed on the legacy
/// stream (`f` names a runtime call, `sync` the synchronization).
fn graph(f: &dyn Fn(&str) -> Ident, sync: &Ident) -> TokenStream {
    let (instantiate, replay, exec_destroy, exec_update) = (
        f("instantiate"),
        f("replay"),
        f("exec_destroy"),
        f("exec_update"),
    );
    quote! {
    /// Captured launches, instantiated, replayed on the legacy stream.
    pub struct Graph {
        exec: *mut c_void,
    }

    impl Graph {
        /// `captured` instantiated; `None` where the runtime refused.
        pub fn new(captured: &Captured) -> Option<Graph> {
            let mut exec: *mut c_void = ::std::ptr::null_mut();
            stencil_safety!("writes one handle from a graph the runtime captured.");
            let made = unsafe { #instantiate(&mut exec, captured.graph) };
            (made == 0 && !exec.is_null()).then_some(Graph { exec })
        }

        /// Takes `captured`'s launches in place, where they are this graph's with other
        /// arguments (no instantiation, and replays already queued run what they had).
        /// `false` where the runtime refused (other kernels or grids): then the graph must
        /// not be replayed again.
        pub fn update(&mut self, captured: &Captured) -> bool {
            stencil_safety!("an instantiated graph and a captured one, both alive.");
            let updated = unsafe { #exec_update(self.exec, captured.graph) };
            updated == 0
        }

        /// Queues the captured launches on the legacy stream, after what is queued there.
        pub fn replay(&self, stencil: &'static str) -> Result<(), StencilError> {
            stencil_safety!("an instantiated graph of this session's launches, whose buffers it owns.");
            let code = unsafe { #replay(self.exec) };
            check(stencil, "graph launch", code)
        }
    }

    impl Drop for Graph {
        fn drop(&mut self) {
            stencil_safety!("instantiated by the runtime, destroyed once, after its replays ran. A failure here (a device already in error) cannot be reported from `drop`.");
            unsafe {
                #sync();
                #exec_destroy(self.exec);
            }
        }
    }
    }
}
