#!/usr/bin/env python3
"""Graphs against launches one by one, from run.sh's JSON folders.

    compare.py DIR [DIR...]

One line per stencil, dtype and grid: microseconds a step of `naive` and
`auto` without graphs (`--no-graphs`) -> with them, the gain, `auto` /
`naive` both ways, and what `auto`'s session ran."""
import collections, glob, json, sys

rows = collections.defaultdict(dict)
for folder in sys.argv[1:]:
    for f in glob.glob(folder + "/*.json"):
        graphs = "no" if f.endswith("no-graphs.json") else "yes"
        for r in json.load(open(f)):
            key = (r["stencil"], r["dtype"], "x".join(map(str, r["shape"])))
            rows[key][(r["variant"], graphs)] = (r["gcells_per_s"], r["strategy"])

for key in sorted(rows):
    v = rows[key]
    cells = 1
    for e in key[2].split("x"):
        cells *= int(e)
    try:
        us = lambda x: cells / (v[x][0] * 1e9) * 1e6
        gain = lambda name: v[(name, "yes")][0] / v[(name, "no")][0]
        ratio = lambda g: v[("auto", g)][0] / v[("naive", g)][0]
        print(
            f"{key[0]:11}{key[1]} {key[2]:12} naive {us(('naive', 'no')):6.2f} -> {us(('naive', 'yes')):6.2f} us "
            f"({gain('naive'):4.2f}x) | auto {us(('auto', 'no')):6.2f} -> {us(('auto', 'yes')):6.2f} us "
            f"({gain('auto'):4.2f}x) | auto/naive {ratio('no'):4.2f} -> {ratio('yes'):4.2f} | {v[('auto', 'yes')][1].split(', ')[-1]}"
        )
    except KeyError as missing:
        print(f"{key[0]:11}{key[1]} {key[2]:12} missing {missing}")
