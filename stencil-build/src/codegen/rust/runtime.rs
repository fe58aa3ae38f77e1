//! What the generated file holds once for all its stencils: the `stencil-rt`
//! items a user meets, re-exported at the file's root (the error type, the
//! plans' descriptions), the OpenMP thread control, and each GPU dialect's
//! runtime calls (`gpu::runtime_module`). The runtime itself is
//! `stencil-rt`'s; what is here is what names this crate's own symbols.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{Linked, docs};

/// The generated file's items before the stencils' modules.
pub(super) fn preamble(linked: &Linked) -> TokenStream {
    let openmp = linked.openmp.as_ref().map(|prefix| openmp_preamble(prefix));
    let runtimes: Vec<TokenStream> = linked
        .gpus()
        .map(|g| super::gpu::runtime_module(&g.prefix, &g.dialect))
        .collect();
    let gpu = (!runtimes.is_empty()).then(|| {
        quote! {
            pub use ::stencil_rt::gpu::{Device, Fusion, GpuTiling, Measurement, Plan, Tuned};
            #(#runtimes)*
        }
    });
    quote! {
        pub use ::stencil_rt::StencilError;

        #openmp
        #gpu
    }
}

/// `OpenmpTiling`, and `openmp_max_threads` / `openmp_set_threads` through
/// this crate's OpenMP kernels' library.
fn openmp_preamble(prefix: &str) -> TokenStream {
    let get = format_ident!("{prefix}_omp_max_threads");
    let set = format_ident!("{prefix}_omp_set_threads");
    let set_doc = docs(&format!(
        "Sets the threads the OpenMP kernels use when called from this thread \
         (`omp_set_num_threads`) and returns the count set: `threads`, but at least 1 \
         and at most {} a processor and `OMP_THREAD_LIMIT`.",
        crate::backend::openmp::MAX_THREADS_PER_PROCESSOR
    ));
    quote! {
        pub use ::stencil_rt::openmp::OpenmpTiling;

        /// The OpenMP runtime of this crate's kernels.
        #[doc(hidden)]
        pub struct StencilOpenmp;

        impl ::stencil_rt::openmp::Threads for StencilOpenmp {
            fn max_threads() -> ::std::os::raw::c_int {
                unsafe extern "C" {
                    fn #get() -> ::std::os::raw::c_int;
                }
                stencil_safety!("a plain query of the OpenMP runtime.");
                unsafe { #get() }
            }

            fn set_threads(threads: ::std::os::raw::c_int) -> ::std::os::raw::c_int {
                unsafe extern "C" {
                    fn #set(threads: ::std::os::raw::c_int) -> ::std::os::raw::c_int;
                }
                stencil_safety!("sets an OpenMP internal control variable of the calling thread.");
                unsafe { #set(threads) }
            }
        }

        /// Threads the OpenMP kernels use when called from this thread
        /// (`omp_get_max_threads`; set by `OMP_NUM_THREADS` or [`openmp_set_threads`]).
        pub fn openmp_max_threads() -> usize {
            ::stencil_rt::openmp::max_threads::<StencilOpenmp>()
        }

        #set_doc
        pub fn openmp_set_threads(threads: usize) -> usize {
            ::stencil_rt::openmp::set_threads::<StencilOpenmp>(threads)
        }
    }
}
