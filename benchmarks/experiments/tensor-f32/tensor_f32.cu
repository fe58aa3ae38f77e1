/*
 * Experiment tensor-f32 (session 45, issue 6): star3d25 in f32 grids with the in-plane sum on the
 * FP64 tensor cores. Hand-written from the generated f64 `tensor` kernel (warps of 16 x 8 cells,
 * `mma.m16n8k4.f64`, a ring of the tile's planes in shared memory by `cp.async`): the grids, the ring
 * and the lanes' windows along `z` are f32; the operands of the products are converted to f64 as they
 * leave the ring (exact), the in-plane sum is rounded to f32 once, and the rest of the update is the
 * f32 arithmetic of `stream` (so the result differs from it by the in-plane sum's rounding only).
 *
 * Macros (defaults in brackets):
 *   MINB   blocks a multiprocessor for __launch_bounds__ [1]
 *   SWZ    1: rows 40 floats apart, columns swizzled by (row >> 2 & 1) * 4 (no bank conflicts in
 *          either operand's pattern); 0: rows 44 floats apart (the y operand's loads 2-way) [0]
 *   ZC     the most planes a block marches [256]
 *   INF64  1: the update's other terms in f64 too (each window value converted) [0]
 *   NOCVT  1: the operands' bits taken as the high word of an f64, not converted (wrong results:
 *          timing only, what the conversions cost) [0]
 */
#include <cuda_runtime.h>
#include <stddef.h>

#ifndef MINB
#define MINB 1
#endif
#ifndef SWZ
#define SWZ 0
#endif
#ifndef ZC
#define ZC 256
#endif
#ifndef INF64
#define INF64 0
#endif
#ifndef NOCVT
#define NOCVT 0
#endif
#if NOCVT
#define F64(x) __hiloint2double(__float_as_int(x), 0)
#else
#define F64(x) ((double)(x))
#endif

#define PITCH (SWZ ? 40 : 44)
#define SLOT (40 * PITCH)

/* Where row r, column c of a ring slot lives. */
static __device__ __forceinline__ int at_rc(const int r, const int c)
{
    return r * PITCH + (SWZ ? (c ^ (((r >> 2) & 1) << 2)) : c);
}

static __device__ __forceinline__ void mma16(double (&d)[4], const double a0, const double a1, const double b)
{
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a0), "d"(a1), "d"(b));
}

static __device__ __forceinline__ float *ring_base()
{
    extern __shared__ __align__(16) unsigned char shared[];
    return (float *)shared;
}

template <int V>
static __device__ __forceinline__ void copy_async(float *dst, const float *src, const bool on)
{
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    if (V == 4)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(to), "l"(src), "r"(on ? 16 : 0) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(to), "l"(src), "r"(on ? 4 : 0) : "memory");
}

static __device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
static __device__ __forceinline__ void wait_copies() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

static __device__ __forceinline__ double coef(const int d)
{
    switch (d) {
    case -4: case 4: return -0.001785714;
    case -3: case 3: return 0.025396825;
    case -2: case 2: return -0.2;
    case -1: case 1: return 1.6;
    default: return 0.0;
    }
}

/* Starts the copy of the 40 x 40 tile at (y0, x0) of `plane` (or null: zeros) into `slot`. */
template <int V>
static __device__ __forceinline__ void plane_copy(float *slot, const float *plane, const float *any, const int n1, const int n2, const int y0, const int x0)
{
    constexpr int copies = 40 / V;
    #pragma unroll
    for (int k = 0; k < (40 * copies + 255) / 256; ++k) {
        const int e = threadIdx.x + k * 256;
        if (e >= 40 * copies)
            break;
        const int r = e / copies, c = e % copies * V;
        const int y = y0 + r, x = x0 + c;
        const bool on = plane != NULL && y >= 0 && y < n1 && x >= 0 && x < n2;
        copy_async<V>(slot + at_rc(r, c), on ? plane + (ptrdiff_t)y * n2 + x : any, on);
    }
    commit();
}

template <int V>
static __global__ void __launch_bounds__(256, MINB) stencils_cuda__star3d25__tensor_kernel(const int n0, const int n1, const int n2, float *__restrict__ out, const float *__restrict__ cur, const int chunk)
{
    float *const ring = ring_base();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int oy = 4 + blockIdx.y * 32, ox = 4 + blockIdx.x * 32, y0 = oy - 4, x0 = ox - 4;
    /* 2 x 4 warps of 16 x 8 cells; this lane's cells at rows g, g + 8 of the warp's, columns 2 t, 2 t + 1. */
    const int by = warp / 4 * 16, bx = warp % 4 * 8;
    const int iy = oy + by + g, ix = ox + bx + 2 * t;
    bool mine[2];
    mine[0] = iy < n1 - 4 && ix + 1 < n2 - 4;
    mine[1] = iy + 8 < n1 - 4 && ix + 1 < n2 - 4;
    const bool mine0[2] = {iy < n1 - 4 && ix < n2 - 4, iy + 8 < n1 - 4 && ix < n2 - 4};
    const int zo = 4 + blockIdx.z * chunk, zend = zo + chunk < n0 - 4 ? zo + chunk : n0 - 4;
    const int zlo = zo - 4, zhi = zend + 4;
    const ptrdiff_t s0 = (ptrdiff_t)n1 * n2;
    double cy[4], cx[4];
    #pragma unroll
    for (int k = 0; k < 4; ++k) {
        cy[k] = coef(4 * k + t - 4 - g);
        cx[k] = coef(4 * k + t - 4 - g);
    }
    float w0[2][9] = {}, w1[2][9] = {};
    int at_p = 0, at_q = 6, at_ahead = 4;
    #pragma unroll
    for (int i = 0; i < 4; ++i)
        plane_copy<V>(ring + i * SLOT, (zlo + i) < zhi ? cur + (zlo + i) * s0 : NULL, cur, n1, n2, y0, x0);
    for (int p0 = zlo; p0 < zhi; p0 += 9) {
        #pragma unroll
        for (int ph = 0; ph < 9; ++ph) {
            const int p = p0 + ph;
            if (p >= zhi)
                break;
            plane_copy<V>(ring + at_ahead * SLOT, (p + 4) < zhi ? cur + (p + 4) * s0 : NULL, cur, n1, n2, y0, x0);
            const int q = p - 4;
            wait_copies<4>();
            __syncthreads();
            const float *const now = ring + at_p * SLOT;
            #pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = 4 + by + g + 8 * h, c = 4 + bx + 2 * t;
                const float2 fresh = *(const float2 *)(now + at_rc(r, c));
                w0[h][(ph + 8) % 9] = fresh.x;
                w1[h][(ph + 8) % 9] = fresh.y;
            }
            if (q >= zo) {
                const float *const at = ring + at_q * SLOT;
                double sx[4] = {}, sy[4] = {};
                /* Along x: A is the warp's rows g and g + 8 from column bx + 4 k + t. */
                #pragma unroll
                for (int k = 0; k < 4; ++k) {
                    const int c = bx + 4 * k + t;
                    mma16(sx, F64(at[at_rc(4 + by + g, c)]), F64(at[at_rc(12 + by + g, c)]), cx[k]);
                }
                /* Along y: A is the band (rows g and g + 8 reach 8 rows apart), B the rows by + 4 k + t. */
                const int c = 4 + bx + g;
                mma16(sy, cy[0], 0.0, F64(at[at_rc(by + t, c)]));
                mma16(sy, cy[1], 0.0, F64(at[at_rc(by + 4 + t, c)]));
                mma16(sy, cy[2], cy[0], F64(at[at_rc(by + 8 + t, c)]));
                mma16(sy, cy[3], cy[1], F64(at[at_rc(by + 12 + t, c)]));
                mma16(sy, 0.0, cy[2], F64(at[at_rc(by + 16 + t, c)]));
                mma16(sy, 0.0, cy[3], F64(at[at_rc(by + 20 + t, c)]));
                #pragma unroll
                for (int h = 0; h < 2; ++h) {
#if INF64
#define CELL(w, j) (float)((double)w[(ph + 4) % 9] + 0.05 * (3.0 * -2.847222222 * (double)w[(ph + 4) % 9] + ((sx[2 * h + j] + sy[2 * h + j]) + 1.6 * (double)w[(ph + 3) % 9] + 1.6 * (double)w[(ph + 5) % 9] + -0.2 * (double)w[(ph + 2) % 9] + -0.2 * (double)w[(ph + 6) % 9] + 0.025396825 * (double)w[(ph + 1) % 9] + 0.025396825 * (double)w[(ph + 7) % 9] + -0.001785714 * (double)w[(ph + 0) % 9] + -0.001785714 * (double)w[(ph + 8) % 9])))
#else
#define CELL(w, j) (w[(ph + 4) % 9] + 0.05f * (3.0f * -2.847222222f * w[(ph + 4) % 9] + ((float)(sx[2 * h + j] + sy[2 * h + j]) + 1.6f * w[(ph + 3) % 9] + 1.6f * w[(ph + 5) % 9] + -0.2f * w[(ph + 2) % 9] + -0.2f * w[(ph + 6) % 9] + 0.025396825f * w[(ph + 1) % 9] + 0.025396825f * w[(ph + 7) % 9] + -0.001785714f * w[(ph + 0) % 9] + -0.001785714f * w[(ph + 8) % 9])))
#endif
                    const float r[2] = {CELL(w0[h], 0), CELL(w1[h], 1)};
#undef CELL
                    float *const o = out + q * s0 + (ptrdiff_t)(iy + 8 * h) * n2 + ix;
                    if (mine[h]) {
                        *(float2 *)o = make_float2(r[0], r[1]);
                    } else if (mine0[h]) {
                        o[0] = r[0];
                    }
                }
            }
            at_p = at_p + 1 == 10 ? 0 : at_p + 1;
            at_q = at_q + 1 == 10 ? 0 : at_q + 1;
            at_ahead = at_ahead + 1 == 10 ? 0 : at_ahead + 1;
        }
    }
}

/* The harness's launcher: rows of an even number of cells (the pairs' stores), 32-bit indices. */
extern "C" int stencils_cuda__star3d25__update_u(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, float *out, const float *cur_u, cudaStream_t stream)
{
    (void)cudaGetLastError();
    if (n2 % 2 != 0 || n0 * n1 * n2 > 2147483647)
        return (int)cudaErrorInvalidValue;
    const bool quads = n2 % 4 == 0 && (size_t)cur_u % 16 == 0;
    auto *const kernel = quads ? stencils_cuda__star3d25__tensor_kernel<4> : stencils_cuda__star3d25__tensor_kernel<1>;
    const int bytes = 10 * SLOT * 4;
    cudaError_t e = cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e != cudaSuccess)
        return (int)e;
    int device = 0, sms = 0, per = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kernel, 256, bytes);
    const ptrdiff_t cells = n0 - 8, across = ((n2 - 8 + 31) / 32) * ((n1 - 8 + 31) / 32), resident = (ptrdiff_t)sms * per;
    int chunk = ZC;
    if (cells > 0 && across > 0 && resident > 0) {
        const ptrdiff_t most = 4 * ((cells + ZC - 1) / ZC) + resident / across + 1;
        ptrdiff_t best = -1;
        for (ptrdiff_t n = (cells + ZC - 1) / ZC; n <= most && n <= cells; ++n) {
            const ptrdiff_t planes = (cells + n - 1) / n, waves = (across * n + resident - 1) / resident, time = waves * (planes + 8);
            if (best < 0 || time < best) {
                best = time;
                chunk = (int)planes;
            }
        }
    }
    const dim3 grid((unsigned)((n2 - 8 + 31) / 32), (unsigned)((n1 - 8 + 31) / 32), (unsigned)((n0 - 8 + chunk - 1) / chunk));
    kernel<<<grid, 256, bytes, stream>>>((int)n0, (int)n1, (int)n2, out, cur_u, chunk);
    return (int)cudaGetLastError();
}
