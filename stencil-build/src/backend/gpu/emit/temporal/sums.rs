//! 3-D `temporal` for weighted sums of radius 1 (the boxes: j3d17pt,
//! j3d27pt, poisson), in two columns a thread ("z sums").
//!
//! The tile, the chunk and the overlap are those of [`super::planes`]; what
//! changes is how a level reads the level below:
//!
//! - each thread owns `vector` (2) columns of `coarsen` rows. Its columns
//!   are neighbours on the grid, but the rings hold each row as halves, the
//!   threads' first columns and then their second ones, so that a warp reads
//!   a neighbouring column as consecutive words, without bank conflicts;
//! - a level loads each plane of the level below once, the neighbours its
//!   cells need from the ring and its own cells from registers, and adds it
//!   into the three planes it feeds: it completes the sum of the plane
//!   before, adds to the plane's own and starts the plane after's. The
//!   update is the statement's weighted sum ([`crate::ir::weighted_sum`]:
//!   divisors folded into the weights), accumulated with fused
//!   multiply-adds plane by plane;
//! - so a level needs only the plane below it in shared memory: two ring
//!   slots a level, one barrier per plane. Level `s` works two planes behind
//!   level `s - 1` (`q = p - 2 s + 1` at iteration `p`), on the plane that
//!   level finished in the iteration before;
//! - the loop is unrolled by 6 (2 ring slots by 3 sums), so that every slot
//!   and register is static.
//!
//! It takes f32 stencils of one field that update it with a weighted sum
//! of its own cells within one cell along every axis, one plane and more
//! along the slowest. By default the boxes run it (those that read
//! in-plane neighbours in more than one plane); the stars of radius 1 fuse
//! faster in [`super::vectors`] or [`super::planes`].
//!
//! On the H200 a hand-written kernel of this design (2 steps, 32 x 8 threads
//! of 2 columns and 4 rows, tiles of 64 x 32 cells) ran j3d17pt, j3d27pt and
//! poisson on 512^3 at 1.01x, 1.03x and 1.10x `stream` in 16-byte vectors,
//! the best single step, and 1.09x, 1.08x and 1.16x the kernel of
//! [`super::planes`].

use std::fmt::{self, Write as _};

use super::super::{Gen, Plan};
use crate::backend::gpu::plan::temporal::planes::Planes;
use crate::backend::gpu::plan::temporal::sums::{COLUMNS, plan_runs};
use crate::backend::{CExpr, Writer};
use crate::codegen::expr;
use crate::ir::{Expr, Stencil};

/// Iterations of the plane loop in one pass of its unrolled body: the ring
/// slots (2) times the sums (3), so that both come round to the same place.
const UNROLL: usize = 6;

/// What the strategy adds to the blocks in the file's header.
pub fn detail(plan: &Plan, st: &Stencil) -> String {
    format!(
        ", {COLUMNS} columns of `{}` and {} rows of `{}` per thread, {} steps fused; \
         each level loads a plane of the level below once and adds it into the 3 planes it feeds",
        st.axes[2], plan.coarsen, st.axes[1], plan.time_block
    )
}

/// A level's terms, each weight with the offset it reads: those of the plane
/// `dz` below the sum they feed.
struct Terms {
    /// `(dz, dy, dx, weight)`, ordered by offset.
    by_offset: Vec<(i64, i64, i64, String)>,
    /// The constant added to the sum, if any.
    constant: Option<String>,
}

impl Gen<'_> {
    /// Whether this kernel fuses in z sums (see the module documentation).
    pub(in crate::backend::gpu) fn sums(&self) -> bool {
        plan_runs(self.plan, self.st) && self.vector == COLUMNS
    }

    /// The weighted sum's terms, their weights in C.
    fn sums_terms(&self) -> Terms {
        let (terms, constant) =
            crate::ir::weighted_sum(&self.s.expr).expect("a weighted sum: checked by `suits`");
        let spell = |e: &Expr| {
            expr::print(
                e,
                &CExpr {
                    st: self.st,
                    gpu: true,
                    read: &|_| String::new(),
                },
            )
        };
        let mut by_offset: Vec<(i64, i64, i64, String)> = terms
            .iter()
            .map(|(a, c)| (a.offset[0], a.offset[1], a.offset[2], spell(c)))
            .collect();
        by_offset.sort_by_key(|&(dz, dy, dx, _)| (dz, dy, dx));
        Terms {
            by_offset,
            constant: constant.as_ref().map(spell),
        }
    }

    /// The body of a z-sums kernel.
    pub(in crate::backend::gpu) fn sums_kernel(&self, w: &mut Writer) -> fmt::Result {
        let sh = self.planes_shape();
        self.planes_tile(w, &sh)?;
        self.sums_masks(w, &sh)?;
        self.ring_place(w)?;
        self.planes_rings(w, &sh)?;
        let (t, c, v) = (sh.t, sh.c, sh.v);
        let ty = self.st.dtype.c();
        writeln!(
            w,
            "/* sum[s - 1][m]: level s's sums of the thread's cells at the planes p0 + m modulo 3 (p0: the first plane). */"
        )?;
        writeln!(w, "{ty} sum[{t}][3][{c}][{v}] = {{}};")?;
        writeln!(
            w,
            "/* own0[m]: level 0's cells at the planes p0 + m modulo 2. */"
        )?;
        writeln!(w, "{ty} own0[2][{c}][{v}] = {{}};")?;
        if t > 1 {
            writeln!(
                w,
                "/* own[s - 1][m]: level s's at the planes p0 + m modulo 3 (the last level's are stored). */"
            )?;
            writeln!(w, "{ty} own[{}][3][{c}][{v}] = {{}};", t - 1)?;
        }
        writeln!(
            w,
            "/* ahead: the thread's cells of the plane the next iteration starts from. */"
        )?;
        writeln!(w, "{ty} ahead[{c}][{v}];")?;
        let ix = self.index();
        writeln!(w, "{ix} p = z0 - {t};")?;
        writeln!(
            w,
            "const {ix} end = z1 + {}; /* the last level finishes plane z1 - 1 at p = end - 1 */",
            2 * t - 1
        )?;
        self.sums_load(w, &sh, "p")?;
        w.block("for (;;)", |w| {
            writeln!(
                w,
                "/* Iteration p = p0 + 6 k + i: ring slot i % 2, sum i % 3, unrolled so that both are static. */"
            )?;
            w.pragma("unroll")?;
            w.block(format_args!("for (int i = 0; i < {UNROLL}; ++i)"), |w| {
                self.sums_iteration(w, &sh)?;
                w.guarded("if (++p == end)", "break;")?;
                Ok(())
            })?;
            w.guarded("if (p == end)", "break;")?;
            Ok(())
        })?;
        Ok(())
    }

    /// `in_cells`, `own_cells`: bit `j * vector + k` for the thread's cell
    /// in row `j`, column `k`, in the statement's region (updated) and in the
    /// tile's own part (stored); `cell_at`: its offset in a plane, clamped to
    /// the grid (cells off it are read only by cells outside the region).
    fn sums_masks(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        let [rows, cols] = sh.tile();
        let (lo1, hi1) = self.bounds(1);
        let (lo2, hi2) = self.bounds(2);
        let (t, c, v, ix) = (sh.t, sh.c, sh.v, self.index());
        writeln!(
            w,
            "/* Bit j * {v} + k: the cell of row j and column k, in the region (in_cells) and the tile's own part (own_cells). */"
        )?;
        writeln!(w, "unsigned in_cells = 0, own_cells = 0;")?;
        writeln!(
            w,
            "{ix} cell_at[{c}][{v}]; /* the cell's offset in a plane, clamped to the grid */"
        )?;
        w.pragma("unroll")?;
        w.block(format_args!("for (int k = 0; k < {v}; ++k)"), |w| {
            writeln!(w, "const {ix} x = i2 + k;")?;
            writeln!(w, "const bool in_x = x >= {lo2} && x < {hi2};")?;
            writeln!(
                w,
                "const bool own_x = in_x && threadIdx.x * {v} + k >= {t} && threadIdx.x * {v} + k < {};",
                cols - t
            )?;
            writeln!(w, "const {ix} at_x = x < 0 ? 0 : x < n2 ? x : n2 - 1;")?;
            w.pragma("unroll")?;
            w.block(format_args!("for (int j = 0; j < {c}; ++j)"), |w| {
                writeln!(w, "const {ix} y = i1 + j;")?;
                writeln!(w, "const bool in_y = y >= {lo1} && y < {hi1};")?;
                writeln!(
                    w,
                    "const bool own_y = threadIdx.y * {c} + j >= {t} && threadIdx.y * {c} + j < {};",
                    rows - t
                )?;
                writeln!(w, "in_cells |= (unsigned)(in_x && in_y) << (j * {v} + k);")?;
                writeln!(
                    w,
                    "own_cells |= (unsigned)(own_x && in_y && own_y) << (j * {v} + k);"
                )?;
                writeln!(
                    w,
                    "cell_at[j][k] = (y < 0 ? 0 : y < n1 ? y : n1 - 1) * s1 + at_x;"
                )
            })?;
            Ok(())
        })?;
        Ok(())
    }

    /// `ahead`: the thread's cells of plane `plane` of the launch's grid, clamped to it.
    fn sums_load(&self, w: &mut Writer, sh: &Planes, plane: &str) -> fmt::Result {
        let name = crate::codegen::names::slot_name(self.st, self.streamed());
        let ix = self.index();
        w.braces(|w| {
            writeln!(w, "const {ix} z = {plane};")?;
            writeln!(
                w,
                "const {ix} plane_at = (z < 0 ? 0 : z < n0 ? z : n0 - 1) * s0;"
            )?;
            self.sums_cells(
                w,
                sh,
                &format!("ahead[j][k] = {name}[plane_at + cell_at[j][k]];"),
            )
        })?;
        Ok(())
    }

    /// `statement` for each cell of the thread (`j`, `k`).
    fn sums_cells(&self, w: &mut Writer, sh: &Planes, statement: &str) -> fmt::Result {
        w.pragma("unroll")?;
        w.block(format_args!("for (int j = 0; j < {}; ++j)", sh.c), |w| {
            w.pragma("unroll")?;
            w.guarded(
                format_args!("for (int k = 0; k < {}; ++k)", sh.v),
                format_args!("{statement}"),
            )
        })?;
        Ok(())
    }

    /// One iteration of the plane loop: level 0's plane `p` to its ring,
    /// then every level from the last down.
    fn sums_iteration(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        writeln!(
            w,
            "/* Level 0: plane p, loaded in the iteration before, to its ring; plane p + 1 loads while this one computes. */"
        )?;
        self.sums_cells(w, sh, "own0[i % 2][j][k] = ahead[j][k];")?;
        self.sums_load(w, sh, "p + 1")?;
        self.sums_cells(
            w,
            sh,
            &format!("{} = own0[i % 2][j][k];", ring_cell(sh, 0, "i % 2")),
        )?;
        writeln!(w, "__syncthreads();")?;
        let terms = self.sums_terms();
        for s in (1..=sh.t).rev() {
            self.sums_level(w, sh, &terms, s)?;
        }
        Ok(())
    }

    /// Level `s` at iteration `p`: it reads level `s - 1`'s plane `p - 2 (s - 1)`
    /// and finishes its plane `q = p - 2 s + 1`.
    fn sums_level(&self, w: &mut Writer, sh: &Planes, terms: &Terms, s: usize) -> fmt::Result {
        let (t, c, v) = (sh.t, sh.c, sh.v);
        let ty = self.st.dtype.c();
        let (lo0, hi0) = self.bounds(0);
        // Offsets from i, modulo 3, of level s's sums and of level s - 1's cells
        // at planes q (finished), q + 1 (the plane read) and q + 2.
        let m3 = |d: i64| (d - 2 * s as i64).rem_euclid(3);
        let [done, mid, new] = [m3(1), m3(2), m3(3)];
        let (below, old) = if s == 1 {
            ("own0[i % 2]".to_string(), "own0[(i + 1) % 2]".to_string())
        } else {
            (
                format!("own[{}][(i + {}) % 3]", s - 2, m3(2)),
                format!("own[{}][(i + {}) % 3]", s - 2, m3(1)),
            )
        };
        writeln!(
            w,
            "/* Level {s}: level {}'s plane {} into the sums of planes q = p - {} (finished), q + 1 and q + 2 (started). */",
            s - 1,
            super::super::shifted("p", -2 * (s as i64 - 1)),
            2 * s - 1
        )?;
        w.braces(|w| {
            writeln!(w, "const {} q = p - {};", self.index(), 2 * s - 1)?;
            writeln!(
                w,
                "const bool step = {s} <= levels && q >= {lo0} && q < {hi0};"
            )?;
            writeln!(w, "{ty} next[{c}][{v}];")?;
            self.sums_accumulate(w, sh, terms, s, [done, mid, new], [&below, &old])?;
            if s == t {
                writeln!(
                    w,
                    "/* The last level: stored where it is this block's and this tile's own. */"
                )?;
                w.block("if (q >= z0 && q < z1)", |w| {
                    self.sums_cells(
                        w,
                        sh,
                        &format!(
                            "if (own_cells >> (j * {v} + k) & 1u) out[q * s0 + (i1 + j) * s1 + i2 + k] = next[j][k];"
                        ),
                    )
                })?;
            } else {
                writeln!(
                    w,
                    "/* Plane q for level {}: in registers, and in the ring its next iteration reads. */",
                    s + 1
                )?;
                self.sums_cells(
                    w,
                    sh,
                    &format!(
                        "{} = own[{}][(i + {}) % 3][j][k] = next[j][k];",
                        ring_cell(sh, s, "(i + 1) % 2"),
                        s - 1,
                        m3(1)
                    ),
                )?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Level `s - 1`'s plane (`below`) into level `s`'s sums of the planes
    /// `sums` (finished, middle, started, as offsets modulo 3), and the
    /// finished one into `next`, where the cell steps (else its value before
    /// the step, `old`).
    fn sums_accumulate(
        &self,
        w: &mut Writer,
        sh: &Planes,
        terms: &Terms,
        s: usize,
        [done, mid, new]: [i64; 3],
        [below, old]: [&str; 2],
    ) -> fmt::Result {
        let (c, v) = (sh.c, sh.v);
        w.pragma("unroll")?;
        w.block(format_args!("for (int j = 0; j < {c}; ++j)"), |w| {
            w.pragma("unroll")?;
            w.block(format_args!("for (int k = 0; k < {v}; ++k)"), |w| {
                let sum = |m: i64| format!("sum[{}][(i + {m}) % 3][j][k]", s - 1);
                for (dz, target, first) in [(1, done, false), (0, mid, false), (-1, new, true)] {
                    let plane_terms: Vec<_> = terms.by_offset.iter().filter(|x| x.0 == dz).collect();
                    let target = sum(target);
                    if first && plane_terms.is_empty() {
                        writeln!(w, "{target} = 0;")?;
                    }
                    for (n, (_, dy, dx, weight)) in plane_terms.iter().enumerate() {
                        let read = neighbour(sh, s, *dy, *dx, below);
                        if first && n == 0 {
                            writeln!(w, "{target} = {weight} * {read};")?;
                        } else {
                            writeln!(w, "{target} = fmaf({weight}, {read}, {target});")?;
                        }
                    }
                    if dz == 1 {
                        let value = match &terms.constant {
                            Some(k) => format!("{target} + {k}"),
                            None => target,
                        };
                        writeln!(
                            w,
                            "next[j][k] = step && (in_cells >> (j * {v} + k) & 1u) ? {value} : {old}[j][k];"
                        )?;
                    }
                }
                Ok(())
            })?;
            Ok(())
        })
    }
}

/// The thread's cell of row `j`, column `k` in level `level`'s ring slot `slot`.
fn ring_cell(sh: &Planes, level: usize, slot: &str) -> String {
    format!(
        "ring[{level}][{slot}][ty * {} + j + 1][k * {} + tx + 1]",
        sh.c,
        sh.bx + 2
    )
}

/// Level `s - 1`'s cell `dy` rows and `dx` columns from the thread's cell
/// (`j`, `k`) in the plane level `s` reads: from `below`, the thread's
/// registers, where that cell is the thread's own, else from the ring.
fn neighbour(sh: &Planes, s: usize, dy: i64, dx: i64, below: &str) -> String {
    let (c, v, half) = (sh.c as i64, sh.v as i64, sh.bx + 2);
    let row = super::super::shifted(&format!("ty * {c} + j"), 1 + dy);
    // Column k + dx: the thread's own, or a neighbouring thread's last (dx < 0) or first (dx > 0).
    let col = match dx {
        0 => format!("k * {half} + tx + 1"),
        -1 => format!(
            "(k == 0 ? {} + tx : (k - 1) * {half} + tx + 1)",
            (v - 1) * half as i64
        ),
        _ => format!("(k == {} ? tx + 2 : (k + 1) * {half} + tx + 1)", v - 1),
    };
    let ring = format!("ring[{}][i % 2][{row}][{col}]", s - 1);
    let mut own = Vec::new();
    match dy {
        d if d < 0 => own.push(format!("j >= {}", -d)),
        d if d > 0 => own.push(format!("j < {}", c - d)),
        _ => {}
    }
    match dx {
        d if d < 0 => own.push(format!("k >= {}", -d)),
        d if d > 0 => own.push(format!("k < {}", v - d)),
        _ => {}
    }
    let mine = format!(
        "{below}[{}][{}]",
        super::super::shifted("j", dy),
        super::super::shifted("k", dx)
    );
    if own.is_empty() {
        mine
    } else {
        format!("({} ? {mine} : {ring})", own.join(" && "))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cuda, stencil};
    use crate::backend::gpu::plan::temporal::sums::{suits, unsuited};
    use crate::backend::gpu::{CUDA, HIP, resolve};

    const BOX: &str = "sum(a, -1, 1, sum(b, -1, 1, sum(c, -1, 1, u[a,b,c])))";

    #[test]
    fn boxes_default_to_two_columns_that_load_each_plane_once() {
        let st = stencil(
            "\"z\", \"y\", \"x\"",
            "(u[-1,0,0] + 2*u[0,-1,1] + u[1,1,0])/4 + 1",
            "",
        );
        let plan = resolve(&st.tiling.cuda, &st, &CUDA).expect("a plan");
        assert_eq!((plan.vector, plan.coarsen, plan.time_block), (2, 4, 2));
        assert_eq!(plan.block, [1, 8, 32]);
        let code = cuda(&st).unwrap();
        for line in [
            "2 columns of `x` and 4 rows of `y` per thread, 2 steps fused; each level loads a plane of the level below once",
            "__launch_bounds__(256, 2) p_cuda__s__update_u_kernel",
            "const int i2 = 1 + (int)blockIdx.x * 60 - 2 + threadIdx.x * 2;",
            "const int i1 = 1 + (int)blockIdx.y * 28 - 2 + threadIdx.y * 4;",
            "float (*const ring)[2][34][68] = (float (*)[2][34][68])shared;",
            "for (int i = 0; i < 6; ++i) {",
            // Level 2 finishes plane p - 3 with level 1's plane p - 2: a row down is the thread's own but in its last row.
            "sum[1][(i + 0) % 3][j][k] = fmaf(0.25f, (j < 3 ? own[0][(i + 1) % 3][j + 1][k] : ring[1][i % 2][ty * 4 + j + 2][k * 34 + tx + 1]), sum[1][(i + 0) % 3][j][k]);",
            "next[j][k] = step && (in_cells >> (j * 2 + k) & 1u) ? sum[1][(i + 0) % 3][j][k] + 1.0f : own[0][(i + 0) % 3][j][k];",
            // The neighbour a row up and a column right: the thread's own, or the ring (the next thread's first column).
            "(j >= 1 && k < 1 ? own0[i % 2][j - 1][k + 1] : ring[0][i % 2][ty * 4 + j][(k == 1 ? tx + 2 : (k + 1) * 34 + tx + 1)])",
            // Level 1 starts plane p + 1 with the weight of its read a plane down.
            "sum[0][(i + 1) % 3][j][k] = 0.25f * own0[i % 2][j][k];",
            "ring[1][(i + 1) % 2][ty * 4 + j + 1][k * 34 + tx + 1] = own[0][(i + 2) % 3][j][k] = next[j][k];",
            "if (own_cells >> (j * 2 + k) & 1u) out[q * s0 + (i1 + j) * s1 + i2 + k] = next[j][k];",
        ] {
            assert!(code.contains(line), "{line}: {code}");
        }
        // HIP runs the same kernel, with launch bounds of its threads only.
        let hip = super::super::tests::generate(&st, &HIP).unwrap();
        assert!(
            hip.contains("__launch_bounds__(256) p_hip__s__update_u_kernel"),
            "{hip}"
        );
        assert!(hip.contains("for (int i = 0; i < 6; ++i) {"), "{hip}");
    }

    #[test]
    fn three_steps_keep_two_levels_of_cells_and_stars_keep_one_column() {
        let st = stencil("\"z\", \"y\", \"x\"", BOX, "time_block = 3\n");
        let code = cuda(&st).unwrap();
        for line in [
            "float sum[3][3][4][2] = {};",
            "float own[2][3][4][2] = {};",
            "const int end = z1 + 5;",
            "const bool step = 3 <= levels && q >= 1 && q < n0 - 1;",
            "/* Level 3: level 2's plane p - 4 into the sums of planes q = p - 5 (finished), q + 1 and q + 2 (started). */",
        ] {
            assert!(code.contains(line), "{line}: {code}");
        }
        let star = stencil(
            "\"z\", \"y\", \"x\"",
            "u[-1,0,0] + u[0,-1,0] + u[0,0,1] + u[1,0,0]",
            "",
        );
        assert!(suits(&star));
        let plan = resolve(&star.tiling.cuda, &star, &CUDA).expect("a plan");
        assert_eq!(plan.vector, 1, "stars keep the kernel of one column");
        let two = stencil(
            "\"z\", \"y\", \"x\"",
            "u[-1,0,0] + u[0,-1,0] + u[0,0,1] + u[1,0,0]",
            "vector = 2\n",
        );
        assert!(
            cuda(&two)
                .unwrap()
                .contains("for (int i = 0; i < 6; ++i) {")
        );
    }

    #[test]
    fn what_z_sums_cannot_take_says_why() {
        let reason = |expr: &str, dtype: Option<crate::ir::Dtype>| {
            let mut st = stencil("\"z\", \"y\", \"x\"", expr, "");
            if let Some(d) = dtype {
                st.dtype = d;
            }
            unsuited(&st).unwrap_or_default()
        };
        assert!(reason(BOX, Some(crate::ir::Dtype::F64)).contains("f32 cells"));
        assert!(reason("u[1,0,0]*u[-1,0,0]", None).contains("weighted sum"));
        assert!(reason("u[1,0,0] + k[0,0,0]", None).contains("only the field it updates"));
        assert!(reason("u[1,0,0] + u[0,0,2]", None).contains("at most one"));
        assert!(reason("u[0,1,0] + u[0,0,1]", None).contains("one cell along the slowest axis"));
        assert_eq!(reason(BOX, None), "");
        // An f64 box asking for 2 columns hears why neither kernel takes it.
        let mut f64_box = stencil("\"z\", \"y\", \"x\"", BOX, "vector = 2\n");
        f64_box.dtype = crate::ir::Dtype::F64;
        let err = super::super::tests::generate(&f64_box, &CUDA).unwrap_err();
        assert!(err.contains("or, in z sums of 2 columns, for weighted sums of radius 1: it holds 2 columns of f32 cells"), "{err}");
        assert!(suits(&stencil("\"z\", \"y\", \"x\"", BOX, "")));
    }
}
