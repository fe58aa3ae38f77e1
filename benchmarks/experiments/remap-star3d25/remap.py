#!/usr/bin/env python3
"""remap.py IN OUT W H HALO [REGS]: rewrites the generated star3d25 f32 fused kernel (`auto`,
2 steps, tiles of 16 x 32 vectors) so that threads are not laid out as the tile but
in order of need: the first threads own the vectors of the last level's region
(stored), then those of level 1's band, then the halo, which only level 0 reads.
A level is then computed by full warps, not by every warp on the tile's whole width.

W x H: the tile in vectors of 4 cells x rows (level 2's region: W - 4 x H - 16).
HALO: 'threads' (a thread for every vector of the tile, W * H threads) or 'loads'
(with '-rows': level 2 on level 1's whole rows of W - 2 vectors, the first 16 x (W - 2) threads)
(threads for level 1's vectors only; the first ones also load one halo vector each
into level 0's ring, `HALO` vectors). The rings' rows get a pitch of 4 mod 8 vectors where
that fits, so that a warp's row-major vectors of level 2 meet no bank conflict. REGS: the
registers a thread may have (default: what one block may have; 448 threads at 144
failed to launch)."""
import re, sys
from halo import load_halo
src, dst, W, H, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
regs_arg = int(sys.argv[6]) if len(sys.argv) > 6 else 0
s = open(src).read()
P = "stencils_cuda__star3d25__update_u"

def region(x0, x1, y0, y1):
    return [(x, y) for y in range(y0, y1) for x in range(x0, x1)]
rows = mode.endswith('rows')  # level 2 on level 1's whole rows
mode = mode.replace('-rows', '')
l2 = region(1 if rows else 2, W - 1 if rows else W - 2, 8, H - 8)
l1 = [v for v in region(1, W - 1, 4, H - 4) if v not in set(l2)]
top = [v for v in l1 if v[1] < 8]; bottom = [v for v in l1 if v[1] >= H - 8]
left = [v for v in l1 if v[1] >= 8 and v[1] < H - 8 and v[0] == 1]
right = [v for v in l1 if v[1] >= 8 and v[1] < H - 8 and v[0] == W - 2]
band = top + bottom + left + right
assert len(band) == len(l1)
inner = set(l2 + band)
halo = [v for v in region(0, W, 0, H) if v not in inner]
order = l2 + band
n2, n1 = len(l2), len(order)
threads = W * H if mode == 'threads' else n1
if mode == 'threads':
    order = order + halo
else:
    assert len(halo) <= threads
pitch = 4 * (W + 2)  # floats: 4 pad + 4W + 4 pad
aligned = pitch
# consecutive threads on consecutive 16-byte units (mod 8), across rows too
while (aligned // 4) % 8 != ((W - 2) % 8 if rows else 4):
    aligned += 4
if 2 * 8 * (H + 8) * aligned * 4 <= 232448:  # what a block may have
    pitch = aligned
ring = 2 * 8 * (H + 8) * pitch
table = ', '.join(str(x | y << 8) for x, y in order)
htable = ', '.join(str(x | y << 8) for x, y in halo) if mode == 'loads' else ''

# the tables of places
decl = f"/* remap.py: each thread's vector (x | y << 8), in order of need. */\n__constant__ unsigned short {P}_place[{len(order)}] = {{{table}}};\n"
if mode == 'loads':
    decl += f"__constant__ unsigned short {P}_halo[{len(halo)}] = {{{htable}}};\n"
s = s.replace(f"/* A thread's place in a tile of `star3d25`", decl + f"/* A thread's place in a tile of `star3d25`", 1)
# halo vectors a thread loads besides its own (mode 'loads'): kept in the thread struct
s = s.replace("float (*const rg)[72]", f"float (*const rg)[{pitch}]")
s = s.replace("float (*const ring)[8][40][72]", f"float (*const ring)[8][{H + 8}][{pitch}]")
s = s.replace("(float (*)[8][40][72])shared", f"(float (*)[8][{H + 8}][{pitch}])shared")
s = s.replace("e < 46080; e += 512", f"e < {ring}; e += {threads}")
s = s.replace("threadIdx.y * 16 + threadIdx.x;", "threadIdx.x;")
# registers (`__launch_bounds__` alone left 448 threads at 128)
regs = regs_arg or min(255, 65536 // (32 * -(-threads // 32)) // 8 * 8)
s = s.replace("__launch_bounds__(512)", f"__maxnreg__({regs})")
s = s.replace("blockIdx.x * 48", f"blockIdx.x * {4 * (W - 4)}").replace("blockIdx.y * 16", f"blockIdx.y * {H - 16}")
old_place = """    k.i2 = 4 + (int)blockIdx.x * %d - 8 + 4 * (int)tx;
    k.i1 = 4 + (int)blockIdx.y * %d - 8 + (int)ty;
    k.row = 4 + (int)ty;
    k.col = 4 + 4 * (int)tx;""" % (4 * (W - 4), H - 16)
assert old_place in s
new_place = f"""    (void)ty;
    const unsigned place = {P}_place[tx];
    const int vx = (int)(place & 255u), vy = (int)(place >> 8);
    k.i2 = 4 + (int)blockIdx.x * {4 * (W - 4)} - 8 + 4 * vx;
    k.i1 = 4 + (int)blockIdx.y * {H - 16} - 8 + vy;
    k.row = 4 + vy;
    k.col = 4 + 4 * vx;"""
if mode == 'loads':
    new_place += f"""
    k.hrow = -1;
    if (tx < {len(halo)}) {{
        const unsigned h = {P}_halo[tx];
        const int hx = (int)(h & 255u), hy = (int)(h >> 8);
        const int hi2 = 4 + (int)blockIdx.x * {4 * (W - 4)} - 8 + 4 * hx;
        const int hi1 = 4 + (int)blockIdx.y * {H - 16} - 8 + hy;
        k.hrow = 4 + hy;
        k.hcol = 4 + 4 * hx;
        k.hgrid = hi1 >= 0 && hi1 < n1 && hi2 >= 0 && hi2 < n2;
        k.hi = hi1 * s1 + hi2;
    }}"""
s = s.replace(old_place, new_place)
s = re.sub(r"k\.own = k\.inside && ty >= 8 && ty < 24 && tx >= 2 && tx < 14;", f"k.own = k.inside && tx < {n2}" + (f" && vx >= 2 && vx < {W - 2};" if rows else ";"), s)
need = re.search(r"    /\* This warp's rows.*?<< s;\n", s, re.S)
s = s.replace(need.group(0), f"    /* remap.py: level 1 by the first {n1} threads, level 2 by the first {n2}. */\n    k.need = (tx < {n1} ? 2u : 0u) | (tx < {n2} ? 4u : 0u);\n")
s = s.replace("const dim3 block(16, 32);", f"const dim3 block({threads});")
s = s.replace("(((n2 - 4 - 4) + 48 - 1) / 48)", f"(((n2 - 4 - 4) + {4 * (W - 4) - 1}) / {4 * (W - 4)})")
s = s.replace("(((n1 - 4 - 4) + 16 - 1) / 16)", f"(((n1 - 4 - 4) + {H - 17}) / {H - 16})")
s = s.replace("184320", str(4 * ring))
s = s.replace(f"update_u_vector_kernel<0>, 512,", f"update_u_vector_kernel<0>, {threads},")
if mode == 'loads':
    s = load_halo(s, 'its halo vector')
open(dst, 'w').write(s)
print(f"{dst}: {W} x {H} vectors, {threads} threads of {regs} registers, level 2 {n2}, level 1 {n1}, halo {len(halo)}, pitch {pitch}, ring {4 * ring} B")
