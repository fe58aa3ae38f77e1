//! `run_with`, the backend-independent executor of a stencil's Rust API:
//! its argument checks, time levels and scratch grids, and the step loop
//! that calls each statement's kernel (or the fused steps' kernel).

use proc_macro2::{Ident, TokenStream};
use quote::{ToTokens, format_ident, quote};

use super::{Signature, docs, grid_lengths, ident, usize_lit};
use crate::backend::openmp::fuses;
use crate::codegen::names::statement_name;
use crate::ir::{Boundary, Role, Statement, Stencil, Version};

/// `run_with`: checks the arguments, sets up levels and temps, and runs the steps.
pub fn executor(st: &Stencil, sig: &Signature) -> TokenStream {
    let states = state_idents(st);
    let steps = step_loop(st, &states);
    executor_with(st, sig, steps)
}

/// [`executor`] of kernels that compute a step in one call, `step`
/// (`backend::openmp::step`): every field the step updates written at
/// once, from the values it started from.
pub fn step_executor(st: &Stencil, sig: &Signature) -> TokenStream {
    let states = state_idents(st);
    let ios: Vec<Ident> = st
        .statements
        .iter()
        .map(|s| format_ident!("{}__io", st.fields[s.target].name))
        .collect();
    let targets: Vec<Ident> = st
        .statements
        .iter()
        .map(|s| ident(&st.fields[s.target].name))
        .collect();
    // A two-level field's frame goes into the level about to be written.
    let frames = st
        .statements
        .iter()
        .zip(&ios)
        .filter(|(s, _)| st.boundary != Boundary::Periodic && st.fields[s.target].has_prev())
        .map(|(_, io)| quote! { rt::copy_frame(#io.cur, #io.next, &shape, &RADIUS); });
    let slots = crate::backend::openmp::step::slots(st)
        .into_iter()
        .map(|slot| {
            let f = &st.fields[slot.field];
            let io = format_ident!("{}__io", f.name);
            match (f.role, slot.version) {
                (Role::Input, _) => ident(&f.name).into_token_stream(),
                (_, Version::Prev) => quote!(#io.prev),
                _ => quote!(#io.cur),
            }
        });
    let steps = quote! {
        for _ in 0..steps {
            {
                #(let #ios = #targets.io();)*
                #(#frames)*
                kernels.step(shape, #(#ios.next,)* #(#slots,)* &params);
            }
            #(#states.advance();)*
        }
    };
    executor_with(st, sig, steps)
}

/// The state fields' names.
fn state_idents(st: &Stencil) -> Vec<Ident> {
    st.fields
        .iter()
        .filter(|f| matches!(f.role, Role::State { .. }))
        .map(|f| ident(&f.name))
        .collect()
}

/// `run_with` running the steps `steps` (tokens that use `kernels`).
fn executor_with(st: &Stencil, sig: &Signature, steps: TokenStream) -> TokenStream {
    let args = &sig.params;
    let lengths = grid_lengths(st);
    let work = &sig.work;
    // The workspace's grids: a level of each state field, each temporary.
    let scratch: Vec<&crate::ir::Field> =
        st.fields.iter().filter(|f| f.role != Role::Input).collect();
    let mut scratch_names: Vec<Ident> = scratch
        .iter()
        .map(|f| format_ident!("{}__next", f.name))
        .collect();
    scratch_names.extend(
        scratch
            .iter()
            .filter(|f| takes_spare(st, f))
            .map(|f| format_ident!("{}__spare", f.name)),
    );
    let count = usize_lit(scratch_names.len());
    let setup = st.fields.iter().map(|f| level_setup(st, f));
    let states = state_idents(st);
    let doc = docs(&format!(
        "Checks the arguments, then runs `steps` steps with `kernels`, its scratch grids from `work`.{}",
        sig.doc
    ));
    quote! {
        #doc
        #[allow(non_snake_case)]
        fn run_with(kernels: &impl Kernels, #work: &mut Workspace, #args) -> Result<(), StencilError> {
            let cells = self::check_arguments(&shape, &[#lengths])?;
            if steps == 0 {
                return Ok(());
            }
            let [#(#scratch_names),*] = #work.grids::<#count>(cells);
            #(#setup)*
            #steps
            #(#states.finish();)*
            Ok(())
        }
    }
}

/// Whether field `f` takes a spare level: a leapfrog whose steps fuse,
/// as a launch writes two.
fn takes_spare(st: &Stencil, f: &crate::ir::Field) -> bool {
    fuses(st) && f.has_prev()
}

/// How field `f`'s grids enter a run: a temporary's scratch zeroed, a
/// state's levels (with its scratch, and a spare where fused leapfrog steps
/// write two), an input as it is.
fn level_setup(st: &Stencil, f: &crate::ir::Field) -> TokenStream {
    let id = ident(&f.name);
    let scratch = format_ident!("{}__next", f.name);
    let prev = format_ident!("{}_prev", f.name);
    match f.role {
        Role::Input => quote!(),
        // Written on its region before any read, zeroed elsewhere as a new grid would be.
        Role::Temp => quote! {
            rt::fill(#scratch, 0.0);
            let #id = #scratch;
        },
        Role::State { .. } if takes_spare(st, f) => {
            let spare = format_ident!("{}__spare", f.name);
            quote! {
                let mut #id = rt::Levels::with_spare(Vec::from([#prev, #id, #scratch, #spare]));
            }
        }
        // Each step copies the frame into the level it computes.
        Role::State { .. } if f.has_prev() => quote! {
            let mut #id = rt::Levels::new(Vec::from([#prev, #id, #scratch]));
        },
        // No step writes a fixed frame: both buffers take it once (a
        // periodic step writes every cell).
        Role::State { .. } => {
            let frame = (st.boundary != Boundary::Periodic)
                .then(|| quote! { rt::copy_frame(#id, #scratch, &shape, &RADIUS); });
            quote! {
                #frame
                let mut #id = rt::Levels::new(Vec::from([#id, #scratch]));
            }
        }
    }
}

/// The run's steps: fused launches where the backend may fuse them, else
/// each statement's kernel a step, then each state advanced.
fn step_loop(st: &Stencil, states: &[Ident]) -> TokenStream {
    match &st.statements[..] {
        [s] if fuses(st) => fused_steps(st, s),
        _ => {
            let firsts: Vec<bool> = (0..st.statements.len())
                .map(|k| k == 0 || st.statements[k - 1].target != st.statements[k].target)
                .collect();
            let body = st
                .statements
                .iter()
                .zip(&firsts)
                .map(|(s, &first)| statement_call(st, s, first, Frame::FirstSteps));
            let step = if st
                .statements
                .iter()
                .zip(&firsts)
                .any(|(s, &first)| copies_frame(st, s, first))
            {
                quote!(steps__done)
            } else {
                quote!(_)
            };
            quote! {
                for #step in 0..steps {
                    #(#body)*
                    #(#states.advance();)*
                }
            }
        }
    }
}

/// The steps of a stencil whose backend may fuse them: each round asks
/// the kernels to fuse what is left, and runs one step where they do not
/// (its counters named with `__`, which no name of a spec has).
fn fused_steps(st: &Stencil, s: &Statement) -> TokenStream {
    if st.fields[s.target].has_prev() {
        return fused_leapfrog_steps(st, s);
    }
    let method = ident(&statement_name(st, s));
    let tid = ident(&st.fields[s.target].name);
    let slots: Vec<TokenStream> = slot_args(st, s).collect();
    // The field has one level: both buffers start as copies of it, so the
    // frame, which no step writes, is already in each.
    quote! {
        let mut steps__done = 0;
        while steps__done < steps {
            let io = #tid.io();
            let steps__ran = match kernels.fuse(shape, io.next, #(#slots,)* &params, steps - steps__done) {
                0 => {
                    kernels.#method(shape, io.next, #(#slots,)* &params);
                    1
                }
                steps__ran => steps__ran,
            };
            #tid.advance();
            steps__done += steps__ran;
        }
    }
}

/// [`fused_steps`] of a leapfrog: each launch leaves its last two steps in
/// the two free buffers of four (`stencil_rt::host::Levels::with_spare`,
/// `rt::Levels` to the generated code), which then become the previous and
/// current levels; every level from the first step on has the current
/// level's frame, copied into both first. No step writes the frame, so
/// the first two rounds give it to all four buffers (the first round's two,
/// then the caller's previous level among the second's), and the rest copy
/// nothing.
fn fused_leapfrog_steps(st: &Stencil, s: &Statement) -> TokenStream {
    let tid = ident(&st.fields[s.target].name);
    let slots: Vec<TokenStream> = slot_args(st, s).collect();
    // A round's copies give the single step's level the frame first; a
    // periodic grid has none (every step writes every cell).
    let single = statement_call(st, s, true, Frame::Copied);
    let (rounds, copies, counted) = if st.boundary == Boundary::Periodic {
        (quote!(), quote!(), quote!())
    } else {
        (
            quote!(let mut rounds__done = 0;),
            quote! {
                if rounds__done < 2 {
                    rt::copy_frame(io.cur, io.aux, &shape, &RADIUS);
                    rt::copy_frame(io.cur, io.out, &shape, &RADIUS);
                }
            },
            quote!(rounds__done += 1;),
        )
    };
    quote! {
        let mut steps__done = 0;
        #rounds
        while steps__done < steps {
            let steps__ran = {
                let io = #tid.fused();
                #copies
                kernels.fuse(shape, io.out, io.aux, #(#slots,)* &params, steps - steps__done)
            };
            #counted
            if steps__ran == 0 {
                #single
                #tid.advance();
                steps__done += 1;
            } else {
                #tid.advance_fused();
                steps__done += steps__ran;
            }
        }
    }
}

/// Whether a step copies the frame into the level statement `s` writes
/// (`first`: the first of its field's statements): a leapfrog's three
/// levels, on a grid whose steps leave the frame as it is.
fn copies_frame(st: &Stencil, s: &Statement, first: bool) -> bool {
    let target = &st.fields[s.target];
    st.boundary != Boundary::Periodic && target.role != Role::Temp && target.has_prev() && first
}

/// The arguments a call of `s`'s kernel passes for its slots.
fn slot_args(st: &Stencil, s: &Statement) -> impl Iterator<Item = TokenStream> {
    s.slots().into_iter().map(move |slot| {
        let f = &st.fields[slot.field];
        let id = ident(&f.name);
        let own = slot.field == s.target;
        match (f.role, slot.version) {
            (Role::Input, _) => quote!(#id),
            (Role::Temp, _) => quote!(&*#id),
            (_, Version::Start) if own => quote!(io.cur),
            (_, Version::Prev) if own => quote!(io.prev),
            (_, Version::Start) => quote!(#id.cur()),
            (_, Version::Prev) => quote!(#id.prev()),
            (_, Version::Updated) => quote!(#id.next()),
        }
    })
}

/// Whether a leapfrog's single step copies the frame into the level it writes.
#[derive(Clone, Copy, PartialEq)]
enum Frame {
    /// In a run's first two steps, after which each of the three levels has it.
    FirstSteps,
    /// Never: the step's level has it already.
    Copied,
}

/// The call of statement `s`'s kernel; `first` where no statement of its
/// field's regions came before it this step.
fn statement_call(st: &Stencil, s: &Statement, first: bool, frame: Frame) -> TokenStream {
    let method = ident(&statement_name(st, s));
    let target = &st.fields[s.target];
    let tid = ident(&target.name);
    let slot_args = slot_args(st, s);
    if target.role == Role::Temp {
        return quote! { kernels.#method(shape, #tid, #(#slot_args,)* &params); };
    }
    // The frame goes into the level about to be written before the first
    // of the field's statements writes it, not over what an earlier region's
    // wrote. No step writes it: once each of a leapfrog's three levels has
    // it (the first two steps write the two that may not), the rest keep
    // it. Copied every step by one thread walking every row's ends, it had
    // held acoustic25 f32 on 16 cores at 49%-52% of its bound (78%-86%
    // without: docs/design-notes.md, "A leapfrog's frame").
    let frame = (frame == Frame::FirstSteps && copies_frame(st, s, first)).then(|| {
        quote! {
            if steps__done < 2 {
                rt::copy_frame(io.cur, io.next, &shape, &RADIUS);
            }
        }
    });
    quote! {
        {
            let io = #tid.io();
            #frame
            kernels.#method(shape, io.next, #(#slot_args,)* &params);
        }
    }
}
