#!/bin/bash
# Builds build/ab: star3d25 f32 single steps, `auto`'s (A: `stream` in 16-byte
# vectors marching 64 planes, the bar), `stream` in 8-byte pairs (P: the suite's
# `stream_v2`), and tensor_f32.cu's in-plane sums on the FP64 tensor cores with
# f32 grids (T: one block a multiprocessor's bound; U: two; W: U with swizzled
# rows; X: U with the update's other terms in f64; N: U without the operands'
# conversions, wrong results, timing only).
# Run with nvcc 13.0 on PATH; on the GPU: run.sh OUT.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work && mkdir -p work && cd work
spec="$root/examples/suite/stencils/star3d25.stencil.toml"
sed 's/dtype *= *"f64"/dtype = "f32"/' "$spec" > star3d25.toml
{ cat star3d25.toml; printf '\n[tiling.cuda]\nstrategy = "stream"\nvector = 2\n'; } > pairs.toml
gen() { (cd "$root" && cargo run -q --release -p stencil-build --example generate -- "$OLDPWD/$1" cuda); }
{ gen star3d25.toml; echo '/* harness: levels 1 */'; } > A_star3d25_f32.cu
gen pairs.toml > P_star3d25_f32.cu
variant() { # letter macros...
    local v=$1; shift
    { for m in "$@"; do echo "#define $m"; done; cat ../tensor_f32.cu; } > "${v}_star3d25_f32.cu"
}
variant T "MINB 1"
variant U "MINB 2"
variant W "MINB 2" "SWZ 1"
variant X "MINB 2" "INF64 1"
variant N "MINB 2" "NOCVT 1"
../../fused3d-ab/compile.sh ../build/ab
