#!/bin/bash
# Builds build/ring: ring.cu's variants (README.md) against the generated
# `auto` for acoustic25 f32 (A: `stream`), timed by ../fused3d-ab/harness.py.
# Run from this directory with nvcc 13.0 on PATH; on the GPU:
# build/ring acoustic25 300 994 750 (the suite's grid).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work && mkdir -p work && cd work
cp "$root/examples/suite/stencils/acoustic25.stencil.toml" A.toml
(cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/A.toml" cuda) > A_acoustic25_f32.cu
variant() { # letter macros...
    local v=$1; shift
    { for m in "$@"; do echo "#define $m"; done; cat ../ring.cu; } > "${v}_acoustic25_f32.cu"
}
variant R                         # 32 x 32 tiles, 4 planes in flight, chunks of 74 planes, 3 blocks
variant S "AHEAD 2"
variant U "ZCN 146"
variant V "TY 16" "MINB 5"        # 16 x 32 tiles
variant W "TY 16" "MINB 5" "ZCN 146"
variant X "MINB 2"                # 32 x 32 tiles, 2 blocks (no spill)
variant Y "TY 16" "MINB 4"
variant B "TY 16" "MINB 4" "AHEAD 2"
variant C "TY 16" "MINB 4" "AHEAD 6"
variant D "TY 16" "MINB 4" "ZCN 146"
variant E "TY 16" "MINB 4" "ZCN 37"
variant F "MINB 2" "AHEAD 6"
variant G "TY 24" "MINB 3"
../../fused3d-ab/compile.sh ../build/ring
