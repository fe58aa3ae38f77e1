#!/usr/bin/env bash
# Session 32: persistent sessions replay their single steps as graphs. $1 = tests: tests and memcheck;
# bench:
# wave3d (auto: persistent in f32) naive/persistent/auto on small grids with and without graphs,
# and on the suite's grid.
set -u
cd "$(dirname "$0")"
start=$SECONDS
smi() { nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$OUT/smi.txt"; }
smi
if [ "$1" = tests ]; then
    xz -dc cb.xz > cb && chmod +x cb
    timeout 360 ./cb --include-ignored cuda_ > "$OUT/tests.txt" 2>&1; echo "cb: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
    timeout 150 compute-sanitizer --tool memcheck ./cb --include-ignored cuda_sessions_replay_graphs_of_launches > "$OUT/memcheck.txt" 2>&1; echo "memcheck: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
    exit 0
fi
[ -x suite ] || { xz -dc suite.xz > suite && chmod +x suite; }
o="$OUT/small"; mkdir -p "$o"
for n in 48 64 100 128; do
    for g in graphs no-graphs; do
        extra=""; [ $g = no-graphs ] && extra="--no-graphs"
        timeout 40 ./suite --backend cuda --stencil wave3d --variant naive --variant persistent --variant auto $extra --size3 $n --steps 1000 --reps 5 \
            --json "$o/wave3d-$n-$g.json" > "$o/wave3d-$n-$g.log" 2>&1
        echo "wave3d $n $g: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
    done
done
for g in graphs no-graphs; do
    extra=""; [ $g = no-graphs ] && extra="--no-graphs"
    timeout 90 ./suite --backend cuda --stencil wave3d --variant naive --variant persistent --variant auto $extra --reps 3 \
        --json "$o/wave3d-suite-$g.json" > "$o/wave3d-suite-$g.log" 2>&1
    echo "wave3d suite grid $g: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
done
# Every single-step kernel where auto's single steps were slowest against naive (session 31).
for spec in "star3d25 --size3 48" "star3d25 --size3 64" "acoustic25 --size3 48" "j3d27pt --size3 48" "wave3d --size3 48" "j2d9pt --size2 512" "j2d5pt --size2 512"; do
    set -- $spec
    [ $((SECONDS - start)) -lt 520 ] || break
    timeout 40 ./suite --backend cuda --stencil $1 --variant naive --variant tiled --variant stream --variant stream_q4_v --variant auto $2 $3 --steps 1000 --reps 5 \
        --json "$o/single-$1-$3.json" > "$o/single-$1-$3.log" 2>&1
    echo "single $1 $3: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
done
(cd "$OUT" && tar czf small.tgz small && rm -rf small)
smi
