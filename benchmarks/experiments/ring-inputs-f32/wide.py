# Writes P, Q and R from O_acoustic25_f32.cu (rings-4fb9046.cu without the
# launcher's single steps on rows of whole 64-byte lines) in the current
# folder, for rows of whole 16-byte quads only (n2 % 4 == 0; the harness's
# grids here): P copies the stepped grid's planes by 16-byte `cp.async.cg`
# (L2 only, one pass) instead of 8-byte `.ca` (through L1, two passes); Q
# loads the grids read at the cell as one 16-byte load a grid (two 8-byte
# ones before); R both.
s = open('O_acoustic25_f32.cu').read()

def sub(s, a, b):
    assert a in s, a
    return s.replace(a, b)

def quads(s):
    s = sub(s, 'asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(to), "l"(src), "r"(on ? 8 : 0) : "memory");',
            'asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(to), "l"(src), "r"(on ? 16 : 0) : "memory");')
    s = sub(s, '''        const int r = k / 24, c = 2 * (k % 24);
        const int x = ox - 8 + c;
        t.con[0] = oy - 8 + r >= 0 && oy - 8 + r < n1 && x >= 0 && x < n2;
        t.csrc[0] = t.con[0] ? (oy - 8 + r) * n2 + x : 0;
        t.con[1] = oy - 8 + r + 20 >= 0 && oy - 8 + r + 20 < n1 && x >= 0 && x < n2;
        t.csrc[1] = t.con[1] ? (oy - 8 + r + 20) * n2 + x : 0;
        t.clast = r + 20 < 40;''', '''        const int r = k / 12, c = 4 * (k % 12);
        const int x = ox - 8 + c;
        t.con[0] = oy - 8 + r >= 0 && oy - 8 + r < n1 && x >= 0 && x < n2;
        t.csrc[0] = t.con[0] ? (oy - 8 + r) * n2 + x : 0;''')
    s = sub(s, '''        stencils_cuda__acoustic25__update_u_copy(&slot[t.cdst + 1040], at + t.csrc[1], plane && t.con[1]);
''', '')
    return s

def wide_loads(s):
    for g in ('0', '1'):
        a = f'''        #pragma unroll
        for (int h = 0; h < 2; ++h)
            if (t.pair[h]) {{
                const float2 v = *(const float2 *)(g{g} + 2 * h);
                t.next{g}[2 * h] = v.x;
                t.next{g}[2 * h + 1] = v.y;
            }}'''
        b = f'''        if (t.pair[0]) {{
            const float4 v = *(const float4 *)g{g};
            t.next{g}[0] = v.x;
            t.next{g}[1] = v.y;
            t.next{g}[2] = v.z;
            t.next{g}[3] = v.w;
        }}'''
        s = sub(s, a, b)
    return s

open('P_acoustic25_f32.cu', 'w').write(quads(s))
open('Q_acoustic25_f32.cu', 'w').write(wide_loads(s))
open('R_acoustic25_f32.cu', 'w').write(wide_loads(quads(s)))
