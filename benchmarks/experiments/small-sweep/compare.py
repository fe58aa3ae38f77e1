#!/usr/bin/env python3
"""`auto` / `naive` (GCells/s) for every row of run.sh's JSON, and what `auto`
kept. Usage: compare.py h100-2026-11-28"""
import glob
import json
import os
import sys

for path in sorted(glob.glob(f"{sys.argv[1]}/*.json")):
    data = json.load(open(path))
    by = {}
    for row in data if isinstance(data, list) else data["rows"]:
        if row["backend"] == "cuda":
            by.setdefault((row["stencil"], row["dtype"], tuple(row["shape"])), {})[row["variant"]] = row
    for (stencil, dtype, shape), v in sorted(by.items()):
        naive, auto = v["naive"], v["auto"]
        kept = "fused" if "fused launches" in auto["strategy"] else "single"
        print(f"{os.path.basename(path)[:-5]:15} {stencil:11} {dtype} {'x'.join(map(str, shape)):12} "
              f"naive {naive['gcells_per_s']:7.1f} auto {auto['gcells_per_s']:7.1f} "
              f"{auto['gcells_per_s'] / naive['gcells_per_s']:5.2f}x  {auto['strategy'].split(' ')[0]} {kept}")
