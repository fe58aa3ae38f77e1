#!/bin/bash
# Builds build/knobs: star_dmma.cu's fused steps N (acoustic25, LEAP 1, 24 x 32
# tiles, full z) and O (star3d25) of build-leapfrog.sh, and variants of them:
#   Q, R: SPLIT 1 (the in-plane sum in 4 accumulator chains of 2 products);
#   V, W, X, Y: AHEAD 2, 5, 6, 1 (planes of level 0 in flight; N has 3);
#   Z: AHEAD 2 in chunks of 146 planes;
#   D, E: BPW 2 (two 8 x 8 blocks a warp), AHEAD 2 / 3, at the 168 registers
#         9 warps can have (registers go to warps in fours; 32 x 32 tiles
#         would have 128 and spill more);
#   F, G: V in tiles of 24 x 40 and 40 x 24 (level 1's; 23 warps);
#   U: the generated `tensor` T rewritten by split.py (4 chains);
# against the generated `stream` (A) and `tensor` (T), timed by
# ../fused3d-ab/harness.py. Run from this directory with nvcc 13.0 on PATH; on
# the GPU: build/knobs acoustic25 300 994 750 and build/knobs star3d25 512.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work-knobs && mkdir -p work-knobs && cd work-knobs
source "$root/benchmarks/experiments/dmma-star3d25/kernels.sh"
baselines ../split.py U
dmma_variant N acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292"
dmma_variant Q acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "SPLIT 1"
dmma_variant V acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "AHEAD 2"
dmma_variant W acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "AHEAD 5"
dmma_variant X acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "AHEAD 6"
dmma_variant Y acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "AHEAD 1"
dmma_variant Z acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 146" "AHEAD 2"
dmma_variant D acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "AHEAD 2" "BPW 2" "MAXREG 168"
dmma_variant E acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "AHEAD 3" "BPW 2" "MAXREG 168"
dmma_variant F acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "TILEX 40" "ZCN 292" "AHEAD 2"
dmma_variant G acoustic25 "LEVELS 2" "LEAP 1" "TILEY 40" "TILEX 24" "ZCN 292" "AHEAD 2"
dmma_variant O star3d25 "LEVELS 2" "TILEY 24" "ZCN 252"
dmma_variant R star3d25 "LEVELS 2" "TILEY 24" "ZCN 252" "SPLIT 1"
../../fused3d-ab/compile.sh ../build/knobs
