#!/bin/bash
# Builds build/stars: star_v.cu (vector columns for any 3-D star of the
# suite, README.md) against the generated `auto` (A), `stream` with the
# suite's stream_q4_v tiling (Q) and `stream` with its defaults (S), for
# j3d7pt, j3d13pt and star3d25 in f32 and f64, timed by
# ../fused3d-ab/harness.py. Run from this directory with nvcc 13.0 on PATH.
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
rm -rf work-stars && mkdir -p work-stars && cd work-stars
generate() { # letter stencil dtype tiling-keys
    local toml="$1_$2_$3.toml"
    sed "s/dtype = \"f64\"/dtype = \"$3\"/;s/dtype = \"f32\"/dtype = \"$3\"/" "$root/examples/suite/stencils/$2.stencil.toml" > "$toml"
    [ -n "$4" ] && printf '\n[tiling.cuda]\n%b\n' "$4" >> "$toml"
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/$toml" cuda) > "$1_$2_$3.cu"
}
variant() { # letter stencil dtype steps macros...
    local v=$1 name=$2 d=$3 t=$4; shift 4
    local id; case $name in j3d7pt) id=1;; j3d13pt) id=2;; star3d25) id=3;; esac
    {
        echo "/* for (int s = $t; s >= 1: the harness reads the time block from this line. */"
        echo "#define STENCIL $id"
        echo "#define T $t"
        [ "$d" = f64 ] && echo "#define DOUBLE 1"
        for m in "$@"; do echo "#define $m"; done
        sed "s/stencils_cuda__NAME__/stencils_cuda__${name}__/" ../star_v.cu
    } > "${v}_${name}_${d}.cu"
}
for d in f32 f64; do
    v=4; [ $d = f64 ] && v=2
    for s in j3d7pt j3d13pt star3d25; do
        generate A $s $d ''
        generate Q $s $d "strategy = \"stream\"\nblock = [1, 2, 64]\nchunk = 4\nvector = $v"
        generate S $s $d 'strategy = "stream"'
    done
done
# f32: 16 x 32 threads; f64: 32 x TYN threads.
variant V j3d7pt f32 3 "LAG 2"
variant W j3d7pt f32 3 "LAG 1"
variant X j3d7pt f32 4 "LAG 2"
variant V j3d13pt f32 2 "LAG 3"
variant W j3d13pt f32 2 "LAG 1"
variant X j3d13pt f32 3 "LAG 3"
variant V star3d25 f32 2 "LAG 3"
variant W star3d25 f32 2 "LAG 4" "ZCN 168"
variant V j3d7pt f64 3 "LAG 2" "TYN 32"
variant W j3d7pt f64 3 "LAG 2" "TYN 24"
variant X j3d7pt f64 2 "LAG 2" "TYN 32"
variant V j3d13pt f64 2 "LAG 3" "TYN 24"
variant W j3d13pt f64 2 "LAG 2" "TYN 24"
variant X j3d13pt f64 2 "LAG 1" "TYN 24"
../../fused3d-ab/compile.sh ../build/stars
echo "run it as: build/stars [STENCIL [N]]"
