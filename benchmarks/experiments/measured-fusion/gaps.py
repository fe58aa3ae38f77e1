#!/usr/bin/env python3
"""auto against the best other variant, per stencil, dtype and shape, from suite JSON files."""
import json, sys, collections
rows = []
for f in sys.argv[1:]:
    rows += json.load(open(f))
groups = collections.defaultdict(dict)
for r in rows:
    key = (r['stencil'], r['dtype'], tuple(r['shape']))
    groups[key][r['variant']] = r['gcells_per_s']
for key in sorted(groups):
    g = groups[key]
    if 'auto' not in g:
        continue
    best = max((v, k) for k, v in g.items() if k != 'auto')
    ratio = g['auto'] / best[0]
    flag = ' <<<' if ratio < 0.95 else ''
    print(f"{key[0]:12} {key[1]} {'x'.join(map(str, key[2])):14} auto {g['auto']:8.1f}  best {best[1]:22} {best[0]:8.1f}  {ratio:5.2f}x{flag}")
