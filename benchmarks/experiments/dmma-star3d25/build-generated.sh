#!/bin/bash
# Builds build/gen: the generated `tensor` kernels (before and after a
# change, as files given: OLD_STAR, OLD_ACOUSTIC) against the generated
# `stream` (A) and the prototype's best single step (J), for star3d25 and
# acoustic25 in f64, timed by ../fused3d-ab/harness.py. Run from this
# directory with nvcc 13.0 on PATH; on the GPU: build/gen star3d25 512 and
# build/gen acoustic25 300 994 750.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work-gen && mkdir -p work-gen && cd work-gen
source "$root/benchmarks/experiments/dmma-star3d25/kernels.sh"
baselines
{ echo "#define LEVELS 1"; echo "#define AHEAD 4"; echo "#define ZCN 256"; cat ../star_dmma.cu; } | sed '/marker for the harness/d; /stencils_cuda__acoustic25__update_u/d' > J_star3d25_f64.cu
[ -n "${OLD_STAR:-}" ] && cp "$OLD_STAR" S_star3d25_f64.cu
[ -n "${OLD_ACOUSTIC:-}" ] && cp "$OLD_ACOUSTIC" S_acoustic25_f64.cu
../../fused3d-ab/compile.sh ../build/gen
