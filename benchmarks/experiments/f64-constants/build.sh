#!/bin/sh
# Builds build/ab from the generated kernels in this directory (README.md); nvcc 13.0 on PATH.
set -e
cd "$(dirname "$0")"
python3 harness.py
cd build
for f in [A-Z]_*.cu; do nvcc -arch=sm_90 -O3 -c "$f" -o "$f.o" & done; wait
nvcc -arch=sm_90 -O3 main.cu ./*.o -L"${CUDA_PATH:-/usr/local/cuda}/lib" -L"${CUDA_PATH:-/usr/local/cuda}/lib64" -o ab
