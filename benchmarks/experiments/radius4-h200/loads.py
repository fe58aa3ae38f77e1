"""Writes variant G of a ring kernel (acoustic25 f32): the grids read at the
cell are loaded every plane without conditions, the plane clamped to the grid
and each lane's pairs (or quad) to its row, so that no load is predicated and
no old value kept (what lies off the region is never used). With --static,
H: G whose `quads` branch is compiled out (rows of pairs only: the suite's
750-cell rows and the check grid's 130). Usage: loads.py [--static] IN.cu OUT.cu"""
import sys
args = [a for a in sys.argv[1:] if a != '--static']
static = '--static' in sys.argv
s = open(args[0]).read()
def once(old, new):
    global s
    assert s.count(old) == 1, old
    s = s.replace(old, new)
once("    bool pair[2];      /* each 8-byte pair of its cells on the grid */\n    int cell;          /* its first cell's offset in a plane */\n",
     "    int cell[2];       /* its pairs' offsets in a plane (the first: its quad's), clamped to the grid */\n")
start = s.index("    if (q + 1 >= 4 && q + 1 < n0 - 4) {")
end = s.index("    stencils_cuda__acoustic25__update_u_wait<2>();", start)
new = """    {
        /* The grids read at the cell, at the next plane: every load unconditional (plane and cells clamped to the grid). */
        const int qn = min(max(q + 1, 0), n0 - 1);
        const size_t at = (size_t)qn * s0;
        const float *const g0 = (t.first ? prev_u : cur_u) + at;
        const float *const g1 = cur_vel + at;
        if (QUADS) {
            /* Rows of whole 16-byte quads: a lane's 4 cells are one load of each grid. */
            const float4 v0 = *(const float4 *)(g0 + t.cell[0]);
            t.next0[0] = v0.x;
            t.next0[1] = v0.y;
            t.next0[2] = v0.z;
            t.next0[3] = v0.w;
            const float4 v1 = *(const float4 *)(g1 + t.cell[0]);
            t.next1[0] = v1.x;
            t.next1[1] = v1.y;
            t.next1[2] = v1.z;
            t.next1[3] = v1.w;
        } else {
            #pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float2 v0 = *(const float2 *)(g0 + t.cell[h]);
                t.next0[2 * h] = v0.x;
                t.next0[2 * h + 1] = v0.y;
                const float2 v1 = *(const float2 *)(g1 + t.cell[h]);
                t.next1[2 * h] = v1.x;
                t.next1[2 * h + 1] = v1.y;
            }
        }
    }
""".replace("QUADS", "false" if static else "quads")
s = s[:start] + new + s[end:]
once("    t.pair[0] = t.grid[0];\n    t.pair[1] = t.grid[2];\n    t.cell = gy * n2 + gx;\n",
     "    {\n        const int row = (gy < n1 ? gy : n1 - 1) * n2;\n"
     "        t.cell[0] = row + min(gx, n2 - (quads ? 4 : 2));\n"
     "        t.cell[1] = row + min(gx + 2, n2 - 2);\n    }\n")
open(args[1], 'w').write(s)
