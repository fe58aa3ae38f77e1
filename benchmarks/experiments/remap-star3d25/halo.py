"""The rewrite remap.py (mode 'loads') and b12.py share: threads of the generated
star3d25 f32 fused kernel that also load one vector of level 0's halo, a plane
ahead, and publish it into level 0's ring with their own (plane p - 1 in
iteration p). The kernel must set `k.hrow` (< 0: no halo vector), `k.hcol`,
`k.hgrid` and `k.hi` (the vector's offset in a plane)."""


def load_halo(s, comment):
    """`s` with the thread struct's halo fields, the plane function's halo load
    and publication, and the kernel's first two halo planes; `comment` names the
    fields in the struct."""
    def sub(old, new):
        nonlocal s
        assert old in s, old
        s = s.replace(old, new)
    sub("    int row, col; /* the same in the rings */",
        f"    int row, col; /* the same in the rings */\n    int hi, hrow, hcol; /* {comment} (hrow < 0: none) */\n    bool hgrid;")
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
    /* The halo vector: plane p - 1 (none before the first) and p, as `ahead` is p. */
    float4 h_cell = {}, h_ahead = {};
    if (k.hrow >= 0) {
        h_cell = p - 1 >= 0 && k.hgrid ? *(const float4 *)&cur_u[(p - 1) * s0 + k.hi] : float4{};
        h_ahead = p >= 0 && k.hgrid ? *(const float4 *)&cur_u[p * s0 + k.hi] : float4{};
    }""")
    return s
