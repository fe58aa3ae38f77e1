#!/usr/bin/env bash
# On the GPU machine: `auto`'s `tensor`, which runs `stream` in 16-byte
# vectors on small grids, against `tensor` and `stream_q4_v` (that `stream`)
# on cubes and other shapes around the crossover. $1: the suite binary;
# $2: where the JSON goes; $3: `star`, `acoustic` or both (default).
set -euo pipefail
suite=$1 out=$2 which=${3:-both}
mkdir -p "$out"
run() { # stencil tag args...
    local stencil=$1 tag=$2
    shift 2
    "$suite" --backend cuda --dtype f64 --stencil "$stencil" --variant stream_q4_v --variant tensor \
        --variant auto --reps 3 --json "$out/$stencil-$tag.json" "$@" |
        grep -E "\| (auto|tensor|stream_q4_v|naive) \|" | cut -d'|' -f3,5,6,8,11 || true
}
if [[ $which != acoustic ]]; then
    for n in 64 100 112 128 144 160 176 192 224 256 320 384 512; do run star3d25 "$n" --size3 "$n"; done
    for s in 1024,128,128 512,160,160 256,144,144 48,512,512 96,256,256; do run star3d25 "${s//,/x}" --shape3 "$s"; done
fi
if [[ $which != star ]]; then
    for n in 64 100 128 192 256 384 416 448 480; do run acoustic25 "$n" --size3 "$n"; done
    for s in 1024,384,384 128,512,512 300,448,448 64,994,750 300,994,750; do run acoustic25 "${s//,/x}" --shape3 "$s"; done
fi
