#!/bin/bash
# Runs build.sh's build/ab (carried as $BIN/ab) on the GPU over rows whose
# 16-byte vectors cover more of `x` than pairs (n2 = 64 mod 128) and rows where
# both cover as much; writes $1/ab.txt.
set -uo pipefail
out=$1 bin=${BIN:-.device}
mkdir -p "$out"
source "$(dirname "$0")/../radius4-h200/smi.sh"
{
    smi
    IFS=, read -ra grids <<< "${GRIDS:-256 512 320,300 448 448,256 512 576,256 448 704,200 384 832,256 400 960,256 512 384,256 448 640,512 512 512,128 512 512}"
    for s in star3d25 acoustic25; do
        for g in "${grids[@]}"; do
            timeout 100 "$bin/ab" $s $g
        done
    done
    smi
} > "$out/ab.txt" 2>&1
