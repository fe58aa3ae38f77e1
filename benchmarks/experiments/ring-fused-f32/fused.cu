/*
 * Prototype (hand-written; README.md beside it): two fused leapfrog steps of
 * acoustic25 in f32 (SUITE.md) whose planes come from rings in shared
 * memory, filled by cp.async, instead of the generated `temporal` kernels'
 * register columns.
 *
 * A block owns a 32 x 24 tile of the output (x, y) and marches ZCN planes
 * along z. Level 1 is computed on the tile grown by 4 on each side (40 x 32
 * cells), level 2 on the tile. Per plane p:
 *
 * - plane p of u (the tile grown by 8: 48 x 40) is copied into the u ring,
 *   AHEAD planes in flight;
 * - 10 warps compute level 1 at plane p - 4, one column of 4 cells a lane
 *   (warp w: columns 4w .. 4w + 3 of the 40, lane: the row), from the u
 *   ring's plane and the lane's register window along z; they put it into
 *   the level-1 ring and store the tile's own cells to out_prev;
 * - 6 warps compute level 2 at plane p - 9 from the level-1 ring and their
 *   own register window of level 1, and store it to out.
 *
 * One barrier a plane. The grid's fixed boundary (4 cells wide) enters level
 * 1 unchanged. The expression is `stream`'s, term for term. Grids need
 * n2 % 2 == 0 (the launcher returns cudaErrorInvalidValue otherwise).
 */
#include <cuda_runtime.h>
#include <stddef.h>

#include "../ring-f32/ring.cuh" /* copy8, step, update4, load4, store4 */

#ifndef AHEAD
#define AHEAD 4 /* planes of u in flight */
#endif
#ifndef ZCN
#define ZCN 146 /* planes a block marches */
#endif
#ifndef PITCH
#define PITCH 52 /* row pitch of both rings, in floats: 20 mod 32, so 8 rows of 16-byte loads hit distinct banks */
#endif

namespace {
constexpr int TX = 32, TY = 24;
constexpr int UY = TY + 4 * R, UX = TX + 4 * R; /* the u tile: 40 x 48 */
constexpr int SY = TY + 2 * R, SX = TX + 2 * R; /* the level-1 tile: 32 x 40 */
constexpr int W1 = SX / CW;                     /* level-1 warps: 10, a lane a row */
constexpr int W2 = TX / CW * TY / 32;           /* level-2 warps: 6 */
constexpr int NT = 32 * (W1 + W2);
constexpr int USLOTS = AHEAD + 6, SSLOTS = 6;
constexpr int USLOT = UY * PITCH, SSLOT = SY * PITCH;
static_assert(SY == 32, "a level-1 warp's lanes are the level-1 tile's rows");

__device__ __forceinline__ unsigned uslot(int p) { return (unsigned)(p + 2 * R) % USLOTS; }
__device__ __forceinline__ unsigned sslot(int p) { return (unsigned)(p + 4 * R) % SSLOTS; }

/* Starts the copy of the UY x UX tile at (y0, x0) of plane p (zeros off the grid) into `slot`. */
__device__ __forceinline__ void copy_plane(float *slot, const float *cur, int p, int n0, int n1, int n2, int y0, int x0)
{
    const bool plane = p >= 0 && p < n0;
#pragma unroll
    for (int k = 0; k < (UY * (UX / 2) + NT - 1) / NT; ++k) {
        const int e = threadIdx.x + k * NT;
        if (e < UY * (UX / 2)) {
            const int r = e / (UX / 2), c = 2 * (e % (UX / 2));
            const int y = y0 + r, x = x0 + c;
            const bool on = plane && y >= 0 && y < n1 && x >= 0 && x < n2;
            copy8(&slot[r * PITCH + c], on ? &cur[((size_t)p * n1 + y) * n2 + x] : cur, on);
        }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

__global__ void __launch_bounds__(NT, 1) stencils_cuda__fused_kernel(int n0, int n1, int n2, float *__restrict__ out, float *__restrict__ out_prev,
                                                                     const float *__restrict__ prev, const float *__restrict__ cur,
                                                                     const float *__restrict__ vel)
{
    extern __shared__ __align__(16) float smem[];
    float *const uring = smem, *const sring = smem + USLOTS * USLOT;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const bool first = warp < W1; /* warp-uniform: level 1 or level 2 */
    const int oy = R + blockIdx.y * TY, ox = R + blockIdx.x * TX;
    /* The unit's row and first column in the level-1 tile, whose (0, 0) is grid cell (oy - 4, ox - 4). */
    int rs, cs;
    if (first) {
        rs = lane;
        cs = CW * warp;
    } else {
        const int u = (warp - W1) * 32 + lane;
        rs = R + u % TY;
        cs = R + CW * (u / TY);
    }
    const int gy = oy - R + rs, gx = ox - R + cs;
    const bool ygrid = gy >= 0 && gy < n1, yin = gy >= R && gy < n1 - R;
    bool grid[CW], in[CW], mine[CW];
    const bool own = rs >= R && rs < R + TY && cs >= R && cs < R + TX;
#pragma unroll
    for (int j = 0; j < CW; ++j) {
        grid[j] = ygrid && gx + j >= 0 && gx + j < n2;
        in[j] = yin && gx + j >= R && gx + j < n2 - R;
        mine[j] = in[j] && (own || !first);
    }
    const bool pair[2] = {grid[0], grid[2]};
    const int zo = R + blockIdx.z * ZCN, zend = min(zo + ZCN, n0 - R);
    const size_t s0 = (size_t)n1 * n2, cell = (size_t)gy * n2 + gx;
    /* The centre window along z: level 1's lanes hold u at planes q - 4 .. q + 4, level 2's level 1. */
    float w[WN][CW];
#pragma unroll
    for (int m = 0; m < WN; ++m)
#pragma unroll
        for (int j = 0; j < CW; ++j)
            w[m][j] = 0.f;
    /* u.prev (level 1) or u (level 2), and the velocity, at the next plane computed. */
    float np[CW] = {}, nv[CW] = {};
    const int lag = first ? R : 2 * R + 1; /* the plane computed is p - lag */
    const int y0 = oy - 2 * R, x0 = ox - 2 * R;
    for (int i = 0; i < AHEAD; ++i)
        copy_plane(uring + uslot(zo - 2 * R + i) * USLOT, cur, zo - 2 * R + i, n0, n1, n2, y0, x0);
    for (int p = zo - 2 * R; p <= zend + 2 * R; ++p) {
        const int ahead = p + AHEAD;
        copy_plane(uring + uslot(ahead) * USLOT, cur, ahead < zend + 2 * R ? ahead : -1, n0, n1, n2, y0, x0);
        const int q = p - lag;
        float pv[CW], vv[CW];
#pragma unroll
        for (int j = 0; j < CW; ++j) {
            pv[j] = np[j];
            vv[j] = nv[j];
        }
        if (q + 1 >= R && q + 1 < n0 - R) {
            load4(np, (first ? prev : cur) + (q + 1) * s0 + cell, pair);
            load4(nv, vel + (q + 1) * s0 + cell, pair);
        }
        asm volatile("cp.async.wait_group %0;" ::"n"(AHEAD) : "memory");
        __syncthreads();
        /* The newest plane's centres join the window: u at p, or level 1 at p - 5. */
        const float4 c = first ? *(const float4 *)&uring[uslot(p) * USLOT + (rs + R) * PITCH + cs + R]
                               : *(const float4 *)&sring[sslot(p - R - 1) * SSLOT + rs * PITCH + cs];
#pragma unroll
        for (int m = 0; m < WN - 1; ++m)
#pragma unroll
            for (int j = 0; j < CW; ++j)
                w[m][j] = w[m + 1][j];
        w[WN - 1][0] = c.x;
        w[WN - 1][1] = c.y;
        w[WN - 1][2] = c.z;
        w[WN - 1][3] = c.w;
        if (first) {
            if (q < zo - R || q >= zend + R)
                continue;
            const bool zin = q >= R && q < n0 - R;
            float res[CW];
            update4<PITCH>(uring + uslot(q) * USLOT, rs + R, cs, w, pv, vv, res);
#pragma unroll
            for (int j = 0; j < CW; ++j)
                res[j] = zin && in[j] ? res[j] : grid[j] ? w[4][j] : 0.f;
            *(float4 *)&sring[sslot(q) * SSLOT + rs * PITCH + cs] = make_float4(res[0], res[1], res[2], res[3]);
            if (q >= zo && q < zend)
                store4(out_prev + q * s0 + cell, res, mine);
        } else {
            if (q < zo || q >= zend)
                continue;
            float res[CW];
            update4<PITCH>(sring + sslot(q) * SSLOT, rs, cs - R, w, pv, vv, res);
            store4(out + q * s0 + cell, res, mine);
        }
    }
}
} // namespace

/* marker for the harness: for (int s = 2; s >= 1 */
extern "C" int stencils_cuda__acoustic25__update_u(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, float *out, float *out_prev, const float *prev_u, const float *cur_u,
                                                   const float *vel, int levels)
{
    (void)cudaGetLastError();
    if (levels != 2 || n2 % 2 != 0 || (size_t)out % 8 || (size_t)out_prev % 8 || (size_t)prev_u % 8 || (size_t)cur_u % 8 || (size_t)vel % 8)
        return (int)cudaErrorInvalidValue;
    const size_t shared = sizeof(float) * (USLOTS * USLOT + SSLOTS * SSLOT);
    const cudaError_t e = cudaFuncSetAttribute(stencils_cuda__fused_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared);
    if (e != cudaSuccess)
        return (int)e;
    const dim3 grid((unsigned)((n2 - 2 * R + TX - 1) / TX), (unsigned)((n1 - 2 * R + TY - 1) / TY), (unsigned)((n0 - 2 * R + ZCN - 1) / ZCN));
    stencils_cuda__fused_kernel<<<grid, NT, shared>>>((int)n0, (int)n1, (int)n2, out, out_prev, prev_u, cur_u, vel);
    return (int)cudaGetLastError();
}
