#!/usr/bin/env python3
"""`auto` / `naive` per small grid from run.sh's JSON rows, beside session 31's
(`../graphs/h100-2026-11-27`, graphs on; grids it did not run: "-").
Usage: compare.py h100-2026-11-27"""
import glob
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))


def rows(path):
    data = json.load(open(path))
    return data if isinstance(data, list) else data["rows"]


def key(row, variant):
    return (row["stencil"], row["dtype"], tuple(row["shape"]), variant)


before = {}
for path in glob.glob(f"{here}/../graphs/h100-2026-11-27/**/*.json", recursive=True):
    if "no-graphs" not in path:
        for row in rows(path):
            before[key(row, row["variant"])] = row
ratios = []
for path in sorted(glob.glob(f"{sys.argv[1]}/*-*.json")):
    if "single-" in path:
        continue
    by = {}
    for row in rows(path):
        by.setdefault(row["dtype"], {})[row["variant"]] = row
    for dtype, variants in sorted(by.items()):
        naive, auto = variants["naive"], variants["auto"]
        ratio = naive["median_s"] / auto["median_s"]
        ratios.append(ratio)
        old_auto, old_naive = before.get(key(auto, "auto")), before.get(key(auto, "naive"))
        old = f"{old_naive['median_s'] / old_auto['median_s']:.2f}" if old_auto and old_naive else "-"
        shape = "x".join(map(str, auto["shape"]))
        print(f"{auto['stencil']:10} {dtype} {shape:12} naive {naive['median_s'] / naive['steps'] * 1e6:6.2f} "
              f"auto {auto['median_s'] / auto['steps'] * 1e6:6.2f} us  auto/naive {ratio:.2f} (session 31: {old})  {auto['strategy']}")
print(f"{len(ratios)} rows; auto under 95% of naive on {sum(r < 0.95 for r in ratios)}")
