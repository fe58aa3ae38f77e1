# Writes the generated `tensor` kernel IN (reach 4 on both in-plane axes, equal
# bands) to OUT with its in-plane sum as 4 products of m16n8k4: the rows of u
# along x stacked on the rows of u^T along y, against the one band (README.md).
import re, sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
start = s.index('double sx0 = 0.0, sx1 = 0.0, sy0 = 0.0, sy1 = 0.0;')
start = s.rindex('\n', 0, start) + 1
end = s.index('const double in0 = sx0 + sy0, in1 = sx1 + sy1;')
end = s.index('\n', end) + 1
pitch = re.search(r'at\[\(4 \+ by \+ g\) \* (\d+) \+ bx', s).group(1)
ind = ' ' * 16
new = f'''{ind}/* One product of the stacked rows [u (8 x 16 along x); u^T (8 x 16 along y)] with the band:
{ind}   rows 0-7 give the sum along x of this lane's cells, rows 8-15 the sum along y of the
{ind}   transposed block, which lanes (2 t, g / 2) and (2 t + 1, g / 2) hold. */
{ind}double d[4] = {{0.0, 0.0, 0.0, 0.0}};
{ind}#pragma unroll
{ind}for (int m = 0; m < 4; ++m)
{ind}    stack_dmma(d, at[(4 + by + g) * {pitch} + bx + 4 * m + t], at[(by + 4 * m + t) * {pitch} + 4 + bx + g], cx[m]);
{ind}const int l0 = 8 * t + (g >> 1), l1 = l0 + 4;
{ind}const double e0 = __shfl_sync(0xffffffffu, d[2], l0), e1 = __shfl_sync(0xffffffffu, d[2], l1);
{ind}const double o0 = __shfl_sync(0xffffffffu, d[3], l0), o1 = __shfl_sync(0xffffffffu, d[3], l1);
{ind}const double in0 = d[0] + (g & 1 ? o0 : e0), in1 = d[1] + (g & 1 ? o1 : e1);
'''
s = s[:start] + new + s[end:]
helper = '''/* D += A B for 16 x 8 x 4 f64 matrices: lane l holds A[l / 4][l % 4] (a0), A[l / 4 + 8][l % 4] (a1), B[l % 4][l / 4],
   D[l / 4][2 (l % 4) + 0, 1] (d0, d1) and D[l / 4 + 8][2 (l % 4) + 0, 1] (d2, d3). */
static __device__ __forceinline__ void stack_dmma(double (&d)[4], const double a0, const double a1, const double b)
{
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a0), "d"(a1), "d"(b));
}

'''
i = s.index('/* The block')
s = s[:i] + helper + s[i:]
open(dst, 'w').write(s)
