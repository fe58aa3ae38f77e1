#!/usr/bin/env bash
# Runs on the GPU machine, from the folder stage.sh filled: every test with the
# GPU ones included (CUDA, and the HIP source compiled by nvcc), compute-sanitizer
# memcheck on every kernel shape (each strategy, vectors, windows with partial
# tails, fused steps), racecheck and synccheck on the strategies that share memory
# (`tiled`, 3-D `temporal` and `persistent`; 2-D ones must share nothing); then, with `suite` as its
# argument, the suite benchmark instead, with the CuPy baseline beside it. Results go to $OUT (or ./out).
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-out}"; mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
if [ "${1:-tests}" = suite ]; then
    # The baseline first (CuPy array expressions, its check data beside its rows), then the runner with it.
    PYTHONUNBUFFERED=1 python3 ./baseline.py --json "$out/cupy.json" 2>&1 | tee "$out/cupy.log"
    ./suite --backend cuda --baseline "$out/cupy.json" --json "$out/h100-cuda.json" --markdown "$out/h100-cuda.md" \
        --chart "$out/h100-cuda.svg" 2>&1 | tee "$out/suite.log"
    exit
fi
./heat2d --include-ignored 2>&1 | tee "$out/template.log" | grep -E "test result"
./cross_backend --include-ignored --test-threads 8 > "$out/tests.log" 2>&1; grep -E "test result" "$out/tests.log"
./runtime_errors --include-ignored 2>&1 | grep -E "test result|panicked|FAILED"
compute-sanitizer --tool memcheck ./cross_backend --include-ignored --test-threads 1 --skip 2_31 cuda_heat3d cuda_star3d25 \
    cuda_random _stream_s3v _stream_c3 _tiled _temporal _persistent 2>&1 | grep -E "ERROR SUMMARY|test result" | sort | uniq -c | tee "$out/memcheck.log"
compute-sanitizer --tool racecheck ./cross_backend --include-ignored --test-threads 1 cuda_heat2d_f32_fixed_tiled \
    cuda_star3d25_f64_fixed_tiled cuda_gray_scott_f64_periodic_tiled _temporal _persistent 2>&1 | grep -E "SUMMARY|test result|RACE" | tee "$out/racecheck.log"
compute-sanitizer --tool synccheck ./cross_backend --include-ignored --test-threads 1 _tiled _temporal _persistent \
    2>&1 | grep -E "ERROR SUMMARY|test result" | sort | uniq -c | tee "$out/synccheck.log"
./cross_backend_hip --include-ignored --test-threads 8 > "$out/hip-tests.log" 2>&1; grep -E "test result" "$out/hip-tests.log"
compute-sanitizer --tool memcheck ./cross_backend_hip --include-ignored --test-threads 1 hip_heat3d hip_gray_scott_f32 \
    hip_star3d25_f64_fixed hip_random _temporal _persistent 2>&1 | grep -E "ERROR SUMMARY|test result" | sort | uniq -c | tee "$out/hip-memcheck.log"
