#!/bin/bash
# Runs build.sh's build/ab (carried as $BIN/ab) on the GPU; writes $1/ab.txt and,
# for the variants in $NCU (default: none), ncu's counters of one launch at 512^3 to $1/ncu.txt.
# GRIDS: the grids, comma-separated (default: the suite's 512^3, odd and other grids).
set -uo pipefail
out=$1 bin=${BIN:-.device}
mkdir -p "$out"
source "$(dirname "$0")/../radius4-h200/smi.sh"
{
    smi
    IFS=, read -ra grids <<< "${GRIDS:-512 512 512,37 45 52,61 98 132,100 100 100,128 512 512,300 448 448,256 256 256,512 512 512}"
    for g in "${grids[@]}"; do
        timeout 100 "$bin/ab" star3d25 $g
    done
    smi
} > "$out/ab.txt" 2>&1
metrics=smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.per_cycle_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,dram__bytes.sum,gpu__time_duration.sum
for s in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle wait math_pipe_throttle not_selected dispatch_stall no_instruction branch_resolving; do
    metrics+=,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio
done
for v in ${NCU:-}; do
    timeout 200 ncu -k "regex:${v}_f32_stencils" --launch-skip 3 -c 1 --section SpeedOfLight --metrics "$metrics" "$bin/ab" star3d25 512
done > "$out/ncu.txt" 2>&1
