#!/usr/bin/env bash
# Session 33: what `auto`'s trial timed (`Session::measurement`, in the suite's
# strategy label), on the small grids where its decisions were close or odd.
set -u
cd "$(dirname "$0")"
start=$SECONDS
smi() { nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$OUT/smi.txt"; }
smi
[ -x suite ] || { xz -dc suite.xz > suite && chmod +x suite; }
o="$OUT/trial"; mkdir -p "$o"
one() {  # name, then suite arguments
    local name=$1; shift
    timeout 60 ./suite --backend cuda --variant naive --variant auto --steps 1000 --reps 5 "$@" \
        --json "$o/$name.json" > "$o/$name.log" 2>&1
    echo "$name: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
}
for r in 1 2 3 4 5 6; do
    [ $((SECONDS - start)) -lt 200 ] || break
    one j2d9pt-768-r$r --stencil j2d9pt --dtype f32 --size2 768
done
for n in 512 768 1024; do
    for s in j2d5pt j2d9pt wave2d; do
        [ $((SECONDS - start)) -lt 380 ] || break 2
        one $s-$n --stencil $s --size2 $n
    done
done
for n in 48 100; do
    for s in star3d25 wave3d acoustic25; do
        [ $((SECONDS - start)) -lt 480 ] || break 2
        one $s-$n --stencil $s --dtype f32 --size3 $n
    done
done
(cd "$OUT" && tar czf trial.tgz trial && rm -rf trial)
smi
