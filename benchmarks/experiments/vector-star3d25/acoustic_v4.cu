/*
 * Prototype (hand-written, not generated; README.md beside it): acoustic25
 * f32 (SUITE.md: a radius-4 star leapfrog with a velocity grid) with 2 fused
 * steps in the float4 columns of star3d25_v4.cu, on grids whose rows are
 * whole float2s but not whole float4s (the suite's grid is 750 cells wide):
 *
 * - the tile's origin along `x` is a multiple of 4 cells, so each thread's
 *   4 cells are two 8-byte-aligned pairs; global loads and stores move the
 *   pairs (two 8-byte accesses), the rings and the arithmetic take float4s;
 * - a pair is on the grid, inside the interior, or stored as a whole (n2 even).
 *
 * Level 1 (u at t + 1, plane p - 5) reads u.prev and vel at its plane; level
 * 2 (u at t + 2, plane p - 10) reads vel at its plane and level 0 where it
 * left the window (old0). Level 2 stores u(t + 2) to out and level 1's centre
 * to out_prev, as the generated fused leapfrogs do. Only `levels` == 2.
 *
 * Macros: RW (rows a thread owns), TYN (threads along y), LAG (iterations
 * between a ring plane's publication and its read), ZCN (planes a block
 * marches), LATE (u.prev and vel loaded just before their level).
 */
#include <cuda_runtime.h>
#include <stddef.h>

#ifndef RW
#define RW 1
#endif
#ifndef TYN
#define TYN 32
#endif
#ifndef TXN
#define TXN 16
#endif
#ifndef ZCN
#define ZCN 146
#endif
#ifndef LAG
#define LAG 3
#endif
#ifndef LATE
#define LATE 0 /* 1: u.prev and vel loaded just before the level that reads them (fewer live registers) */
#endif
#ifndef MINB
#define MINB 1
#endif
namespace {
constexpr int R = 4, TX = TXN, TY = TYN, W = 4 * TX, H = TY * RW, PAD = 4, PW = W + 2 * PAD, PH = H + 2 * PAD;
constexpr int OX = W - 4 * R, OY = H - 4 * R, ZC = ZCN, L = LAG, S = 2 * L, WN = 2 * R + 1;
__device__ __forceinline__ int slot(int z) { return (z + 64 * S) % S; }

__device__ __forceinline__ float at(const float4 &v, int i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

typedef float4 Win[WN][RW];

/* Bits 2 j + h: pair h of row j. */
__device__ __forceinline__ bool bit(unsigned m, int j, int h) { return m >> (2 * j + h) & 1; }

/* One level of the leapfrog at one plane, in the generated kernels' order:
   2 u - u.prev + 0.01 vel^2 (3 c0 u + sum of c[r] (6 neighbours)); keep: the
   pairs that keep their value. */
template <int PHASE>
__device__ __forceinline__ void level(const Win &win, const float (*rg)[PW], int row, int col, unsigned keep,
                                      const float4 (&prev)[RW], const float4 (&vel)[RW], float4 (&res)[RW])
{
#pragma unroll
    for (int j = 0; j < RW; ++j) {
        const float4 c = win[(R + PHASE) % WN][j];
        const float4 l = *(const float4 *)&rg[row + j][col - 4];
        const float4 r = *(const float4 *)&rg[row + j][col + 4];
        float4 up[R], dn[R];
#pragma unroll
        for (int k = 1; k <= R; ++k) {
            up[k - 1] = j - k >= 0 ? win[(R + PHASE) % WN][j - k] : *(const float4 *)&rg[row + j - k][col];
            dn[k - 1] = j + k < RW ? win[(R + PHASE) % WN][j + k] : *(const float4 *)&rg[row + j + k][col];
        }
        float o[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            float a[R + 1];
#pragma unroll
            for (int k = 1; k <= R; ++k) {
                const float xl = e - k >= 0 ? at(c, e - k) : at(l, e - k + 4);
                const float xr = e + k < 4 ? at(c, e + k) : at(r, e + k - 4);
                a[k] = at(win[(R - k + PHASE) % WN][j], e) + at(win[(R + k + PHASE) % WN][j], e) + at(up[k - 1], e) + at(dn[k - 1], e) + xl + xr;
            }
            const float ce = at(c, e), ve = at(vel[j], e);
            const float u = 2.0f * ce - at(prev[j], e) + 0.01f * ve * ve * (3.0f * -2.8472223f * ce + (1.6f * a[1] + -0.2f * a[2] + 0.025396826f * a[3] + -0.001785714f * a[4]));
            o[e] = bit(keep, j, e / 2) ? ce : u;
        }
        res[j] = make_float4(o[0], o[1], o[2], o[3]);
    }
}

struct Ctx {
    int n0, s0, s1, i2, z0, z1, p0, row, col;
    int i1[RW];
    unsigned grid, inside, own; /* bits 2 j + h: pair h of row j */
    bool level1, level2;
};

/* The thread's 4 cells of row j at plane z: its two pairs, zero where off. */
__device__ __forceinline__ float4 load(const float *g, const Ctx &k, int z, int j, unsigned on)
{
    const int c = z * k.s0 + k.i1[j] * k.s1 + k.i2;
    const float2 a = bit(on, j, 0) ? __ldg((const float2 *)&g[c]) : make_float2(0, 0);
    const float2 b = bit(on, j, 1) ? __ldg((const float2 *)&g[c + 2]) : make_float2(0, 0);
    return make_float4(a.x, a.y, b.x, b.y);
}

__device__ __forceinline__ void store(float *g, const Ctx &k, int z, int j, float4 v)
{
    const int c = z * k.s0 + k.i1[j] * k.s1 + k.i2;
    if (bit(k.own, j, 0))
        *(float2 *)&g[c] = make_float2(v.x, v.y);
    if (bit(k.own, j, 1))
        *(float2 *)&g[c + 2] = make_float2(v.z, v.w);
}

template <int PHASE>
__device__ __forceinline__ void iteration(const Ctx &k, int p, float4 (&ahead)[RW], float4 (&old0)[RW], Win &w0, Win &w1,
                                          float (*ring)[S][PH][PW], float *__restrict__ out, float *__restrict__ out_prev,
                                          const float *__restrict__ prev_u, const float *__restrict__ cur_u,
                                          const float *__restrict__ vel)
{
    /* w0[(m + PHASE) % 9]: level 0 at plane p - 9 + m; w1 the same for level 1 at plane p - 14 + m. */
    float4 cell[RW];
    const int q1 = p - (R + 1), q2 = p - 2 * (R + 1);
#pragma unroll
    for (int j = 0; j < RW; ++j) {
        cell[j] = ahead[j];
        const int z = p + 1;
        ahead[j] = load(cur_u, k, z, j, z >= 0 && z < k.n0 ? k.grid : 0u);
    }
    float4 in[3][RW];
    const unsigned on1 = q1 >= R && q1 < k.n0 - R && k.level1 ? k.inside : 0u;
    const unsigned on2 = q2 >= R && q2 < k.n0 - R && k.level2 ? k.inside : 0u;
#if !LATE
#pragma unroll
    for (int j = 0; j < RW; ++j) {
        in[0][j] = load(prev_u, k, q1, j, on1);
        in[1][j] = load(vel, k, q1, j, on1);
        in[2][j] = load(vel, k, q2, j, on2);
    }
#endif
    /* Level 2 at plane q2, stored. */
    if (k.level2 && q2 >= k.z0 && q2 < k.z1) {
#if LATE
#pragma unroll
        for (int j = 0; j < RW; ++j)
            in[2][j] = load(vel, k, q2, j, on2);
#endif
        const bool step = q2 >= R && q2 < k.n0 - R;
        float4 v[RW];
        level<PHASE>(w1, ring[1][slot(q2)], k.row, k.col, step ? ~k.inside : ~0u, old0, in[2], v);
#pragma unroll
        for (int j = 0; j < RW; ++j) {
            store(out, k, q2, j, v[j]);
            store(out_prev, k, q2, j, w1[(R + PHASE) % WN][j]);
        }
    }
    /* Level 1 at plane q1: to its window and ring. */
    if (k.level1) {
#if LATE
#pragma unroll
        for (int j = 0; j < RW; ++j) {
            in[0][j] = load(prev_u, k, q1, j, on1);
            in[1][j] = load(vel, k, q1, j, on1);
        }
#endif
        const bool step = q1 >= R && q1 < k.n0 - R;
        level<PHASE>(w0, ring[0][slot(q1)], k.row, k.col, step ? ~k.inside : ~0u, in[0], in[1], w1[PHASE]);
#pragma unroll
        for (int j = 0; j < RW; ++j)
            *(float4 *)&ring[1][slot(q1 - (R + 1) + L)][k.row + j][k.col] = w1[(R + L + PHASE) % WN][j];
    }
#pragma unroll
    for (int j = 0; j < RW; ++j) {
        old0[j] = w0[PHASE][j]; /* plane p - 9: level 2's previous level in the next iteration */
        w0[PHASE][j] = cell[j];
        *(float4 *)&ring[0][slot(p - (R + 1) + L)][k.row + j][k.col] = w0[(R + L + PHASE) % WN][j];
    }
    if ((WN % L == 0 ? PHASE % L : (p - k.p0) % L) == L - 1)
        __syncthreads();
}

__global__ void __launch_bounds__(TX * TY, MINB) stencils_cuda__proto_kernel(int n0, int n1, int n2, float *__restrict__ out, float *__restrict__ out_prev,
                                                  const float *__restrict__ prev_u, const float *__restrict__ cur_u,
                                                  const float *__restrict__ vel)
{
    Ctx k;
    const int tx = threadIdx.x, ty = threadIdx.y, warp = (ty * TX + tx) >> 5;
    k.n0 = n0; k.s0 = n1 * n2; k.s1 = n2;
    k.i2 = R + (int)blockIdx.x * OX - 2 * R + 4 * tx;
    k.row = PAD + ty * RW;
    k.col = PAD + 4 * tx;
    k.z0 = R + (int)blockIdx.z * ZC;
    k.z1 = min(k.z0 + ZC, n0 - R);
    k.grid = k.inside = k.own = 0;
    const bool mine_x = tx >= 2 * R / 4 && tx < TX - 2 * R / 4;
#pragma unroll
    for (int j = 0; j < RW; ++j) {
        const int y = ty * RW + j, c = R + (int)blockIdx.y * OY - 2 * R + y;
        k.i1[j] = c;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int x = k.i2 + 2 * h;
            const bool g = x >= 0 && x < n2 && c >= 0 && c < n1;
            const bool in = x >= R && x < n2 - R && c >= R && c < n1 - R;
            k.grid |= (unsigned)g << (2 * j + h);
            k.inside |= (unsigned)in << (2 * j + h);
            k.own |= (unsigned)(in && y >= 2 * R && y < H - 2 * R && mine_x) << (2 * j + h);
        }
    }
    /* The cell rows of this warp: [a, b). */
    const int a = warp * 32 / TX * RW, b = ((warp + 1) * 32 - 1) / TX * RW + RW;
    k.level1 = b > R && a < H - R;
    k.level2 = b > 2 * R && a < H - 2 * R;
    extern __shared__ __align__(16) unsigned char shared[];
    float(*ring)[S][PH][PW] = (float(*)[S][PH][PW])shared;
    for (int e = ty * TX + tx; e < 2 * S * PH * PW; e += TX * TY)
        (&ring[0][0][0][0])[e] = 0;
    __syncthreads();
    Win w0, w1;
    float4 old0[RW];
#pragma unroll
    for (int j = 0; j < RW; ++j) {
        old0[j] = make_float4(0, 0, 0, 0);
#pragma unroll
        for (int m = 0; m < WN; ++m)
            w0[m][j] = w1[m][j] = make_float4(0, 0, 0, 0);
    }
    int p = k.z0 - 2 * R;
    k.p0 = p;
    float4 ahead[RW];
#pragma unroll
    for (int j = 0; j < RW; ++j)
        ahead[j] = load(cur_u, k, p, j, p >= 0 ? k.grid : 0u);
    const int end = k.z1 + 2 * (R + 1);
    for (;;) {
#define STEP(PHASE) iteration<PHASE>(k, p, ahead, old0, w0, w1, ring, out, out_prev, prev_u, cur_u, vel); if (++p >= end) break;
        STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7) STEP(8)
#undef STEP
    }
}
} // namespace

/* for (int s = 2; s >= 1: the harness reads the time block from this line. */
extern "C" int stencils_cuda__acoustic25__update_u(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, float *out, float *out_prev,
                                                   const float *prev_u, const float *cur_u, const float *cur_vel, int levels)
{
    (void)cudaGetLastError();
    if (n2 % 2 != 0 || levels != 2)
        return (int)cudaErrorInvalidValue;
    const dim3 block(TX, TY);
    const dim3 grid((unsigned)((n2 - 2 * R + OX - 1) / OX), (unsigned)((n1 - 2 * R + OY - 1) / OY), (unsigned)((n0 - 2 * R + ZC - 1) / ZC));
    const size_t bytes = 2 * S * PH * PW * sizeof(float);
    if (bytes > 48 * 1024)
        cudaFuncSetAttribute(stencils_cuda__proto_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    stencils_cuda__proto_kernel<<<grid, block, bytes>>>((int)n0, (int)n1, (int)n2, out, out_prev, prev_u, cur_u, cur_vel);
    return (int)cudaGetLastError();
}
