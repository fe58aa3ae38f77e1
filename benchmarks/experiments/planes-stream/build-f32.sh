#!/bin/bash
# Builds build/ab32: star3d25 and acoustic25 in f32, `stream`'s defaults (A),
# `stream` of 1 x 2 x 64 threads marching 4 planes in 4-cell vectors (Q, the
# single step `auto`'s fused plans run), `auto` (U: fused kernels, two steps
# a launch), and `stream` marching 64 planes in vectors: blocks of 1 x 8 x 32
# threads with 4 cells (V) or 2 (W) a thread, 1 x 4 x 64 with 2 (X). Run from
# this directory with nvcc 13.0 on PATH; on the GPU: run-f32.sh OUT.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work-f32 && mkdir -p work-f32 && cd work-f32
generate() { # letter stencil tiling-keys: the suite's stencil in f32 with [tiling.cuda] set
    sed 's/dtype *= *"f64"/dtype = "f32"/' "$root/examples/suite/stencils/$2.stencil.toml" > "$1_$2.toml"
    printf '\n[tiling.cuda]\n%b\n' "$3" >> "$1_$2.toml"
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/$1_$2.toml" cuda) > "$1_$2_f32.cu"
}
for s in star3d25 acoustic25; do
    generate A $s 'strategy = "stream"'
    generate Q $s 'strategy = "stream"\nblock = [1, 2, 64]\nchunk = 4\nvector = 4'
    generate V $s 'strategy = "stream"\nvector = 4'
    generate W $s 'strategy = "stream"\nvector = 2'
    generate X $s 'strategy = "stream"\nvector = 2\nblock = [1, 4, 64]'
    generate U $s 'strategy = "auto"'
done
../../fused3d-ab/compile.sh ../build/ab32
