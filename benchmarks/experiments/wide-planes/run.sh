#!/bin/bash
# Runs build.sh's build/ab (carried as $BIN/ab) on the GPU; writes $1/ab.txt.
set -uo pipefail
out=$1 bin=${BIN:-.device}
mkdir -p "$out"
source "$(dirname "$0")/../radius4-h200/smi.sh"
{
    smi
    for g in "512 512 512" "128 512 512" "300 448 448" "256 256 256" "301 255 257" "100 100 100" "300 994 750" "300 994 749"; do
        timeout 100 "$bin/ab" star3d25 $g
        timeout 100 "$bin/ab" acoustic25 $g
    done
    timeout 100 "$bin/ab" acoustic25 64 994 750
    smi
} > "$out/ab.txt" 2>&1
