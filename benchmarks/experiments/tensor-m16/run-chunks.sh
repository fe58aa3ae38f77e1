#!/bin/bash
# Runs build-chunks.sh's build/chunks (carried as $BIN/chunks) on the GPU;
# writes $1/chunks.txt.
set -uo pipefail
out=$1 bin=${BIN:-.device}
mkdir -p "$out"
source "$(dirname "$0")/../radius4-h200/smi.sh"
{
    smi
    for g in "100 100 100" "128 128 128" "160 160 160" "192 192 192" "256 256 256" "300 448 448" "128 512 512" "64 994 750" "300 994 750" "512 512 512" "129 131 133"; do
        timeout 100 "$bin/chunks" acoustic25 $g
    done
    smi
} > "$out/chunks.txt" 2>&1
