#!/usr/bin/env bash
# What `auto`'s trial keeps against both ways timed (the suite's
# `--both-ways`), over the suite stencils whose `auto` fuses, on grids from
# small to the suite's, in calls of 480 steps. Run on the GPU machine from a
# folder holding the stripped `suite`:
#   ./run.sh OUT DEADLINE_S
# One process per grid and dimension count (all its stencils); none starts
# once DEADLINE_S seconds have passed. One JSON and log file per process.
set -uo pipefail
out=$1
deadline=$2
s3=(--stencil j3d7pt --stencil j3d13pt --stencil j3d17pt --stencil j3d27pt --stencil poisson
    --stencil star3d25 --stencil wave3d --stencil acoustic25)
s2=(--stencil j2d5pt --stencil j2d9pt --stencil j2d9pt-gol --stencil j2d25pt --stencil wave2d)
smi() {
    nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active \
        --format=csv >> "$out/smi.txt"
}
one() {
    local name=$1
    shift
    if (( SECONDS > deadline )); then
        echo "$name: not run (deadline)" >> "$out/smi.txt"
        return
    fi
    local start=$SECONDS
    ./suite --backend cuda --variant auto --both-ways --steps 960 --steps-per-call 480 --reps 5 \
        "$@" --json "$out/$name.json" > "$out/$name.log" 2>&1
    echo "$name: exit $? in $((SECONDS - start)) s" >> "$out/smi.txt"
}
smi
for n in 64 128 256 96 192 384; do one "3d-$n" "${s3[@]}" --size3 "$n"; done
for n in 512 1024 2048 256 768 4096 8192; do one "2d-$n" "${s2[@]}" --size2 "$n"; done
one 3d-512 "${s3[@]}" --size3 512
one 2d-16384 "${s2[@]}" --size2 16384
smi
