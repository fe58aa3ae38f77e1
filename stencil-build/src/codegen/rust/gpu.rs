//! The Rust side of a GPU backend: RAII device buffers ([`device`]), a
//! `Session` per stencil keeping every grid on the device ([`session`]), and
//! here each stencil's module with its kernels' declarations and `run` /
//! `run_grids` on host slices. Every runtime status becomes
//! `Err(StencilError::Device)` carrying the runtime's own message.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::backend::gpu::plan::{self, Plan, fused_leapfrog};
use crate::backend::gpu::{self, Dialect};
use crate::codegen::names::{slot_name, statement_name};
use crate::codegen::rust::{
    Compiled, Signature, docs, grid_names_where, grids_entry, ident, usize_lit,
};
use crate::ir::{Boundary, Role, Slot, Stencil, Strategy, Version};

mod device;
mod plans;
mod session;

pub use device::runtime_module;

/// The `cuda` (or `hip`) module of one stencil: its plans' kernels and
/// sessions (the spec's own, and those of its tuning file: [`plans`]),
/// `PLANS`, and `run` / `run_grids` on host slices.
pub fn stencil_module(
    st: &Stencil,
    plans: &[Compiled],
    d: &Dialect,
    sig: &Signature,
) -> TokenStream {
    let module = format_ident!("{}", d.name);
    let dev = format_ident!("stencil_{}", d.name);
    let plans_const = plans::plans_const(plans);
    let body = plans_body(st, plans, d);
    let args = &sig.params;
    let upload_args = grid_arguments(st, true);
    let lengths = crate::codegen::rust::grid_lengths(st);
    let download_args = grid_arguments(st, false);
    let run_doc = docs(&format!(
        "Runs `steps` time steps in place on the {} device: checks every argument, uploads the grids, steps, \
         downloads the state grids. Zero steps touch nothing.{}",
        d.title, sig.doc
    ));
    let grids = grids_entry(d.name);
    let boxes = session_grids(st, d);
    let session_ident = crate::codegen::rust::unshadowed(st, "session");
    let module_doc = match plans {
        [own] => module_doc(st, own, d),
        _ => docs(&format!(
            "{} kernels of {} plans (`PLANS`: the spec's own and {} tuned for devices), with [`Session`] for \
             grids kept on the device, which runs the plan tuned for its device.",
            d.title,
            plans.len(),
            plans.len() - 1
        )),
    };
    quote! {
        #module_doc
        pub mod #module {
            use super::*;
            use super::#dev as dev;
            use ::stencil_rt::gpu::{Fusion, GpuTiling};

            #plans_const

            #body

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

            /// [`run_grids`]: the device holds the scratch grids, so `work` holds none.
            pub fn run_grids_in(_work: &mut Workspace, grids: &mut [&mut [Real]], shape: &[usize], params: &[Real], steps: u64) -> Result<(), StencilError> {
                run_grids(grids, shape, params, steps)
            }

            #boxes
        }
    }
}

/// The kernels' items of a GPU module: those of its one plan, or a module
/// for each plan and the session that picks one.
fn plans_body(st: &Stencil, plans: &[Compiled], d: &Dialect) -> TokenStream {
    if let [own] = plans {
        let items = plan_items(st, own, d);
        let methods = plans::one_plan_methods(st.dims());
        quote! { #items #methods }
    } else {
        let modules = plans.iter().enumerate().map(|(k, c)| {
            let m = plans::plan_module(k);
            let items = plan_items(st, c, d);
            let doc = module_doc(st, c, d);
            quote! {
                #doc
                mod #m {
                    use super::*;
                    #items
                }
            }
        });
        let own = plans::plan_module(0);
        let session = plans::planned_session(st, plans.len());
        quote! {
            /// The tiling compiled into the spec's own plan's kernels (`PLANS` lists every plan).
            pub const TILING: GpuTiling = #own::TILING;

            #(#modules)*

            #session
        }
    }
}

/// One plan's items: its `TILING`, its kernels' declarations and its `Session`.
fn plan_items(st: &Stencil, c: &Compiled, d: &Dialect) -> TokenStream {
    let plan = &c.plan;
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
    let small_steps = plan::naive_plan(plan, st, d).is_some();
    let (externs, launches, fuses) = kernels(st, plan, &c.prefix, d);
    let session = session::session(st, plan, d, &launches, &fuses);
    quote! {
        /// The tiling compiled into these kernels.
        pub const TILING: GpuTiling = GpuTiling { strategy: #strategy, block: &[#(#block),*], chunk: #chunk, coarsen: #coarsen, vector: #vector, time_block: #time_block, occupancy: #occupancy, small_grids: #small_grids, small_steps: #small_steps };

        #[allow(non_snake_case)]
        unsafe extern "C" {
            #(#externs)*
        }

        #session
    }
}

/// The doc comment of the module of one plan's kernels (a stencil's `cuda`
/// or `hip` module where it has one plan): the plan in words, and where it
/// was tuned.
fn module_doc(st: &Stencil, c: &Compiled, d: &Dialect) -> TokenStream {
    let plan = &c.plan;
    let strategy = plan.strategy.name();
    let small_steps = plan::naive_plan(plan, st, d).is_some();
    let tuned = c.tuned.as_ref().map_or(String::new(), |e| {
        format!(
            " Tuned for {} ({}) on {:?} cells, {} steps: {:.1} GCells/s against {:.1} with the spec's own plan ({}).",
            e.device, e.arch, e.shape, e.steps, e.gcells, e.own_gcells, e.date
        )
    });
    docs(&format!(
        "{} kernels (strategy `{strategy}`, blocks of {:?} threads{}{}), with [`Session`] for grids kept on the device.{tuned}",
        d.title,
        plan.block,
        if plan.strategy == crate::ir::Strategy::Stream {
            format!(
                ", {} cells per block along the slowest axis, {} per iteration{}",
                plan.chunk,
                plan.coarsen,
                plan::small_planes_plan(plan, st, d).map_or(String::new(), |small| format!(
                    "; planes of fewer than {} cells run blocks of {:?} threads marching {} planes",
                    plan::SMALL_PLANES,
                    small.block,
                    small.chunk
                ))
            )
        } else if plan.strategy == crate::ir::Strategy::Tensor {
            format!(
                ", {} cells per block along the slowest axis, the in-plane sum on the FP64 tensor cores{}{}",
                plan.chunk,
                if plan::reads_one_grid(st) {
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
        } else if plan.strategy == crate::ir::Strategy::Naive && plan.vector > 1 {
            format!(
                ", {} cells of the contiguous axis per thread in one vector where rows are whole vectors",
                plan.vector
            )
        } else {
            String::new()
        },
        if small_steps {
            format!(
                "; single steps on grids of fewer than {} cells per multiprocessor run `naive`",
                plan::small_step_cells(plan)
            )
        } else {
            String::new()
        }
    ))
}

/// Extern declarations, per statement the launch, and the questions asked
/// before a launch of several steps: whether each kernel without a scalar
/// twin fuses them on the session's grids (`<symbol>_fuses`,
/// [`splits_steps`](crate::backend::gpu::plan::temporal::splits_steps)).
fn kernels(
    st: &Stencil,
    plan: &Plan,
    prefix: &str,
    d: &Dialect,
) -> (Vec<TokenStream>, Vec<TokenStream>, Vec<TokenStream>) {
    if gpu::step::one_kernel(st, plan) {
        let (decl, launch) = step_kernel(st, prefix, d);
        return (vec![decl], vec![launch], Vec::new());
    }
    let splits = plan::splits_steps(plan, st);
    let mut externs = Vec::new();
    let mut launches = Vec::new();
    let mut fuses = Vec::new();
    for s in &st.statements {
        let k = statement_kernel(st, plan, (prefix, d), s, splits);
        externs.extend(k.externs);
        launches.push(k.launch);
        fuses.extend(k.fuses);
    }
    (externs, launches, fuses)
}

/// A statement's kernel as the session sees it: its extern declarations,
/// its launch, and where steps split, the question whether a launch fuses.
struct StatementKernel {
    externs: Vec<TokenStream>,
    launch: TokenStream,
    fuses: Option<TokenStream>,
}

/// The grids statement `s`'s kernel takes, beyond `out`: their parameter
/// names, their pointer types and the session's arguments for them.
/// `persistent` sweeps alternate between the target's two buffers, so they
/// write both.
fn slot_arguments(
    st: &Stencil,
    s: &crate::ir::Statement,
    persistent: bool,
) -> (Vec<Ident>, Vec<TokenStream>, Vec<TokenStream>) {
    let real = ident(st.dtype.rust());
    let written = |slot: Slot| persistent && slot.field == s.target;
    let slots = s.slots();
    let names = slots
        .iter()
        .map(|&slot| ident(&slot_name(st, slot)))
        .collect();
    let types = slots
        .iter()
        .map(|&slot| {
            if written(slot) {
                quote!(*mut #real)
            } else {
                quote!(*const #real)
            }
        })
        .collect();
    let reads = slots
        .iter()
        .map(|&slot| {
            let id = ident(&st.fields[slot.field].name);
            match (written(slot), slot.version) {
                (true, Version::Prev) => quote!(self.at(self.grids.#id.prev())),
                (true, _) => quote!(self.at(self.grids.#id.cur())),
                _ => read(st, slot),
            }
        })
        .collect();
    (names, types, reads)
}

/// Statement `s`'s [`StatementKernel`] under `plan`.
fn statement_kernel(
    st: &Stencil,
    plan: &Plan,
    (prefix, d): (&str, &Dialect),
    s: &crate::ir::Statement,
    splits: bool,
) -> StatementKernel {
    let real = ident(st.dtype.rust());
    let persistent = plan.strategy == Strategy::Persistent;
    let (levels_param, levels_arg) = levels_argument(plan);
    let dims = st.dims();
    let mut externs = Vec::new();
    let mut fuses = None;
    let target = &st.fields[s.target];
    let (out_prev_param, out_prev_arg) = if fused_leapfrog(st, plan, s.target) {
        let id = ident(&target.name);
        (
            quote!(out_prev: *mut #real,),
            quote!(self.at(self.grids.#id.next_prev()),),
        )
    } else {
        (quote!(), quote!())
    };
    let name = statement_name(st, s);
    let sym = format_ident!("{}", gpu::symbol(prefix, d, st, s));
    let (slots, slot_types, reads) = slot_arguments(st, s, persistent);
    let used = s.params_used();
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
    let axis: Vec<_> = (0..dims).map(usize_lit).collect();
    if splits {
        let ask = format_ident!("{sym}_fuses");
        externs.push(quote! {
            fn #ask(#(#n: isize,)* out: *mut #real, #out_prev_param #(#slots: #slot_types,)*) -> ::std::os::raw::c_int;
        });
        // The call's safety is stated where the calls are joined (`session`).
        fuses = Some(quote! {
            #ask(#(self.extent(#axis) as isize,)* #out, #out_prev_arg #(#reads,)*) != 0
        });
    }
    let frame = frame_copy(st, s.target);
    let launch = quote! {
        #frame
        stencil_safety!("every pointer is a device buffer of this session, moved to the first cell of the part a launch computes (`at`), with the cells of the extents passed (`extent`) from there; the kernel touches only those cells and `out` is none of its inputs.");
        let code = unsafe { #sym(#(self.extent(#axis) as isize,)* #out, #out_prev_arg #(#reads,)* #(params.#fields,)* #levels_arg stream) };
        dev::check(NAME, #name, code)?;
    };
    StatementKernel {
        externs,
        launch,
        fuses,
    }
}

/// The extern declaration and the launch of the kernel that computes every
/// statement of a step ([`gpu::step::one_kernel`]): each state field's
/// frame first where it takes one, then one launch writing every field.
fn step_kernel(st: &Stencil, prefix: &str, d: &Dialect) -> (TokenStream, TokenStream) {
    let real = ident(st.dtype.rust());
    let grids = gpu::step::grids(st);
    let sym = format_ident!("{}", gpu::step_symbol(prefix, d, st));
    let n: Vec<Ident> = (0..st.dims()).map(|a| format_ident!("n{a}")).collect();
    let outs: Vec<Ident> = grids
        .outputs
        .iter()
        .map(|&f| ident(&gpu::step::output_name(st, f)))
        .collect();
    let slots: Vec<Ident> = grids
        .slots
        .iter()
        .map(|&slot| ident(&slot_name(st, slot)))
        .collect();
    let c_params: Vec<Ident> = grids
        .params
        .iter()
        .map(|&i| format_ident!("p_{}", st.params[i]))
        .collect();
    let decl = quote! {
        fn #sym(#(#n: isize,)* #(#outs: *mut #real,)* #(#slots: *const #real,)* #(#c_params: #real,)* stream: *mut ::std::os::raw::c_void) -> ::std::os::raw::c_int;
    };
    let frames = grids.outputs.iter().filter_map(|&f| frame_copy(st, f));
    let written = grids.outputs.iter().map(|&f| output(st, f));
    let reads = grids.slots.iter().map(|&slot| read(st, slot));
    let fields = grids.params.iter().map(|&i| ident(&st.params[i]));
    let axis: Vec<_> = (0..st.dims()).map(usize_lit).collect();
    let launch = quote! {
        #(#frames)*
        stencil_safety!("every pointer is a device buffer of this session, moved to the first cell of the part a launch computes (`at`), with the cells of the extents passed (`extent`) from there; the kernel touches only those cells and no output is one of its inputs.");
        let code = unsafe { #sym(#(self.extent(#axis) as isize,)* #(#written,)* #(#reads,)* #(params.#fields,)* stream) };
        dev::check(NAME, "step", code)?;
    };
    (decl, launch)
}

/// The parameter of a fused kernel's launcher that counts its steps, and
/// the argument a launch of `fused` steps passes.
fn levels_argument(plan: &Plan) -> (TokenStream, TokenStream) {
    match plan.strategy {
        Strategy::Temporal => (
            quote!(levels: ::std::os::raw::c_int,),
            quote!(fused as ::std::os::raw::c_int,),
        ),
        Strategy::Persistent => (
            quote!(steps: ::std::os::raw::c_ulonglong,),
            quote!(fused as ::std::os::raw::c_ulonglong,),
        ),
        _ => (quote!(), quote!()),
    }
}

/// Before a launch that writes 2-level field `target` with a fixed
/// boundary: the caller's previous level takes the current level's frame.
fn frame_copy(st: &Stencil, target: usize) -> Option<TokenStream> {
    let target = &st.fields[target];
    (st.boundary != Boundary::Periodic && target.has_prev()).then(|| {
        let id = ident(&target.name);
        let fresh = format_ident!("{}__fresh", target.name);
        quote! {
            // The caller's previous level (the first buffer) may have another frame:
            // before it is first written, give it the current level's (which is kept
            // from then on). After the first launch, no launch reads it.
            if self.#fresh && self.steps > 0 {
                self.grids.#id.copy_cur_to_first(NAME)?;
                self.#fresh = false;
            }
        }
    })
}

/// The device pointer a statement writes.
fn output(st: &Stencil, target: usize) -> TokenStream {
    let id = ident(&st.fields[target].name);
    match st.fields[target].role {
        Role::Temp => quote!(self.at(self.grids.#id.ptr())),
        _ => quote!(self.at(self.grids.#id.next())),
    }
}

/// The device pointer a slot is read from.
fn read(st: &Stencil, slot: Slot) -> TokenStream {
    let id = ident(&st.fields[slot.field].name);
    match (st.fields[slot.field].role, slot.version) {
        (Role::Input | Role::Temp, _) => quote!(self.at(self.grids.#id.ptr()).cast_const()),
        (_, Version::Start) => quote!(self.at(self.grids.#id.cur()).cast_const()),
        (_, Version::Prev) => quote!(self.at(self.grids.#id.prev()).cast_const()),
        (_, Version::Updated) => quote!(self.at(self.grids.#id.next()).cast_const()),
    }
}

/// `u, u_prev, k, ...`: the grids a session uploads (`inputs`), or downloads.
fn grid_arguments(st: &Stencil, inputs: bool) -> TokenStream {
    let names = grid_names_where(st, |f| inputs || f.role != Role::Input);
    let ids = names.iter().map(|n| ident(n));
    quote!(#(#ids),*)
}

/// `Session` as a generic driver moves its grids (`stencil_rt::gpu::SessionGrids`),
/// and `device_grids`, which makes one for a distributed session's box.
fn session_grids(st: &Stencil, d: &Dialect) -> TokenStream {
    let runtime = format_ident!("{}", heck::ToUpperCamelCase::to_upper_camel_case(d.name));
    let all: Vec<Ident> = (0..grid_names_where(st, |_| true).len())
        .map(|k| format_ident!("g{k}"))
        .collect();
    let changed: Vec<bool> = st
        .arguments()
        .flat_map(|(_, f)| {
            std::iter::repeat_n(f.role != Role::Input, 1 + usize::from(f.has_prev()))
        })
        .collect();
    let downloaded: Vec<TokenStream> = (all.iter().zip(&changed))
        .map(|(g, &c)| if c { quote!(#g) } else { quote!(_) })
        .collect();
    let downloads: Vec<&Ident> = (all.iter().zip(&changed))
        .filter_map(|(g, &c)| c.then_some(g))
        .collect();
    let count = usize_lit(all.len());
    quote! {
        stencil_safety!("`device_grid` gives buffers of this session, each of every cell of its shape, the first holding a grid's current level.");
        unsafe impl ::stencil_rt::gpu::SessionGrids<Real> for Session {
            type Runtime = dev::#runtime;
            const NAME: &'static str = NAME;

            fn upload_grids(&mut self, grids: &[&[Real]]) -> Result<(), StencilError> {
                let [#(#all),*] = grids else {
                    return Err(super::argument_count("grids", #count, grids.len()));
                };
                self.upload(#(#all),*)
            }

            fn download_grids(&self, grids: &mut [&mut [Real]]) -> Result<(), StencilError> {
                let [#(#downloaded),*] = grids else {
                    return Err(super::argument_count("grids", #count, grids.len()));
                };
                self.download(#(#downloads),*)
            }

            fn step_grids(&mut self, params: &[Real], steps: u64) -> Result<(), StencilError> {
                self.step(super::params_of(params)?, steps)
            }

            fn grid(&mut self, grid: usize) -> Option<Vec<*mut Real>> {
                self.device_grid(grid)
            }

            fn step_part(&mut self, params: &[Real], planes: [usize; 2]) -> Result<bool, StencilError> {
                self.step_part(super::params_of(params)?, planes)
            }

            fn finish_parts(&mut self) {
                self.finish_parts();
            }
        }

        /// The devices of this backend, and a session of a shape on one, for a generic driver
        /// (a distributed session's rank: `stencil_rt::distributed`).
        pub const DEVICES: ::stencil_rt::gpu::Devices<Real> = ::stencil_rt::gpu::Devices {
            count: ::stencil_rt::gpu::device_count::<dev::#runtime>,
            select: ::stencil_rt::gpu::set_device::<dev::#runtime>,
            grids: device_grids,
        };

        /// A session of `shape` on the calling thread's current device, whose boxes of cells a
        /// generic driver moves (a distributed session's rank: `stencil_rt::distributed`).
        pub fn device_grids(shape: &[usize]) -> Result<Box<dyn ::stencil_rt::gpu::DeviceGrids<Real>>, StencilError> {
            let dims: [usize; DIMS] = shape
                .try_into()
                .map_err(|_| super::argument_count("axes", DIMS, shape.len()))?;
            Ok(Box::new(::stencil_rt::gpu::Boxed::new(Session::new(dims)?, shape.to_vec())))
        }
    }
}
