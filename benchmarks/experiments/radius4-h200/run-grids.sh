#!/bin/bash
# Runs build-grids.sh's binaries (carried as $BIN/grids, $BIN/coef) on the GPU:
# acoustic25 f32 on the suite's grid (twice), rows of other lengths and odd
# grids; coefstar3d f32 on two grids. Every variant is compared with A after
# 12 steps. Writes under $1.
set -uo pipefail
out=$1 bin=${BIN:-.device}
mkdir -p "$out"
source "$(dirname "$0")/smi.sh"
smi > "$out/smi.txt"
for g in "300 994 750" "300 994 750" "300 994 768" "300 994 744" "512 512 512" "400 400 400" "512 512 750" "61 98 130" "19 27 22" "13 130 258"; do
    echo "== acoustic25 $g"; timeout 200 "$bin/grids" acoustic25 $g
done > "$out/grids.txt" 2>&1
for g in "300 994 750" "512 512 512" "61 98 130"; do
    echo "== coefstar3d $g"; timeout 200 "$bin/coef" coefstar3d $g
done > "$out/coef.txt" 2>&1
smi >> "$out/smi.txt"
