#!/usr/bin/env bash
# Runs A_<stencil>_f32.cu and T_<stencil>_f32.cu (from ../gen.sh, in ../work)
# (STENCIL: j3d17pt, j3d27pt or poisson; j3d17pt unless given)
# on the CPU's emulated device (tests/cuda-on-cpu, as the test-only
# `gpu_on_cpu` builds do), 3 launches of 1 and of 2 steps on four odd grids,
# and fails unless their grids agree bit for bit. With MUTANT set, T's first
# weight is changed first, to see the check fail.
# For other experiments: KERNEL, the file to run instead of T; TOLERANCE,
# the difference allowed (0: bit for bit); MUTANT_SED, the sed script that
# makes the mutant, which must write the weight 0.51f.
set -euo pipefail
# Usage: [MUTANT=1] [KERNEL=FILE TOLERANCE=D MUTANT_SED=SCRIPT] run.sh [STENCIL]
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
tmp=$(mktemp -d)
s=${1:-j3d17pt}
t=${KERNEL:-"$here/../work/T_${s}_f32.cu"}
if [[ -n "${MUTANT:-}" ]]; then
    sed "${MUTANT_SED:-s/const float u = (0\.5f/const float u = (0.51f/}" "$t" > "$tmp/T.cu"
    grep -q '0\.51f' "$tmp/T.cu" || { echo "the mutant's weight is not in $t"; exit 2; }
    t="$tmp/T.cu"
fi
python3 "$here/launches.py" "$here/../work/A_${s}_f32.cu" "$tmp/a.cpp" a_update "stencils_cuda__${s}__update_u"
python3 "$here/launches.py" "$t" "$tmp/t.cpp" t_update "stencils_cuda__${s}__update_u"
flags=(-std=c++17 -O1 -w -I"$root/tests/cuda-on-cpu" -include cuda_runtime.h)
for f in a t; do g++ "${flags[@]}" -include stddef.h -include mutex -include cmath -c "$tmp/$f.cpp" -o "$tmp/$f.o"; done
g++ "${flags[@]}" -DTOLERANCE="${TOLERANCE:-0}" "$here/main.cpp" "$tmp/a.o" "$tmp/t.o" -o "$tmp/check" -lpthread
"$tmp/check"
