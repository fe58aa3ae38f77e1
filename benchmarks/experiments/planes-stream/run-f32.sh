#!/bin/bash
# Runs build-f32.sh's build/ab32 (carried as $BIN/ab32) on the GPU; writes $1/f32.txt.
set -uo pipefail
out=$1 bin=${BIN:-.device}
mkdir -p "$out"
source "$(dirname "$0")/../radius4-h200/smi.sh"
{
    smi
    for g in "512 512 512" "300 994 750" "256 256 256" "128 512 512"; do timeout 100 "$bin/ab32" star3d25 $g; done
    for g in "300 994 750" "512 512 512" "64 994 750" "256 256 256" "300 448 448"; do timeout 100 "$bin/ab32" acoustic25 $g; done
    smi
} > "$out/f32.txt" 2>&1
