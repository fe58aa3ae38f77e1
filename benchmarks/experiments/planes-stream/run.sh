#!/bin/bash
# Runs build.sh's build/ab (carried as $BIN/ab) on the GPU; writes $1/ab.txt.
set -uo pipefail
out=$1 bin=${BIN:-.device}
mkdir -p "$out"
source "$(dirname "$0")/../radius4-h200/smi.sh"
{
    smi
    for g in "100 100 100" "128 128 128" "192 192 192" "256 256 256" "300 448 448" "416 416 416" "128 512 512" "64 994 750" "300 994 750" "512 512 512" "16 994 750" "300 994 749" "301 255 257" "29 45 133"; do
        timeout 100 "$bin/ab" acoustic25 $g
    done
    smi
} > "$out/ab.txt" 2>&1
