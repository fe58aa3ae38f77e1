#!/usr/bin/env bash
# Writes the kernels of this experiment into work/ (README.md): A and Q from
# ../box3d-bounds/gen.sh (run first), the hand-written z-sums variants of
# make_p.py (P, U, R, W, X) and G, the z-sums kernel stencil-build generates
# for the same specs. Then
#   cd work && ../../fused3d-ab/compile.sh ../build/ab
# and on the GPU machine `build/ab` (and `build/ab STENCIL N0 N1 N2`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
bounds="$here/../box3d-bounds/work"
mkdir -p "$here/work"
cp "$bounds"/A_*_f32.cu "$bounds"/Q_*_f32.cu "$here/work/"
for s in j3d17pt j3d27pt poisson; do
    python3 "$here/make_p.py" "$s" P 2 4 8 2
    python3 "$here/make_p.py" "$s" U 1 4 8 3
    python3 "$here/make_p.py" "$s" R 1 8 8 2
    python3 "$here/make_p.py" "$s" W 2 8 4 2
    python3 "$here/make_p.py" "$s" X 2 8 8 1
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$bounds/specs/$s.stencil.toml" cuda) > "$here/work/G_${s}_f32.cu"
done
