"""Writes variant P of a ring kernel whose rows are pairs (acoustic25 f32 on
750-cell rows): a lane whose 4 cells start 16-byte aligned (every other row
there) loads each grid read at the cell as one 16-byte vector, the others as
two 8-byte pairs (the addresses are checked every plane).
Usage: evenrows.py IN.cu OUT.cu"""
import sys
s = open(sys.argv[1]).read()
old = """            #pragma unroll
            for (int h = 0; h < 2; ++h)
                if (t.pair[h]) {
                    const float2 v0 = *(const float2 *)(g0 + 2 * h);
                    t.next0[2 * h] = v0.x;
                    t.next0[2 * h + 1] = v0.y;
                    const float2 v1 = *(const float2 *)(g1 + 2 * h);
                    t.next1[2 * h] = v1.x;
                    t.next1[2 * h + 1] = v1.y;
                }"""
quad = """            if (t.pair[1] && (((size_t)g0 | (size_t)g1) & 15) == 0) {
                const float4 v0 = *(const float4 *)g0;
                t.next0[0] = v0.x;
                t.next0[1] = v0.y;
                t.next0[2] = v0.z;
                t.next0[3] = v0.w;
                const float4 v1 = *(const float4 *)g1;
                t.next1[0] = v1.x;
                t.next1[1] = v1.y;
                t.next1[2] = v1.z;
                t.next1[3] = v1.w;
            } else {
"""
# The pairs' loop, one level deeper, is the other branch.
new = quad + "".join("    " + line for line in old.splitlines(True)) + "\n            }"
assert s.count(old) == 1
s = s.replace(old, new)
open(sys.argv[2], 'w').write(s)
