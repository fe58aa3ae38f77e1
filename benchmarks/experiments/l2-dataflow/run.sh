#!/bin/bash
# Runs build.sh's binaries on the GPU and writes the outputs to $1 (a folder):
# the odd grids (checked against the single step), the suite's grid (timed)
# and the ncu counters the README quotes.
set -uo pipefail
cd "$(dirname "$0")"
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,temperature.gpu,clocks.sm --format=csv > "$out/smi.txt"
for b in p16 p8b11 p4b11l12 f64 f64l0 f64p8l24; do
    for g in "9 9 9" "19 27 22" "61 98 130" "30 203 131" "21 70 97"; do
        timeout 60 build/df-$b $g || echo "FAILED: df-$b $g"
    done
done > "$out/odd.txt" 2>&1
for b in p16 p8b11 p4b11l12 nosync-b11 f64 f64l0 f64p8l24; do
    echo "== df-$b"
    timeout 120 build/df-$b 300 994 750
done > "$out/suite.txt" 2>&1
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
# The first launches of each kind: the reference's 2 steps, then the fused
# launches of 2 steps (f32: 12 bands; f64: 13), then the 2 single-step marches.
timeout 300 ncu --csv --print-units base -k regex:"fused2|update_u_kernel" -c 16 --metrics $metrics build/df-p8b11 300 994 750 > "$out/ncu-p8b11.csv" 2>&1
timeout 300 ncu --csv --print-units base -k regex:"fused2|update_u_kernel" -c 16 --metrics $metrics build/df-p4b11l12 300 994 750 > "$out/ncu-p4b11l12.csv" 2>&1
timeout 300 ncu --csv --print-units base -k regex:"fused2|update_u_kernel" -c 17 --metrics $metrics build/df-f64 300 994 750 > "$out/ncu-f64.csv" 2>&1
python3 ncu-sum.py "$out"/ncu-*.csv > "$out/ncu-summary.txt"
