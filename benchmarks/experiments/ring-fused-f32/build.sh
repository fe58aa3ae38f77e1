#!/bin/bash
# Builds build/fused: fused.cu's variants (README.md) against the generated
# `auto` for acoustic25 f32 (A: `stream`) and ../ring-f32's best single step
# (B), timed by ../fused3d-ab/harness.py. Run from this directory with nvcc
# 13.0 on PATH; on the GPU: build/fused acoustic25 300 994 750 (the suite's grid).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work && mkdir -p work && cd work
cp "$root/examples/suite/stencils/acoustic25.stencil.toml" spec.toml
# A: `stream` (what `auto` took before the ring kernel: the bar it must pass).
{ cat spec.toml; printf '\n[tiling.cuda]\nstrategy = "stream"\n'; } > A.toml
(cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/A.toml" cuda) > A_acoustic25_f32.cu
variant() { # letter source macros...
    local v=$1 src=$2; shift 2
    { for m in "$@"; do echo "#define $m"; done; cat "$src"; } > "${v}_acoustic25_f32.cu"
}
# R: the generated ring kernel (`temporal`, `vector = 4`: stencil-build's backend/gpu/temporal/rings.rs).
{ cat spec.toml; printf '\n[tiling.cuda]\nstrategy = "temporal"\ntime_block = 2\nvector = 4\n'; } > R.toml
(cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/R.toml" cuda) > R_acoustic25_f32.cu
variant B ../../ring-f32/ring.cu "TY 16" "MINB 4" "AHEAD 2"   # ring-f32's best single step
variant F ../fused.cu                  # 4 planes in flight, chunks of 146 planes
variant G ../fused.cu "AHEAD 2"
variant H ../fused.cu "AHEAD 6"
variant I ../fused.cu "ZCN 292"        # one chunk along z on the suite's grid
variant J ../fused.cu "ZCN 74"
variant K ../fused9.cu                 # unrolled by 9, 3 planes in flight
variant L ../fused9.cu "AHEAD 2"
variant M ../fused9.cu "ZCN 74"
variant N ../fused9.cu "STAGE 1" "FLUSHPLAN 0"  # outputs staged, stored a plane later in rows
variant O ../fused9.cu "STAGE 1" "AHEAD 2"
variant P ../fused9.cu "STAGE 1" "ZCN 74"
variant Q ../fused9.cu "STAGE 1" "ZCN 98"
variant S ../fused9.cu "STAGE 1" "ZCN 292"
variant T ../fused9.cu "STAGE 1" "ZCN 292" "FLUSHPLAN 0"
variant U ../fused9.cu "STAGE 1" "ZCN 292" "FLUSHPLAN 0" "AHEAD 2"
variant V ../fused9.cu "STAGE 1" "FLUSHPLAN 0" "AHEAD 2"
variant W ../lean.cu                   # U with copies and stores planned once: 2 planes in flight, one chunk
variant X ../lean.cu "AHEAD 3"
variant Y ../lean.cu "ZCN 146"
variant Z ../lean.cu "AHEAD 1"
../../fused3d-ab/compile.sh ../build/fused
