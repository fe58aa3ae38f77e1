//! The ring kernel's launch: its grid of blocks, when the session prefers
//! it to single steps, and the launch over the region for two steps.

use std::fmt::{self, Write as _};

use crate::backend::Writer;
use crate::backend::gpu::emit::Gen;
use crate::backend::gpu::plan::temporal::rings::{CELLS, SCALAR_PLANE, TILE_X, VECTOR_PLANE};

impl Gen<'_> {
    /// The blocks of a launch along CUDA's `x`, `y` and `z`: one per tile
    /// of the region, in chunks of `chunk` (a C expression).
    pub(in crate::backend::gpu) fn rings_grid(&self, chunk: &str) -> Vec<String> {
        let ty = self.rings_shape().ty;
        vec![
            format!("({} + {TILE_X} - 1) / {TILE_X}", self.extent(2)),
            format!("({} + {ty} - 1) / {ty}", self.extent(1)),
            format!("({} + {chunk} - 1) / {chunk}", self.extent(0)),
        ]
    }

    /// Whether the session prefers the ring kernel on a grid it takes, as a
    /// C expression after the lines it needs: where planes are large. On
    /// smaller ones two single steps ran faster: `stream` in 16-byte vectors,
    /// whose blocks march 4 planes and find the planes of their neighbours
    /// along the slowest axis in L2 while a plane is small. acoustic25 f32 (H100):
    /// where rows are whole vectors, the vectors ran
    /// 1.12x-1.72x the ring kernel on planes of 16384 to 409600 cells, and
    /// 0.80x-0.99x on 495616 to 1048576; elsewhere their scalar twin ran
    /// 2.05x on 12740 cells, 0.92x-1.10x on 66048 to 264196, and
    /// 0.73x-0.92x on 361200 to 1011892
    /// (design notes, `ring-inputs-f32`, `build-vstream.sh`).
    pub(in crate::backend::gpu) fn rings_preferred(
        &self,
        w: &mut Writer,
        single: &Self,
    ) -> Result<String, fmt::Error> {
        writeln!(
            w,
            "/* The ring kernel where planes are large; on smaller ones, single steps (in 16-byte vectors where rows are whole vectors). */"
        )?;
        writeln!(
            w,
            "const bool vectors = {};",
            single.twins()[0].launch_condition().join(" && ")
        )?;
        Ok(format!(
            "(ptrdiff_t)n1 * n2 > (vectors ? {VECTOR_PLANE} : {SCALAR_PLANE})"
        ))
    }

    /// Launches the ring kernel over the region for 2 steps: the chunk whose
    /// waves of blocks end first, the shared memory asked for, and `quads`
    /// (whether the grids read at the cell load 16 bytes a lane).
    pub(in crate::backend::gpu) fn rings_launch(&self, w: &mut Writer) -> fmt::Result {
        let sh = self.rings_shape();
        let bytes = self.allow_shared(w)?;
        let name = self.kernel_name();
        // A lane's first cell is 4-aligned along `x` when the region starts there.
        debug_assert_eq!(self.info.halo[2] % CELLS, 0);
        let quad = CELLS * self.st.dtype.size();
        let mut quads = vec![format!("n2 % {CELLS} == 0")];
        for g in self.cell_grids() {
            for p in [g.first, g.second] {
                let aligned = format!("(size_t){p} % {quad} == 0");
                if !quads.contains(&aligned) {
                    quads.push(aligned);
                }
            }
        }
        writeln!(
            w,
            "/* Rows of whole 16-byte quads: the grids read at the cell load 4 cells at a time. */"
        )?;
        writeln!(w, "const bool quads = {};", quads.join(" && "))?;
        let extra = 4 * sh.r[0] + 1;
        self.wave_chunk(w, &name, bytes, extra, &self.temporal_across(), false)?;
        let blocks = self.rings_grid("chunk");
        let mut arguments: Vec<String> = (0..3).map(|a| format!("(int)n{a}")).collect();
        arguments.extend(self.rings_pointers(false));
        arguments.push("chunk".into());
        arguments.push("quads".into());
        self.launch_named(
            w,
            &name,
            &sh.threads().to_string(),
            &blocks,
            bytes,
            &arguments.join(", "),
        )
    }
}
