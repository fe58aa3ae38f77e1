#!/bin/bash
# Builds build/acoustic: acoustic_v2.cu (README.md) against the generated
# `auto` (A: `stream`), `stream` with the suite's stream_q4_v tiling (Q) and
# `temporal` with 2 steps in 64 x 32 tiles (T), timed by
# ../fused3d-ab/harness.py. Run from this directory with nvcc 13.0 on PATH;
# on the GPU: build/acoustic acoustic25 300 994 750 (the suite's grid).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work-acoustic && mkdir -p work-acoustic && cd work-acoustic
generate() { # letter tiling-keys
    cp "$root/examples/suite/stencils/acoustic25.stencil.toml" "$1.toml"
    [ -n "$2" ] && printf '\n[tiling.cuda]\n%b\n' "$2" >> "$1.toml"
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/$1.toml" cuda) > "$1_acoustic25_f32.cu"
}
variant() { # letter macros...
    local v=$1; shift
    { for m in "$@"; do echo "#define $m"; done; cat ../acoustic_v2.cu; } > "${v}_acoustic25_f32.cu"
}
generate A ''
generate Q 'strategy = "stream"\nblock = [1, 2, 64]\nchunk = 4\nvector = 4'
generate T 'strategy = "temporal"\ntime_block = 2\nblock = [1, 8, 64]\ncoarsen = 4'
variant V "LAG 3"
variant W "LAG 3" "PREFETCH 1"
variant X "LAG 1"
variant Y "LAG 4" "ZCN 146"
variant Z "LAG 3" "ZCN 146"
../../fused3d-ab/compile.sh ../build/acoustic
echo "run it as: build/acoustic acoustic25 300 994 750"
