#!/usr/bin/env python3
"""b12.py IN OUT: star3d25 f32's fused kernel (`auto`, 2 steps, 16 x 32 vectors, a
warp 2 rows) without the 4 warps of rows that compute no level (0..3 and 28..31):
12 warps on rows 4..27, as before, and their first 128 threads also load those
rows' vectors of level 0 into its ring (a plane ahead, published with their own).
The same work and layout for every level, 12 warps instead of 16, and up to 168
registers a thread."""
import sys
from halo import load_halo
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
P = "stencils_cuda__star3d25__update_u"
def sub(old, new):
    global s
    assert old in s, old
    s = s.replace(old, new)
sub("const unsigned tx = stencil_thread_x(), ty = stencil_thread_y();",
    "const unsigned tx = stencil_thread_x(), ty0 = stencil_thread_y(), ty = ty0 + 4; /* b12.py: rows 4..27 */")
sub("    k.own = k.inside && ty >= 8 && ty < 24 && tx >= 2 && tx < 14;",
    """    k.own = k.inside && ty >= 8 && ty < 24 && tx >= 2 && tx < 14;
    k.hrow = -1;
    if (ty0 * 16 + tx < 128) {
        const int h = (int)(ty0 * 16 + tx), hx = h % 16, hy = h < 64 ? h / 16 : 28 + (h - 64) / 16;
        const int hi2 = 4 + (int)blockIdx.x * 48 - 8 + 4 * hx;
        const int hi1 = 4 + (int)blockIdx.y * 16 - 8 + hy;
        k.hrow = 4 + hy;
        k.hcol = 4 + 4 * hx;
        k.hgrid = hi1 >= 0 && hi1 < n1 && hi2 >= 0 && hi2 < n2;
        k.hi = hi1 * s1 + hi2;
    }""")
sub("e < 46080; e += 512", "e < 46080; e += 384")
sub("__launch_bounds__(512)", "__launch_bounds__(384, 1)")
s = load_halo(s, 'b12.py: a vector of the rows no level needs')
sub("const dim3 block(16, 32);", "const dim3 block(16, 24);")
sub("update_u_vector_kernel<0>, 512,", "update_u_vector_kernel<0>, 384,")
open(dst, 'w').write(s)
print(f"{dst}: 384 threads")
