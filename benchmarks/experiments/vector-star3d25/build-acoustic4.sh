#!/bin/bash
# Builds build/acoustic4: acoustic_v4.cu (README.md) against the generated
# `auto` (A: `stream`), timed by ../fused3d-ab/harness.py. Run from this
# directory with nvcc 13.0 on PATH; on the GPU: build/acoustic4 acoustic25
# 300 994 750 (the suite's grid).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work-acoustic4 && mkdir -p work-acoustic4 && cd work-acoustic4
cp "$root/examples/suite/stencils/acoustic25.stencil.toml" A.toml
(cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/A.toml" cuda) > A_acoustic25_f32.cu
variant() { # letter macros...
    local v=$1; shift
    { for m in "$@"; do echo "#define $m"; done; cat ../acoustic_v4.cu; } > "${v}_acoustic25_f32.cu"
}
variant B "LAG 3"
variant C "LAG 3" "LATE 1"
variant D "LAG 4" "LATE 1"
variant E "LAG 4" "LATE 1" "ZCN 292"
variant F "LAG 3" "LATE 1" "RW 2" "TYN 16"
variant G "LAG 4" "LATE 1" "RW 2" "TYN 16" "ZCN 98"
variant H "LAG 1" "LATE 1"
../../fused3d-ab/compile.sh ../build/acoustic4
echo "run it as: build/acoustic4 acoustic25 300 994 750"
