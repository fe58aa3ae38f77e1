//! 3-D `temporal` of vectors for stars that also read other grids at the
//! cell (input grids, a leapfrog's previous level): two fused steps whose
//! planes all live in shared rings, each level computed by its own warps.
//!
//! A block of `32 x (W1 + W2)` threads owns a tile of `32 x (32 - 2 r_y)`
//! cells of the two fast axes and marches a chunk of the slowest one:
//!
//! - plane `p` of the grid the update steps (the tile grown by `2 r` on
//!   each side) is copied into the first ring by 8-byte `cp.async` copies,
//!   [`AHEAD`] planes ahead; each thread's share of a plane is planned once;
//! - `W1` warps compute level 1 at plane `p - r_z` on the tile grown by
//!   `r` (32 rows), 4 cells of a row per lane, into the second ring; `W2`
//!   warps compute level 2 at plane `p - 2 r_z - 1` from that ring, the
//!   tile's own cells. One barrier a plane. A warp takes 4 neighbouring
//!   column groups of 8 rows (a lane a row where the grids read at the
//!   cell load 16-byte quads);
//! - a lane keeps the 4 cells' columns along the slowest axis in registers
//!   (its window) and reads its in-plane neighbours from the ring as
//!   16-byte vectors; the grids it reads at the cell come from global
//!   memory a plane ahead, one 16-byte load a grid where rows are whole
//!   16-byte quads (else two 8-byte ones);
//! - both levels' outputs are staged in shared memory and stored a plane
//!   later, each row in 8-byte pairs: a lane's own row would fill part of a
//!   sector with every store.
//!
//! The march is unrolled by the `2 r_z + 1` planes of a window, so that
//! ring slots and window registers are indexed at compile time. Rows must
//! be whole 8-byte pairs (an even contiguous extent, 8-byte aligned
//! buffers). On the other grids, those too large for 32-bit in-plane
//! offsets and those of small planes ([`Gen::rings_preferred`]), the
//! session runs one step a launch ([`splits_steps`](crate::backend::gpu::plan::temporal::splits_steps)).
//! `cp.async` is CUDA's (sm_80 and later): HIP is refused.
//!
//! On the H100 the generated kernel ran acoustic25 f32 at 1.03x-1.17x
//! `stream`'s defaults on the large grids measured, bit-identical,
//! but 0.58x-0.89x `stream` in
//! 16-byte vectors on planes of up to 409600 cells where rows are whole
//! quads, which those grids now run. Where rows are whole
//! 64-byte lines, the 16-byte loads of the grids read at the cell run it
//! 1.11x-1.27x faster than 8-byte ones, which left it at 0.81x-0.93x
//! `stream`'s defaults; copying those grids into
//! shared memory like the stepped grid ran 0.83x-0.93x `stream` on every
//! large grid (design notes, `ring-inputs-f32`).

mod launch;

use std::collections::BTreeSet;
use std::fmt::{self, Write as _};

use super::super::Gen;
use crate::backend::Writer;
use crate::backend::gpu::plan::temporal::rings::{AHEAD, CELLS, LANES, Rings, TILE_X};
use crate::codegen::names::slot_name;
use crate::ir::{Access, Slot, Stencil};

/// A block, in words, for the file's header.
pub fn layout(st: &Stencil) -> String {
    let sh = Rings::new(st, true);
    format!(
        "{} threads ({} warps for level 1, {} for level 2) over tiles of {TILE_X} x {} cells",
        sh.threads(),
        sh.w1,
        sh.w2,
        sh.ty
    )
}

/// A grid the update reads at the cell, as the kernel names it: `now<k>`
/// (this plane's 4 cells) and `t.next<k>` (the next plane's).
struct CellGrid {
    /// The grid level 1 reads, and level 2 (a leapfrog's previous level
    /// is, for level 2, the stepped grid at the launch's start).
    first: String,
    second: String,
    slot: Slot,
}

impl Gen<'_> {
    /// Whether this kernel is a ring kernel (see the module documentation).
    pub(in crate::backend::gpu) fn rings(&self) -> bool {
        crate::backend::gpu::plan::temporal::rings_plan(self.plan, self.st)
    }

    pub(in crate::backend::gpu) fn rings_shape(&self) -> Rings {
        Rings::new(self.st, self.leapfrog())
    }

    /// The grids read at the cell, besides the stepped one.
    fn cell_grids(&self) -> Vec<CellGrid> {
        let streamed = self.streamed();
        let own_prev = self.own_prev();
        self.s
            .slots()
            .into_iter()
            .filter(|&slot| slot != streamed)
            .map(|slot| {
                let first = slot_name(self.st, slot);
                let second = if slot == own_prev {
                    slot_name(self.st, streamed)
                } else {
                    first.clone()
                };
                CellGrid {
                    first,
                    second,
                    slot,
                }
            })
            .collect()
    }

    /// The functions a ring kernel calls and the kernel itself.
    pub(in crate::backend::gpu) fn rings_kernel(&self, w: &mut Writer) -> fmt::Result {
        let sh = self.rings_shape();
        self.rings_copies(w)?;
        writeln!(w)?;
        self.rings_unit(w, &sh)?;
        writeln!(w)?;
        self.rings_plan(w, &sh)?;
        writeln!(w)?;
        self.rings_copy_plane(w, &sh)?;
        writeln!(w)?;
        self.rings_flush(w, &sh)?;
        writeln!(w)?;
        self.rings_level(w, &sh)?;
        writeln!(w)?;
        self.rings_plane(w, &sh)?;
        writeln!(w)?;
        self.rings_main(w, &sh)
    }

    /// The 8-byte asynchronous copy and its groups (synchronous copies
    /// where the source is compiled for the host: the tests' emulated device).
    fn rings_copies(&self, w: &mut Writer) -> fmt::Result {
        let s = &self.sym;
        writeln!(
            w,
            "/* Starts an 8-byte copy from global to shared memory (zeros where `on` is false). */"
        )?;
        let head = format!(
            "static __device__ __forceinline__ void {s}_copy(float *dst, const float *src, bool on)"
        );
        w.definition(head, |w| {
            w.directive("#if defined(__CUDA_ARCH__)")?;
            writeln!(w, "const unsigned to = (unsigned)__cvta_generic_to_shared(dst);")?;
            writeln!(
                w,
                "asm volatile(\"cp.async.ca.shared.global [%0], [%1], 8, %2;\" ::\"r\"(to), \"l\"(src), \"r\"(on ? 8 : 0) : \"memory\");"
            )?;
            w.directive("#else")?;
            writeln!(w, "dst[0] = on ? src[0] : 0.0f;")?;
            writeln!(w, "dst[1] = on ? src[1] : 0.0f;")?;
            w.directive("#endif")
        })?;
        writeln!(w)?;
        writeln!(
            w,
            "/* Closes the group of copies started since the last one. */"
        )?;
        let head = format!("static __device__ __forceinline__ void {s}_commit()");
        w.definition(head, |w| {
            w.directive("#if defined(__CUDA_ARCH__)")?;
            writeln!(
                w,
                "asm volatile(\"cp.async.commit_group;\" ::: \"memory\");"
            )?;
            w.directive("#endif")
        })?;
        writeln!(w)?;
        writeln!(
            w,
            "/* Waits until at most N groups of copies are in flight. */"
        )?;
        writeln!(w, "template <int N>")?;
        let head = format!("static __device__ __forceinline__ void {s}_wait()");
        w.definition(head, |w| {
            w.directive("#if defined(__CUDA_ARCH__)")?;
            writeln!(
                w,
                "asm volatile(\"cp.async.wait_group %0;\" ::\"n\"(N) : \"memory\");"
            )?;
            w.directive("#endif")
        })
    }

    /// `<sym>_unit`: what a thread keeps across the march.
    fn rings_unit(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let s = &self.sym;
        let wn = sh.window();
        writeln!(
            w,
            "/* What a thread of a `{}` block keeps across the march. */",
            self.st.name
        )?;
        w.declaration(format_args!("struct {s}_unit"), |w| {
            writeln!(
                w,
                "bool first;        /* level 1 (warps 0-{}), else level 2 */",
                sh.w1 - 1
            )?;
            writeln!(
                w,
                "int rs, cs;        /* its row and first column in the level-1 tile */"
            )?;
            writeln!(
                w,
                "bool own;          /* its cells are the stored tile's */"
            )?;
            writeln!(
                w,
                "bool grid[4], in[4]; /* each cell on the grid, in the region */"
            )?;
            writeln!(
                w,
                "bool pair[2];      /* each 8-byte pair of its cells on the grid */"
            )?;
            writeln!(
                w,
                "int cell;          /* its first cell's offset in a plane */"
            )?;
            writeln!(
                w,
                "float w[{wn}][4];   /* its cells' window along `{}` */",
                self.st.axes[0]
            )?;
            for (k, g) in self.cell_grids().iter().enumerate() {
                writeln!(
                    w,
                    "float next{k}[4];   /* `{}` at its cells, at the next plane it computes */",
                    g.first
                )?;
            }
            writeln!(
                w,
                "int csrc[{}], cdst; /* its 8-byte pairs of a copied plane: offsets in a plane (0 off the grid), in a slot (-1: none) */",
                sh.passes
            )?;
            writeln!(
                w,
                "bool con[{}], clast; /* each pair on the grid; the last pass's row in the tile */",
                sh.passes
            )?;
            writeln!(
                w,
                "int fsrc, fdst;    /* its staged pair: offset in a staged plane (-1: none), in a plane */"
            )
        })
    }

    /// `<sym>_plan`: a thread's share of each plane's copy and store.
    fn rings_plan(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let s = &self.sym;
        let [uy, ux] = sh.copied();
        let (pairs, rows) = (ux / 2, sh.pass_rows);
        let (_, hi1) = self.bounds(1);
        let (_, hi2) = self.bounds(2);
        writeln!(
            w,
            "/* A thread's share of each plane's copy (pair k % P of rows k / P + passes) and of each staged store (pair k of both levels). */"
        )?;
        let head = format!(
            "static __device__ __forceinline__ void {s}_plan({s}_unit &t, const int n1, const int n2, const int oy, const int ox)"
        );
        w.definition(head, |w| {
            writeln!(w, "const int k = (int)stencil_thread_x();")?;
            writeln!(w, "t.cdst = -1;")?;
            w.block(format_args!("if (k < {})", rows * pairs), |w| {
                writeln!(w, "const int r = k / {pairs}, c = 2 * (k % {pairs});")?;
                writeln!(w, "const int x = ox - {} + c;", 2 * sh.r[2])?;
                for h in 0..sh.passes {
                    let y = super::super::shifted(
                        &format!("oy - {} + r", 2 * sh.r[1]),
                        (h * rows) as i64,
                    );
                    writeln!(w, "t.con[{h}] = {y} >= 0 && {y} < n1 && x >= 0 && x < n2;")?;
                    writeln!(w, "t.csrc[{h}] = t.con[{h}] ? ({y}) * n2 + x : 0;")?;
                }
                writeln!(w, "t.clast = r + {} < {uy};", (sh.passes - 1) * rows)?;
                writeln!(w, "t.cdst = r * {} + c;", sh.pitch)?;
                Ok(())
            })?;
            let fp = TILE_X / 2;
            writeln!(w, "t.fsrc = -1;")?;
            w.block(format_args!("if (k < {})", fp * sh.ty), |w| {
                writeln!(w, "const int row = k / {fp}, c = 2 * (k % {fp});")?;
                writeln!(w, "const int y = oy + row, x = ox + c;")?;
                w.block(format_args!("if (y < {hi1} && x < {hi2})"), |w| {
                    writeln!(w, "t.fsrc = row * {} + c;", TILE_X + 4)?;
                    writeln!(w, "t.fdst = y * n2 + x;")
                })
            })?;
            Ok(())
        })?;
        Ok(())
    }

    /// `<sym>_copy_plane`: starts the copy of a plane of the stepped grid.
    fn rings_copy_plane(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let s = &self.sym;
        let grid = slot_name(self.st, self.streamed());
        writeln!(
            w,
            "/* Starts the copy of plane p of the tile grown by twice the radius into `slot` (zeros off the grid; nothing but the group for p < 0). */"
        )?;
        let head = format!(
            "static __device__ __forceinline__ void {s}_copy_plane(float *slot, const float *__restrict__ {grid}, const {s}_unit &t, const int p, const int n0, const size_t s0)"
        );
        w.definition(head, |w| {
            writeln!(w, "const bool plane = p >= 0 && p < n0;")?;
            writeln!(w, "const float *const at = {grid} + (plane ? p : 0) * s0;")?;
            w.block("if (t.cdst >= 0)", |w| {
                for h in 0..sh.passes {
                    let copy = format!(
                        "{s}_copy(&slot[{}], at + t.csrc[{h}], plane && t.con[{h}]);",
                        super::super::shifted("t.cdst", (h * sh.pass_rows * sh.pitch) as i64)
                    );
                    if h + 1 == sh.passes && sh.passes * sh.pass_rows > sh.copied()[0] {
                        w.guarded("if (t.clast)", format_args!("{copy}"))?;
                    } else {
                        writeln!(w, "{}", copy)?;
                    }
                }
                Ok(())
            })?;
            writeln!(w, "{s}_commit();")?;
            Ok(())
        })?;
        Ok(())
    }

    /// `<sym>_flush`: stores the staged planes, rows of 8-byte pairs.
    fn rings_flush(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let s = &self.sym;
        let rz = sh.r[0];
        let mut params = vec![
            "const float *stage".to_string(),
            format!("const {s}_unit &t"),
            "const int p".into(),
            "const int z0".into(),
            "const int z1".into(),
            "const size_t s0".into(),
            "float *__restrict__ out".into(),
        ];
        if sh.both {
            params.push("float *__restrict__ out_prev".into());
        }
        writeln!(
            w,
            "/* Stores the planes staged at plane p of the march: level 2 at p - {} to `out`{}. */",
            2 * rz + 1,
            if sh.both {
                format!(", level 1 at p - {rz} to `out_prev`")
            } else {
                String::new()
            }
        )?;
        let head = format!(
            "static __device__ __forceinline__ void {s}_flush({})",
            params.join(", ")
        );
        w.definition(head, |w| {
            w.guarded("if (t.fsrc < 0)", "return;")?;
            writeln!(w, "const int q2 = p - {};", 2 * rz + 1)?;
            w.guarded(
                "if (q2 >= z0 && q2 < z1)",
                "*(float2 *)&(out + q2 * s0)[t.fdst] = *(const float2 *)&stage[t.fsrc];",
            )?;
            if sh.both {
                writeln!(w, "const int q1 = p - {rz};")?;
                let head = "if (q1 >= z0 && q1 < z1)";
                w.guarded(head, format_args!("*(float2 *)&(out_prev + q1 * s0)[t.fdst] = *(const float2 *)&stage[{} + t.fsrc];", sh.staged()))?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// `<sym>_level<M>`: 4 cells of a level at one plane.
    fn rings_level(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let s = &self.sym;
        let [rz, _, rx] = sh.r;
        let wn = sh.window();
        let grids = self.cell_grids();
        writeln!(
            w,
            "/* 4 cells of a level at plane q, row rc of the ring plane `at`, its columns cb + {rx} ..: w[(M + k) % {wn}] holds the level below at plane q - {rz} + k. */"
        )?;
        writeln!(w, "template <int M>")?;
        let mut params = vec![
            "const float *at".to_string(),
            "const int rc".into(),
            "const int cb".into(),
            format!("const float (&w)[{wn}][4]"),
        ];
        params.extend((0..grids.len()).map(|k| format!("const float (&now{k})[4]")));
        params.extend(self.vector_params(true));
        params.push("float (&res)[4]".into());
        let head = format!(
            "static __device__ __forceinline__ void {s}_level({})",
            params.join(", ")
        );
        w.definition(head, |w| {
            self.rings_neighbours(w, sh)?;
            self.rings_cells(w, sh)
        })
    }

    /// The streamed grid's rows (offsets along `y`) and quads of columns
    /// (from the ring row's start) that a level's 4 cells read in the plane.
    fn rings_reads(&self, sh: &Rings) -> (BTreeSet<i64>, BTreeSet<i64>) {
        let rx = sh.r[2] as i64;
        let (mut ys, mut xs) = (BTreeSet::new(), BTreeSet::new());
        let streamed = self.streamed();
        self.s.expr.for_each_read(&mut |a| {
            if a.slot == streamed {
                if a.offset[1] != 0 {
                    ys.insert(a.offset[1]);
                }
                for j in 0..CELLS as i64 {
                    xs.insert((rx + j + a.offset[2]) / 4);
                }
            }
        });
        (ys, xs)
    }

    /// The in-plane neighbours a level reads from the ring: the row's
    /// columns as `xs[i]`, the other rows as quads.
    fn rings_neighbours(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let (rx, pitch) = (sh.r[2], sh.pitch);
        let (ys, xs) = self.rings_reads(sh);
        writeln!(
            w,
            "/* Neighbours along `{}` (xs[i]: column cb + i) and along `{}`, from the ring. */",
            self.st.axes[2], self.st.axes[1]
        )?;
        writeln!(w, "float xs[{}];", 2 * rx + CELLS)?;
        for &k in &xs {
            w.braces(|w| {
                writeln!(
                    w,
                    "const float4 v = *(const float4 *)&at[rc * {pitch} + cb + {}];",
                    4 * k
                )?;
                for (e, c) in ["x", "y", "z", "w"].iter().enumerate() {
                    writeln!(w, "xs[{}] = v.{c};", 4 * k + e as i64)?;
                }
                Ok(())
            })?;
        }
        for &dy in &ys {
            writeln!(
                w,
                "const float4 {} = *(const float4 *)&at[({}) * {pitch} + cb + {rx}];",
                row_name(dy),
                super::super::shifted("rc", dy)
            )?;
        }
        Ok(())
    }

    /// A level's 4 cells into `res`: the streamed grid from the window and
    /// the ring, the grids read at the cell from `now<k>`.
    fn rings_cells(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let [rz, _, rx] = sh.r;
        let wn = sh.window();
        let grids = self.cell_grids();
        let streamed = self.streamed();
        for j in 0..CELLS {
            let value = self.value(&|a: &Access| {
                let [dz, dy, dx] = [a.offset[0], a.offset[1], a.offset[2]];
                if a.slot != streamed {
                    let k = grids.iter().position(|g| g.slot == a.slot).unwrap_or(0);
                    return format!("now{k}[{j}]");
                }
                if dy != 0 {
                    format!("{}.{}", row_name(dy), ["x", "y", "z", "w"][j])
                } else if dx != 0 || dz == 0 {
                    if dz == 0 && dx == 0 {
                        format!("w[(M + {rz}) % {wn}][{j}]")
                    } else {
                        format!("xs[{}]", rx as i64 + j as i64 + dx)
                    }
                } else {
                    format!("w[(M + {}) % {wn}][{j}]", rz as i64 + dz)
                }
            });
            writeln!(w, "res[{j}] = {value};")?;
        }
        Ok(())
    }

    /// The kernel's grid pointers and run-time parameters, declared or
    /// passed: the statement's, past the extents.
    fn rings_pointers(&self, declared: bool) -> Vec<String> {
        let mut all = if declared {
            self.parameters("__restrict__", true)
        } else {
            self.argument_list()
        };
        all.split_off(self.dims())
    }

    /// `<sym>_plane<M>`: plane p of the march, p - (the march's first) = M modulo the window.
    fn rings_plane(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let s = &self.sym;
        let [rz, ry, rx] = sh.r;
        let wn = sh.window();
        let grid = slot_name(self.st, self.streamed());
        let [uy, _] = sh.copied();
        let (uslot, sslot) = (uy * sh.pitch, LANES * sh.pitch);
        let staged = sh.staged();
        let levels = sh.stored_levels();
        let mut params = vec![
            format!("{s}_unit &t"),
            "float *uring".to_string(),
            "float *sring".into(),
            "float *stage".into(),
            "const int p".into(),
            "const int z0".into(),
            "const int z1".into(),
            "const int n0".into(),
            "const size_t s0".into(),
            "const bool quads".into(),
        ];
        params.extend(self.rings_pointers(true));
        let flush_args = if sh.both { "out, out_prev" } else { "out" };
        writeln!(
            w,
            "/* Plane p of the march (p = M modulo {wn} from its start): level 1 at p - {rz}, level 2 at p - {}; ring slots and windows known at compile time. */",
            2 * rz + 1
        )?;
        writeln!(w, "template <int M>")?;
        let head = format!(
            "static __device__ __forceinline__ void {s}_plane({})",
            params.join(", ")
        );
        w.definition(head, |w| {
            writeln!(
                w,
                "/* The copy of plane p + {AHEAD} starts; the grids read at the cell load for the next plane. */"
            )?;
            writeln!(w, "const int ahead = p + {AHEAD};")?;
            writeln!(
                w,
                "{s}_copy_plane(uring + (M + {AHEAD}) % {wn} * {uslot}, {grid}, t, ahead < z1 + {} ? ahead : -1, n0, s0);",
                2 * rz
            )?;
            writeln!(w, "const int q = p - (t.first ? {rz} : {});", 2 * rz + 1)?;
            self.rings_cell_loads(w)?;
            writeln!(w, "{s}_wait<{AHEAD}>();")?;
            writeln!(w, "__syncthreads();")?;
            writeln!(
                w,
                "/* What the previous plane staged is stored; this plane stages into the other half. */"
            )?;
            writeln!(
                w,
                "{s}_flush(stage + ((p - 1) & 1) * {}, t, p - 1, z0, z1, s0, {flush_args});",
                levels * staged
            )?;
            writeln!(
                w,
                "float *const staged = stage + (p & 1) * {};",
                levels * staged
            )?;
            writeln!(
                w,
                "/* The newest plane's cells join the window: the grid at p, or level 1 at p - {}. */",
                rz + 1
            )?;
            writeln!(
                w,
                "const float4 c = t.first ? *(const float4 *)&uring[M * {uslot} + (t.rs + {ry}) * {p} + t.cs + {rx}] : *(const float4 *)&sring[(M + {rz}) % {wn} * {sslot} + t.rs * {p} + t.cs];",
                p = sh.pitch
            )?;
            for (j, c) in ["x", "y", "z", "w"].iter().enumerate() {
                writeln!(w, "t.w[(M + {}) % {wn}][{j}] = c.{c};", 2 * rz)?;
            }
            self.rings_levels(w, sh)
        })?;
        Ok(())
    }

    /// The grids read at the cell: this plane's values (`now<k>`), and the
    /// next plane's loaded into the thread's `next<k>`.
    fn rings_cell_loads(&self, w: &mut Writer) -> fmt::Result {
        let (lo0, hi0) = self.bounds(0);
        let grids = self.cell_grids();
        for (k, _) in grids.iter().enumerate() {
            writeln!(w, "float now{k}[4];")?;
            w.pragma("unroll")?;
            w.guarded(
                "for (int j = 0; j < 4; ++j)",
                format_args!("now{k}[j] = t.next{k}[j];"),
            )?;
        }
        if !grids.is_empty() {
            let head = format!("if (q + 1 >= {lo0} && q + 1 < {hi0})");
            w.block(head, |w| {
                writeln!(w, "const size_t at = (q + 1) * s0;")?;
                for (k, g) in grids.iter().enumerate() {
                    let from = if g.first == g.second {
                        g.first.clone()
                    } else {
                        format!("(t.first ? {} : {})", g.first, g.second)
                    };
                    writeln!(w, "const float *const g{k} = {from} + at + t.cell;")?;
                }
                let quads = |w: &mut Writer| {
                    writeln!(
                        w,
                        "/* Rows of whole 16-byte quads: a lane's 4 cells are one load of each grid. */"
                    )?;
                    w.block("if (t.pair[0])", |w| {
                        for k in 0..grids.len() {
                            writeln!(w, "const float4 v{k} = *(const float4 *)g{k};")?;
                            for (j, c) in ["x", "y", "z", "w"].iter().enumerate() {
                                writeln!(w, "t.next{k}[{j}] = v{k}.{c};")?;
                            }
                        }
                        Ok(())
                    })
                };
                let pairs = |w: &mut Writer| {
                    w.pragma("unroll")?;
                    writeln!(w, "for (int h = 0; h < 2; ++h)")?;
                    w.scope(|w| {
                        w.block("if (t.pair[h])", |w| {
                            for k in 0..grids.len() {
                                writeln!(
                                    w,
                                    "const float2 v{k} = *(const float2 *)(g{k} + 2 * h);"
                                )?;
                                writeln!(w, "t.next{k}[2 * h] = v{k}.x;")?;
                                writeln!(w, "t.next{k}[2 * h + 1] = v{k}.y;")?;
                            }
                            Ok(())
                        })
                    })
                };
                w.if_else("if (quads)", quads, pairs)
            })?;
        }
        Ok(())
    }

    /// Level 1 (warps of `t.first`) or level 2 of plane `q`, from the rings,
    /// into the next level's ring or the staged plane.
    fn rings_levels(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let s = &self.sym;
        let [rz, ry, rx] = sh.r;
        let wn = sh.window();
        let (lo0, hi0) = self.bounds(0);
        let grids = self.cell_grids();
        let [uy, _] = sh.copied();
        let (uslot, sslot) = (uy * sh.pitch, LANES * sh.pitch);
        let staged = sh.staged();
        writeln!(w, "float res[4];")?;
        let args = |at: &str, rc: &str, cb: &str| {
            let mut a = vec![at.to_string(), rc.to_string(), cb.to_string(), "t.w".into()];
            a.extend((0..grids.len()).map(|k| format!("now{k}")));
            a.extend(self.vector_params(false));
            a.push("res".into());
            a.join(", ")
        };
        let first = args(
            &format!("uring + (M + {}) % {wn} * {uslot}", rz + 1),
            &format!("t.rs + {ry}"),
            "t.cs",
        );
        let second = args(
            &format!("sring + M * {sslot}"),
            "t.rs",
            &format!("t.cs - {rx}"),
        );
        let tile_cell = format!("(t.rs - {ry}) * {} + t.cs - {rx}", TILE_X + 4);
        let level1 = |w: &mut Writer| {
            writeln!(
                w,
                "/* Level 1 at q, from the grid's ring; cells off the region keep their value. */"
            )?;
            w.guarded(
                format_args!("if (q < z0 - {rz} || q >= z1 + {rz})"),
                "return;",
            )?;
            writeln!(w, "const bool zin = q >= {lo0} && q < {hi0};")?;
            writeln!(w, "{s}_level<M>({first});")?;
            w.pragma("unroll")?;
            w.guarded(
                "for (int j = 0; j < 4; ++j)",
                format_args!(
                    "res[j] = zin && t.in[j] ? res[j] : t.grid[j] ? t.w[(M + {rz}) % {wn}][j] : 0.0f;"
                ),
            )?;
            writeln!(
                w,
                "*(float4 *)&sring[(M + {}) % {wn} * {sslot} + t.rs * {} + t.cs] = float4{{res[0], res[1], res[2], res[3]}};",
                rz + 1,
                sh.pitch
            )?;
            if sh.both {
                let store = format!(
                    "*(float4 *)&staged[{staged} + {tile_cell}] = float4{{res[0], res[1], res[2], res[3]}};"
                );
                w.guarded("if (t.own)", store)?;
            }
            Ok(())
        };
        let level2 = |w: &mut Writer| {
            writeln!(
                w,
                "/* Level 2 at q, from level 1's ring: the tile's own cells. */"
            )?;
            w.guarded("if (q < z0 || q >= z1)", "return;")?;
            writeln!(w, "{s}_level<M>({second});")?;
            writeln!(
                w,
                "*(float4 *)&staged[{tile_cell}] = float4{{res[0], res[1], res[2], res[3]}};"
            )
        };
        w.if_else("if (t.first)", level1, level2)
    }

    /// The ring kernel: each thread's place, its plan, the march.
    fn rings_main(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let wn = sh.window();
        let [uy, _] = sh.copied();
        let (uslot, sslot) = (uy * sh.pitch, LANES * sh.pitch);
        let mut params = vec![
            "const int n0".to_string(),
            "const int n1".into(),
            "const int n2".into(),
        ];
        params.extend(self.rings_pointers(true));
        params.push("const int chunk".into());
        params.push("const bool quads".into());
        let head = format!(
            "static __global__ void __launch_bounds__({}, 1) {}({})",
            sh.threads(),
            self.kernel_name(),
            params.join(", ")
        );
        w.definition(head, |w| {
            writeln!(
                w,
                "/* Shared memory: the grid's ring ({wn} planes of {uy} rows), level 1's ({wn} of {LANES}), rows of {} floats; the staged planes. */",
                sh.pitch
            )?;
            writeln!(w, "extern __shared__ __align__(16) unsigned char shared[];")?;
            writeln!(w, "float *const uring = (float *)shared;")?;
            writeln!(w, "float *const sring = uring + {};", wn * uslot)?;
            writeln!(w, "float *const stage = sring + {};", wn * sslot)?;
            writeln!(
                w,
                "const int warp = (int)stencil_thread_x() / 32, lane = (int)stencil_thread_x() % 32;"
            )?;
            self.rings_place(w, sh)?;
            self.rings_march(w, sh)
        })
    }

    /// A thread's place: its block's tile, its level, row and columns, and
    /// which of its cells are on the grid and in the region.
    fn rings_place(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let s = &self.sym;
        let [_, ry, rx] = sh.r;
        let (lo1, lo2) = (self.bounds(1).0, self.bounds(2).0);
        writeln!(
            w,
            "/* This block's tile: {TILE_X} x {} cells of (`{}`, `{}`) from (oy, ox). */",
            sh.ty, self.st.axes[2], self.st.axes[1]
        )?;
        writeln!(
            w,
            "const int oy = {lo1} + (int)blockIdx.y * {}, ox = {lo2} + (int)blockIdx.x * {TILE_X};",
            sh.ty
        )?;
        writeln!(w, "{s}_unit t;")?;
        writeln!(w, "t.first = warp < {}; /* warp-uniform */", sh.w1)?;
        self.rings_lanes(w, sh)?;
        writeln!(w, "const int gy = oy - {ry} + t.rs, gx = ox - {rx} + t.cs;")?;
        writeln!(
            w,
            "t.own = t.rs >= {ry} && t.rs < {} && t.cs >= {rx} && t.cs < {};",
            ry + sh.ty,
            rx + TILE_X
        )?;
        self.rings_flags(w, sh)?;
        writeln!(w, "t.pair[0] = t.grid[0];")?;
        writeln!(w, "t.pair[1] = t.grid[2];")?;
        writeln!(w, "t.cell = gy * n2 + gx;")?;
        writeln!(w, "{s}_plan(t, n1, n2, oy, ox);")?;
        Ok(())
    }

    /// A lane's row and first column of the tile (`t.rs`, `t.cs`), in
    /// level 1's warps or level 2's.
    fn rings_lanes(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let [_, ry, rx] = sh.r;
        // A quarter warp takes 8 rows of one column group, so that its
        // 16-byte shared loads hit distinct banks (the pitch is 4 modulo 8).
        // Where the grids read at the cell load in 8-byte pairs, a warp takes
        // 4 neighbouring groups of the same 8 rows: its two loads of a grid
        // touch 8 rows, not 32 (acoustic25 f32 on 750-cell rows: 1.09x on
        // the H200). Where they load
        // 16-byte quads, a lane takes a row and the quarters' groups 3 apart,
        // spread over L1's banks (that ran 1.03x-1.12x the other on rows of
        // whole quads: 768 and 744 cells, 512^3 and 400^3, the same session).
        // Level 2's groups are a permutation of each row's because `ty` is
        // a multiple of 8.
        debug_assert_eq!(sh.ty % 8, 0);
        let (g1, g2) = (sh.w1, TILE_X / CELLS);
        writeln!(
            w,
            "/* A lane's row and first column; a quarter warp takes 8 rows of one column group (its 16-byte shared loads hit distinct banks). Pairs: a warp takes 4 neighbouring groups of 8 rows. Quads: a lane a row, the quarters' groups 3 apart. */"
        )?;
        let level1 = |w: &mut Writer| {
            writeln!(w, "const int k = 4 * warp + lane / 8;")?;
            writeln!(w, "t.rs = quads ? lane : 8 * (k / {g1}) + lane % 8;")?;
            writeln!(
                w,
                "t.cs = 4 * (quads ? (warp + 3 * (lane / 8)) % {g1} : k % {g1});"
            )
        };
        let level2 = |w: &mut Writer| {
            let ty = sh.ty;
            writeln!(
                w,
                "const int u = (warp - {}) * 32 + lane, k = u / 8;",
                sh.w1
            )?;
            writeln!(
                w,
                "t.rs = {ry} + (quads ? u % {ty} : 8 * (k / {g2}) + lane % 8);"
            )?;
            writeln!(
                w,
                "t.cs = {rx} + 4 * (quads ? (u / {ty} + 3 * (u % {ty} / 8)) % {g2} : k % {g2});"
            )
        };
        w.if_else("if (t.first)", level1, level2)
    }

    /// Which of a lane's 4 cells lie on the grid and in the region, and
    /// its values and window zeroed.
    fn rings_flags(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let wn = sh.window();
        let ((lo1, hi1), (lo2, hi2)) = (self.bounds(1), self.bounds(2));
        w.pragma("unroll")?;
        w.block("for (int j = 0; j < 4; ++j)", |w| {
            writeln!(
                w,
                "t.grid[j] = gy >= 0 && gy < n1 && gx + j >= 0 && gx + j < n2;"
            )?;
            writeln!(
                w,
                "t.in[j] = gy >= {lo1} && gy < {hi1} && gx + j >= {lo2} && gx + j < {hi2};"
            )?;
            for k in 0..self.cell_grids().len() {
                writeln!(w, "t.next{k}[j] = 0.0f;")?;
            }
            w.pragma("unroll")?;
            w.guarded(
                format_args!("for (int m = 0; m < {wn}; ++m)"),
                "t.w[m][j] = 0.0f;",
            )
        })
    }

    /// The march of a block through its chunk: planes copied `AHEAD` ahead,
    /// the plane function unrolled by the window's planes, the last staged
    /// plane stored.
    fn rings_march(&self, w: &mut Writer, sh: &Rings) -> fmt::Result {
        let s = &self.sym;
        let rz = sh.r[0];
        let wn = sh.window();
        let [uy, _] = sh.copied();
        let uslot = uy * sh.pitch;
        let (lo0, hi0) = self.bounds(0);
        let grid = slot_name(self.st, self.streamed());
        writeln!(w, "const int z0 = {lo0} + (int)blockIdx.z * chunk;")?;
        writeln!(w, "const int z1 = z0 + chunk < {hi0} ? z0 + chunk : {hi0};")?;
        writeln!(w, "const size_t s0 = (size_t)n1 * n2;")?;
        writeln!(
            w,
            "/* The march: plane p of the grid is copied {AHEAD} planes ahead; level 2 finishes plane z1 - 1 at p = z1 + {}. */",
            2 * rz
        )?;
        writeln!(
            w,
            "const int first = z0 - {}, last = z1 + {};",
            2 * rz,
            2 * rz
        )?;
        w.pragma("unroll")?;
        w.guarded(
            format_args!("for (int i = 0; i < {AHEAD}; ++i)"),
            format_args!("{s}_copy_plane(uring + i * {uslot}, {grid}, t, first + i, n0, s0);"),
        )?;
        let mut args = vec![
            "t".to_string(),
            "uring".into(),
            "sring".into(),
            "stage".into(),
            "p0 + PHASE".into(),
            "z0".into(),
            "z1".into(),
            "n0".into(),
            "s0".into(),
            "quads".into(),
        ];
        args.extend(self.rings_pointers(false));
        let args = args.join(", ");
        writeln!(w, "/* Unrolled by the {wn} planes of a window. */")?;
        let head = format!("for (int p0 = first; p0 <= last; p0 += {wn})");
        w.block(head, |w| {
            for m in 0..wn {
                w.guarded(format_args!("if (p0 + {m} > last)"), "break;")?;
                writeln!(
                    w,
                    "{s}_plane<{m}>({});",
                    args.replace("PHASE", &m.to_string())
                )?;
            }
            Ok(())
        })?;
        writeln!(w, "__syncthreads();")?;
        let flush_args = if sh.both { "out, out_prev" } else { "out" };
        writeln!(
            w,
            "{s}_flush(stage + (last & 1) * {}, t, last, z0, z1, s0, {flush_args});",
            sh.stored_levels() * sh.staged()
        )
    }
}

/// The name of the 16-byte vector of the row `dy` from a lane's own.
fn row_name(dy: i64) -> String {
    if dy < 0 {
        format!("y_m{}", -dy)
    } else {
        format!("y_p{dy}")
    }
}

#[cfg(test)]
mod tests;
