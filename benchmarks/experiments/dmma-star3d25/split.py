"""Rewrites a generated `tensor` kernel so that its in-plane sum runs in 4
accumulator chains of 2 products (m = 0, 2 and m = 1, 3 along x and along y)
instead of 2 chains of 4: usage split.py IN.cu OUT.cu."""
import re
import sys

src = open(sys.argv[1]).read()
src = src.replace(
    "double sx0 = 0.0, sx1 = 0.0, sy0 = 0.0, sy1 = 0.0;",
    "double sx0 = 0.0, sx1 = 0.0, sy0 = 0.0, sy1 = 0.0, ux0 = 0.0, ux1 = 0.0, uy0 = 0.0, uy1 = 0.0;")
n = 0
for axis, band in (("x", "cx"), ("y", "cy")):
    for m in (1, 3):
        pat = re.compile(r"stencil_dmma\(s%s0, s%s1, ([^;]*%s\[%d\][^;]*)\);" % (axis, axis, band, m))
        src, k = pat.subn(r"stencil_dmma(u%s0, u%s1, \1);" % (axis, axis), src)
        n += k
src, k = re.subn(r"const double in0 = sx0 \+ sy0, in1 = sx1 \+ sy1;",
                 "const double in0 = (sx0 + ux0) + (sy0 + uy0), in1 = (sx1 + ux1) + (sy1 + uy1);", src)
if n != 4 or k != 1:
    sys.exit(f"split.py: expected 4 products and 1 sum to rewrite, found {n} and {k}")
open(sys.argv[2], "w").write(src)
