//! 2-D nests of whole rows whose lines would overflow a cache set: where
//! rows are a multiple of 4 KiB apart, each thread copies the rows of the
//! grids it reads at several rows into a ring of its own, and the nest
//! reads them there.
//!
//! Why: a row of 1024 f32 cells (or 512 f64) or any multiple of it puts
//! the rows a cell reads (`u[-1,0]`, `u[0,0]`, `u[1,0]`) in the same set
//! of L1, and grids allocated alike (every large allocation starts at the
//! same offset in its page) put each grid's there too. A nest that reads
//! and writes more of those lines at a column than L1 has ways loses each
//! line before its next read. Shallow water by Lax-Friedrichs (3 grids
//! read at 3 rows, 3 written: 12 lines) ran on 4096^2 f32 at 0.44-0.47
//! GCells/s on 2 cores, and at 0.82-0.98 on 4000^2 or 4032^2; through the
//! ring 0.84 on 4096^2 (design notes, "Rows a power of two apart"). The
//! ring's rows are an odd number of cache lines long, so that rows read
//! together fall in different sets. Where rows do not alias, the copy is
//! only cost (0.78 against 0.82 on 4000^2), so the threads read the grid
//! there, in the nest's own loops; as they do where L1 has the ways for
//! the nest's lines (the kernel asks the C library how many it has).

use std::cell::RefCell;
use std::fmt::{self, Write as _};

use super::planes::step;
use super::{Values, cells};
use crate::backend::Writer;
use crate::codegen::names::{offset_part, slot_name};
use crate::ir::{Access, Slot, Stencil};

/// The ways of an L1 data cache where the C library does not say (AMD's
/// Zen cores' and Intel's up to Cascade Lake: 8 x 4 KiB sets of 64-byte
/// lines). A nest touching more lines of one set at a column than the
/// ways the machine has goes through the ring. The GPU machine's Xeon has
/// 12 (48 KiB), and there shallow water (12 lines) ran 0.74x-0.98x through
/// the ring, against its own loops at 86%-92% of the copy bound.
const L1_WAYS: usize = 8;

/// `stencil_l1_ways`: the ways of the machine's L1 data cache.
pub(super) fn l1_ways(w: &mut Writer) -> fmt::Result {
    writeln!(
        w,
        "/* The ways of L1's data cache: what the C library says, or {L1_WAYS} where it does not. */"
    )?;
    super::from_sysconf(
        w,
        "stencil_l1_ways",
        ("_SC_LEVEL1_DCACHE_ASSOC", "ways", "ways"),
        L1_WAYS,
    )
}

/// The slots a 2-D nest reads at several rows, each with the row offsets
/// it reads, in order: those it copies into its ring.
pub(super) struct Ring {
    slots: Vec<(Slot, Vec<i64>)>,
    /// The lines of one set the nest touches at a column where rows alias.
    lines: usize,
}

impl Ring {
    /// The ring of the nest storing `values`, or `None` where the lines it
    /// reads and writes at a column, where rows alias (each row offset of
    /// each slot a line, and each buffer written), fit [`L1_WAYS`] (the
    /// kernel compares them with the machine's at run time), or where no
    /// grid is read at several rows.
    pub(super) fn of(values: &Values) -> Option<Ring> {
        let reads = RefCell::new(Vec::<Access>::new());
        let written = values(&|a: &Access| {
            reads.borrow_mut().push(a.clone());
            String::new()
        })
        .len();
        let mut rows: Vec<(Slot, i64)> = reads
            .into_inner()
            .iter()
            .map(|a| (a.slot, a.offset[0]))
            .collect();
        rows.sort();
        rows.dedup();
        let lines = rows.len() + written;
        if lines <= L1_WAYS {
            return None;
        }
        let mut slots: Vec<(Slot, Vec<i64>)> = Vec::new();
        for &(slot, d) in &rows {
            match slots.last_mut() {
                Some((last, read)) if *last == slot => read.push(d),
                _ => slots.push((slot, vec![d])),
            }
        }
        slots.retain(|(_, read)| read.len() > 1);
        (!slots.is_empty()).then_some(Ring { slots, lines })
    }

    /// The rows the ring keeps of a slot read at rows `read` (in order):
    /// from its lowest to its highest.
    fn depth(read: &[i64]) -> i64 {
        read[read.len() - 1] - read[0] + 1
    }

    /// The read of `a` in the nest: through its row pointer where its slot
    /// is ringed, else as `plain` spells it.
    fn read(&self, st: &Stencil, a: &Access, plain: &dyn Fn(&Access) -> String) -> String {
        if !self.slots.iter().any(|(slot, _)| *slot == a.slot) {
            return plain(a);
        }
        let name = row_name(st, a.slot, a.offset[0]);
        format!("{name}[{}]", step("i1", a.offset[1], ""))
    }
}

/// The row pointer of `slot` at row offset `d`: `cur_u_m1`.
fn row_name(st: &Stencil, slot: Slot, d: i64) -> String {
    format!("{}_{}", slot_name(st, slot), offset_part(d))
}

/// Row `i0 + d` as a C operand: `i0`, `(i0 - 1)`.
fn row_at(d: i64) -> String {
    match d {
        0 => "i0".to_string(),
        d => format!("({})", step("i0", d, "")),
    }
}

/// Row `i0 + d`'s place in the ring of a slot read at rows `read`: `(i0 +
/// 1) % 3 * width`.
fn place(d: i64, read: &[i64]) -> String {
    format!("{} % {} * width", row_at(d), Ring::depth(read))
}

/// A nest of whole rows through a ring: what its loops are made of.
pub(super) struct Nest<'a> {
    /// The stencil.
    pub st: &'a Stencil,
    /// The slots its rows come from.
    pub ring: &'a Ring,
    /// Rows a block.
    pub rows: usize,
    /// What each cell stores.
    pub values: &'a Values<'a>,
    /// A read from the grid.
    pub plain: &'a dyn Fn(&Access) -> String,
}

/// The nest over the cells `span` (`[from, to]` per axis, as C) in blocks
/// of whole rows handed out to the threads, each storing its values with
/// the ring's slots read through row pointers where rows alias.
pub(super) fn interior(w: &mut Writer, n: &Nest, span: &[[String; 2]]) -> fmt::Result {
    let (st, ring) = (n.st, n.ring);
    let t = st.dtype.c();
    let line = 64 / st.dtype.size();
    writeln!(
        w,
        "/* Rows a multiple of 4 KiB apart share cache sets: where they do and the nest's {} lines at a column are more than L1's ways, each thread copies the rows of the grids read at several rows into a ring, rows an odd number of cache lines long. */",
        ring.lines
    )?;
    w.braces(|w| {
        writeln!(
            w,
            "ptrdiff_t width = (n1 + {}) / {line} * {line};",
            line - 1
        )?;
        writeln!(w, "width += width / {line} % 2 == 0 ? {line} : 0;")?;
        writeln!(
            w,
            "const int aliased = (s0 * sizeof({t})) % 4096 == 0 && stencil_l1_ways() < {};",
            ring.lines
        )?;
        w.pragma("omp parallel")?;
        w.braces(|w| {
            let mut have = vec!["aliased".to_string()];
            for (slot, read) in &ring.slots {
                let name = slot_name(st, *slot);
                let depth = Ring::depth(read);
                writeln!(
                    w,
                    "{t} *const ring_{name} = aliased ? malloc(sizeof({t}) * {depth} * width) : NULL;"
                )?;
                have.push(format!("ring_{name} != NULL"));
            }
            writeln!(w, "const int ringed = {};", have.join(" && "))?;
            blocks(w, n, span)?;
            for (slot, _) in &ring.slots {
                writeln!(w, "free(ring_{});", slot_name(st, *slot))?;
            }
            Ok(())
        })
    })
}

/// A thread's blocks of rows: each block's first rows into the ring, then
/// its rows, each taking its last row read into the ring first.
fn blocks(w: &mut Writer, n: &Nest, span: &[[String; 2]]) -> fmt::Result {
    let (st, ring, rows) = (n.st, n.ring, n.rows);
    let [[lo0, hi0], [lo1, hi1]] = [&span[0], &span[1]];
    w.pragma("omp for schedule(guided)")?;
    w.block(
        format_args!("for (ptrdiff_t b0 = {lo0}; b0 < {hi0}; b0 += {rows})"),
        |w| {
            writeln!(w, "const ptrdiff_t e0 = stencil_min(b0 + {rows}, {hi0});")?;
            writeln!(w, "const ptrdiff_t e1 = {hi1};")?;
            w.block("if (ringed)", |w| {
                for (slot, read) in &ring.slots {
                    let from = step("b0", read[0], "");
                    let to = step("b0", read[read.len() - 1], "");
                    w.block(
                        format_args!("for (ptrdiff_t i0 = {from}; i0 < {to}; ++i0)"),
                        |w| copy(w, st, (*slot, read), 0),
                    )?;
                }
                Ok(())
            })?;
            w.block("for (ptrdiff_t i0 = b0; i0 < e0; ++i0)", |w| row(w, n, lo1))
        },
    )
}

/// Copies row `i0 + d` of `slot` (read at rows `read`) into its ring.
fn copy(w: &mut Writer, st: &Stencil, (slot, read): (Slot, &[i64]), d: i64) -> fmt::Result {
    let name = slot_name(st, slot);
    writeln!(
        w,
        "memcpy(ring_{name} + {}, {name} + {} * s0, sizeof(*{name}) * n1);",
        place(d, read),
        row_at(d)
    )
}

/// One row `i0`: where rows alias, the ring's next rows copied in, the
/// row pointers into the ring and the cells from `lo1` to `e1` reading
/// through them; elsewhere the same cells reading the grid as `plain`
/// spells it (through row pointers into the grid, a radius-4 star ran
/// 0.93x, shallow water 0.95x of these loops on 4000^2).
fn row(w: &mut Writer, n: &Nest, lo1: &str) -> fmt::Result {
    let (st, ring, values, plain) = (n.st, n.ring, n.values, n.plain);
    let t = st.dtype.c();
    writeln!(w, "const ptrdiff_t row = i0 * s0;")?;
    w.block("if (ringed)", |w| {
        for (slot, read) in &ring.slots {
            copy(w, st, (*slot, read), read[read.len() - 1])?;
        }
        for (slot, read) in &ring.slots {
            let name = slot_name(st, *slot);
            for &d in read {
                writeln!(
                    w,
                    "const {t} *const {} = ring_{name} + {};",
                    row_name(st, *slot, d),
                    place(d, read),
                )?;
            }
        }
        let read = |a: &Access| ring.read(st, a, plain);
        cells(w, 2, lo1, &values(&read))
    })?;
    w.block("else", |w| cells(w, 2, lo1, &values(plain)))
}

#[cfg(test)]
mod tests {
    use crate::analysis::analyse;
    use crate::backend::openmp::{host_form, source};

    /// The OpenMP C of a 2-D f32 spec of `fields` and `updates`.
    fn c(fields: &str, updates: &str) -> String {
        let text = format!(
            "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"y\", \"x\"]\n\
             [fields]\n{fields}\n{updates}[tiling.openmp]\ntime_block = 1\n"
        );
        let st = crate::config::lowered("s.stencil.toml".as_ref(), &text)
            .map(|mut all| all.remove(0))
            .expect("valid spec");
        let form = host_form(&st);
        source(&form, &analyse(&form), "p")
    }

    fn update(target: &str, expr: &str) -> String {
        format!("[[update]]\ntarget = \"{target}\"\nexpr = \"{expr}\"\n")
    }

    #[test]
    fn grids_read_at_several_rows_go_through_a_ring_where_their_lines_overflow_a_set() {
        // 3 grids read at 3 rows and 3 written: 12 lines a column (each
        // update reads the others' values from before the step).
        let fields = "a = { role = \"state\" }\nb = { role = \"state\" }\nk = { role = \"state\" }";
        let sum = |g: &str| format!("{g}[-1,0] + {g}[1,0] + {g}[0,-1] + {g}[0,1]");
        let three = [
            update("a", &format!("{} + 0.1*b[1,0]", sum("a"))),
            update("b", &format!("{} + 0.1*k[1,0]", sum("b"))),
            update("k", &sum("k")),
        ]
        .concat();
        let text = c(fields, &three);
        assert!(text.contains("#include <string.h>") && text.contains("#include <stdlib.h>"));
        for g in ["a", "b", "k"] {
            assert!(
                text.contains(&format!(
                    "float *const ring_cur_{g} = aliased ? malloc(sizeof(float) * 3 * width) : NULL;"
                )),
                "{text}"
            );
            assert!(text.contains(&format!("free(ring_cur_{g});")), "{text}");
            assert!(
                text.contains(&format!(
                    "const float *const cur_{g}_m1 = ring_cur_{g} + (i0 - 1) % 3 * width;"
                )),
                "{text}"
            );
        }
        assert!(
            text.contains(
                "const int aliased = (s0 * sizeof(float)) % 4096 == 0 && stencil_l1_ways() < 12;"
            ),
            "{text}"
        );
        // L1's ways from the C library, where it says.
        assert!(text.contains("#include <unistd.h>"), "{text}");
        assert!(text.contains("sysconf(_SC_LEVEL1_DCACHE_ASSOC)"), "{text}");
        assert!(
            text.contains(
                "out_a[c] = cur_a_m1[i1] + cur_a_p1[i1] + cur_a_0[i1 - 1] + cur_a_0[i1 + 1]"
            ),
            "{text}"
        );
        assert!(
            text.contains("out_a[c] = cur_a[c - s0] + cur_a[c + s0]"),
            "{text}"
        );
        // One grid read at 9 rows and written: 10 lines. A nest of few
        // lines keeps reading the grid.
        let star = (1..=4)
            .map(|d| format!("a[-{d},0] + a[{d},0] + "))
            .collect::<String>();
        let one = update("a", &format!("{star}a[0,0]"));
        let text = c("a = { role = \"state\" }", &one);
        assert!(
            text.contains("malloc(sizeof(float) * 9 * width) : NULL;"),
            "{text}"
        );
        let few = [update("a", &sum("a")), update("b", &sum("b"))].concat();
        assert!(!c("a = { role = \"state\" }\nb = { role = \"state\" }", &few).contains("ring"));
    }
}
