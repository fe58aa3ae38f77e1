#!/bin/bash
# Builds build/dec: star_dmma.cu's fused leapfrog V (acoustic25, LEAP 1, 24 x 32
# level-1 tiles, full z, AHEAD 2: session 18's best, 0.96x `tensor`) against the
# same kernel with its two levels decoupled by named barriers (DEC 1):
#   B: V with DEC (7 level-1 slots: level 1 up to 3 planes ahead);
#   C: V with DEC and 6 slots (2 planes ahead);
#   E: B with AHEAD 3; F: B with STACK 1 (m16n8k4 products);
#   I: O (star3d25, 24 x 32 tiles) with DEC; O itself;
#   G, H, J: V with DEC 2 (level 1's barrier merged into the "empty" one) and
#         7, 6, 5 slots; K: G with AHEAD 3; L: O with DEC 2;
# and the generated `stream` (A) and `tensor` (T), timed by
# ../fused3d-ab/harness.py. Run from this directory with nvcc 13.0 on PATH; on
# the GPU: build/dec acoustic25 300 994 750 and build/dec star3d25 512.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work-dec && mkdir -p work-dec && cd work-dec
source "$root/benchmarks/experiments/dmma-star3d25/kernels.sh"
baselines
leap=("LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292")
dmma_variant V acoustic25 "${leap[@]}" "AHEAD 2"
dmma_variant B acoustic25 "${leap[@]}" "AHEAD 2" "DEC 1"
dmma_variant C acoustic25 "${leap[@]}" "AHEAD 2" "DEC 1" "SLOTS1 6"
dmma_variant E acoustic25 "${leap[@]}" "AHEAD 3" "DEC 1"
dmma_variant F acoustic25 "${leap[@]}" "AHEAD 2" "DEC 1" "STACK 1"
dmma_variant G acoustic25 "${leap[@]}" "AHEAD 2" "DEC 2"
dmma_variant H acoustic25 "${leap[@]}" "AHEAD 2" "DEC 2" "SLOTS1 6"
dmma_variant J acoustic25 "${leap[@]}" "AHEAD 2" "DEC 2" "SLOTS1 5"
dmma_variant K acoustic25 "${leap[@]}" "AHEAD 3" "DEC 2"
dmma_variant L star3d25 "LEVELS 2" "TILEY 24" "ZCN 252" "DEC 2"
dmma_variant O star3d25 "LEVELS 2" "TILEY 24" "ZCN 252"
dmma_variant I star3d25 "LEVELS 2" "TILEY 24" "ZCN 252" "DEC 1"
../../fused3d-ab/compile.sh ../build/dec
