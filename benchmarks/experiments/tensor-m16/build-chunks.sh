#!/bin/bash
# Builds build/chunks: acoustic25 f64's `stream` in 16-byte vectors (blocks
# of 1 x 8 x 32) marching chunks of 64 (V), 16 (B), 8 (C) and 4 (D) planes,
# against `stream`'s defaults (A) and `auto` (U), timed by
# ../fused3d-ab/harness.py. Run from this directory with nvcc 13.0 on PATH;
# on the GPU: run-chunks.sh OUT.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work-chunks && mkdir -p work-chunks && cd work-chunks
source "$root/benchmarks/experiments/dmma-star3d25/kernels.sh"
s=acoustic25
generate A $s 'strategy = "stream"'
generate U $s 'strategy = "auto"'
generate V $s 'strategy = "stream"\nvector = 2'
generate B $s 'strategy = "stream"\nvector = 2\nchunk = 16'
generate C $s 'strategy = "stream"\nvector = 2\nchunk = 8'
generate D $s 'strategy = "stream"\nvector = 2\nchunk = 4'
../../fused3d-ab/compile.sh ../build/chunks
