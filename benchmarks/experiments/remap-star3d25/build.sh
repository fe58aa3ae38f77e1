#!/bin/bash
# Builds build/ab: star3d25 f32, `auto`'s launch of one step (A, the reference and
# the bar: `stream` in 16-byte vectors), `auto`'s fused launch of 2 steps (B) and
# rewrites of B: split.py's (C: warps of their own for each level) and remap.py's
# (R: the same tile and threads, remapped in order of need; S: threads for level 1's
# vectors only, loading the halo too; Q: R with level 2 on whole rows of 14 vectors),
# trees.py's sums as balanced trees, of B (D) and of A (E), and split2.py's
# F: a level a warp on the vectors each level needs), and b12.py's G: B without
# its 4 warps that compute no level.
# Run with nvcc 13.0 on PATH; on the GPU: run.sh OUT.
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1  # remap.py and b12.py import halo.py: no __pycache__ here
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work && mkdir -p work && cd work
sed 's/dtype *= *"f64"/dtype = "f32"/' "$root/examples/suite/stencils/star3d25.stencil.toml" > star3d25.toml
(cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/star3d25.toml" cuda) > B_star3d25_f32.cu
{ cat B_star3d25_f32.cu; echo '/* harness: levels 1 */'; } > A_star3d25_f32.cu
python3 ../split.py B_star3d25_f32.cu C_star3d25_f32.cu
python3 ../split2.py B_star3d25_f32.cu F_star3d25_f32.cu
python3 ../b12.py B_star3d25_f32.cu G_star3d25_f32.cu
python3 ../trees.py B_star3d25_f32.cu D_star3d25_f32.cu
python3 ../trees.py A_star3d25_f32.cu E_star3d25_f32.cu
python3 ../remap.py B_star3d25_f32.cu R_star3d25_f32.cu 16 32 threads
python3 ../remap.py B_star3d25_f32.cu S_star3d25_f32.cu 16 32 loads
python3 ../remap.py B_star3d25_f32.cu Q_star3d25_f32.cu 16 32 threads-rows
../../fused3d-ab/compile.sh ../build/ab
