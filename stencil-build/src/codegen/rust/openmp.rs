//! The `openmp` module of a stencil's Rust API: the OpenMP-C kernels'
//! declarations and the `Kernels` implementation that calls them, with a
//! `Kernels` trait and `run_with` of its own where the kernels compute the
//! stencil's form with its temporaries inline ([`host_form`]).

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::executor::executor;
use super::{Signature, entry_points, kernels_trait};
use crate::backend::openmp::levels::dispatch_symbol;
use crate::backend::openmp::{fused_symbol, fuses, host_form, symbol};
use crate::codegen::names::{slot_name, statement_name};
use crate::ir::Stencil;

/// The `openmp` module of a stencil's Rust API: extern declarations and the
/// `Kernels` implementation calling them.
pub fn stencil_module(st: &Stencil, prefix: &str, sig: &Signature) -> TokenStream {
    let form = host_form(st);
    // The form's statements are not the stencil's: its own `Kernels` and
    // `run_with`, which shadow the stencil's (`use super::*`).
    let own_executor = matches!(form, std::borrow::Cow::Owned(_)).then(|| {
        let (kernels, run_with) = (kernels_trait(&form), executor(&form, sig));
        quote! { #kernels #run_with }
    });
    let st = &*form;
    let block = st
        .tiling
        .openmp
        .block
        .iter()
        .map(|&b| Literal::usize_unsuffixed(b));
    let time_block = Literal::usize_unsuffixed(st.tiling.openmp.time_block);
    let (mut externs, mut methods) = (Vec::new(), Vec::new());
    for s in &st.statements {
        let (e, m) = statement_calls(st, prefix, s);
        externs.extend(e);
        methods.extend(m);
    }
    let entry = entry_points(
        sig,
        &format_ident!("OpenMp"),
        "openmp",
        "the OpenMP-C kernels, on `openmp_max_threads()` threads",
    );
    quote! {
        /// OpenMP-C kernels, compiled with `-O3 -fopenmp -fno-math-errno -ffp-contract=fast`: cache blocks spread over threads,
        /// the contiguous axis vectorised. On x86-64 each call runs the copy compiled for the
        /// instruction-set level `stencil_rt::openmp::isa()` gives (AVX2 and FMA, AVX-512) where the build's target lacks it.
        pub mod openmp {
            use super::*;

            /// The cache blocking and fused steps compiled into these kernels.
            pub const TILING: ::stencil_rt::openmp::OpenmpTiling = ::stencil_rt::openmp::OpenmpTiling { block: &[#(#block),*], time_block: #time_block };

            #own_executor

            #[allow(non_snake_case)]
            unsafe extern "C" {
                #(#externs)*
            }

            struct OpenMp;

            impl Kernels for OpenMp {
                #(#methods)*
            }

            #entry
        }
    }
}

/// The extern declarations of statement `s`'s kernels (its single step and,
/// where the stencil fuses steps, its fused launch) and the `Kernels`
/// methods that call them.
fn statement_calls(
    st: &Stencil,
    prefix: &str,
    s: &crate::ir::Statement,
) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let real = format_ident!("{}", st.dtype.rust());
    let dims = st.dims();
    let rank = Literal::usize_unsuffixed(dims);
    let (mut externs, mut methods) = (Vec::new(), Vec::new());
    // Each kernel is called through its entry point, which runs the copy
    // compiled for the instruction-set level `isa()` gives.
    let sym = format_ident!("{}", dispatch_symbol(&symbol(prefix, st, s)));
    let isa = quote!(::stencil_rt::openmp::isa().code());
    let method = format_ident!("{}", statement_name(st, s));
    let slots: Vec<_> = s
        .slots()
        .into_iter()
        .map(|slot| format_ident!("{}", slot_name(st, slot)))
        .collect();
    let used = s.params_used();
    let c_params: Vec<_> = used
        .iter()
        .map(|&i| format_ident!("p_{}", st.params[i]))
        .collect();
    let fields: Vec<_> = used
        .iter()
        .map(|&i| format_ident!("{}", st.params[i]))
        .collect();
    let n: Vec<_> = (0..dims).map(|a| format_ident!("n{a}")).collect();
    let axis = (0..dims).map(Literal::usize_unsuffixed);
    externs.push(quote! {
        fn #sym(isa: ::std::os::raw::c_int, #(#n: isize,)* out: *mut #real, #(#slots: *const #real,)* #(#c_params: #real),*);
    });
    let p = if used.is_empty() {
        quote!(_p)
    } else {
        quote!(p)
    };
    let axis: Vec<_> = axis.collect();
    methods.push(quote! {
        fn #method(&self, shape: [usize; #rank], out: &mut [#real], #(#slots: &[#real],)* #p: &Params) {
            stencil_safety!("`run_with` checked that every grid holds exactly one value per cell of `shape` (a count that fits in `isize`); the kernel touches only those cells, and `out` is a buffer of its own, never one of the inputs.");
            unsafe { #sym(#isa, #(shape[#axis] as isize,)* out.as_mut_ptr(), #(#slots.as_ptr(),)* #(#p.#fields),*) }
        }
    });
    if fuses(st) {
        let fused = format_ident!("{}", dispatch_symbol(&fused_symbol(prefix, st, s)));
        // A leapfrog's launch also writes the step before its last.
        let leapfrog = st.fields[s.target].has_prev();
        let aux_param = leapfrog.then(|| quote!(aux: *mut #real,));
        let aux_arg = leapfrog.then(|| quote!(aux: &mut [#real],));
        let aux_ptr = leapfrog.then(|| quote!(aux.as_mut_ptr(),));
        externs.push(quote! {
            fn #fused(isa: ::std::os::raw::c_int, #(#n: isize,)* out: *mut #real, #aux_param #(#slots: *const #real,)* #(#c_params: #real,)* steps: ::std::os::raw::c_int) -> ::std::os::raw::c_int;
        });
        methods.push(quote! {
            fn fuse(&self, shape: [usize; #rank], out: &mut [#real], #aux_arg #(#slots: &[#real],)* #p: &Params, steps: u64) -> u64 {
                let steps = steps.min(TILING.time_block as u64) as ::std::os::raw::c_int;
                stencil_safety!("as for a single step: every grid holds one value per cell of `shape`, `out` (and a leapfrog's `aux`) is a buffer of its own; the kernel allocates its own scratch and returns the steps it ran (0: none, `out` untouched).");
                unsafe { #fused(#isa, #(shape[#axis] as isize,)* out.as_mut_ptr(), #aux_ptr #(#slots.as_ptr(),)* #(#p.#fields,)* steps) as u64 }
            }
        });
    }
    (externs, methods)
}
