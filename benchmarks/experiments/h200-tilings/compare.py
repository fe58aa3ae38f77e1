#!/usr/bin/env python3
"""Before/after table of the `rows` and `medium` parts of run.sh.

    compare.py PREFIX BEFORE_DIR AFTER_DIR

PREFIX is `rows` or `medium`; each directory holds that part's JSON files.
Prints, per stencil and dtype, `stream`, `stream_q4_v` (whose scalar twin
runs these grids) and `auto` before and after, the ratios after / before,
and `auto` after over the faster of the two single steps after.
"""
import glob
import json
import sys


def load(directory, prefix):
    rows = {}
    for path in glob.glob(f"{directory}/{prefix}-*.json"):
        for r in json.load(open(path)):
            rows[(r["stencil"], r["dtype"], r["variant"])] = r
    return rows


def main():
    prefix, before_dir, after_dir = sys.argv[1:4]
    before, after = load(before_dir, prefix), load(after_dir, prefix)
    print("| stencil | dtype | grid | stream | q4v before | q4v after | auto before | auto after | q4v after/before | auto after/before | auto / best single |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted({k[:2] for k in after} & {k[:2] for k in before}):
        def g(rows, variant):
            return rows[key + (variant,)]["gcells_per_s"]
        shape = "x".join(map(str, after[key + ("auto",)]["shape"]))
        s, qb, qa = g(after, "stream"), g(before, "stream_q4_v"), g(after, "stream_q4_v")
        ab, aa = g(before, "auto"), g(after, "auto")
        print(f"| {key[0]} | {key[1]} | {shape} | {s:.1f} | {qb:.1f} | {qa:.1f} | {ab:.1f} | {aa:.1f} "
              f"| {qa / qb:.2f} | {aa / ab:.2f} | {aa / max(s, qa):.2f} |")


if __name__ == "__main__":
    main()
