#!/bin/bash
# Builds build/fused64: lean64.cu (acoustic25 f64, two steps from shared rings) against the
# generated f64 `stream` (A) and `auto` (T: `tensor`), timed by ../fused3d-ab/harness.py.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work64 && mkdir -p work64 && cd work64
sed 's/^dtype = "f32"/dtype = "f64"/' "$root/examples/suite/stencils/acoustic25.stencil.toml" > spec.toml
{ cat spec.toml; printf '\n[tiling.cuda]\nstrategy = "stream"\n'; } > A.toml
(cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/A.toml" cuda) > A_acoustic25_f64.cu
(cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/spec.toml" cuda) > T_acoustic25_f64.cu
variant() { # letter source macros...
    local v=$1 src=$2; shift 2
    { for m in "$@"; do echo "#define $m"; done; cat "$src"; } > "${v}_acoustic25_f64.cu"
}
variant G ../lean64.cu "MAXREG 96"
variant H ../lean64.cu "MAXREG 96" "ZCN 146"
variant I ../lean64.cu "MAXREG 96" "AHEAD 3"
../../fused3d-ab/compile.sh ../build/fused64
