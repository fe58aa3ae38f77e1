#!/bin/bash
# Builds build/leap: star_dmma.cu's two fused steps of acoustic25 f64 (LEAP 1)
# and of star3d25 f64 in tiles of 24 x 32 cells, against the generated
# `stream` (A) and `tensor` (T), timed by ../fused3d-ab/harness.py. Run from
# this directory with nvcc 13.0 on PATH; on the GPU: build/leap acoustic25
# 300 994 750 and build/leap star3d25 512.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work-leap && mkdir -p work-leap && cd work-leap
source "$root/benchmarks/experiments/dmma-star3d25/kernels.sh"
baselines
dmma_variant K acoustic25 "LEVELS 2" "LEAP 1" "ZCN 146"
dmma_variant L acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 146"
dmma_variant M acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 98"
dmma_variant N acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292"
dmma_variant O star3d25 "LEVELS 2" "TILEY 24" "ZCN 252"
dmma_variant P star3d25 "LEVELS 2" "ZCN 252"
../../fused3d-ab/compile.sh ../build/leap
