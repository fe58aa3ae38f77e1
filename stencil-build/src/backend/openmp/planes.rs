//! Single steps that march the slowest axis of a 3-D grid (`[tiling.openmp]
//! block = [<whole axis>, rows, cells]`): threads take bands of up to
//! `rows` rows by `cells` cells as they finish one and walk each along the
//! slowest axis, copying the planes its reads reach into a ring of their
//! own, then computing [`PLANES_A_PASS`] planes of the band at a time from
//! that ring.
//!
//! Why a ring: where a plane's extent is a power of two (512 x 512 f64 is 2
//! MiB), the planes a cell reads sit a multiple of every cache's set stride
//! apart, so that the 9 planes of a radius-4 star share the same sets of L1,
//! L2 and L3, more than their ways, and each read past the first misses: a
//! 2-core EPYC ran star3d25 f64 on 512^3 at 0.29 GCells/s in cache blocks,
//! on 500^3 at 0.64-0.75. The ring's planes are contiguous, its rows an odd
//! number of cache lines (so that rows read together fall in different
//! sets), and they stay in the thread's caches while the band walks: bands
//! of 32 rows ran 0.71-0.76 on 512^3 (docs/design-notes.md, "Planes a power
//! of two apart").
//!
//! A pass shares most of its reads among its planes' cells. Each shared
//! value is loaded once into a local; where they outnumber the registers,
//! the pass's sums accumulate term by term in the order of their reads, so
//! that each value dies soon after its load ([`SHARED_IN_REGISTERS`]).
//!
//! Where planes are a multiple of 4 KiB apart, the slots read at other
//! planes than the cell's go through the ring, and slots read only in the
//! cell's plane are read from the grid. Elsewhere, or where a thread's ring
//! cannot be allocated, it reads every slot from the grid (the same loops).

use std::fmt::{self, Write as _};

use super::{Writer, c_expr, c_value, plain_read};
use crate::codegen::names::{offset_part, slot_name};
use crate::ir::{Access, Expr, Op, Slot, Statement, Stencil, WHOLE_AXIS};

/// Bands a thread at least (where a grid has the rows): handed out as
/// threads finish one, so that a slower thread takes fewer. On the GPU
/// machine's 16 cores, 512^3, bands of 8 rows handed out ran acoustic25
/// 1.0x-1.5x as fast as one band of 32 rows a thread in a static share (design
/// notes, "Bands handed out").
const BANDS_PER_THREAD: usize = 4;

/// Planes of the slowest axis a band computes in one pass: each row of the
/// planes their reads reach is loaded once for all of them, where a plane a
/// pass loads a row of a radius-`r` star's column `2r + 1` times. On the
/// GPU machine's 16 cores, a C driver timing the generated kernels in turn
/// in one process (design notes, "Planes a pass through the ring") ran 4
/// a pass through the ring on 512^3 1.10x (f32) and 1.18x (f64) as fast
/// as a plane a pass for star3d25, 1.12x for acoustic25, and 1.11x as
/// fast as 2 a pass in f32 from the grid (500^3). On 2 cores, 2 a pass
/// through the ring ran f32 0.78x, and 8 0.97x (f32) and 1.02x (f64) of 4.
pub(super) const PLANES_A_PASS: usize = 4;

/// The most values a pass's cells share that it loads up front, each into a
/// local of its own, before its sums: AVX-512's vector registers. Past it
/// (a 9 x 9 x 9 box shares 972 values across 4 planes), the compiler kept
/// them all live through the sums, in spills (7003 stack accesses beside
/// 3640 multiply-adds in the kernel's AVX-512 code, its pass of 4 planes and
/// its plane a pass), and the pass accumulates its sums term by term in the
/// order of their reads instead.
const SHARED_IN_REGISTERS: usize = 32;

/// Whether statement `s` of `st` marches the slowest axis: 3-D, with a
/// block that spans it, reading some slot at another plane than the cell's
/// (a statement that reads only in-plane has no planes to keep, and its
/// blocks of whole planes walk the axis as they are).
pub fn marches(st: &Stencil, s: &Statement) -> bool {
    st.dims() == 3 && st.tiling.openmp.block[0] == WHOLE_AXIS && !Reach::of(s).slots.is_empty()
}

/// The reach of a statement's ring: per axis, how far its reads go below
/// and above the cell, over every slot it reads at another plane.
struct Reach {
    /// The slots read at another plane than the cell's.
    slots: Vec<Slot>,
    /// `[below, above]` per axis.
    sides: [[usize; 2]; 3],
}

impl Reach {
    fn of(s: &Statement) -> Self {
        let mut slots = Vec::new();
        s.expr.for_each_read(&mut |a: &Access| {
            if a.offset[0] != 0 && !slots.contains(&a.slot) {
                slots.push(a.slot);
            }
        });
        slots.sort();
        let mut sides = [[0usize; 2]; 3];
        s.expr.for_each_read(&mut |a: &Access| {
            if slots.contains(&a.slot) {
                for (side, &d) in sides.iter_mut().zip(&a.offset) {
                    let k = usize::from(d > 0);
                    side[k] = side[k].max(d.unsigned_abs() as usize);
                }
            }
        });
        Reach { slots, sides }
    }

    /// Whether a ringed read of `s` moves along the middle axis (its index
    /// then steps by the ring's pitch).
    fn moves_rows(&self, s: &Statement) -> bool {
        let mut moves = false;
        s.expr.for_each_read(&mut |a: &Access| {
            moves |= self.slots.contains(&a.slot) && a.offset[1] != 0;
        });
        moves
    }

    /// Planes the ring holds: those a pass's cells read, its
    /// [`PLANES_A_PASS`] planes and the reach below and above them.
    fn ring_planes(&self) -> usize {
        self.sides[0][0] + self.sides[0][1] + PLANES_A_PASS
    }
}

/// The name of the row pointer of `slot` at plane offset `dz`.
fn row_name(st: &Stencil, slot: Slot, dz: i64) -> String {
    format!("{}_{}", slot_name(st, slot), offset_part(dz))
}

/// Declares the bands' count (`bands`: [`BANDS_PER_THREAD`] a thread) and
/// their rows (`band`, at most `rows`, a block's extent, then rounded up
/// to a multiple of `multiple`) over the rows `lo1` to `hi1` (C).
pub(super) fn bands(
    w: &mut Writer,
    rows: usize,
    multiple: usize,
    [lo1, hi1]: [&String; 2],
) -> fmt::Result {
    writeln!(
        w,
        "const ptrdiff_t bands = {BANDS_PER_THREAD} * (ptrdiff_t)omp_get_max_threads();"
    )?;
    let band = at_most(rows, &format!("({hi1} - {lo1} + bands - 1) / bands"));
    if multiple == 1 {
        writeln!(w, "const ptrdiff_t band = {band};")
    } else {
        writeln!(
            w,
            "const ptrdiff_t band = ({band} + {}) / {multiple} * {multiple};",
            multiple - 1
        )
    }
}

/// `extent` (C) capped at a block's `limit`, which [`WHOLE_AXIS`] leaves
/// uncapped.
fn at_most(limit: usize, extent: &str) -> String {
    if limit == WHOLE_AXIS {
        extent.to_string()
    } else {
        format!("stencil_min({limit}, {extent})")
    }
}

/// The marching loops over the cells `span` of statement `s` (`[from, to]`
/// per axis, as C), in place of the cache-blocked nest.
pub(super) fn interior(
    w: &mut Writer,
    st: &Stencil,
    s: &Statement,
    span: &[[String; 2]],
) -> fmt::Result {
    let reach = Reach::of(s);
    let [[lo0, hi0], [lo1, hi1], [lo2, hi2]] = [&span[0], &span[1], &span[2]];
    let [_, [y_lo, y_hi], [x_lo, x_hi]] = reach.sides;
    let block = &st.tiling.openmp.block;
    let (rows, cells) = (block[1], block[2]);
    writeln!(
        w,
        "/* Bands of rows by {} cells ({}, {}), each marching {}: {} planes a pass, through a ring of {} planes where planes alias. */",
        if cells == WHOLE_AXIS {
            "all".to_string()
        } else {
            cells.to_string()
        },
        st.axes[1],
        st.axes[2],
        st.axes[0],
        PLANES_A_PASS,
        reach.ring_planes()
    )?;
    w.block(
        format_args!("if ({lo0} < {hi0} && {lo1} < {hi1} && {lo2} < {hi2})"),
        |w| {
            let most = if rows == WHOLE_AXIS {
                String::new()
            } else {
                format!(" of at most {rows} rows")
            };
            writeln!(
                w,
                "/* Bands{most}, {BANDS_PER_THREAD} a thread or more where the rows allow, handed out as threads finish one. */"
            )?;
            bands(w, rows, 1, [lo1, hi1])?;
            writeln!(
                w,
                "const ptrdiff_t chunk = {};",
                at_most(cells, &format!("{hi2} - {lo2}"))
            )?;
            let line = 64 / st.dtype.size();
            writeln!(
                w,
                "/* A ring's rows: whole cache lines, an odd number of them, so that rows read together fall in different sets. */"
            )?;
            writeln!(
                w,
                "ptrdiff_t width = (chunk + {} + {}) / {line} * {line};",
                x_lo + x_hi,
                line - 1
            )?;
            writeln!(w, "width += width / {line} % 2 == 0 ? {line} : 0;")?;
            writeln!(
                w,
                "const ptrdiff_t plane = (band + {}) * width;",
                y_lo + y_hi
            )?;
            w.pragma("omp parallel")?;
            w.braces(|w| thread(w, st, s, span, &reach))
        },
    )
}

/// One thread's part: its rings, its bands, and the rings freed.
fn thread(
    w: &mut Writer,
    st: &Stencil,
    s: &Statement,
    span: &[[String; 2]],
    reach: &Reach,
) -> fmt::Result {
    let t = st.dtype.c();
    let nz = reach.ring_planes();
    for &slot in &reach.slots {
        writeln!(
            w,
            "{t} *const ring_{0} = malloc(sizeof({t}) * {nz} * plane);",
            slot_name(st, slot)
        )?;
    }
    let rings: Vec<String> = reach
        .slots
        .iter()
        .map(|&slot| format!("ring_{} != NULL", slot_name(st, slot)))
        .collect();
    writeln!(
        w,
        "/* Planes a multiple of 4 KiB apart share cache sets: those go through the ring. Otherwise, or without its rings, a thread reads the grid (the same loops). */"
    )?;
    writeln!(
        w,
        "const int ringed = (s0 * sizeof(*out)) % 4096 == 0 && {};",
        rings.join(" && ")
    )?;
    if reach.moves_rows(s) {
        writeln!(w, "const ptrdiff_t pitch = ringed ? width : s1;")?;
    }
    let [[lo0, hi0], [lo1, hi1], [lo2, hi2]] = [&span[0], &span[1], &span[2]];
    w.pragma("omp for collapse(2) schedule(dynamic, 1)")?;
    w.nest(
        &[
            format!("for (ptrdiff_t b1 = {lo1}; b1 < {hi1}; b1 += band)"),
            format!("for (ptrdiff_t b2 = {lo2}; b2 < {hi2}; b2 += chunk)"),
        ],
        |w| {
            writeln!(w, "const ptrdiff_t e1 = stencil_min(b1 + band, {hi1});")?;
            writeln!(w, "const ptrdiff_t e2 = stencil_min(b2 + chunk, {hi2});")?;
            let [z_lo, z_hi] = reach.sides[0];
            w.block(
                format_args!(
                    "for (ptrdiff_t p = {}; p < {lo0} + {z_hi}; ++p)",
                    step(lo0, -(z_lo as i64), "")
                ),
                |w| load(w, st, reach, &["p".to_string()]),
            )?;
            march(w, st, s, reach, [lo0, hi0])
        },
    )?;
    for &slot in &reach.slots {
        writeln!(w, "free(ring_{});", slot_name(st, slot))?;
    }
    Ok(())
}

/// A band's march along the slowest axis from `lo0` to `hi0` (C), the
/// ring already holding the planes below the first: [`PLANES_A_PASS`]
/// planes a pass, then the planes left one a pass, each pass taking its new
/// planes into the ring first.
fn march(
    w: &mut Writer,
    st: &Stencil,
    s: &Statement,
    reach: &Reach,
    [lo0, hi0]: [&String; 2],
) -> fmt::Result {
    let z_hi = reach.sides[0][1] as i64;
    // A pass of `k` planes from `i0`: its new planes into the ring, then its rows.
    let pass = |w: &mut Writer, k: usize| {
        let planes: Vec<String> = (0..k as i64).map(|d| step("i0", z_hi + d, "")).collect();
        load(w, st, reach, &planes)?;
        w.block("for (ptrdiff_t i1 = b1; i1 < e1; ++i1)", |w| {
            row(w, st, s, reach, k)
        })
    };
    writeln!(w, "ptrdiff_t i0 = {lo0};")?;
    writeln!(
        w,
        "/* {PLANES_A_PASS} planes a pass: each row of the planes they read is loaded once for all of them. */"
    )?;
    w.block(
        format_args!("for (; i0 + {PLANES_A_PASS} <= {hi0}; i0 += {PLANES_A_PASS})"),
        |w| pass(w, PLANES_A_PASS),
    )?;
    writeln!(w, "/* The planes left, a plane a pass. */")?;
    w.block(format_args!("for (; i0 < {hi0}; ++i0)"), |w| pass(w, 1))
}

/// `from` moved by `d` times `unit` (a cell where `unit` is empty):
/// `from + 2 * s0`, `from - s0`, `from + 3`, or `from`.
pub(super) fn step(from: &str, d: i64, unit: &str) -> String {
    let m = d.unsigned_abs();
    let term = match (unit, m) {
        (_, 0) => return from.to_string(),
        ("", m) => m.to_string(),
        (unit, 1) => unit.to_string(),
        (unit, m) => format!("{m} * {unit}"),
    };
    format!("{from} {} {term}", if d < 0 { '-' } else { '+' })
}

/// Copies `planes` (C) of every ringed slot into their places in the ring
/// (where the thread has its rings).
fn load(w: &mut Writer, st: &Stencil, reach: &Reach, planes: &[String]) -> fmt::Result {
    let [_, [y_lo, y_hi], [x_lo, x_hi]] = reach.sides;
    let nz = reach.ring_planes();
    w.block("if (ringed)", |w| {
        w.block(
            format_args!("for (ptrdiff_t r = 0; r < {}; ++r)", step("e1 - b1", (y_lo + y_hi) as i64, "")),
            |w| {
                for p in planes {
                    for &slot in &reach.slots {
                        let name = slot_name(st, slot);
                        writeln!(
                            w,
                            "memcpy(ring_{name} + ({p}) % {nz} * plane + r * width, {name} + ({p}) * s0 + ({}) * s1 + {}, sizeof(*out) * ({}));",
                            step("b1", -(y_lo as i64), "") + " + r",
                            step("b2", -(x_lo as i64), ""),
                            step("e2 - b2", (x_lo + x_hi) as i64, "")
                        )?;
                    }
                }
                Ok(())
            },
        )
    })
}

/// What a pass of several planes reads through its row pointers.
struct PassReads {
    /// Each ringed slot's rows, by plane offset from `i0`, in order.
    rows: Vec<(Slot, i64)>,
    /// The values (offset from the pass's first cell, slot) that two or
    /// more of its cells read, to be loaded once.
    shared: Vec<([i64; 3], Slot)>,
}

impl PassReads {
    fn of(s: &Statement, reach: &Reach, pass: usize) -> Self {
        let mut rows: Vec<(Slot, i64)> = Vec::new();
        let mut reads: Vec<([i64; 3], Slot, i64)> = Vec::new();
        for k in 0..pass as i64 {
            s.expr.for_each_read(&mut |a: &Access| {
                if reach.slots.contains(&a.slot) {
                    let dz = a.offset[0] + k;
                    if !rows.contains(&(a.slot, dz)) {
                        rows.push((a.slot, dz));
                    }
                    reads.push(([dz, a.offset[1], a.offset[2]], a.slot, k));
                }
            });
        }
        rows.sort();
        reads.sort();
        reads.dedup();
        let mut shared: Vec<([i64; 3], Slot)> = reads
            .iter()
            .filter(|(at, slot, _)| reads.iter().filter(|q| (q.0, q.1) == (*at, *slot)).count() > 1)
            .map(|&(at, slot, _)| (at, slot))
            .collect();
        shared.dedup();
        PassReads { rows, shared }
    }
}

/// One row of the band's `pass` planes: the row pointers of the ringed
/// slots at each plane offset (into the ring where the thread has its rings
/// and planes alias, else into the grid), then the cells,
/// each column's `pass` cells in one iteration, a value that several of
/// them read loaded once.
fn row(w: &mut Writer, st: &Stencil, s: &Statement, reach: &Reach, pass: usize) -> fmt::Result {
    let [[_, _], [y_lo, _], [x_lo, _]] = reach.sides;
    let nz = reach.ring_planes();
    let PassReads { rows, shared } = PassReads::of(s, reach, pass);
    writeln!(w, "const ptrdiff_t row = i0 * s0 + i1 * s1;")?;
    let t = st.dtype.c();
    for (slot, dz) in rows {
        let name = slot_name(st, slot);
        let grid = format!("{name} + {} + b2", step("row", dz, "s0"));
        let pointer = format!(
            "ringed ? ring_{name} + ({}) % {nz} * plane + ({}) * width + {x_lo} : {grid}",
            step("i0", dz, ""),
            step("i1 - b1", y_lo as i64, ""),
        );
        writeln!(
            w,
            "const {t} *const {} = {pointer};",
            row_name(st, slot, dz)
        )?;
    }
    let ringed = |at: [i64; 3], slot: Slot| {
        format!(
            "{}[{}]",
            row_name(st, slot, at[0]),
            step(&step("j", at[1], "pitch"), at[2], "")
        )
    };
    let local = |at: [i64; 3], slot: Slot| {
        format!(
            "{}_{}_{}",
            row_name(st, slot, at[0]),
            offset_part(at[1]),
            offset_part(at[2])
        )
    };
    let plain = plain_read(st);
    // Read `a` of the pass's plane `k`: from a local where the pass's cells
    // share it, else from its row.
    let read = |k: i64, a: &Access| {
        let at = [a.offset[0] + k, a.offset[1], a.offset[2]];
        if !reach.slots.contains(&a.slot) {
            plain(&Access {
                offset: at.to_vec(),
                ..a.clone()
            })
        } else if shared.contains(&(at, a.slot)) {
            local(at, a.slot)
        } else {
            ringed(at, a.slot)
        }
    };
    // A shared value's declaration: loaded once into its local.
    let load =
        |at: [i64; 3], slot| format!("const {t} {} = {};", local(at, slot), ringed(at, slot));
    w.pragma("omp simd")?;
    w.block("for (ptrdiff_t i2 = b2; i2 < e2; ++i2)", |w| {
        writeln!(w, "const ptrdiff_t c = row + i2, j = i2 - b2;")?;
        if shared.len() > SHARED_IN_REGISTERS {
            return in_read_order(w, st, s, pass, &read, &|at, slot| {
                shared.contains(&(at, slot)).then(|| load(at, slot))
            });
        }
        for &(at, slot) in &shared {
            writeln!(w, "{}", load(at, slot))?;
        }
        for k in 0..pass as i64 {
            let value = c_value(st, s, &|a: &Access| read(k, a));
            writeln!(w, "out[{}] = {value};", step("c", k, "s0"))?;
        }
        Ok(())
    })
}

/// The terms of `e`'s left-deep chain of sums and differences, in order,
/// each with the operation that adds it (`Add` for the first): `a - b + c`
/// is `[(Add, a), (Sub, b), (Add, c)]`.
fn chain(e: &Expr) -> Vec<(Op, &Expr)> {
    match e {
        Expr::Bin(op @ (Op::Add | Op::Sub), a, b) => {
            let mut terms = chain(a);
            terms.push((*op, b));
            terms
        }
        _ => vec![(Op::Add, e)],
    }
}

/// The pass's `pass` sums (a plane each), each its chain of terms in order,
/// so that each rounds as the statement does, accumulated in turn: the next
/// term taken from the sum whose term reads the lowest plane (then the
/// earliest of that plane's terms in its sum), so that a value the sums
/// share is loaded (`load` gives its declaration, once) just before the
/// terms that read it and dies after them.
fn in_read_order(
    w: &mut Writer,
    st: &Stencil,
    s: &Statement,
    pass: usize,
    read: &dyn Fn(i64, &Access) -> String,
    load: &dyn Fn([i64; 3], Slot) -> Option<String>,
) -> fmt::Result {
    let terms = chain(&s.expr);
    // Each term's lowest plane (relative to its cell), and its rank among
    // the terms of that plane.
    let planes: Vec<i64> = terms.iter().map(|(_, e)| lowest_plane(e)).collect();
    let ranks: Vec<usize> = (0..terms.len())
        .map(|i| planes[..i].iter().filter(|&&p| p == planes[i]).count())
        .collect();
    let key = |k: usize, i: usize| (planes[i].saturating_add(k as i64), ranks[i]);
    let mut next = vec![0; pass];
    let mut loaded = Vec::new();
    while let Some(k) = (0..pass)
        .filter(|&k| next[k] < terms.len())
        .min_by_key(|&k| key(k, next[k]))
    {
        let (op, e) = terms[next[k]];
        let mut loads = Vec::new();
        e.for_each_read(&mut |a: &Access| {
            let at = [a.offset[0] + k as i64, a.offset[1], a.offset[2]];
            if !loaded.contains(&(at, a.slot)) {
                loaded.push((at, a.slot));
                loads.extend(load(at, a.slot));
            }
        });
        for line in loads {
            writeln!(w, "{line}")?;
        }
        let term = c_expr(st, e, &|a: &Access| read(k as i64, a));
        let term = match e {
            Expr::Bin(Op::Add | Op::Sub, ..) => format!("({term})"),
            _ => term,
        };
        let sign = if op == Op::Sub { "-" } else { "+" };
        match next[k] {
            0 => writeln!(w, "{} sum{k} = {term};", st.dtype.c())?,
            _ => writeln!(w, "sum{k} = sum{k} {sign} {term};")?,
        }
        next[k] += 1;
    }
    for k in 0..pass {
        writeln!(w, "out[{}] = sum{k};", step("c", k as i64, "s0"))?;
    }
    Ok(())
}

/// The lowest plane `e` reads (`i64::MIN` where it reads none).
fn lowest_plane(e: &Expr) -> i64 {
    let mut lowest = None;
    e.for_each_read(&mut |a: &Access| {
        lowest = Some(lowest.map_or(a.offset[0], |p: i64| p.min(a.offset[0])));
    });
    lowest.unwrap_or(i64::MIN)
}

#[cfg(test)]
mod tests {
    use crate::analysis::analyse;
    use crate::backend::openmp::source;
    use crate::ir::Stencil;

    /// A 3-D star of radius 4 along `z` (so its steps march `z`) in `dtype`.
    fn star(dtype: &str) -> Stencil {
        let text = format!(
            "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n\
             [fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\n\
             expr = \"u[0,0,0] + 0.1*(u[-4,0,0] + u[4,0,0] + u[-1,0,0] + u[0,1,0] + u[0,0,-1])\"\n"
        );
        let mut all = crate::config::lowered("s.stencil.toml".as_ref(), &text).unwrap();
        all.remove(0)
    }

    /// A box of 3 x 3 cells a plane over 9 planes, in f32, its coefficients
    /// 0.001, 0.002, ... in the order of its terms.
    fn tall_box() -> Stencil {
        let mut terms = Vec::new();
        for dz in -4..=4 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    terms.push(format!("0.{:03}*u[{dz},{dy},{dx}]", terms.len() + 1));
                }
            }
        }
        let text = format!(
            "[stencil]\nname = \"b\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
             [fields]\nu = {{ role = \"state\" }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"{}\"\n",
            terms.join(" + ")
        );
        let mut all = crate::config::lowered("b.stencil.toml".as_ref(), &text).unwrap();
        all.remove(0)
    }

    /// The `omp simd` loop of the pass of several planes.
    fn pass_loop(c: &str) -> &str {
        let pass = c
            .split("for (; i0 + ")
            .nth(1)
            .expect("a pass of several planes");
        pass.split("#pragma omp simd").nth(1).unwrap()
    }

    #[test]
    fn a_pass_computes_several_planes_loading_each_shared_value_once() {
        let st = star("f64");
        let c = source(&st, &analyse(&st), "p");
        assert!(
            c.contains(
                "marching z: 4 planes a pass, through a ring of 12 planes where planes alias"
            ),
            "{c}"
        );
        assert!(c.contains("for (; i0 + 4 <= n0 - 4; i0 += 4)"), "{c}");
        // Those past the last whole pass, one at a time.
        assert!(c.contains("for (; i0 < n0 - 4; ++i0)"), "{c}");
        let body = pass_loop(&c);
        let body = &body[..body.find("/* The planes left").unwrap()];
        for k in [
            "out[c] =",
            "out[c + s0] =",
            "out[c + 2 * s0] =",
            "out[c + 3 * s0] =",
        ] {
            assert!(body.contains(k), "{k}: {body}");
        }
        // Plane 1's value at the cell is read by cells 0 (at +1), 1 and 2
        // (at -1): loaded once, into a local.
        assert_eq!(body.matches("cur_u_p1[j]").count(), 1, "{body}");
        assert!(
            body.contains("const double cur_u_p1_0_0 = cur_u_p1[j];"),
            "{body}"
        );
        // In-plane reads are each cell's own.
        assert!(body.contains("cur_u_p2[j + pitch]") && body.contains("cur_u_p3[j - 1]"));
    }

    #[test]
    fn a_pass_sharing_more_values_than_registers_sums_in_the_order_of_its_reads() {
        let st = tall_box();
        let c = source(&st, &analyse(&st), "p");
        let body = pass_loop(&c);
        let body: Vec<&str> = body[..body.find("/* The planes left").unwrap()]
            .lines()
            .map(str::trim)
            .collect();
        // 4 planes of 81 terms, each sum its terms in the statement's order.
        for k in 0..4 {
            let terms: Vec<&str> = body
                .iter()
                .filter_map(|l| {
                    let rest = l
                        .strip_prefix(&format!("float sum{k} = "))
                        .or_else(|| l.strip_prefix(&format!("sum{k} = sum{k} + ")))?;
                    Some(rest.split(" * ").next().unwrap())
                })
                .collect();
            let want: Vec<String> = (1..=81)
                .map(|i| format!("{}f", format!("0.{i:03}").trim_end_matches('0')))
                .collect();
            assert_eq!(terms, want, "sum{k}");
        }
        let out = |k: usize| {
            body.iter().position(|l| {
                l.starts_with(&format!(
                    "out[{}] = sum{k};",
                    super::step("c", k as i64, "s0")
                ))
            })
        };
        assert!((0..4).all(|k| out(k).is_some()), "{body:#?}");
        // A shared value is loaded once, just before the terms of the sums
        // that read it, and not read after them.
        let loads: Vec<usize> = (0..body.len())
            .filter(|&i| body[i].starts_with("const float cur_u_"))
            .collect();
        assert!(loads.len() > super::SHARED_IN_REGISTERS, "{body:#?}");
        for &i in &loads {
            let name = body[i].split(' ').nth(2).unwrap();
            let uses: Vec<usize> = (0..body.len())
                .filter(|&u| u != i && body[u].contains(&format!("{name};")))
                .collect();
            assert!(
                !uses.is_empty() && uses.iter().all(|&u| u > i && u <= i + 4),
                "{name}: {uses:?}"
            );
        }
    }

    #[test]
    fn the_ring_holds_a_pass_and_its_reach() {
        let st = star("f32");
        let c = source(&st, &analyse(&st), "p");
        // Reach 4 below and above, 4 planes a pass: 4 + 4 + 4 planes.
        assert!(c.contains("malloc(sizeof(float) * 12 * plane)"), "{c}");
        let pass = c.split("for (; i0 + 4 <= n0 - 4; i0 += 4)").nth(1).unwrap();
        let loads = &pass[..pass.find("#pragma omp simd").unwrap()];
        // The pass takes the 4 planes above its reach into the ring first.
        for k in 4..8 {
            assert!(
                loads.contains(&format!("memcpy(ring_cur_u + (i0 + {k}) % 12 * plane")),
                "{k}: {loads}"
            );
        }
        assert!(!loads.contains("(i0 + 8)"), "{loads}");
        // Its rows: the ring's plane of each offset, the grid's where planes do not alias.
        assert!(
            loads.contains("cur_u_p7 = ringed ? ring_cur_u + (i0 + 7) % 12 * plane + (i1 - b1) * width + 1 : cur_u + row + 7 * s0 + b2;"),
            "{loads}"
        );
    }
}
