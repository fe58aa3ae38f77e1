#!/bin/bash
# Runs build.sh's build/ab (carried as $BIN/ab) on the GPU over cubes and
# the suite's grids; writes $1/ab.txt.
set -uo pipefail
out=$1 bin=${BIN:-.device}
mkdir -p "$out"
source "$(dirname "$0")/../radius4-h200/smi.sh"
{
    smi
    for n in 64 96 128 160 192 224 256 320 384 448 512; do
        timeout 100 "$bin/ab" star3d25 $n
    done
    for g in "1024 128 128" "48 512 512" "96 256 256" "512 160 160" "29 45 133" "300 994 750" "301 255 257"; do
        timeout 100 "$bin/ab" star3d25 $g
    done
    for g in "300 994 750" "64 994 750" "128 512 512" "300 448 448" "256 256 256" "416 416 416" "512 512 512" "128 128 128"; do
        timeout 100 "$bin/ab" acoustic25 $g
    done
    smi
} > "$out/ab.txt" 2>&1
