#!/usr/bin/env bash
# Whether the trial understates fused launches on 3-D f64 grids because of
# how calls run them: the sweep's 3-D f64 stencils of radius 2 and more on
# 192^3-384^3, both ways timed in calls of 480 steps (graphs), of 480 steps
# without graphs, and of 6 steps (3 fused launches: launched one by one).
# Run beside the stripped `suite`:  ./bias.sh OUT
set -uo pipefail
out=$1
mkdir -p "$out"
for n in 192 256 384; do
    for calls in "480" "480 --no-graphs" "6"; do
        set -- $calls
        name="$n-$1${2:+-nographs}"
        ./suite --backend cuda --variant auto --both-ways --dtype f64 --stencil j3d13pt \
            --stencil j3d17pt --stencil j3d27pt --size3 "$n" --steps 960 --reps 5 \
            --steps-per-call "$@" --json "$out/$name.json" > "$out/$name.log" 2>&1
        echo "$name: exit $?" >> "$out/smi.txt"
    done
done
nvidia-smi --query-gpu=name,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$out/smi.txt"
