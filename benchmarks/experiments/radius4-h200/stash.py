"""Writes variant S of the ring kernel (acoustic25 f32, the remapped N): level
2 reads its grids at the cell from shared memory, not global memory. Level 1
computes every cell of level 2's tile 5 planes earlier and holds both values
there (the velocity it loaded, the stepped grid at the window's centre): its
lanes of the stored tile put them into a ring of 9 planes (2 x 24 rows of 36
floats a slot, 62208 bytes more), which level 2 reads 5 planes later with
one 16-byte load a grid. Only level 1 loads from global memory.
Usage: stash.py N.cu S.cu"""
import sys
s = open(sys.argv[1]).read()
def once(old, new):
    global s
    assert s.count(old) == 1, old
    s = s.replace(old, new)
SLOT = 24 * 36  # a grid's plane of the stored tile
# the plane function takes the new ring
once("float *uring, float *sring, float *stage, const int p,", "float *uring, float *sring, float *stage, float *cring, const int p,")
s = s.replace("(t, uring, sring, stage, p0 +", "(t, uring, sring, stage, cring, p0 +")
# only level 1 loads the grids read at the cell
once("    if (q + 1 >= 4 && q + 1 < n0 - 4) {", "    if (t.first && q + 1 >= 4 && q + 1 < n0 - 4) {")
# level 1 stashes its stored tile's values
once("""        if (t.own)
            *(float4 *)&staged[864 + (t.rs - 4) * 36 + t.cs - 4] = float4{res[0], res[1], res[2], res[3]};""",
f"""        if (t.own) {{
            *(float4 *)&staged[864 + (t.rs - 4) * 36 + t.cs - 4] = float4{{res[0], res[1], res[2], res[3]}};
            /* Level 2 reads these 5 planes later: the stepped grid at the cell, the velocity. */
            float *const keep = cring + M * {2*SLOT} + (t.rs - 4) * 36 + t.cs - 4;
            *(float4 *)keep = float4{{t.w[(M + 4) % 9][0], t.w[(M + 4) % 9][1], t.w[(M + 4) % 9][2], t.w[(M + 4) % 9][3]}};
            *(float4 *)(keep + {SLOT}) = float4{{now1[0], now1[1], now1[2], now1[3]}};
        }}""")
# level 2 reads them
once("""        stencils_cuda__acoustic25__update_u_level<M>(sring + M * 1664, t.rs, t.cs - 4, t.w, now0, now1, res);""",
f"""        const float *const kept = cring + (M + 4) % 9 * {2*SLOT} + (t.rs - 4) * 36 + t.cs - 4;
        const float4 k0 = *(const float4 *)kept, k1 = *(const float4 *)(kept + {SLOT});
        const float kn0[4] = {{k0.x, k0.y, k0.z, k0.w}}, kn1[4] = {{k1.x, k1.y, k1.z, k1.w}};
        stencils_cuda__acoustic25__update_u_level<M>(sring + M * 1664, t.rs, t.cs - 4, t.w, kn0, kn1, res);""")
once("    float *const stage = sring + 14976;\n", "    float *const stage = sring + 14976;\n    float *const cring = stage + 3456;\n")
old = 148608
new = old + 9 * 2 * SLOT * 4
assert s.count(str(old)) == 4
s = s.replace(str(old), str(new))
open(sys.argv[2], 'w').write(s)
