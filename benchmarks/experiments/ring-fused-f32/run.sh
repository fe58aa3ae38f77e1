#!/bin/bash
# Runs build.sh's binary on the GPU and writes the outputs to $1 (a folder):
# odd grids (every variant checked against A after 12 steps), the suite's
# grid twice (timed), and ncu's counters of A, B, K and N (one launch each).
set -uo pipefail
cd "$(dirname "$0")"
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,temperature.gpu,clocks.sm --format=csv > "$out/smi.txt"
for g in "19 27 22" "61 98 130" "21 70 96" "12 12 12" "30 203 132"; do
    echo "== $g"
    timeout 120 build/fused acoustic25 $g || echo "FAILED: $g"
done > "$out/odd.txt" 2>&1
for i in 1 2; do timeout 200 build/fused acoustic25 300 994 750; done > "$out/suite.txt" 2>&1
metrics=gpu__time_duration.sum,dram__bytes.sum,lts__t_bytes.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_sectors.sum,l1tex__m_l1tex2xbar_write_sectors.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
for v in A B K N; do
    timeout 200 ncu -k regex:${v}_f32 --launch-skip 3 -c 1 --metrics $metrics build/fused acoustic25 300 994 750
done > "$out/ncu.txt" 2>&1
nvidia-smi --query-gpu=name,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv >> "$out/smi.txt"
