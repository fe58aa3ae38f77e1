#!/bin/bash
# Builds build/ab for the vector experiment (README.md beside this file):
# the generated star3d25 f32 kernels it compares with (A: `temporal`, 2 steps,
# [1, 8, 64], coarsen 4; Q: `auto`, which is `stream` with 4-cell vectors) and
# variants of star3d25_v4.cu, all timed by ../fused3d-ab/harness.py.
# Run from this directory with nvcc 13.0 on PATH (.ci/run shows how to get it).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work && mkdir -p work && cd work
spec="$root/examples/suite/stencils/star3d25.stencil.toml"
sed 's/dtype = "f64"/dtype = "f32"/' "$spec" > auto.toml
cp auto.toml t2.toml
printf '\n[tiling.cuda]\nstrategy = "temporal"\ntime_block = 2\nblock = [1, 8, 64]\ncoarsen = 4\n' >> t2.toml
(cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/t2.toml" cuda) > A_star3d25_f32.cu
(cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/auto.toml" cuda) > Q_star3d25_f32.cu
variant() { # letter, then the macros star3d25_v4.cu reads
    local v=$1; shift
    { for d in "$@"; do echo "#define $d"; done; cat ../star3d25_v4.cu; } > "${v}_star3d25_f32.cu"
}
variant B "LAG 1"
variant C "LAG 2"
variant D "LAG 3"
variant E "LAG 4"
variant F "LAG 3" "ZCN 168"
variant G "LAG 4" "ZCN 168"
variant H "LAG 3" "RW 2" "TYN 16"
variant I "LAG 3" "SKIP 0"
variant J "LAG 1" "SYNC 0"
variant K "LAG 4" "TYN 40"
python3 ../../fused3d-ab/harness.py
cd build
for f in [A-Z]_*.cu; do nvcc -arch=sm_90 -O3 -c "$f" -o "$f.o"; done
cuda_lib=$(dirname "$(dirname "$(command -v nvcc)")")/lib
mkdir -p ../../build
nvcc -arch=sm_90 -O3 main.cu ./*.o -L"$cuda_lib" -L"$cuda_lib"64 -o ../../build/ab
echo "built build/ab; run it as: build/ab star3d25 512"
