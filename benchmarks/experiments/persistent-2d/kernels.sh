#!/bin/bash
# Writes this experiment's kernels into DIR (default: this folder): the suite's
# 2-D stencils with `strategy = "persistent"`, f32 and f64 (wave2d: f64, A and D),
#   A: generated at 3f1a033;
#   B: with unroll.patch (2-D `persistent` as 2-D `temporal`: the loop over the
#      rows unrolled and, in f64, the literals in constant memory and the levels
#      selected);
#   C (f64): with unroll-only.patch (the unroll alone);
#   D (f64): with literals-only.patch (the literals and the selection alone).
# Then `../unroll-2d/build.sh DIR` builds the harness; README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
out=$(realpath -m "${1:-$here}")
mkdir -p "$out"
work=$(mktemp -d)
git -C "$root" worktree add -q --detach "$work" 3f1a033
trap 'git -C "$root" worktree remove --force "$work"' EXIT
gen() { (cd "$work" && cargo build -q -p stencil-build --example generate) && cp "$work/target/debug/examples/generate" "$out/generate-$1"; }
gen A
(cd "$work" && git apply "$here/unroll-only.patch") && gen C
(cd "$work" && git checkout -q . && git apply "$here/literals-only.patch") && gen D
(cd "$work" && git checkout -q . && git apply "$here/unroll.patch") && gen B
cd "$out"
for n in j2d5pt j2d9pt j2d9pt-gol j2d25pt; do
    for d in f32 f64; do
        m=${n/-/_}
        { sed "s/dtype *= *\"f[0-9]*\"/dtype = \"$d\"/" "$root/examples/suite/stencils/$n.stencil.toml"
          printf '\n[tiling.cuda]\nstrategy = "persistent"\n'; } > "p_${m}_$d.toml"
        ./generate-A "p_${m}_$d.toml" cuda > "A_${m}_$d.cu"
        ./generate-B "p_${m}_$d.toml" cuda > "B_${m}_$d.cu"
        if [ $d = f64 ]; then
            ./generate-C "p_${m}_$d.toml" cuda > "C_${m}_$d.cu"
            ./generate-D "p_${m}_$d.toml" cuda > "D_${m}_$d.cu"
        fi
        rm "p_${m}_$d.toml"
    done
done
{ sed 's/dtype *= *"f[0-9]*"/dtype = "f64"/' "$root/examples/suite/stencils/wave2d.stencil.toml"
  printf '\n[tiling.cuda]\nstrategy = "persistent"\n'; } > p_wave2d_f64.toml
./generate-A p_wave2d_f64.toml cuda > A_wave2d_f64.cu
./generate-D p_wave2d_f64.toml cuda > D_wave2d_f64.cu
rm p_wave2d_f64.toml generate-A generate-B generate-C generate-D
