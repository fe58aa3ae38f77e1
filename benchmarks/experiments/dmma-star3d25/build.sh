#!/bin/bash
# Builds build/ab: star_dmma.cu (README.md) in several instances against the
# generated `auto` (A: `stream`) for star3d25 f64, timed by
# ../fused3d-ab/harness.py. Run from this directory with nvcc 13.0 on PATH;
# on the GPU: build/ab star3d25 512.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work && mkdir -p work && cd work
generate() { # letter tiling-keys
    cp "$root/examples/suite/stencils/star3d25.stencil.toml" "$1.toml"
    [ -n "$2" ] && printf '\n[tiling.cuda]\n%b\n' "$2" >> "$1.toml"
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/$1.toml" cuda) > "$1_star3d25_f64.cu"
}
variant() { # letter macros...
    local v=$1; shift
    { for m in "$@"; do echo "#define $m"; done; cat ../star_dmma.cu; } > "${v}_star3d25_f64.cu"
    # the harness takes a kernel for a fused one where it finds this marker
    grep -q "#define LEVELS 1" "${v}_star3d25_f64.cu" && sed -i '/marker for the harness/d' "${v}_star3d25_f64.cu"
    true
}
generate A ''
variant B "LEVELS 1" "BLOCKS 1" "ZCN 64"
variant C "LEVELS 1" "BLOCKS 1" "ZCN 128" "AHEAD 4"
variant D "LEVELS 1" "BLOCKS 1" "ZCN 128" "AHEAD 6"
variant J "LEVELS 1" "BLOCKS 1" "ZCN 256" "AHEAD 4"
variant E "LEVELS 2" "ZCN 128"
variant F "LEVELS 2" "ZCN 168"
variant G "LEVELS 2" "ZCN 252"
variant H "LEVELS 2" "ZCN 168" "AHEAD 5"
variant I "LEVELS 2" "ZCN 168" "AHEAD 2"
variant K "LEVELS 2" "ZCN 168" "CHAIN1 1"
variant L "LEVELS 1" "ZCN 128" "AHEAD 4" "CHAIN1 1"
../../fused3d-ab/compile.sh ../build/ab
echo "run it as: build/ab star3d25 512"
