//! The `reference` module of a stencil's Rust API: plain single-threaded
//! loops over each statement's span, reads spelled by the reference's
//! dialect (bounds-checked slices, `f64::` functions, reads past the edge
//! remapped), the oracle every backend is tested against.

use proc_macro2::{Ident, TokenStream};
use quote::{ToTokens, format_ident, quote};

use super::{Signature, entry_points, ident, kernel_signature, usize_lit};
use crate::analysis::{Analysis, StatementInfo};
use crate::codegen::expr::{self, Dialect, float_literal};
use crate::codegen::index::{Remap, linear_index, offset_index, remapped_read, wrapped_index};
use crate::codegen::names::slot_name;
use crate::ir::{Access, Bound, Boundary, Func, Statement, Stencil};

/// The reference backend: plain loops, the oracle for every other backend.
pub fn reference_module(
    st: &Stencil,
    an: &Analysis,
    sig: &Signature,
) -> Result<TokenStream, syn::Error> {
    let methods = st
        .statements
        .iter()
        .zip(&an.statements)
        .map(|(s, info)| reference_kernel(st, s, info))
        .collect::<Result<Vec<_>, _>>()?;
    let entry = entry_points(
        sig,
        &ident("Reference"),
        "reference",
        "the pure-Rust reference (single-threaded, bounds-checked)",
    );
    Ok(quote! {
        /// The pure-Rust reference implementation: the oracle every backend is tested against.
        pub mod reference {
            use super::*;

            struct Reference;

            impl Kernels for Reference {
                #(#methods)*
            }

            #entry
        }
    })
}

fn reference_kernel(
    st: &Stencil,
    s: &Statement,
    info: &StatementInfo,
) -> Result<TokenStream, syn::Error> {
    let sig = kernel_signature(st, s);
    let dims = st.dims();
    let n: Vec<Ident> = (0..dims).map(|a| format_ident!("n{a}")).collect();
    let i: Vec<Ident> = (0..dims).map(|a| format_ident!("i{a}")).collect();
    let strides = (0..dims.saturating_sub(1)).map(|a| {
        let s = format_ident!("s{a}");
        let (first, rest) = (&n[a + 1], &n[a + 2..]);
        quote! { let #s = #first #(* #rest)*; }
    });
    let cell = syn::parse_str::<syn::Expr>(&linear_index(dims))?;
    let value = syn::parse_str::<syn::Expr>(&expr::print(&s.expr, &RustDialect { st }))?;
    // The cells of the box a statement of the grid outside it leaves out.
    let skip = info.hole.as_ref().map(|hole| {
        let inside = (0..dims).map(|a| {
            let (ia, [from, to]) = (&i[a], hole[a].map(|b| coordinate(b, &n[a])));
            quote!((#from..#to).contains(&#ia))
        });
        quote! {
            if #(#inside)&&* {
                continue;
            }
        }
    });
    let mut body = quote! {
        #skip
        let c = #cell;
        out[c] = #value;
    };
    for a in (0..dims).rev() {
        let (ia, [from, to]) = (&i[a], info.bounds[a].map(|b| coordinate(b, &n[a])));
        body = quote! { for #ia in #from..#to { #body } };
    }
    let strides: Vec<TokenStream> = strides.collect();
    // An extent no loop bound, stride or remapped read names (a region's
    // bounds from the low edge) is bound as `_`.
    let used = quote! { #(#strides)* #body };
    let extents = n.iter().map(|na| {
        if uses_ident(&used, na) {
            quote!(#na)
        } else {
            quote!(_)
        }
    });
    Ok(quote! {
        #sig {
            let [#(#extents),*] = shape;
            #(#strides)*
            #body
        }
    })
}

/// Whether `tokens` hold the identifier `name`.
fn uses_ident(tokens: &TokenStream, name: &Ident) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => &i == name,
        proc_macro2::TokenTree::Group(g) => uses_ident(&g.stream(), name),
        _ => false,
    })
}

/// A bound's coordinate on the axis of extent `n`.
fn coordinate(b: Bound, n: &Ident) -> TokenStream {
    match b {
        Bound::Low(k) => usize_lit(k).into_token_stream(),
        Bound::High(0) => quote!(#n),
        Bound::High(k) => {
            let k = usize_lit(k);
            quote!(#n - #k)
        }
    }
}

/// The reference's spelling: bounds-checked slice reads, `f64::` functions.
struct RustDialect<'a> {
    st: &'a Stencil,
}

impl Dialect for RustDialect<'_> {
    fn read(&self, a: &Access) -> String {
        let buf = slot_name(self.st, a.slot);
        match &self.st.boundary {
            Boundary::Fixed => format!("{buf}[{}]", offset_index(&a.offset)),
            Boundary::Periodic => format!(
                "{buf}[{}]",
                wrapped_index(&a.offset, |ax, d| format!("rt::wrap(i{ax}, {d}, n{ax})"))
            ),
            Boundary::Mixed(sides) => remapped_read(sides, &a.offset, &buf, self),
        }
    }

    fn param(&self, index: usize) -> String {
        format!("p.{}", self.st.params[index])
    }

    fn call(&self, func: Func, args: &[String]) -> String {
        let real = self.st.dtype.rust();
        let name = match func {
            Func::Fma => "mul_add",
            f => f.name(),
        };
        format!("{real}::{name}({})", args.join(", "))
    }

    fn powi(&self, base: &str, n: i32) -> String {
        format!("rt::powi({base}, {n})")
    }

    fn literal(&self, value: f64) -> String {
        float_literal(value, self.st.dtype, "")
    }
}

impl Remap for RustDialect<'_> {
    fn wrap(&self, ax: usize, d: i64) -> String {
        format!("rt::wrap(i{ax}, {d}, n{ax})")
    }

    fn reflect(&self, ax: usize, d: i64) -> String {
        format!("rt::reflect(i{ax}, {d}, n{ax})")
    }

    fn inside(&self, ax: usize, d: i64) -> String {
        if d < 0 {
            format!("i{ax} >= {}", -d)
        } else {
            format!("i{ax} + {d} < n{ax}")
        }
    }

    fn param(&self, p: usize) -> String {
        format!("p.{}", self.st.params[p])
    }

    fn select(&self, cond: &str, then: &str, otherwise: &str) -> String {
        // An operand as it is: parentheses around a whole right-hand side
        // would be `unused_parens`.
        format!("if {cond} {{ {then} }} else {{ {otherwise} }}")
    }
}
