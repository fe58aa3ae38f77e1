//! The Rust side of a GPU backend: RAII device buffers, a `Session` per
//! stencil keeping every grid on the device, and `run` / `run_grids` on host
//! slices. Every runtime status becomes `Err(StencilError::Device)` carrying
//! the runtime's own message.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::temporal::fused_leapfrog;
use super::{Dialect, Resolved};
use crate::codegen::rust::{
    Signature, docs, grids_entry, ident, params_used, slot_name, statement_name, usize_lit,
};
use crate::ir::{Boundary, Role, Slot, Stencil, Strategy, Version};

/// The module shared by every stencil of a crate: runtime calls, device
/// buffers and time levels. Emitted once per dialect.
/// `copy` (device to device) is only emitted when a stencil needs it:
/// `frame_copies`, a two-level field with a fixed boundary.
pub fn runtime_module(prefix: &str, d: &Dialect, frame_copies: bool) -> TokenStream {
    let module = format_ident!("stencil_{}", d.name);
    let f = |name: &str| format_ident!("{prefix}_{}_{name}", d.name);
    let (malloc, free, upload, download, copy, zero, sync, count, error) = (
        f("malloc"),
        f("free"),
        f("upload"),
        f("download"),
        f("copy"),
        f("zero"),
        f("synchronize"),
        f("device_count"),
        f("error_string"),
    );
    let graphs = graphs_module(&f, &sync);
    let backend = d.name;
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

            #copy_impl

            #graphs

            impl<T> Drop for Buffer<T> {
                fn drop(&mut self) {
                    stencil_safety!("`ptr` came from the runtime's malloc and is freed once. A failure here (a device already in error) cannot be reported from `drop`.");
                    unsafe { #free(self.ptr.cast()) };
                }
            }

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

/// The `cuda` (or `hip`) module of one stencil.
pub fn stencil_module(
    st: &Stencil,
    plan: &Resolved,
    prefix: &str,
    d: &Dialect,
    sig: &Signature,
) -> TokenStream {
    let module = format_ident!("{}", d.name);
    let dev = format_ident!("stencil_{}", d.name);
    let strategy = plan.strategy.name();
    let block = plan.block.iter().map(|&b| usize_lit(b));
    let chunk = usize_lit(plan.chunk);
    let coarsen = usize_lit(plan.coarsen);
    let vector = usize_lit(plan.vector);
    let time_block = usize_lit(plan.time_block);
    let occupancy = match plan.occupancy {
        Some(k) => {
            let k = usize_lit(k);
            quote! { Some(#k) }
        }
        None => quote! { None },
    };
    let small_grids = plan.small_grids();
    let small_steps = super::naive_plan(plan, st, d).is_some();
    let (externs, launches, fuses) = kernels(st, plan, prefix, d);
    let session = session(st, plan, d, &launches, &fuses);
    let args = &sig.params;
    let upload_args = upload_arguments(st);
    let lengths = crate::codegen::rust::grid_lengths(st);
    let download_args = download_arguments(st);
    let run_doc = docs(&format!(
        "Runs `steps` time steps in place on the {} device: checks every argument, uploads the grids, steps, \
         downloads the state grids. Zero steps touch nothing.{}",
        d.title, sig.doc
    ));
    let grids = grids_entry(d.name);
    let session_ident = crate::codegen::rust::unshadowed(st, "session");
    let module_doc = docs(&format!(
        "{} kernels (strategy `{strategy}`, blocks of {:?} threads{}{}), with [`Session`] for grids kept on the device.",
        d.title,
        plan.block,
        if plan.strategy == crate::ir::Strategy::Stream {
            format!(
                ", {} cells per block along the slowest axis, {} per iteration{}",
                plan.chunk,
                plan.coarsen,
                super::small_planes_plan(plan, st, d).map_or(String::new(), |small| format!(
                    "; planes of fewer than {} cells run blocks of {:?} threads marching {} planes",
                    super::SMALL_PLANES,
                    small.block,
                    small.chunk
                ))
            )
        } else if plan.strategy == crate::ir::Strategy::Tensor {
            format!(
                ", {} cells per block along the slowest axis, the in-plane sum on the FP64 tensor cores{}{}",
                plan.chunk,
                if super::tensor::reads_one_grid(st) {
                    " (8 warps of 16 x 8 cells a block where rows are of an even number of cells)"
                } else {
                    ""
                },
                if plan.small_grids() {
                    "; small grids run `stream` in 16-byte vectors"
                } else {
                    ""
                }
            )
        } else {
            String::new()
        },
        if small_steps {
            "; single steps on small grids run `naive`"
        } else {
            ""
        }
    ));
    quote! {
        #module_doc
        pub mod #module {
            use super::*;
            use super::super::#dev as dev;

            /// The tiling compiled into these kernels.
            pub const TILING: super::super::GpuTiling = super::super::GpuTiling { strategy: #strategy, block: &[#(#block),*], chunk: #chunk, coarsen: #coarsen, vector: #vector, time_block: #time_block, occupancy: #occupancy, small_grids: #small_grids, small_steps: #small_steps };

            #[allow(non_snake_case)]
            unsafe extern "C" {
                #(#externs)*
            }

            #session

            #run_doc
            pub fn run(#args) -> Result<(), StencilError> {
                super::check_arguments(&shape, &[#lengths])?;
                if steps == 0 {
                    return Ok(());
                }
                let mut #session_ident = Session::new(shape)?;
                #session_ident.upload(#upload_args)?;
                #session_ident.step(params, steps)?;
                #session_ident.download(#download_args)
            }

            #grids
        }
    }
}

/// Extern declarations, per statement the launch, and the questions asked
/// before a launch of several steps: whether each kernel without a scalar
/// twin fuses them on the session's grids (`<symbol>_fuses`,
/// [`super::temporal::splits_steps`]).
fn kernels(
    st: &Stencil,
    plan: &Resolved,
    prefix: &str,
    d: &Dialect,
) -> (Vec<TokenStream>, Vec<TokenStream>, Vec<TokenStream>) {
    let real = ident(st.dtype.rust());
    let persistent = plan.strategy == Strategy::Persistent;
    let (levels_param, levels_arg) = match plan.strategy {
        Strategy::Temporal => (
            quote!(levels: ::std::os::raw::c_int,),
            quote!(fused as ::std::os::raw::c_int,),
        ),
        Strategy::Persistent => (
            quote!(steps: ::std::os::raw::c_ulonglong,),
            quote!(fused as ::std::os::raw::c_ulonglong,),
        ),
        _ => (quote!(), quote!()),
    };
    let dims = st.dims();
    let mut externs = Vec::new();
    let mut launches = Vec::new();
    let mut fuses = Vec::new();
    let splits = super::temporal::splits_steps(plan, st);
    for s in &st.statements {
        let target = &st.fields[s.target];
        let (out_prev_param, out_prev_arg) = if fused_leapfrog(st, plan, s.target) {
            let id = ident(&target.name);
            (
                quote!(out_prev: *mut #real,),
                quote!(self.grids.#id.next_prev(),),
            )
        } else {
            (quote!(), quote!())
        };
        let name = statement_name(st, s);
        let sym = format_ident!("{}", super::symbol(prefix, d, st, s));
        let slots: Vec<Ident> = s
            .slots()
            .into_iter()
            .map(|slot| ident(&slot_name(st, slot)))
            .collect();
        // `persistent` sweeps alternate between the field's two buffers: it writes both.
        let written = |slot: Slot| persistent && slot.field == s.target;
        let slot_types: Vec<TokenStream> = s
            .slots()
            .into_iter()
            .map(|slot| {
                if written(slot) {
                    quote!(*mut #real)
                } else {
                    quote!(*const #real)
                }
            })
            .collect();
        let used = params_used(s);
        let c_params: Vec<Ident> = used
            .iter()
            .map(|&i| format_ident!("p_{}", st.params[i]))
            .collect();
        let fields: Vec<Ident> = used.iter().map(|&i| ident(&st.params[i])).collect();
        let n: Vec<Ident> = (0..dims).map(|a| format_ident!("n{a}")).collect();
        externs.push(quote! {
            fn #sym(#(#n: isize,)* out: *mut #real, #out_prev_param #(#slots: #slot_types,)* #(#c_params: #real,)* #levels_param stream: *mut ::std::os::raw::c_void) -> ::std::os::raw::c_int;
        });
        let out = output(st, s.target);
        let reads: Vec<TokenStream> = s
            .slots()
            .into_iter()
            .map(|slot| {
                let id = ident(&st.fields[slot.field].name);
                match (written(slot), slot.version) {
                    (true, Version::Prev) => quote!(self.grids.#id.prev()),
                    (true, _) => quote!(self.grids.#id.cur()),
                    _ => read(st, slot),
                }
            })
            .collect();
        let axis: Vec<_> = (0..dims).map(usize_lit).collect();
        if splits {
            let ask = format_ident!("{sym}_fuses");
            externs.push(quote! {
                fn #ask(#(#n: isize,)* out: *mut #real, #out_prev_param #(#slots: #slot_types,)*) -> ::std::os::raw::c_int;
            });
            // The call's safety is stated where the calls are joined (`session`).
            fuses.push(quote! {
                #ask(#(self.shape[#axis] as isize,)* #out, #out_prev_arg #(#reads,)*) != 0
            });
        }
        let frame = (st.boundary == Boundary::Fixed && target.has_prev()).then(|| {
            let id = ident(&target.name);
            let fresh = format_ident!("{}__fresh", target.name);
            quote! {
                // The caller's previous level (the first buffer) may have another frame:
                // before it is first written, give it the current level's (which is kept
                // from then on). After the first launch, no launch reads it.
                if self.#fresh && self.steps > 0 {
                    let cur = self.grids.#id.cur();
                    self.grids.#id.bufs[0].copy_from(NAME, cur)?;
                    self.#fresh = false;
                }
            }
        });
        launches.push(quote! {
            #frame
            stencil_safety!("every pointer is a device buffer of this session, all of `shape`'s cell count; the kernel touches only those cells and `out` is none of its inputs.");
            let code = unsafe { #sym(#(self.shape[#axis] as isize,)* #out, #out_prev_arg #(#reads,)* #(params.#fields,)* #levels_arg stream) };
            dev::check(NAME, #name, code)?;
        });
    }
    (externs, launches, fuses)
}

/// The device pointer a statement writes.
fn output(st: &Stencil, target: usize) -> TokenStream {
    let id = ident(&st.fields[target].name);
    match st.fields[target].role {
        Role::Temp => quote!(self.grids.#id.ptr()),
        _ => quote!(self.grids.#id.next()),
    }
}

/// The device pointer a slot is read from.
fn read(st: &Stencil, slot: Slot) -> TokenStream {
    let id = ident(&st.fields[slot.field].name);
    match (st.fields[slot.field].role, slot.version) {
        (Role::Input | Role::Temp, _) => quote!(self.grids.#id.ptr().cast_const()),
        (_, Version::Start) => quote!(self.grids.#id.cur().cast_const()),
        (_, Version::Prev) => quote!(self.grids.#id.prev().cast_const()),
        (_, Version::Updated) => quote!(self.grids.#id.next().cast_const()),
    }
}

/// `("u", u.len()), ...` for the grids [`upload_arguments`] (or, with
/// `inputs` false, [`download_arguments`]) names: what a session checks
/// before it copies any of them.
fn session_lengths(st: &Stencil, inputs: bool) -> TokenStream {
    let pairs = st
        .arguments()
        .filter(|(_, f)| inputs || f.role != Role::Input)
        .flat_map(|(_, f)| {
            let prev = f.has_prev().then(|| format!("{}_prev", f.name));
            std::iter::once(f.name.clone()).chain(prev)
        })
        .map(|name| {
            let id = ident(&name);
            quote!((#name, #id.len()))
        });
    quote!(#(#pairs),*)
}

fn upload_arguments(st: &Stencil) -> TokenStream {
    let names = st.arguments().flat_map(|(_, f)| {
        let id = ident(&f.name);
        let prev = f.has_prev().then(|| format_ident!("{}_prev", f.name));
        std::iter::once(quote!(#id)).chain(prev.map(|p| quote!(#p)))
    });
    quote!(#(#names),*)
}

fn download_arguments(st: &Stencil) -> TokenStream {
    let names = st
        .arguments()
        .filter(|(_, f)| f.role != Role::Input)
        .flat_map(|(_, f)| {
            let id = ident(&f.name);
            let prev = f.has_prev().then(|| format_ident!("{}_prev", f.name));
            std::iter::once(quote!(#id)).chain(prev.map(|p| quote!(#p)))
        });
    quote!(#(#names),*)
}

/// The doc comment of `Session::step`.
fn step_doc() -> TokenStream {
    docs(
        "Runs `steps` time steps on the device (kernels are queued; errors of a launch come back \
         here, errors while running at the next `synchronize` or `download`).",
    )
}

/// `Session::step` of a plan that fuses steps, and its `launch`: launches of
/// up to `most` steps (`most` declares it from `left`, the steps still to run), or
/// of one as `Session::fusion` says; while it is `Measure`, the parts of the
/// session's `rt::Trial`, each timing `span` steps (a fused launch's:
/// `time_block`, two sweeps for `persistent`). `graph` replays runs of
/// launches as graphs where it can, `whole_graphs` (the trial's parts) only
/// whole graphs ([`Graphs::branch`]).
fn fused_step(
    plan: &Resolved,
    params: &Ident,
    most: &TokenStream,
    launches: &[TokenStream],
    turn: &TokenStream,
    [graph, whole_graphs]: [&TokenStream; 2],
) -> TokenStream {
    let doc = step_doc();
    let span = if plan.strategy == Strategy::Persistent {
        2 * plan.time_block as u64
    } else {
        plan.time_block as u64
    };
    let launches_fn = launches_fn(params, whole_graphs, plan.strategy == Strategy::Persistent);
    // The launches a trial's part replays as one graph (the session passes 1 with graphs off).
    let graph_launches = GRAPH_LAUNCHES;
    quote! {
        #doc
        pub fn step(&mut self, #params: Params, steps: u64) -> Result<(), StencilError> {
            let mut left = steps;
            while left > 0 {
                // The most steps the next launch may fuse.
                #most
                if self.fusion == super::super::Fusion::Measure && most >= #span && left >= self.trial.steps(#span) {
                    let mut trial = self.trial;
                    let (ran, measured) = trial.next(
                        #span,
                        if self.graphs { #graph_launches } else { 1 },
                        &mut |steps, each| self.launches(#params, steps, each),
                        &|| dev::synchronize(NAME),
                    )?;
                    self.trial = trial;
                    if let Some(measured) = measured {
                        self.fusion = measured.faster();
                        self.measurement = Some(measured);
                    }
                    left -= ran;
                    continue;
                }
                let fused = if self.fusion == super::super::Fusion::Single { 1 } else { most };
                #graph
                self.launch(#params, fused, ::std::ptr::null_mut())?;
                left -= fused;
            }
            Ok(())
        }

        #launches_fn

        /// One launch of `fused` steps (the single-step kernel's for one), on `stream` (null:
        /// the legacy stream).
        fn launch(&mut self, #params: Params, fused: u64, stream: *mut ::std::os::raw::c_void) -> Result<(), StencilError> {
            #(#launches)*
            #turn
            self.steps += fused;
            Ok(())
        }
    }
}

/// A session's `launches`: `steps` steps in launches of `each`, runs of whole
/// graphs replayed where `graph` ([`Graphs::branch`]) can. `persistent`
/// (`whole`) runs fused steps in one launch of them all, as its `step` does.
fn launches_fn(params: &Ident, graph: &TokenStream, whole: bool) -> TokenStream {
    let (doc, fused) = if whole {
        (
            "`steps` steps in launches of one (`each == 1`), or else in one launch, as `step` runs them.",
            quote!(let fused = if each == 1 { 1 } else { left };),
        )
    } else {
        (
            "`steps` steps (a multiple of `each`) in launches of `each`, as `step` runs them.",
            quote!(let fused = each;),
        )
    };
    let doc = docs(doc);
    quote! {
        #doc
        fn launches(&mut self, #params: Params, steps: u64, each: u64) -> Result<(), StencilError> {
            let mut left = steps;
            while left > 0 {
                #fused
                #graph
                self.launch(#params, fused, ::std::ptr::null_mut())?;
                left -= fused;
            }
            Ok(())
        }
    }
}

/// `Session::step` of a plan of one step a launch, and its `launch`.
fn single_step(
    plan: &Resolved,
    params: &Ident,
    launches: &[TokenStream],
    advance: &[TokenStream],
    graph: &TokenStream,
) -> TokenStream {
    let doc = step_doc();
    // `temporal` of one step a launch passes its launches' steps.
    let fused = if plan.strategy == Strategy::Temporal {
        ident("fused")
    } else {
        ident("_fused")
    };
    let launches_fn = launches_fn(params, graph, false);
    quote! {
        #doc
        pub fn step(&mut self, #params: Params, steps: u64) -> Result<(), StencilError> {
            self.launches(#params, steps, 1)
        }

        #launches_fn

        /// One launch of one step, on `stream` (null: the legacy stream).
        fn launch(&mut self, #params: Params, #fused: u64, stream: *mut ::std::os::raw::c_void) -> Result<(), StencilError> {
            #(#launches)*
            #(#advance)*
            self.steps += 1;
            Ok(())
        }
    }
}

/// A session's graphs: what a session adds to run [`GRAPH_LAUNCHES`]
/// launches at a time as one graph (`persistent`: of one step each, see
/// [`Graphs::branch`]). On the H100 a
/// launch took 3.3-4.1 us from the host, so that a 7-point stencil took about
/// 4 us a step up to 80^3; replayed from a graph, 1.5-3.2 us, and 1.1x-1.2x
/// less on 100^3-128^3 (`benchmarks/experiments/launch-floor`).
struct Graphs {
    /// The session's members, and their values in `Session::new`.
    members: Vec<TokenStream>,
    alloc: Vec<TokenStream>,
    /// `Session::replay`, `set_graphs`, `graphs` and `replays`.
    methods: TokenStream,
}

/// Launches a session captures as one graph: a multiple of every count of
/// buffers a field turns through (2, 3 or 4), so that a graph leaves the
/// buffers in the order it found them and replays again.
const GRAPH_LAUNCHES: u64 = 48;

/// Graphs a session keeps: one per order of the buffers a field turns
/// through (up to 4). A call whose launches outside whole graphs turn the
/// buffers by an odd count leaves them in the other order, so consecutive
/// calls alternate between two graphs; with one kept, each call captured its
/// graph again (on the H100 `temporal` j2d5pt f64 on 512^2, whose calls of
/// 1000 steps end with 23 launches outside graphs, ran 0.90x-0.95x `naive`
/// in such calls and 1.00x in calls of 10000; BENCHMARKS.md, session 33).
///
/// Past 4, a new capture updates the least recently replayed graph in place
/// where the runtime allows (the same launches with other arguments:
/// parameters that change every call), which spares the instantiation
/// (41-45 us against 15 for 48 launches on the H100;
/// `benchmarks/experiments/graph-update`) and the wait for the old graph's
/// replays before it is destroyed.
const GRAPHS_KEPT: usize = 4;

/// Captures in a row that may give no graph before a session turns graphs
/// off. A capture that another thread's device synchronization invalidated
/// (any thread of the process, on the same device, whatever the capture
/// mode: `benchmarks/experiments/capture-threads`) gives none once; the next
/// run of launches captures again. A runtime that refuses every capture costs
/// this many tries, each of which records its launches without running them.
const CAPTURE_TRIES: u32 = 3;

/// The fewest launches a `step` call replays as a graph where it has fewer
/// than [`GRAPH_LAUNCHES`] left: a call of 8 to 47 launches, or the rest of a
/// longer call past its whole graphs. Such a run is captured the second time
/// it comes (the same launches, steps a launch, parameters and order of the
/// buffers), so that calls whose steps differ every time never pay a capture
/// for a graph they would not replay.
const SHORT_GRAPH_LAUNCHES: u64 = 8;

impl Graphs {
    /// `levels`: the state fields; `fresh`: the flags of frames still to copy
    /// (no graph runs before they are, the copy is not a launch); `params`:
    /// the stencil's parameters, in `Params`.
    fn new(levels: &[Ident], fresh: &[Ident], params: &[Ident], params_ident: &Ident) -> Graphs {
        let key_len = usize_lit(2 + levels.len() + params.len());
        let turns_len = usize_lit(levels.len());
        let index: Vec<_> = (0..levels.len()).map(usize_lit).collect();
        let replay_doc = docs(&format!(
            "Runs `launches` launches (up to {GRAPH_LAUNCHES}) of `fused` steps as one graph: the one \
             captured for the same launches, steps a launch, parameters and order of the buffers. \
             Where the session keeps none, it captures one first; a run of fewer than \
             {GRAPH_LAUNCHES} launches only where the same run came before since its last capture. \
             The session keeps {GRAPHS_KEPT}; past that, the least recently replayed takes the new \
             launches in place. `false` (nothing ran) before the frames are copied, for a short run \
             seen for the first time, and where the capture gave no graph: after {CAPTURE_TRIES} \
             such captures in a row, graphs are off from then on."
        ));
        let set_doc = docs(&format!(
            "Turns graphs on or off: on, each run of {GRAPH_LAUNCHES} launches in a `step` call is \
             captured once as a graph (per steps a launch, parameters and order of the buffers) \
             and replayed, and so is a shorter run of {SHORT_GRAPH_LAUNCHES} or more (a short call, \
             or the rest of a long one) from the second time it comes, which saves most of each \
             launch's cost on small grids."
        ));
        let graph_launches = GRAPH_LAUNCHES;
        let members = vec![
            quote!(stream: Option<dev::Stream>),
            quote!(kept: Vec<([u64; #key_len], [usize; #turns_len], dev::Graph)>),
            quote!(graphs: bool),
            quote!(replays: u64),
            quote!(captures: u64),
            quote!(updates: u64),
            quote!(failed: u32),
            quote!(seen: Vec<[u64; #key_len]>),
        ];
        let alloc = vec![
            quote!(stream: None),
            quote!(kept: Vec::new()),
            quote!(graphs: true),
            quote!(replays: 0),
            quote!(captures: 0),
            quote!(updates: 0),
            quote!(failed: 0),
            quote!(seen: Vec::new()),
        ];
        let graphs_kept = GRAPHS_KEPT;
        let capture_tries = CAPTURE_TRIES;
        let methods = quote! {
            #replay_doc
            fn replay(&mut self, #params_ident: Params, fused: u64, launches: u64) -> Result<bool, StencilError> {
                if #(self.#fresh ||)* !self.graphs {
                    return Ok(false);
                }
                let key = [fused, launches, #(self.grids.#levels.turn() as u64,)* #(u64::from(#params_ident.#params.to_bits()),)*];
                let (key, after, graph) = match self.kept.iter().position(|entry| entry.0 == key) {
                    Some(at) => self.kept.remove(at),
                    None => {
                        if launches < #graph_launches && !self.seen_before(key) {
                            return Ok(false);
                        }
                        let stream = match self.stream.take() {
                            Some(stream) => stream,
                            None => dev::Stream::new(NAME)?,
                        };
                        let (steps, turns) = (self.steps, [#(self.grids.#levels.turn()),*]);
                        let captured = dev::Captured::record(&stream, &mut || {
                            for _ in 0..launches {
                                self.launch(#params_ident, fused, stream.ptr())?;
                            }
                            Ok(())
                        });
                        // What the captured launches leave, then the session as before them.
                        let after = [#(self.grids.#levels.turn()),*];
                        self.steps = steps;
                        #(self.grids.#levels.set_turn(turns[#index]);)*
                        self.stream = Some(stream);
                        // Where the session keeps as many graphs as it may, the least recently
                        // replayed takes the new launches in place; else, or where the runtime
                        // refuses that, they are instantiated (the old graph dropped after its
                        // replays ran).
                        let oldest = if self.kept.len() == #graphs_kept {
                            Some(self.kept.remove(0).2)
                        } else {
                            None
                        };
                        let graph = match (captured, oldest) {
                            (Some(captured), Some(mut graph)) => {
                                if graph.update(&captured) {
                                    self.updates += 1;
                                    Some(graph)
                                } else {
                                    drop(graph);
                                    dev::Graph::new(&captured)
                                }
                            }
                            (Some(captured), None) => dev::Graph::new(&captured),
                            (None, _) => None,
                        };
                        let Some(graph) = graph else {
                            // Another thread may have invalidated the capture: the next run
                            // of launches tries again, up to a limit.
                            self.failed += 1;
                            if self.failed == #capture_tries {
                                self.graphs = false;
                                self.kept.clear();
                            }
                            return Ok(false);
                        };
                        self.failed = 0;
                        self.captures += 1;
                        (key, after, graph)
                    }
                };
                graph.replay(NAME)?;
                #(self.grids.#levels.set_turn(after[#index]);)*
                self.kept.push((key, after, graph));
                self.steps += launches * fused;
                self.replays += 1;
                Ok(true)
            }

            /// Whether the run of `key` came before since it was last captured (the session
            /// remembers as many such runs as it keeps graphs); notes it where not, and
            /// forgets it where so.
            fn seen_before(&mut self, key: [u64; #key_len]) -> bool {
                if let Some(at) = self.seen.iter().position(|seen| *seen == key) {
                    self.seen.remove(at);
                    return true;
                }
                if self.seen.len() == #graphs_kept {
                    self.seen.remove(0);
                }
                self.seen.push(key);
                false
            }

            /// Whether runs of many launches are replayed as graphs (on by default; off
            /// after captures in a row gave no graph).
            pub fn graphs(&self) -> bool {
                self.graphs
            }

            #set_doc
            pub fn set_graphs(&mut self, on: bool) {
                self.graphs = on;
                self.failed = 0;
                self.kept.clear();
            }

            /// Graphs replayed since the session was made.
            #[doc(hidden)]
            pub fn replays(&self) -> u64 {
                self.replays
            }

            /// Graphs captured since the session was made.
            #[doc(hidden)]
            pub fn captures(&self) -> u64 {
                self.captures
            }

            /// Captures that updated a kept graph in place instead of instantiating one.
            #[doc(hidden)]
            pub fn updates(&self) -> u64 {
                self.updates
            }
        };
        Graphs {
            members,
            alloc,
            methods,
        }
    }

    /// The `step` loop's branch: where `left` holds a whole graph of
    /// launches of `fused` steps, replay it. `persistent` replays only its
    /// launches of one step (ordinary launches of the single-step kernel):
    /// its fused launches are cooperative, and one runs all of a call's steps.
    /// `short`: runs of fewer launches replay too ([`SHORT_GRAPH_LAUNCHES`]),
    /// and one not replayed is launched whole, so that its key is the same
    /// the next time; the trial's parts (`short` off) replay only whole
    /// graphs, as it times them.
    fn branch(params: &Ident, persistent: bool, short: bool) -> TokenStream {
        let graph_launches = GRAPH_LAUNCHES;
        let one = persistent.then(|| quote!(fused == 1 &&));
        if !short {
            return quote! {
                if #one left >= #graph_launches * fused && self.replay(#params, fused, #graph_launches)? {
                    left -= #graph_launches * fused;
                    continue;
                }
            };
        }
        let fewest = SHORT_GRAPH_LAUNCHES;
        quote! {
            let run = (left / fused).min(#graph_launches);
            if #one run >= #fewest {
                if self.replay(#params, fused, run)? {
                    left -= run * fused;
                    continue;
                }
                if run < #graph_launches {
                    for _ in 0..run {
                        self.launch(#params, fused, ::std::ptr::null_mut())?;
                    }
                    left -= run * fused;
                    continue;
                }
            }
        }
    }
}

fn session(
    st: &Stencil,
    plan: &Resolved,
    d: &Dialect,
    launches: &[TokenStream],
    fuses: &[TokenStream],
) -> TokenStream {
    let uses_params = st.statements.iter().any(|s| !params_used(s).is_empty());
    let params = if uses_params {
        ident("params")
    } else {
        ident("_params")
    };
    let real = ident(st.dtype.rust());
    let dims = usize_lit(st.dims());
    // The grids' buffers, named as the spec names them, in a struct of their own: the
    // session's other members cannot collide with a user's name.
    let mut grid_members = Vec::new();
    let mut grid_alloc = Vec::new();
    let mut members = Vec::new();
    let mut alloc = Vec::new();
    let mut upload_params = Vec::new();
    let mut upload = Vec::new();
    let mut download_params = Vec::new();
    let mut download = Vec::new();
    let mut advance = Vec::new();
    // After a launch of one step, where that runs the single-step kernel: a fused
    // leapfrog's levels turn by one (it wrote `next_prev`'s buffer), the others as always.
    let mut advance_one = Vec::new();
    let one_step_kernel = super::step_plan(plan, st, d).is_some();
    let mut turns_by_one = false;
    let mut fresh_init = Vec::new();
    let mut fused_fresh = None;
    let mut state_fields = Vec::new();
    let mut fresh_flags = Vec::new();
    for (i, f) in st.fields.iter().enumerate() {
        let id = ident(&f.name);
        let name = &f.name;
        match f.role {
            Role::Input | Role::Temp => {
                grid_members.push(quote!(#id: dev::Buffer<#real>));
                grid_alloc.push(quote!(#id: dev::Buffer::new(NAME, cells)?));
                if f.role == Role::Input {
                    upload_params.push(quote!(#id: &[#real]));
                    upload.push(quote!(self.grids.#id.upload(NAME, #name, #id)?;));
                }
            }
            Role::State { levels } => {
                state_fields.push(id.clone());
                let levels = usize_lit(levels as usize);
                let fused = fused_leapfrog(st, plan, i);
                grid_members.push(quote!(#id: dev::Levels<#real>));
                grid_alloc.push(quote!(#id: dev::Levels::new(NAME, #levels, #fused, cells)?));
                advance.push(quote!(self.grids.#id.advance();));
                if fused && one_step_kernel {
                    turns_by_one = true;
                    advance_one.push(quote!(self.grids.#id.advance_one();));
                } else {
                    advance_one.push(quote!(self.grids.#id.advance();));
                }
                upload_params.push(quote!(#id: &[#real]));
                download_params.push(quote!(#id: &mut [#real]));
                upload.push(quote!(self.grids.#id.upload_from(NAME, #name, #id)?;));
                download.push(
                    quote!(self.grids.#id.level(self.grids.#id.cur_level()).download(NAME, #name, #id)?;),
                );
                if f.has_prev() {
                    let prev = format_ident!("{}_prev", f.name);
                    let pname = format!("{}_prev", f.name);
                    upload_params.push(quote!(#prev: &[#real]));
                    download_params.push(quote!(#prev: &mut [#real]));
                    upload.push(quote!(self.grids.#id.level_mut(0).upload(NAME, #pname, #prev)?;));
                    download.push(quote!(self.grids.#id.level(0).download(NAME, #pname, #prev)?;));
                    if st.boundary == Boundary::Fixed {
                        let fresh = format_ident!("{}__fresh", f.name);
                        fresh_flags.push(fresh.clone());
                        members.push(quote!(#fresh: bool));
                        alloc.push(quote!(#fresh: false));
                        fresh_init.push(quote!(self.#fresh = true;));
                        if fused_leapfrog(st, plan, i) {
                            fused_fresh = Some(fresh);
                        }
                    }
                }
            }
        }
    }
    let persistent = plan.strategy == Strategy::Persistent;
    let names: Vec<Ident> = st.params.iter().map(|p| ident(p)).collect();
    let graphs = Graphs::new(&state_fields, &fresh_flags, &names, &params);
    let graph = Graphs::branch(&params, persistent, true);
    // A plan that fuses steps: how a launch turns the buffers, and the most steps it fuses.
    let fused = if persistent {
        let time_block = plan.time_block as u64;
        let turn = if turns_by_one {
            quote! {
                // One step runs the single-step kernel, into `next_prev`'s buffer.
                if fused == 1 {
                    #(#advance_one)*
                } else if fused.div_ceil(#time_block) % 2 == 1 {
                    #(#advance)*
                }
            }
        } else {
            quote! {
                // The result is in the buffer the last sweep wrote: the next level after an odd number of sweeps.
                if fused.div_ceil(#time_block) % 2 == 1 {
                    #(#advance)*
                }
            }
        };
        // A leapfrog's second sweep writes the buffer of the caller's previous level, whose
        // frame is replaced between launches (`frame` in `kernels`): the first sweep after
        // an upload runs alone.
        let most = match fused_fresh {
            None => quote!(let most = left;),
            Some(fresh) => quote! {
                let most = if self.steps == 0 && self.#fresh { left.min(#time_block) } else { left };
            },
        };
        Some((turn, most))
    } else if plan.fuses_steps() {
        let time_block = plan.time_block as u64;
        let turn = if turns_by_one {
            quote! {
                // One step runs the single-step kernel, into `next_prev`'s buffer.
                if fused == 1 {
                    #(#advance_one)*
                } else {
                    #(#advance)*
                }
            }
        } else {
            quote!(#(#advance)*)
        };
        // Where the fused kernel has no scalar twin, grids it cannot take run one step a
        // launch (the single-step kernel), and a session that was to measure says so.
        let most = if fuses.is_empty() {
            quote!(let most = left.min(#time_block);)
        } else {
            quote! {
                stencil_safety!("each `_fuses` function only compares the extents and the pointers' alignment");
                let fuses = unsafe { #(#fuses)&&* };
                if !fuses && self.fusion == super::super::Fusion::Measure {
                    self.fusion = super::super::Fusion::Single;
                }
                let most = if fuses { left.min(#time_block) } else { 1 };
            }
        };
        Some((turn, most))
    } else {
        None
    };
    let step = match fused {
        Some((turn, most)) => {
            let whole_graphs = Graphs::branch(&params, persistent, false);
            fused_step(
                plan,
                &params,
                &most,
                launches,
                &turn,
                [&graph, &whole_graphs],
            )
        }
        None => single_step(plan, &params, launches, &advance, &graph),
    };
    let fusion = if plan.measures() {
        quote!(super::super::Fusion::Measure)
    } else if plan.fuses_steps() {
        quote!(super::super::Fusion::Fused)
    } else {
        quote!(super::super::Fusion::Single)
    };
    members.push(quote!(fusion: super::super::Fusion));
    alloc.push(quote!(fusion: #fusion));
    let reset_trial = plan.fuses_steps().then(|| {
        members.push(quote!(trial: rt::Trial));
        alloc.push(quote!(trial: rt::Trial::default()));
        members.push(quote!(measurement: Option<super::super::Measurement>));
        alloc.push(quote!(measurement: None));
        quote! {
            self.trial = rt::Trial::default();
            self.measurement = None;
        }
    });
    let measurement = if plan.fuses_steps() {
        quote!(self.measurement)
    } else {
        quote!(None)
    };
    members.extend(graphs.members);
    alloc.extend(graphs.alloc);
    let graph_methods = graphs.methods;
    let (upload_lengths, download_lengths) =
        (session_lengths(st, true), session_lengths(st, false));
    let doc = docs(&format!(
        "The grids of `{}` resident on the {} device: upload once, step many times, download when needed. \
         Device memory is freed on drop, also when a call fails half-way.",
        st.name, d.title
    ));
    quote! {
        /// The session's device buffers, one member per grid of the spec.
        #[allow(non_snake_case)]
        struct Grids {
            #(#grid_members,)*
        }

        #doc
        #[allow(non_snake_case)]
        pub struct Session {
            shape: [usize; #dims],
            /// Steps run since the last upload.
            steps: u64,
            grids: Grids,
            #(#members,)*
        }

        #[allow(non_snake_case)]
        impl Session {
            /// Allocates every grid (zeroed) for `shape` on the device.
            pub fn new(shape: [usize; #dims]) -> Result<Self, StencilError> {
                let cells = rt::cells(NAME, &AXES, &shape, &MIN_SHAPE)?;
                let grids = Grids { #(#grid_alloc,)* };
                Ok(Session { shape, steps: 0, grids, #(#alloc,)* })
            }

            /// The shape the session was made for.
            pub fn shape(&self) -> [usize; #dims] {
                self.shape
            }

            /// Copies the state grids (each 2-level field followed by its `_prev` level) and the
            /// input grids, in declaration order, to the device. Every length is checked before the
            /// first copy, so a wrong one changes nothing; a runtime error during the copies (a
            /// device already in error) can leave some grids copied.
            pub fn upload(&mut self, #(#upload_params),*) -> Result<(), StencilError> {
                // Every length before the first copy: an `Err` leaves the device as it was.
                super::check_arguments(&self.shape, &[#upload_lengths])?;
                #(#upload)*
                #(#fresh_init)*
                self.steps = 0;
                Ok(())
            }

            #step

            /// How launches of several steps run: measured on these grids, fused, or one step a
            /// launch (`Fusion`); after a measurement, the faster of the two. A session whose
            /// fused kernel cannot take its grids (one without a scalar twin, on rows that are
            /// not whole vectors or on planes too small for it) runs one step a launch and, where
            /// it was to measure, says `Single` from its first step.
            pub fn fusion(&self) -> super::super::Fusion {
                self.fusion
            }

            /// Sets how launches of several steps run; `Measure` times them again. Plans of one
            /// step a launch, and fused kernels on grids they cannot take, run one step a launch
            /// whatever it says.
            pub fn set_fusion(&mut self, fusion: super::super::Fusion) {
                self.fusion = fusion;
                #reset_trial
            }

            /// What the session's measurement timed, once it decided (`fusion` then says the
            /// faster way); `None` before, after `set_fusion`, and for sessions that never
            /// measure.
            pub fn measurement(&self) -> Option<super::super::Measurement> {
                #measurement
            }

            #graph_methods

            /// Waits for every queued step.
            pub fn synchronize(&self) -> Result<(), StencilError> {
                dev::synchronize(NAME)
            }

            /// Copies the state grids (each 2-level field followed by its `_prev` level) back.
            pub fn download(&self, #(#download_params),*) -> Result<(), StencilError> {
                // Every length before the first copy: an `Err` leaves the grids as they were.
                super::check_arguments(&self.shape, &[#download_lengths])?;
                #(#download)*
                Ok(())
            }
        }
    }
}
