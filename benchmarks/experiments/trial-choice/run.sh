#!/usr/bin/env bash
# On the GPU machine, from the repository root, with .device carried (.device/tc: this crate,
# STENCIL_CUDA_ARCH=sm_90 cargo build --release). Each line is a fresh process.
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
for n in 512 512 512 512 512 512 768 768 768 1024 1024 1024; do ./.device/tc $n; done
nvidia-smi --query-gpu=clocks.sm,clocks_throttle_reasons.active --format=csv,noheader
