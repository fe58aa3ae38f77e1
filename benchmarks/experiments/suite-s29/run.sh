#!/usr/bin/env bash
# Issue 6's done condition at one commit: every suite stencil's `auto` beside
# the candidates for our best single step (every `stream` variant the suite
# builds for it, `tensor`), `temporal` and `persistent`, on the suite's grids.
# Run on the GPU machine from a folder holding the stripped `suite`:
#   ./run.sh OUT STENCIL...
# One JSON, Markdown and log file per stencil, so a run cut short keeps the rest.
set -uo pipefail
out=$1
shift
nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$out/smi.txt"
for s in "$@"; do
    ./suite --backend cuda --stencil "$s" --reps 3 \
        --variant tiled --variant stream --variant stream_s4 --variant stream_s4_v --variant stream_s2_v_w \
        --variant stream_q4_v --variant tensor --variant temporal --variant persistent --variant auto \
        --json "$out/$s.json" --markdown "$out/$s.md" > "$out/$s.log" 2>&1
    echo "$s: exit $?" >> "$out/smi.txt"
done
nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$out/smi.txt"
