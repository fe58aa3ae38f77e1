# Writes B, C and D from R_acoustic25_f32.cu (rings-04a811e.cu, session 20's
# ring kernel) in the current folder: B loads the grids read at the cell with
# __ldcg (L2 only), C rotates each quarter warp's columns (what the generator
# now writes), D both.
import sys
s = open('R_acoustic25_f32.cu').read()

def rotate(s):
    for a, b in [('        t.cs = 4 * warp;', '        t.cs = 4 * ((warp + 3 * (lane / 8)) % 10);'),
                 ('        t.cs = 4 + 4 * (u / 24);', '        t.cs = 4 + 4 * ((u / 24 + 3 * (u % 24 / 8)) % 8);')]:
        assert a in s
        s = s.replace(a, b)
    return s

def l2_only(s):
    for g in ('g0', 'g1'):
        a = f'const float2 v = *(const float2 *)({g} + 2 * h);'
        assert a in s
        s = s.replace(a, f'const float2 v = __ldcg((const float2 *)({g} + 2 * h));')
    return s

open('B_acoustic25_f32.cu', 'w').write(l2_only(s))
open('C_acoustic25_f32.cu', 'w').write(rotate(s))
open('D_acoustic25_f32.cu', 'w').write(l2_only(rotate(s)))
