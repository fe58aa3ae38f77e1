#!/usr/bin/env python3
"""`auto` and `temporal` against `naive` (microseconds a step) from run.sh's JSON
rows, `auto` / `naive` beside the same grid's at c4fcb2b (one graph kept:
`../trial-measurements/h100-2026-11-28`). Usage: compare.py h100-2026-11-28"""
import glob
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))


def rows(path):
    data = json.load(open(path))
    return data if isinstance(data, list) else data["rows"]


def us(row):
    return row["median_s"] / row["steps"] * 1e6


def key(row):
    return (row["stencil"], row["dtype"], tuple(row["shape"]), row["steps"])


before = {}
for path in glob.glob(f"{here}/../trial-measurements/h100-2026-11-28/*.json"):
    if "-r" in os.path.basename(path):
        continue
    for row in rows(path):
        before[key(row) + (row["variant"],)] = row
for path in sorted(glob.glob(f"{sys.argv[1]}/*.json")):
    by = {}
    for row in rows(path):
        by.setdefault(row["dtype"], {})[row["variant"]] = row
    for dtype, v in sorted(by.items()):
        naive, auto, temporal = v["naive"], v["auto"], v.get("temporal")
        old_auto, old_naive = before.get(key(auto) + ("auto",)), before.get(key(auto) + ("naive",))
        old = f"{us(old_naive) / us(old_auto):.2f}" if old_auto and old_naive else "-"
        t = f"temporal/naive {us(naive) / us(temporal):.2f}" if temporal else ""
        kept = "fused" if "fused launches" in auto["strategy"] else "single"
        name = os.path.basename(path)[:-5]
        print(f"{name:24} {dtype} naive {us(naive):6.2f} auto {us(auto):6.2f} us  auto/naive "
              f"{us(naive) / us(auto):.2f} (one graph kept: {old})  {t}  auto kept {kept}")
