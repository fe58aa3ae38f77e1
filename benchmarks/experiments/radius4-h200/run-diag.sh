#!/bin/bash
# Runs build.sh's build/diag (carried as $BIN/diag) on the GPU: an odd grid,
# the suite's grid twice, and ncu's L1 tables of $NCU (A, R, C and D). Writes under $1.
set -uo pipefail
out=$1 bin=${BIN:-.device}
mkdir -p "$out"
source "$(dirname "$0")/smi.sh"
smi > "$out/smi.txt"
{ timeout 100 "$bin/diag" acoustic25 61 98 130; for i in 1 2; do timeout 200 "$bin/diag" acoustic25 300 994 750; done; } > "$out/diag.txt" 2>&1
for v in ${NCU:-A R C D}; do
    timeout 200 ncu -k "regex:${v}_f32" --launch-skip 3 -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables \
        --section WarpStateStats --metrics l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_lg.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio \
        "$bin/diag" acoustic25 300 994 750
done > "$out/ncu.txt" 2>&1
smi >> "$out/smi.txt"
