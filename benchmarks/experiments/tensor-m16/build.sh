#!/bin/bash
# Builds build/ab: the generated `tensor` of star3d25 and acoustic25 f64 with
# its warps of 8 x 8 cells (T: `wide` forced false) and of 16 x 8 cells (W:
# forced true; acoustic25 through wide.py) against `stream` (A), `stream` in
# 16-byte vectors (V) and `auto` (U), timed by ../fused3d-ab/harness.py. Run
# from this directory with nvcc 13.0 on PATH; on the GPU: run.sh OUT.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work && mkdir -p work && cd work
source "$root/benchmarks/experiments/dmma-star3d25/kernels.sh"
for s in star3d25 acoustic25; do
    generate A $s 'strategy = "stream"'
    generate V $s 'strategy = "stream"\nvector = 2'
    generate U $s 'strategy = "auto"'
    generate T $s 'strategy = "tensor"'
done
# acoustic25 reads two grids more at the cell: its launcher runs warps of 8 x 8
# cells only, and wide.py gives it star3d25's choice (16 x 8 on even rows).
# W: 16 x 8 on every grid (odd rows then fail: their pairs are not 16-byte
# aligned); T: 8 x 8 on every grid, each of its instances kept.
cp T_star3d25_f64.cu W_star3d25_f64.cu
python3 ../wide.py T_acoustic25_f64.cu W_acoustic25_f64.cu
for f in W_star3d25_f64.cu W_acoustic25_f64.cu; do
    grep -q '^    const bool wide = ' "$f"
    sed -i 's/^    const bool wide = .*;/    const bool wide = true;/' "$f"
done
grep -q 'threads = wide ? 256 : 512;' T_star3d25_f64.cu
sed -i 's/_kernel<2, /_kernel<1, /g; s/threads = wide ? 256 : 512;/threads = 512;/' T_star3d25_f64.cu
../../fused3d-ab/compile.sh ../build/ab
