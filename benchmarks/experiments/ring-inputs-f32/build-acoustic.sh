#!/bin/bash
# Builds build/acoustic and build/acoustic2 for acoustic25 f32, timed by
# ../fused3d-ab/harness.py (README.md). build/acoustic: A the generated
# `stream`, R session 20's ring kernel (rings-04a811e.cu, as generated at
# 04a811e), B, C, D variants of R (variants.py). build/acoustic2: A, R and
# N the generated `auto` (the ring kernel with rotated columns, and single
# steps on the grids it does not suit). Run from this directory with nvcc
# 13.0 on PATH; on the GPU: build/acoustic2 acoustic25 N0 N1 N2.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
source "$root/benchmarks/experiments/ring-inputs-f32/acoustic.sh"
rm -rf work-acoustic && mkdir -p work-acoustic && cd work-acoustic
generate A_acoustic25_f32.cu 'strategy = "stream"'
cp ../rings-04a811e.cu R_acoustic25_f32.cu
python3 ../variants.py
../../fused3d-ab/compile.sh ../build/acoustic
cd .. && rm -rf work-acoustic2 && mkdir -p work-acoustic2 && cd work-acoustic2
generate A_acoustic25_f32.cu 'strategy = "stream"'
generate N_acoustic25_f32.cu
cp ../rings-04a811e.cu R_acoustic25_f32.cu
../../fused3d-ab/compile.sh ../build/acoustic2
