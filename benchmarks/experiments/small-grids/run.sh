#!/usr/bin/env bash
# auto against naive, temporal (its fused launches, forced) and the single-step
# candidates on small grids, 1000 steps a run, median of 5.
# Run on the GPU machine from a folder holding the stripped `suite`:
#   ./run.sh OUT [VARIANT...]
# (default: naive, stream_q4_v, stream_s2_v_w, stream_s4_v, tensor, temporal, auto)
set -uo pipefail
out=$1
shift
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(naive stream_q4_v stream_s2_v_w stream_s4_v tensor temporal auto)
V=""
for v in "${variants[@]}"; do V+=" --variant $v"; done
S3="j3d7pt j3d13pt j3d17pt j3d27pt poisson star3d25 wave3d acoustic25"
S2="j2d5pt j2d9pt j2d9pt-gol j2d25pt wave2d"
nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$out/smi.txt"
# One run: stencil $1 on grid $2 (its size flag $3), every variant.
one() {
    ./suite --backend cuda --stencil $1 $V $3 $2 --steps 1000 --reps 5 \
        --json "$out/$1-$2.json" > "$out/$1-$2.log" 2>&1
    echo "$1 $2: exit $?" >> "$out/smi.txt"
}
for n in 48 64 80 100 128; do
    for s in $S3; do one $s $n --size3; done
done
for n in 512 768 1024 1448; do
    for s in $S2; do one $s $n --size2; done
done
nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$out/smi.txt"
