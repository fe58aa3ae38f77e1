"""Summarises a trace written by a -DTRACE build (acoustic_df.cu, f32): for each
group of 48 tickets (step 1's and step 2's items of one tile row), the first
start and the last end of each step's items, in microseconds from the
launch's first start. Usage: trace-summary.py TRACE.txt"""
import sys

rows = [list(map(int, line.split())) for line in open(sys.argv[1])]
t0 = min(r[1] for r in rows)
print("tickets   step 1 items (us)   step 2 items (us)")
for lo in range(0, max(r[0] for r in rows) + 1, 48):
    group = [r for r in rows if lo <= r[0] < lo + 48]
    spans = []
    for step in (1, 2):
        items = [r for r in group if r[3] == step]
        spans.append(f"{(min(r[1] for r in items) - t0) / 1e3:7.0f} - {(max(r[2] for r in items) - t0) / 1e3:5.0f}" if items else "      -        ")
    print(f"{lo:4d}-{lo + 47:<4d} {spans[0]}     {spans[1]}")
