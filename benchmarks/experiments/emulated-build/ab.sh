#!/bin/bash
export CUDA_PATH=$HOME/.cache/cuda13/lib/python3.11/site-packages/nvidia/cu13 PATH=$HOME/.cache/cuda13/lib/python3.11/site-packages/nvidia/cu13/bin:$PATH
F="-p stencil-tests --features cuda,hip-on-cuda,gpu-on-cpu --test cross_backend"
run() { # name dir target extra-env
  cd $2
  s=$(date +%s.%N); env $4 CARGO_TARGET_DIR=$3 cargo test $F --no-run --timings > /tmp/emu-$1-build.log 2>&1; e=$(date +%s.%N)
  echo "$1 build $(echo "$e - $s" | bc)"
  s=$(date +%s.%N); env $4 CARGO_TARGET_DIR=$3 cargo test $F > /tmp/emu-$1-test.log 2>&1; e=$(date +%s.%N)
  echo "$1 test $(echo "$e - $s" | bc) $(grep 'test result' /tmp/emu-$1-test.log)"
}
run A /tmp/ci-clone /tmp/ci-clone/target X=1
run B /work/main /tmp/tgt-emu X=1
run C /work/main /tmp/tgt-emu1 CXXFLAGS=-O1
