#!/usr/bin/env bash
# Writes the kernels of this experiment into work/ (README.md): for j3d17pt,
# j3d27pt and poisson in f32, A = `auto` as generated, B and C = A with the
# fused kernel's launch bounds asking for 4 and 2 resident blocks instead of
# 3, Q = `stream` in 16-byte vectors (the suite's `stream_q4_v`), and T =
# the hand-written T_j3d17pt_f32.cu (two columns a thread), and j3d27pt's and
# poisson's written from it by make_t.py. Then
#   cd work && ../../fused3d-ab/compile.sh ../build/ab
# and on the GPU machine `build/ab` (and `build/ab j3d17pt 300`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
mkdir -p "$here/work/specs"
cd "$here/work"
for s in j3d17pt j3d27pt poisson; do
    sed 's/^dtype = "f64"/dtype = "f32"/' "$root/examples/suite/stencils/$s.stencil.toml" > "specs/$s.stencil.toml"
    {
        sed "s/^name  = \"$s\"/name  = \"${s}_q\"/" "specs/$s.stencil.toml"
        printf '\n[tiling.cuda]\nstrategy = "stream"\nblock = [1, 2, 64]\nchunk = 4\nvector = 4\n'
    } > "specs/${s}_q.stencil.toml"
    generate() { (cd "$root" && cargo run -q -p stencil-build --example generate -- "$here/work/specs/$1.stencil.toml" cuda); }
    generate "$s" > "A_${s}_f32.cu"
    sed 's/__launch_bounds__(256, 3)/__launch_bounds__(256, 4)/' "A_${s}_f32.cu" > "B_${s}_f32.cu"
    sed 's/__launch_bounds__(256, 3)/__launch_bounds__(256, 2)/' "A_${s}_f32.cu" > "C_${s}_f32.cu"
    generate "${s}_q" | sed "s/${s}_q/${s}/g" > "Q_${s}_f32.cu"
done
cp "$here/T_j3d17pt_f32.cu" .
for s in j3d27pt poisson; do python3 "$here/make_t.py" "$s"; done
