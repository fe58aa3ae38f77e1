//! The `openmp` module of a stencil's Rust API: the OpenMP-C kernels'
//! declarations and the `Kernels` implementation that calls them, with a
//! `Kernels` trait and `run_with` of its own where the kernels compute the
//! stencil's form with its temporaries inline ([`host_form`]).

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::executor::{executor, step_executor};
use super::{Signature, entry_points, kernels_trait};
use crate::backend::openmp::levels::dispatch_symbol;
use crate::backend::openmp::{fused_symbol, fuses, host_form, step, symbol};
use crate::codegen::names::{slot_name, statement_name};
use crate::ir::Stencil;

/// The `openmp` module of a stencil's Rust API: extern declarations and the
/// `Kernels` implementation calling them.
pub fn stencil_module(st: &Stencil, prefix: &str, sig: &Signature) -> TokenStream {
    let form = host_form(st);
    let st = &*form;
    if step::one_nest(st) {
        return module(st, sig, step_calls(st, prefix, sig));
    }
    let (mut externs, mut methods) = (Vec::new(), Vec::new());
    for s in &st.statements {
        let (e, m) = statement_calls(st, prefix, s);
        externs.extend(e);
        methods.extend(m);
    }
    // The form's statements are not the stencil's: its own `Kernels` and
    // `run_with`, which shadow the stencil's (`use super::*`).
    let own = matches!(form, std::borrow::Cow::Owned(_)).then(|| {
        let (kernels, run_with) = (kernels_trait(st), executor(st, sig));
        quote! { #kernels #run_with }
    });
    module(
        st,
        sig,
        Calls {
            own,
            externs,
            methods,
        },
    )
}

/// What a module calls its kernels through: the extern declarations, the
/// `Kernels` methods calling them, and the trait and `run_with` of its
/// own where the stencil's do not fit them.
struct Calls {
    own: Option<TokenStream>,
    externs: Vec<TokenStream>,
    methods: Vec<TokenStream>,
}

/// The module around `calls`.
fn module(st: &Stencil, sig: &Signature, calls: Calls) -> TokenStream {
    let Calls {
        own,
        externs,
        methods,
    } = calls;
    let block = st
        .tiling
        .openmp
        .block
        .iter()
        .map(|&b| Literal::usize_unsuffixed(b));
    let time_block = Literal::usize_unsuffixed(st.tiling.openmp.time_block);
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

            #own

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

/// The calls of a step in one loop nest (`backend::openmp::step`): its
/// kernel's declaration, a `Kernels` of one method, `step`, and the
/// `run_with` that calls it once a step.
fn step_calls(st: &Stencil, prefix: &str, sig: &Signature) -> Calls {
    let real = format_ident!("{}", st.dtype.rust());
    let rank = Literal::usize_unsuffixed(st.dims());
    let sym = format_ident!("{}", dispatch_symbol(&step::symbol(prefix, st)));
    let n: Vec<_> = (0..st.dims()).map(|a| format_ident!("n{a}")).collect();
    let axis: Vec<_> = (0..st.dims()).map(Literal::usize_unsuffixed).collect();
    let outs: Vec<_> = (0..st.statements.len())
        .map(|k| format_ident!("{}", step::output(st, k)))
        .collect();
    let slots: Vec<_> = step::slots(st)
        .into_iter()
        .map(|slot| format_ident!("{}", slot_name(st, slot)))
        .collect();
    let params = st.params_used();
    let c_params: Vec<_> = params
        .iter()
        .map(|&i| format_ident!("p_{}", st.params[i]))
        .collect();
    let fields: Vec<_> = params
        .iter()
        .map(|&i| format_ident!("{}", st.params[i]))
        .collect();
    let p = if params.is_empty() {
        quote!(_p)
    } else {
        quote!(p)
    };
    let head = quote! {
        fn step(&self, shape: [usize; #rank], #(#outs: &mut [#real],)* #(#slots: &[#real],)* #p: &Params)
    };
    let run_with = step_executor(st, sig);
    Calls {
        own: Some(quote! {
            /// The OpenMP-C kernels of a step in one loop nest.
            trait Kernels {
                /// Computes every field the step updates, each into its `out_<field>`, from the values the step started from.
                #head;
            }
            #run_with
        }),
        externs: vec![quote! {
            fn #sym(isa: ::std::os::raw::c_int, #(#n: isize,)* #(#outs: *mut #real,)* #(#slots: *const #real,)* #(#c_params: #real),*);
        }],
        methods: vec![quote! {
            #head {
                stencil_safety!("`run_with` checked that every grid holds exactly one value per cell of `shape` (a count that fits in `isize`); the kernel touches only those cells, and each output is a buffer of its own, never one of the inputs or another output.");
                unsafe { #sym(::stencil_rt::openmp::isa().code(), #(shape[#axis] as isize,)* #(#outs.as_mut_ptr(),)* #(#slots.as_ptr(),)* #(#p.#fields),*) }
            }
        }],
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
