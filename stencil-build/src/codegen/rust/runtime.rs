//! The helpers the generated file holds once for all its stencils: the
//! error type, the OpenMP thread control, the tiling descriptions, the
//! GPU sessions' trial of fused launches against single steps, and the
//! `stencil_runtime` module (argument checks, periodic wrapping, `powi`,
//! frame copies, time levels), each emitted only where a stencil needs it.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{Linked, docs, ident};
use crate::analysis::Analysis;
use crate::ir::{Boundary, Role, Stencil, Version};

/// Runtime helpers some stencil needs; only those are emitted.
pub(super) struct Needs {
    wrap: bool,
    powi: bool,
    frame: bool,
    /// `Io::prev`: a statement reads the previous level of the field it writes.
    own_prev: bool,
    /// `Levels::{prev, cur, next}`: a statement reads that level of another state field.
    prev: bool,
    cur: bool,
    next: bool,
}

impl Needs {
    pub(super) fn of(stencils: &[(Stencil, Analysis)]) -> Self {
        let any = |f: &dyn Fn(&Stencil) -> bool| stencils.iter().any(|(st, _)| f(st));
        let reads = |own: bool, version: Version| {
            any(&|st| {
                st.statements.iter().any(|s| {
                    s.slots().iter().any(|slot| {
                        slot.version == version
                            && (slot.field == s.target) == own
                            && matches!(st.fields[slot.field].role, Role::State { .. })
                    })
                })
            })
        };
        Needs {
            wrap: any(&|st| {
                st.boundary == Boundary::Periodic
                    && st.statements.iter().any(|s| {
                        let mut shifted = false;
                        s.expr
                            .for_each_read(&mut |a| shifted |= a.offset.iter().any(|&d| d != 0));
                        shifted
                    })
            }),
            powi: any(&|st| st.statements.iter().any(|s| s.expr.uses_powi())),
            frame: any(&|st| {
                st.boundary == Boundary::Fixed && st.fields.iter().any(|f| f.has_prev())
            }),
            own_prev: reads(true, Version::Prev),
            prev: reads(false, Version::Prev),
            cur: reads(false, Version::Start),
            next: reads(false, Version::Updated),
        }
    }
}

pub(super) fn preamble(linked: &Linked, needs: &Needs) -> TokenStream {
    let trial = linked
        .gpus()
        .any(|g| g.plans.iter().any(|p| p.fuses_steps()));
    let runtime = runtime(needs, trial);
    let openmp = linked.openmp.as_ref().map(|prefix| openmp_preamble(prefix));
    let runtimes: Vec<TokenStream> = linked
        .gpus()
        .map(|g| super::gpu::runtime_module(&g.prefix, &g.dialect, needs.frame))
        .collect();
    let gpu = (!runtimes.is_empty()).then(|| gpu_preamble(&runtimes));
    let error = stencil_error();
    quote! {
        #error

        #openmp
        #gpu
        #runtime
    }
}

/// The types every GPU backend's modules share: `GpuTiling`, `Fusion`,
/// `Measurement`, then each dialect's runtime module (`runtimes`).
fn gpu_preamble(runtimes: &[TokenStream]) -> TokenStream {
    let small_steps_doc = docs(&format!(
        "`auto`'s choice of another strategy than `naive`: single steps on small grids \
         (under {} cells per multiprocessor; {} for a `stream` of 16-byte vectors marching \
         64 planes, `auto`'s for the f64 stars of radius 3 or more whose update reads more grids) \
         run `naive`'s kernel.",
        crate::backend::gpu::plan::SMALL_STEP_CELLS,
        crate::backend::gpu::plan::SMALL_STEP_CELLS_MORE_GRIDS
    ));
    let small_grids_doc = docs(&format!(
        "`auto`'s choice of `tensor`, or of `stream` of 16-byte vectors marching 64 planes: \
         small grids (where `tensor`'s blocks would compute too little; planes of fewer than \
         {} cells) run `stream` in 16-byte vectors of blocks of [1, 2, 64] threads marching 4 \
         planes (false for the other plans).",
        crate::backend::gpu::plan::SMALL_PLANES
    ));
    quote! {
        /// Tiling compiled into a stencil's GPU kernels.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct GpuTiling {
            /// `naive`, `tiled`, `stream`, `tensor`, `temporal` or `persistent`.
            pub strategy: &'static str,
            /// Threads per block per axis, in axis order.
            pub block: &'static [usize],
            /// Cells of the slowest axis each block marches through (`stream`, `tensor`, `temporal`; 1 otherwise).
            pub chunk: usize,
            /// Cells of the slowest axis a `stream` thread computes per iteration, of the
            /// middle axis a 3-D `temporal` thread computes, or of a 1-D `naive` thread, a
            /// block apart (1 otherwise).
            pub coarsen: usize,
            /// Cells of the contiguous axis a `stream` thread computes as one vector, or a
            /// `temporal` lane computes (1 otherwise).
            pub vector: usize,
            /// Steps fused per launch (`temporal`, `persistent`; 1 otherwise).
            pub time_block: usize,
            /// The most blocks per multiprocessor a `persistent` launch keeps resident
            /// (`None`: as many as fit, and for the other strategies).
            pub occupancy: Option<usize>,
            #small_grids_doc
            pub small_grids: bool,
            #small_steps_doc
            pub small_steps: bool,
        }

        /// How a GPU session runs launches of several steps where its plan fuses them
        /// (`temporal` of several steps a launch, `persistent`): `Session::fusion`,
        /// `Session::set_fusion`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Fusion {
            /// Time a fused launch against as many launches of the single-step kernel on the
            /// session's grids, once, then keep the faster (the default where `auto` chose
            /// the fused strategy): on small grids single steps can win.
            Measure,
            /// Fused launches (the default where the spec names the strategy).
            Fused,
            /// One step a launch, through the single-step kernel (the only way of plans that
            /// do not fuse).
            Single,
        }

        /// What a session's measurement (`Fusion::Measure`) timed, on its grids: the
        /// fastest part of each way, every part `steps` steps from an idle device to an
        /// idle device (`Session::measurement`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct Measurement {
            /// The steps each timed part ran: a fused launch's, or as many as a whole
            /// graph of such launches runs where the session timed graphs.
            pub steps: u64,
            /// The fastest part of fused launches.
            pub fused: ::std::time::Duration,
            /// The fastest part of launches of one step.
            pub single: ::std::time::Duration,
        }

        impl Measurement {
            /// The way the session keeps: single steps where their part took less than
            /// 98% of the fused launches' part, else fused launches.
            pub fn faster(&self) -> Fusion {
                if self.single.as_nanos() * 50 < self.fused.as_nanos() * 49 {
                    Fusion::Single
                } else {
                    Fusion::Fused
                }
            }
        }

        #(#runtimes)*
    }
}

/// `StencilError`, what every generated function returns on failure.
fn stencil_error() -> TokenStream {
    quote! {
    /// An error from a generated stencil function. Nothing is written to
    /// the caller's grids when one is returned.
    #[derive(Clone, Debug, PartialEq, Eq)]
    #[non_exhaustive]
    pub enum StencilError {
        /// An extent of the shape is smaller than the stencil allows (`2 * RADIUS + 1`).
        ShapeTooSmall {
            /// The stencil.
            stencil: &'static str,
            /// The axis.
            axis: &'static str,
            /// The extent given.
            extent: usize,
            /// The smallest legal extent.
            min: usize,
        },
        /// The shape's cell count does not fit in memory addresses.
        ShapeOverflow {
            /// The stencil.
            stencil: &'static str,
        },
        /// A generic entry point (`run_grids`) got the wrong number of axes, grids or params.
        ArgumentCount {
            /// The stencil.
            stencil: &'static str,
            /// `"axes"`, `"grids"` or `"params"`.
            what: &'static str,
            /// How many the stencil takes.
            expected: usize,
            /// How many were given.
            actual: usize,
        },
        /// The GPU runtime reported an error.
        Device {
            /// The stencil (empty for calls not tied to one).
            stencil: &'static str,
            /// `cuda` or `hip`.
            backend: &'static str,
            /// The call that failed: a kernel (`update_<field>`) or a runtime call.
            call: &'static str,
            /// The runtime's message.
            message: String,
        },
        /// A grid's length differs from the shape's cell count.
        LengthMismatch {
            /// The stencil.
            stencil: &'static str,
            /// The argument.
            field: &'static str,
            /// The shape's cell count.
            expected: usize,
            /// The slice's length.
            actual: usize,
        },
    }

    impl ::std::fmt::Display for StencilError {
        fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
            match self {
                StencilError::ShapeTooSmall { stencil, axis, extent, min } => write!(f, "{stencil}: axis `{axis}` has {extent} cells but the stencil needs at least {min}"),
                StencilError::ShapeOverflow { stencil } => write!(f, "{stencil}: the shape has more cells than fit in memory"),
                StencilError::Device { stencil, backend, call, message } => write!(f, "{stencil}: {backend} `{call}` failed: {message}"),
                StencilError::ArgumentCount { stencil, what, expected, actual } => write!(f, "{stencil}: takes {expected} {what}, got {actual}"),
                StencilError::LengthMismatch { stencil, field, expected, actual } => write!(f, "{stencil}: `{field}` has {actual} elements but the shape has {expected} cells"),
            }
        }
    }

    impl ::std::error::Error for StencilError {}
    }
}

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
        /// Cache blocking compiled into a stencil's OpenMP kernels.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct OpenmpTiling {
            /// Block extent per axis, in axis order.
            pub block: &'static [usize],
        }

        unsafe extern "C" {
            fn #get() -> ::std::os::raw::c_int;
            fn #set(threads: ::std::os::raw::c_int) -> ::std::os::raw::c_int;
        }

        /// Threads the OpenMP kernels use when called from this thread
        /// (`omp_get_max_threads`; set by `OMP_NUM_THREADS` or [`openmp_set_threads`]).
        pub fn openmp_max_threads() -> usize {
            stencil_safety!("a plain query of the OpenMP runtime.");
            unsafe { #get() }.max(1) as usize
        }

        #set_doc
        pub fn openmp_set_threads(threads: usize) -> usize {
            let threads = threads.clamp(1, ::std::os::raw::c_int::MAX as usize) as ::std::os::raw::c_int;
            stencil_safety!("sets an OpenMP internal control variable of the calling thread.");
            unsafe { #set(threads) }.max(1) as usize
        }
    }
}

/// `Trial`: a GPU session's measurement of its fused launches against single
/// steps (`Fusion::Measure`).
fn trial_helper() -> TokenStream {
    let next = trial_next();
    quote! {
        /// A session's measurement of fused launches against single steps, in parts, each run
        /// within one `step` call that has the steps for it: a fused launch and a single step
        /// (the first launches of a kernel load it), then cycles of four timed parts, `span`
        /// fused steps, `span` single steps, `span` single steps and `span` fused steps, each
        /// timed from an idle device to an idle device (in that order, so that a clock still
        /// rising favours neither). Each way's time is its fastest part's (a part that waited
        /// on the host or ran at a lower clock is slower, never faster). Once the timed parts
        /// have taken [`Trial::SPENT`] in all, the trial ends after [`Trial::CYCLES`] cycles,
        /// or after [`Trial::CLEAR_CYCLES`] where one way took under half the other's time
        /// (where parts take that long, each part of the slower way costs much); parts that
        /// never add up to it end after [`Trial::MOST_CYCLES`]. Where the session replays
        /// graphs of launches and the first cycle's single steps took under [`Trial::QUICK`]
        /// each (steps whose launch is much of their time, which graphs save), the cycles
        /// start again with parts of a whole graph of each way's launches.
        #[derive(Clone, Copy, Debug)]
        pub struct Trial {
            part: u32,
            /// Parts are `span` steps times this: 1, or the launches of a graph.
            scale: u64,
            fused: ::std::time::Duration,
            single: ::std::time::Duration,
            spent: ::std::time::Duration,
        }

        impl Default for Trial {
            fn default() -> Self {
                Trial {
                    part: 0,
                    scale: 1,
                    fused: ::std::time::Duration::MAX,
                    single: ::std::time::Duration::MAX,
                    spent: ::std::time::Duration::ZERO,
                }
            }
        }

        impl Trial {
            /// The fewest cycles of timed parts.
            pub const CYCLES: u32 = 4;
            /// The fewest cycles where one way takes under half the other's time.
            pub const CLEAR_CYCLES: u32 = 1;
            /// The time the timed parts take in all before the trial may end.
            pub const SPENT: ::std::time::Duration = ::std::time::Duration::from_millis(1);
            /// The most cycles of timed parts, however long they took.
            pub const MOST_CYCLES: u32 = 16;
            /// A single step under which parts are timed as whole graphs.
            pub const QUICK: ::std::time::Duration = ::std::time::Duration::from_micros(20);

            /// The steps the next part runs: the caller runs it in a call with that many left.
            pub fn steps(&self, span: u64) -> u64 {
                match self.part {
                    0 => span,
                    1 => 1,
                    _ => span * self.scale,
                }
            }

            #next
        }
    }
}

/// `Trial::next`: one part of the trial, and once it is done what it timed.
fn trial_next() -> TokenStream {
    quote! {
    /// Runs the next part: `run(steps, each)` runs `steps` steps in launches of `each`
    /// (fused where `each > 1`), replaying runs of `graph` launches as graphs where
    /// `graph > 1`; `wait` waits for the device. Returns the steps run and, after the
    /// last part, what the trial timed (whose `faster` is the way to keep).
    pub fn next(
        &mut self,
        span: u64,
        graph: u64,
        run: &mut dyn FnMut(u64, u64) -> Result<(), StencilError>,
        wait: &dyn Fn() -> Result<(), StencilError>,
    ) -> Result<(u64, Option<super::Measurement>), StencilError> {
        let steps = span * self.scale;
        let mut timed = |each: u64| {
            wait()?;
            let start = ::std::time::Instant::now();
            run(steps, each)?;
            wait()?;
            Ok::<_, StencilError>(start.elapsed())
        };
        let ran = match self.part {
            0 => {
                run(span, span)?;
                span
            }
            1 => {
                run(1, 1)?;
                1
            }
            p => {
                let fused = matches!((p - 2) % 4, 0 | 3);
                let took = timed(if fused { span } else { 1 })?;
                let best = if fused { &mut self.fused } else { &mut self.single };
                *best = (*best).min(took);
                self.spent += took;
                steps
            }
        };
        self.part += 1;
        // Timed parts run, and whole cycles of them.
        let timed_parts = self.part.saturating_sub(2);
        if timed_parts == 4 && self.scale == 1 && graph > 1 && self.single < Self::QUICK.saturating_mul(span as u32) {
            *self = Trial { part: 2, scale: graph, ..Trial::default() };
            return Ok((ran, None));
        }
        let cycles = timed_parts / 4;
        let clear = self.fused.min(self.single).saturating_mul(2) < self.fused.max(self.single);
        let enough = if self.spent >= Self::SPENT {
            cycles >= Self::CYCLES || clear && cycles >= Self::CLEAR_CYCLES
        } else {
            cycles >= Self::MOST_CYCLES
        };
        // Timed parts that end a cycle.
        let done = cycles * 4 == timed_parts && enough;
        if !done {
            return Ok((ran, None));
        }
        let measured = super::Measurement { steps, fused: self.fused, single: self.single };
        *self = Trial::default();
        Ok((ran, Some(measured)))
    }
    }
}

fn runtime(needs: &Needs, trial: bool) -> TokenStream {
    let levels = levels(needs);
    let trial = trial.then(trial_helper);
    let wrap = needs.wrap.then(|| {
        quote! {
            /// The coordinate `i + d` wrapped onto `0..n`.
            #[inline]
            pub fn wrap(i: usize, d: isize, n: usize) -> usize {
                (i as isize + d).rem_euclid(n as isize) as usize
            }
        }
    });
    let powi = needs.powi.then(|| {
        quote! {
            /// `x^n` by repeated multiplication, the same way every backend computes it.
            #[inline]
            pub fn powi<T: Copy + ::std::ops::Mul<Output = T> + ::std::ops::Div<Output = T> + From<f32>>(x: T, n: i32) -> T {
                let mut r = T::from(1.0);
                for _ in 0..n.unsigned_abs() {
                    r = r * x;
                }
                if n < 0 { T::from(1.0) / r } else { r }
            }
        }
    });
    let frame = needs.frame.then(|| {
        quote! {
            /// Copies the cells within `radius` of an edge from `src` to `dst`.
            pub fn copy_frame<T: Copy>(src: &[T], dst: &mut [T], shape: &[usize], radius: &[usize]) {
                let (rows, last) = shape.split_at(shape.len() - 1);
                let (n, r) = (last[0], radius[radius.len() - 1]);
                let row_count: usize = rows.iter().product();
                for row in 0..row_count {
                    let mut rest = row;
                    let mut edge = false;
                    for (a, &extent) in rows.iter().enumerate().rev() {
                        let i = rest % extent;
                        rest /= extent;
                        edge |= i < radius[a] || i >= extent - radius[a];
                    }
                    let base = row * n;
                    if edge {
                        dst[base..base + n].copy_from_slice(&src[base..base + n]);
                    } else {
                        dst[base..base + r].copy_from_slice(&src[base..base + r]);
                        dst[base + n - r..base + n].copy_from_slice(&src[base + n - r..base + n]);
                    }
                }
            }
        }
    });
    quote! {
        /// Helpers shared by the generated stencils (public for the tests of the generated
        /// code, not an API).
        #[doc(hidden)]
        pub mod stencil_runtime {
            use super::StencilError;

            #trial

            /// Checks `shape` against the stencil's smallest extents and returns its cell count.
            pub fn cells(stencil: &'static str, axes: &[&'static str], shape: &[usize], min: &[usize]) -> Result<usize, StencilError> {
                for ((&axis, &extent), &min) in axes.iter().zip(shape).zip(min) {
                    if extent < min {
                        return Err(StencilError::ShapeTooSmall { stencil, axis, extent, min });
                    }
                }
                shape
                    .iter()
                    .try_fold(1usize, |n, &e| n.checked_mul(e))
                    .filter(|&n| n <= isize::MAX as usize)
                    .ok_or(StencilError::ShapeOverflow { stencil })
            }

            /// Checks that a grid holds one value per cell.
            pub fn check_len(stencil: &'static str, field: &'static str, expected: usize, actual: usize) -> Result<(), StencilError> {
                if expected == actual { Ok(()) } else { Err(StencilError::LengthMismatch { stencil, field, expected, actual }) }
            }

            #levels

            #wrap
            #powi
            #frame
        }
    }
}

/// The accessors of `Levels` some statement uses: `next`, `cur`, `prev`.
fn level_accessors(needs: &Needs) -> TokenStream {
    let accessor = |on: bool, name: &str, level: TokenStream, doc: &str| {
        let name = ident(name);
        let doc = docs(doc);
        on.then(
            || quote! { #doc pub fn #name(&self) -> &[T] { &*self.bufs[self.physical(#level)] } },
        )
    };
    let next = accessor(
        needs.next,
        "next",
        quote!(self.bufs.len() - 1),
        "The level computed this step (valid once its statement ran).",
    );
    let cur = accessor(
        needs.cur,
        "cur",
        quote!(self.bufs.len() - 2),
        "The level at the start of the step.",
    );
    let prev = accessor(needs.prev, "prev", quote!(0), "The previous level.");
    quote! {
        #next
        #cur
        #prev
    }
}

/// `Levels` and `Io`, with only the accessors some statement uses.
fn levels(needs: &Needs) -> TokenStream {
    let accessors = level_accessors(needs);
    let (prev_field, prev_find, prev_init) = if needs.own_prev {
        (
            quote! { /// The previous level (the current one for single-level fields).
            pub prev: &'b [T], },
            quote! { else if i == p { prev = Some(&**b); } },
            quote! { prev: prev.unwrap_or(cur), },
        )
    } else {
        (quote!(), quote!(), quote!())
    };
    let (p_index, p_decl) = if needs.own_prev {
        (
            quote!(let p = self.physical(0);),
            quote!(let mut prev = None;),
        )
    } else {
        (quote!(), quote!())
    };
    quote! {
        /// The time levels of one state field: the caller's buffers and a
        /// scratch buffer, rotated each step instead of copied.
        pub struct Levels<'a, T> {
            /// Physical buffers: `[prev,] cur, next` at turn 0.
            bufs: Vec<&'a mut [T]>,
            turn: usize,
        }

        /// One statement's view of the levels of the field it writes.
        pub struct Io<'b, T> {
            #prev_field
            /// The level at the start of the step.
            pub cur: &'b [T],
            /// The level being computed.
            pub next: &'b mut [T],
        }

        impl<'a, T> Levels<'a, T> {
            /// `bufs` in order `[prev,] cur, next`.
            pub fn new(bufs: Vec<&'a mut [T]>) -> Self {
                Levels { bufs, turn: 0 }
            }

            fn physical(&self, level: usize) -> usize {
                (level + self.turn) % self.bufs.len()
            }

            #accessors

            /// Borrows the levels for the statement that writes this field.
            pub fn io(&mut self) -> Io<'_, T> {
                let len = self.bufs.len();
                let (c, n) = (self.physical(len - 2), self.physical(len - 1));
                #p_index
                #p_decl
                let (mut cur, mut next) = (None, None);
                for (i, b) in self.bufs.iter_mut().enumerate() {
                    if i == n {
                        next = Some(&mut **b);
                    } else if i == c {
                        cur = Some(&**b);
                    } #prev_find
                }
                let (cur, next) = (cur.expect("levels hold a current buffer"), next.expect("levels hold a next buffer"));
                Io { #prev_init cur, next }
            }

            /// Ends a step: the next level becomes current.
            pub fn advance(&mut self) {
                self.turn += 1;
            }

            /// Moves every level back into the buffer the caller passed for it.
            pub fn finish(mut self) {
                let len = self.bufs.len();
                for _ in 0..self.turn % len {
                    for i in 0..len - 1 {
                        let (a, b) = self.bufs.split_at_mut(i + 1);
                        a[i].swap_with_slice(b[0]);
                    }
                }
            }
        }
    }
}
