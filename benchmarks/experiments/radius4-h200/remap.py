"""Writes variant E of the generated ring kernel R (acoustic25 f32): each warp
takes 4 neighbouring column groups of 8 rows (a lane: row lane % 8 of the
group lane / 8), instead of 32 rows (a lane a row, the quarters' groups spread
by 3). A quarter warp still reads 8 rows of one group from shared memory (no
bank conflict); a warp's loads of the grids read at the cell touch 8 rows,
not 32. Usage: remap.py R.cu E.cu"""
import sys
src = open(sys.argv[1]).read()
old = """    if (t.first) {
        t.rs = lane;
        t.cs = 4 * ((warp + 3 * (lane / 8)) % 10);
    } else {
        const int u = (warp - 10) * 32 + lane;
        t.rs = 4 + u % 24;
        t.cs = 4 + 4 * ((u / 24 + 3 * (u % 24 / 8)) % 8);
    }"""
new = """    if (t.first) {
        const int k = 4 * warp + lane / 8;
        t.rs = 8 * (k / 10) + lane % 8;
        t.cs = 4 * (k % 10);
    } else {
        const int k = 4 * (warp - 10) + lane / 8;
        t.rs = 4 + 8 * (k / 8) + lane % 8;
        t.cs = 4 + 4 * (k % 8);
    }"""
assert src.count(old) == 1
open(sys.argv[2], 'w').write(src.replace(old, new))
