#!/usr/bin/env bash
# Runs ../box3d-bounds/work/A_<stencil>_f32.cu and work/<V>_<stencil>_f32.cu
# (gen.sh) on the CPU's emulated device with ../box3d-bounds/cpu-check/run.sh:
# 3 launches of 1 and of 2 steps on four odd grids; fails where their grids
# differ by more than 1e-5 (the z sums add in another order). With MUTANT
# set, V's weight 0.5f is changed to 0.51f first, to see the check fail.
# Usage: [MUTANT=1] run.sh STENCIL V
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KERNEL="$here/../work/$2_$1_f32.cu" TOLERANCE=1e-5 \
    MUTANT_SED='s/0\.5f \*/0.51f */; s/fmaf(0\.5f,/fmaf(0.51f,/' \
    exec "$here/../../box3d-bounds/cpu-check/run.sh" "$1"
