#!/usr/bin/env bash
# Builds OUT/check_<stencil> (nvcc, sm_90): ../box3d-bounds/cpu-check/main.cpp
# (-DTOLERANCE=1e-5) linked with A
# (../box3d-bounds/gen.sh, run first) and the z-sums kernel stencil-build
# generates for the same spec, on the GPU: 3 launches of 1 and 2 steps on
# four odd grids, exit 1 where they differ by more than 1e-5. On the GPU
# machine: ./check_<stencil>, then under compute-sanitizer --tool memcheck,
# racecheck and synccheck (h200-2026-11-28-sanitizer.txt).
#   sanitize.sh OUT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bounds="$here/../box3d-bounds/work"
out=$(realpath -m "$1")
mkdir -p "$out"
lib=$(dirname "$(dirname "$(command -v nvcc)")")/lib
tmp=$(mktemp -d)
for s in j3d17pt j3d27pt poisson; do
    sed 's/stencils_cuda__/A_/g' "$bounds/A_${s}_f32.cu" > "$tmp/A_$s.cu"
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$bounds/specs/$s.stencil.toml" cuda) |
        sed 's/stencils_cuda__/G_/g' > "$tmp/G_$s.cu"
    nvcc -arch=sm_90 -O3 -lineinfo -x cu -DTOLERANCE=1e-5 -Da_update="A_${s}__update_u" -Dt_update="G_${s}__update_u" \
        "$here/../box3d-bounds/cpu-check/main.cpp" "$tmp/A_$s.cu" "$tmp/G_$s.cu" -L"$lib" -L"${lib}64" -o "$out/check_$s"
done
