#!/usr/bin/env python3
"""GCells/s of each variant from run.sh's suite rows, the suite before the change
(old, `__constant__` tables) against after (new, literals passed by value), two
rounds each, and `auto` / `naive` in each. Usage: compare.py h100-2026-11-28"""
import glob
import json
import os
import sys
from collections import defaultdict

runs = defaultdict(list)  # (stencil, n, variant, binary) -> [(gcells, strategy)]
for path in sorted(glob.glob(f"{sys.argv[1]}/*.json")):
    binary = os.path.basename(path)[:-5].rsplit("-", 1)[1]
    data = json.load(open(path))
    for row in data if isinstance(data, list) else data["rows"]:
        if row["backend"] != "cuda":
            continue
        key = (row["stencil"], row["shape"][0], row["variant"])
        runs[key + (binary,)].append((row["gcells_per_s"], row["strategy"]))
print(f"{'stencil':11} {'grid':>6} {'variant':10} {'old GCells/s':>16} {'new GCells/s':>16} new/old  new auto/naive")
for key in sorted({k[:3] for k in runs}):
    old, new = runs[key + ("old",)], runs[key + ("new",)]
    o = [g for g, _ in old]
    n = [g for g, _ in new]
    ratio = (sum(n) / len(n)) / (sum(o) / len(o))
    naive = runs[key[:2] + ("naive", "new")]
    an = ""
    if key[2] == "auto":
        an = " ".join(f"{a / b:.2f}x" for (a, _), (b, _) in zip(new, naive))
        an += " (old " + " ".join(f"{a / b:.2f}x" for (a, _), (b, _) in zip(old, runs[key[:2] + ("naive", "old")])) + ")"
        kept = "fused" if "fused launches" in new[0][1] else "single" if "single steps" in new[0][1] else ""
        an += f" {kept}"
    fmt = lambda xs: "/".join(f"{x:.1f}" for x in xs)
    print(f"{key[0]:11} {key[1]:>6} {key[2]:10} {fmt(o):>16} {fmt(n):>16} {ratio:6.3f}  {an}")
