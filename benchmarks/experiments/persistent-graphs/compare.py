#!/usr/bin/env python3
"""Summarises run.sh's JSON rows: wave3d's time a step with and without graphs,
and every single-step kernel against `naive` on the small grids.
Usage: compare.py h100-2026-11-27"""
import glob
import json
import sys

folder = sys.argv[1]


def rows(path):
    data = json.load(open(path))
    return data if isinstance(data, list) else data["rows"]


def how(row):
    """How a fused plan ran (its strategy's last part); nothing for the others."""
    return row["strategy"].split(", ")[-1] if "launches" in row["strategy"] or "steps" in row["strategy"] else ""


def per_step(row):
    return row["median_s"] / row["steps"] * 1e6


print("wave3d: microseconds a step, graphs -> no graphs (auto/naive with graphs)")
for n in ["48", "64", "100", "128", "suite"]:
    on = {(r["dtype"], r["variant"]): r for r in rows(f"{folder}/wave3d-{n}-graphs.json")}
    off = {(r["dtype"], r["variant"]): r for r in rows(f"{folder}/wave3d-{n}-no-graphs.json")}
    for (dtype, variant), r in sorted(on.items()):
        o = off[(dtype, variant)]
        ratio = on[(dtype, "naive")]["median_s"] / r["median_s"]
        print(f"{n:>5} {dtype} {variant:10} {per_step(r):9.2f} -> {per_step(o):9.2f}"
              f" ({per_step(o) / per_step(r):.2f}x)  vs naive {ratio:.2f}  {how(r)}")
print()
print("single-step kernels with graphs: microseconds a step (naive / it)")
for path in sorted(glob.glob(f"{folder}/single-*.json")):
    rs = rows(path)
    name = path.split("single-")[1][:-5]
    for dtype in ["f32", "f64"]:
        sub = [r for r in rs if r["dtype"] == dtype]
        naive = next(r for r in sub if r["variant"] == "naive")["median_s"]
        cells = " ".join(f"{r['variant']}={per_step(r):.2f} ({naive / r['median_s']:.2f})" for r in sub)
        auto = next(r for r in sub if r["variant"] == "auto")
        print(f"{name:15} {dtype} {cells} | auto: {how(auto) or auto['strategy']}")
