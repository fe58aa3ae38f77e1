#!/bin/bash
# Compiles 8 generated sources of a test build one by one and then in one unit
# (toolchain/units.rs's layout), with nvcc, hipcc and the emulated device's g++,
# and compares ptxas's registers and the PTX of the two CUDA builds.
# Usage: units.sh OUT_DIR (a stencil-tests build's `out` folder whose
# stencil-build/{cuda,hip} hold the sources; the emulated build's too, for .cpp).
set -euo pipefail
src=$1/stencil-build
work=$(mktemp -d)
export CUDA_PATH=${CUDA_PATH:-$(ls -d ~/.cache/cuda13/lib/python3.*/site-packages/nvidia/cu13)} HIP_PLATFORM=amd
export PATH=$CUDA_PATH/bin:$PATH
root=$(git rev-parse --show-toplevel)
# Every 35th source: several stencils and strategies.
ls "$src"/cuda/*.cu | grep -v '/unit-\|_runtime' | sed -n '1~35p' | head -8 > "$work/cu.txt"
sed 's|/cuda/|/hip/|; s|\.cu$|.hip|' "$work/cu.txt" > "$work/hip.txt"
sed 's|\.cu$|.cpp|' "$work/cu.txt" > "$work/cpp.txt"
unit() { # OUT SOURCES...: headers hoisted in order, each source in a namespace
    local out=$1 i=0; shift
    for f in "$@"; do grep -h '^#include <' "$f"; done | awk '!s[$0]++' > "$out"
    for f in "$@"; do printf 'namespace stencil_unit_%d {\n#include "%s"\n}\n' $i "$f" >> "$out"; i=$((i+1)); done
}
xargs -n1 basename < "$work/cu.txt"
timed() { # LABEL COMMAND...
    local s e; s=$(date +%s.%N); "${@:2}" > /dev/null 2>&1; e=$(date +%s.%N)
    printf '%-28s %6.1f s\n' "$1" "$(echo "$e - $s" | bc)"
}
each() { local cmd=$1 list=$2; while read -r f; do $cmd "$f" -o "$work/x.o"; done < "$list"; }
nv() { nvcc -O3 -arch=sm_90 -c "$@"; }
hc() { hipcc -O3 --offload-arch=gfx90a -w -c "$@"; }
cpu() { g++ -std=c++17 -O1 -w -I"$root/tests/cuda-on-cpu" -I"$root/tests/hip-on-cuda" -include "$src/cuda/cuda-on-cpu-prelude.h" -c "$@"; }
unit "$work/unit.cu" $(cat "$work/cu.txt")
unit "$work/unit.hip" $(cat "$work/hip.txt")
unit "$work/unit.cpp" $(cat "$work/cpp.txt")
for pass in 1 2; do
    echo "pass $pass"
    timed "nvcc, one by one" each nv "$work/cu.txt"
    timed "nvcc, one unit" nv "$work/unit.cu" -o "$work/u.o"
    if command -v hipcc > /dev/null; then
        timed "hipcc, one by one" each hc "$work/hip.txt"
        timed "hipcc, one unit" hc "$work/unit.hip" -o "$work/u.o"
    fi
    if [ -f "$(head -1 "$work/cpp.txt")" ]; then
        timed "g++ (emulated), one by one" each cpu "$work/cpp.txt"
        timed "g++ (emulated), one unit" cpu "$work/unit.cpp" -o "$work/u.o"
    fi
done
# ptxas's resources per kernel, and the PTX with names and labels left out.
regs() { grep -E 'Compiling entry|Used' | paste - - | sed -E 's/.*Used //' | sort; }
(while read -r f; do nv -Xptxas -v "$f" -o "$work/x.o" 2>&1; done < "$work/cu.txt") | regs > "$work/r1"
nv -Xptxas -v "$work/unit.cu" -o "$work/x.o" 2>&1 | regs > "$work/r2"
cmp -s "$work/r1" "$work/r2" && echo "ptxas: the same resources for all $(wc -l < "$work/r1") kernels" || diff "$work/r1" "$work/r2"
ptx() { grep -v '^\s*//\|\.file\|\.loc\|^\s*$\|\.version\|\.target\|\.address_size' | sed -E 's/[_A-Za-z0-9$]*(stencil_tests|stencil_unit|_ZN)[_A-Za-z0-9$]*/X/g; s/\$L__BB[0-9]+_[0-9]+/L/g; s/__cudart_[a-z_0-9]+/C/g; s/__local_depot[0-9]+/D/g; s/\bshared\b/X/g' | sort; }
(while read -r f; do nvcc -O3 -arch=sm_90 -ptx "$f" -o -; done < "$work/cu.txt") | ptx > "$work/p1"
nvcc -O3 -arch=sm_90 -ptx "$work/unit.cu" -o - | ptx > "$work/p2"
cmp -s "$work/p1" "$work/p2" && echo "PTX: the same $(wc -l < "$work/p1") lines (names and labels aside)" || diff "$work/p1" "$work/p2" | head
rm -rf "$work"
