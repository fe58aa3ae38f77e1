//! `tiled`: each block stages the tile it computes plus its halo in shared
//! memory, for every grid read at non-zero offsets, then computes from
//! there.

use std::fmt::{self, Write as _};

use super::{Gen, shifted};
use crate::backend::Writer;
use crate::codegen::index::linear_index;
use crate::codegen::names::slot_name;
use crate::ir::{Access, Slot};

impl Gen<'_> {
    /// Slots read at a non-zero offset: staged in shared memory by `tiled`.
    pub(super) fn staged(&self) -> Vec<Slot> {
        self.s
            .slots()
            .into_iter()
            .filter(|&slot| self.reach(slot).iter().any(|&r| r > 0))
            .collect()
    }

    pub(super) fn tile_name(&self, slot: Slot) -> String {
        format!("t_{}", slot_name(self.st, slot))
    }

    pub(super) fn tiled(&self, w: &mut Writer) -> fmt::Result {
        let staged = self.staged();
        self.thread_coordinates(w, !staged.is_empty())?;
        for &slot in &staged {
            self.load_tile(w, slot)?;
        }
        // A stencil that reads no grid at an offset stages nothing (its
        // block has no tile to wait for).
        if !staged.is_empty() {
            writeln!(w, "__syncthreads();")?;
        }
        let dims = self.dims();
        w.guarded(format_args!("if ({})", self.guard(0..dims)), "return;")?;
        writeln!(w, "const ptrdiff_t c = {};", linear_index(dims))?;
        let value = self.value(&|a: &Access| {
            if !staged.contains(&a.slot) {
                return self.global_read(a);
            }
            let r = self.reach(a.slot);
            let index: String = (0..dims)
                .map(|ax| {
                    format!(
                        "[{}]",
                        shifted(&format!("l{ax}"), r[ax] as i64 + a.offset[ax])
                    )
                })
                .collect();
            format!("{}{index}", self.tile_name(a.slot))
        });
        writeln!(w, "out[c] = {value};")?;

        Ok(())
    }

    /// `slot`'s tile in shared memory, the block's cells and `reach` around
    /// them, loaded by the block's threads in turn (wrapped on a periodic
    /// grid, within it on a fixed one).
    fn load_tile(&self, w: &mut Writer, slot: Slot) -> fmt::Result {
        let dims = self.dims();
        let t = self.st.dtype.c();
        let block = &self.plan.block;
        let r = self.reach(slot);
        let ext: Vec<usize> = (0..dims).map(|a| block[a] + 2 * r[a]).collect();
        let name = self.tile_name(slot);
        let dims_decl: String = ext.iter().map(|e| format!("[{e}]")).collect();
        writeln!(w, "__shared__ {t} {name}{dims_decl};")?;
        let total: usize = ext.iter().product();
        w.block(
            format_args!(
                "for (int k = tid; k < {total}; k += {})",
                self.plan.threads()
            ),
            |w| {
                let mut stride = 1;
                let mut coords = vec![String::new(); dims];
                for a in (0..dims).rev() {
                    coords[a] = if stride == 1 {
                        format!("k % {}", ext[a])
                    } else {
                        format!("k / {stride} % {}", ext[a])
                    };
                    stride *= ext[a];
                }
                for a in 0..dims {
                    writeln!(w, "const int a{a} = {};", coords[a])?;
                    let g = format!("o{a} - {} + a{a}", r[a]);
                    let g = if self.periodic() {
                        format!("stencil_mod({g}, n{a})")
                    } else {
                        g
                    };
                    writeln!(w, "const ptrdiff_t g{a} = {g};")?;
                }
                let index: String = (0..dims).map(|a| format!("[a{a}]")).collect();
                let global = (0..dims)
                    .map(|a| {
                        if a + 1 < dims {
                            format!("g{a} * s{a}")
                        } else {
                            format!("g{a}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" + ");
                if self.periodic() {
                    writeln!(w, "{name}{index} = {}[{global}];", slot_name(self.st, slot))
                } else {
                    let inside = (0..dims)
                        .map(|a| format!("g{a} < n{a}"))
                        .collect::<Vec<_>>()
                        .join(" && ");
                    w.guarded(
                        format_args!("if ({inside})"),
                        format_args!("{name}{index} = {}[{global}];", slot_name(self.st, slot)),
                    )
                }
            },
        )
    }
}
