/*
 * Pieces of the hand-written acoustic25 f32 kernels that read their planes
 * from rings in shared memory (README.md here and ../ring-fused-f32): a
 * lane updates 4 cells of a row, from the plane in shared memory and its own
 * window of the 4 cells' columns along z.
 */
#pragma once
#include <cuda_runtime.h>

namespace {
constexpr int R = 4, CW = 4; /* radius; cells a lane updates, along x */
constexpr int WN = 2 * R + 1; /* planes of a window along z */

/* Starts an 8-byte copy from global to shared memory (zeros where `on` is false). */
__device__ __forceinline__ void copy8(float *dst, const float *src, bool on)
{
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(to), "l"(src), "r"(on ? 8 : 0) : "memory");
}

__device__ __forceinline__ float step(float u, float zm1, float zp1, float zm2, float zp2, float zm3, float zp3, float zm4, float zp4,
                                      const float (&xs)[12], const float (&ym)[4], const float (&yp)[4], int j, float prev, float vel)
{
    /* The generated `stream` kernel's expression, term for term. */
    return 2.0f * u - prev + 0.01f * vel * vel * (3.0f * -2.8472223f * u + (1.6f * (zm1 + zp1 + ym[0] + yp[0] + xs[3 + j] + xs[5 + j]) + -0.2f * (zm2 + zp2 + ym[1] + yp[1] + xs[2 + j] + xs[6 + j]) + 0.025396826f * (zm3 + zp3 + ym[2] + yp[2] + xs[1 + j] + xs[7 + j]) + -0.001785714f * (zm4 + zp4 + ym[3] + yp[3] + xs[0 + j] + xs[8 + j])));
}

/* The 4 cells whose centres are row rc, columns cb + 4 .. cb + 7 of the plane at `at` (row pitch P floats);
 * w[(M + k) % 9] holds the window's plane k (k = 4: the centre). */
template <int P, int M = 0>
__device__ __forceinline__ void update4(const float *at, int rc, int cb, const float (&w)[WN][CW], const float (&pv)[CW], const float (&vv)[CW], float (&res)[CW])
{
    float xs[12];
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        const float4 v = *(const float4 *)&at[rc * P + cb + 4 * k];
        xs[4 * k] = v.x;
        xs[4 * k + 1] = v.y;
        xs[4 * k + 2] = v.z;
        xs[4 * k + 3] = v.w;
    }
    float4 ym4[R], yp4[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        ym4[r] = *(const float4 *)&at[(rc - 1 - r) * P + cb + R];
        yp4[r] = *(const float4 *)&at[(rc + 1 + r) * P + cb + R];
    }
#pragma unroll
    for (int j = 0; j < CW; ++j) {
        const float ym[4] = {(&ym4[0].x)[j], (&ym4[1].x)[j], (&ym4[2].x)[j], (&ym4[3].x)[j]};
        const float yp[4] = {(&yp4[0].x)[j], (&yp4[1].x)[j], (&yp4[2].x)[j], (&yp4[3].x)[j]};
        res[j] = step(w[(M + 4) % WN][j], w[(M + 3) % WN][j], w[(M + 5) % WN][j], w[(M + 2) % WN][j], w[(M + 6) % WN][j], w[(M + 1) % WN][j], w[(M + 7) % WN][j], w[M][j], w[(M + 8) % WN][j], xs, ym, yp, j, pv[j], vv[j]);
    }
}

/* Loads the 4 cells at `o` (two 8-byte pairs) where they lie on the grid. */
__device__ __forceinline__ void load4(float (&v)[CW], const float *o, const bool (&pair)[2])
{
#pragma unroll
    for (int h = 0; h < 2; ++h)
        if (pair[h]) {
            const float2 a = *(const float2 *)(o + 2 * h);
            v[2 * h] = a.x;
            v[2 * h + 1] = a.y;
        }
}

/* Stores the 4 cells at `o` that are `mine`, as 8-byte pairs where both are. */
__device__ __forceinline__ void store4(float *o, const float (&v)[CW], const bool (&mine)[CW])
{
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if (mine[2 * h] && mine[2 * h + 1])
            *(float2 *)(o + 2 * h) = make_float2(v[2 * h], v[2 * h + 1]);
        else if (mine[2 * h])
            o[2 * h] = v[2 * h];
    }
}
} // namespace
