#!/bin/bash
# Builds build/inputs: the generated kernels of tests/stencils/coefstar3d in
# f32 (a radius-4 star in y and x, 3 in z, two input grids read at the cell,
# one time level), timed by ../fused3d-ab/harness.py: A `auto` (what it
# takes today), S `stream` with its defaults, T the scalar `temporal` (2
# steps), R the ring kernel (`temporal`, `vector = 4`: its path without a
# previous level). Run from this directory with nvcc 13.0 on PATH; on the GPU:
# build/inputs coefstar3d 300 994 750 (the suite's grid).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work && mkdir -p work && cd work
sed 's/^dtype = "f64"/dtype = "f32"/' "$root/tests/stencils/coefstar3d.stencil.toml" > spec.toml
generate() { # letter [tiling.cuda] lines
    local v=$1; shift
    { cat spec.toml; if [ $# -gt 0 ]; then printf '\n[tiling.cuda]\n'; printf '%s\n' "$@"; fi; } > "$v.toml"
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/$v.toml" cuda) > "${v}_coefstar3d_f32.cu"
}
generate A
generate S 'strategy = "stream"'
generate T 'strategy = "temporal"' 'time_block = 2'
generate R 'strategy = "temporal"' 'time_block = 2' 'vector = 4'
../../fused3d-ab/compile.sh ../build/inputs
