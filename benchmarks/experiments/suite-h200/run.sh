#!/usr/bin/env bash
# Issue 6's done condition on the H200 (the GPU machine since 2026-11-28):
# every suite stencil's `auto` beside the candidates for our best single step
# (`naive`, every `stream` variant the suite builds for it, `tensor`), on the
# suite's grids. Run on the GPU machine from a folder holding the stripped
# `suite`:
#   ./run.sh OUT DEADLINE_S STENCIL...
# Stencils run in the order given, each in a fresh process; none starts once
# DEADLINE_S seconds have passed, so a call ends inside its limit. One JSON,
# Markdown and log file per stencil, so a run cut short keeps the rest.
set -uo pipefail
out=$1
deadline=$2
shift 2
smi() {
    nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active \
        --format=csv >> "$out/smi.txt"
}
smi
for s in "$@"; do
    if (( SECONDS > deadline )); then
        echo "$s: not run (deadline)" >> "$out/smi.txt"
        continue
    fi
    start=$SECONDS
    ./suite --backend cuda --stencil "$s" --reps 3 \
        --variant stream --variant stream_s4 --variant stream_s4_v --variant stream_s2_v_w \
        --variant stream_q4_v --variant stream_v --variant stream_v2 --variant tensor --variant auto \
        --json "$out/$s.json" --markdown "$out/$s.md" > "$out/$s.log" 2>&1
    echo "$s: exit $? in $((SECONDS - start)) s" >> "$out/smi.txt"
done
smi
