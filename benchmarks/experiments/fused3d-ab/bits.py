# Variant B from variant A: the row masks as words of bits, loads still
# predicated. Usage: python3 bits.py A_x.cu B_x.cu (README.md).
import re,sys
s=open(sys.argv[1]).read()
# mask block
pat=re.compile(r"    const bool grid_x = (.*?), in_x = (.*?);\n    const bool own_x = in_x && (.*?);\n    bool grid_y\[(\d+)\], in_y\[\d+\], own_y\[\d+\];\n    #pragma unroll\n    for \(int j = 0; j < \d+; \+\+j\) \{\n        const (\w+) c = i1 \+ j;\n        grid_y\[j\] = (.*?);\n        in_y\[j\] = (.*?);\n        own_y\[j\] = in_y\[j\] && (.*?);\n    \}\n")
def rep(m):
    gx,ix,ox,c,ty,gy,iy,oy=m.groups()
    return (f"    const bool grid_x = {gx}, in_x = {ix};\n    const bool own_x = in_x && {ox};\n"
            f"    /* Bit j: row j of the thread, in this column, on the grid, in the region, in the tile's own part. */\n"
            f"    unsigned grid_rows = 0, in_rows = 0, own_rows = 0;\n    #pragma unroll\n    for (int j = 0; j < {c}; ++j) {{\n        const {ty} c = i1 + j;\n"
            f"        grid_rows |= (unsigned)(grid_x && {gy}) << j;\n        in_rows |= (unsigned)(in_x && {iy}) << j;\n"
            f"        own_rows |= (unsigned)(own_x && {iy} && {oy}) << j;\n    }}\n")
s,n=pat.subn(rep,s); assert n==2,n
s=s.replace("on_grid && grid_y[j] && grid_x ?","on_grid && (grid_rows >> j & 1u) ?")
s=re.sub(r"step && in_y\[j\] && in_x \?","step && (in_rows >> j & 1u) ?",s)
s=s.replace("if (own_y[j] && own_x) {","if (own_rows >> j & 1u) {")
assert "grid_y" not in s and "in_y[" not in s and "own_y" not in s, [l for l in s.split('\n') if 'in_y' in l or 'own_y' in l][:3]
open(sys.argv[2],'w').write(s)
