#!/usr/bin/env bash
# Two questions on the H200, with the suite as built (no new variants):
#  box3d: which of the suite's 3-D `temporal` tilings run fastest for the f32
#     box-like stencils whose `auto` ties `stream_q4_v` there (j3d17pt,
#     j3d27pt, poisson), beside `stream_q4_v`.
#  rows: the single-step kernels on rows that are not whole 16-byte vectors,
#     where `stream_q4_v` runs its scalar twin (blocks of [1, 2, 64] or
#     [1, 64], chunks of 4): against `stream`'s defaults ([1, 8, 32] or
#     [1, 256], chunks of 64). 3-D on 300 x 994 x 750 (acoustic25's grid;
#     f32 rows of 3000 bytes) and 300 x 994 x 749 (f64), 2-D on 16382^2 (f32)
#     and 16383^2 (f64).
#  rows3d: the 3-D half of `rows`.
#  medium: 3-D grids of 130^3 (f32) and 131^3 (f64), whose rows are not
#     whole vectors and whose 2.2M cells fill the device only with short
#     chunks: `stream`, `stream_q4_v` and `auto`.
# Run on the GPU machine from a folder holding the stripped `suite` (or the
# binary SUITE names), parts in order, none started after DEADLINE seconds:
#   [SUITE=./suite] [DEADLINE=520] ./run.sh OUT box3d|rows|rows3d|medium...
set -uo pipefail
out=$1
shift
suite=${SUITE:-./suite}
deadline=${DEADLINE:-100000}
smi() {
    nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,power.draw,clocks_throttle_reasons.active \
        --format=csv >> "$out/smi.txt"
}
run() {
    local name=$1
    shift
    if (( SECONDS > deadline )); then
        echo "$name: not run (deadline)" >> "$out/smi.txt"
        return
    fi
    local start=$SECONDS
    "$suite" --backend cuda --reps 3 "$@" --json "$out/$name.json" > "$out/$name.log" 2>&1
    echo "$name: exit $? in $((SECONDS - start)) s" >> "$out/smi.txt"
}
smi
for part in "$@"; do
    case $part in
    box3d)
        for s in j3d17pt j3d27pt poisson; do
            run "box3d-$s" --stencil "$s" --dtype f32 \
                --variant stream --variant stream_q4_v --variant temporal_t1 --variant temporal_t2 \
                --variant temporal_t3 --variant temporal_t2_s --variant temporal_t2_r1 \
                --variant temporal_t2_w --variant temporal_t2_c8_w --variant temporal_t2_ww
        done
        ;;
    rows | rows3d)
        for s in j3d7pt j3d13pt j3d17pt j3d27pt poisson star3d25 wave3d acoustic25; do
            run "rows-$s-f32" --stencil "$s" --dtype f32 --shape3 300,994,750 \
                --variant stream --variant stream_q4_v --variant auto
            run "rows-$s-f64" --stencil "$s" --dtype f64 --shape3 300,994,749 \
                --variant stream --variant stream_q4_v --variant auto
        done
        [[ $part == rows3d ]] && continue
        for s in j2d5pt j2d9pt j2d9pt-gol j2d25pt wave2d; do
            run "rows-$s-f32" --stencil "$s" --dtype f32 --size2 16382 \
                --variant stream --variant stream_q4_v --variant auto
            run "rows-$s-f64" --stencil "$s" --dtype f64 --size2 16383 \
                --variant stream --variant stream_q4_v --variant auto
        done
        ;;
    medium)
        for s in j3d7pt j3d13pt j3d17pt j3d27pt poisson star3d25 wave3d acoustic25; do
            run "medium-$s-f32" --stencil "$s" --dtype f32 --shape3 130,130,130 \
                --variant stream --variant stream_q4_v --variant auto
            run "medium-$s-f64" --stencil "$s" --dtype f64 --shape3 131,131,131 \
                --variant stream --variant stream_q4_v --variant auto
        done
        ;;
    esac
    smi
done
