#!/bin/bash
# Builds build/odd: the generated `tensor` kernels of star3d25 and acoustic25
# (f64) with pairs on grids of odd rows (T, this tree) against the same
# kernels generated before (S: single cells on such grids; OLD names a
# checkout of the earlier tree whose `generate` example is built) and the
# generated `stream` (A), timed by ../fused3d-ab/harness.py. Run from this
# directory with nvcc 13.0 on PATH; on the GPU: build/odd STENCIL N0 N1 N2.
# An argument names another output (an absolute path: ../tensor-chunk).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
old=${OLD:?OLD: the path of the earlier tree}
rm -rf work && mkdir -p work && cd work
source "$root/benchmarks/experiments/dmma-star3d25/kernels.sh"
baselines
for s in star3d25 acoustic25; do
    (cd "$old" && CARGO_TARGET_DIR="$old/target" cargo run -q -p stencil-build --example generate -- "$OLDPWD/T_$s.toml" cuda) > "S_${s}_f64.cu"
done
../../fused3d-ab/compile.sh "${1:-../build/odd}"
