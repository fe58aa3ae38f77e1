#!/usr/bin/env bash
# On the GPU machine, from the repository root, with .device/cb.xz carried: the cross_backend
# binary at the change, built with the spec filter (heat3d, wave2d, star3d25, leapfrog3d):
#   STENCIL_CUDA_ARCH=sm_90 cargo test --release -p stencil-tests --features cuda,hip-on-cuda --test cross_backend --no-run
set -u
out=$OUT/short-graph-tests
mkdir -p "$out"
xz -dkf .device/cb.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
failed=0
for i in $(seq 5); do .device/cb --include-ignored graph short > "$out/graph-$i.txt" 2>&1 || failed=$((failed + 1)); done
echo "graph and short tests in parallel threads: failed $failed of 5" >> "$out/summary.txt"
compute-sanitizer --tool memcheck --leak-check full .device/cb --include-ignored short_runs > "$out/memcheck.txt" 2>&1
echo "memcheck short_runs: rc $? ($(grep -E 'ERROR SUMMARY' "$out/memcheck.txt" | tail -1))" >> "$out/summary.txt"
.device/cb --include-ignored > "$out/all.txt" 2>&1
echo "all: rc $? ($(grep '^test result' "$out/all.txt"))" >> "$out/summary.txt"
cat "$out/summary.txt"
tar -C "$OUT" -cf "$OUT/short-graph-tests.tar" short-graph-tests && rm -r "$out"
