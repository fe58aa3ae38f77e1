#!/usr/bin/env python3
"""auto on small grids against naive, its fused launches (`temporal`) and the
single steps (`stream_*`, `tensor`), from run.sh's JSON folders.

    compare.py DIR [DIR_AFTER]

One line per stencil, dtype and grid: auto / naive, the session's decision
(F fused launches, S single steps, - a plan that does not fuse), the best
other variant, and `<<<` where auto is under 95% of it. With two folders,
auto's rows of the second beside the first's."""
import collections, glob, json, sys


def load(folder):
    groups = collections.defaultdict(dict)
    for f in glob.glob(f"{folder}/*.json"):
        for r in json.load(open(f)):
            key = (r["stencil"], r["dtype"], tuple(r["shape"]))
            groups[key][r["variant"]] = (r["gcells_per_s"], r["strategy"])
    return groups


def decision(strategy):
    if "fused launches" in strategy:
        return "F"
    if "single steps" in strategy:
        return "S"
    if "not yet measured" in strategy:
        return "?"
    return "-"


before = load(sys.argv[1])
after = load(sys.argv[2]) if len(sys.argv) > 2 else None
worse = {"before": 0, "after": 0}
for key in sorted(before):
    g = before[key]
    if "auto" not in g or "naive" not in g:
        continue
    naive = g["naive"][0]
    others = {k: v[0] for k, v in g.items() if k != "auto"}
    best_name = max(others, key=others.get)
    best = others[best_name]
    line = f"{key[0]:10} {key[1]} {'x'.join(map(str, key[2])):12} best {best_name:13} {best / naive:5.2f}x naive | auto {g['auto'][0] / naive:5.2f}x [{decision(g['auto'][1])}]"
    if g["auto"][0] < 0.95 * best:
        line += " <<<"
        worse["before"] += 1
    if after is not None and key in after and "auto" in after[key]:
        a = after[key]
        # Against the same run's naive where it has one, else the first run's.
        n = a.get("naive", (naive,))[0]
        ratio = a["auto"][0] / n
        line += f"  ->  {ratio:5.2f}x [{decision(a['auto'][1])}]"
        if ratio * n < 0.95 * best / naive * n:
            line += " <<<"
            worse["after"] += 1
    print(line)
print("auto under 95% of the best other variant:", worse)
