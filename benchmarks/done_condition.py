"""Issue 6's done condition from suite JSON files: auto against the best
non-temporal variant (naive, tiled, stream*), per stencil and dtype."""
import json, sys
rows = [r for f in sys.argv[1:] for r in json.load(open(f))]
best = {}
for r in rows:
    k = (r['stencil'], r['dtype'])
    s = r['strategy'].split()[0]
    if s in ('naive', 'tiled', 'stream'):
        if r['gcells_per_s'] > best.get(k, (0,))[0]:
            best[k] = (r['gcells_per_s'], r['variant'])
for r in rows:
    if r['variant'] != 'auto':
        continue
    k = (r['stencil'], r['dtype'])
    b = best[k]
    bound = r['bound_gb_per_s'] / (2 * (4 if r['dtype'] == 'f32' else 8))
    print(f"{k[0]:11} {k[1]} single {b[0]:7.1f} ({b[1]:11}) auto {r['gcells_per_s']:7.1f} {r['strategy'].split()[0]:10} {r['gcells_per_s']/b[0]:5.2f}x  bound x{r['gcells_per_s']/bound:4.2f}")
