//! The module shared by every stencil of a crate for one dialect: the
//! runtime calls its generated runtime source exports, handed to
//! `stencil-rt` as a `Runtime`, and the names the sessions use for
//! `stencil-rt`'s buffers, graphs and checks of that runtime.

use heck::ToUpperCamelCase;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::backend::gpu::Dialect;
use crate::codegen::rust::docs;

/// The runtime calls of `runtime_source`, each with its Rust parameters.
const CALLS: [(&str, &str); 27] = [
    ("malloc", "ptr: *mut *mut c_void, bytes: usize"),
    ("free", "ptr: *mut c_void"),
    ("host_alloc", "ptr: *mut *mut c_void, bytes: usize"),
    ("host_free", "ptr: *mut c_void"),
    (
        "upload",
        "dst: *mut c_void, src: *const c_void, bytes: usize",
    ),
    (
        "download",
        "dst: *mut c_void, src: *const c_void, bytes: usize",
    ),
    ("copy", "dst: *mut c_void, src: *const c_void, bytes: usize"),
    ("zero", "ptr: *mut c_void, bytes: usize"),
    ("synchronize", ""),
    ("device_count", "count: *mut c_int"),
    ("device_index", "index: *mut c_int"),
    ("set_device", "index: c_int"),
    (
        "device_identity",
        "index: c_int, name: *mut c_char, name_len: c_int, arch: *mut c_char, arch_len: c_int",
    ),
    ("stream_create", "stream: *mut *mut c_void"),
    ("stream_destroy", "stream: *mut c_void"),
    ("begin_capture", "stream: *mut c_void"),
    (
        "end_capture",
        "stream: *mut c_void, graph: *mut *mut c_void",
    ),
    ("instantiate", "exec: *mut *mut c_void, graph: *mut c_void"),
    ("graph_destroy", "graph: *mut c_void"),
    ("replay", "exec: *mut c_void"),
    ("exec_destroy", "exec: *mut c_void"),
    ("exec_update", "exec: *mut c_void, graph: *mut c_void"),
    ("error_string", "code: c_int"),
    (
        "box_copy",
        "grid: *mut c_void, packed: *mut c_void, bytes: c_int, n: *const i64, lo: *const i64, ext: *const i64, unpack: c_int",
    ),
    ("ipc_handle", "ptr: *mut c_void, handle: *mut u8"),
    ("ipc_open", "handle: *const u8, ptr: *mut *mut c_void"),
    ("ipc_close", "ptr: *mut c_void"),
];

/// The module of dialect `d` shared by every stencil of a crate (`prefix`
/// names its symbols), and the crate's `<dialect>_device_count`.
pub fn runtime_module(prefix: &str, d: &Dialect) -> TokenStream {
    let module = format_ident!("stencil_{}", d.name);
    let runtime = format_ident!("{}", d.name.to_upper_camel_case());
    let backend = d.name;
    let declarations = CALLS.iter().map(|(name, params)| {
        let symbol = format_ident!("{prefix}_{}_{name}", d.name);
        let params: TokenStream = params.parse().expect("parameters are Rust");
        let returns = if *name == "error_string" {
            quote!(*const c_char)
        } else {
            quote!(c_int)
        };
        quote! { fn #symbol(#params) -> #returns; }
    });
    let table = CALLS.iter().map(|(name, _)| {
        let (field, symbol) = (
            format_ident!("{name}"),
            format_ident!("{prefix}_{}_{name}", d.name),
        );
        quote! { #field: #symbol }
    });
    let device_fns = device_functions(d, &module, &runtime);
    let runtime_doc = docs(&format!(
        "The {} runtime calls of this crate's generated runtime source.",
        d.title
    ));
    quote! {
        #device_fns

        /// The runtime of one GPU backend, and `stencil-rt`'s buffers and graphs of it.
        #[doc(hidden)]
        pub mod #module {
            use ::std::os::raw::{c_char, c_int, c_void};
            use ::stencil_rt::gpu;

            unsafe extern "C" {
                #(#declarations)*
            }

            #runtime_doc
            pub struct #runtime;

            stencil_safety!("each call is the runtime function of its name, compiled from this crate's generated runtime source with the kernels.");
            unsafe impl gpu::Runtime for #runtime {
                const BACKEND: &'static str = #backend;
                const CALLS: gpu::Calls = gpu::Calls { #(#table),* };
            }

            pub type Buffer<T> = gpu::Buffer<#runtime, T>;
            pub type Levels<T> = gpu::Levels<#runtime, T>;
            pub type Graphs = gpu::Graphs<#runtime>;
            pub use ::stencil_rt::gpu::Trial;

            /// `Ok` for status 0, else the runtime's message for `call`.
            pub fn check(stencil: &'static str, call: &'static str, code: c_int) -> Result<(), ::stencil_rt::StencilError> {
                gpu::check::<#runtime>(stencil, call, code)
            }

            /// The calling thread's current device, as tuning files name it.
            pub fn device() -> Result<gpu::Device, ::stencil_rt::StencilError> {
                gpu::Device::current::<#runtime>()
            }

            /// Waits for every launch, copy and replay queued so far; reports their errors.
            pub fn synchronize(stencil: &'static str) -> Result<(), ::stencil_rt::StencilError> {
                gpu::synchronize::<#runtime>(stencil)
            }
        }
    }
}

/// The crate's public `<dialect>_device_count` and `<dialect>_set_device`,
/// through the runtime `runtime` of `module`.
fn device_functions(d: &Dialect, module: &Ident, runtime: &Ident) -> TokenStream {
    let count_fn = format_ident!("{}_device_count", d.name);
    let count_doc = docs(&format!(
        "The number of {} devices, or the runtime's error (for instance when no driver or device is present).",
        d.title
    ));
    let set_fn = format_ident!("{}_set_device", d.name);
    let set_doc = docs(&format!(
        "Makes {} device `index` the calling thread's current one, where its sessions are made and run \
         (the runtime's error for an index past the last device).",
        d.title
    ));
    quote! {
        #count_doc
        pub fn #count_fn() -> Result<usize, StencilError> {
            ::stencil_rt::gpu::device_count::<#module::#runtime>()
        }

        #set_doc
        pub fn #set_fn(index: usize) -> Result<(), StencilError> {
            ::stencil_rt::gpu::set_device::<#module::#runtime>(index)
        }
    }
}
