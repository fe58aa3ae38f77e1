#!/bin/bash
# Builds build/vstream for acoustic25 f32, timed by ../fused3d-ab/harness.py:
# A the generated `stream` (its defaults: blocks of 1 x 8 x 32, chunks of 64
# planes, a cell a thread), V `stream` in 16-byte vectors (the suite's
# `stream_q4_v`: blocks of 1 x 2 x 64, chunks of 4 planes, 4 cells a thread;
# its scalar twin on rows that are not whole quads), R the generated `auto`
# (the ring kernel: grids of 8-byte pairs only). Run from this directory with
# nvcc 13.0 on PATH; on the GPU: build/vstream acoustic25 N0 N1 N2 (N2 even).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
source "$root/benchmarks/experiments/ring-inputs-f32/acoustic.sh"
rm -rf work-vstream && mkdir -p work-vstream && cd work-vstream
generate A_acoustic25_f32.cu 'strategy = "stream"'
generate V_acoustic25_f32.cu 'strategy = "stream"' 'block = [1, 2, 64]' 'chunk = 4' 'coarsen = 1' 'vector = 4'
generate R_acoustic25_f32.cu
../../fused3d-ab/compile.sh ../build/vstream
