#!/usr/bin/env bash
# Builds build/cbank: j2d9pt f64's CUDA as the checkout's generator writes it
# (at 9a2a2fb the fused kernel read a `__constant__` table), as three
# separately compiled files (three modules), timed by harness.cu:
#   a.cu  `auto`'s file (the fused kernel, its table, the single-step kernels);
#   n.cu  `naive`'s file;
#   c.cu  `naive`'s file and an unused `__constant__` table of 6 doubles.
# Needs nvcc (CUDA_PATH) and the workspace two levels up.
set -eu
cd "$(dirname "$0")"
root=$(cd ../../.. && pwd)
mkdir -p build
spec=$root/examples/suite/stencils/j2d9pt.stencil.toml
printf '\n[tiling.cuda]\nstrategy = "naive"\n' | cat $spec - > build/naive.stencil.toml
gen() { (cd $root && cargo run -q --release -p stencil-build --example generate -- "$1" cuda); }
gen $spec | sed 's/stencils_cuda__j2d9pt__/A_/g' > build/a.cu
gen "$PWD/build/naive.stencil.toml" | sed 's/stencils_cuda__j2d9pt__/N_/g' > build/n.cu
gen "$PWD/build/naive.stencil.toml" | sed 's/stencils_cuda__j2d9pt__/C_/g' > build/c.cu
cat >> build/c.cu <<'CU'

static __constant__ double C_lit[6] = {0.00847457627118644, 7.0, 5.0, 9.0, 12.0, 15.0};
__global__ void C_dummy(double *out) { out[threadIdx.x] = C_lit[threadIdx.x % 6]; }
extern "C" void C_touch(double *p) { C_dummy<<<1, 32>>>(p); }
CU
for f in a n c; do nvcc -O3 -arch=sm_90 -c -o build/$f.o build/$f.cu; done
nvcc -O3 -arch=sm_90 -c -o build/harness.o harness.cu
nvcc -arch=sm_90 -L"$CUDA_PATH/lib" -o build/cbank build/a.o build/n.o build/c.o build/harness.o
