#!/bin/bash
# Builds build/grids (acoustic25 f32) and build/coef (coefstar3d f32, two input
# grids): `stream`'s defaults (A), `stream` in 16-byte vectors (V: blocks of
# 1 x 2 x 64, chunks of 4; its scalar twin where rows are not whole quads),
# the ring kernel (`temporal`, `vector = 4`) as generated at $OLD (R: a lane a
# row) and now (N: where rows are pairs, a warp on 4 column groups of 8 rows),
# and for acoustic25
# S: N whose level 2 reads its grids at the cell from shared memory
# (stash.py); P: N loading a lane's 4 cells of those grids as one 16-byte
# vector where they start 16-byte aligned (evenrows.py). Timed by
# ../fused3d-ab/harness.py. Run from this directory with nvcc 13.0 on PATH.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
old=${OLD:-51e740b}
rm -rf /tmp/radius4-old && git -C "$root" worktree add -f --detach /tmp/radius4-old "$old" > /dev/null
trap 'git -C "$root" worktree remove --force /tmp/radius4-old' EXIT
one() { # folder stencil spec-sed binary
    rm -rf "$1" && mkdir -p "$1" && cd "$1"
    sed "$3" "$spec" > spec.toml
    gen() { # letter tree tiling-keys
        { cat spec.toml; printf '\n[tiling.cuda]\n%b\n' "$3"; } > "$1.toml"
        (cd "$2" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/$1.toml" cuda) > "$1_${stencil}_f32.cu"
    }
    stencil=$2
    gen A "$root" 'strategy = "stream"'
    gen V "$root" 'strategy = "stream"\nblock = [1, 2, 64]\nchunk = 4\nvector = 4'
    gen R /tmp/radius4-old 'strategy = "temporal"\ntime_block = 2\nvector = 4'
    gen N "$root" 'strategy = "temporal"\ntime_block = 2\nvector = 4'
    if [ "$stencil" = acoustic25 ]; then
        python3 ../../stash.py N_acoustic25_f32.cu S_acoustic25_f32.cu
        python3 ../../evenrows.py N_acoustic25_f32.cu P_acoustic25_f32.cu
    fi
    ../../../fused3d-ab/compile.sh "../../build/$4"
    cd ..
}
mkdir -p work-grids && cd work-grids
spec="$root/examples/suite/stencils/acoustic25.stencil.toml"; one acoustic25 acoustic25 's/^//' grids
spec="$root/tests/stencils/coefstar3d.stencil.toml"; one coefstar3d coefstar3d 's/"f64"/"f32"/' coef
