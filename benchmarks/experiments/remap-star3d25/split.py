#!/usr/bin/env python3
"""split.py IN OUT: rewrites the generated star3d25 f32 fused kernel (`auto`, 2 steps,
tiles of 16 x 32 vectors of 4 cells, 48 x 16 cells stored) so that each level has
warps of its own: 12 warps compute level 1 on rows 4..27 (each keeping level 0's
window along z in registers, as before), 8 warps compute level 2 on rows 8..23
(each keeping level 1's window, which it takes from level 1's ring one plane an
iteration) and load level 0's halo rows. A thread keeps one window, not two, and
every warp does one level's work, not 0, 1 or 2 of them. Level 1's ring holds 16
planes of rows 4..27; a plane is read 4 iterations after it is written or later,
as before (a barrier every 4 iterations)."""
import re, sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
P = "stencils_cuda__star3d25__update_u"
start = s.index("/* Iteration p of the plane loop")
kernel = s.index(f"static __global__ void __launch_bounds__(512) {P}_vector_kernel")
end = s.index("\n}\n", kernel) + 3
new = r'''/* split.py: a thread's place, for either level's warps. */
struct P_split {
    int n0, s0, s1, levels, z0, z1;
    int i1, i2, row, col; /* its vector on the grid and in level 0's ring */
    bool grid, inside, own;
    int hi, hrow, hcol; /* level 2's warps: a vector of level 0's halo rows (hrow < 0: none) */
    bool hgrid;
};

/* Level 1 at plane p - 5 from the window of level 0 (planes p - 9 .. p - 1), into level 1's ring. */
template <int PHASE>
static __device__ __forceinline__ void P_split_l1(const P_split &k, const int p, float4 &ahead, float4 (&win)[9], float (*const ring0)[40][72], float (*const ring1)[24][72], const float *__restrict__ cur_u)
{
    const float4 cell = ahead;
    {
        const int z = p + 1;
        ahead = z >= 0 && z < k.n0 && k.grid ? *(const float4 *)&cur_u[z * k.s0 + k.i1 * k.s1 + k.i2] : float4{};
    }
    const int q = p - 5;
    const bool keep = !(1 <= k.levels && q >= 4 && q < k.n0 - 4 && k.inside);
    const float4 v = P_level<PHASE>(win, ring0[(unsigned)(q + 40) % 8], k.row, k.col, keep);
    *(float4 *)&ring1[(unsigned)(q + 48) % 16][k.row - 8][k.col] = v;
    win[PHASE] = cell;
    *(float4 *)&ring0[(unsigned)(p - 1 + 40) % 8][k.row][k.col] = win[(8 + PHASE) % 9];
}

/* Level 2 at plane p - 13: the window of level 1 takes plane p - 9 (written 4 iterations before); stored where own. */
template <int PHASE>
static __device__ __forceinline__ void P_split_l2(const P_split &k, const int p, float4 &h_ahead, float4 &h_cell, float4 (&win)[9], float (*const ring0)[40][72], float (*const ring1)[24][72], float *__restrict__ out, const float *__restrict__ cur_u)
{
    if (k.hrow >= 0) {
        *(float4 *)&ring0[(unsigned)(p - 1 + 40) % 8][k.hrow][k.hcol] = h_cell;
        h_cell = h_ahead;
        const int z = p + 1;
        h_ahead = z >= 0 && z < k.n0 && k.hgrid ? *(const float4 *)&cur_u[z * k.s0 + k.hi] : float4{};
    }
    const int x = p - 9;
    win[(8 + PHASE) % 9] = *(const float4 *)&ring1[(unsigned)(x + 48) % 16][k.row - 8][k.col];
    const int q = x - 4;
    if (q >= k.z0 && q < k.z1) {
        const bool keep = !(2 <= k.levels && q >= 4 && q < k.n0 - 4 && k.inside);
        const float4 v = P_level<PHASE>(win, ring1[(unsigned)(q + 48) % 16], k.row - 8, k.col, keep);
        if (k.own)
            *(float4 *)&out[q * k.s0 + k.i1 * k.s1 + k.i2] = v;
    }
}

#define P_SPLIT_STEP(F, PH, ...) \
    F<PH>(__VA_ARGS__); \
    if ((p - p0) % 4 == 3) \
        __syncthreads(); \
    if (++p >= end) \
        break;

template <int CHUNK>
static __global__ void __launch_bounds__(640, 1) P_vector_kernel(const int n0, const int n1, const int n2, float *__restrict__ out, const float *__restrict__ cur_u, int levels, int chunk)
{
    const int s0 = n1 * n2;
    const int s1 = n2;
    const int span = CHUNK > 0 ? CHUNK : chunk;
    const int z0 = 4 + (int)blockIdx.z * span;
    const int z1 = z0 + span < n0 - 4 ? z0 + span : n0 - 4;
    const unsigned t = stencil_thread_x();
    const bool first = t < 384; /* level 1's 12 warps */
    const unsigned u = first ? t : t - 384;
    const int vx = (int)(u % 16), vy = (first ? 4 : 8) + (int)(u / 16);
    P_split k;
    k.n0 = n0;
    k.s0 = s0;
    k.s1 = s1;
    k.levels = levels;
    k.z0 = z0;
    k.z1 = z1;
    k.i2 = 4 + (int)blockIdx.x * 48 - 8 + 4 * vx;
    k.i1 = 4 + (int)blockIdx.y * 16 - 8 + vy;
    k.row = 4 + vy;
    k.col = 4 + 4 * vx;
    k.grid = k.i1 >= 0 && k.i1 < n1 && k.i2 >= 0 && k.i2 < n2;
    k.inside = k.i1 >= 4 && k.i1 < n1 - 4 && k.i2 >= 4 && k.i2 < n2 - 4;
    k.own = k.inside && !first && vx >= 2 && vx < 14;
    k.hrow = -1;
    if (!first && u < 128) {
        const int hx = (int)(u % 16), hy = (int)(u / 16) < 4 ? (int)(u / 16) : 24 + (int)(u / 16);
        const int hi2 = 4 + (int)blockIdx.x * 48 - 8 + 4 * hx;
        const int hi1 = 4 + (int)blockIdx.y * 16 - 8 + hy;
        k.hrow = 4 + hy;
        k.hcol = 4 + 4 * hx;
        k.hgrid = hi1 >= 0 && hi1 < n1 && hi2 >= 0 && hi2 < n2;
        k.hi = hi1 * s1 + hi2;
    }
    extern __shared__ __align__(16) unsigned char shared[];
    float (*const ring0)[40][72] = (float (*)[40][72])shared;
    float (*const ring1)[24][72] = (float (*)[24][72])(shared + 8 * 40 * 72 * 4);
    for (int e = t; e < 8 * 40 * 72 + 16 * 24 * 72; e += 640)
        ((float *)shared)[e] = 0;
    __syncthreads();
    float4 win[9] = {};
    const int p0 = z0 - 8, end = z1 + 13;
    int p = p0;
    if (first) {
        float4 ahead = p >= 0 && k.grid ? *(const float4 *)&cur_u[p * s0 + k.i1 * s1 + k.i2] : float4{};
        for (;;) {
            P_SPLIT_STEP(P_split_l1, 0, k, p, ahead, win, ring0, ring1, cur_u)
            P_SPLIT_STEP(P_split_l1, 1, k, p, ahead, win, ring0, ring1, cur_u)
            P_SPLIT_STEP(P_split_l1, 2, k, p, ahead, win, ring0, ring1, cur_u)
            P_SPLIT_STEP(P_split_l1, 3, k, p, ahead, win, ring0, ring1, cur_u)
            P_SPLIT_STEP(P_split_l1, 4, k, p, ahead, win, ring0, ring1, cur_u)
            P_SPLIT_STEP(P_split_l1, 5, k, p, ahead, win, ring0, ring1, cur_u)
            P_SPLIT_STEP(P_split_l1, 6, k, p, ahead, win, ring0, ring1, cur_u)
            P_SPLIT_STEP(P_split_l1, 7, k, p, ahead, win, ring0, ring1, cur_u)
            P_SPLIT_STEP(P_split_l1, 8, k, p, ahead, win, ring0, ring1, cur_u)
        }
    } else {
        float4 h_cell = {}, h_ahead = {};
        if (k.hrow >= 0) {
            h_cell = p - 1 >= 0 && k.hgrid ? *(const float4 *)&cur_u[(p - 1) * s0 + k.hi] : float4{};
            h_ahead = p >= 0 && k.hgrid ? *(const float4 *)&cur_u[p * s0 + k.hi] : float4{};
        }
        for (;;) {
            P_SPLIT_STEP(P_split_l2, 0, k, p, h_ahead, h_cell, win, ring0, ring1, out, cur_u)
            P_SPLIT_STEP(P_split_l2, 1, k, p, h_ahead, h_cell, win, ring0, ring1, out, cur_u)
            P_SPLIT_STEP(P_split_l2, 2, k, p, h_ahead, h_cell, win, ring0, ring1, out, cur_u)
            P_SPLIT_STEP(P_split_l2, 3, k, p, h_ahead, h_cell, win, ring0, ring1, out, cur_u)
            P_SPLIT_STEP(P_split_l2, 4, k, p, h_ahead, h_cell, win, ring0, ring1, out, cur_u)
            P_SPLIT_STEP(P_split_l2, 5, k, p, h_ahead, h_cell, win, ring0, ring1, out, cur_u)
            P_SPLIT_STEP(P_split_l2, 6, k, p, h_ahead, h_cell, win, ring0, ring1, out, cur_u)
            P_SPLIT_STEP(P_split_l2, 7, k, p, h_ahead, h_cell, win, ring0, ring1, out, cur_u)
            P_SPLIT_STEP(P_split_l2, 8, k, p, h_ahead, h_cell, win, ring0, ring1, out, cur_u)
        }
    }
}
'''.replace("P_", P + "_")
s = s[:start] + new + s[end:]
bytes_ = 4 * (8 * 40 * 72 + 16 * 24 * 72)
s = s.replace("184320", str(bytes_))
s = s.replace("const dim3 block(16, 32);", "const dim3 block(640);")
s = s.replace("update_u_vector_kernel<0>, 512,", "update_u_vector_kernel<0>, 640,")
open(dst, 'w').write(s)
print(f"{dst}: 640 threads, shared {bytes_} B")
