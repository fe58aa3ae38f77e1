#!/bin/bash
# Writes this experiment's kernels into DIR (default: build-kernels/), from the
# generator at f74c55b with banking.patch applied in a scratch worktree:
#   A, B: 3-D `auto` (fused) f64 kernels without / with the literal table
#         (XB=vp: the vector and plane kernels of `temporal` bank their literals);
#   S, T: `stream` in 16-byte vectors (the suite's stream_q4_v) without / with
#         it (XB=s); and, in DIR/2d, the 2-D f64 `auto` kernels at f74c55b (A)
#         and with the patch's immediates (B: literals whose low 32 bits are
#         zero stay immediate operands).
# Then: (cd DIR && ../../fused3d-ab/compile.sh ab3) and
#       (cd DIR/2d && ../../../unroll-2d/build.sh .), nvcc 13.0 on PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
out=$(realpath -m "${1:-$here/build-kernels}")
mkdir -p "$out/2d"
work=$(mktemp -d)
git -C "$root" worktree add -q --detach "$work" f74c55b
trap 'git -C "$root" worktree remove --force "$work"' EXIT
(cd "$work" && cargo build -q -p stencil-build --example generate)
old="$work/target/debug/examples/generate"
cp "$old" "$out/generate-old"
(cd "$work" && git apply "$here/banking.patch" && cargo build -q -p stencil-build --example generate)
new="$work/target/debug/examples/generate"
spec() { sed "s/dtype *= *\"f32\"/dtype = \"f64\"/" "$root/examples/suite/stencils/$1.stencil.toml"; }
cd "$out"
for n in j3d7pt j3d13pt j3d17pt j3d27pt poisson wave3d; do
    spec $n > $n.toml
    { spec $n; printf '\n[tiling.cuda]\nstrategy = "stream"\nblock = [1, 2, 64]\nchunk = 4\nvector = 2\n'; } > ${n}_stream.toml
    "$new" $n.toml cuda > A_${n}_f64.cu
    XB=vp "$new" $n.toml cuda > B_${n}_f64.cu
    "$new" ${n}_stream.toml cuda > S_${n}_f64.cu
    XB=s "$new" ${n}_stream.toml cuda > T_${n}_f64.cu
done
for n in j2d5pt j2d9pt j2d9pt-gol j2d25pt wave2d; do
    spec $n > 2d/$n.toml
    "$out/generate-old" 2d/$n.toml cuda > 2d/A_${n/-/_}_f64.cu
    "$new" 2d/$n.toml cuda > 2d/B_${n/-/_}_f64.cu
done
rm "$out/generate-old"
