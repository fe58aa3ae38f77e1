#!/bin/bash
# Builds build/ab: single-step `stream` kernels of acoustic25 (f32, f64) and
# star3d25 f64 with blocks other than the defaults, generated from the suite's
# specs with a [tiling.cuda] table appended, timed by ../fused3d-ab/harness.py
# (README.md). Run from this directory with nvcc 13.0 on PATH; on the GPU:
#   build/ab acoustic25 300 994 750    (the suite's acoustic25 grid)
#   build/ab star3d25 512
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work && mkdir -p work && cd work
generate() { # letter stencil dtype tiling-keys
    sed "s/^dtype *= *\"f32\"/dtype = \"$3\"/" "$root/examples/suite/stencils/$2.stencil.toml" > "$1_$2_$3.toml"
    [ -n "$4" ] && printf '\n[tiling.cuda]\n%b\n' "$4" >> "$1_$2_$3.toml"
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/$1_$2_$3.toml" cuda) > "$1_$2_$3.cu"
}
for d in f32 f64; do
    generate A acoustic25 $d ''
    generate B acoustic25 $d 'strategy = "stream"\nblock = [1, 16, 32]'
    generate C acoustic25 $d 'strategy = "stream"\nblock = [1, 4, 64]'
    generate D acoustic25 $d 'strategy = "stream"\nblock = [1, 8, 64]'
    generate E acoustic25 $d 'strategy = "stream"\nblock = [1, 16, 32]\nchunk = 128'
    generate F acoustic25 $d 'strategy = "stream"\nblock = [1, 8, 32]\nchunk = 128'
    generate G acoustic25 $d 'strategy = "stream"\nblock = [1, 8, 32]\ncoarsen = 2'
    generate H acoustic25 $d 'strategy = "stream"\nblock = [1, 16, 32]\ncoarsen = 2\nchunk = 128'
done
generate A star3d25 f64 ''
generate B star3d25 f64 'strategy = "stream"\nblock = [1, 16, 32]'
generate C star3d25 f64 'strategy = "stream"\nblock = [1, 4, 64]'
generate D star3d25 f64 'strategy = "stream"\nblock = [1, 8, 64]'
generate E star3d25 f64 'strategy = "stream"\nblock = [1, 16, 32]\nchunk = 128'
generate F star3d25 f64 'strategy = "stream"\nblock = [1, 8, 32]\nchunk = 128'
generate G star3d25 f64 'strategy = "stream"\nblock = [1, 8, 32]\ncoarsen = 2'
generate H star3d25 f64 'strategy = "stream"\nblock = [1, 16, 32]\ncoarsen = 2\nchunk = 128'
generate Q star3d25 f64 'strategy = "stream"\nblock = [1, 2, 64]\nchunk = 4\nvector = 2'
../../fused3d-ab/compile.sh ../build/ab
