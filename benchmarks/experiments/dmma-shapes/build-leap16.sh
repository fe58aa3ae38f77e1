#!/bin/bash
# Builds build/leap16: ../dmma-star3d25/star_dmma.cu's two fused steps with the
# in-plane sums as stacked m16n8k4 products (STACK 1) and without, and with one
# barrier for two planes (PAIR 1), against the
# generated `stream` (A), `tensor` (T) and `tensor` with stacked products (Z,
# stack.py), timed by ../fused3d-ab/harness.py. Run from this directory with
# nvcc 13.0 on PATH; on the GPU: build/leap16 acoustic25 300 994 750 and
# build/leap16 star3d25 512.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work-leap16 && mkdir -p work-leap16 && cd work-leap16
generate() { # letter stencil tiling-keys
    sed 's/dtype *= *"f32"/dtype = "f64"/' "$root/examples/suite/stencils/$2.stencil.toml" > "$1_$2.toml"
    printf '\n[tiling.cuda]\n%b\n' "$3" >> "$1_$2.toml"
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/$1_$2.toml" cuda) > "$1_$2_f64.cu"
}
variant() { # letter stencil macros...
    local v=$1 s=$2; shift 2
    { for m in "$@"; do echo "#define $m"; done; cat ../../dmma-star3d25/star_dmma.cu; } > "${v}_${s}_f64.cu"
    # the harness takes the first launcher it finds: keep only this stencil's
    local other=acoustic25; [ "$s" = acoustic25 ] && other=star3d25
    sed -i "/stencils_cuda__${other}__update_u/d" "${v}_${s}_f64.cu"
}
for s in star3d25 acoustic25; do
    generate A $s 'strategy = "stream"'
    generate T $s 'strategy = "tensor"'
    python3 ../stack.py T_${s}_f64.cu Z_${s}_f64.cu
done
variant N acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292"
variant O acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "STACK 1"
variant P acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 146" "STACK 1"
variant Q acoustic25 "LEVELS 2" "LEAP 1" "ZCN 146" "STACK 1"
variant R star3d25 "LEVELS 2" "ZCN 252"
variant S star3d25 "LEVELS 2" "ZCN 252" "STACK 1"
variant U star3d25 "LEVELS 2" "TILEY 24" "ZCN 252" "STACK 1"
variant V acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "PAIR 1"
variant W acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "PAIR 1" "STACK 1"
variant X star3d25 "LEVELS 2" "TILEY 24" "ZCN 252" "PAIR 1" "STACK 1"
variant Y acoustic25 "LEVELS 2" "LEAP 1" "TILEY 24" "ZCN 292" "PAIR 1" "STACK 1" "AHEAD 2"
../../fused3d-ab/compile.sh ../build/leap16
