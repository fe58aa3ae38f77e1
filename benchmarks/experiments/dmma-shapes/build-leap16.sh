#!/bin/bash
# Builds build/leap16: ../dmma-star3d25/star_dmma.cu's two fused steps with the
# in-plane sums as stacked m16n8k4 products (STACK 1) and without, and with one
# barrier for two planes (PAIR 1), against the
# generated `stream` (A), `tensor` (T) and `tensor` with stacked products (Z,
# stack.py), timed by ../fused3d-ab/harness.py. Run from this directory with
# nvcc 13.0 on PATH; on the GPU: build/leap16 acoustic25 300 994 750 and
# build/leap16 star3d25 512.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work-leap16 && mkdir -p work-leap16 && cd work-leap16
source "$root/benchmarks/experiments/dmma-star3d25/kernels.sh"
baselines ../stack.py Z
dmma_variant N acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292"
dmma_variant O acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "STACK 1"
dmma_variant P acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 146" "STACK 1"
dmma_variant Q acoustic25 "LEVELS 2" "LEAP 1" "ZCN 146" "STACK 1"
dmma_variant R star3d25 "LEVELS 2" "ZCN 252"
dmma_variant S star3d25 "LEVELS 2" "ZCN 252" "STACK 1"
dmma_variant U star3d25 "LEVELS 2" "TILEY 24" "ZCN 252" "STACK 1"
dmma_variant V acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "PAIR 1"
dmma_variant W acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "PAIR 1" "STACK 1"
dmma_variant X star3d25 "LEVELS 2" "TILEY 24" "ZCN 252" "PAIR 1" "STACK 1"
dmma_variant Y acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "PAIR 1" "STACK 1" "AHEAD 2"
../../fused3d-ab/compile.sh ../build/leap16
