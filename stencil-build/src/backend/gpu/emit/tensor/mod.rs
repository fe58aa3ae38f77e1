//! `tensor` (CUDA, f64, 3-D): 2.5-D streaming with the in-plane sum on the
//! FP64 tensor cores.
//!
//! A block owns 32 x 32 cells of a plane and marches `chunk` planes of the
//! slowest axis. Each of its 16 warps computes 8 x 8 of those cells, or,
//! where the update reads no other grid and rows are of an even number of
//! cells, each of 8 warps 16 x 8 ([`Shape::wide`]; the kernel's `H`: rows of
//! cells a lane computes). The statement's in-plane sum
//! ([`crate::ir::plane_sum`]) is two products with banded matrices:
//!
//! ```text
//! X[y][i] = sum_k u[y][x0 - rx + k] Cx[k][i]     Cx[k][i] = cx(k - rx - i)
//! Y[i][x] = sum_k Cy[k][i] u[y0 - ry + k][x]     Cy[k][i] = cy(k - ry - i)
//! ```
//!
//! computed 4 columns of `k` at a time by `mma.m8n8k4.f64` (`ceil((8 + 2 r) /
//! 4)` products an axis; the last starts `8 + 2 r - 4` cells in and its lanes
//! that overlap the one before have a zero coefficient, so no product reads
//! past the band). A lane holds one element of each operand and two cells of
//! the result: row `lane / 4`, columns `2 (lane % 4)` and `+ 1`. Its element
//! of `Cx` (column `lane / 4`, row `lane % 4`) and of `Cy` (row `lane / 4`,
//! column `lane % 4`) are fixed for the kernel, computed once. Warps of 16 x 8
//! cells run `mma.m16n8k4.f64` (sm_90; two `m8n8k4` on earlier devices),
//! whose A operand stacks rows `g` and `g + 8`: a product along `x` covers
//! both rows' cells, and along `y` rows `g + 8` take row `g`'s band 8 rows
//! further through the same coefficient registers (`2 + n` products for the
//! `n` of 8 rows where the band's starts are 4 apart).
//!
//! The plane's tile with its in-plane reach around it arrives in a ring of
//! shared memory by asynchronous copies (`cp.async`), [`AHEAD`] planes ahead
//! of the one computed; the rows' pitch is 4 or 12 modulo 16 doubles, so
//! neither operand's pattern has bank conflicts. The reads along the slowest
//! axis of the grid read in-plane come from each lane's window of its two
//! cells (registers, the loop unrolled by the window so that it moves by
//! renaming); other grids are read at the lane's two cells, a plane ahead.
//! One barrier a plane.
//!
//! On aligned grids copies and stores move pairs of cells (16 bytes); rows of
//! an odd number of cells start at even and odd cells in turn, and their
//! pairs that start odd move one cell at a time. The launcher picks the
//! chunk, at most the plan's, whose waves of resident blocks end first
//! (`Gen::wave_chunk`): small grids get as many blocks as the device holds.
//! Where `auto` picked `tensor`, the launcher runs `naive`'s kernel on the
//! smallest grids (`super::small_step_cells`), then `stream` in 16-byte
//! vectors on the grids where its blocks would compute too little
//! ([`SMALL_GRID_EFFICIENCY`]). `auto` picks it for the stars whose update
//! reads no other grid than the one it sums in-plane ([`reads_one_grid`]);
//! for the others, `stream` (`super::planes_stream`).
//!
//! On the H100 star3d25 f64 steps at 157.1 GCells/s, 1.34x `stream` and 83%
//! of the bandwidth bound; acoustic25 f64, which reads two more grids, at
//! 1.03x (the prototype and the A/B runs behind
//! it: design notes, `dmma-star3d25`), and on the H200's large
//! planes 0.90x-0.95x `stream` in 16-byte vectors
//! (design notes, `planes-stream`). On the H200 warps of 16 x 8
//! cells run star3d25 f64 at 191.4 GCells/s on 512^3, 1.26x those of 8 x 8
//! and 72% of the bound (design notes, `tensor-m16`).

use std::fmt::{self, Write as _};

use super::Gen;
use crate::backend::gpu::plan::model::SMALL_GRID_EFFICIENCY;
use crate::backend::gpu::plan::tensor::{THREADS, TILE, other_reads, reads_one_grid};
use crate::backend::{CExpr, Writer};
use crate::codegen::expr;
use crate::codegen::names::slot_name;
use crate::ir::{Access, Expr, MAX_PLANE_REACH, PLANE_SUM, PlaneSum, Slot, Stencil, plane_sum};

/// A block's threads as the file header describes them: one dimension of
/// threads, which the kernel maps to warps of 8 x 8 cells (or 16 x 8).
pub fn block_layout(st: &Stencil) -> String {
    let warps = TILE / 8;
    let wide = if reads_one_grid(st) {
        format!(
            ", or where rows are of an even number of cells {} threads: {} x {warps} warps of 16 x 8 cells",
            THREADS / 2,
            warps / 2
        )
    } else {
        String::new()
    };
    format!(
        "{THREADS} threads: {warps} x {warps} warps of 8 x 8 cells{wide} (a tile of {TILE} x {TILE} cells of a plane)"
    )
}

/// Planes of a tile in flight to shared memory while one is computed: on the
/// H100, 4 ran as fast as 6 (star3d25 f64, chunks of 128: 158.4 against
/// 158.1 GCells/s in the A/B harness; 3 was measured only with chunks of 64).
pub const AHEAD: usize = 4;

/// The band of one axis: the products' starting columns of `k`, and the
/// lanes (`lane % 4`) of the last one that repeat the one before.
fn band(reach: usize) -> (Vec<usize>, usize) {
    let span = 8 + 2 * reach;
    let n = span.div_ceil(4);
    let mut starts: Vec<usize> = (0..n - 1).map(|m| 4 * m).collect();
    starts.push(span - 4);
    (starts, 4 * (n - 1) - (span - 4))
}

/// A product along `y`: its first row of the band, and the coefficient
/// register (`cy[m]`) of the warp's rows `g` and `g + 8`, where they have one.
type Step = (usize, Option<usize>, Option<usize>);

/// The products along `y` of a warp of 16 rows: rows `g + 8` take row `g`'s
/// band 8 rows further, through the same coefficient registers. Those that
/// rows `g` take (all a warp of 8 rows runs), and those of rows `g + 8` only.
fn y_steps(reach: usize) -> (Vec<Step>, Vec<Step>) {
    let starts = band(reach).0;
    let at = |s: usize| starts.iter().position(|&x| x == s);
    let mut rows: Vec<usize> = starts.iter().flat_map(|&s| [s, s + 8]).collect();
    rows.sort_unstable();
    rows.dedup();
    rows.into_iter()
        .map(|s| (s, at(s), s.checked_sub(8).and_then(at)))
        .partition(|step| step.1.is_some())
}

/// The first row pitch (in doubles) of at least `cells` that is 4 or 12 modulo 16.
fn pitch(cells: usize) -> usize {
    (cells..)
        .find(|p| p % 16 == 4 || p % 16 == 12)
        .unwrap_or(cells)
}

/// The shape of a `tensor` kernel of one statement.
struct Shape {
    sum: PlaneSum,
    /// In-plane reach along `y` and `x`.
    reach: [usize; 2],
    /// Planes the window holds on either side of the computed one.
    depth: usize,
    /// Rows and columns of the ring's tiles, and its row pitch.
    rows: usize,
    cols: usize,
    pitch: usize,
    /// Ring slots: the planes in flight, the window's and one a slower warp may still read.
    slots: usize,
    /// The other grids the update reads, each with its plane offset, at the lanes' cells.
    others: Vec<(Slot, i64)>,
}

impl Shape {
    fn window(&self) -> usize {
        2 * self.depth + 1
    }

    fn bytes(&self) -> usize {
        self.slots * self.rows * self.pitch * 8
    }

    /// Whether the launcher runs warps of 16 x 8 cells (8 a block, H = 2)
    /// where rows are of an even number of cells: where the update reads no
    /// other grid than the one it sums in-plane. On the H200
    /// (design notes, `tensor-m16`) they ran star3d25 f64 1.09x-1.26x
    /// faster than 16 warps of 8 x 8 cells on every grid of even rows from
    /// 64^3 to 512^3 (191.4 against 152.3 GCells/s at 512^3; the suite: 182.8
    /// against 158.1), and 0.94x-0.96x on odd rows (29 x 45 x 133, 301 x 255
    /// x 257); acoustic25 f64, which reads two grids more at the cell,
    /// 0.96x-0.98x on every grid.
    fn wide(&self) -> bool {
        self.others.is_empty()
    }
}

impl Gen<'_> {
    fn tensor_shape(&self) -> Shape {
        let st = self.st;
        let name = |a: &Access| slot_name(st, a.slot);
        let sum = plane_sum(self.s, &name).expect("checked when the spec was lowered");
        let reach = sum.reach();
        let mut depth = 0;
        sum.expr.for_each_read(&mut |a| {
            if a.slot == sum.slot {
                depth = depth.max(a.offset[0].unsigned_abs() as usize);
            }
        });
        let (rows, cols) = (TILE + 2 * reach[0], TILE + 2 * reach[1]);
        let others = other_reads(&sum);
        Shape {
            sum,
            others,
            reach,
            depth,
            rows,
            cols,
            pitch: pitch(cols),
            slots: AHEAD + depth + 2,
        }
    }

    /// Whether the kernel can move cell pairs as 16-byte vectors on aligned
    /// grids: the tile's and the lanes' first columns are even. On grids of
    /// odd rows, which start at even and odd cells in turn, it moves the
    /// pairs that start at an even cell (every other row's).
    fn tensor_pairs(&self, shape: &Shape) -> bool {
        self.info.halo[2] % 2 == 0 && shape.reach[1] % 2 == 0
    }

    /// The coefficient functions, the kernel template (`V` cells a copy and
    /// a store: 2 on aligned grids, else 1; `ODD`: rows of an odd number of
    /// cells, which move pairs where the pair's first cell is even).
    pub(super) fn tensor(&self, w: &mut Writer) -> fmt::Result {
        let shape = self.tensor_shape();
        let t = self.st.dtype.c();
        for (axis, a, coefficients) in [("y", 1, &shape.sum.y), ("x", 2, &shape.sum.x)] {
            if coefficients.iter().all(Option::is_none) {
                continue;
            }
            writeln!(
                w,
                "/* The coefficient of the in-plane read `d` cells along `{}` (0 off the band and at the centre). */",
                self.st.axes[a]
            )?;
            let args: Vec<String> = std::iter::once("const int d".to_string())
                .chain(self.param_names().iter().map(|p| format!("const {t} {p}")))
                .collect();
            w.definition(
                format_args!(
                    "static __device__ __forceinline__ double {}_c{axis}({})",
                    self.sym,
                    args.join(", ")
                ),
                |w| {
                    // Case labels at the level of their `switch`.
                    writeln!(w, "switch (d) {{")?;
                    for (i, c) in coefficients.iter().enumerate() {
                        if let Some(c) = c {
                            let d = i as i64 - MAX_PLANE_REACH as i64;
                            // Coefficients read no grid: the read closure is never called.
                            let value = self.print(c, &|_| String::new());
                            w.guarded(format_args!("case {d}:"), format_args!("return {value};"))?;
                        }
                    }
                    w.guarded("default:", "return 0.0;")?;
                    writeln!(w, "}}")
                },
            )?;
            writeln!(w)?;
        }
        self.tensor_copy_function(w, &shape)?;
        writeln!(w)?;
        writeln!(
            w,
            "/* H: rows of cells a lane computes, 8 apart (1: 16 warps of 8 x 8 cells, m8n8k4 products; 2: 8 warps of 16 x 8"
        )?;
        writeln!(
            w,
            "   cells, m16n8k4). V: cells a copy and a store move (2 on aligned grids, else 1). ODD: rows of an odd number"
        )?;
        writeln!(
            w,
            "   of cells, which start at even and odd cells in turn: a pair whose first cell is odd moves as two single cells. */"
        )?;
        writeln!(w, "template <int H, int V, bool ODD>")?;
        let mut parameters = self.typed_extents(self.parameters("__restrict__", true), "ptrdiff_t");
        parameters.push("const int chunk".into());
        w.definition(
            format_args!(
                "static __global__ void __launch_bounds__({THREADS} / H) {}({})",
                self.kernel_name(),
                parameters.join(", ")
            ),
            |w| self.tensor_body(w, &shape),
        )
    }

    /// `p_<name>` of each runtime parameter the statement reads.
    fn param_names(&self) -> Vec<String> {
        self.s
            .params_used()
            .into_iter()
            .map(|i| format!("p_{}", self.st.params[i]))
            .collect()
    }

    /// `expr` in C, reads spelled by `read`.
    fn print(&self, e: &Expr, read: &dyn Fn(&Access) -> String) -> String {
        expr::print(
            e,
            &CExpr {
                st: self.st,
                gpu: true,
                read,
            },
        )
    }

    /// `<sym>_plane<H, V, ODD>`: the block's copies of one plane's tile into a ring slot.
    fn tensor_copy_function(&self, w: &mut Writer, shape: &Shape) -> fmt::Result {
        let (rows, cols, pitch) = (shape.rows, shape.cols, shape.pitch);
        writeln!(
            w,
            "/* Starts the copy of the {rows} x {cols} tile at (y0, x0) of `plane` (a plane of the grid, or null: zeros) into `slot`, V cells a copy, zeros off the grid."
        )?;
        writeln!(
            w,
            "   H: the kernel's (blocks of 512 / H threads). ODD: row r starts at an odd cell where (odd + r) is odd, and its"
        )?;
        writeln!(w, "   pairs then move as single cells. */")?;
        writeln!(w, "template <int H, int V, bool ODD>")?;
        let head = format!(
            "static __device__ __forceinline__ void {}_plane(double *slot, const double *plane, const double *any, const ptrdiff_t n1, const ptrdiff_t n2, const ptrdiff_t y0, const ptrdiff_t x0, const int odd)",
            self.sym
        );
        w.definition(head, |w| {
            writeln!(
                w,
                "constexpr int copies = {cols} / V, threads = {THREADS} / H; /* a row's, a block's */"
            )?;
            w.pragma("unroll")?;
            let head = format!("for (int k = 0; k < ({rows} * copies + threads - 1) / threads; ++k)");
            w.block(head, |w| {
                writeln!(w, "const int e = threadIdx.x + k * threads;")?;
                w.guarded(format_args!("if (e >= {rows} * copies)"), "break;")?;
                writeln!(w, "const int r = e / copies, c = e % copies * V;")?;
                writeln!(w, "const ptrdiff_t y = y0 + r, x = x0 + c;")?;
                writeln!(w, "const bool row = plane != NULL && y >= 0 && y < n1;")?;
                writeln!(
                    w,
                    "const bool on = row && x >= 0 && x < n2, on1 = row && x + 1 >= 0 && x + 1 < n2;"
                )?;
                writeln!(w, "double *const to = &slot[r * {pitch} + c];")?;
                let cells = |w: &mut Writer| {
                    writeln!(
                        w,
                        "/* A pair that starts odd, or across the grid's edge: its cells one at a time. */"
                    )?;
                    writeln!(w, "stencil_copy_async<1>(to, on ? &plane[y * n2 + x] : any, on);")?;
                    writeln!(
                        w,
                        "stencil_copy_async<1>(to + 1, on1 ? &plane[y * n2 + x + 1] : any, on1);"
                    )
                };
                let pair = |w: &mut Writer| {
                    writeln!(w, "stencil_copy_async<V>(to, on ? &plane[y * n2 + x] : any, on);")
                };
                w.if_else("if (V == 2 && ODD && (((odd + r) & 1) || on != on1))", cells, pair)
            })?;
            writeln!(w, "stencil_copies_commit();")?;
            Ok(())
        })?;
        Ok(())
    }

    /// The body of a `tensor` kernel: the lane's place, the block's chunk,
    /// the coefficients and windows, then the march through the planes.
    fn tensor_body(&self, w: &mut Writer, shape: &Shape) -> fmt::Result {
        self.tensor_places(w, shape)?;
        self.tensor_chunk(w, shape)?;
        let (depth, window, slots) = (shape.depth, shape.window(), shape.slots);
        let plane_slot = slot_name(self.st, shape.sum.slot);
        self.tensor_coefficients(w, shape)?;
        writeln!(
            w,
            "/* This lane's cells of `{plane_slot}` at planes q - {depth} .. q + {depth} (q: the plane computed), by phase. */"
        )?;
        writeln!(w, "double w0[H][{window}] = {{}}, w1[H][{window}] = {{}};")?;
        self.tensor_prefetch_registers(w, shape)?;
        writeln!(
            w,
            "/* Ring slots of plane p (just arrived), of q = p - {depth} (computed) and of p + {AHEAD} (on its way). */"
        )?;
        writeln!(
            w,
            "int at_p = 0, at_q = {}, at_ahead = {AHEAD};",
            (slots - depth) % slots
        )?;
        self.tensor_march(w, shape)
    }

    /// The ring, the block's tile and this lane's cells of it, and which of
    /// them are in the region (`mine0`, `mine1`).
    fn tensor_places(&self, w: &mut Writer, shape: &Shape) -> fmt::Result {
        let [hy, hx] = [self.info.halo[1], self.info.halo[2]];
        let [ry, rx] = shape.reach;
        let (slots, pitch) = (shape.slots, shape.pitch);
        let plane_slot = slot_name(self.st, shape.sum.slot);
        writeln!(
            w,
            "/* {slots} planes of the {}-by-{} tile of `{plane_slot}` (rows {pitch} doubles apart). */",
            shape.rows, shape.cols
        )?;
        writeln!(w, "double *const ring = stencil_ring();")?;
        writeln!(
            w,
            "const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;"
        )?;
        writeln!(
            w,
            "/* The block's {TILE} x {TILE} cells start at (oy, ox); its tile {ry} and {rx} cells before. */"
        )?;
        writeln!(
            w,
            "const ptrdiff_t oy = {hy} + (ptrdiff_t)blockIdx.y * {TILE}, ox = {hx} + (ptrdiff_t)blockIdx.x * {TILE};"
        )?;
        writeln!(w, "const ptrdiff_t y0 = oy - {ry}, x0 = ox - {rx};")?;
        writeln!(
            w,
            "/* This warp's 8 H x 8 cells start at (by, bx) of the block's; this lane's 2 H at rows g + 8 h (h < H), columns"
        )?;
        writeln!(
            w,
            "   2 t and 2 t + 1; mine0[h], mine1[h]: whether those cells are in the region. */"
        )?;
        writeln!(w, "const int by = warp / 4 * 8 * H, bx = warp % 4 * 8;")?;
        writeln!(w, "const ptrdiff_t iy = oy + by + g, ix = ox + bx + 2 * t;")?;
        let (_, hi_y) = self.bounds(1);
        let (_, hi_x) = self.bounds(2);
        writeln!(w, "bool mine0[H], mine1[H];")?;
        w.pragma("unroll")?;
        w.block("for (int h = 0; h < H; ++h)", |w| {
            writeln!(w, "mine0[h] = iy + 8 * h < {hi_y} && ix < {hi_x};")?;
            writeln!(w, "mine1[h] = iy + 8 * h < {hi_y} && ix + 1 < {hi_x};")
        })?;
        Ok(())
    }

    /// The block's chunk of planes and the planes of the summed grid it reads.
    fn tensor_chunk(&self, w: &mut Writer, shape: &Shape) -> fmt::Result {
        let hz = self.info.halo[0];
        let depth = shape.depth;
        let plane_slot = slot_name(self.st, shape.sum.slot);
        let s0 = "n1 * n2";
        writeln!(
            w,
            "/* The block's chunk of `{}`: `chunk` planes from zo. */",
            self.st.axes[0]
        )?;
        writeln!(
            w,
            "const ptrdiff_t zo = {hz} + (ptrdiff_t)blockIdx.z * chunk, zend = zo + chunk < {hi_z} ? zo + chunk : {hi_z};",
            hi_z = self.bounds(0).1
        )?;
        writeln!(
            w,
            "/* Planes of `{plane_slot}` read: zo - {depth} to zend + {depth}. */"
        )?;
        writeln!(
            w,
            "const ptrdiff_t zlo = zo - {depth}, zhi = zend + {depth}, s0 = {s0};"
        )?;
        writeln!(
            w,
            "/* ODD: whether the tile's first cell at plane p is odd (rows then start odd in turn). */"
        )?;
        writeln!(
            w,
            "const auto first_odd = [=](const ptrdiff_t p) {{ return ODD ? (int)((p * s0 + y0 * n2 + x0) & 1) : 0; }};"
        )
    }

    /// The march: planes copied `AHEAD` ahead into the ring, each joining
    /// the window as it arrives, the plane `depth` behind computed.
    fn tensor_march(&self, w: &mut Writer, shape: &Shape) -> fmt::Result {
        let [ry, rx] = shape.reach;
        let (depth, window, slots, pitch) = (shape.depth, shape.window(), shape.slots, shape.pitch);
        let plane_slot = slot_name(self.st, shape.sum.slot);
        let tile = shape.rows * pitch;
        let plane = |p: &str| {
            format!(
                "{}_plane<H, V, ODD>(ring + {{}} * {tile}, {p} < zhi ? {plane_slot} + {p} * s0 : NULL, {plane_slot}, n1, n2, y0, x0, first_odd({p}));",
                self.sym
            )
        };
        w.pragma("unroll")?;
        w.guarded(
            format_args!("for (int i = 0; i < {AHEAD}; ++i)"),
            format_args!("{}", plane("(zlo + i)").replace("{}", "i")),
        )?;
        let head = format!("for (ptrdiff_t p0 = zlo; p0 < zhi; p0 += {window})");
        w.block(head, |w| {
            w.pragma("unroll")?;
            w.block(format_args!("for (int ph = 0; ph < {window}; ++ph)"), |w| {
                writeln!(w, "const ptrdiff_t p = p0 + ph;")?;
                w.guarded("if (p >= zhi)", "break;")?;
                writeln!(
                    w,
                    "{}",
                    plane(&format!("(p + {AHEAD})")).replace("{}", "at_ahead")
                )?;
                writeln!(
                    w,
                    "const ptrdiff_t q = p - {depth}, c = q * s0 + iy * n2 + ix;"
                )?;
                self.tensor_inputs(w, shape)?;
                writeln!(
                    w,
                    "stencil_copies_wait<{AHEAD}>(); /* plane p has arrived */"
                )?;
                writeln!(w, "__syncthreads();")?;
                writeln!(w, "/* Plane p joins the window. */")?;
                writeln!(
                    w,
                    "const double *const now = ring + at_p * {tile} + ({ry} + by + g) * {pitch} + {rx} + bx + 2 * t;"
                )?;
                let newest = window_at(window, 2 * depth);
                w.pragma("unroll")?;
                w.block("for (int h = 0; h < H; ++h)", |w| {
                    writeln!(
                        w,
                        "const double2 fresh = stencil_load_pair<V>(now + 8 * h * {pitch}, true, true);"
                    )?;
                    writeln!(w, "w0[h][{newest}] = fresh.x;")?;
                    writeln!(w, "w1[h][{newest}] = fresh.y;")?;
                    Ok(())
                })?;
                w.block("if (q >= zo)", |w| {
                    self.tensor_update(w, shape)
                })?;
                for s in ["at_p", "at_q", "at_ahead"] {
                    writeln!(w, "{s} = {s} + 1 == {slots} ? 0 : {s} + 1;")?;
                }
                Ok(())
            })?;
            Ok(())
        })?;

        Ok(())
    }

    /// `cx[m]`, `cy[m]`: this lane's element of each product's band.
    fn tensor_coefficients(&self, w: &mut Writer, shape: &Shape) -> fmt::Result {
        let extra: String = self
            .param_names()
            .iter()
            .map(|p| format!(", {p}"))
            .collect();
        for (axis, a, reach, coefficients) in [
            ("y", 1, shape.reach[0], &shape.sum.y),
            ("x", 2, shape.reach[1], &shape.sum.x),
        ] {
            if coefficients.iter().all(Option::is_none) {
                continue;
            }
            let (starts, overlap) = band(reach);
            let n = starts.len();
            writeln!(
                w,
                "/* This lane's element of the {n} bands along `{}`: the coefficient of the read `k - {reach} - g` cells away, k = start + t. */",
                self.st.axes[a]
            )?;
            writeln!(w, "double c{axis}[{n}];")?;
            for (m, s) in starts.iter().enumerate() {
                let value = format!("{}_c{axis}({s} + t - {reach} - g{extra})", self.sym);
                if m + 1 == n && overlap > 0 {
                    writeln!(
                        w,
                        "c{axis}[{m}] = t < {overlap} ? 0.0 : {value}; /* columns the product before took */"
                    )?;
                } else {
                    writeln!(w, "c{axis}[{m}] = {value};")?;
                }
            }
        }
        Ok(())
    }

    /// The products, the update of the lane's cells and their stores, at plane `q`.
    fn tensor_update(&self, w: &mut Writer, shape: &Shape) -> fmt::Result {
        let tile = shape.rows * shape.pitch;
        writeln!(w, "const double *const at = ring + at_q * {tile};")?;
        writeln!(
            w,
            "/* The in-plane sum of plane q on the tensor cores: s[2 h] and s[2 h + 1] at the lane's row g + 8 h. */"
        )?;
        writeln!(w, "double sx[2 * H] = {{}}, sy[2 * H] = {{}};")?;
        if shape.sum.x.iter().any(Option::is_some) {
            self.x_products(w, shape)?;
        }
        if shape.sum.y.iter().any(Option::is_some) {
            self.y_products(w, shape)?;
        }
        w.pragma("unroll")?;
        w.block("for (int h = 0; h < H; ++h)", |w| {
            writeln!(
                w,
                "const double in0 = sx[2 * h] + sy[2 * h], in1 = sx[2 * h + 1] + sy[2 * h + 1];"
            )?;
            self.tensor_results(w, shape)?;
            writeln!(w, "const ptrdiff_t ch = c + 8 * h * n2;")?;
            writeln!(
                w,
                "/* A 16-byte store where the pair is aligned (ODD: every other row) and both cells are stored. */"
            )?;
            w.if_else(
                "if (V == 2 && (!ODD || ch % 2 == 0) && mine1[h])",
                |w| writeln!(w, "*(double2 *)&out[ch] = make_double2(r0, r1);"),
                |w| {
                    w.guarded("if (mine0[h])", "out[ch] = r0;")?;
                    w.guarded("if (mine1[h])", "out[ch + 1] = r1;")
                },
            )
        })?;
        Ok(())
    }

    /// The products along x into `sx`: A is the warp's rows of plane `at`.
    fn x_products(&self, w: &mut Writer, shape: &Shape) -> fmt::Result {
        let ([ry, rx], pitch) = (shape.reach, shape.pitch);
        writeln!(
            w,
            "/* Along x: A is the warp's rows of the plane from column bx + start, B the band. */"
        )?;
        writeln!(
            w,
            "const double *const ax = at + ({ry} + by + g) * {pitch} + bx + t;"
        )?;
        for (m, s) in band(rx).0.iter().enumerate() {
            writeln!(
                w,
                "stencil_mma_rows<H>(sx, ax + {s}, {}, cx[{m}]);",
                8 * pitch
            )?;
        }
        Ok(())
    }

    /// The products along y into `sy`: B is the plane's rows.
    fn y_products(&self, w: &mut Writer, shape: &Shape) -> fmt::Result {
        let ([ry, rx], pitch) = (shape.reach, shape.pitch);
        writeln!(
            w,
            "/* Along y: A is the band (rows g and g + 8 reach 8 rows apart), B the plane's rows from by + start. */"
        )?;
        writeln!(
            w,
            "const double *const ay = at + (by + t) * {pitch} + {rx} + bx + g;"
        )?;
        let (both, wide) = y_steps(ry);
        let step = |w: &mut Writer, (s, top, bottom): &Step| -> fmt::Result {
            let c = |m: &Option<usize>| m.map_or("0.0".to_string(), |m| format!("cy[{m}]"));
            writeln!(
                w,
                "stencil_mma<H>(sy, {}, {}, ay[{}]);",
                c(top),
                c(bottom),
                s * pitch
            )
        };
        for st in &both {
            step(w, st)?;
        }
        if shape.wide() {
            w.block("if (H == 2)", |w| {
                for st in &wide {
                    step(w, st)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    /// `r0`, `r1`: the update at the lane's two cells of row `g + 8 h`.
    fn tensor_results(&self, w: &mut Writer, shape: &Shape) -> fmt::Result {
        let (depth, window) = (shape.depth, shape.window());
        for j in 0..2 {
            let read = |a: &Access| {
                if a.slot == PLANE_SUM {
                    format!("in{j}")
                } else if a.slot == shape.sum.slot {
                    let at = (depth as i64 + a.offset[0]) as usize;
                    format!("w{j}[h][{}]", window_at(window, at))
                } else {
                    format!(
                        "{}[h].{}",
                        input_name(self.st, a.slot, a.offset[0]),
                        ["x", "y"][j]
                    )
                }
            };
            writeln!(
                w,
                "const double r{j} = {};",
                self.print(&shape.sum.expr, &read)
            )?;
        }
        Ok(())
    }

    /// Declares the registers that carry the other grids' reads a plane ahead (zeros before the first).
    fn tensor_prefetch_registers(&self, w: &mut Writer, shape: &Shape) -> fmt::Result {
        if shape.others.is_empty() {
            return Ok(());
        }
        writeln!(
            w,
            "/* The other grids at this lane's cells, loaded a plane ahead (their latency passes with an iteration). */"
        )?;
        writeln!(w, "{}", self.input_registers(shape, "next_", " = {}"))?;
        Ok(())
    }

    /// The declaration of a `double2` array of `H` for each other grid's read,
    /// named `<prefix>cells_<grid>...`, each followed by `init`.
    fn input_registers(&self, shape: &Shape, prefix: &str, init: &str) -> String {
        let names: Vec<String> = shape
            .others
            .iter()
            .map(|&(slot, dz)| format!("{prefix}{}[H]{init}", input_name(self.st, slot, dz)))
            .collect();
        format!("double2 {};", names.join(", "))
    }

    /// This plane's reads of the other grids (loaded the iteration before), and the next plane's loads.
    fn tensor_inputs(&self, w: &mut Writer, shape: &Shape) -> fmt::Result {
        if shape.others.is_empty() {
            return Ok(());
        }
        writeln!(w, "{}", self.input_registers(shape, "", ""))?;
        w.pragma("unroll")?;
        w.block("for (int h = 0; h < H; ++h)", |w| {
            writeln!(
                w,
                "const bool on0 = q + 1 >= zo && q + 1 < zend && mine0[h], on1 = q + 1 >= zo && q + 1 < zend && mine1[h];"
            )?;
            writeln!(w, "const ptrdiff_t ch = c + 8 * h * n2;")?;
            for &(slot, dz) in &shape.others {
                let name = input_name(self.st, slot, dz);
                let at = match dz + 1 {
                    0 => "ch".to_string(),
                    d if d < 0 => format!("ch - {} * s0", -d),
                    1 => "ch + s0".to_string(),
                    d => format!("ch + {d} * s0"),
                };
                writeln!(w, "{name}[h] = next_{name}[h];")?;
                writeln!(
                    w,
                    "next_{name}[h] = stencil_load_pair<ODD ? 1 : V>({} + {at}, on0, on1);",
                    slot_name(self.st, slot)
                )?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Launches the instance of pairs where the grid allows, else the one of
    /// single cells; in warps of 16 x 8 cells where [`Shape::wide`] and rows
    /// are of an even number of cells.
    pub(super) fn tensor_launch(&self, w: &mut Writer) -> fmt::Result {
        let shape = self.tensor_shape();
        let bytes = shape.bytes();
        let api = self.d.api;
        let name = self.kernel_name();
        let wide = shape.wide();
        if wide {
            writeln!(
                w,
                "/* Warps of 16 x 8 cells (8 warps a block, m16n8k4 products) where rows are of an even number of cells, else of 8 x 8. */"
            )?;
            writeln!(w, "const bool wide = n2 % 2 == 0;")?;
            writeln!(w, "const int threads = wide ? {} : {THREADS};", THREADS / 2)?;
        } else {
            writeln!(
                w,
                "const int threads = {THREADS}; /* 16 warps of 8 x 8 cells */"
            )?;
        }
        // With `wide`, rows are even exactly where it holds.
        let instance = |v: usize| {
            if wide {
                format!("(wide ? {name}<2, {v}, false> : {name}<1, {v}, false>)")
            } else {
                format!("{name}<1, {v}, false>")
            }
        };
        let even = if wide { "wide" } else { "n2 % 2 == 0" };
        if self.tensor_pairs(&shape) {
            let aligned: Vec<String> = std::iter::once(self.output.to_string())
                .chain(self.s.slots().into_iter().map(|s| slot_name(self.st, s)))
                .map(|p| format!("(size_t){p} % 16 == 0"))
                .collect();
            writeln!(
                w,
                "/* Pairs of cells as 16-byte vectors where every grid is aligned; rows of odd length start at even and odd cells in turn. */"
            )?;
            writeln!(w, "const bool aligned = {};", aligned.join(" && "))?;
            writeln!(
                w,
                "auto *const kernel = !aligned ? {} : {even} ? {name}<{}, 2, false> : {name}<1, 2, true>;",
                instance(1),
                if wide { 2 } else { 1 }
            )?;
        } else {
            writeln!(w, "auto *const kernel = {};", instance(1))?;
        }
        writeln!(
            w,
            "/* {bytes} bytes of shared memory: more than a block gets without asking. */"
        )?;
        writeln!(
            w,
            "const {api}Error_t allowed = {api}FuncSetAttribute((const void *)kernel, {api}FuncAttributeMaxDynamicSharedMemorySize, {bytes});"
        )?;
        w.guarded(
            format_args!("if (allowed != {api}Success)"),
            "return (int)allowed;",
        )?;
        let mut blocks = vec![
            format!("({} + {TILE} - 1) / {TILE}", self.extent(2)),
            format!("({} + {TILE} - 1) / {TILE}", self.extent(1)),
        ];
        // A block reads its window's planes before and after its chunk.
        self.wave_chunk(w, "kernel", bytes, 2 * shape.depth, &blocks, true)?;
        if let Some(small) = self.single_step().filter(|_| self.plan.small_grids()) {
            self.launch_small_grids(w, &small, 2 * shape.depth)?;
        }
        blocks.push(format!("({} + chunk - 1) / chunk", self.extent(0)));
        let arguments = format!("{}, chunk", self.arguments());
        self.launch_named(w, "kernel", "threads", &blocks, bytes, &arguments)
    }
}

impl Gen<'_> {
    /// `auto`'s `tensor` launches `small` (`stream` in 16-byte vectors) on
    /// the grids where its blocks, each marching its chunk and `extra`
    /// planes more, would spend less than [`SMALL_GRID_EFFICIENCY`] percent
    /// of their time on cells of the region.
    fn launch_small_grids(&self, w: &mut Writer, small: &Self, extra: usize) -> fmt::Result {
        let when = format!(
            "100 * cells * {} * {} < {SMALL_GRID_EFFICIENCY} * {} * resident * waves * (chunk + {extra})",
            self.extent(1),
            self.extent(2),
            TILE * TILE
        );
        let why = format!(
            "where `tensor`'s blocks would spend less than {SMALL_GRID_EFFICIENCY}% of their time on cells of the region (tiles past its edge, the window's {extra} planes a chunk, idle multiprocessors)"
        );
        writeln!(
            w,
            "/* `{}` in {}-cell vectors, whose blocks march {} planes, {why}. */",
            small.plan.strategy.name(),
            small.plan.vector,
            small.plan.chunk
        )?;
        writeln!(
            w,
            "const ptrdiff_t waves = resident > 0 ? (across * ((cells + chunk - 1) / chunk) + resident - 1) / resident : 0;"
        )?;
        w.block(format_args!("if ({when})"), |w| small.launch_twins(w))?;
        Ok(())
    }
}

/// The index into a window of `window` planes of the plane `k` after the
/// oldest, at phase `ph` of the unrolled loop (`0` for a window of one).
fn window_at(window: usize, k: usize) -> String {
    if window == 1 {
        "0".into()
    } else {
        format!("(ph + {k}) % {window}")
    }
}

/// The name of the registers holding grid `slot` at plane `q + dz` at a lane's two cells.
fn input_name(st: &Stencil, slot: Slot, dz: i64) -> String {
    let plane = match dz {
        0 => String::new(),
        d if d < 0 => format!("_{}", -d),
        d => d.to_string(),
    };
    format!("cells_{}{plane}", slot_name(st, slot))
}

/// The device helpers every `tensor` kernel calls: the product on the
/// tensor cores, the asynchronous copies and the loads of cell pairs. On a
/// host compilation (the CPU's emulated device of the tests) the product
/// reads its operands from the other lanes through shared memory and the
/// copies are plain ones.
pub fn helpers(w: &mut Writer) -> fmt::Result {
    for line in HELPERS.lines() {
        writeln!(w, "{}", line)?;
    }
    Ok(())
}

const HELPERS: &str = r#"
/* D += A B for 8 x 8 x 4 f64 matrices on the tensor cores: lane l holds A[l / 4][l % 4], B[l % 4][l / 4]
   and D[l / 4][2 (l % 4)], D[l / 4][2 (l % 4) + 1]. */
static __device__ __forceinline__ void stencil_dmma(double &d0, double &d1, const double a, const double b)
{
#if defined(__CUDA_ARCH__)
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+d"(d0), "+d"(d1)
                 : "d"(a), "d"(b));
#else
    /* Each lane posts its operands for its warp to read (blocks of 16 warps). */
    __shared__ double posted[16][32][2];
    const int warp = threadIdx.x >> 5, l = threadIdx.x & 31, g = l >> 2, t = l & 3;
    posted[warp][l][0] = a;
    posted[warp][l][1] = b;
    __syncwarp();
    for (int k = 0; k < 4; ++k) {
        const double ak = posted[warp][g * 4 + k][0];
        d0 = fma(ak, posted[warp][8 * t + k][1], d0);
        d1 = fma(ak, posted[warp][8 * t + 4 + k][1], d1);
    }
    __syncwarp();
#endif
}

/* D += A B for H x 8 x 8 x 4 f64 matrices (d: 2 H cells): lane l holds A[l / 4 + 8 h][l % 4] (a0, a1), B[l % 4][l / 4]
   and D[l / 4 + 8 h][2 (l % 4) + 0, 1] (d[2 h], d[2 h + 1]). H = 2 is one m16n8k4 product on sm_90 and later, two m8n8k4
   before. */
template <int H>
static __device__ __forceinline__ void stencil_mma(double (&d)[2 * H], const double a0, const double a1, const double b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (H == 2) {
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                     : "+d"(d[0]), "+d"(d[1]), "+d"(d[2 * H - 2]), "+d"(d[2 * H - 1])
                     : "d"(a0), "d"(a1), "d"(b));
        return;
    }
#endif
    stencil_dmma(d[0], d[1], a0, b);
    if (H == 2)
        stencil_dmma(d[2 * H - 2], d[2 * H - 1], a1, b);
}

/* stencil_mma with A from shared memory: rows 8 apart at a and a + stride. */
template <int H>
static __device__ __forceinline__ void stencil_mma_rows(double (&d)[2 * H], const double *a, const int stride, const double b)
{
    stencil_mma<H>(d, a[0], H == 2 ? a[stride] : 0.0, b);
}

/* The block's dynamic shared memory, as doubles (outside the kernel templates, for their host compilation). */
static __device__ __forceinline__ double *stencil_ring()
{
    extern __shared__ __align__(16) unsigned char shared[];
    return (double *)shared;
}

/* Starts copying V doubles from global `src` to shared `dst`, or zeros where `on` is false. */
template <int V>
static __device__ __forceinline__ void stencil_copy_async(double *dst, const double *src, const bool on)
{
#if defined(__CUDA_ARCH__)
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    if (V == 2)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(to), "l"(src), "r"(on ? 16 : 0) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(to), "l"(src), "r"(on ? 8 : 0) : "memory");
#else
    for (int k = 0; k < V; ++k)
        dst[k] = on ? src[k] : 0.0;
#endif
}

/* Closes the group of copies this thread started. */
static __device__ __forceinline__ void stencil_copies_commit()
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

/* Waits until at most N of this thread's groups of copies are in flight. */
template <int N>
static __device__ __forceinline__ void stencil_copies_wait()
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

/* The cells at `p` and `p + 1` where each is `on` (else 0): one 16-byte load when V is 2. */
template <int V>
static __device__ __forceinline__ double2 stencil_load_pair(const double *p, const bool on0, const bool on1)
{
    if (V == 2)
        return on0 ? *(const double2 *)p : make_double2(0.0, 0.0);
    return make_double2(on0 ? p[0] : 0.0, on1 ? p[1] : 0.0);
}"#;

#[cfg(test)]
mod tests;
