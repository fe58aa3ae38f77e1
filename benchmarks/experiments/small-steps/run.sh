#!/usr/bin/env bash
# Session 32: auto's single steps run naive's kernel on small grids. $1 = tests | bench.
set -u
cd "$(dirname "$0")"
start=$SECONDS
smi() { nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$OUT/smi.txt"; }
smi
if [ "$1" = tests ]; then
    xz -dc cb.xz > cb && chmod +x cb
    timeout 360 ./cb --include-ignored cuda_ > "$OUT/tests.txt" 2>&1; echo "cb: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
    exit 0
fi
[ -x suite ] || { xz -dc suite.xz > suite && chmod +x suite; }
o="$OUT/small"; mkdir -p "$o"
for n in 48 64 80 100; do
    for s in j3d7pt j3d27pt star3d25 wave3d acoustic25; do
        [ $((SECONDS - start)) -lt 420 ] || break 2
        timeout 40 ./suite --backend cuda --stencil $s --variant naive --variant auto --size3 $n --steps 1000 --reps 5 \
            --json "$o/$s-$n.json" > "$o/$s-$n.log" 2>&1
        echo "$s $n: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
    done
done
for n in 512 768 1024; do
    for s in j2d5pt j2d9pt wave2d; do
        [ $((SECONDS - start)) -lt 520 ] || break 2
        timeout 40 ./suite --backend cuda --stencil $s --variant naive --variant auto --size2 $n --steps 1000 --reps 5 \
            --json "$o/$s-$n.json" > "$o/$s-$n.log" 2>&1
        echo "$s $n: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
    done
done
(cd "$OUT" && tar czf small.tgz small && rm -rf small)
smi
