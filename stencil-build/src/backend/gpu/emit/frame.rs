//! A mixed boundary on the GPU: each statement's kernels are those of the
//! stencil with a fixed boundary (its "interior", every strategy's fast
//! path, free of edge tests), under launchers of their own; after each,
//! a frame kernel computes the rest of the statement's region (blocks of
//! threads over a slab, columns along its slowest axis), its reads
//! remapped past the sides that are not fixed. The
//! statement's launcher runs both, the frame over one slab per updated
//! side: a slab of axis `a` spans the interior along the axes before `a`
//! and the whole region along those after it, so that the slabs cover the
//! frame once.
//!
//! The grid outside a box is such a frame too. Its slabs of the axes
//! before the contiguous one span whole rows: each runs the plan's kernels
//! (under the compile-time span of the slab, [`Wide`]) where its reads stay
//! in the grid, and the frame kernel only around that; the slabs of the
//! contiguous axis, a few cells wide, run the frame kernel.

use std::fmt::{self, Write as _};

use super::super::{Dialect, step, symbol};
use super::Plan;
use crate::analysis::region_extent;
use crate::analysis::{Analysis, StatementInfo};
use crate::backend::{
    CExpr, CRemap, Writer, arguments_writing, c_bound, c_parameters, c_spans, declare_spans,
    edge_helpers, frame_slab, frame_slab_origin, frame_slabs, reads_slowest_extent, slab_variables,
};
use crate::codegen::expr;
use crate::codegen::index::{linear_index, remapped_read};
use crate::codegen::names::slot_name;
use crate::ir::{Access, Bound, Boundary, Statement, Stencil, Strategy};

/// Threads per block of a frame kernel.
const FRAME_BLOCK: usize = 256;

/// Cells of the slowest axis each thread of a 3-D frame kernel computes.
/// On the H200 (acoustic25 with absorbing layers and a reflecting side, 300
/// x 994 x 750, the launchers of its two regions timed alone), blocks of 32
/// x 8 threads with columns of 4 ran the frames 1.01x (f32) and 1.04x (f64)
/// as fast as a cell a thread in blocks of 256 along the slab, which they
/// replaced: a frame kernel waits on its loads from L1 (25 a cell there),
/// and the blocks' shape gains little (design notes, "Boundary kinds and
/// regions").
const FRAME_COLUMN: usize = 4;

/// Cells of the contiguous axis at or under which a frame kernel's blocks
/// are 16 x 16 threads, not 32 x 8. In the measurement of [`FRAME_COLUMN`]
/// blocks as wide as such a slab (12 cells, their warps spanning several
/// of its rows) ran the layers 0.95x as fast in f32, 1.00x in f64.
const NARROW: usize = 16;

/// The most cells of the slowest axis a block of a [`Wide`] slab's kernel
/// marches (the plan's `chunk`, where larger). A slab is a few cells thick
/// along one axis, so the plan's chunk left it few blocks: on the H200
/// (acoustic25 with absorbing layers, 300 x 994 x 750, each ratio to plain
/// acoustic25 in the same lease) the layers' slabs in the plan's `stream` kernels of
/// chunk 64 ran the stencil at 0.84x of plain acoustic25 in f32, as the
/// frame kernel had; of chunk 8, 0.857x (f64 0.881x); of chunk 4, 0.858x
/// (f64 0.874x).
pub(super) const SLAB_CHUNK: usize = 8;

/// The most blocks a launch may have along its second and third axes.
const GRID_YZ: usize = 65535;

/// Whether every statement of `st` under `plan` runs its interior and
/// its frame apart: with a mixed boundary, and with a periodic one in 2-D
/// where the plan is `naive`'s kernel a statement, whose interior then
/// reads without wrapping. `naive` wraps each of a cell's reads (a
/// compare and an add an index); `stream` wraps each value once, as its
/// window loads it. On the H200 (2026-12-04, corpus, `auto` before and
/// after in turn, twice) framing ran `naive`'s periodic 2-D random_09 1.23x
/// and `stream`'s 0.73x-1.34x (under 0.9x on 5 of 13 rows: the fixed
/// boundary's `stream` kernel alone took longer than the whole wrapping
/// step on star2d_r1 f32, 626 us against 527, and random_08 f64, 1550
/// against 1290; the frame along the contiguous axis, a cell wide, took
/// 70 us of a 3-D radius-1 step's 410, which is why 3-D, where no `naive`
/// kernel a statement was measured, wraps). 1-D rows skip the wrap away
/// from the ends in the kernel itself; a step in one kernel wraps.
pub(super) fn boundary_framed(st: &Stencil, plan: &Plan) -> bool {
    match st.boundary {
        Boundary::Mixed(_) => true,
        Boundary::Periodic => {
            st.dims() == 2 && plan.strategy == Strategy::Naive && !step::one_kernel(st, plan)
        }
        Boundary::Fixed => false,
    }
}

/// Per statement, whether it has a frame: every one where the `boundary`
/// is framed ([`boundary_framed`]), else those of the grid outside a box.
pub(super) fn framed(an: &Analysis, boundary: bool) -> Vec<bool> {
    an.statements
        .iter()
        .map(|info| boundary || info.hole.is_some())
        .collect()
}

/// Per statement, whether its frame kernel is all it runs: a statement of
/// the grid outside a box.
pub(super) fn alone(an: &Analysis) -> Vec<bool> {
    an.statements
        .iter()
        .map(|info| info.hole.is_some())
        .collect()
}

/// A slab of the grid outside a box, along an axis before the contiguous
/// one, that runs the plan's kernels. On the H200 the frame kernel ran such
/// layers at about half the speed per cell of the box's kernels (design
/// notes, "Boundary kinds and regions"); a slab of whole rows is what the
/// plan's kernels take, in full warps and vectors.
#[derive(Clone, Debug)]
pub(super) struct Wide {
    /// The statement whose region the slab is part of.
    pub statement: usize,
    /// The slab's axis and side (0 below the box, 1 above it).
    pub axis: usize,
    pub side: usize,
    /// The slab's cells.
    pub cells: Vec<[Bound; 2]>,
    /// The cells of it whose reads stay in the grid (with a fixed
    /// boundary, all of them): the span of the plan's kernels.
    pub fast: Vec<[Bound; 2]>,
    /// The span of the interior's kernels, which holds `fast` on large
    /// grids.
    pub interior: Vec<[Bound; 2]>,
}

impl Wide {
    /// `below_<axis>` or `above_<axis>`, the suffix of its launchers.
    pub fn suffix(&self, st: &Stencil) -> String {
        let side = ["below", "above"][self.side];
        format!("{side}_{}", st.axes[self.axis])
    }

    /// The launcher of the plan's kernels over it, for the statement's
    /// interior launcher `interior` (with a fixed boundary, the statement's
    /// own launcher's name, which the frame's launcher takes).
    pub fn plan_symbol(&self, interior: &str, st: &Stencil) -> String {
        format!("{interior}_{}_plan", self.suffix(st))
    }

    /// The C condition under which the plan's kernels take the slab: their
    /// span has cells and lies in the interior's (on small grids either
    /// may fail); `None` where that holds on every grid.
    fn takes(&self) -> Option<String> {
        let mut terms = Vec::new();
        for (a, ([lo, hi], [in_lo, in_hi])) in self.fast.iter().zip(&self.interior).enumerate() {
            let c = |b: &Bound| c_bound(*b, a);
            let mut term = |[x, y]: [&Bound; 2], op: &str, holds: bool| {
                if !holds {
                    terms.push(format!("{} {op} {}", c(x), c(y)));
                }
            };
            term([lo, hi], "<", below(*lo, *hi) == Some(true));
            term([lo, in_lo], ">=", below(*lo, *in_lo) == Some(false));
            term([hi, in_hi], "<=", below(*in_hi, *hi) == Some(false));
        }
        (!terms.is_empty()).then(|| terms.join(" && "))
    }

    /// The statement's info for the plan's kernels over [`Self::fast`],
    /// from that of the interior's stencil.
    pub fn info(&self, interior: &StatementInfo) -> StatementInfo {
        StatementInfo {
            bounds: self.fast.clone(),
            hole: None,
            ..interior.clone()
        }
    }
}

/// The slabs of the grids outside a box that run the plan's kernels
/// ([`Wide`]): per statement of such a region, those of the axes before the
/// contiguous one whose part inside the interior's span (`interior_an`'s,
/// a fixed boundary's) has cells on large grids.
pub(super) fn wide_slabs(st: &Stencil, an: &Analysis, interior_an: &Analysis) -> Vec<Wide> {
    let dims = st.dims();
    let mut wide = Vec::new();
    for (k, (info, twin)) in an
        .statements
        .iter()
        .zip(&interior_an.statements)
        .enumerate()
    {
        let (Some(hole), Some(twin_hole)) = (&info.hole, &twin.hole) else {
            continue;
        };
        for (axis, side) in frame_slabs(&info.bounds, hole) {
            let fast = frame_slab(&twin.bounds, twin_hole, axis, side);
            if axis + 1 < dims && fast.iter().all(|&b| region_extent(b).is_some()) {
                wide.push(Wide {
                    statement: k,
                    axis,
                    side,
                    cells: frame_slab(&info.bounds, hole, axis, side),
                    fast,
                    interior: twin.bounds.clone(),
                });
            }
        }
    }
    wide
}

/// Per axis, the extent under which the span of a statement's interior
/// kernels (`twin`, a fixed boundary's) is not what their kernels compute,
/// where that is above the stencil's smallest legal extent (`min_shape`):
/// `None` elsewhere. The fixed boundary's analysis takes a side of the
/// region `n - k` (or `c`) to lie beyond its halo `h`, which grids under
/// `k + h` (`c + h`) cells break; with a mixed boundary `min_shape`
/// already holds it, with a periodic one it does not (its halo is none).
fn small_extents(twin: &StatementInfo, min_shape: &[usize]) -> Vec<Option<usize>> {
    (twin.bounds.iter().zip(&twin.halo).zip(min_shape))
        .map(|((&[from, to], &h), &least)| {
            let from = match from {
                Bound::High(k) => k + h,
                Bound::Low(_) => 0,
            };
            let to = match to {
                Bound::Low(c) => c + h,
                Bound::High(_) => 0,
            };
            let n = from.max(to);
            (n > least).then_some(n)
        })
        .collect()
}

/// Whether the coordinate `a` is below `b` on every grid (`Some(true)`),
/// on none (`Some(false)`), or on some only (`None`).
fn below(a: Bound, b: Bound) -> Option<bool> {
    match (a, b) {
        (Bound::Low(x), Bound::Low(y)) => Some(x < y),
        (Bound::High(x), Bound::High(y)) => Some(x > y),
        _ => None,
    }
}

/// The stencil whose kernels compute the statements' interiors: `st`, or
/// where its `boundary` is framed ([`boundary_framed`]), `st` with a fixed
/// one.
pub(super) fn interior_stencil(st: &Stencil, boundary: bool) -> Stencil {
    if !boundary {
        return st.clone();
    }
    Stencil {
        boundary: Boundary::Fixed,
        ..st.clone()
    }
}

/// The prefix of the interior kernels' launchers: where the `boundary` is
/// framed, their own, which the statements' launchers (named with
/// `prefix`) call.
pub(super) fn interior_prefix(prefix: &str, boundary: bool) -> String {
    if boundary {
        format!("{prefix}_interior")
    } else {
        prefix.into()
    }
}

/// The frame kernels and the launchers of `st`'s statements that have a
/// frame ([`framed`]; `boundary`: whether its boundary is framed); the
/// interiors' launchers are named with `interior_prefix`, the spans of
/// their kernels in `interior_an`, and the slabs that run the plan's
/// kernels are `wide` ([`wide_slabs`]).
pub(super) fn frames(
    w: &mut Writer,
    (st, an, boundary): (&Stencil, &Analysis, bool),
    (interior_an, wide): (&Analysis, &[Wide]),
    (prefix, interior_prefix): (&str, &str),
    d: &Dialect,
) -> fmt::Result {
    let interior = interior_stencil(st, boundary);
    let framed = framed(an, boundary);
    let body = Writer::text(|w| {
        for (k, s) in st.statements.iter().enumerate() {
            if !framed[k] {
                continue;
            }
            let (info, twin) = (&an.statements[k], &interior.statements[k]);
            let f = Frame {
                st,
                s,
                info,
                d,
                sym: symbol(prefix, d, st, s),
                inner: match &info.hole {
                    Some(hole) => hole.clone(),
                    None => interior_an.statements[k].bounds.clone(),
                },
                interior: info
                    .hole
                    .is_none()
                    .then(|| symbol(interior_prefix, d, &interior, twin)),
                small: match info.hole {
                    Some(_) => vec![None; st.dims()],
                    None => small_extents(&interior_an.statements[k], &an.min_shape),
                },
                wide: wide
                    .iter()
                    .filter(|slab| slab.statement == k)
                    .map(|slab| {
                        let plan = symbol(interior_prefix, d, &interior, twin);
                        (slab.clone(), slab.plan_symbol(&plan, st))
                    })
                    .collect(),
            };
            f.write(w)?;
        }
        Ok(())
    });
    // A frame whose reads stay on the grid (a box far from the sides, a
    // statement that reads only its own cell) calls no helper.
    edge_helpers(w, st, "static __device__ __forceinline__", |name| {
        crate::backend::calls(&body, name)
    })?;
    w.append(&body);
    Ok(())
}

/// One statement's frame.
struct Frame<'a> {
    st: &'a Stencil,
    s: &'a Statement,
    info: &'a StatementInfo,
    d: &'a Dialect,
    /// The statement's launcher.
    sym: String,
    /// The cells of its span the frame leaves out: its interior kernels'
    /// span, or the box its region is outside.
    inner: Vec<[Bound; 2]>,
    /// The launcher of its interior kernels, where it has some.
    interior: Option<String>,
    /// Per axis, the extent under which the interior kernels' span does
    /// not hold, where legal grids have such ([`small_extents`]).
    small: Vec<Option<usize>>,
    /// Its slabs that run the plan's kernels, each with their launcher.
    wide: Vec<(Wide, String)>,
}

impl Frame<'_> {
    fn dims(&self) -> usize {
        self.st.dims()
    }

    /// Its frame kernel and slab launcher (where it has frame cells), the
    /// launchers of its slabs that run the plan's kernels, then its own.
    fn write(&self, w: &mut Writer) -> fmt::Result {
        if self.has_frame_cells() {
            writeln!(w)?;
            self.kernel(w)?;
            writeln!(w)?;
            self.slab_launcher(w)?;
        }
        for (slab, plan) in &self.wide {
            writeln!(w)?;
            self.wide_launcher(w, slab, plan)?;
        }
        writeln!(w)?;
        self.launcher(w)
    }

    /// Whether the frame kernel computes any cell: a slab of the statement's
    /// span that the plan's kernels do not take, or a part of one they take
    /// (on small grids, all of it). A box far from every side that is not
    /// fixed has none, but on grids too small for its interior's span
    /// ([`small_extents`]) all its cells are the frame's.
    fn has_frame_cells(&self) -> bool {
        self.small.iter().any(Option::is_some)
            || frame_slabs(&self.info.bounds, &self.inner)
                .into_iter()
                .any(|(a, k)| match self.wide_at(a, k) {
                    None => true,
                    Some(s) => s.takes().is_some() || s.fast != s.cells,
                })
    }

    /// The slab of axis `a` by side `k` that runs the plan's kernels, if it does.
    fn wide_at(&self, a: usize, k: usize) -> Option<&Wide> {
        self.wide
            .iter()
            .map(|(slab, _)| slab)
            .find(|slab| (slab.axis, slab.side) == (a, k))
    }

    /// The launcher of the slab `wide` ([`Self::wide_launcher`]).
    fn wide_symbol(&self, wide: &Wide) -> String {
        format!("{}_{}", self.sym, wide.suffix(self.st))
    }

    /// `__global__ void <sym>_frame(n.., out, slots.., params.., o.., e..)`:
    /// the cells `o[a] <= i[a] < o[a] + e[a]` ([`Frame::cells`]).
    fn kernel(&self, w: &mut Writer) -> fmt::Result {
        let dims = self.dims();
        let mut params = c_parameters(self.st, self.s, "__restrict__", true);
        params.extend((0..dims).map(|a| format!("const ptrdiff_t o{a}")));
        params.extend((0..dims).map(|a| format!("const ptrdiff_t e{a}")));
        writeln!(
            w,
            "/* The frame of `{}`: the slab o <= i < o + e, reads remapped past the edge. */",
            self.st.fields[self.s.target].name
        )?;
        let head = format!(
            "static __global__ void __launch_bounds__({FRAME_BLOCK}) {}_frame({})",
            self.sym,
            params.join(", ")
        );
        w.definition(head, |w| {
            if !reads_slowest_extent(self.st, self.s) {
                writeln!(
                    w,
                    "(void)n0; /* no read leaves the grid along the slowest axis */"
                )?;
            }
            for a in 0..dims - 1 {
                let prod: Vec<String> = (a + 1..dims).map(|b| format!("n{b}")).collect();
                writeln!(w, "const ptrdiff_t s{a} = {};", prod.join(" * "))?;
            }
            self.cells(w)
        })
    }

    /// The frame kernel's loops: the contiguous axis from the block's
    /// threads (a cell each), the next strided by the grid's threads (a
    /// grid has at most 65535 blocks along it), and in 3-D the slowest in
    /// columns of [`FRAME_COLUMN`] consecutive cells a thread, which share
    /// most of their reads along it in L1.
    fn cells(&self, w: &mut Writer) -> fmt::Result {
        let dims = self.dims();
        let x = dims - 1;
        writeln!(
            w,
            "const ptrdiff_t x = (ptrdiff_t)blockIdx.x * blockDim.x + threadIdx.x;"
        )?;
        w.guarded(format_args!("if (x >= e{x})"), "return;")?;
        writeln!(w, "const ptrdiff_t i{x} = o{x} + x;")?;
        let store = format!("out[{}] = {};", linear_index(dims), self.value());
        if dims == 1 {
            return writeln!(w, "{store}");
        }
        let y = dims - 2;
        let rows = format!(
            "for (ptrdiff_t y = (ptrdiff_t)blockIdx.y * blockDim.y + threadIdx.y; y < e{y}; y += (ptrdiff_t)gridDim.y * blockDim.y)"
        );
        w.block(rows, |w| {
            writeln!(w, "const ptrdiff_t i{y} = o{y} + y;")?;
            if dims == 2 {
                return writeln!(w, "{store}");
            }
            let columns = format!(
                "for (ptrdiff_t z = (ptrdiff_t)blockIdx.z * {FRAME_COLUMN}; z < e0; z += (ptrdiff_t)gridDim.z * {FRAME_COLUMN})"
            );
            w.block(columns, |w| {
                writeln!(w, "#pragma unroll")?;
                w.block(
                    format_args!("for (int c = 0; c < {FRAME_COLUMN}; ++c)"),
                    |w| {
                        // An `if` around the cell, not a `break`: with the break the
                        // unrolled cells held 72 registers (40 without) and ran 0.96x.
                        w.block("if (z + c < e0)", |w| {
                            writeln!(w, "const ptrdiff_t i0 = o0 + z + c;")?;
                            writeln!(w, "{store}")
                        })
                    },
                )
            })
        })
    }

    /// The statement's value at the cell `i`.
    fn value(&self) -> String {
        expr::print(
            &self.s.expr,
            &CExpr {
                st: self.st,
                gpu: true,
                read: &|a: &Access| self.read(a),
            },
        )
    }

    fn read(&self, a: &Access) -> String {
        let sides = self.st.boundary.sides(self.dims());
        let buf = slot_name(self.st, a.slot);
        remapped_read(&sides, &a.offset, &buf, &CRemap { st: self.st })
    }

    /// `static int <sym>_slab(o, e, n.., out, slots.., params.., stream)`:
    /// launches the frame kernel over a slab, if it has cells: in 2-D and
    /// 3-D, blocks of 32 threads along the contiguous axis by 8 along the
    /// next, or 16 by 16 where the slab is at most [`NARROW`] cells wide.
    fn slab_launcher(&self, w: &mut Writer) -> fmt::Result {
        let dims = self.dims();
        let mut params = vec!["const ptrdiff_t *o".into(), "const ptrdiff_t *e".into()];
        params.extend(c_parameters(self.st, self.s, "", false));
        params.push(format!("{}Stream_t stream", self.d.api));
        writeln!(
            w,
            "/* Launches the frame kernel over the slab o <= i < o + e; returns the launch's error code. */"
        )?;
        let head = format!("static int {}_slab({})", self.sym, params.join(", "));
        w.definition(head, |w| {
            let empty: Vec<String> = (0..dims).map(|a| format!("e[{a}] == 0")).collect();
            w.guarded(format_args!("if ({})", empty.join(" || ")), "return 0;")?;
            let (blocks, threads) = launch_shape(w, dims)?;
            let mut args = arguments_writing(self.st, self.s, false, &["out".into()]);
            args.extend((0..dims).map(|a| format!("o[{a}]")));
            args.extend((0..dims).map(|a| format!("e[{a}]")));
            writeln!(
                w,
                "{}_frame<<<{blocks}, {threads}, 0, stream>>>({});",
                self.sym,
                args.join(", "),
            )?;
            writeln!(w, "return (int){}GetLastError();", self.d.api)
        })
    }

    /// The statement's launcher: its interior kernels, then the frame, one
    /// slab per updated side.
    fn launcher(&self, w: &mut Writer) -> fmt::Result {
        let dims = self.dims();
        let mut params = c_parameters(self.st, self.s, "", false);
        params.push(format!("{}Stream_t stream", self.d.api));
        let args = arguments_writing(self.st, self.s, false, &["out".into()]).join(", ");
        writeln!(
            w,
            "{}",
            match self.interior {
                Some(_) =>
                    "/* Launches the statement's interior kernels and then its frame; returns the first error code. */",
                None =>
                    "/* Launches the frame kernel over the statement's cells, by slabs; returns the first error code. */",
            }
        )?;
        let head = format!("extern \"C\" int {}({})", self.sym, params.join(", "));
        let (outer, inner) = (&self.info.bounds, &self.inner);
        w.definition(head, |w| {
            let spans = (&c_spans(outer)[..], &c_spans(inner)[..]);
            let slabs = frame_slabs(spans.0, spans.1);
            // The interior's launch is guarded by its span: every variable.
            // A slab of the grid outside a box that runs the plan's kernels
            // (`wide_at`) has launchers of its own: none.
            let narrow: Vec<(usize, usize)> = (slabs.iter().copied())
                .filter(|&(a, k)| self.wide_at(a, k).is_none())
                .collect();
            let used = match self.interior {
                Some(_) => vec![[true; 4]; dims],
                None => slab_variables(dims, &narrow),
            };
            if used.iter().flatten().any(|&u| u) {
                writeln!(
                    w,
                    "/* Per axis, the span [lo, hi) and within it [in_lo, in_hi), which the frame leaves out. */"
                )?;
                declare_spans(w, spans, &used)?;
            }
            self.whole_on_small_grids(w, &args)?;
            if let Some(interior) = &self.interior {
                // On small grids a region's interior may have no cells: no launch.
                let some: Vec<String> = (0..dims).map(|a| format!("in_lo{a} < in_hi{a}")).collect();
                w.block(format_args!("if ({})", some.join(" && ")), |w| {
                    writeln!(w, "const int err = {interior}({args}, stream);")?;
                    w.guarded("if (err != 0)", "return err;")
                })?;
            }
            for (a, k) in slabs {
                match self.wide_at(a, k) {
                    Some(slab) => {
                        let sym = self.wide_symbol(slab);
                        writeln!(w, "/* {}. */", self.slab_comment(a, k))?;
                        w.braces(|w| {
                            writeln!(w, "const int err = {sym}({args}, stream);")?;
                            w.guarded("if (err != 0)", "return err;")
                        })?;
                    }
                    None => self.slab(w, a, k, &self.slab_comment(a, k), &args)?,
                }
            }
            writeln!(w, "return 0;")
        })
    }

    /// `static int <sym>_<below|above>_<axis>(n.., out, slots.., params..,
    /// stream)`: the slab `wide` of the grid outside the box, the plan's
    /// kernels (launcher `plan`) on its cells whose reads stay in the grid
    /// and the frame kernel on the rest.
    fn wide_launcher(&self, w: &mut Writer, wide: &Wide, plan: &str) -> fmt::Result {
        let dims = self.dims();
        let mut params = c_parameters(self.st, self.s, "", false);
        params.push(format!("{}Stream_t stream", self.d.api));
        let args = arguments_writing(self.st, self.s, false, &["out".into()]).join(", ");
        let rest = match wide.fast == wide.cells {
            true => "",
            false => ", the frame kernel on the rest",
        };
        writeln!(
            w,
            "/* {}: the plan's kernels where its reads stay in the grid{rest}; returns the first error code. */",
            self.slab_comment(wide.axis, wide.side)
        )?;
        let head = format!(
            "static int {}({})",
            self.wide_symbol(wide),
            params.join(", ")
        );
        w.definition(head, |w| {
            let spans = (&c_spans(&wide.cells)[..], &c_spans(&wide.fast)[..]);
            let slabs = frame_slabs(spans.0, spans.1);
            // The frame's slabs read their spans; the fallback below, the
            // whole slab's `lo` and `hi`.
            let takes = wide.takes();
            let mut used = slab_variables(dims, &slabs);
            if takes.is_some() {
                used.iter_mut().for_each(|u| (u[0], u[1]) = (true, true));
            }
            declare_spans(w, spans, &used)?;
            let planned = |w: &mut Writer| {
                writeln!(w, "const int err = {plan}({args}, stream);")?;
                w.guarded("if (err != 0)", "return err;")?;
                for &(a, k) in &slabs {
                    self.slab(w, a, k, &self.side_comment(a, k), &args)?;
                }
                writeln!(w, "return 0;")
            };
            let Some(takes) = takes else {
                return planned(w);
            };
            writeln!(
                w,
                "/* On small grids the plan's span may have no cells, or reach past the interior's: then the frame kernel alone. */"
            )?;
            w.block(format_args!("if ({takes})"), planned)?;
            let (o, e): (Vec<String>, Vec<String>) = (0..dims)
                .map(|a| (format!("lo{a}"), format!("hi{a} - lo{a}")))
                .unzip();
            self.launch_slab(w, (&o, &e), &args)?;
            writeln!(w, "return 0;")
        })
    }

    /// On grids under the extents `small`, the frame kernel over the
    /// statement's whole span, the statement's launch: there the interior
    /// kernels' span is not the one their kernels compute.
    fn whole_on_small_grids(&self, w: &mut Writer, args: &str) -> fmt::Result {
        let under: Vec<(usize, usize)> = (self.small.iter().enumerate())
            .filter_map(|(a, n)| n.map(|n| (a, n)))
            .collect();
        if under.is_empty() {
            return Ok(());
        }
        let axes: Vec<String> = (under.iter())
            .map(|&(a, n)| format!("{n} cells along `{}`", self.st.axes[a]))
            .collect();
        writeln!(
            w,
            "/* Under {}, a region's side lies within the interior kernels' reach of the edge, which they take to be beyond it: the frame kernel computes the whole span. */",
            axes.join(" or ")
        )?;
        let test: Vec<String> = (under.iter())
            .map(|&(a, n)| format!("n{a} < {n}"))
            .collect();
        w.block(format_args!("if ({})", test.join(" || ")), |w| {
            let o: Vec<String> = (0..self.dims()).map(|a| format!("lo{a}")).collect();
            let e: Vec<String> = (0..self.dims()).map(|a| format!("hi{a} - lo{a}")).collect();
            writeln!(w, "const ptrdiff_t o[] = {{{}}};", o.join(", "))?;
            writeln!(w, "const ptrdiff_t e[] = {{{}}};", e.join(", "))?;
            writeln!(w, "return {}_slab(o, e, {args}, stream);", self.sym)
        })
    }

    /// What the slab of axis `a` by side `k` of the statement's launcher is:
    /// a side of the grid, or a side of the box the region is outside.
    fn slab_comment(&self, a: usize, k: usize) -> String {
        match self.interior {
            Some(_) => self.side_comment(a, k),
            None => format!(
                "{} the box along `{}`",
                ["Below", "Above"][k],
                self.st.axes[a]
            ),
        }
    }

    /// The side `k` of the grid's axis `a`, and its kind.
    fn side_comment(&self, a: usize, k: usize) -> String {
        let side = self.st.boundary.sides(self.dims())[a][k];
        format!(
            "The {} side of `{}` ({})",
            ["low", "high"][k],
            self.st.axes[a],
            side.describe(&self.st.params)
        )
    }

    /// The frame kernel over the slab of axis `a` by side `k` (0 low, 1
    /// high) of the spans `lo`, `hi`, `in_lo`, `in_hi` in scope, headed
    /// with `comment`.
    fn slab(&self, w: &mut Writer, a: usize, k: usize, comment: &str, args: &str) -> fmt::Result {
        let (o, e) = frame_slab_origin(self.dims(), a, k);
        writeln!(w, "/* {comment}. */")?;
        self.launch_slab(w, (&o, &e), args)
    }

    /// The frame kernel over the cells `o <= i < o + e` (C expressions per
    /// axis), in a block of its own.
    fn launch_slab(
        &self,
        w: &mut Writer,
        (o, e): (&[String], &[String]),
        args: &str,
    ) -> fmt::Result {
        w.braces(|w| {
            writeln!(w, "const ptrdiff_t o[] = {{{}}};", o.join(", "))?;
            writeln!(w, "const ptrdiff_t e[] = {{{}}};", e.join(", "))?;
            writeln!(
                w,
                "const int err = {}_slab(o, e, {args}, stream);",
                self.sym
            )?;
            w.guarded("if (err != 0)", "return err;")
        })
    }
}

/// Writes the block shape of a frame kernel's launch over the slab of
/// extents `e`; returns its blocks and threads as the launch spells them.
fn launch_shape(w: &mut Writer, dims: usize) -> Result<(String, String), fmt::Error> {
    if dims == 1 {
        return Ok((
            format!("(unsigned)((e[0] + {FRAME_BLOCK} - 1) / {FRAME_BLOCK})"),
            FRAME_BLOCK.to_string(),
        ));
    }
    let x = dims - 1;
    writeln!(
        w,
        "const ptrdiff_t bx = e[{x}] <= {NARROW} ? {NARROW} : 32, by = {FRAME_BLOCK} / bx;"
    )?;
    let capped = |v: &str| format!("(unsigned)({v} < {GRID_YZ} ? {v} : {GRID_YZ})");
    writeln!(w, "const ptrdiff_t rows = (e[{}] + by - 1) / by;", dims - 2)?;
    let mut grid = vec![
        format!("(unsigned)((e[{x}] + bx - 1) / bx)"),
        capped("rows"),
    ];
    if dims == 3 {
        writeln!(
            w,
            "const ptrdiff_t columns = (e[0] + {c} - 1) / {c};",
            c = FRAME_COLUMN
        )?;
        grid.push(capped("columns"));
    }
    writeln!(w, "const dim3 blocks({});", grid.join(", "))?;
    Ok(("blocks".into(), "dim3((unsigned)bx, (unsigned)by)".into()))
}
