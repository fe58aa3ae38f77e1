"""Issue 6's done condition from suite JSON files: auto against the best
non-temporal variant (naive, tiled, stream*, tensor), per stencil and dtype."""
import json, sys
rows = [r for f in sys.argv[1:] for r in json.load(open(f))]
best = {}
for r in rows:
    k = (r['stencil'], r['dtype'])
    s = r['strategy'].split()[0]
    if r['variant'] != 'auto' and s in ('naive', 'tiled', 'stream', 'tensor'):
        if r['gcells_per_s'] > best.get(k, (0,))[0]:
            best[k] = (r['gcells_per_s'], r['variant'])
for r in rows:
    if r['variant'] != 'auto':
        continue
    k = (r['stencil'], r['dtype'])
    b = best[k]
    # Bytes one step moves per cell; rows written before the runner recorded
    # `bytes_per_cell` get it from the grids each stencil reads and writes.
    grids = {'acoustic25': 4, 'wave3d': 4, 'wave2d': 3}.get(r['stencil'], 2)
    bytes_per_cell = r.get('bytes_per_cell', grids * (4 if r['dtype'] == 'f32' else 8))
    bound = r['bound_gb_per_s'] / bytes_per_cell
    print(f"{k[0]:11} {k[1]} single {b[0]:7.1f} ({b[1]:11}) auto {r['gcells_per_s']:7.1f} {r['strategy'].split()[0]:10} {r['gcells_per_s']/b[0]:5.2f}x  bound x{r['gcells_per_s']/bound:4.2f}")
