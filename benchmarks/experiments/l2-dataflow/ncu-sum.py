"""Sums ncu --csv counters over run.sh's launches: per file, the reference
(the generated kernel's 2 launches), the fused launches and the 2 single-step
marches, in launch order. Usage: ncu-sum.py FILE.csv..."""
import csv
import sys

for path in sys.argv[1:]:
    rows = list(csv.reader(l for l in open(path) if l.startswith('"')))
    head = rows[0]
    name_at, metric_at, value_at, id_at = (head.index(k) for k in ("Kernel Name", "Metric Name", "Metric Value", "ID"))
    ids = sorted({int(r[id_at]) for r in rows[1:]})
    groups = {"reference (2 steps)": ids[:2], "fused (2 steps)": ids[2:-2], "march (2 steps)": ids[-2:]}
    print(path.split("/")[-1], f"({len(ids)} launches)")
    for group, sel in groups.items():
        tot = {}
        for r in rows[1:]:
            if int(r[id_at]) in sel:
                v = float(r[value_at].replace(",", ""))
                key = r[metric_at]
                tot.setdefault(key, []).append(v)
        cells = []
        for key, vs in sorted(tot.items()):
            # percentages: the launches' time-weighted mean would need the times; print the range
            if key.endswith("pct_of_peak_sustained_elapsed"):
                cells.append(f"{key.split('.')[0]} {min(vs):.0f}-{max(vs):.0f}%")
            elif key.startswith("gpu__time"):
                cells.append(f"time {sum(vs) / 1e6:.2f} ms")
            else:
                cells.append(f"{key.split('.')[0]} {sum(vs) / 1e9:.2f} GB")
        print(f"  {group:20s} {len(sel)} launches: " + ", ".join(cells))
