/*
 * Prototype (hand-written from the generated `tensor` kernel of star3d25 f64;
 * README.md beside it): the in-plane sum on `mma.m16n8k4.f64`, which the
 * H100 runs at twice the rate of `m8n8k4` (shapes.cu). A warp owns 16 x 8
 * cells (rows g and g + 8, columns 2 t and 2 t + 1 of a lane), so one product
 * along `x` covers what two took, and the product along `y` spans 24 rows of
 * the band in 6 steps of 4 (rows 0-7 of the output take steps 0-3, rows 8-15
 * steps 2-5, through the same coefficient registers).
 *
 * Macros: WY, WX (warps along y and x: a block's tile is 16 WY x 8 WX cells),
 * AH (planes in flight), MINB (blocks a multiprocessor for
 * __launch_bounds__), ZC (planes a block marches).
 */
#ifndef WY
#define WY 2
#endif
#ifndef WX
#define WX 4
#endif
#ifndef AH
#define AH 4
#endif
#ifndef MINB
#define MINB 1
#endif
#ifndef ZC
#define ZC 256
#endif
#include <cuda_runtime.h>
#include <stddef.h>
/* The block's dynamic shared memory, as doubles (outside the kernel templates, for their host compilation). */
static __device__ __forceinline__ double *stencil_ring()
{
    extern __shared__ __align__(16) unsigned char shared[];
    return (double *)shared;
}

/* Starts copying V doubles from global `src` to shared `dst`, or zeros where `on` is false. */
template <int V>
static __device__ __forceinline__ void stencil_copy_async(double *dst, const double *src, const bool on)
{
#if defined(__CUDA_ARCH__)
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    if (V == 2)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(to), "l"(src), "r"(on ? 16 : 0) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(to), "l"(src), "r"(on ? 8 : 0) : "memory");
#else
    for (int k = 0; k < V; ++k)
        dst[k] = on ? src[k] : 0.0;
#endif
}

/* Closes the group of copies this thread started. */
static __device__ __forceinline__ void stencil_copies_commit()
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

/* Waits until at most N of this thread's groups of copies are in flight. */
template <int N>
static __device__ __forceinline__ void stencil_copies_wait()
{
#if defined(__CUDA_ARCH__)
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

/* The cells at `p` and `p + 1` where each is `on` (else 0): one 16-byte load when V is 2. */
template <int V>
static __device__ __forceinline__ double2 stencil_load_pair(const double *p, const bool on0, const bool on1)
{
    if (V == 2)
        return on0 ? *(const double2 *)p : make_double2(0.0, 0.0);
    return make_double2(on0 ? p[0] : 0.0, on1 ? p[1] : 0.0);
}


/* D += A B for 16 x 8 x 4 f64 matrices: lane l holds A[l / 4][l % 4], A[l / 4 + 8][l % 4], B[l % 4][l / 4],
   D[l / 4][2 (l % 4) + 0, 1] (d0, d1) and D[l / 4 + 8][2 (l % 4) + 0, 1] (d2, d3). */
static __device__ __forceinline__ void dmma16(double (&d)[4], const double a0, const double a1, const double b)
{
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a0), "d"(a1), "d"(b));
}

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

namespace {
constexpr int NT = 32 * WY * WX, TY = 16 * WY, TX = 8 * WX, RY = TY + 8, CX = TX + 8;
constexpr int P = (CX % 16 <= 4) ? CX - CX % 16 + 4 : (CX % 16 <= 12 ? CX - CX % 16 + 12 : CX - CX % 16 + 20);
constexpr int TILE = RY * P, SLOTS = AH + 4 + 2;

template <int V>
static __device__ __forceinline__ void plane(double *slot, const double *pl, const double *any, const ptrdiff_t n1, const ptrdiff_t n2, const ptrdiff_t y0, const ptrdiff_t x0)
{
#pragma unroll
    for (int k = 0; k < (RY * (CX / V) + NT - 1) / NT; ++k) {
        const int e = threadIdx.x + k * NT;
        if (e >= RY * (CX / V))
            break;
        const int r = e / (CX / V), c = e % (CX / V) * V;
        const ptrdiff_t y = y0 + r, x = x0 + c;
        const bool on = pl != NULL && y >= 0 && y < n1 && x >= 0 && x < n2;
        stencil_copy_async<V>(&slot[r * P + c], on ? &pl[y * n2 + x] : any, on);
    }
    stencil_copies_commit();
}

__device__ __forceinline__ double upd(const double (&w)[9], int ph, double in)
{
    return w[(ph + 4) % 9] + 0.05 * (3.0 * -2.847222222 * w[(ph + 4) % 9] + (in + 1.6 * w[(ph + 3) % 9] + 1.6 * w[(ph + 5) % 9] + -0.2 * w[(ph + 2) % 9] + -0.2 * w[(ph + 6) % 9] + 0.025396825 * w[(ph + 1) % 9] + 0.025396825 * w[(ph + 7) % 9] + -0.001785714 * w[(ph + 0) % 9] + -0.001785714 * w[(ph + 8) % 9]));
}

template <int V>
__global__ void __launch_bounds__(NT, MINB) stencils_cuda__star3d25_m16_kernel(const ptrdiff_t n0, const ptrdiff_t n1, const ptrdiff_t n2, double *__restrict__ out, const double *__restrict__ cur_u)
{
    double *const ring = stencil_ring();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const ptrdiff_t oy = 4 + (ptrdiff_t)blockIdx.y * TY, ox = 4 + (ptrdiff_t)blockIdx.x * TX;
    const ptrdiff_t y0 = oy - 4, x0 = ox - 4;
    /* This warp's 16 x 8 cells start at (by, bx); this lane's at rows g and g + 8, columns 2 t and 2 t + 1. */
    const int by = warp / WX * 16, bx = warp % WX * 8;
    const ptrdiff_t iy = oy + by + g, ix = ox + bx + 2 * t;
    const bool mine0 = iy < n1 - 4 && ix < n2 - 4, mine1 = iy < n1 - 4 && ix + 1 < n2 - 4;
    const bool mine2 = iy + 8 < n1 - 4 && ix < n2 - 4, mine3 = iy + 8 < n1 - 4 && ix + 1 < n2 - 4;
    const ptrdiff_t zo = 4 + (ptrdiff_t)blockIdx.z * ZC, zend = zo + ZC < n0 - 4 ? zo + ZC : n0 - 4;
    const ptrdiff_t zlo = zo - 4, zhi = zend + 4, s0 = n1 * n2;
    double cf[4];
#pragma unroll
    for (int m = 0; m < 4; ++m)
        cf[m] = coef(4 * m + t - 4 - g);
    double w0[9], w1[9], w2[9], w3[9];
#pragma unroll
    for (int m = 0; m < 9; ++m)
        w0[m] = w1[m] = w2[m] = w3[m] = 0.0;
    int at_p = 0, at_q = (SLOTS - 4) % SLOTS, at_ahead = AH;
#pragma unroll
    for (int i = 0; i < AH; ++i)
        plane<V>(ring + i * TILE, (zlo + i) < zhi ? cur_u + (zlo + i) * s0 : NULL, cur_u, n1, n2, y0, x0);
    for (ptrdiff_t p0 = zlo; p0 < zhi; p0 += 9) {
#pragma unroll
        for (int ph = 0; ph < 9; ++ph) {
            const ptrdiff_t p = p0 + ph;
            if (p >= zhi)
                break;
            plane<V>(ring + at_ahead * TILE, (p + AH) < zhi ? cur_u + (p + AH) * s0 : NULL, cur_u, n1, n2, y0, x0);
            const ptrdiff_t q = p - 4, c = q * s0 + iy * n2 + ix;
            stencil_copies_wait<AH>();
            __syncthreads();
            const double *const now = ring + at_p * TILE + (4 + by + g) * P + 4 + bx + 2 * t;
            const double2 fa = stencil_load_pair<V>(now, true, true);
            const double2 fb = stencil_load_pair<V>(now + 8 * P, true, true);
            w0[(ph + 8) % 9] = fa.x;
            w1[(ph + 8) % 9] = fa.y;
            w2[(ph + 8) % 9] = fb.x;
            w3[(ph + 8) % 9] = fb.y;
            if (q >= zo) {
                const double *const at = ring + at_q * TILE;
                double sx[4] = {0.0, 0.0, 0.0, 0.0}, sy[4] = {0.0, 0.0, 0.0, 0.0};
#pragma unroll
                for (int m = 0; m < 4; ++m)
                    dmma16(sx, at[(4 + by + g) * P + bx + 4 * m + t], at[(4 + by + g + 8) * P + bx + 4 * m + t], cf[m]);
#pragma unroll
                for (int m = 0; m < 6; ++m)
                    dmma16(sy, m < 4 ? cf[m] : 0.0, m >= 2 ? cf[m - 2] : 0.0, at[(by + 4 * m + t) * P + 4 + bx + g]);
                const double r0 = upd(w0, ph, sx[0] + sy[0]);
                const double r1 = upd(w1, ph, sx[1] + sy[1]);
                const double r2 = upd(w2, ph, sx[2] + sy[2]);
                const double r3 = upd(w3, ph, sx[3] + sy[3]);
                if (V == 2 && mine0)
                    *(double2 *)&out[c] = make_double2(r0, r1);
                if (V == 2 && mine2)
                    *(double2 *)&out[c + 8 * n2] = make_double2(r2, r3);
                if (V == 1 && mine0)
                    out[c] = r0;
                if (V == 1 && mine1)
                    out[c + 1] = r1;
                if (V == 1 && mine2)
                    out[c + 8 * n2] = r2;
                if (V == 1 && mine3)
                    out[c + 8 * n2 + 1] = r3;
            }
            at_p = at_p + 1 == SLOTS ? 0 : at_p + 1;
            at_q = at_q + 1 == SLOTS ? 0 : at_q + 1;
            at_ahead = at_ahead + 1 == SLOTS ? 0 : at_ahead + 1;
        }
    }
}
} // namespace

extern "C" int stencils_cuda__star3d25__update_u(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, double *out, const double *cur_u)
{
    (void)cudaGetLastError();
    auto *const k = n2 % 2 == 0 && (size_t)out % 16 == 0 && (size_t)cur_u % 16 == 0 ? stencils_cuda__star3d25_m16_kernel<2> : stencils_cuda__star3d25_m16_kernel<1>;
    const int bytes = SLOTS * TILE * 8;
    const cudaError_t allowed = cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (allowed != cudaSuccess)
        return (int)allowed;
    const dim3 grid((unsigned)(((n2 - 8) + TX - 1) / TX), (unsigned)(((n1 - 8) + TY - 1) / TY), (unsigned)(((n0 - 8) + ZC - 1) / ZC));
    k<<<grid, NT, bytes>>>(n0, n1, n2, out, cur_u);
    return (int)cudaGetLastError();
}
