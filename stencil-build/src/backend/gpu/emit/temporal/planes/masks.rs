//! Where a 3-D fused thread's cells lie: for its column and each of its
//! rows, in the statement's region (updated), in the tile's own part
//! (stored) and on the grid (loaded), or on a periodic grid wrapped onto it.

use std::fmt::{self, Write as _};

use crate::backend::Writer;
use crate::backend::gpu::emit::Gen;
use crate::backend::gpu::plan::temporal::planes::Planes;

impl Gen<'_> {
    /// Per row of the thread and for its column: in the statement's region
    /// (updated), in the tile's own part (stored) and, where the loads take
    /// a predicate, on the grid (loaded); where they clamp
    /// ([`Planes::clamped`]), the row's offset in a plane, clamped to the
    /// grid (`row_at`). Predicated kernels keep arrays of `bool` (`grid_y`,
    /// `in_y`, `own_y`, with `grid_x`, `in_x`, `own_x` for the column);
    /// clamped ones a word of bits each (`in_rows`, `own_rows`, bit `j` for
    /// row `j`), which kept j3d27pt f64 from spilling (188.2 GCells/s; 139.3
    /// with clamped loads and the arrays). With
    /// predicated loads the arrays measured faster (j3d27pt f64 186.8
    /// against 134.9 with bits, j3d7pt f32 645.6 against 578.8; H100).
    pub(super) fn planes_masks(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        if sh.wrap {
            return self.planes_wrapped_masks(w, sh);
        }
        let (lo1, hi1) = self.bounds(1);
        let (lo2, hi2) = self.bounds(2);
        let c = sh.c;
        let ix = self.index();
        let clamped = sh.clamped();
        let [own_row, own_column] = own_parts(sh);
        if clamped {
            writeln!(w, "const bool in_x = i2 >= {lo2} && i2 < {hi2};")?;
        } else {
            writeln!(
                w,
                "const bool grid_x = i2 >= 0 && i2 < n2, in_x = i2 >= {lo2} && i2 < {hi2};"
            )?;
        }
        writeln!(w, "const bool own_x = in_x && {own_column};")?;
        if clamped {
            writeln!(
                w,
                "const {ix} x = i2 < 0 ? 0 : i2 < n2 ? i2 : n2 - 1; /* the column, clamped to the grid */"
            )?;
            writeln!(
                w,
                "/* Bit j: row j, in this column, in the region (in_rows) and the tile's own part (own_rows). */"
            )?;
            writeln!(w, "unsigned in_rows = 0, own_rows = 0;")?;
            writeln!(
                w,
                "{ix} row_at[{c}]; /* row j's offset in a plane, clamped to the grid */"
            )?;
        } else {
            writeln!(w, "bool grid_y[{c}], in_y[{c}], own_y[{c}];")?;
        }
        w.pragma("unroll")?;
        w.block(format_args!("for (int j = 0; j < {c}; ++j)"), |w| {
            writeln!(w, "const {ix} c = i1 + j;")?;
            if clamped {
                writeln!(
                    w,
                    "in_rows |= (unsigned)(in_x && c >= {lo1} && c < {hi1}) << j;"
                )?;
                writeln!(
                    w,
                    "own_rows |= (unsigned)(own_x && c >= {lo1} && c < {hi1} && {own_row}) << j;"
                )?;
                writeln!(w, "row_at[j] = (c < 0 ? 0 : c < n1 ? c : n1 - 1) * s1 + x;")?;
            } else {
                writeln!(w, "grid_y[j] = c >= 0 && c < n1;")?;
                writeln!(w, "in_y[j] = c >= {lo1} && c < {hi1};")?;
                writeln!(w, "own_y[j] = in_y[j] && {own_row};")?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// [`Self::planes_masks`] on a periodic grid, where every cell is
    /// updated: for its column and each row, in the tile's own part and on
    /// the grid (`own_rows`, bit `j` for row `j`), and the row's offset in a
    /// plane, wrapped onto the grid (`row_at`).
    fn planes_wrapped_masks(&self, w: &mut Writer, sh: &Planes) -> fmt::Result {
        let c = sh.c;
        let ix = self.index();
        let [own_row, own_column] = own_parts(sh);
        writeln!(w, "const bool own_x = i2 >= 0 && i2 < n2 && {own_column};")?;
        writeln!(
            w,
            "const {ix} x = ({ix})stencil_mod(i2, n2); /* the column, wrapped onto the grid */"
        )?;
        writeln!(
            w,
            "/* Bit j: row j, in this column, on the grid and the tile's own part. */"
        )?;
        writeln!(w, "unsigned own_rows = 0;")?;
        writeln!(
            w,
            "{ix} row_at[{c}]; /* row j's offset in a plane, wrapped onto the grid */"
        )?;
        w.pragma("unroll")?;
        w.block(format_args!("for (int j = 0; j < {c}; ++j)"), |w| {
            writeln!(w, "const {ix} c = i1 + j;")?;
            writeln!(
                w,
                "own_rows |= (unsigned)(own_x && c >= 0 && c < n1 && {own_row}) << j;"
            )?;
            writeln!(w, "row_at[j] = ({ix})stencil_mod(c, n1) * s1 + x;")
        })?;
        Ok(())
    }
}

/// The C conditions that the thread's row `j` and its column lie in the
/// tile's own part, not in the overlap recomputed on each side. A tile with
/// no overlap along an axis owns from its first thread: no lower test (an
/// unsigned index is never below 0).
fn own_parts(sh: &Planes) -> [String; 2] {
    let [rows, cols] = sh.tile();
    let (m1, m2) = (sh.r[1] * sh.t, sh.r[2] * sh.t);
    let own = |at: &str, margin: usize, end: usize| match margin {
        0 => format!("{at} < {end}"),
        m => format!("{at} >= {m} && {at} < {end}"),
    };
    [
        own(&format!("threadIdx.y * {} + j", sh.c), m1, rows - m1),
        own("threadIdx.x", m2, cols - m2),
    ]
}

/// The conditions on the thread's rows that the kernel's levels and stores test.
impl Planes {
    /// The C condition that the thread's row `j` is in the statement's
    /// region (see [`Gen::planes_masks`]); `None` on a periodic grid, whose
    /// every cell is.
    pub(super) fn inside(&self) -> Option<&'static str> {
        if self.wrap {
            None
        } else if self.clamped() {
            Some("(in_rows >> j & 1u)")
        } else {
            Some("in_y[j] && in_x")
        }
    }

    /// The C condition that the thread's row `j` is the tile's own, to store.
    pub(super) fn own(&self) -> &'static str {
        if self.clamped() {
            "own_rows >> j & 1u"
        } else {
            "own_y[j] && own_x"
        }
    }
}
