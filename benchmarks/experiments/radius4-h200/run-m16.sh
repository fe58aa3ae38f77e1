#!/bin/bash
# Runs ../dmma-shapes/build.sh's build/m16 (carried as $BIN/m16) on the GPU:
# the sm_90 m16n8k4 single steps of star3d25 and acoustic25 f64 (U-Y, Z)
# against `stream` (A) and `tensor` (T), on the suite's grids. Writes $1/m16.txt.
set -uo pipefail
out=$1 bin=${BIN:-.device}
mkdir -p "$out"
source "$(dirname "$0")/smi.sh"
{
    smi
    timeout 200 "$bin/m16" star3d25 512
    timeout 200 "$bin/m16" acoustic25 300 994 750
    timeout 100 "$bin/m16" star3d25 29 45 133
    smi
} > "$out/m16.txt" 2>&1
