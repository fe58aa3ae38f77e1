#!/usr/bin/env bash
# The single step compiled beside auto's fused kernel (`temporal`, one step a
# call: its launches of one step run it) against `stream_q4_v` and `naive`,
# 3-D stencils and wave2d, from 100^3 (1024^2) to the suite's grids.
# Run on the GPU machine from a folder holding the stripped `suite`:
#   ./single.sh OUT
set -uo pipefail
out=$1
V="--variant naive --variant stream_q4_v --variant temporal --steps-per-call 1"
nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$out/smi.txt"
for s in j3d7pt j3d13pt j3d17pt j3d27pt poisson star3d25 wave3d acoustic25; do
    for n in 100 128 192 256; do
        timeout 60 ./suite --backend cuda --stencil $s $V --size3 $n --steps 200 --reps 5 \
            --json "$out/$s-$n.json" > "$out/$s-$n.log" 2>&1
        echo "$s $n: exit $?" >> "$out/smi.txt"
    done
    timeout 60 ./suite --backend cuda --stencil $s $V --steps 100 --reps 3 \
        --json "$out/$s-suite.json" > "$out/$s-suite.log" 2>&1
    echo "$s suite grid: exit $?" >> "$out/smi.txt"
done
for n in 1024 2048 4096; do
    timeout 60 ./suite --backend cuda --stencil wave2d $V --size2 $n --steps 200 --reps 5 \
        --json "$out/wave2d-$n.json" > "$out/wave2d-$n.log" 2>&1
    echo "wave2d $n: exit $?" >> "$out/smi.txt"
done
timeout 60 ./suite --backend cuda --stencil wave2d $V --steps 100 --reps 3 \
    --json "$out/wave2d-suite.json" > "$out/wave2d-suite.log" 2>&1
echo "wave2d suite grid: exit $?" >> "$out/smi.txt"
nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$out/smi.txt"
