#!/usr/bin/env bash
# Session 31: graphs. $1 = tests | rest
set -u
cd "$(dirname "$0")"
start=$SECONDS
[ -x suite ] || { xz -dc suite.xz > suite && chmod +x suite; }
smi() { nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$OUT/smi.txt"; }
smi
pair() { # stencil, size flag, n, tag
    for g in graphs no-graphs; do
        local extra=""; [ $g = no-graphs ] && extra="--no-graphs"
        timeout 40 ./suite --backend cuda --stencil $1 --variant naive --variant auto $extra $2 $3 --steps 1000 --reps 5 \
            --json "$o/$1-$3-$g.json" > "$o/$1-$3-$g.log" 2>&1
        echo "$1 $3 $g: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
    done
}
case $1 in
tests)
    xz -dc cb.xz > cb && chmod +x cb
    timeout 300 ./cb --include-ignored cuda_ > "$OUT/tests.txt" 2>&1; echo "cb: exit $?" >> "$OUT/smi.txt"
    timeout 200 compute-sanitizer --tool memcheck ./cb --include-ignored cuda_sessions_replay_graphs_of_launches > "$OUT/memcheck.txt" 2>&1; echo "memcheck: exit $?" >> "$OUT/smi.txt"
    o="$OUT/small3"; mkdir -p "$o"
    for n in 48 64 100 128; do for s in j3d7pt j3d27pt poisson star3d25 wave3d acoustic25; do
        [ $((SECONDS - start)) -lt 490 ] || break 2
        pair $s --size3 $n; done; done
    (cd "$OUT" && tar czf small3.tgz small3 && rm -rf rest)
    o="$OUT/small2"; mkdir -p "$o"
    for n in 512 1024; do for s in j2d5pt j2d9pt wave2d; do pair $s --size2 $n; done; done
    (cd "$OUT" && tar czf small2.tgz small2 && rm -rf small2)
    o="$OUT/big"; mkdir -p "$o"
    for g in graphs no-graphs; do
        extra=""; [ $g = no-graphs ] && extra="--no-graphs"
        timeout 150 ./suite --backend cuda --stencil j2d5pt --stencil j3d7pt --stencil star3d25 --variant auto $extra --reps 3 \
            --json "$o/big-$g.json" > "$o/big-$g.log" 2>&1
        echo "big $g: exit $? at $((SECONDS - start)) s" >> "$OUT/smi.txt"
    done
    (cd "$OUT" && tar czf big.tgz big && rm -rf big)
    ;;
esac
smi
