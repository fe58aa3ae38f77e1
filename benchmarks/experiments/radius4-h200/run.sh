#!/bin/bash
# Runs, on the H200, the radius-4 fused prototypes measured so far only on the
# H100 (../dmma-star3d25's build/dec, ../ring-fused-f32's build/fused, built
# there by their build scripts and carried as $BIN/dec, $BIN/fused), and ncu's
# warp states of acoustic25 f32's `stream` (A) and generated ring kernel (R).
# Writes everything under $1.
set -uo pipefail
out=$1 bin=${BIN:-.device}
mkdir -p "$out"
source "$(dirname "$0")/smi.sh"
smi > "$out/smi.txt"
{ timeout 200 "$bin/dec" acoustic25 300 994 750; timeout 200 "$bin/dec" star3d25 512; } > "$out/dec.txt" 2>&1
{ timeout 120 "$bin/fused" acoustic25 61 98 130; timeout 200 "$bin/fused" acoustic25 300 994 750; } > "$out/fused.txt" 2>&1
for v in A R; do
    timeout 200 ncu -k "regex:${v}_f32" --launch-skip 3 -c 1 --section SpeedOfLight --section WarpStateStats \
        --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis "$bin/fused" acoustic25 300 994 750
done > "$out/ncu.txt" 2>&1
smi >> "$out/smi.txt"
