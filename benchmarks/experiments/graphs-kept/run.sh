#!/usr/bin/env bash
# Session 33: sessions keep 4 graphs (one per order of the buffers), not 1.
set -u
cd "$(dirname "$0")"
start=$SECONDS
smi() { nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$OUT/smi.txt"; }
smi
[ -x suite ] || { xz -dc suite.xz > suite && chmod +x suite; }
o="$OUT/kept"; mkdir -p "$o"
one() {  # name, then suite arguments
    local name=$1; shift
    timeout 60 ./suite --backend cuda --reps 5 "$@" --json "$o/$name.json" > "$o/$name.log" 2>&1
    echo "$name: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
}
for r in 1 2 3; do
    one j2d5pt-f64-512-1000-r$r --stencil j2d5pt --dtype f64 --variant naive --variant temporal --variant auto --size2 512 --steps 1000
done
one j2d5pt-f64-512-10000 --stencil j2d5pt --dtype f64 --variant naive --variant temporal --variant auto --size2 512 --steps 10000
for n in 512 768 1024; do
    for s in j2d5pt j2d9pt wave2d; do
        [ $((SECONDS - start)) -lt 400 ] || break 2
        one $s-$n --stencil $s --variant naive --variant temporal --variant auto --size2 $n --steps 1000
    done
done
(cd "$OUT" && tar czf kept.tgz kept && rm -rf kept)
smi
