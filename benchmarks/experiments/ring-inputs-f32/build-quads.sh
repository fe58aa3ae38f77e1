#!/bin/bash
# Builds build/quads for acoustic25 f32, timed by ../fused3d-ab/harness.py:
# A the generated `stream`; N the generated `auto` at 4fb9046
# (rings-4fb9046.cu: single steps on rows of whole 64-byte lines), O its
# ring kernel on every grid; Y the generated `auto` now (the grids read at
# the cell loaded 16 bytes a lane where rows are whole 16-byte quads, the
# ring kernel on every grid of 8-byte pairs). Run from this directory with
# nvcc 13.0 on PATH; on the GPU: build/quads acoustic25 N0 N1 N2.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
source "$root/benchmarks/experiments/ring-inputs-f32/acoustic.sh"
rm -rf work-quads && mkdir -p work-quads && cd work-quads
generate A_acoustic25_f32.cu 'strategy = "stream"'
cp ../rings-4fb9046.cu N_acoustic25_f32.cu
unsplit N_acoustic25_f32.cu O_acoustic25_f32.cu
generate Y_acoustic25_f32.cu
../../fused3d-ab/compile.sh ../build/quads
