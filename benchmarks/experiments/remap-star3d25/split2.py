#!/usr/bin/env python3
"""split2.py IN OUT: star3d25 f32's fused kernel (`auto`, 2 steps, tiles of 16 x 32
vectors of 4 cells, 48 x 16 cells stored) rewritten with each level in warps of its
own, as split.py's, but computing only the vectors each level needs:
- 11 warps for level 1 on its 14 x 24 vectors (rows 4..27, vectors 1..14; the last
  16 lanes compute what 16 others do and write nothing, so that every lane of a
  warp meets the same barriers), each keeping level 0's window along z in registers and loading
  its own vector of level 0;
- 6 warps for level 2 on its 12 x 16 vectors (rows 8..23, vectors 2..13), each
  keeping a window of 10 planes of level 1: the plane it takes from level 1's ring
  in an iteration is first used in the next, so the shared load's latency is not
  in the way; they also load level 0's 176 halo vectors.
The rings hold only the rows and columns read: level 0 32 x 16 vectors with a
row pitch of 22 (level 1's 14-wide rows meet no bank conflict), level 1 16
planes of 24 x 16 vectors with a pitch of 20 (level 2's 12-wide rows)."""
import sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
P = "stencils_cuda__star3d25__update_u"
# the level function, on rings of any pitch
s = s.replace(f"template <int PHASE>\nstatic __device__ __forceinline__ float4 {P}_level(const float4 (&win)[9], const float (*const rg)[72],",
              f"template <int PHASE, int PITCH>\nstatic __device__ __forceinline__ float4 {P}_level(const float4 (&win)[9], const float (*const rg)[PITCH],")
start = s.index("/* Iteration p of the plane loop")
kernel = s.index(f"static __global__ void __launch_bounds__(512) {P}_vector_kernel")
end = s.index("\n}\n", kernel) + 3
P0, P1, D1 = 88, 80, 16
new = r'''/* split2.py: a thread's place, for either level's warps. */
struct P_split {
    int n0, s0, s1, levels, z0, z1;
    int i1, i2, row, col; /* its vector on the grid and in the rings (row: level 0's) */
    bool work, grid, inside, own;
    int hi, hrow, hcol; /* level 2's warps: a vector of level 0's halo (hrow < 0: none) */
    bool hgrid;
};

/* Level 1 at plane p - 5 from the window of level 0 (planes p - 9 .. p - 1), into level 1's ring. */
template <int PHASE>
static __device__ __forceinline__ void P_split_l1(const P_split &k, const int p, float4 &ahead, float4 (&win)[9], float (*const ring0)[32][P0], float (*const ring1)[24][P1], const float *__restrict__ cur_u)
{
    const float4 cell = ahead;
    {
        const int z = p + 1;
        ahead = z >= 0 && z < k.n0 && k.grid ? *(const float4 *)&cur_u[z * k.s0 + k.i1 * k.s1 + k.i2] : float4{};
    }
    const int q = p - 5;
    const bool keep = !(1 <= k.levels && q >= 4 && q < k.n0 - 4 && k.inside);
    const float4 v = P_level<PHASE, P0>(win, ring0[(unsigned)(q + 40) % 8], k.row, k.col, keep);
    win[PHASE] = cell;
    if (k.work) {
        *(float4 *)&ring1[(unsigned)(q + 48) % D1][k.row - 4][k.col] = v;
        *(float4 *)&ring0[(unsigned)(p - 1 + 40) % 8][k.row][k.col] = win[(8 + PHASE) % 9];
    }
}

/* Level 2 at plane p - 14 from the window of level 1 (planes p - 18 .. p - 10, at win[(m + PHASE) % 10]),
   stored where own; then the window takes plane p - 9 (written 4 iterations before), for the next iteration. */
template <int PHASE>
static __device__ __forceinline__ void P_split_l2(const P_split &k, const int p, float4 &h_ahead, float4 &h_cell, float4 (&win)[10], float (*const ring0)[32][P0], float (*const ring1)[24][P1], float *__restrict__ out, const float *__restrict__ cur_u)
{
    if (k.hrow >= 0) {
        *(float4 *)&ring0[(unsigned)(p - 1 + 40) % 8][k.hrow][k.hcol] = h_cell;
        h_cell = h_ahead;
        const int z = p + 1;
        h_ahead = z >= 0 && z < k.n0 && k.hgrid ? *(const float4 *)&cur_u[z * k.s0 + k.hi] : float4{};
    }
    const int q = p - 14;
    const float4 nine[9] = {win[(0 + PHASE) % 10], win[(1 + PHASE) % 10], win[(2 + PHASE) % 10], win[(3 + PHASE) % 10], win[(4 + PHASE) % 10],
                            win[(5 + PHASE) % 10], win[(6 + PHASE) % 10], win[(7 + PHASE) % 10], win[(8 + PHASE) % 10]};
    if (q >= k.z0 && q < k.z1) {
        const bool keep = !(2 <= k.levels && q >= 4 && q < k.n0 - 4 && k.inside);
        const float4 v = P_level<0, P1>(nine, ring1[(unsigned)(q + 48) % D1], k.row - 4, k.col, keep);
        if (k.own)
            *(float4 *)&out[q * k.s0 + k.i1 * k.s1 + k.i2] = v;
    }
    win[(9 + PHASE) % 10] = *(const float4 *)&ring1[(unsigned)(p - 9 + 48) % D1][k.row - 4][k.col];
}

#define P_SPLIT_STEP(F, PH, ...) \
    F<PH>(__VA_ARGS__); \
    if ((p - p0) % 4 == 3) \
        __syncthreads(); \
    if (++p >= end) \
        break;

template <int CHUNK>
static __global__ void __launch_bounds__(544, 1) P_vector_kernel(const int n0, const int n1, const int n2, float *__restrict__ out, const float *__restrict__ cur_u, int levels, int chunk)
{
    const int s0 = n1 * n2;
    const int s1 = n2;
    const int span = CHUNK > 0 ? CHUNK : chunk;
    const int z0 = 4 + (int)blockIdx.z * span;
    const int z1 = z0 + span < n0 - 4 ? z0 + span : n0 - 4;
    const unsigned t = stencil_thread_x();
    const bool first = t < 352; /* level 1's 11 warps */
    const int u = first ? (int)t : (int)t - 352;
    /* level 1's last 16 lanes take the places of the 16 before them, and write nothing */
    const int w = first && u >= 336 ? u - 16 : u;
    const int vx = first ? 1 + w % 14 : 2 + w % 12, vy = first ? 4 + w / 14 : 8 + w / 12;
    P_split k;
    k.n0 = n0;
    k.s0 = s0;
    k.s1 = s1;
    k.levels = levels;
    k.z0 = z0;
    k.z1 = z1;
    k.work = !first || u < 336;
    k.i2 = 4 + (int)blockIdx.x * 48 - 8 + 4 * vx;
    k.i1 = 4 + (int)blockIdx.y * 16 - 8 + vy;
    k.row = vy;
    k.col = 4 * vx;
    k.grid = k.work && k.i1 >= 0 && k.i1 < n1 && k.i2 >= 0 && k.i2 < n2;
    k.inside = k.i1 >= 4 && k.i1 < n1 - 4 && k.i2 >= 4 && k.i2 < n2 - 4;
    k.own = k.inside && !first;
    k.hrow = -1;
    if (!first && u < 176) {
        /* rows 0..3, rows 28..31, then vectors 0 and 15 of rows 4..27 */
        const int hx = u < 128 ? u % 16 : ((u - 128) & 1) * 15;
        const int hy = u < 64 ? u / 16 : u < 128 ? 28 + (u - 64) / 16 : 4 + (u - 128) / 2;
        const int hi2 = 4 + (int)blockIdx.x * 48 - 8 + 4 * hx;
        const int hi1 = 4 + (int)blockIdx.y * 16 - 8 + hy;
        k.hrow = hy;
        k.hcol = 4 * hx;
        k.hgrid = hi1 >= 0 && hi1 < n1 && hi2 >= 0 && hi2 < n2;
        k.hi = hi1 * s1 + hi2;
    }
    extern __shared__ __align__(16) unsigned char shared[];
    float (*const ring0)[32][P0] = (float (*)[32][P0])shared;
    float (*const ring1)[24][P1] = (float (*)[24][P1])(shared + 8 * 32 * P0 * 4);
    for (int e = t; e < 8 * 32 * P0 + D1 * 24 * P1; e += 544)
        ((float *)shared)[e] = 0;
    __syncthreads();
    const int p0 = z0 - 8, end = z1 + 14;
    int p = p0;
    if (first) {
        float4 win[9] = {};
        float4 ahead = p >= 0 && k.grid ? *(const float4 *)&cur_u[p * s0 + k.i1 * s1 + k.i2] : float4{};
        {
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
        }
    } else {
        float4 win[10] = {};
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
            P_SPLIT_STEP(P_split_l2, 9, k, p, h_ahead, h_cell, win, ring0, ring1, out, cur_u)
        }
    }
}
'''.replace("P_", P + "_").replace("P0]", f"{P0}]").replace("P1]", f"{P1}]").replace(", P0>", f", {P0}>").replace(", P1>", f", {P1}>").replace("* P0", f"* {P0}").replace("* P1", f"* {P1}").replace("% D1", f"% {D1}").replace("D1 *", f"{D1} *")
s = s[:start] + new + s[end:]
bytes_ = 4 * (8 * 32 * P0 + D1 * 24 * P1)
s = s.replace("184320", str(bytes_))
s = s.replace("const dim3 block(16, 32);", "const dim3 block(544);")
s = s.replace("update_u_vector_kernel<0>, 512,", "update_u_vector_kernel<0>, 544,")
open(dst, 'w').write(s)
print(f"{dst}: 544 threads, shared {bytes_} B")
