#!/usr/bin/env bash
# Runs ../box3d-bounds/work/A_<stencil>_f32.cu and work/<V>_<stencil>_f32.cu
# (make_p.py) on the CPU's emulated device (tests/cuda-on-cpu), 3 launches of
# 1 and of 2 steps on four odd grids, and fails where their grids differ by
# more than 1e-5 (the z sums add in another order). With MUTANT set, V's
# weight 0.5f is changed to 0.51f first, to see the check fail.
# Usage: [MUTANT=1] run.sh STENCIL V
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
bounds="$here/../../box3d-bounds"
tmp=$(mktemp -d)
s=$1 v=$2
p="$here/../work/${v}_${s}_f32.cu"
if [[ -n "${MUTANT:-}" ]]; then
    sed 's/0\.5f \*/0.51f */; s/fmaf(0\.5f,/fmaf(0.51f,/' "$p" > "$tmp/P.cu"
    grep -q '0\.51f' "$tmp/P.cu" || { echo "the mutant's weight is not in $v"; exit 2; }
    p="$tmp/P.cu"
fi
python3 "$bounds/cpu-check/launches.py" "$bounds/work/A_${s}_f32.cu" "$tmp/a.cpp" a_update "stencils_cuda__${s}__update_u"
python3 "$bounds/cpu-check/launches.py" "$p" "$tmp/p.cpp" p_update "stencils_cuda__${s}__update_u"
flags=(-std=c++17 -O1 -w -I"$root/tests/cuda-on-cpu" -include cuda_runtime.h)
for f in a p; do g++ "${flags[@]}" -include stddef.h -include mutex -include cmath -c "$tmp/$f.cpp" -o "$tmp/$f.o"; done
g++ "${flags[@]}" "$here/main.cpp" "$tmp/a.o" "$tmp/p.o" -o "$tmp/check" -lpthread
"$tmp/check"
