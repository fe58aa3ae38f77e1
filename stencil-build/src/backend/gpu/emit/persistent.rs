//! `persistent`: every step of a run in one cooperative launch.
//!
//! The kernel is `temporal`'s ([`super::temporal`]) turned inside out: the
//! grid holds only as many blocks as the device keeps resident at once, each
//! block takes the tiles of a `temporal` launch in turn (a block's warp tiles
//! in 2-D, a block tile in 3-D), and after each sweep of `time_block` fused
//! steps over every tile, a grid-wide barrier (cooperative groups) lets the
//! next sweep read what this one wrote. Sweeps alternate between two buffers,
//! so the launch needs no copy and no second launch for the steps left over:
//! the last sweep fuses what is left.

use std::fmt::{self, Write as _};

use super::Gen;
use crate::backend::Writer;
use crate::codegen::names::slot_name;

impl Gen<'_> {
    /// The buffers the sweeps alternate between, per time level the launch
    /// writes (the last one, and a leapfrog's level before it): the
    /// launcher's names of what it writes (`out`) and starts from (`cur_u`),
    /// and the kernel's suffix of `a` (what the launch starts from) and `b`
    /// (what the first sweep writes).
    fn alternated(&self) -> Vec<(String, String, &'static str)> {
        let mut levels = vec![("out".to_string(), slot_name(self.st, self.streamed()), "")];
        if self.leapfrog() {
            let prev = slot_name(self.st, self.own_prev());
            levels.push(("out_prev".into(), prev, "_prev"));
        }
        levels
    }

    /// The kernel's parameters (`kernel`) or the launcher's: `temporal`'s,
    /// with the buffers the sweeps alternate between ([`Self::alternated`])
    /// all written, and `steps` for `levels`.
    pub(super) fn persistent_parameters(&self, kernel: bool) -> Vec<String> {
        let t = self.st.dtype.c();
        let qualifier = if kernel { "__restrict__" } else { "" };
        let mut renamed = Vec::new();
        for (written, start, suffix) in self.alternated() {
            renamed.push((written, format!("b{suffix}")));
            renamed.push((start, format!("a{suffix}")));
        }
        let mut p = self.parameters(qualifier, kernel);
        for param in &mut p {
            let name = param.rsplit(['*', ' ']).next().unwrap_or_default();
            if let Some((outer, inner)) = renamed.iter().find(|(outer, _)| outer == name) {
                *param = format!("{t} *{}", if kernel { inner } else { outer });
            }
        }
        let c = if kernel { "const " } else { "" };
        p.push(format!("{c}unsigned long long steps"));
        p
    }

    /// The body of a `persistent` kernel (see the module documentation).
    pub(super) fn persistent(&self, w: &mut Writer) -> fmt::Result {
        let grid = self.temporal_grid(&self.plan.chunk.to_string());
        let axes = ["x", "y", "z"];
        let t = self.plan.time_block;
        let ty = self.st.dtype.c();
        let named: Vec<String> = self
            .alternated()
            .iter()
            .flat_map(|(written, start, suffix)| {
                [
                    format!("`b{suffix}`: the launcher's `{written}`"),
                    format!("`a{suffix}`: the launcher's `{start}`"),
                ]
            })
            .collect();
        writeln!(
            w,
            "/* The launch starts from `a`; the first sweep writes `b`. {}. */",
            named.join(", ")
        )?;
        writeln!(
            w,
            "/* The tiles of a `temporal` launch, which the blocks of this one take in turn. */"
        )?;
        let ix = self.index();
        let mut names = Vec::new();
        for (c, g) in axes.iter().zip(&grid) {
            writeln!(w, "const {ix} tiles_{c} = {g};")?;
            names.push(format!("tiles_{c}"));
        }
        writeln!(w, "const {ix} tiles = {};", names.join(" * "))?;
        writeln!(
            w,
            "/* Sweeps of {t} fused steps (the last one fuses what is left): even sweeps read `a` and write `b`, odd ones the other way. */"
        )?;
        let head = format!("for (unsigned long long done = 0; done < steps; done += {t})");
        w.block(head, |w| {
            writeln!(
                w,
                "const int levels = steps - done < {t} ? (int)(steps - done) : {t};"
            )?;
            writeln!(w, "const bool odd = done / {t} % 2 == 1;")?;
            for (written, start, x) in self.alternated() {
                writeln!(w, "{ty} *const {written} = odd ? a{x} : b{x};")?;
                writeln!(w, "const {ty} *const {start} = odd ? b{x} : a{x};")?;
            }
            let head = format!(
                "for ({ix} tile_index = blockIdx.x; tile_index < tiles; tile_index += gridDim.x)"
            );
            w.block(head, |w| {
                writeln!(w, "const {ix} tile_x = tile_index % tiles_x;")?;
                if grid.len() == 2 {
                    writeln!(w, "const {ix} tile_y = tile_index / tiles_x;")?;
                } else {
                    writeln!(w, "const {ix} tile_y = tile_index / tiles_x % tiles_y;")?;
                    writeln!(w, "const {ix} tile_z = tile_index / (tiles_x * tiles_y);")?;
                }
                self.temporal(w)
            })?;
            writeln!(
                w,
                "/* Every tile of this sweep is written before the next sweep reads any. */"
            )?;
            writeln!(w, "cooperative_groups::this_grid().sync();")?;
            Ok(())
        })?;
        Ok(())
    }

    /// Launches the `persistent` kernel cooperatively: as many blocks as the
    /// device keeps resident at once (a grid-wide barrier needs them all
    /// running), or `occupancy` per multiprocessor if fewer, at most one per
    /// tile.
    pub(super) fn persistent_launch(&self, w: &mut Writer) -> fmt::Result {
        let api = self.d.api;
        let bytes = self.allow_shared(w)?;
        let kernel = self.kernel_name();
        let tiles: Vec<String> = self
            .temporal_grid(&self.plan.chunk.to_string())
            .iter()
            .map(|g| format!("({g})"))
            .collect();
        writeln!(w, "const dim3 block({});", self.temporal_threads())?;
        writeln!(w, "const ptrdiff_t tiles = {};", tiles.join(" * "))?;
        self.residency(w, &kernel, bytes)?;
        if let Some(k) = self.plan.occupancy {
            writeln!(
                w,
                "/* `occupancy = {k}`: fewer blocks, each taking more tiles in turn. */"
            )?;
            w.guarded(
                format_args!("if (per_multiprocessor > {k})"),
                format_args!("per_multiprocessor = {k};"),
            )?;
        }
        writeln!(
            w,
            "const ptrdiff_t resident = (ptrdiff_t)multiprocessors * per_multiprocessor;"
        )?;
        w.guarded(
            "if (resident == 0)",
            format_args!("return (int){api}ErrorCooperativeLaunchTooLarge;"),
        )?;
        writeln!(
            w,
            "const dim3 grid((unsigned)(tiles < resident ? tiles : resident));"
        )?;
        self.literal_values(w)?;
        let mut names: Vec<String> = self.arguments().split(", ").map(String::from).collect();
        if !self.wide {
            writeln!(w, "/* The extents as the kernel takes them, 32-bit. */")?;
            for (a, name) in names.iter_mut().take(self.dims()).enumerate() {
                writeln!(w, "const int n{a}_32 = (int)n{a};")?;
                *name = format!("n{a}_32");
            }
        }
        let arguments: Vec<String> = names
            .iter()
            .map(String::as_str)
            .chain(["steps"])
            .map(|a| format!("(void *)&{a}"))
            .collect();
        writeln!(w, "void *arguments[] = {{{}}};", arguments.join(", "))?;
        writeln!(
            w,
            "return (int){api}LaunchCooperativeKernel({kernel}, grid, block, arguments, {bytes}, stream);"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::temporal::tests::{cuda, leapfrog, stencil};
    use crate::backend::gpu::{HIP, fit, resolve, source};

    #[test]
    fn blocks_take_the_tiles_of_a_temporal_launch_in_turn_between_grid_barriers() {
        let mut st = stencil(
            "\"y\", \"x\"",
            "u[-1,0] + u[0,-1] + u[0,1] + u[1,0] + k[0,0]",
            "time_block = 3\nvector = 2\n",
        );
        st.tiling.cuda.strategy = crate::ir::Strategy::Persistent;
        let code = cuda(&st).unwrap();
        for line in [
            "#include <cooperative_groups.h>",
            // Both buffers are written: no `const`, no `__restrict__` on them.
            "(const ptrdiff_t n0, const ptrdiff_t n1, float *b, float *a, const float *__restrict__ cur_k, const unsigned long long steps)",
            "const ptrdiff_t tiles_x = (((n1 - 1 - 1) + 58 - 1) / 58 + 4 - 1) / 4;",
            "for (unsigned long long done = 0; done < steps; done += 3) {",
            "const int levels = steps - done < 3 ? (int)(steps - done) : 3;",
            "const float *const cur_u = odd ? b : a;",
            "for (ptrdiff_t tile_index = blockIdx.x; tile_index < tiles; tile_index += gridDim.x) {",
            "const ptrdiff_t tile = ((ptrdiff_t)tile_x * 4 + threadIdx.x / 32) * 58;",
            "    continue;",
            "const ptrdiff_t z0 = 1 + (ptrdiff_t)tile_y * 256;",
            "cooperative_groups::this_grid().sync();",
            // The launcher: no more blocks than stay resident, at most one per tile.
            "(ptrdiff_t n0, ptrdiff_t n1, float *out, float *cur_u, const float *cur_k, unsigned long long steps, cudaStream_t stream)",
            "const cudaError_t status = stencil_residency((const void *)p_cuda__s__update_u_kernel, 128, 0, &multiprocessors, &per_multiprocessor);",
            // Asked of the runtime once per device, kernel and shape.
            "status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_multiprocessor, kernel, threads, bytes);",
            "const dim3 grid((unsigned)(tiles < resident ? tiles : resident));",
            "void *arguments[] = {(void *)&n0, (void *)&n1, (void *)&out, (void *)&cur_u, (void *)&cur_k, (void *)&steps};",
            "return (int)cudaLaunchCooperativeKernel(p_cuda__s__update_u_kernel, grid, block, arguments, 0, stream);",
        ] {
            assert!(code.contains(line), "`{line}` missing from:\n{code}");
        }
        let persistent = &code[..code.find("/* The kernel of launches of one step").unwrap()];
        assert!(
            !persistent.contains("blockIdx.y") && !persistent.contains("return;"),
            "{code}"
        );
        assert!(!code.contains("if (per_multiprocessor >"), "{code}");
        // `occupancy` caps the blocks per multiprocessor; the kernel is the same.
        st.tiling.cuda.occupancy = Some(1);
        let capped = cuda(&st).unwrap();
        for line in [
            "blocks of 1 x 128 threads (y, x), at most 1 resident per multiprocessor.",
            "if (per_multiprocessor > 1)\n        per_multiprocessor = 1;",
        ] {
            assert!(capped.contains(line), "`{line}` missing from:\n{capped}");
        }
        let kernel =
            |c: &str| c[c.find("#include").unwrap()..c.find("extern \"C\"").unwrap()].to_string();
        assert_eq!(kernel(&capped), kernel(&code));
    }

    #[test]
    fn a_leapfrogs_sweeps_alternate_both_levels() {
        let mut st = leapfrog(
            "\"z\", \"y\", \"x\"",
            "f64",
            "0.1*(u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,1])",
            "time_block = 2\n",
        );
        st.tiling.cuda.strategy = crate::ir::Strategy::Persistent;
        let code = cuda(&st).unwrap();
        for line in [
            // The launcher's levels are the kernel's `a` (start) and `b` (first written) pairs.
            "(const int n0, const int n1, const int n2, double *b, double *b_prev, double *a_prev, double *a, const unsigned long long steps)",
            "double *const out = odd ? a : b;",
            "const double *const cur_u = odd ? b : a;",
            "double *const out_prev = odd ? a_prev : b_prev;",
            "const double *const prev_u = odd ? b_prev : a_prev;",
            "out_prev[q * s0 + (i1 + j) * s1 + i2] = win[s - 1][1][j];",
            "(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, double *out, double *out_prev, double *prev_u, double *cur_u, unsigned long long steps, cudaStream_t stream)",
            // One step runs the single-step kernel, into the buffer of the level before the last.
            "if (steps == 1) {\n        if (n0 * n1 * n2 <= 2147483647 && n2 % 2 == 0 && (size_t)out_prev % 16 == 0 && (size_t)prev_u % 16 == 0 && (size_t)cur_u % 16 == 0) {",
            "p_cuda__s__update_u_step_kernel<<<grid, block, 0, stream>>>(n0, n1, n2, out_prev, prev_u, cur_u);",
            "p_cuda__s__update_u_step_scalar_kernel<<<grid, block, 0, stream>>>(n0, n1, n2, out_prev, prev_u, cur_u, chunk);",
            "void *arguments[] = {(void *)&n0_32, (void *)&n1_32, (void *)&n2_32, (void *)&out, (void *)&out_prev, (void *)&prev_u, (void *)&cur_u, (void *)&steps};",
        ] {
            assert!(code.contains(line), "`{line}` missing from:\n{code}");
        }
    }

    #[test]
    fn refusals_of_its_tiling_name_it() {
        let mut st = stencil(
            "\"y\", \"x\"",
            "u[0,-4] + u[0,4]",
            "time_block = 9\nvector = 1\n",
        );
        st.tiling.cuda.strategy = crate::ir::Strategy::Persistent;
        let err = cuda(&st).unwrap_err();
        assert!(
            err.starts_with("`persistent` with `time_block = 9` recomputes 72 cells along `x`"),
            "{err}"
        );
    }

    #[test]
    fn three_d_tiles_keep_their_rings_and_hip_spells_its_own_names() {
        let mut st = stencil(
            "\"z\", \"y\", \"x\"",
            "u[-1,0,0] + u[0,-1,0] + u[0,0,1] + u[1,0,0]",
            "time_block = 2\n",
        );
        st.tiling.hip.strategy = crate::ir::Strategy::Persistent;
        let plan = resolve(&st.tiling.hip, &st, &HIP)
            .and_then(|p| fit(p, false, &st, &HIP))
            .unwrap();
        let code = source(&st, &crate::analysis::analyse(&st), &plan, "p", &HIP);
        for line in [
            "#include <hip/hip_cooperative_groups.h>",
            "const ptrdiff_t tile_z = tile_index / (tiles_x * tiles_y);",
            "const ptrdiff_t i1 = 1 + (ptrdiff_t)tile_y * ",
            "const ptrdiff_t z0 = 1 + (ptrdiff_t)tile_z * 128;",
            "__syncthreads();",
            "status = hipDeviceGetAttribute(multiprocessors, hipDeviceAttributeMultiprocessorCount, device);",
            "#include <mutex>",
            "return (int)hipLaunchCooperativeKernel(",
        ] {
            assert!(code.contains(line), "`{line}` missing from:\n{code}");
        }
    }
}
