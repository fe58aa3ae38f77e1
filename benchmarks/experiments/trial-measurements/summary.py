#!/usr/bin/env python3
"""`naive` and `auto` (microseconds a step) and what `auto`'s trial measured, from
run.sh's JSON rows. Usage: summary.py h100-2026-11-28"""
import glob
import json
import re
import sys

for path in sorted(glob.glob(f"{sys.argv[1]}/*.json")):
    data = json.load(open(path))
    rows = data if isinstance(data, list) else data["rows"]
    by = {}
    for row in rows:
        by.setdefault(row["dtype"], {})[row["variant"]] = row
    for dtype, v in sorted(by.items()):
        auto, naive = v["auto"], v["naive"]
        us = lambda r: r["median_s"] / r["steps"] * 1e6
        # The label's "<fusion> (measured: ...)" or "<fusion>", before "; small grids".
        kept = re.search(r"(fused launches|single steps)( \(measured:[^)]*\))?", auto["strategy"])[0]
        name = path.split("/")[-1][:-5]
        print(f"{name:16} {dtype} naive {us(naive):6.2f} auto {us(auto):6.2f} us  "
              f"auto/naive {us(naive) / us(auto):.2f}  {kept}")
