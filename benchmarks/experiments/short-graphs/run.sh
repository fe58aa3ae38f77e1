#!/usr/bin/env bash
# On the GPU machine, from the repository root, with .device carried: sg-old (this crate built
# against the generator before short graphs) and sg-new (after), each
# STENCIL_CUDA_ARCH=sm_90 cargo build --release. Two rounds, in turn.
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in 1 2; do for v in old new; do echo "== sg-$v round $r"; ./.device/sg-$v; done; done
nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active --format=csv,noheader
