#!/bin/bash
# Builds build/m16: star_m16.cu's variants (U-Y) and the generated `tensor`
# kernels with stacked m16n8k4 products (Z, stack.py) against the generated
# `stream` (A) and `tensor` (T) of star3d25 and acoustic25 f64, timed by ../fused3d-ab/harness.py; and
# build/shapes (shapes.cu). Run from this directory with nvcc 13.0 on PATH; on
# the GPU: build/shapes; build/m16 star3d25 512; build/m16 acoustic25 300 994 750.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
mkdir -p build
cuda_lib=$(dirname "$(dirname "$(command -v nvcc)")")/lib
nvcc -arch=sm_90 -O3 shapes.cu -o build/shapes -L"$cuda_lib"
rm -rf work && mkdir -p work && cd work
source "$root/benchmarks/experiments/dmma-star3d25/kernels.sh"
variant() { # letter macros...
    local v=$1; shift
    { for m in "$@"; do echo "#define $m"; done; cat ../star_m16.cu; } > "${v}_star3d25_f64.cu"
}
baselines ../stack.py Z
variant U "WY 2" "WX 4" "AH 4"
variant V "WY 2" "WX 8" "AH 3"
variant W "WY 4" "WX 4" "AH 3"
variant X "WY 2" "WX 4" "AH 2" "MINB 2"
variant Y "WY 2" "WX 4" "AH 4" "ZC 128"
../../fused3d-ab/compile.sh ../build/m16
