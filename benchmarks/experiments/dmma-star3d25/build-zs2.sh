#!/bin/bash
# Builds build/zs2: star_dmma.cu's fused leapfrog with level 2's z neighbours
# read from level 1's ring in shared memory (ZS2 1), which frees level 2's
# register window, so that 32 x 32 tiles (1.39 cell-levels a cell and step,
# 25 warps) fit without spilling:
#   V: session 18's best (24 x 32 tiles, AHEAD 2, register windows);
#   H: ZS2, 32 x 32, AHEAD 2 (225 KB of shared memory); I: the same, AHEAD 1;
#   J: ZS2, 24 x 32, AHEAD 2;
#   K: 32 x 32, AHEAD 2, register windows (session 16's K with AHEAD 2);
#   O, P: star3d25 24 x 32 (register windows) and ZS2 32 x 32;
# against the generated `stream` (A) and `tensor` (T), timed by
# ../fused3d-ab/harness.py. Run from this directory with nvcc 13.0 on PATH; on
# the GPU: build/zs2 acoustic25 300 994 750 and build/zs2 star3d25 512.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work-zs2 && mkdir -p work-zs2 && cd work-zs2
source "$root/benchmarks/experiments/dmma-star3d25/kernels.sh"
baselines
dmma_variant V acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "AHEAD 2"
dmma_variant H acoustic25 "LEVELS 2" "LEAP 1" "ZCN 292" "AHEAD 2" "ZS2 1"
dmma_variant I acoustic25 "LEVELS 2" "LEAP 1" "ZCN 292" "AHEAD 1" "ZS2 1"
dmma_variant J acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "AHEAD 2" "ZS2 1"
dmma_variant K acoustic25 "LEVELS 2" "LEAP 1" "ZCN 292" "AHEAD 2"
dmma_variant O star3d25 "LEVELS 2" "TILEY 24" "ZCN 252"
dmma_variant P star3d25 "LEVELS 2" "ZCN 252" "AHEAD 2" "ZS2 1"
../../fused3d-ab/compile.sh ../build/zs2
