#!/bin/bash
# Run from a folder of kernels <V>_<stencil>_<dtype>.cu (V a variant's letter):
# writes build/ with harness.py, compiles each kernel for sm_90 (ptxas reports
# spills), with that folder's parent (the experiment's own folder) on the include
# path, and links the timing program to $1 (a path relative to build/'s parent).
set -euo pipefail
out=$(realpath -m "$1")
python3 "$(dirname "$0")/harness.py"
experiment=$(dirname "$PWD")
cd build
for f in [A-Z]_*.cu; do nvcc -arch=sm_90 -O3 -I"$experiment" -c "$f" -o "$f.o" -Xptxas -warn-spills 2>&1 | sed "s|^|$f: |"; done
cuda_lib=$(dirname "$(dirname "$(command -v nvcc)")")/lib
mkdir -p "$(dirname "$out")"
nvcc -arch=sm_90 -O3 main.cu ./*.o -L"$cuda_lib" -L"$cuda_lib"64 -o "$out"
echo "built $out"
