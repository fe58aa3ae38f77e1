#!/usr/bin/env bash
# On the GPU machine, from the repository root, with .device carried:
# .device/cb.xz (cross_backend at the change) and .device/cb-old.xz (the same
# tests, sessions synchronizing the device as before), both built with the
# TEMP filter (heat3d, wave2d, star3d25, leapfrog3d specs):
#
#   STENCIL_CUDA_ARCH=sm_90 cargo test --release -p stencil-tests \
#       --features cuda,hip-on-cuda --test cross_backend --no-run
#
# Results under $OUT/capture-threads.tar.
set -u
out=$OUT/capture-threads
mkdir -p "$out"
xz -dkf .device/cb.xz
xz -dkf .device/cb-old.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
./benchmarks/experiments/capture-threads/build/probe > "$out/probe.txt" 2>&1
summary=$out/summary.txt
count() { # label runs binary filter...
    local label=$1 runs=$2 bin=$3 failed=0
    shift 3
    for i in $(seq "$runs"); do
        "$bin" --include-ignored "$@" > "$out/$label-$i.txt" 2>&1 || failed=$((failed + 1))
    done
    echo "$label: failed $failed of $runs ($bin --include-ignored $*)" >> "$summary"
}
count old-threads 5 .device/cb-old several_threads
count new-threads 10 .device/cb several_threads
count new-graph 10 .device/cb graph
.device/cb --include-ignored > "$out/new-all.txt" 2>&1
echo "new-all: rc $? ($(grep '^test result' "$out/new-all.txt"))" >> "$summary"
cat "$summary"
tar -C "$OUT" -cf "$OUT/capture-threads.tar" capture-threads && rm -r "$out"
