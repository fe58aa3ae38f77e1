#!/usr/bin/env bash
# Session 31: the launch floor (launch/launch), then auto after 61a53de on small grids and the suite's grids.
set -u
cd "$(dirname "$0")"
start=$SECONDS
xz -dc suite.xz > suite && chmod +x suite
smi() { nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$OUT/smi.txt"; }
smi
timeout 60 ./launch/launch > "$OUT/launch.txt" 2>&1; echo "launch: exit $?" >> "$OUT/smi.txt"
o="$OUT/small"; mkdir -p "$o"
for n in 48 64 80 100 128; do
    for s in j3d7pt j3d13pt j3d17pt j3d27pt poisson star3d25 wave3d acoustic25; do
        [ $((SECONDS - start)) -lt 300 ] || break 2
        timeout 30 ./suite --backend cuda --stencil $s --variant naive --variant auto --size3 $n --steps 1000 --reps 5 \
            --json "$o/$s-$n.json" > "$o/$s-$n.log" 2>&1
        echo "$s $n: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
    done
done
for n in 512 768 1024 1448; do
    for s in j2d5pt j2d9pt j2d9pt-gol j2d25pt wave2d; do
        [ $((SECONDS - start)) -lt 360 ] || break 2
        timeout 30 ./suite --backend cuda --stencil $s --variant naive --variant auto --size2 $n --steps 1000 --reps 5 \
            --json "$o/$s-$n.json" > "$o/$s-$n.log" 2>&1
        echo "$s $n: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
    done
done
(cd "$OUT" && tar czf small.tgz small && rm -rf small)
smi
left=$((540 - (SECONDS - start)))
timeout $left ./suite --backend cuda --variant auto --reps 3 --json "$OUT/suite-default.json" > "$OUT/suite-default.txt" 2>&1
echo "default: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
smi
