#!/usr/bin/env bash
# After the margin's change: the suite's 3-D stencils on their grids (the
# H200 cells the old margin decided), then the sweep's grids where 95% kept
# the slower way, each way timed as in run.sh. Run beside the stripped `suite`:
#   ./verify.sh OUT
set -uo pipefail
out=$1
here=$(dirname "$0")
mkdir -p "$out/suite" "$out/sweep"
"$here/run-suite.sh" "$out/suite" 300 j3d27pt j3d17pt poisson wave3d star3d25 j3d13pt
s2=(--stencil j2d5pt --stencil j2d9pt --stencil j2d9pt-gol)
for g in "3d-384 --size3 384 --stencil wave3d --stencil j3d13pt --stencil j3d17pt" \
         "2d-512 --size2 512" "2d-768 --size2 768" "2d-1024 --size2 1024"; do
    set -- $g
    name=$1
    shift
    extra=()
    [[ $name == 2d-* ]] && extra=("${s2[@]}")
    ./suite --backend cuda --variant auto --both-ways --steps 960 --steps-per-call 480 --reps 5 \
        "${extra[@]}" "$@" --json "$out/sweep/$name.json" > "$out/sweep/$name.log" 2>&1
    echo "$name: exit $?" >> "$out/suite/smi.txt"
done
nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active --format=csv >> "$out/suite/smi.txt"
