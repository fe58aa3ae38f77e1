#!/usr/bin/env bash
# Session 34: the 2-D f64 fused kernels take their literals as a by-value
# argument instead of a `__constant__` table. On the GPU machine, from the
# repository root, with build/ holding cbank-before (build.sh at 9a2a2fb),
# cbank-after (build.sh at the change), suite-old.xz (the suite at 9a2a2fb's
# generator) and suite-new.xz (at the change).
set -u
cd "$(dirname "$0")/build"
start=$SECONDS
smi() { nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$OUT/smi.txt"; }
smi
for b in old new; do [ -x suite-$b ] || { xz -dc suite-$b.xz > suite-$b && chmod +x suite-$b; }; done
o="$OUT/bank"; mkdir -p "$o"
for n in 512 768; do
    ./cbank-before $n > "$o/cbank-before-$n.txt" 2>&1
    ./cbank-after $n > "$o/cbank-after-$n.txt" 2>&1
done
one() {  # binary, name, then suite arguments
    local b=$1 name=$2; shift 2
    timeout 120 ./suite-$b --backend cuda --dtype f64 --reps 5 --stencil j2d5pt --stencil j2d9pt \
        --stencil j2d9pt_gol --stencil j2d25pt "$@" --json "$o/$name-$b.json" > "$o/$name-$b.log" 2>&1
    echo "$name-$b: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
}
for r in 1 2; do
    for b in old new; do
        one $b large-r$r --variant temporal --variant persistent --variant auto
        for n in 512 768 1024; do
            one $b small-$n-r$r --variant temporal --variant auto --size2 $n --steps 1000
        done
    done
done
(cd "$OUT" && tar czf bank.tgz bank && rm -rf bank)
smi
