#!/usr/bin/env python3
"""`naive`, `stream_q4_v` and `auto` per grid from run.sh's JSON rows (microseconds a
step), with `auto` / `naive` beside session 32's (`../small-steps/h100-2026-11-27`;
grids it did not run: "-"). Usage: compare.py h100-2026-11-28"""
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


before = {}
for path in glob.glob(f"{here}/../small-steps/h100-2026-11-27/*.json"):
    for row in rows(path):
        before[(row["stencil"], row["dtype"], tuple(row["shape"]), row["variant"])] = row
ratios = []
every = [r for p in glob.glob(f"{sys.argv[1]}/*-*.json") for r in rows(p)]
for stencil in sorted({r["stencil"] for r in every}):
    for shape in sorted({tuple(r["shape"]) for r in every if r["stencil"] == stencil}):
        by = {r["variant"]: r for r in every if r["stencil"] == stencil and tuple(r["shape"]) == shape}
        naive, auto = by["naive"], by["auto"]
        ratio = us(naive) / us(auto)
        ratios.append(ratio)
        old_auto = before.get((stencil, auto["dtype"], shape, "auto"))
        old_naive = before.get((stencil, auto["dtype"], shape, "naive"))
        old = f"{us(old_naive) / us(old_auto):.2f}" if old_auto and old_naive else "-"
        stream = f"{us(by['stream_q4_v']):6.2f}" if "stream_q4_v" in by else "     -"
        cells = 1
        for n in shape:
            cells *= n
        print(f"{stencil:10} {auto['dtype']} {'x'.join(map(str, shape)):12} {cells / 1e6:5.2f}M  naive {us(naive):6.2f} "
              f"stream_q4_v {stream} auto {us(auto):6.2f} us  auto/naive {ratio:.2f} (session 32: {old})")
print(f"{len(ratios)} rows; auto under 95% of naive on {sum(r < 0.95 for r in ratios)}")
