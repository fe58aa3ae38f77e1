#!/bin/bash
# Builds build/diag: acoustic25 f32's generated `stream` (A) and ring kernel
# (R, `temporal`, `vector = 4`) with two timing-only diagnostics of R (wrong
# results): C loads u.prev and the velocity at the cell from coalesced
# addresses (a warp's lanes along one row) instead of a lane per row; D does
# not load them at all. E: R with each warp on 4 column groups of 8 rows
# (remap.py), whose loads of the grids read at the cell touch 8 rows, not 32. Timed by ../fused3d-ab/harness.py. Run from this
# directory with nvcc 13.0 on PATH; on the GPU: build/diag acoustic25 300 994 750.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work && mkdir -p work && cd work
spec="$root/examples/suite/stencils/acoustic25.stencil.toml"
gen() { # letter tiling-keys
    { cat "$spec"; printf '\n[tiling.cuda]\n%b\n' "$2"; } > "$1.toml"
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/$1.toml" cuda) > "$1_acoustic25_f32.cu"
}
gen A 'strategy = "stream"'
gen R 'strategy = "temporal"\ntime_block = 2\nvector = 4'
sed -e 's|int cell;  |int cell, ccell;|' \
    -e 's|^\(\s*\)t.cell = gy \* n2 + gx;|&\n\1t.ccell = min(oy + warp, n1 - 1) * n2 + min(ox - 4 + 4 * lane, n2 - 4);|' \
    -e 's|+ at + t.cell;|+ at + t.ccell;|' R_acoustic25_f32.cu > C_acoustic25_f32.cu
sed -e 's|if (q + 1 >= 4 \&\& q + 1 < n0 - 4) {|if (false) {|' R_acoustic25_f32.cu > D_acoustic25_f32.cu
python3 ../remap.py R_acoustic25_f32.cu E_acoustic25_f32.cu
# F: E with those grids loaded two planes ahead instead of one (ahead2.py).
python3 ../ahead2.py E_acoustic25_f32.cu F_acoustic25_f32.cu
# G: E with those loads unconditional (plane and cells clamped: loads.py);
# H: G without its `quads` branch (rows of pairs only).
python3 ../loads.py E_acoustic25_f32.cu G_acoustic25_f32.cu
python3 ../loads.py --static E_acoustic25_f32.cu H_acoustic25_f32.cu
# X: session 22's ring kernel with the grids read at the cell copied into
# shared memory (../ring-inputs-f32/rings-cells.cu, generated at 4fb9046 with
# cells-rings.patch); Y: X remapped as E.
cp ../../ring-inputs-f32/rings-cells.cu X_acoustic25_f32.cu
python3 ../remap.py X_acoustic25_f32.cu Y_acoustic25_f32.cu
grep -c ccell C_acoustic25_f32.cu
grep -c 'if (false)' D_acoustic25_f32.cu
../../fused3d-ab/compile.sh ../build/diag
