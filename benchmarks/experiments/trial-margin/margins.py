"""What each margin of `Measurement::faster` would keep, from `run.sh`'s
JSON: per grid, the trial's single / fused (from the `auto` row) and both
ways timed after it (`auto fused`, `auto single`); then, for each margin,
how often the kept way was the slower one and what that cost."""
import json, re, sys

rows = [r for f in sys.argv[1:] for r in json.load(open(f))]
cases = {}
for r in rows:
    key = (r['stencil'], r['dtype'], 'x'.join(map(str, r['shape'])))
    cases.setdefault(key, {})[r['variant']] = r
table = []
for key, c in sorted(cases.items()):
    if not {'auto', 'auto fused', 'auto single'} <= c.keys():
        continue
    m = re.search(r'measured: fused ([\d.]+) us, single ([\d.]+) us', c['auto']['strategy'])
    trial = float(m.group(2)) / float(m.group(1))
    real = c['auto single']['median_s'] / c['auto fused']['median_s']
    kept = 'single' if 'single steps (measured' in c['auto']['strategy'] else 'fused'
    table.append((key, trial, real, kept))
    print(f"{key[0]:11} {key[1]} {key[2]:>13}  trial {trial:5.3f}  calls {real:5.3f}  kept {kept}")
print()
print("margin  wrong  mean loss  worst loss (case)")
for margin in [0.90, 0.93, 0.95, 0.96, 0.97, 0.98, 0.99, 1.00, 1.01, 1.02]:
    wrong, losses = 0, []
    for key, trial, real, _ in table:
        single = trial < margin
        # Time of the kept way over the faster one's.
        loss = (real if single else 1.0) / min(real, 1.0)
        wrong += loss > 1.0
        losses.append((loss, key))
    worst = max(losses)
    mean = sum(l for l, _ in losses) / len(losses)
    print(f"{margin:5.2f}  {wrong:3}/{len(table)}  {mean:8.4f}  {worst[0]:6.3f} ({' '.join(worst[1])})")
