#!/bin/bash
# Builds build/cells for acoustic25 f32, timed by ../fused3d-ab/harness.py:
# A the generated `stream`; N the ring kernel as generated at 4fb9046
# (rings-4fb9046.cu: the grids read at the cell loaded from global memory
# by each lane, a lane a row), O the same without the launcher's single
# steps on rows of whole 64-byte lines; X the ring kernel with those grids
# copied into shared memory by rows (rings-cells.cu, as generated with
# cells-rings.patch applied to 4fb9046), without the single steps. Run
# from this directory with nvcc 13.0 on PATH; on the GPU: build/cells
# acoustic25 N0 N1 N2. P, Q, R: wide.py (rows of 16-byte quads only).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
source "$root/benchmarks/experiments/ring-inputs-f32/acoustic.sh"
rm -rf work-cells && mkdir -p work-cells && cd work-cells
generate A_acoustic25_f32.cu 'strategy = "stream"'
cp ../rings-4fb9046.cu N_acoustic25_f32.cu
unsplit N_acoustic25_f32.cu O_acoustic25_f32.cu
cp ../rings-cells.cu X_acoustic25_f32.cu
python3 ../wide.py
../../fused3d-ab/compile.sh ../build/cells
