//! `run_arrays`: a stencil's [`run`](super) on `ndarray` arrays, emitted
//! where the crate asks for it (its feature `ndarray`, or
//! `Config::ndarray`). The shape is the first array's; every other array
//! must have it, and every array must be in standard layout, before the
//! slice API runs.

use proc_macro2::TokenStream;
use quote::quote;

use super::{docs, ident};
use crate::ir::{Role, Stencil};

/// `run_arrays` of `st`, calling the stencil module's `run`.
pub fn run_arrays(st: &Stencil) -> TokenStream {
    let view = quote!(
        ::stencil_rt::ndarray::ArrayView<'_, Real, ::stencil_rt::ndarray::Dim<[usize; DIMS]>>
    );
    let view_mut = quote!(
        ::stencil_rt::ndarray::ArrayViewMut<'_, Real, ::stencil_rt::ndarray::Dim<[usize; DIMS]>>
    );
    // The arguments of `run`, in order: each grid, a two-level field's `_prev` after it.
    let mut grids = Vec::new();
    for (_, f) in st.arguments() {
        grids.push((f.name.clone(), f.role != Role::Input));
        if f.has_prev() {
            grids.push((format!("{}_prev", f.name), true));
        }
    }
    let params = grids.iter().map(|(name, state)| {
        let id = ident(name);
        if *state {
            quote!(mut #id: #view_mut)
        } else {
            quote!(#id: #view)
        }
    });
    let first = ident(&grids[0].0);
    let checks = grids[1..].iter().map(|(name, _)| {
        let id = ident(name);
        quote! { ::stencil_rt::arrays::check_shape(NAME, #name, &shape, &#id)?; }
    });
    let slices = grids.iter().map(|(name, state)| {
        let id = ident(name);
        if *state {
            quote! { let #id = ::stencil_rt::arrays::slice_mut(NAME, #name, &mut #id)?; }
        } else {
            quote! { let #id = ::stencil_rt::arrays::slice(NAME, #name, &#id)?; }
        }
    });
    let call = grids.iter().map(|(name, _)| ident(name));
    let doc = docs(
        "[`run`] on `ndarray` views (`a.view_mut()`, `b.view()`), each of [`DIMS`] axes in \
         [`AXES`] order: the shape is the first array's. An array of another shape is \
         [`StencilError::ShapeMismatch`], one not in standard layout (row-major and contiguous) \
         [`StencilError::NotContiguous`], before anything runs.",
    );
    quote! {
        #doc
        pub fn run_arrays(#(#params,)* params: Params, steps: u64) -> Result<(), StencilError> {
            let shape: [usize; DIMS] = ::stencil_rt::arrays::shape(&#first);
            #(#checks)*
            #(#slices)*
            // `self::`: a grid may be named `run`.
            self::run(#(#call,)* shape, params, steps)
        }
    }
}
