#!/usr/bin/env python3
"""b12.py IN OUT: star3d25 f32's fused kernel (`auto`, 2 steps, 16 x 32 vectors, a
warp 2 rows) without the 4 warps of rows that compute no level (0..3 and 28..31):
12 warps on rows 4..27, as before, and their first 128 threads also load those
rows' vectors of level 0 into its ring (a plane ahead, published with their own).
The same work and layout for every level, 12 warps instead of 16, and up to 168
registers a thread."""
import sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
P = "stencils_cuda__star3d25__update_u"
def sub(old, new):
    global s
    assert old in s, old
    s = s.replace(old, new)
sub("    int row, col; /* the same in the rings */",
    "    int row, col; /* the same in the rings */\n    int hi, hrow, hcol; /* b12.py: a vector of the rows no level needs (hrow < 0: none) */\n    bool hgrid;")
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
sub("float4 &ahead, float4 (&win)[2][9]", "float4 &ahead, float4 &h_ahead, float4 &h_cell, float4 (&win)[2][9]")
sub("""        ahead = z >= 0 && z < n0 && k.grid ? *(const float4 *)&cur_u[z * k.s0 + k.i1 * k.s1 + k.i2] : float4{};
    }""", """        ahead = z >= 0 && z < n0 && k.grid ? *(const float4 *)&cur_u[z * k.s0 + k.i1 * k.s1 + k.i2] : float4{};
        if (k.hrow >= 0) {
            *(float4 *)&ring[0][(unsigned)(p - 1 + 40) % 8][k.hrow][k.hcol] = h_cell;
            h_cell = h_ahead;
            h_ahead = z >= 0 && z < n0 && k.hgrid ? *(const float4 *)&cur_u[z * k.s0 + k.hi] : float4{};
        }
    }""")
s = s.replace("(k, p, end, ahead, win, ring, out, cur_u)", "(k, p, end, ahead, h_ahead, h_cell, win, ring, out, cur_u)")
sub("    const int end = z1 + 10;", """    const int end = z1 + 10;
    float4 h_cell = {}, h_ahead = {};
    if (k.hrow >= 0) {
        h_cell = p - 1 >= 0 && k.hgrid ? *(const float4 *)&cur_u[(p - 1) * s0 + k.hi] : float4{};
        h_ahead = p >= 0 && k.hgrid ? *(const float4 *)&cur_u[p * s0 + k.hi] : float4{};
    }""")
sub("const dim3 block(16, 32);", "const dim3 block(16, 24);")
sub("update_u_vector_kernel<0>, 512,", "update_u_vector_kernel<0>, 384,")
open(dst, 'w').write(s)
print(f"{dst}: 384 threads")
