#!/bin/bash
# Builds the cluster experiment (README.md beside this file): the generated
# star3d25 kernels it times against, then cluster.cu, for sm_90.
# Run from this directory with nvcc on PATH (.ci/run shows how to get it).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
mkdir -p "${WORK:-build}"
work=$(cd "${WORK:-build}" && pwd)
spec="$root/examples/suite/stencils/star3d25.stencil.toml"
generate() { # name dtype tiling-keys
    local toml="$work/$1_$2.toml"
    sed "s/dtype = \"f64\"/dtype = \"$2\"/" "$spec" > "$toml"
    printf '\n[tiling.cuda]\n%b\n' "$3" >> "$toml"
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$toml" cuda) |
        sed "s/stencils_cuda__star3d25/g_$1_$2/g" > "$work/g_$1_$2.cu"
}
for d in f32 f64; do
    generate st "$d" 'strategy = "stream"'
    generate sc4 "$d" 'strategy = "stream"\ncoarsen = 4\nchunk = 256'
    generate ss4 "$d" 'strategy = "stream"\ncoarsen = 4\nchunk = 4'
    generate ss2w "$d" 'strategy = "stream"\nblock = [1, 4, 64]\ncoarsen = 2\nchunk = 2'
    generate sv4 "$d" 'strategy = "stream"\nblock = [1, 8, 32]\ncoarsen = 4\nchunk = 4\nvector = 2'
    generate sq4 "$d" 'strategy = "stream"\nblock = [1, 2, 64]\nchunk = 4\nvector = 2'
    generate t1 "$d" 'strategy = "temporal"\ntime_block = 1'
    generate t2 "$d" 'strategy = "temporal"\ntime_block = 2'
done
cuda_lib=$(dirname "$(dirname "$(command -v nvcc)")")/lib
nvcc -arch=sm_90 -O3 -std=c++17 cluster.cu "$work"/g_*.cu -o "$work/cluster" -L"$cuda_lib" -cudart static
echo "built $work/cluster; run it as: cluster 512"
