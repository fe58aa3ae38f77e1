#!/usr/bin/env bash
# Session 33: auto's tensor runs naive's kernel for its single steps on small grids.
# $1 = tests | bench. Binaries (xz) beside this script: suite.xz, cb.xz.
set -u
cd "$(dirname "$0")"
start=$SECONDS
smi() { nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$OUT/smi.txt"; }
smi
if [ "$1" = tests ]; then
    xz -dc cb.xz > cb && chmod +x cb
    timeout 240 ./cb --include-ignored cuda_ > "$OUT/tests.txt" 2>&1; echo "cb: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
    exit 0
fi
[ -x suite ] || { xz -dc suite.xz > suite && chmod +x suite; }
o="$OUT/tensor"; mkdir -p "$o"
for n in 48 64 80 100 112 128 160; do
    for s in star3d25 acoustic25; do
        [ $((SECONDS - start)) -lt 300 ] || break 2
        timeout 60 ./suite --backend cuda --dtype f64 --stencil $s --variant naive --variant stream_q4_v --variant auto \
            --size3 $n --steps 1000 --reps 5 --json "$o/$s-$n.json" > "$o/$s-$n.log" 2>&1
        echo "$s $n: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
    done
done
(cd "$OUT" && tar czf tensor.tgz tensor && rm -rf tensor)
smi
