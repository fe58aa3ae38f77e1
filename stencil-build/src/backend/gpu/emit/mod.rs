//! The kernel emitters: each takes a settled [`Plan`] and writes kernel
//! text; none decides a plan. A [`Gen`] holds one statement's kernel with
//! its plan and the plans of the file's other kernels; the pieces every
//! strategy shares (parameters, strides, index math, reads, guards) are
//! here, each strategy's kernel body in a module of its own ([`naive`],
//! [`tiled`], [`stream`], [`temporal`], [`persistent`], [`tensor`]), the
//! launchers in [`launch`], the file's header and helpers in [`mod@header`].

mod frame;
mod header;
mod launch;
mod literals;
mod naive;
mod one_step;
mod persistent;
mod row;
mod stream;
pub(super) mod temporal;
mod tensor;
mod tiled;
mod twins;

use std::fmt::{self, Write as _};

use super::plan::{self, Companions, Plan};
use super::step::{self, Grids};
use super::{Dialect, symbol};
use crate::analysis::{Analysis, StatementInfo};
use crate::backend::{CExpr, Writer, c_bound};
use crate::codegen::expr;
use crate::codegen::index::{offset_index, wrapped_index};
use crate::codegen::names::slot_name;
use crate::ir::{Access, Bound, Boundary, Slot, Statement, Stencil, Strategy};
use header::{Calls, header, join_x, single_step_kernel, twins};

/// The kernel source of one stencil for dialect `d`.
pub fn source(st: &Stencil, an: &Analysis, plan: &Plan, prefix: &str, d: &Dialect) -> String {
    let boundary = frame::boundary_framed(st, plan);
    let framed = frame::framed(an, boundary);
    if framed.iter().all(|f| !f) {
        let grids = step::one_kernel(st, plan).then(|| step::grids(st));
        let body = kernels(st, an, plan, (prefix, d), grids.as_ref(), &framed);
        return with_header((st, an), st, plan, d, &body);
    }
    // Frames (`frame`): the statements of a framed boundary (mixed, or
    // periodic under `frame::boundary_framed`'s rule) run the fixed
    // boundary's kernels on their interior, under launchers of their own,
    // and a frame kernel on the rest; those of the grid outside a box run a
    // frame kernel alone.
    let fast = frame::interior_stencil(st, boundary);
    let fast_an = crate::analysis::analyse(&fast);
    let fast_prefix = frame::interior_prefix(prefix, boundary);
    let mut body = kernels(
        &fast,
        &fast_an,
        plan,
        (&fast_prefix, d),
        None,
        &frame::alone(an),
    );
    let wide = frame::wide_slabs(st, an, &fast_an);
    body.push_str(&wide_kernels(
        &fast,
        &fast_an,
        plan,
        (&fast_prefix, d),
        &wide,
    ));
    body.push_str(&Writer::text(|w| {
        frame::frames(
            w,
            (st, an, boundary),
            (&fast_an, &wide),
            (prefix, &fast_prefix),
            d,
        )
    }));
    with_header((st, an), &fast, plan, d, &body)
}

/// `body` after the file's header, which describes `st`; `kernels_of` is
/// the stencil whose kernels `body` holds.
fn with_header(
    (st, an): (&Stencil, &Analysis),
    kernels_of: &Stencil,
    plan: &Plan,
    d: &Dialect,
    body: &str,
) -> String {
    let others = Companions::of(plan, kernels_of, d);
    Writer::text(|w| {
        header(w, (st, an), plan, others.step.as_ref(), &Calls::of(body), d)?;
        w.append(body);
        Ok(())
    })
}

/// The kernels and launchers of `st`'s statements but the `skipped` ones,
/// or where `grids` are given, of its step in one kernel
/// ([`step::one_kernel`]).
fn kernels(
    st: &Stencil,
    an: &Analysis,
    plan: &Plan,
    (prefix, d): (&str, &Dialect),
    grids: Option<&Grids>,
    skipped: &[bool],
) -> String {
    let others = Companions::of(plan, st, d);
    Writer::text(|w| {
        if let Some(grids) = grids {
            return one_step::kernel(w, st, an, plan, d, prefix, grids);
        }
        for (k, (s, info)) in st.statements.iter().zip(&an.statements).enumerate() {
            if skipped[k] {
                continue;
            }
            let g = Gen::new((st, s, info), plan, d, symbol(prefix, d, st, s), &others);
            statement(w, &g, k, "")?;
        }
        Ok(())
    })
}

/// The plan's kernels and launchers of the slabs of grids outside a box
/// that take them ([`frame::Wide`]), each over the slab's span, marching
/// at most [`frame::SLAB_CHUNK`] cells a block; `st` and `an` are the
/// interior's ([`frame::interior_stencil`]).
fn wide_kernels(
    st: &Stencil,
    an: &Analysis,
    plan: &Plan,
    (prefix, d): (&str, &Dialect),
    wide: &[frame::Wide],
) -> String {
    let plan = &Plan {
        chunk: plan.chunk.min(frame::SLAB_CHUNK),
        ..plan.clone()
    };
    let others = Companions::of(plan, st, d);
    Writer::text(|w| {
        for slab in wide {
            let k = slab.statement;
            let (s, info) = (&st.statements[k], slab.info(&an.statements[k]));
            let sym = slab.plan_symbol(&symbol(prefix, d, st, s), st);
            let g = Gen::new((st, s, &info), plan, d, sym, &others);
            let side = ["below", "above"][slab.side];
            let part = format!(
                ", {side} the box along `{}` (chunk {})",
                st.axes[slab.axis], plan.chunk
            );
            statement(w, &g, k, &part)?;
        }
        Ok(())
    })
}

/// The kernels of statement `k` of the stencil (its plan's, then the
/// file's other single-step kernels) and its launcher; `part` follows the
/// statement's number in their heading.
fn statement(w: &mut Writer, g: &Gen, k: usize, part: &str) -> fmt::Result {
    let (st, s) = (g.st, g.s);
    writeln!(w)?;
    writeln!(
        w,
        "/* Statement {} of {}{part}: {} <- {} */",
        k + 1,
        st.statements.len(),
        st.fields[s.target].name,
        s.text
    )?;
    twins(w, g)?;
    companion_kernels(w, g)?;
    writeln!(w)?;
    g.launcher(w)
}

/// The kernels `g`'s launcher runs besides its own: its single step's (and
/// that one's on small planes) and `naive`'s on small grids, each with its
/// twins.
fn companion_kernels(w: &mut Writer, g: &Gen) -> fmt::Result {
    if let Some(single) = g.single_step() {
        let purpose = if g.plan.small_grids() {
            "small grids"
        } else {
            "launches of one step"
        };
        single_step_kernel(w, &single, purpose)?;
        if let Some(small) = single.single_step() {
            single_step_kernel(w, &small, "one step on small planes")?;
        }
    }
    if let Some(naive) = g.small_naive() {
        writeln!(w)?;
        writeln!(
            w,
            "/* The kernel of single steps on small grids: `naive`, blocks of {} threads. */",
            join_x(&naive.plan.block)
        )?;
        twins(w, &naive)?;
    }
    Ok(())
}

/// Generates the kernel and launcher of one statement.
#[derive(Clone)]
struct Gen<'a> {
    st: &'a Stencil,
    s: &'a Statement,
    info: &'a StatementInfo,
    plan: &'a Plan,
    d: &'a Dialect,
    sym: String,
    /// Cells per thread along the contiguous axis, loaded as one vector (`stream`).
    vector: usize,
    /// Whether cell indices are 64-bit (`ptrdiff_t`); 32-bit kernels run on
    /// grids of fewer than 2^31 cells.
    wide: bool,
    /// The plan of the scalar twins of a 3-D `temporal` kernel of vectors,
    /// which run the grids whose rows are not whole vectors and the largest
    /// ones ([`crate::backend::gpu::plan::temporal::scalar_twin`]).
    scalar: Option<&'a Plan>,
    /// The plan of the scalar twins of this file's 3-D `stream` kernels of
    /// vectors ([`scalar_stream`](crate::backend::gpu::plan::companions::scalar_stream)); `None` in 2-D, where they keep their
    /// kernel's plan.
    defaults: Option<&'a Plan>,
    /// Whether this is a `stream` kernel's twin without vectors, for the
    /// grids whose rows are not whole vectors.
    fallback: bool,
    /// Whether this kernel of vectors has no twin without them: the small
    /// planes' kernel of [`planes_stream`](crate::backend::gpu::plan::model::planes_stream), whose grids of rows that are not
    /// whole vectors run the plan's own twin ([`Gen::launch_small_planes`]).
    vectors_only: bool,
    /// The plan of the other single-step kernel of the file: the one a fused
    /// launch of one step runs instead ([`step_plan`](crate::backend::gpu::plan::companions::step_plan)), or the one `auto`'s
    /// `tensor` runs on small planes ([`small_plan`](crate::backend::gpu::plan::companions::small_plan)).
    step: Option<&'a Plan>,
    /// The plan of the small planes' kernel of the single-step kernel
    /// (`step`) where that is [`planes_stream`](crate::backend::gpu::plan::model::planes_stream)'s ([`small_planes_plan`](crate::backend::gpu::plan::companions::small_planes_plan)).
    step_small: Option<&'a Plan>,
    /// The plan of `auto`'s single steps on small grids ([`naive_plan`](crate::backend::gpu::plan::companions::naive_plan)).
    naive: Option<&'a Plan>,
    /// The launcher's parameter the kernel writes: `out`, or `out_prev` for
    /// the single-step kernel of a fused leapfrog ([`Self::single_step`]).
    output: &'static str,
    /// The grids of the step where this kernel computes every statement of
    /// it ([`step::one_kernel`]; `s` is then the last statement that
    /// updates a state field, whose region the kernel covers).
    whole_step: Option<&'a Grids>,
    /// Whether a periodic grid's reads go unwrapped: the thread's cells are
    /// farther than the kernel's reach from the grid's ends ([`Self::naive`]
    /// in 1-D).
    unwrapped: bool,
}

/// CUDA's built-in index of axis `a` of `dims` (the contiguous axis is `x`).
fn builtin(a: usize, dims: usize) -> &'static str {
    ["x", "y", "z"][dims - 1 - a]
}

impl<'a> Gen<'a> {
    /// The generator of the kernels of statement `s` (of `st`, its facts
    /// `info`) under `plan`, its launcher named `sym`, beside the file's
    /// other kernels `others`.
    fn new(
        (st, s, info): (&'a Stencil, &'a Statement, &'a StatementInfo),
        plan: &'a Plan,
        d: &'a Dialect,
        sym: String,
        others: &'a Companions,
    ) -> Self {
        Gen {
            st,
            s,
            info,
            plan,
            d,
            sym,
            vector: plan.vector,
            wide: true,
            scalar: others.scalar.as_ref(),
            defaults: others.defaults.as_ref(),
            fallback: false,
            vectors_only: false,
            step: others.step.as_ref(),
            step_small: others.step_small.as_ref(),
            naive: others.naive.as_ref(),
            output: "out",
            whole_step: None,
            unwrapped: false,
        }
    }

    /// The generator of another single-step kernel of the launcher, of
    /// `plan`, its kernels named after `<sym>_<suffix>`: 64-bit indices
    /// allowed, no twins or kernels of its own, and a fused leapfrog's one
    /// step writes `out_prev` ([`Self::single_step`], [`Self::small_naive`]),
    /// as does the small planes' kernel of that step.
    fn one_step_kernel(&self, plan: &'a Plan, suffix: &str) -> Self {
        Gen {
            plan,
            sym: format!("{}_{suffix}", self.sym),
            vector: plan.vector,
            wide: true,
            scalar: None,
            step: None,
            step_small: None,
            naive: None,
            // A one-step kernel's own small kernel writes where it does.
            output: if self.leapfrog() {
                "out_prev"
            } else {
                self.output
            },
            vectors_only: false,
            ..self.clone()
        }
    }
}

impl Gen<'_> {
    fn dims(&self) -> usize {
        self.st.dims()
    }

    fn periodic(&self) -> bool {
        self.st.boundary == Boundary::Periodic
    }

    /// `<first> + `, the first cell computed along axis `a` as the term an
    /// index starts from, or nothing where that is 0.
    fn origin(&self, a: usize) -> String {
        match self.info.bounds[a][0] {
            Bound::Low(0) => String::new(),
            _ => format!("{} + ", self.bounds(a).0),
        }
    }

    /// First and one-past-last cell computed along axis `a`: the
    /// statement's span (its region's box within its frame).
    fn bounds(&self, a: usize) -> (String, String) {
        let [from, to] = self.info.bounds[a];
        // The first cell is subtracted from and added to.
        let from = match from {
            Bound::High(k) if k > 0 => format!("({})", c_bound(from, a)),
            _ => c_bound(from, a),
        };
        (from, c_bound(to, a))
    }

    fn reads(&self, slot: Slot) -> Vec<Vec<i64>> {
        self.s.offsets(slot)
    }

    /// Largest |offset| per axis of the reads of `slot`.
    fn reach(&self, slot: Slot) -> Vec<usize> {
        let mut r = vec![0; self.dims()];
        for o in self.reads(slot) {
            for (r, d) in r.iter_mut().zip(&o) {
                *r = (*r).max(d.unsigned_abs() as usize);
            }
        }
        r
    }

    fn arguments(&self) -> String {
        self.argument_list().join(", ")
    }

    /// The launcher's arguments to the kernel: extents, outputs, grids,
    /// run-time parameters and, where the kernel [`Self::banks_literals`],
    /// its literals ([`Self::literal_values`]).
    fn argument_list(&self) -> Vec<String> {
        if let Some(grids) = self.whole_step {
            return one_step::names(self.st, grids);
        }
        let mut a: Vec<String> = (0..self.dims()).map(|a| format!("n{a}")).collect();
        a.push(self.output.into());
        if self.leapfrog() {
            a.push("out_prev".into());
        }
        a.extend(
            self.s
                .slots()
                .into_iter()
                .map(|slot| slot_name(self.st, slot)),
        );
        a.extend(
            self.s
                .params_used()
                .into_iter()
                .map(|i| format!("p_{}", self.st.params[i])),
        );
        if self.banked_literals().is_some() {
            a.push("lits".into());
        }
        a
    }

    /// Whether this kernel indexes with 32 bits where the grid allows. On
    /// the H100 that freed registers and lifted 3-D `stream` on j3d7pt by
    /// 1.1-1.2x (2-D `stream` made no gain), and the fused
    /// kernels by 1.10x (j2d5pt f32), 1.06x (f64) and 1.02x-1.07x (j3d7pt;
    /// design notes, `interior.cu`).
    fn narrow(&self) -> bool {
        self.plan.strategy.fuses_steps()
            || self.plan.strategy == Strategy::Stream && self.dims() == 3
    }

    /// Whether the kernel loads `vector` cells along the contiguous axis as
    /// one vector: every strategy but the fused ones, whose `vector` is the
    /// cells a lane holds.
    fn vector_loads(&self) -> bool {
        self.vector > 1 && !self.plan.strategy.fuses_steps()
    }

    /// The most cells a 32-bit kernel runs on, as a C literal, and the grids
    /// its 64-bit twin runs on, in words: fewer than 2^31, and at most 2^30
    /// for fused kernels (whose blocks count rows past their chunk and tiles
    /// past the grid's edge).
    fn narrow_cells(&self) -> (&'static str, &'static str) {
        if self.plan.strategy.fuses_steps() {
            ("1073741824", "more than 2^30 cells")
        } else {
            ("2147483647", "2^31 cells or more")
        }
    }

    /// Whether each warp is its own tile, run by the warp tile function
    /// ([`Self::warp_tile_function`]): the fused strategies in 2-D.
    fn warp_tiles(&self) -> bool {
        self.dims() == 2 && self.plan.strategy.fuses_steps()
    }

    /// `parameters` with the extents `n<a>` (the first ones) of type `ty`.
    fn typed_extents(&self, mut parameters: Vec<String>, ty: &str) -> Vec<String> {
        for (a, p) in parameters.iter_mut().take(self.dims()).enumerate() {
            *p = format!("const {ty} n{a}");
        }
        parameters
    }

    /// The kernel's name: `<symbol>[_scalar|_pairs|_vector][_i64]_kernel`
    /// (`_scalar`: the fallback of a `stream` kernel of vectors; `_pairs`:
    /// its twin of 8-byte pairs ([`Self::pairs`]); `_vector`:
    /// a 3-D `temporal` kernel of vectors, whose twins are scalar; `_i64`:
    /// the fallback of a 32-bit one).
    fn kernel_name(&self) -> String {
        let scalar = if self.rings() {
            "_rings"
        } else if self.vector_columns() {
            "_vector"
        } else if self.fallback {
            "_scalar"
        } else if self.vector < self.plan.vector {
            "_pairs"
        } else {
            ""
        };
        let wide = if self.wide && self.narrow() {
            "_i64"
        } else {
            ""
        };
        format!("{}{scalar}{wide}_kernel", self.sym)
    }

    /// The kernel's `__launch_bounds__`: its threads, and the blocks a
    /// multiprocessor must keep resident where the kernel asks for them
    /// ([`Self::resident_blocks`]).
    fn launch_bounds(&self) -> String {
        let threads = self.plan.threads();
        match self.resident_blocks() {
            Some(blocks) => format!("{threads}, {blocks}"),
            None => threads.to_string(),
        }
    }

    /// The C type of cell indices in this kernel.
    fn index(&self) -> &'static str {
        if self.wide { "ptrdiff_t" } else { "int" }
    }

    /// Whether this kernel fuses the steps of a leapfrog (a field of two
    /// time levels, [`temporal`]): it also writes the level before the last
    /// (`out_prev`), the next launch's previous level.
    fn leapfrog(&self) -> bool {
        plan::fused_leapfrog(self.st, self.plan, self.s.target)
    }

    /// The statement's C parameters (see [`crate::backend::c_parameters`]), with a
    /// leapfrog's `out_prev` after `out` and, in a kernel or function that
    /// [`Self::banks_literals`], the literals last (`lits`).
    fn parameters(&self, qualifier: &str, kernel: bool) -> Vec<String> {
        if let Some(grids) = self.whole_step {
            return one_step::parameters(self.st, grids, qualifier, kernel);
        }
        let mut p = crate::backend::c_parameters(self.st, self.s, qualifier, kernel);
        if self.leapfrog() {
            let at = self.dims() + 1;
            p.insert(at, p[at - 1].replace("out", "out_prev"));
        }
        if kernel && self.banked_literals().is_some() {
            p.push(format!("const {}_literals lits", self.sym));
        }
        p
    }

    fn kernel(&self, w: &mut Writer) -> fmt::Result {
        if self.plan.strategy == Strategy::Tensor {
            return self.tensor(w);
        }
        if self.rings() {
            return self.rings_kernel(w);
        }
        let parameters = match self.plan.strategy {
            Strategy::Persistent => self.persistent_parameters(true),
            _ => self.parameters("__restrict__", true),
        };
        let mut parameters = self.typed_extents(parameters, self.index());
        if self.plan.strategy == Strategy::Temporal {
            parameters.push("int levels".into());
        }
        if self.chunked() || self.shortens_chunk() {
            parameters.push("int chunk".into());
        }
        let parameters = parameters.join(", ");
        // Before the first twin (the 32-bit one), which both call.
        if self.warp_tiles() && !self.wide {
            self.warp_tile_function(w)?;
            writeln!(w)?;
        }
        if self.vector_columns() {
            self.vector_functions(w)?;
            writeln!(w)?;
        }
        if self.chunked() {
            writeln!(
                w,
                "/* CHUNK: the cells of `{}` a block marches, or 0 for `chunk`, which the launcher shortens for small grids. */",
                self.st.axes[0]
            )?;
            writeln!(w, "template <int CHUNK>")?;
        }
        w.definition(
            format_args!(
                "static __global__ void __launch_bounds__({}) {}({parameters})",
                self.launch_bounds(),
                self.kernel_name()
            ),
            |w| {
                self.strides(w)?;
                match self.plan.strategy {
                    Strategy::Tiled => self.tiled(w),
                    Strategy::Stream => self.stream(w),
                    Strategy::Temporal => self.temporal(w),
                    Strategy::Persistent => self.persistent(w),
                    _ => self.naive(w),
                }?;
                Ok(())
            },
        )
    }

    /// `s<a>`: the cells between neighbours along axis `a`, but the
    /// contiguous one; in a 2-D fused kernel its warp tile function's own.
    fn strides(&self, w: &mut Writer) -> fmt::Result {
        if self.warp_tiles() {
            return Ok(());
        }
        for a in 0..self.dims() - 1 {
            let prod: Vec<String> = (a + 1..self.dims()).map(|b| format!("n{b}")).collect();
            writeln!(w, "const {} s{a} = {};", self.index(), prod.join(" * "))?;
        }
        Ok(())
    }

    /// The update, its reads spelled by `read`; in kernels that
    /// [`Self::banks_literals`], its literals as entries of `lit`.
    fn value(&self, read: &dyn Fn(&Access) -> String) -> String {
        let c = CExpr {
            st: self.st,
            gpu: true,
            read,
        };
        if self.banks_literals() {
            return expr::print(&self.s.expr, &literals::Banked::new(c));
        }
        expr::print(&self.s.expr, &c)
    }

    /// A read straight from global memory at `c` (wrapped for periodic grids).
    fn global_read(&self, a: &Access) -> String {
        let buf = slot_name(self.st, a.slot);
        if !self.periodic() || self.unwrapped {
            return format!("{buf}[{}]", offset_index(&a.offset));
        }
        let index = wrapped_index(&a.offset, |ax, d| {
            format!("stencil_mod({}, n{ax})", shifted(&format!("i{ax}"), d))
        });
        format!("{buf}[{index}]")
    }

    /// `i<a>`, this thread's cell along the axes `axes`.
    fn thread_cells(&self, w: &mut Writer, axes: std::ops::Range<usize>) -> fmt::Result {
        let dims = self.dims();
        for a in axes {
            let origin = if self.aligned(a) {
                String::new()
            } else {
                self.origin(a)
            };
            let cell = format!(
                "({})blockIdx.{} * {} + threadIdx.{}",
                self.index(),
                builtin(a, dims),
                self.plan.block[a],
                builtin(a, dims)
            );
            let cell = if a + 1 == dims && self.vector > 1 {
                format!("({cell}) * {}", self.vector)
            } else {
                cell
            };
            writeln!(w, "const {} i{a} = {origin}{cell};", self.index())?;
        }
        Ok(())
    }

    /// `o<a>` (block origin), `l<a>` (thread within the block) and `i<a>` (cell)
    /// along every axis, and with `tid` the flat thread index.
    fn thread_coordinates(&self, w: &mut Writer, tid: bool) -> fmt::Result {
        let dims = self.dims();
        for (a, size) in self.plan.block.iter().enumerate().take(dims) {
            let b = builtin(a, dims);
            writeln!(
                w,
                "const ptrdiff_t o{a} = {} + (ptrdiff_t)blockIdx.{b} * {size};",
                self.bounds(a).0,
            )?;
            writeln!(w, "const int l{a} = threadIdx.{b};")?;
            writeln!(w, "const ptrdiff_t i{a} = o{a} + l{a};")?;
        }
        if tid {
            let coords: Vec<String> = (0..dims)
                .map(|a| format!("threadIdx.{}", builtin(a, dims)))
                .collect();
            let extents: Vec<String> = self.plan.block.iter().map(usize::to_string).collect();
            writeln!(w, "const int tid = {};", flat(&coords, &extents))?;
        }
        Ok(())
    }

    fn guard(&self, axes: std::ops::Range<usize>) -> String {
        axes.map(|a| {
            let (lo, hi) = self.bounds(a);
            if self.aligned(a) && self.vector > 1 {
                format!("i{a} + {} <= {lo} || i{a} >= {hi}", self.vector)
            } else if self.aligned(a) && lo != "0" {
                format!("i{a} < {lo} || i{a} >= {hi}")
            } else {
                format!("i{a} >= {hi}")
            }
        })
        .collect::<Vec<_>>()
        .join(" || ")
    }

    /// Whether `stream` blocks compute their chunk in one pass (no window to
    /// carry from one iteration to the next).
    fn single_pass(&self) -> bool {
        self.plan.strategy == Strategy::Stream && self.plan.chunk <= self.plan.coarsen
    }

    /// Whether blocks along axis `a` start at multiples of the block, not at
    /// the region's first cell: `stream` does so along the contiguous axis, so
    /// that each warp's loads and stores are aligned to whole cache sectors.
    fn aligned(&self, a: usize) -> bool {
        self.plan.strategy == Strategy::Stream && a + 1 == self.dims()
    }
}

/// ` + d`, ` - d` or nothing.
fn signed(d: i64) -> String {
    match d {
        0 => String::new(),
        d if d < 0 => format!(" - {}", -d),
        d => format!(" + {d}"),
    }
}

/// `x + d`, `x - d` or `x`.
fn shifted(x: &str, d: i64) -> String {
    match d {
        0 => x.to_string(),
        d if d < 0 => format!("{x} - {}", -d),
        d => format!("{x} + {d}"),
    }
}

/// `t0 * (e1 * e2) + t1 * e2 + t2`: a flat index of thread coordinates.
fn flat(coords: &[String], extents: &[String]) -> String {
    let n = coords.len();
    (0..n)
        .map(|k| {
            let stride: Vec<&str> = extents[k + 1..].iter().map(String::as_str).collect();
            if stride.is_empty() {
                coords[k].clone()
            } else {
                format!("{} * {}", coords[k], stride.join(" * "))
            }
        })
        .collect::<Vec<_>>()
        .join(" + ")
}
