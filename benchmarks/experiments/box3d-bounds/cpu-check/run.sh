#!/usr/bin/env bash
# Runs A_j3d17pt_f32.cu (from ../gen.sh, in ../work) and ../T_j3d17pt_f32.cu
# on the CPU's emulated device (tests/cuda-on-cpu, as the test-only
# `gpu_on_cpu` builds do), 3 launches of 1 and of 2 steps on four odd grids,
# and fails unless their grids agree bit for bit. With MUTANT set, T's first
# weight is changed first, to see the check fail.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
tmp=$(mktemp -d)
t="$here/../T_j3d17pt_f32.cu"
if [[ -n "${MUTANT:-}" ]]; then
    sed 's/(0.5f \* U(-1, -1, -1)/(0.51f * U(-1, -1, -1)/' "$t" > "$tmp/T.cu"
    t="$tmp/T.cu"
fi
python3 "$here/launches.py" "$here/../work/A_j3d17pt_f32.cu" "$tmp/a.cpp" a_update
python3 "$here/launches.py" "$t" "$tmp/t.cpp" t_update
flags=(-std=c++17 -O1 -w -I"$root/tests/cuda-on-cpu" -include cuda_runtime.h)
for f in a t; do g++ "${flags[@]}" -include stddef.h -include mutex -c "$tmp/$f.cpp" -o "$tmp/$f.o"; done
g++ "${flags[@]}" "$here/main.cpp" "$tmp/a.o" "$tmp/t.o" -o "$tmp/check" -lpthread
"$tmp/check"
