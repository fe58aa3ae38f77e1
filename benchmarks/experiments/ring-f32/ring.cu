/*
 * Prototype (hand-written; README.md beside it): one step of acoustic25 in
 * f32 (SUITE.md) that reads each plane of its tile once, into a ring of
 * planes in shared memory, as the generated `tensor` does in f64, instead of
 * gathering its 25 reads through L1 as the generated `stream` does.
 *
 * A block owns TY x 32 cells of a plane (8 x TY threads, 4 cells of a row
 * each) and marches ZCN planes along z. Plane p + AHEAD of `cur` is copied
 * (cp.async, 8 bytes a copy) into the ring while plane q = p - 4 is
 * computed: the in-plane reads come from shared memory (16-byte loads), the
 * column along z from the thread's register window, u.prev and the velocity
 * from global memory one plane ahead. Grids need n2 % 2 == 0 (the launcher
 * returns cudaErrorInvalidValue otherwise).
 */
#include <cuda_runtime.h>
#include <stddef.h>

#include "../ring-f32/ring.cuh" /* copy8, step, update4, store4 */

#ifndef TY
#define TY 32 /* rows of a tile */
#endif
#ifndef AHEAD
#define AHEAD 4 /* planes in flight */
#endif
#ifndef ZCN
#define ZCN 74 /* planes a block marches */
#endif
#ifndef MINB
#define MINB 3 /* blocks a multiprocessor (launch bound) */
#endif

namespace {
constexpr int TX = 32, RY = TY + 2 * R, RX = TX + 2 * R, P = 44;
constexpr int NT = (TX / CW) * TY;
constexpr int SLOTS = AHEAD + R + 2; /* planes q .. p + AHEAD, and the slot a slow warp may still read */
constexpr int SLOT = RY * P;

/* Starts the copy of the RY x RX tile at (y0, x0) of plane p (zeros off the grid) into `slot`. */
__device__ __forceinline__ void copy_plane(float *slot, const float *cur, int p, int n0, int n1, int n2, int y0, int x0)
{
    const bool plane = p >= 0 && p < n0;
#pragma unroll
    for (int k = 0; k < (RY * (RX / 2) + NT - 1) / NT; ++k) {
        const int e = threadIdx.x + k * NT;
        if (e < RY * (RX / 2)) {
            const int r = e / (RX / 2), c = 2 * (e % (RX / 2));
            const int y = y0 + r, x = x0 + c;
            const bool on = plane && y < n1 && x < n2;
            copy8(&slot[r * P + c], on ? &cur[((size_t)p * n1 + y) * n2 + x] : cur, on);
        }
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

__global__ void __launch_bounds__(NT, MINB) stencils_cuda__ring_kernel(int n0, int n1, int n2, float *__restrict__ out, const float *__restrict__ prev,
                                                        const float *__restrict__ cur, const float *__restrict__ vel)
{
    extern __shared__ __align__(16) float ring[];
    const int tx = threadIdx.x % (TX / CW), ty = threadIdx.x / (TX / CW);
    const int oy = R + blockIdx.y * TY, ox = R + blockIdx.x * TX;
    const int y0 = oy - R, x0 = ox - R;
    const int iy = oy + ty, ix = ox + CW * tx;
    const bool row = iy < n1 - R;
    bool mine[CW];
#pragma unroll
    for (int j = 0; j < CW; ++j)
        mine[j] = row && ix + j < n2 - R;
    const int zo = R + blockIdx.z * ZCN, zend = min(zo + ZCN, n0 - R);
    const int zlo = zo - R, zhi = zend + R;
    /* w[m][j]: cell j's column at planes q - 4 + m (q: the plane computed). */
    float w[WN][CW];
#pragma unroll
    for (int m = 0; m < WN; ++m)
#pragma unroll
        for (int j = 0; j < CW; ++j)
            w[m][j] = 0.f;
    float2 np[2] = {}, nv[2] = {};
    const size_t s0 = (size_t)n1 * n2;
    const size_t cell = (size_t)iy * n2 + ix;
#pragma unroll
    for (int i = 0; i < AHEAD; ++i)
        copy_plane(ring + ((zlo + i) % SLOTS) * SLOT, cur, zlo + i, n0, n1, n2, y0, x0);
    for (int p = zlo; p < zhi; ++p) {
        copy_plane(ring + ((p + AHEAD) % SLOTS) * SLOT, cur, p + AHEAD < zhi ? p + AHEAD : -1, n0, n1, n2, y0, x0);
        const int q = p - R;
        /* u.prev and the velocity at plane q + 1, for the next iteration. */
        const float2 cp[2] = {np[0], np[1]}, cv[2] = {nv[0], nv[1]};
        if (row && q + 1 >= zo && q + 1 < zend) {
            const float2 *a = (const float2 *)&prev[(q + 1) * s0 + cell], *b = (const float2 *)&vel[(q + 1) * s0 + cell];
            np[0] = a[0];
            np[1] = a[1];
            nv[0] = b[0];
            nv[1] = b[1];
        }
        asm volatile("cp.async.wait_group %0;" ::"n"(AHEAD) : "memory");
        __syncthreads();
        /* Plane p's centres join the window. */
        const float4 c = *(const float4 *)&ring[(p % SLOTS) * SLOT + (R + ty) * P + R + CW * tx];
#pragma unroll
        for (int m = 0; m < WN - 1; ++m)
#pragma unroll
            for (int j = 0; j < CW; ++j)
                w[m][j] = w[m + 1][j];
        w[WN - 1][0] = c.x;
        w[WN - 1][1] = c.y;
        w[WN - 1][2] = c.z;
        w[WN - 1][3] = c.w;
        if (q >= zo) {
            const float pv[4] = {cp[0].x, cp[0].y, cp[1].x, cp[1].y}, vv[4] = {cv[0].x, cv[0].y, cv[1].x, cv[1].y};
            float res[CW];
            update4<P>(ring + (q % SLOTS) * SLOT, R + ty, CW * tx, w, pv, vv, res);
            store4(&out[q * s0 + cell], res, mine);
        }
    }
}
} // namespace

extern "C" int stencils_cuda__acoustic25__update_u(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, float *out, const float *prev_u, const float *cur_u, const float *vel)
{
    (void)cudaGetLastError();
    if (n2 % 2 != 0 || (size_t)out % 8 || (size_t)prev_u % 8 || (size_t)cur_u % 8 || (size_t)vel % 8)
        return (int)cudaErrorInvalidValue;
    const size_t shared = sizeof(float) * SLOTS * SLOT;
    const cudaError_t e = cudaFuncSetAttribute(stencils_cuda__ring_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared);
    if (e != cudaSuccess)
        return (int)e;
    const dim3 grid((unsigned)((n2 - 2 * R + TX - 1) / TX), (unsigned)((n1 - 2 * R + TY - 1) / TY), (unsigned)((n0 - 2 * R + ZCN - 1) / ZCN));
    stencils_cuda__ring_kernel<<<grid, NT, shared>>>((int)n0, (int)n1, (int)n2, out, prev_u, cur_u, vel);
    return (int)cudaGetLastError();
}
