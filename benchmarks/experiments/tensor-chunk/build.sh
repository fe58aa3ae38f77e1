#!/bin/bash
# Builds build/chunk: the generated `tensor` kernels of star3d25 and acoustic25
# (f64) whose launcher picks chunks by the waves of blocks (T, this tree)
# against the same kernels generated before (S: chunks of 256; OLD names a
# checkout of c774e63) and the generated `stream` (A): ../tensor-odd/build.sh
# with this folder's output. On the GPU: build/chunk STENCIL N0 [N1 N2].
set -euo pipefail
cd "$(dirname "$0")"
exec ../tensor-odd/build.sh "$PWD/build/chunk"
