//! 3-D `temporal` whose threads own a vector: `vector` consecutive cells of
//! the contiguous axis in one row, where [`super::planes`] gives a thread one
//! cell in each of `coarsen` rows.
//!
//! The tile, the skewed levels and the rings are those of
//! [`super::planes`]; what changes is how a level's plane is computed:
//!
//! - the in-plane neighbours come from the rings as vectors: one load per
//!   whole vector of neighbours along the contiguous axis, one per
//!   neighbouring row;
//! - the loop over the planes is unrolled by the planes of a window
//!   (`PHASE`, a template parameter), so the windows move on by renaming;
//! - every cell is computed and a select keeps the value of those outside
//!   the region or past the launch's steps (no branch per cell);
//! - a level is computed only by the warps whose rows hold cells that a
//!   stored cell depends on (level `s`: rows `radius x s` from the tile's
//!   edges and further in);
//! - each ring plane is published `lead` iterations before it is read, in
//!   `2 x lead` slots, so that one barrier serves `lead` planes.
//!
//! It takes axis-aligned stars whose update reads only the field it
//! updates, with a radius along the contiguous axis that is a multiple of
//! the vector: a vector is then wholly inside the region or outside it,
//! wholly stored or not. Grids whose rows are not whole vectors, and those
//! too large for 32-bit indices, run the scalar kernel of
//! [`super::planes`] (the vector kernel's twin) where `auto` would fuse the
//! steps without vectors, and one step a launch otherwise
//! ([`splits_steps`](crate::backend::gpu::plan::temporal::splits_steps)).
//!
//! On the H100 a hand-written kernel of this design ran star3d25 f32 with
//! 2 fused steps at 1.07x `stream` (2.46x the scalar kernel's; 36
//! instructions per cell and level against 72.6), where `temporal` was
//! 0.44x.
//!
//! The warps are rows of the tile, so each computes its rows' vectors that
//! no stored cell needs too (star3d25: 20 warp-levels a plane where 16.5
//! would do). On the H200, threads laid out in order of need instead issued
//! 13-16% fewer instructions and ran 0.89x-0.96x, warps of one level each
//! 0.74x-0.77x, and the block without its 4 warps that compute no level
//! 0.71x: the kernel waits on latency at its 16 warps a multiprocessor, and
//! these layouts leave fewer warps with work, or wait on each other at the
//! barriers.

use std::collections::BTreeSet;
use std::fmt::{self, Write as _};

use super::super::Gen;
use crate::backend::Writer;
use crate::backend::gpu::plan::temporal::planes::Planes;
use crate::codegen::names::slot_name;
use crate::ir::{Access, Strategy};

/// The C name of a vector of neighbours `k` vectors (along the contiguous
/// axis) or cells (along the others) from the thread's along `axis`.
fn neighbour(axis: &str, k: i64) -> String {
    if k < 0 {
        format!("{axis}_m{}", -k)
    } else {
        format!("{axis}_p{k}")
    }
}

/// A vector's component `e`.
fn component(e: i64) -> &'static str {
    ["x", "y", "z", "w"][e as usize]
}

impl Gen<'_> {
    /// Whether this kernel is one of vectors (see the module documentation).
    pub(in crate::backend::gpu) fn vector_columns(&self) -> bool {
        self.dims() == 3
            && self.plan.strategy == Strategy::Temporal
            && self.vector > 1
            && !self.sums()
    }

    /// The vector type of this kernel's cells (`float4`, `double2`).
    fn vector_type(&self) -> String {
        format!("{}{}", self.st.dtype.c(), self.vector)
    }

    /// The statement's run-time parameters, declared (`const float p_a`) or passed (`p_a`).
    pub(in crate::backend::gpu) fn vector_params(&self, declared: bool) -> Vec<String> {
        let t = self.st.dtype.c();
        self.s
            .params_used()
            .into_iter()
            .map(|i| {
                let p = format!("p_{}", self.st.params[i]);
                if declared {
                    format!("const {t} {p}")
                } else {
                    p
                }
            })
            .collect()
    }

    /// The functions a kernel of vectors calls: the thread's place
    /// (`<sym>_thread`), one level's vector at one plane (`<sym>_level`) and
    /// one iteration of the plane loop (`<sym>_plane`).
    pub(in crate::backend::gpu) fn vector_functions(&self, w: &mut Writer) -> fmt::Result {
        let sh = self.planes_shape();
        writeln!(
            w,
            "/* A thread's place in a tile of `{}` and what it computes. */",
            self.st.name
        )?;
        w.declaration(format_args!("struct {}_thread", self.sym), |w| {
            writeln!(w, "int n0, s0, s1, levels, z0, z1, p0;")?;
            writeln!(
                w,
                "int i1, i2;   /* its vector's first cell along the fast axes */"
            )?;
            writeln!(w, "int row, col; /* the same in the rings */")?;
            writeln!(
                w,
                "bool grid, inside, own; /* its vector is on the grid, in the region, the tile's own to store */"
            )?;
            writeln!(w, "unsigned need; /* bit s: its warp computes level s */")?;
            Ok(())
        })?;
        writeln!(w)?;
        self.vector_level(w, &sh)?;
        writeln!(w)?;
        self.vector_plane(w, &sh)
    }

    /// `<sym>_level<PHASE>`: one vector of a level at one plane.
    fn vector_level(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        let (vt, t) = (self.vector_type(), self.st.dtype.c());
        let [_, px] = sh.padded();
        let (r0, wn) = (sh.r[0], sh.window());
        writeln!(
            w,
            "/* One vector of a level at plane q: `win` is the level below's window (its plane q - {r0} + m at"
        )?;
        writeln!(
            w,
            "   win[(m + PHASE) % {wn}]), `rg` its ring plane q; where `keep`, the cells keep their value. */"
        )?;
        writeln!(w, "template <int PHASE>")?;
        let mut params = vec![
            format!("const {vt} (&win)[{wn}]"),
            format!("const {t} (*const rg)[{px}]"),
            "const int row".into(),
            "const int col".into(),
            "const bool keep".into(),
        ];
        params.extend(self.vector_params(true));
        let head = format!(
            "static __device__ __forceinline__ {vt} {}_level({})",
            self.sym,
            params.join(", ")
        );
        w.definition(head, |w| {
            writeln!(w, "const {vt} c = win[({r0} + PHASE) % {wn}];")?;
            self.vector_neighbours(w, sh)?;
            self.vector_cells(w)
        })
    }

    /// The offsets a vector's reads take along each axis: planes, rows,
    /// and whole vectors along the contiguous axis.
    fn vector_reads(&self) -> [BTreeSet<i64>; 3] {
        let v = self.vector as i64;
        let mut reads = [BTreeSet::new(), BTreeSet::new(), BTreeSet::new()];
        self.s.expr.for_each_read(&mut |a| {
            let [dz, dy, dx] = [a.offset[0], a.offset[1], a.offset[2]];
            reads[0].insert(dz);
            reads[1].insert(dy);
            for e in 0..v {
                reads[2].insert((e + dx).div_euclid(v));
            }
        });
        reads
    }

    /// The vectors around `c` that a level reads: in the plane from the
    /// ring, along the slowest axis from the window.
    fn vector_neighbours(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        let vt = self.vector_type();
        let (r0, wn, v) = (sh.r[0], sh.window(), self.vector as i64);
        let axes = &self.st.axes;
        let reads = self.vector_reads();
        writeln!(
            w,
            "/* Neighbours in the plane, from the ring: whole vectors along `{}`, rows along `{}`. */",
            axes[2], axes[1]
        )?;
        for &k in reads[2].iter().filter(|&&k| k != 0) {
            writeln!(
                w,
                "const {vt} {} = *(const {vt} *)&rg[row][{}];",
                neighbour(&axes[2], k),
                super::super::shifted("col", k * v)
            )?;
        }
        for &dy in reads[1].iter().filter(|&&d| d != 0) {
            writeln!(
                w,
                "const {vt} {} = *(const {vt} *)&rg[{}][col];",
                neighbour(&axes[1], dy),
                super::super::shifted("row", dy)
            )?;
        }
        writeln!(w, "/* Neighbours along `{}`, from the window. */", axes[0])?;
        for &dz in reads[0].iter().filter(|&&d| d != 0) {
            writeln!(
                w,
                "const {vt} {} = win[({} + PHASE) % {wn}];",
                neighbour(&axes[0], dz),
                r0 as i64 + dz
            )?;
        }
        Ok(())
    }

    /// Each cell of the vector computed from its neighbours, and the vector
    /// returned (cells that `keep` keep their value).
    fn vector_cells(&self, w: &mut Writer) -> fmt::Result {
        let (vt, t) = (self.vector_type(), self.st.dtype.c());
        let v = self.vector as i64;
        let axes = &self.st.axes;
        let mut out = Vec::new();
        for e in 0..v {
            let value = self.value(&|a: &Access| {
                let [dz, dy, dx] = [a.offset[0], a.offset[1], a.offset[2]];
                let (name, part) = if dz != 0 {
                    (neighbour(&axes[0], dz), e)
                } else if dy != 0 {
                    (neighbour(&axes[1], dy), e)
                } else {
                    let k = (e + dx).div_euclid(v);
                    let name = if k == 0 {
                        "c".to_string()
                    } else {
                        neighbour(&axes[2], k)
                    };
                    (name, (e + dx).rem_euclid(v))
                };
                format!("{name}.{}", component(part))
            });
            let part = component(e);
            writeln!(w, "const {t} u{part} = {value};")?;
            out.push(format!("keep ? c.{part} : u{part}"));
        }
        writeln!(w, "const {vt} next = {{{}}};", out.join(", "))?;
        writeln!(w, "return next;")
    }

    /// The ring slot of plane `plane` (a C expression, non-negative after
    /// the offset): `plane` modulo the slots.
    fn vector_slot(&self, sh: &Planes, plane: &str) -> String {
        let slots = sh.slots();
        let reach = sh.t * (2 * sh.r[0] + 2) + sh.window() + sh.lead;
        let base = slots * reach.div_ceil(slots);
        format!("(unsigned)({plane} + {base}) % {slots}")
    }

    /// The parameters of `<sym>_plane`.
    fn vector_plane_params(&self, sh: &Planes) -> Vec<String> {
        let (vt, t) = (self.vector_type(), self.st.dtype.c());
        let [py, px] = sh.padded();
        let grid = slot_name(self.st, self.streamed());
        let mut params = vec![
            format!("const {}_thread &k", self.sym),
            "int &p".into(),
            "const int end".into(),
            format!("{vt} &ahead"),
            format!("{vt} (&win)[{}][{}]", sh.t, sh.window()),
            format!("{t} (*const ring)[{}][{py}][{px}]", sh.slots()),
            format!("{t} *__restrict__ out"),
            format!("const {t} *__restrict__ {grid}"),
        ];
        params.extend(self.vector_params(true));
        params
    }

    /// The call of `<sym>_level` for the level above `below` at `plane`.
    fn vector_level_call(&self, sh: &Planes, below: usize, plane: &str) -> String {
        let mut args = vec![
            format!("win[{below}]"),
            format!("ring[{below}][{}]", self.vector_slot(sh, plane)),
            "k.row".into(),
            "k.col".into(),
            "keep".into(),
        ];
        args.extend(self.vector_params(false));
        format!("{}_level<PHASE>({})", self.sym, args.join(", "))
    }

    /// `keep`: whether level `s` keeps the value below (off its steps, its
    /// chunk or the region).
    fn vector_keep(&self, s: usize) -> String {
        let (lo0, hi0) = self.bounds(0);
        format!("const bool keep = !({s} <= k.levels && q >= {lo0} && q < {hi0} && k.inside);")
    }

    /// Level `s` publishes its vector at `plane` to its ring, `lead`
    /// iterations before the level above reads it.
    fn vector_publish(&self, w: &mut Writer, sh: &Planes, s: usize, plane: &str) -> fmt::Result {
        let (wn, lead, lag) = (sh.window(), sh.lead, sh.lag());
        writeln!(
            w,
            "*({} *)&ring[{s}][{}][k.row][k.col] = win[{s}][({} + PHASE) % {wn}];",
            self.vector_type(),
            self.vector_slot(sh, &format!("{plane} - {lag} + {lead}")),
            sh.r[0] + lead
        )
    }

    /// `<sym>_plane<PHASE>`: iteration `p` of the plane loop (every level's
    /// plane, the barrier that ends `lead` iterations); whether another follows.
    fn vector_plane(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        let vt = self.vector_type();
        let (wn, lead) = (sh.window(), sh.lead);
        let lag = sh.lag();
        let grid = slot_name(self.st, self.streamed());
        writeln!(
            w,
            "/* Iteration p of the plane loop (PHASE: p's place in a window of {wn} planes): level s at plane p - {lag} * s; whether another follows. */"
        )?;
        writeln!(w, "template <int PHASE>")?;
        let head = format!(
            "static __device__ __forceinline__ bool {}_plane({})",
            self.sym,
            self.vector_plane_params(sh).join(", ")
        );
        w.definition(head, |w| {
            writeln!(w, "const int n0 = k.n0;")?;
            writeln!(
                w,
                "/* Level 0: plane p, loaded in the iteration before; plane p + 1 loads while this one computes. */"
            )?;
            writeln!(w, "const {vt} cell = ahead;")?;
            w.braces(|w| {
                writeln!(w, "const int z = p + 1;")?;
                writeln!(
                    w,
                    "ahead = z >= 0 && z < n0 && k.grid ? *(const {vt} *)&{grid}[z * k.s0 + k.i1 * k.s1 + k.i2] : {vt}{{}};"
                )
            })?;
            self.vector_levels(w, sh)?;
            writeln!(
                w,
                "/* Level 0's window moves on to plane p, and publishes. */"
            )?;
            writeln!(w, "win[0][PHASE] = cell;")?;
            self.vector_publish(w, sh, 0, "p")?;
            let last = if wn % lead == 0 {
                format!("PHASE % {lead} == {}", lead - 1)
            } else {
                format!("(p - k.p0) % {lead} == {}", lead - 1)
            };
            writeln!(
                w,
                "/* One barrier every {lead} iterations: between a ring plane's publication and its read, and its read and its next write. */"
            )?;
            w.guarded(format_args!("if ({last})"), "__syncthreads();")?;
            writeln!(w, "return ++p < end;")?;
            Ok(())
        })?;
        Ok(())
    }

    /// In [`Self::vector_plane`], levels `t` down to 1: the last stored where
    /// it is the tile's own, each other to its window and its ring.
    fn vector_levels(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        let vt = self.vector_type();
        let (steps, lag, lead) = (sh.t, sh.lag(), sh.lead);
        let level = |below: usize, plane: &str| self.vector_level_call(sh, below, plane);
        let keep = |s: usize| self.vector_keep(s);
        let publish = |w: &mut Writer, s: usize, plane: &str| self.vector_publish(w, sh, s, plane);
        writeln!(
            w,
            "/* Level {steps}, the last: stored where it is the tile's own. */"
        )?;
        w.block(format_args!("if (k.need >> {steps} & 1u)"), |w| {
            writeln!(w, "const int q = p - {};", lag * steps)?;
            w.block("if (q >= k.z0 && q < k.z1)", |w| {
                writeln!(w, "{}", keep(steps))?;
                writeln!(w, "const {vt} v = {};", level(steps - 1, "q"))?;
                w.guarded(
                    "if (k.own)",
                    format_args!("*({vt} *)&out[q * k.s0 + k.i1 * k.s1 + k.i2] = v;"),
                )
            })?;
            Ok(())
        })?;
        for s in (1..steps).rev() {
            writeln!(
                w,
                "/* Level {s}: to its window and, {lead} iterations before the level above reads it, its ring. */"
            )?;
            w.block(format_args!("if (k.need >> {s} & 1u)"), |w| {
                writeln!(w, "const int q = p - {};", lag * s)?;
                writeln!(w, "{}", keep(s))?;
                writeln!(w, "win[{s}][PHASE] = {};", level(s - 1, "q"))?;
                publish(w, s, "q")
            })?;
        }
        Ok(())
    }

    /// The thread's `<sym>_thread`: its place in the tile, the grid and the
    /// rings, and the levels its warp computes.
    fn vector_place(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        let v = self.vector;
        let [rows, cols] = sh.tile();
        let [stored_y, stored_x] = sh.stored();
        let (m1, m2) = (sh.r[1] * sh.t, sh.r[2] * sh.t);
        let steps = sh.t;
        let ((lo1, hi1), (lo2, hi2)) = (self.bounds(1), self.bounds(2));
        writeln!(w, "{}_thread k;", self.sym)?;
        writeln!(w, "k.n0 = n0;")?;
        writeln!(w, "k.s0 = s0;")?;
        writeln!(w, "k.s1 = s1;")?;
        writeln!(w, "k.levels = levels;")?;
        writeln!(w, "k.z0 = z0;")?;
        writeln!(w, "k.z1 = z1;")?;
        writeln!(
            w,
            "k.i2 = {lo2} + (int){} * {stored_x} - {m2} + {v} * (int)tx;",
            self.block_coordinate("x")
        )?;
        writeln!(
            w,
            "k.i1 = {lo1} + (int){} * {stored_y} - {m1} + (int)ty;",
            self.block_coordinate("y")
        )?;
        writeln!(w, "k.row = {} + (int)ty;", sh.r[1])?;
        writeln!(w, "k.col = {} + {v} * (int)tx;", sh.r[2])?;
        writeln!(
            w,
            "/* Rows are whole vectors (n2 is a multiple of the vector, as is the radius): a vector is wholly on the grid or off it, in the region or out. */"
        )?;
        writeln!(
            w,
            "k.grid = k.i1 >= 0 && k.i1 < n1 && k.i2 >= 0 && k.i2 < n2;"
        )?;
        writeln!(
            w,
            "k.inside = k.i1 >= {lo1} && k.i1 < {hi1} && k.i2 >= {lo2} && k.i2 < {hi2};"
        )?;
        writeln!(
            w,
            "k.own = k.inside && ty >= {m1} && ty < {} && tx >= {} && tx < {};",
            rows - m1,
            m2 / v,
            (cols - m2) / v
        )?;
        let warp = self.d.warp;
        writeln!(
            w,
            "/* This warp's rows [first, last); level s is needed in rows [{} s, {rows} - {} s). */",
            sh.r[1], sh.r[1]
        )?;
        writeln!(w, "const unsigned warp = (ty * {} + tx) / {warp};", sh.bx)?;
        writeln!(
            w,
            "const unsigned first = warp * {warp} / {}, last = ((warp + 1) * {warp} - 1) / {} + 1;",
            sh.bx, sh.bx
        )?;
        writeln!(w, "k.need = 0;")?;
        w.pragma("unroll")?;
        w.guarded(
            format_args!("for (unsigned s = 1; s <= {steps}; ++s)"),
            format_args!(
                "k.need |= (unsigned)(last > {r} * s && first < {rows} - {r} * s) << s;",
                r = sh.r[1]
            ),
        )
    }

    /// The body of a 3-D `temporal` kernel of vectors (see the module documentation).
    pub(in crate::backend::gpu) fn vectors(&self, w: &mut Writer) -> fmt::Result {
        let sh = self.planes_shape();
        let (vt, v) = (self.vector_type(), self.vector);
        let [rows, cols] = sh.tile();
        let (m1, m2) = (sh.r[1] * sh.t, sh.r[2] * sh.t);
        let (steps, wn) = (sh.t, sh.window());
        writeln!(
            w,
            "/* This block's tile: {} threads along `{}` of {v} cells each by {} along `{}`: {cols} x {rows} cells, the outer {m2} and {m1} on each side recomputed, not stored. */",
            sh.bx, self.st.axes[2], sh.by, self.st.axes[1]
        )?;
        self.chunk_bounds(w)?;
        self.ring_place(w)?;
        self.vector_place(w, &sh)?;
        self.planes_rings(w, &sh)?;
        writeln!(
            w,
            "/* win[s][(m + PHASE) % {wn}]: the thread's vector of level s at plane p - {wn} - {} * s + m, in iteration p. */",
            sh.lag()
        )?;
        writeln!(w, "{vt} win[{steps}][{wn}] = {{}};")?;
        writeln!(w, "int p = z0 - {};", steps * sh.r[0])?;
        writeln!(w, "k.p0 = p;")?;
        let grid = slot_name(self.st, self.streamed());
        writeln!(
            w,
            "{vt} ahead = p >= 0 && k.grid ? *(const {vt} *)&{grid}[p * s0 + k.i1 * s1 + k.i2] : {vt}{{}};"
        )?;
        writeln!(w, "const int end = z1 + {};", sh.lag() * steps)?;
        let mut args = vec![
            "k".to_string(),
            "p".into(),
            "end".into(),
            "ahead".into(),
            "win".into(),
            "ring".into(),
            "out".into(),
            grid,
        ];
        args.extend(self.vector_params(false));
        let args = args.join(", ");
        writeln!(
            w,
            "/* Unrolled by the {wn} planes of a window, whose registers then move on by renaming. */"
        )?;
        w.block("for (;;)", |w| {
            for phase in 0..wn {
                w.guarded(
                    format_args!("if (!{}_plane<{phase}>({args}))", self.sym),
                    "break;",
                )?;
            }
            Ok(())
        })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cuda, generate, stencil};
    use crate::backend::gpu::{CUDA, HIP, resolve};
    use crate::ir::{GpuTiling, Stencil, Strategy};

    const AXES: &str = "\"z\", \"y\", \"x\"";

    /// A star of radius 4 whose update reads only `u`.
    const STAR4: &str = "0.1*u[0,0,0] + sum(r, 1, 4, 0.01*(u[-r,0,0] + u[r,0,0] + u[0,-r,0] + u[0,r,0] + u[0,0,-r] + u[0,0,r]))";

    fn star4(tiling: &str) -> Stencil {
        stencil(AXES, STAR4, tiling)
    }

    #[test]
    fn threads_read_their_neighbours_as_vectors_and_store_whole_ones() {
        let code = cuda(&star4("vector = 4\n")).unwrap();
        for line in [
            "Strategy `temporal`: blocks of 1 x 32 x 16 threads (z, y, x), 4 cells of `x` per thread as one vector, 2 steps fused; rows that are not whole vectors run one step a launch.",
            // One level's vector: the in-plane neighbours from the ring as vectors...
            "const float4 x_m1 = *(const float4 *)&rg[row][col - 4];",
            "const float4 x_p1 = *(const float4 *)&rg[row][col + 4];",
            "const float4 y_m4 = *(const float4 *)&rg[row - 4][col];",
            // ...those along `z` from the window, which the phase renames...
            "const float4 z_p4 = win[(8 + PHASE) % 9];",
            // ...each cell computed, and a select where it keeps its value.
            "const float ux = 0.1f * c.x + (0.01f * (z_m1.x + z_p1.x + y_m1.x + y_p1.x + x_m1.w + c.y)",
            "const float4 next = {keep ? c.x : ux, keep ? c.y : uy, keep ? c.z : uz, keep ? c.w : uw};",
            // Levels lag by the radius and one; the last one stores whole vectors.
            "const int q = p - 10;",
            "*(float4 *)&out[q * k.s0 + k.i1 * k.s1 + k.i2] = v;",
            // Each ring plane is published 4 iterations before it is read, in 8 slots: a barrier per 4 planes.
            "*(float4 *)&ring[1][(unsigned)(q - 5 + 4 + 40) % 8][k.row][k.col] = win[1][(8 + PHASE) % 9];",
            "if ((p - k.p0) % 4 == 3)\n        __syncthreads();",
            // A level is computed only by the warps whose rows a stored cell depends on.
            "k.need |= (unsigned)(last > 4 * s && first < 32 - 4 * s) << s;",
            "if (k.need >> 1 & 1u) {",
            // Tiles of 64 x 32 cells store 48 x 16, vectors of whole vectors of the tile's own.
            "k.i2 = 4 + (int)blockIdx.x * 48 - 8 + 4 * (int)tx;",
            "k.own = k.inside && ty >= 8 && ty < 24 && tx >= 2 && tx < 14;",
            // The loop, unrolled by the window's 9 planes.
            "if (!p_cuda__s__update_u_plane<8>(k, p, end, ahead, win, ring, out, cur_u))",
        ] {
            assert!(code.contains(line), "{line}: {code}");
        }
    }

    #[test]
    fn grids_of_whole_vectors_run_the_vectors_and_the_others_one_step_a_launch() {
        let code = cuda(&star4("vector = 4\n")).unwrap();
        for line in [
            "extern \"C\" int p_cuda__s__update_u_fuses(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, float *out, const float *cur_u)",
            "    return n0 * n1 * n2 <= 1073741824 && n2 % 4 == 0 && (size_t)out % 16 == 0 && (size_t)cur_u % 16 == 0;",
            "if (n0 * n1 * n2 <= 1073741824 && n2 % 4 == 0 && (size_t)out % 16 == 0 && (size_t)cur_u % 16 == 0) {",
            "auto *const kernel = chunk == 128 ? p_cuda__s__update_u_vector_kernel<128> : p_cuda__s__update_u_vector_kernel<0>;",
            "/* Grids the kernel cannot take run one step a launch (`p_cuda__s__update_u_fuses`). */",
            "return (int)cudaErrorInvalidValue;",
            // The chunk whose waves of blocks end first, each block marching 18 planes more than its chunk.
            "const ptrdiff_t planes = (cells + n - 1) / n, waves = (across * n + resident - 1) / resident;",
            "const ptrdiff_t time = waves * (planes + 18);",
        ] {
            assert!(code.contains(line), "{line}: {code}");
        }
        // No scalar twin: its 2 steps ran 0.42x two single steps (star3d25 f32 on 513^3).
        assert!(!code.contains("p_cuda__s__update_u_kernel"), "{code}");
        // HIP's 64 KiB of shared memory hold rings of a lead of 1: a barrier every plane.
        let hip = generate(&star4("vector = 4\n"), &HIP).unwrap();
        assert!(hip.contains("if (PHASE % 1 == 0)"), "{hip}");
        assert!(hip.contains("float (*const ring)[2][40][72]"), "{hip}");
        assert!(hip.contains("return (int)hipErrorInvalidValue;"), "{hip}");
    }

    #[test]
    fn stars_whose_scalar_steps_fuse_keep_a_scalar_twin() {
        let star2 = "u[0,0,0] + 0.1*(u[0,0,-2] + u[0,0,-1] + u[0,0,1] + u[0,0,2] + u[0,-2,0] + u[0,-1,0] + u[0,1,0] + u[0,2,0] + u[-2,0,0] + u[-1,0,0] + u[1,0,0] + u[2,0,0])";
        let code = cuda(&stencil(AXES, star2, "vector = 2\n")).unwrap();
        for line in [
            "/* The same without vectors, for grids whose rows are not whole vectors. */",
            "auto *const kernel = chunk == 128 ? p_cuda__s__update_u_kernel<128> : p_cuda__s__update_u_kernel<0>;",
            "p_cuda__s__update_u_i64_kernel<<<grid, block, 58752, stream>>>(n0, n1, n2, out, cur_u, levels);",
        ] {
            assert!(code.contains(line), "{line}: {code}");
        }
        assert!(!code.contains("_fuses"), "{code}");
    }

    #[test]
    fn stencils_and_vectors_that_do_not_suit_are_refused() {
        let refused = |expr: &str, tiling: &str, want: &str| {
            let err = cuda(&stencil(AXES, expr, tiling)).unwrap_err();
            assert!(err.contains(want), "{want}: {err}");
        };
        let star2 = "u[0,0,0] + u[0,0,-2] + u[0,0,2] + u[0,-1,0] + u[0,1,0] + u[-1,0,0] + u[1,0,0]";
        refused(
            "u[0,0,0] + u[0,1,1] + u[0,-1,-1]",
            "vector = 2\n",
            "reads the neighbour at [0, 1, 1], off the axes",
        );
        refused(
            "u[0,0,0] + k[0,0,0] + u[0,0,2] + u[0,0,-2]",
            "vector = 2\n",
            "a stencil that reads other grids than the one it steps, computes two steps in shared rings: it takes f32 cells, 4 a thread",
        );
        refused(
            star2,
            "vector = 4\n",
            "vectors that divide the radius of `s` along `x` (2)",
        );
        refused(star2, "vector = 2\ncoarsen = 2\n", "set `coarsen = 1`");
        assert!(cuda(&stencil(AXES, star2, "vector = 2\n")).is_ok());
        let f64 = crate::backend::gpu::tests::lowered(
            STAR_F64
                .replace("EXPR", STAR4)
                .replace("TILING", "vector = 4"),
        );
        let err = cuda(&f64).unwrap_err();
        assert!(err.contains("vectors of 32 bytes"), "{err}");
    }

    const STAR_F64: &str = "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = { role = \"state\" }\n\
                            [[update]]\ntarget = \"u\"\nexpr = \"EXPR\"\n[tiling.cuda]\nstrategy = \"temporal\"\nTILING\n";

    #[test]
    fn auto_gives_f32_stars_of_radius_4_vectors_where_the_rings_hold_a_lead_of_4() {
        let auto = GpuTiling::model(Strategy::Auto);
        let plan = resolve(&auto, &star4(""), &CUDA).unwrap();
        assert_eq!(
            (
                plan.strategy,
                plan.vector,
                plan.time_block,
                plan.block.clone()
            ),
            (Strategy::Temporal, 4, 2, vec![1, 32, 16])
        );
        // Not where HIP's shared memory holds a lead of 1 only, nor in f64 (on CUDA its single step
        // is `tensor`'s), nor where steps fuse without vectors.
        assert_eq!(
            resolve(&auto, &star4(""), &HIP).unwrap().strategy,
            Strategy::Stream
        );
        let f64 = crate::backend::gpu::tests::lowered(
            STAR_F64.replace("EXPR", STAR4).replace("TILING", ""),
        );
        assert_eq!(
            resolve(&auto, &f64, &CUDA).unwrap().strategy,
            Strategy::Tensor
        );
        let star1 = stencil(
            AXES,
            "u[0,0,0] + u[0,0,1] + u[0,0,-1] + u[0,1,0] + u[0,-1,0] + u[1,0,0] + u[-1,0,0]",
            "",
        );
        assert_eq!(resolve(&auto, &star1, &CUDA).unwrap().vector, 1);
    }

    #[test]
    fn default_rows_are_those_whose_registers_fit_and_steps_those_that_store_half() {
        let auto = GpuTiling::model(Strategy::Auto);
        let star2_f64 = crate::backend::gpu::tests::lowered(
            STAR_F64
            .replace("EXPR", "sum(r, 1, 2, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])")
            .replace("TILING", ""),
        );
        // 2 steps of double2: windows of 2 x 5 vectors, 6 neighbours, 80
        // registers: 24 rows of 32 threads (85 each), not 32 (64 each).
        assert_eq!(
            crate::backend::gpu::plan::temporal::vectors::registers(&star2_f64, 2, 2),
            80
        );
        let plan = resolve(&auto, &star2_f64, &CUDA).unwrap();
        assert_eq!(
            (plan.strategy, plan.vector, plan.time_block, plan.block),
            (Strategy::Temporal, 2, 2, vec![1, 24, 32])
        );
        // star3d25 in f64: 2 steps leave room for 8 rows, which store none.
        let f64 = crate::backend::gpu::tests::lowered(
            STAR_F64
                .replace("EXPR", STAR4)
                .replace("TILING", "vector = 2\ntime_block = 2"),
        );
        let err = cuda(&f64).unwrap_err();
        assert!(
            err.contains("`time_block = 2` recomputes 16 cells along `y`")
                && err.contains("raise `block`"),
            "{err}"
        );
        // Without `time_block`, one step in 16 rows.
        let f64 = crate::backend::gpu::tests::lowered(
            STAR_F64
                .replace("EXPR", STAR4)
                .replace("TILING", "vector = 2"),
        );
        let plan = resolve(
            &GpuTiling {
                vector: Some(2),
                ..GpuTiling::model(Strategy::Temporal)
            },
            &f64,
            &CUDA,
        )
        .unwrap();
        assert_eq!((plan.time_block, plan.block), (1, vec![1, 16, 32]));
    }
}
