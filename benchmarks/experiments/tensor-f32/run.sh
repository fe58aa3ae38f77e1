#!/bin/bash
# Runs build.sh's build/ab (carried as $BIN/ab) on the GPU; writes $1/ab.txt,
# ncu's counters of one launch at 512^3 of the variants in $NCU to $1/ncu.txt,
# and compute-sanitizer's memcheck and racecheck of $SAN (default none) on an odd grid to $1/san.txt.
set -uo pipefail
out=$1 bin=${BIN:-.device}
mkdir -p "$out"
source "$(dirname "$0")/../radius4-h200/smi.sh"
{
    smi
    IFS=, read -ra grids <<< "${GRIDS:-512 512 512,61 98 132,37 45 52,300 448 448,128 512 512,256 256 256,300 994 752,300 994 750,512 512 512}"
    for g in "${grids[@]}"; do
        timeout 100 "$bin/ab" star3d25 $g
    done
    smi
} > "$out/ab.txt" 2>&1
metrics=smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.per_cycle_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,dram__bytes.sum,gpu__time_duration.sum,sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp64.sum
for s in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle wait math_pipe_throttle not_selected dispatch_stall no_instruction branch_resolving; do
    metrics+=,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
for v in ${NCU:-}; do
    timeout 150 ncu -k "regex:${v}_f32_" --launch-skip 3 -c 1 --section SpeedOfLight --metrics "$metrics" "$bin/ab" star3d25 512
done > "$out/ncu.txt" 2>&1
for v in ${SAN:-}; do
    for tool in memcheck racecheck; do
        timeout 120 compute-sanitizer --tool $tool --kernel-name "kns=${v}_f32_" "$bin/ab" star3d25 37 45 52 | tail -4
    done
done > "$out/san.txt" 2>&1
