#!/bin/sh
# Builds DIR/build/ab from the kernels in DIR (default: this folder; kernels.sh writes them),
# nvcc 13.0 on PATH.
set -e
here="$(cd "$(dirname "$0")" && pwd)"
cd "${1:-$here}"
python3 "$here/harness.py"
cd build
for f in [A-Z]_*.cu; do nvcc -arch=sm_90 -O3 -c "$f" -o "$f.o"; done
nvcc -arch=sm_90 -O3 main.cu ./*.o -L"${CUDA_PATH:-/usr/local/cuda}/lib" -L"${CUDA_PATH:-/usr/local/cuda}/lib64" -o ab
