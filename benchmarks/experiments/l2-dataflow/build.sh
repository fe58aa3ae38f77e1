#!/bin/bash
# Builds build/df-<variant>: the fused steps of acoustic_df.cu (f32, against the
# generated `stream`) and acoustic_tdf.cu (f64, against the generated `tensor`),
# with nvcc 13.0 on PATH. On the GPU: build/df-<variant> 300 994 750 (the
# suite's grid) or an odd grid (checked, not timed, below 10^8 cells).
set -euo pipefail
cd "$(dirname "$0")"
root=$(git rev-parse --show-toplevel)
mkdir -p work build
spec="$root/examples/suite/stencils/acoustic25.stencil.toml"
cp "$spec" work/stream.toml
sed 's/^dtype = "f32"/dtype = "f64"/' "$spec" > work/tensor.toml
printf '\n[tiling.cuda]\nstrategy = "tensor"\n' >> work/tensor.toml
for k in stream tensor; do
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/work/$k.toml" cuda) > "work/$k.cu"
done
cuda_lib=$(dirname "$(dirname "$(command -v nvcc)")")/lib
build() { # name, macros...
    local name=$1; shift
    nvcc -O3 -std=c++17 -arch=sm_90 -Xptxas -v "$@" -o "build/df-$name" main.cu -L"$cuda_lib" -L"${cuda_lib}64" 2> "build/df-$name.ptxas"
    echo "df-$name: $(grep -A3 "entry function '_ZN.*df6fused2" "build/df-$name.ptxas" | grep -o 'Used [0-9]* registers\|[0-9]* bytes spill stores' | sort -u | tr '\n' ' ')"
}
# f32 (acoustic_df.cu): PUB planes between releases (default 4), BAND tile
# rows a launch (default: one launch), LAG planes (default 0: none)
build p16 -DPUB=16
build p8b11 -DPUB=8 -DBAND=11
build p4b11l12 -DPUB=4 -DBAND=11 -DLAG=12
build nosync-b11 -DNOSYNC -DBAND=11
# f32 options (h100-2026-11-26-options.txt): ROWS, MINB, NOFENCE, CG
build p8b10 -DPUB=8 -DBAND=10
build p8b10rows -DPUB=8 -DBAND=10 -DROWS
build p8b14m5 -DPUB=8 -DBAND=14 -DMINB=5
build p8b16m6 -DPUB=8 -DBAND=16 -DMINB=6
build p8b11nf -DPUB=8 -DBAND=11 -DNOFENCE
build p8b11cg -DPUB=8 -DBAND=11 -DNOFENCE -DCG
build p4b11l12nf -DPUB=4 -DBAND=11 -DLAG=12 -DNOFENCE
build p4b11l12cg -DPUB=4 -DBAND=11 -DLAG=12 -DNOFENCE -DCG
# f64 (acoustic_tdf.cu): defaults PUB 4, BAND 5, LAG 16
build f64 -DF64
build f64l0 -DF64 -DLAG=0
build f64p8l24 -DF64 -DPUB=8 -DLAG=24
