#!/usr/bin/env bash
# Session 34: `auto` against `naive` on small grids, every suite stencil in f32
# and f64, at 9ec9881 (build/suite.xz: the suite built here, nvcc 13.0.88, sm_90).
set -u
cd "$(dirname "$0")/build"
start=$SECONDS
smi() { nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$OUT/smi.txt"; }
smi
[ -x suite ] || { xz -dc suite.xz > suite && chmod +x suite; }
o="$OUT/sweep"; mkdir -p "$o"
for sizes in "512 64" "1024 128"; do
    set -- $sizes
    timeout 280 ./suite --backend cuda --reps 5 --variant auto --steps 1000 --size2 $1 --size3 $2 \
        --json "$o/sweep-$1-$2.json" > "$o/sweep-$1-$2.log" 2>&1
    echo "sweep-$1-$2: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
done
(cd "$OUT" && tar czf sweep.tgz sweep && rm -rf sweep)
smi
