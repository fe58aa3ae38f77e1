//! A stencil's `Session`: its grids kept on the device, uploads and
//! downloads checked before they copy, and `step`, which launches the
//! kernels one step or several fused steps at a time and replays runs of
//! launches as graphs.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::backend::gpu::Dialect;
use crate::backend::gpu::plan::{self, Plan, fused_leapfrog};
use crate::codegen::rust::{docs, grid_lengths, grid_names_where, ident, lengths, usize_lit};
use crate::ir::{Boundary, Role, Stencil, Strategy};

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
/// session's `dev::Trial`, each timing `span` steps (a fused launch's:
/// `time_block`, two sweeps for `persistent`). `graph` replays runs of
/// launches as graphs where it can, `whole_graphs` (the trial's parts) only
/// whole graphs ([`Graphs::branch`]).
fn fused_step(
    plan: &Plan,
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
                if self.fusion == Fusion::Measure && most >= #span && left >= self.trial.steps(#span) {
                    let mut trial = self.trial;
                    let (ran, measured) = trial.next(
                        #span,
                        if self.graphs.on() { #graph_launches } else { 1 },
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
                let fused = if self.fusion == Fusion::Single { 1 } else { most };
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
            self.launch_kernels(#params, fused, stream)?;
            self.turn(fused);
            Ok(())
        }

        /// The kernels of a launch of `fused` steps, over the grid or the part `part` names.
        fn launch_kernels(&mut self, #params: Params, fused: u64, stream: *mut ::std::os::raw::c_void) -> Result<(), StencilError> {
            #(#launches)*
            Ok(())
        }

        /// The levels' turn after a launch of `fused` steps.
        fn turn(&mut self, fused: u64) {
            #turn
            self.steps += fused;
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
    plan: &Plan,
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
        fn launch(&mut self, #params: Params, fused: u64, stream: *mut ::std::os::raw::c_void) -> Result<(), StencilError> {
            self.launch_kernels(#params, fused, stream)?;
            self.turn(fused);
            Ok(())
        }

        /// The kernels of a launch of one step, over the grid or the part `part` names.
        fn launch_kernels(&mut self, #params: Params, #fused: u64, stream: *mut ::std::os::raw::c_void) -> Result<(), StencilError> {
            #(#launches)*
            Ok(())
        }

        /// The levels' turn after a launch of one step.
        fn turn(&mut self, _fused: u64) {
            #(#advance)*
            self.steps += 1;
        }
    }
}

/// A session's graphs: what a session adds to run [`GRAPH_LAUNCHES`]
/// launches at a time as one graph (`persistent`: of one step each, see
/// [`Graphs::branch`]). On the H100 a
/// launch took 3.3-4.1 us from the host, so that a 7-point stencil took about
/// 4 us a step up to 80^3; replayed from a graph, 1.5-3.2 us, and 1.1x-1.2x
/// less on 100^3-128^3 (design notes, `launch-floor`).
struct Graphs {
    /// The session's members, and their values in `Session::new`.
    members: Vec<TokenStream>,
    alloc: Vec<TokenStream>,
    /// `Session::replay`, `set_graphs`, `graphs` and `replays`.
    methods: TokenStream,
    /// Items beside the session: the `Run` a capture records.
    items: TokenStream,
}

/// Launches a session captures as one graph: a multiple of every count of
/// buffers a field turns through (2, 3 or 4), so that a graph leaves the
/// buffers in the order it found them and replays again.
const GRAPH_LAUNCHES: u64 = 48;

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
        let replay = Graphs::replay_method(levels, fresh, params, params_ident);
        let accessors = Graphs::accessors();
        Graphs {
            members: vec![quote!(graphs: dev::Graphs)],
            alloc: vec![quote!(graphs: dev::Graphs::new())],
            methods: quote! {
                #replay

                #accessors
            },
            items: Graphs::recorder(levels),
        }
    }

    /// `replay`: a run of launches as one graph (`stencil_rt::gpu::Graphs`),
    /// lending the capture a [`Graphs::recorder`].
    fn replay_method(
        levels: &[Ident],
        fresh: &[Ident],
        params: &[Ident],
        params_ident: &Ident,
    ) -> TokenStream {
        let graph_launches = GRAPH_LAUNCHES;
        let replay_doc = docs(&format!(
            "Runs `launches` launches (up to {GRAPH_LAUNCHES}) of `fused` steps as one graph: the one \
             captured for the same launches, steps a launch, parameters and order of the buffers \
             (`stencil_rt::gpu::Graphs`: a run of fewer than {GRAPH_LAUNCHES} launches is captured \
             where the same run came before). `false` (nothing ran) before the frames are copied, \
             with graphs off, and where no graph ran."
        ));
        quote! {
        #replay_doc
        fn replay(&mut self, #params_ident: Params, fused: u64, launches: u64) -> Result<bool, StencilError> {
            if #(self.#fresh ||)* !self.graphs.on() {
                return Ok(false);
            }
            let key = [fused, launches, #(self.grids.#levels.turn() as u64,)* #(u64::from(#params_ident.#params.to_bits()),)*];
            // The graphs lend the session to their capture: out of it meanwhile.
            let mut graphs = ::std::mem::take(&mut self.graphs);
            let run = &mut Run { session: self, params: #params_ident, fused, launches };
            let replayed = graphs.replay(NAME, &key, launches < #graph_launches, run);
            self.graphs = graphs;
            if !replayed? {
                return Ok(false);
            }
            self.steps += launches * fused;
            Ok(true)
        }
        }
    }

    /// `Run`: a run of the session's launches, as a capture records it.
    fn recorder(levels: &[Ident]) -> TokenStream {
        let index: Vec<_> = (0..levels.len()).map(usize_lit).collect();
        quote! {
            /// A run of `launches` launches of `fused` steps of a session, lent to a capture.
            struct Run<'s> {
                session: &'s mut Session,
                params: Params,
                fused: u64,
                launches: u64,
            }

            impl ::stencil_rt::gpu::Recorder for Run<'_> {
                fn turns(&self) -> Vec<usize> {
                    Vec::from([#(self.session.grids.#levels.turn()),*])
                }

                fn set_turns(&mut self, turns: &[usize]) {
                    #(self.session.grids.#levels.set_turn(turns[#index]);)*
                }

                fn record(&mut self, stream: *mut ::std::os::raw::c_void) -> Result<(), StencilError> {
                    let steps = self.session.steps;
                    for _ in 0..self.launches {
                        self.session.launch(self.params, self.fused, stream)?;
                    }
                    self.session.steps = steps;
                    Ok(())
                }
            }
        }
    }

    /// The session's graph switch and counters.
    fn accessors() -> TokenStream {
        let set_doc = docs(&format!(
            "Turns graphs on or off: on, each run of {GRAPH_LAUNCHES} launches in a `step` call is \
             captured once as a graph (per steps a launch, parameters and order of the buffers) \
             and replayed, and so is a shorter run of {SHORT_GRAPH_LAUNCHES} or more (a short call, \
             or the rest of a long one) from the second time it comes, which saves most of each \
             launch's cost on small grids."
        ));
        quote! {
        /// Whether runs of many launches are replayed as graphs (on by default; off
        /// after captures in a row gave no graph).
        pub fn graphs(&self) -> bool {
            self.graphs.on()
        }

        #set_doc
        pub fn set_graphs(&mut self, on: bool) {
            self.graphs.set_on(on);
        }

        /// Graphs replayed since the session was made.
        #[doc(hidden)]
        pub fn replays(&self) -> u64 {
            self.graphs.replays()
        }

        /// Graphs captured since the session was made.
        #[doc(hidden)]
        pub fn captures(&self) -> u64 {
            self.graphs.captures()
        }

        /// Captures that updated a kept graph in place instead of instantiating one.
        #[doc(hidden)]
        pub fn updates(&self) -> u64 {
            self.graphs.updates()
        }
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

/// What each grid of a stencil adds to its `Session`: its buffers, how they
/// are allocated, uploaded, downloaded and turned after a step.
#[derive(Default)]
struct GridParts {
    /// Members of the `Grids` struct, and their allocations.
    members: Vec<TokenStream>,
    alloc: Vec<TokenStream>,
    /// Members of the session itself (the frame flags), and their values.
    session_members: Vec<TokenStream>,
    session_alloc: Vec<TokenStream>,
    upload_params: Vec<TokenStream>,
    upload: Vec<TokenStream>,
    download_params: Vec<TokenStream>,
    download: Vec<TokenStream>,
    /// Each state field's turn after a step.
    advance: Vec<TokenStream>,
    /// After a launch of one step, where that runs the single-step kernel: a
    /// fused leapfrog's levels turn by one (it wrote `next_prev`'s buffer),
    /// the others as always.
    advance_one: Vec<TokenStream>,
    turns_by_one: bool,
    /// Uploads mark each 2-level field's previous level as fresh (its frame
    /// not yet copied), the fused leapfrog's flag among them.
    fresh_init: Vec<TokenStream>,
    fused_fresh: Option<Ident>,
    fresh_flags: Vec<Ident>,
    state_fields: Vec<Ident>,
    /// Where each grid of `GRIDS` is now, in order: the buffer a step reads,
    /// then those whose frame a launch keeps.
    pointers: Vec<TokenStream>,
}

impl GridParts {
    /// The grids of `st` under `plan`.
    fn of(st: &Stencil, plan: &Plan, d: &Dialect) -> Self {
        let mut g = GridParts::default();
        let real = ident(st.dtype.rust());
        let one_step_kernel = plan::step_plan(plan, st, d).is_some();
        // A step in one kernel keeps its temporaries in registers.
        let temps_in_registers = crate::backend::gpu::step::one_kernel(st, plan);
        for (i, f) in st.fields.iter().enumerate() {
            let id = ident(&f.name);
            let name = &f.name;
            match f.role {
                Role::Temp if temps_in_registers => {}
                Role::Input | Role::Temp => {
                    g.members.push(quote!(#id: dev::Buffer<#real>));
                    g.alloc.push(quote!(#id: dev::Buffer::new(NAME, cells)?));
                    if f.role == Role::Input {
                        g.pointers.push(quote!(Vec::from([self.grids.#id.ptr()])));
                        g.upload_params.push(quote!(#id: &[#real]));
                        g.upload
                            .push(quote!(self.grids.#id.upload(NAME, #name, #id)?;));
                    }
                }
                Role::State { levels } => {
                    g.state_fields.push(id.clone());
                    let levels = usize_lit(levels as usize);
                    let fused = fused_leapfrog(st, plan, i);
                    g.members.push(quote!(#id: dev::Levels<#real>));
                    g.alloc
                        .push(quote!(#id: dev::Levels::new(NAME, #levels, #fused, cells)?));
                    g.advance.push(quote!(self.grids.#id.advance();));
                    if fused && one_step_kernel {
                        g.turns_by_one = true;
                        g.advance_one.push(quote!(self.grids.#id.advance_one();));
                    } else {
                        g.advance_one.push(quote!(self.grids.#id.advance();));
                    }
                    g.upload_params.push(quote!(#id: &[#real]));
                    g.download_params.push(quote!(#id: &mut [#real]));
                    g.upload
                        .push(quote!(self.grids.#id.upload_from(NAME, #name, #id)?;));
                    g.download.push(
                        quote!(self.grids.#id.level(self.grids.#id.cur_level()).download(NAME, #name, #id)?;),
                    );
                    g.pointers
                        .push(quote!(self.grids.#id.current_and_written()));
                    if f.has_prev() {
                        g.previous_level(st, f, fused);
                    }
                }
            }
        }
        g
    }

    /// The previous level of 2-level field `f` (`fused`: a fused leapfrog's).
    fn previous_level(&mut self, st: &Stencil, f: &crate::ir::Field, fused: bool) {
        let real = ident(st.dtype.rust());
        let id = ident(&f.name);
        let prev = format_ident!("{}_prev", f.name);
        let pname = format!("{}_prev", f.name);
        self.upload_params.push(quote!(#prev: &[#real]));
        self.download_params.push(quote!(#prev: &mut [#real]));
        self.upload
            .push(quote!(self.grids.#id.level_mut(0).upload(NAME, #pname, #prev)?;));
        self.download
            .push(quote!(self.grids.#id.level(0).download(NAME, #pname, #prev)?;));
        self.pointers
            .push(quote!(Vec::from([self.grids.#id.level(0).ptr()])));
        if st.boundary != Boundary::Periodic {
            let fresh = format_ident!("{}__fresh", f.name);
            self.fresh_flags.push(fresh.clone());
            self.session_members.push(quote!(#fresh: bool));
            self.session_alloc.push(quote!(#fresh: false));
            self.fresh_init.push(quote!(self.#fresh = true;));
            if fused {
                self.fused_fresh = Some(fresh);
            }
        }
    }
}

impl GridParts {
    /// `Session::upload`: every length checked, then each grid copied.
    fn upload_method(&self, st: &Stencil) -> TokenStream {
        let (upload_params, upload, fresh_init) =
            (&self.upload_params, &self.upload, &self.fresh_init);
        // What the session checks before it copies any grid: every grid it uploads.
        let upload_lengths = grid_lengths(st);
        quote! {
        /// Copies the state grids (each 2-level field followed by its `_prev` level) and the
        /// input grids, in declaration order, to the device. Every length is checked before the
        /// first copy, so a wrong one changes nothing; a runtime error during the copies (a
        /// device already in error) can leave some grids copied.
        pub fn upload(&mut self, #(#upload_params),*) -> Result<(), StencilError> {
            // Every length before the first copy: an `Err` leaves the device as it was.
            self::check_arguments(&self.shape, &[#upload_lengths])?;
            #(#upload)*
            #(#fresh_init)*
            self.steps = 0;
            Ok(())
        }
        }
    }

    /// `Session::device_grid`: where a grid of `GRIDS` is now, for a box copy.
    fn device_grid_method(&self, st: &Stencil) -> TokenStream {
        let real = ident(st.dtype.rust());
        let (index, pointer) = ((0..self.pointers.len()).map(usize_lit), &self.pointers);
        quote! {
        /// Where grid `grid` (its index in `GRIDS`) is now on the device, each a buffer of every
        /// cell valid until the next call on the session: the buffer a step reads, then those a
        /// launch writes but for their frame, which it may read as the grid's; `None` past the
        /// last grid.
        pub(crate) fn device_grid(&mut self, grid: usize) -> Option<Vec<*mut #real>> {
            Some(match grid {
                #(#index => #pointer,)*
                _ => return None,
            })
        }
        }
    }

    /// `Session::download`: every length checked, then each state grid copied back.
    fn download_method(&self, st: &Stencil) -> TokenStream {
        let (download_params, download) = (&self.download_params, &self.download);
        // The state grids it downloads.
        let download_lengths = lengths(grid_names_where(st, |f| f.role != Role::Input));
        quote! {
        /// Copies the state grids (each 2-level field followed by its `_prev` level) back.
        pub fn download(&self, #(#download_params),*) -> Result<(), StencilError> {
            // Every length before the first copy: an `Err` leaves the grids as they were.
            self::check_arguments(&self.shape, &[#download_lengths])?;
            #(#download)*
            Ok(())
        }
        }
    }
}

/// Where `plan` fuses steps: how a launch turns the buffers, and the most
/// steps it fuses (`most`); `fuses`: the fused kernels' `_fuses` calls.
fn fused_turn(
    plan: &Plan,
    g: &GridParts,
    fuses: &[TokenStream],
) -> Option<(TokenStream, TokenStream)> {
    let (advance, advance_one) = (&g.advance, &g.advance_one);
    let turns_by_one = g.turns_by_one;
    let fused_fresh = g.fused_fresh.clone();
    let persistent = plan.strategy == Strategy::Persistent;
    if persistent {
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
                if !fuses && self.fusion == Fusion::Measure {
                    self.fusion = Fusion::Single;
                }
                let most = if fuses { left.min(#time_block) } else { 1 };
            }
        };
        Some((turn, most))
    } else {
        None
    }
}

/// The session's `fusion` member (and, where `plan` fuses steps, what it
/// keeps of its trial), and its methods.
fn fusion_members(
    plan: &Plan,
    members: &mut Vec<TokenStream>,
    alloc: &mut Vec<TokenStream>,
) -> TokenStream {
    let fusion = if plan.measures() {
        quote!(Fusion::Measure)
    } else if plan.fuses_steps() {
        quote!(Fusion::Fused)
    } else {
        quote!(Fusion::Single)
    };
    members.push(quote!(fusion: Fusion));
    alloc.push(quote!(fusion: #fusion));
    let reset_trial = plan.fuses_steps().then(|| {
        members.push(quote!(trial: dev::Trial));
        alloc.push(quote!(trial: dev::Trial::default()));
        members.push(quote!(measurement: Option<::stencil_rt::gpu::Measurement>));
        alloc.push(quote!(measurement: None));
        quote! {
            self.trial = dev::Trial::default();
            self.measurement = None;
        }
    });
    let measurement = if plan.fuses_steps() {
        quote!(self.measurement)
    } else {
        quote!(None)
    };
    quote! {
    /// How launches of several steps run: measured on these grids, fused, or one step a
    /// launch (`Fusion`); after a measurement, the faster of the two. A session whose
    /// fused kernel cannot take its grids (one without a scalar twin, on rows that are
    /// not whole vectors or on planes too small for it) runs one step a launch and, where
    /// it was to measure, says `Single` from its first step.
    pub fn fusion(&self) -> Fusion {
        self.fusion
    }

    /// Sets how launches of several steps run; `Measure` times them again. Plans of one
    /// step a launch, and fused kernels on grids they cannot take, run one step a launch
    /// whatever it says.
    pub fn set_fusion(&mut self, fusion: Fusion) {
        self.fusion = fusion;
        #reset_trial
    }

    /// What the session's measurement timed, once it decided (`fusion` then says the
    /// faster way); `None` before, after `set_fusion`, and for sessions that never
    /// measure.
    pub fn measurement(&self) -> Option<::stencil_rt::gpu::Measurement> {
        #measurement
    }
    }
}

/// The session's `step` method: fused launches where the plan fuses steps
/// (`fuses`: the kernels' questions whether a launch may), else single steps.
fn step_method(
    plan: &Plan,
    g: &GridParts,
    params: &Ident,
    launches: &[TokenStream],
    fuses: &[TokenStream],
) -> TokenStream {
    let persistent = plan.strategy == Strategy::Persistent;
    let graph = Graphs::branch(params, persistent, true);
    match fused_turn(plan, g, fuses) {
        Some((turn, most)) => {
            let whole_graphs = Graphs::branch(params, persistent, false);
            fused_step(
                plan,
                params,
                &most,
                launches,
                &turn,
                [&graph, &whole_graphs],
            )
        }
        None => single_step(plan, params, launches, &g.advance, &graph),
    }
}

/// The `Grids` struct (a member per grid, named as the spec names it, so
/// that the session's other members cannot collide with a user's name) and
/// the `Session` struct holding it beside `members`.
fn session_structs(
    st: &Stencil,
    d: &Dialect,
    grid_members: &[TokenStream],
    members: &[TokenStream],
) -> TokenStream {
    let dims = usize_lit(st.dims());
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
            /// The planes of the slowest axis the next launch computes as a grid of their own
            /// (`step_part`); `None`: the whole grid.
            part: Option<[usize; 2]>,
            #(#members,)*
        }
    }
}

pub(super) fn session(
    st: &Stencil,
    plan: &Plan,
    d: &Dialect,
    launches: &[TokenStream],
    fuses: &[TokenStream],
) -> TokenStream {
    let uses_params = st.statements.iter().any(|s| !s.params_used().is_empty());
    let params = if uses_params {
        ident("params")
    } else {
        ident("_params")
    };
    let dims = usize_lit(st.dims());
    let mut g = GridParts::of(st, plan, d);
    let mut members = std::mem::take(&mut g.session_members);
    let mut alloc = std::mem::take(&mut g.session_alloc);
    let names: Vec<Ident> = st.params.iter().map(|p| ident(p)).collect();
    let graphs = Graphs::new(&g.state_fields, &g.fresh_flags, &names, &params);
    let step = step_method(plan, &g, &params, launches, fuses);
    let fusion_methods = fusion_members(plan, &mut members, &mut alloc);
    members.extend(graphs.members);
    alloc.extend(graphs.alloc);
    let (graph_methods, graph_items) = (graphs.methods, graphs.items);
    let (upload, download) = (g.upload_method(st), g.download_method(st));
    let device_grid = g.device_grid_method(st);
    let parts = parts(st, plan, &params);
    let GridParts {
        members: grid_members,
        alloc: grid_alloc,
        ..
    } = g;
    let structs = session_structs(st, d, &grid_members, &members);
    quote! {
        #structs

        #[allow(non_snake_case)]
        impl Session {
            /// Allocates every grid (zeroed) for `shape` on the device.
            pub fn new(shape: [usize; #dims]) -> Result<Self, StencilError> {
                let cells = rt::cells(NAME, &AXES, &shape, &MIN_SHAPE)?;
                let grids = Grids { #(#grid_alloc,)* };
                Ok(Session { shape, steps: 0, grids, part: None, #(#alloc,)* })
            }

            /// The shape the session was made for.
            pub fn shape(&self) -> [usize; #dims] {
                self.shape
            }

            #upload

            #step

            #fusion_methods

            #graph_methods

            /// Waits for every queued step.
            pub fn synchronize(&self) -> Result<(), StencilError> {
                dev::synchronize(NAME)
            }

            #download

            #device_grid

            #parts
        }

        #graph_items
    }
}

/// `Session::step_part` and `finish_parts`, which step parts of the grid
/// (planes of its slowest axis) one launch each and turn the levels once,
/// and the `extent` and `at` every launch passes its grids through.
fn parts(st: &Stencil, plan: &Plan, params: &Ident) -> TokenStream {
    let real = ident(st.dtype.rust());
    // A cooperative launch sweeps between the field's buffers over the whole grid.
    let step_part = if plan.strategy == Strategy::Persistent {
        quote! {
            let _ = #params;
            Ok(false)
        }
    } else {
        quote! {
            self.part = Some(planes);
            let launched = self.launch_kernels(#params, 1, ::std::ptr::null_mut());
            self.part = None;
            launched.map(|()| true)
        }
    };
    quote! {
        /// Computes the planes `planes` of the slowest axis one step as a grid of their own (their
        /// first and last `RADIUS` planes its frame) into the next level, without turning the
        /// levels (`finish_parts` does, once every part ran); `false` (nothing ran) for a plan
        /// whose launches sweep the whole grid.
        pub(crate) fn step_part(&mut self, #params: Params, planes: [usize; 2]) -> Result<bool, StencilError> {
            // A part lies within the grid, and is a grid of its own: at least the smallest
            // shape the kernels take.
            if planes[1] > self.shape[0] {
                return Err(StencilError::ArgumentCount {
                    stencil: NAME,
                    what: "planes of a part within the grid",
                    expected: self.shape[0],
                    actual: planes[1],
                });
            }
            let mut extents = self.shape;
            extents[0] = planes[1].saturating_sub(planes[0]);
            rt::cells(NAME, &AXES, &extents, &MIN_SHAPE)?;
            #step_part
        }

        /// Turns the levels after the parts of one step (`step_part`).
        pub(crate) fn finish_parts(&mut self) {
            self.turn(1);
        }

        /// Cells along axis `a` of the grid a launch computes: the session's, or its part's.
        fn extent(&self, a: usize) -> usize {
            match (a, self.part) {
                (0, Some([lo, hi])) => hi - lo,
                _ => self.shape[a],
            }
        }

        /// `p` moved to the first cell of the part a launch computes (the whole grid's: as it is).
        fn at(&self, p: *mut #real) -> *mut #real {
            match self.part {
                Some([lo, _]) => p.wrapping_add(lo * self.shape[1..].iter().product::<usize>()),
                None => p,
            }
        }
    }
}
