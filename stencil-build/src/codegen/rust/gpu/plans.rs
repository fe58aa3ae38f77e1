//! The plans a stencil's GPU module carries: `PLANS` (the spec's own
//! first, then one per device its tuning file lists) and how a `Session`
//! picks one. With one plan the module's `Session` is that plan's; with
//! several, each plan's kernels and session live in a module of their own
//! (`own`, `tuned_1`, ...) and the module's `Session` holds the one picked
//! for the device, forwarding every call to it.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::codegen::rust::{Compiled, docs, grid_names_where, ident, usize_lit};
use crate::ir::{Role, Stencil};

/// The module holding plan `k`'s kernels and session, where a stencil has
/// several plans.
pub fn plan_module(k: usize) -> Ident {
    match k {
        0 => ident("own"),
        _ => format_ident!("tuned_{k}"),
    }
}

/// `pub const PLANS`: each plan's tiling (`TILING` of its module, or of the
/// GPU module itself where it has one plan) and where it was tuned.
pub fn plans_const(plans: &[Compiled]) -> TokenStream {
    let entries = plans.iter().enumerate().map(|(k, c)| {
        let tiling = if plans.len() == 1 {
            quote!(TILING)
        } else {
            let m = plan_module(k);
            quote!(#m::TILING)
        };
        let tuned = match &c.tuned {
            None => quote!(None),
            Some(e) => {
                let (device, arch, date) = (&e.device, &e.arch, &e.date);
                let shape = e.shape.iter().map(|&n| usize_lit(n));
                let (steps, gcells, own) = (e.steps, e.gcells, e.own_gcells);
                quote! {
                    Some(::stencil_rt::gpu::Tuned {
                        device: #device,
                        arch: #arch,
                        shape: &[#(#shape),*],
                        steps: #steps,
                        gcells: #gcells,
                        own_gcells: #own,
                        date: #date,
                    })
                }
            }
        };
        quote!(::stencil_rt::gpu::Plan { tiling: #tiling, tuned: #tuned })
    });
    quote! {
        /// The plans these kernels carry: the spec's own first, then one per device the
        /// tuning file beside the spec lists. A session runs the plan tuned for its device,
        /// else the spec's own.
        pub const PLANS: &[::stencil_rt::gpu::Plan] = &[#(#entries),*];
    }
}

/// The methods a session of a module of one plan adds to its plan's:
/// which plan it runs, and `for_device`, which has no other plan to pick.
pub fn one_plan_methods(dims: usize) -> TokenStream {
    let dims = usize_lit(dims);
    quote! {
        impl Session {
            /// A session for a device of this name and architecture: with this module's one
            /// plan, the same as `new`.
            pub fn for_device(shape: [usize; #dims], _device: &::stencil_rt::gpu::Device) -> Result<Self, StencilError> {
                Self::new(shape)
            }

            /// The plan the session runs: `PLANS[0]`, the spec's own.
            pub fn plan(&self) -> &'static ::stencil_rt::gpu::Plan {
                &PLANS[0]
            }
        }
    }
}

/// The module's `Session` where it carries several plans: the session of
/// the plan picked for the device, each call forwarded to it.
pub fn planned_session(st: &Stencil, plans: usize) -> TokenStream {
    let dims = usize_lit(st.dims());
    let real = ident(st.dtype.rust());
    let variants: Vec<Ident> = (0..plans).map(variant).collect();
    let modules: Vec<Ident> = (0..plans).map(plan_module).collect();
    let indices: Vec<proc_macro2::Literal> = (0..plans).map(usize_lit).collect();
    let forwarders = forwarders(st, &variants);
    let doc = docs(&format!(
        "The grids of `{}` resident on the device, stepped with the plan of [`PLANS`] tuned for the device \
         (else the spec's own): upload once, step many times, download when needed. Device memory is freed \
         on drop, also when a call fails half-way.",
        st.name
    ));
    quote! {
        #doc
        pub struct Session(Planned);

        /// The session of each plan.
        enum Planned {
            #(#variants(#modules::Session),)*
        }

        impl Session {
            /// Allocates every grid (zeroed) for `shape` on the calling thread's current
            /// device, with the plan tuned for that device (else the spec's own).
            pub fn new(shape: [usize; #dims]) -> Result<Self, StencilError> {
                Self::for_device(shape, &dev::device()?)
            }

            /// `new` with the plan tuned for a device of this name and architecture (else the
            /// spec's own), whatever device the session runs on.
            pub fn for_device(shape: [usize; #dims], device: &::stencil_rt::gpu::Device) -> Result<Self, StencilError> {
                Self::with_plan(shape, ::stencil_rt::gpu::Plan::pick(PLANS, device))
            }

            /// `new` with `PLANS[plan]`, whatever device the session runs on
            /// (`StencilError::NoSuchPlan` past the last).
            pub fn with_plan(shape: [usize; #dims], plan: usize) -> Result<Self, StencilError> {
                Ok(Session(match plan {
                    #(#indices => Planned::#variants(#modules::Session::new(shape)?),)*
                    _ => return Err(StencilError::NoSuchPlan { stencil: NAME, plan, plans: PLANS.len() }),
                }))
            }

            /// The plan the session runs, one of `PLANS`.
            pub fn plan(&self) -> &'static ::stencil_rt::gpu::Plan {
                match &self.0 {
                    #(Planned::#variants(_) => &PLANS[#indices],)*
                }
            }

            #forwarders

            /// Where grid `grid` (its index in `GRIDS`) is now on the device: the buffer a step
            /// reads, then those a launch writes but for their frame; `None` past the last grid.
            pub(crate) fn device_grid(&mut self, grid: usize) -> Option<Vec<*mut #real>> {
                match &mut self.0 {
                    #(Planned::#variants(s) => s.device_grid(grid),)*
                }
            }

            /// Computes the planes `planes` of the slowest axis one step as a grid of their own,
            /// without turning the levels; `false` (nothing ran) where the plan cannot.
            pub(crate) fn step_part(&mut self, params: Params, planes: [usize; 2]) -> Result<bool, StencilError> {
                match &mut self.0 {
                    #(Planned::#variants(s) => s.step_part(params, planes),)*
                }
            }

            /// Turns the levels after the parts of one step.
            pub(crate) fn finish_parts(&mut self) {
                match &mut self.0 {
                    #(Planned::#variants(s) => s.finish_parts(),)*
                }
            }
        }
    }
}

/// The variant of `Planned` holding plan `k`'s session.
fn variant(k: usize) -> Ident {
    match k {
        0 => ident("Own"),
        _ => format_ident!("Tuned{k}"),
    }
}

/// A session method that `Session` forwards to its plan's session.
struct Forwarded {
    doc: &'static str,
    /// Whether it takes `&mut self`.
    mutable: bool,
    /// Whether its doc is hidden (counters for tests and the runner).
    hidden: bool,
    signature: TokenStream,
    call: TokenStream,
}

impl Forwarded {
    fn reading(doc: &'static str, signature: TokenStream, call: TokenStream) -> Self {
        Forwarded {
            doc,
            mutable: false,
            hidden: false,
            signature,
            call,
        }
    }

    fn writing(doc: &'static str, signature: TokenStream, call: TokenStream) -> Self {
        Forwarded {
            mutable: true,
            ..Forwarded::reading(doc, signature, call)
        }
    }

    fn hidden(self) -> Self {
        Forwarded {
            hidden: true,
            ..self
        }
    }
}

/// Every session method `Session` forwards, in the order it declares them:
/// the grids' and steps' methods around the [`controls`].
fn forwarded(st: &Stencil) -> Vec<Forwarded> {
    let real = ident(st.dtype.rust());
    let dims = usize_lit(st.dims());
    let names = |keep: fn(&crate::ir::Field) -> bool| -> Vec<Ident> {
        grid_names_where(st, keep)
            .iter()
            .map(|n| ident(n))
            .collect()
    };
    let (uploaded, downloaded) = (names(|_| true), names(|f| f.role != Role::Input));
    let mut methods = vec![
        Forwarded::reading(
            "The shape the session was made for.",
            quote!(shape(&self) -> [usize; #dims]),
            quote!(shape()),
        ),
        Forwarded::writing(
            "Copies the state grids (each 2-level field followed by its `_prev` level) and the input grids, \
             in declaration order, to the device; every length is checked before the first copy.",
            quote!(upload(&mut self, #(#uploaded: &[#real]),*) -> Result<(), StencilError>),
            quote!(upload(#(#uploaded),*)),
        ),
        Forwarded::writing(
            "Runs `steps` time steps on the device (kernels are queued; errors of a launch come back here, \
             errors while running at the next `synchronize` or `download`).",
            quote!(step(&mut self, params: Params, steps: u64) -> Result<(), StencilError>),
            quote!(step(params, steps)),
        ),
    ];
    methods.extend(controls());
    methods.extend([
        Forwarded::reading(
            "Waits for every queued step.",
            quote!(synchronize(&self) -> Result<(), StencilError>),
            quote!(synchronize()),
        ),
        Forwarded::reading(
            "Copies the state grids (each 2-level field followed by its `_prev` level) back.",
            quote!(download(&self, #(#downloaded: &mut [#real]),*) -> Result<(), StencilError>),
            quote!(download(#(#downloaded),*)),
        ),
    ]);
    methods
}

/// The methods that set and report how steps launch: fusion and graphs
/// (the graphs' counters hidden: they are for tests and the runner).
fn controls() -> [Forwarded; 8] {
    [
        Forwarded::reading(
            "How launches of several steps run (see `Fusion`).",
            quote!(fusion(&self) -> Fusion),
            quote!(fusion()),
        ),
        Forwarded::writing(
            "Sets how launches of several steps run; `Measure` times them again.",
            quote!(set_fusion(&mut self, fusion: Fusion)),
            quote!(set_fusion(fusion)),
        ),
        Forwarded::reading(
            "What the session's measurement of fused against single steps timed, once it decided.",
            quote!(measurement(&self) -> Option<::stencil_rt::gpu::Measurement>),
            quote!(measurement()),
        ),
        Forwarded::reading(
            "Whether runs of many launches are replayed as graphs.",
            quote!(graphs(&self) -> bool),
            quote!(graphs()),
        ),
        Forwarded::writing(
            "Turns graphs on or off.",
            quote!(set_graphs(&mut self, on: bool)),
            quote!(set_graphs(on)),
        ),
        Forwarded::reading(
            "Graphs replayed since the session was made.",
            quote!(replays(&self) -> u64),
            quote!(replays()),
        )
        .hidden(),
        Forwarded::reading(
            "Graphs captured since the session was made.",
            quote!(captures(&self) -> u64),
            quote!(captures()),
        )
        .hidden(),
        Forwarded::reading(
            "Graphs updated in place since the session was made.",
            quote!(updates(&self) -> u64),
            quote!(updates()),
        )
        .hidden(),
    ]
}

/// Each session method, forwarded to the session of the plan it runs.
fn forwarders(st: &Stencil, variants: &[Ident]) -> TokenStream {
    let methods = forwarded(st).into_iter().map(|m| {
        let doc = docs(m.doc);
        let hidden = m.hidden.then(|| quote!(#[doc(hidden)]));
        let session = if m.mutable {
            quote!(&mut self.0)
        } else {
            quote!(&self.0)
        };
        let (signature, call) = (m.signature, m.call);
        quote! {
            #doc
            #hidden
            pub fn #signature {
                match #session {
                    #(Planned::#variants(s) => s.#call,)*
                }
            }
        }
    });
    quote!(#(#methods)*)
}
