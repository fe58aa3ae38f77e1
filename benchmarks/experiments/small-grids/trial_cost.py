#!/usr/bin/env python3
"""What a session's trial costs on the suite's grids, computed (not timed)
from a suite JSON's rates: the extra time of its single steps over as many
fused ones, as a share of 1000 fused steps, for one cycle of timed parts
(the trial before 5c57f11), four (5c57f11) and the rule of 61a53de (one
cycle where one way's part takes under half the other's and the cycle
takes 1 ms or more, else four). The single step is taken as the fastest
single-step variant of the run (the one compiled beside the fused kernel
can be slower), the parts as span steps at the steady rates.

    trial_cost.py SUITE_JSON"""
import json, re, sys

groups = {}
for r in json.load(open(sys.argv[1])):
    groups.setdefault((r["stencil"], r["dtype"]), {})[r["variant"]] = r
for key, v in sorted(groups.items()):
    auto = v.get("auto")
    m = auto and re.search(r"time_block (\d+)", auto["strategy"])
    if not m or "fused" not in auto["strategy"]:
        continue
    tb = int(m.group(1))
    span = 2 * tb if auto["strategy"].startswith("persistent") else tb
    cells = 1
    for n in auto["shape"]:
        cells *= n
    single = max(x["gcells_per_s"] for n, x in v.items() if n not in ("auto", "temporal", "persistent"))
    t_f, t_s = cells / auto["gcells_per_s"] / 1e9, cells / single / 1e9
    part_f, part_s = span * t_f, span * t_s
    clear = 2 * min(part_f, part_s) < max(part_f, part_s) and 2 * (part_f + part_s) >= 1e-3
    share = lambda cycles: (1 + 2 * cycles * span) * (t_s - t_f) / (1000 * t_f) * 100
    print(f"{key[0]:10} {key[1]} span {span:2} fused/single {t_s / t_f:4.2f}  one cycle {share(1):5.1f}%  four {share(4):5.1f}%  61a53de {share(1 if clear else 4):5.1f}%")
