#!/usr/bin/env python3
"""auto before (suite-old-*.json) and after (suite-*.json) per grid, with what
each session decided (the strategy label's last words) and the best single
step of the sweep before (sweep-before/)."""
import collections, glob, json, math, os
here = os.path.dirname(os.path.abspath(__file__))
def load(pattern, old):
    d = {}
    for f in glob.glob(os.path.join(here, pattern)):
        if ('suite-old' in f) != old:
            continue
        for r in json.load(open(f)):
            if r['variant'] == 'auto':
                d[(r['stencil'], r['dtype'], tuple(r['shape']))] = (r['gcells_per_s'], r['strategy'])
    return d
old, new = load('suite-old-*.json', True), load('suite-*.json', False)
best = {}
for f in glob.glob(os.path.join(here, 'sweep-before', '*.json')):
    for r in json.load(open(f)):
        if r['variant'] != 'auto' and r['strategy'].split()[0] in ('naive', 'stream', 'tiled', 'tensor'):
            k = (r['stencil'], r['dtype'], tuple(r['shape']))
            best[k] = max(best.get(k, 0), r['gcells_per_s'])
ratios = []
for k in sorted(new, key=lambda k: (len(k[2]), k[0], k[1], k[2])):
    if k not in old:
        continue
    o, n, label = old[k][0], new[k][0], new[k][1]
    way = 'single' if 'single steps' in label else 'fused' if 'fused launches' in label else \
        'not measured' if 'not yet' in label else '-'
    ratios.append(n / o)
    b = f'best single step before {best[k]:.1f}' if k in best else ''
    print(f"{k[0]:11} {k[1]} {'x'.join(map(str, k[2])):14} before {o:7.1f} after {n:7.1f} {n / o:5.2f}x  {way:12} {b}")
print(f'{len(ratios)} grids: geometric mean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x, '
      f'min {min(ratios):.2f}x, max {max(ratios):.2f}x')
