/*
 * Prototype (hand-written; README.md beside it): lean.cu's two fused
 * acoustic25 leapfrog steps from shared rings, in f64: a lane computes 2 cells
 * of a row (one 16-byte vector), a block of 18 warps (12 for level 1, 6 for
 * level 2) owns a 16 x 24 tile, planes of u copied by 16-byte cp.async.
 * Grids need n2 % 2 == 0 and 16-byte aligned buffers.
 */
#include <cuda_runtime.h>
#include <stddef.h>

#ifndef AHEAD
#define AHEAD 2
#endif
#ifndef MAXREG
#define MAXREG 112 /* 18 warps a block, one block a multiprocessor */
#endif
#ifndef ZCN
#define ZCN 292
#endif

namespace {
constexpr int R = 4, CW = 2, WN = 2 * R + 1;
constexpr int TX = 16, TY = 24;
constexpr int UY = TY + 4 * R, UX = TX + 4 * R; /* 40 x 32 */
constexpr int SY = TY + 2 * R, SX = TX + 2 * R; /* 32 x 24 */
constexpr int W1 = SX / CW, W2 = TX / CW * TY / 32, NT = 32 * (W1 + W2);
constexpr int PITCH = 34; /* doubles: 2 mod 16, so 8 rows of 16-byte loads hit distinct banks */
constexpr int USLOT = UY * PITCH, SSLOT = SY * PITCH;
constexpr int SP = TX + 2, STAGED = TY * SP;
constexpr int CPAIRS = UX / 2, CROWS = UY / 2; /* 16 pairs a row; a copying thread: rows r and r + 20 */
constexpr int FPAIRS = TX / 2;
static_assert(SY == 32 && CPAIRS * CROWS <= NT && FPAIRS * TY <= NT, "shape");

__device__ __forceinline__ void copy16(double *dst, const double *src, bool on)
{
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(to), "l"(src), "r"(on ? 16 : 0) : "memory");
}

__device__ __forceinline__ double step(double u, double zm1, double zp1, double zm2, double zp2, double zm3, double zp3, double zm4, double zp4,
                                       const double (&xs)[10], const double (&ym)[4], const double (&yp)[4], int j, double prev, double vel)
{
    /* The generated `stream` kernel's expression, term for term. */
    return 2.0 * u - prev + 0.01 * vel * vel * (3.0 * -2.847222222 * u + (1.6 * (zm1 + zp1 + ym[0] + yp[0] + xs[3 + j] + xs[5 + j]) + -0.2 * (zm2 + zp2 + ym[1] + yp[1] + xs[2 + j] + xs[6 + j]) + 0.025396825 * (zm3 + zp3 + ym[2] + yp[2] + xs[1 + j] + xs[7 + j]) + -0.001785714 * (zm4 + zp4 + ym[3] + yp[3] + xs[0 + j] + xs[8 + j])));
}

template <int M>
__device__ __forceinline__ void update2(const double *at, int rc, int cb, const double (&w)[WN][CW], const double (&pv)[CW], const double (&vv)[CW], double (&res)[CW])
{
    double xs[10];
#pragma unroll
    for (int k = 0; k < 5; ++k) {
        const double2 v = *(const double2 *)&at[rc * PITCH + cb + 2 * k];
        xs[2 * k] = v.x;
        xs[2 * k + 1] = v.y;
    }
    double2 ym2[R], yp2[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        ym2[r] = *(const double2 *)&at[(rc - 1 - r) * PITCH + cb + R];
        yp2[r] = *(const double2 *)&at[(rc + 1 + r) * PITCH + cb + R];
    }
#pragma unroll
    for (int j = 0; j < CW; ++j) {
        const double ym[4] = {(&ym2[0].x)[j], (&ym2[1].x)[j], (&ym2[2].x)[j], (&ym2[3].x)[j]};
        const double yp[4] = {(&yp2[0].x)[j], (&yp2[1].x)[j], (&yp2[2].x)[j], (&yp2[3].x)[j]};
        res[j] = step(w[(M + 4) % WN][j], w[(M + 3) % WN][j], w[(M + 5) % WN][j], w[(M + 2) % WN][j], w[(M + 6) % WN][j], w[(M + 1) % WN][j], w[(M + 7) % WN][j], w[M][j], w[(M + 8) % WN][j], xs, ym, yp, j, pv[j], vv[j]);
    }
}

struct Unit {
    bool first;
    int rs, cs;
    bool own, grid[CW], in[CW], on;
    int cell;
    double w[WN][CW];
    double np[CW], nv[CW];
    int csrc[2], cdst;
    bool con[2];
    int fdst, fsrc;
};

__device__ __forceinline__ void plan(Unit &t, int n1, int n2, int oy, int ox)
{
    const int k = threadIdx.x;
    t.cdst = -1;
    if (k < CPAIRS * CROWS) {
        const int r = k / CPAIRS, c = 2 * (k % CPAIRS);
        const int x = ox - 2 * R + c;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int y = oy - 2 * R + r + h * CROWS;
            t.con[h] = y >= 0 && y < n1 && x >= 0 && x < n2;
            t.csrc[h] = t.con[h] ? y * n2 + x : 0;
        }
        t.cdst = r * PITCH + c;
    }
    t.fsrc = -1;
    if (k < FPAIRS * TY) {
        const int row = k / FPAIRS, c = 2 * (k % FPAIRS);
        const int y = oy + row, x = ox + c;
        if (y < n1 - R && x < n2 - R) {
            t.fsrc = row * SP + c;
            t.fdst = y * n2 + x;
        }
    }
}

__device__ __forceinline__ void copy_plane(double *slot, const double *cur, const Unit &t, int p, int n0, size_t s0)
{
    const bool plane = p >= 0 && p < n0;
    const double *const at = cur + (plane ? p : 0) * s0;
    if (t.cdst >= 0) {
        copy16(&slot[t.cdst], at + t.csrc[0], plane && t.con[0]);
        copy16(&slot[t.cdst + CROWS * PITCH], at + t.csrc[1], plane && t.con[1]);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

__device__ __forceinline__ void flush(const double *stage, const Unit &t, int p, int zo, int zend, size_t s0, double *__restrict__ out, double *__restrict__ out_prev)
{
    if (t.fsrc < 0)
        return;
    const int q1 = p - R, q2 = p - 2 * R - 1;
    if (q1 >= zo && q1 < zend)
        *(double2 *)&(out_prev + q1 * s0)[t.fdst] = *(const double2 *)&stage[t.fsrc];
    if (q2 >= zo && q2 < zend)
        *(double2 *)&(out + q2 * s0)[t.fdst] = *(const double2 *)&stage[STAGED + t.fsrc];
}

template <int M>
__device__ __forceinline__ void plane(Unit &t, double *uring, double *sring, double *stage, int p, int zo, int zend, int n0, size_t s0, double *__restrict__ out,
                                      double *__restrict__ out_prev, const double *__restrict__ prev, const double *__restrict__ cur, const double *__restrict__ vel)
{
    constexpr int MA = (M + AHEAD) % WN, MS = (M + WN - 5) % WN;
    const int ahead = p + AHEAD;
    copy_plane(uring + MA * USLOT, cur, t, ahead < zend + 2 * R ? ahead : -1, n0, s0);
    const int q = p - (t.first ? R : 2 * R + 1);
    double pv[CW], vv[CW];
#pragma unroll
    for (int j = 0; j < CW; ++j) {
        pv[j] = t.np[j];
        vv[j] = t.nv[j];
    }
    if (q + 1 >= R && q + 1 < n0 - R && t.on) {
        const size_t at = (q + 1) * s0;
        const double2 a = *(const double2 *)((t.first ? prev : cur) + at + t.cell);
        const double2 b = *(const double2 *)(vel + at + t.cell);
        t.np[0] = a.x;
        t.np[1] = a.y;
        t.nv[0] = b.x;
        t.nv[1] = b.y;
    }
    asm volatile("cp.async.wait_group %0;" ::"n"(AHEAD) : "memory");
    __syncthreads();
    double *const staged = stage + (p & 1) * 2 * STAGED;
    flush(stage + ((p - 1) & 1) * 2 * STAGED, t, p - 1, zo, zend, s0, out, out_prev);
    const double2 c = t.first ? *(const double2 *)&uring[M * USLOT + (t.rs + R) * PITCH + t.cs + R] : *(const double2 *)&sring[MS * SSLOT + t.rs * PITCH + t.cs];
    t.w[(M + 8) % WN][0] = c.x;
    t.w[(M + 8) % WN][1] = c.y;
    double res[CW];
    if (t.first) {
        if (q < zo - R || q >= zend + R)
            return;
        const bool zin = q >= R && q < n0 - R;
        update2<M>(uring + ((M + 5) % WN) * USLOT, t.rs + R, t.cs, t.w, pv, vv, res);
#pragma unroll
        for (int j = 0; j < CW; ++j)
            res[j] = zin && t.in[j] ? res[j] : t.grid[j] ? t.w[(M + 4) % WN][j] : 0.0;
        *(double2 *)&sring[((M + 5) % WN) * SSLOT + t.rs * PITCH + t.cs] = make_double2(res[0], res[1]);
        if (t.own)
            *(double2 *)&staged[(t.rs - R) * SP + t.cs - R] = make_double2(res[0], res[1]);
    } else {
        if (q < zo || q >= zend)
            return;
        update2<M>(sring + M * SSLOT, t.rs, t.cs - R, t.w, pv, vv, res);
        *(double2 *)&staged[STAGED + (t.rs - R) * SP + t.cs - R] = make_double2(res[0], res[1]);
    }
}

template <int M>
__device__ __forceinline__ void planes(Unit &t, double *uring, double *sring, double *stage, int p0, int pend, int zo, int zend, int n0, size_t s0, double *__restrict__ out,
                                       double *__restrict__ out_prev, const double *__restrict__ prev, const double *__restrict__ cur, const double *__restrict__ vel)
{
    if constexpr (M < WN) {
        if (p0 + M > pend)
            return;
        plane<M>(t, uring, sring, stage, p0 + M, zo, zend, n0, s0, out, out_prev, prev, cur, vel);
        planes<M + 1>(t, uring, sring, stage, p0, pend, zo, zend, n0, s0, out, out_prev, prev, cur, vel);
    }
}

__global__ void __maxnreg__(MAXREG) stencils_cuda__lean64_kernel(int n0, int n1, int n2, double *__restrict__ out, double *__restrict__ out_prev,
                                                                      const double *__restrict__ prev, const double *__restrict__ cur, const double *__restrict__ vel)
{
    extern __shared__ __align__(16) double smem[];
    double *const uring = smem, *const sring = smem + WN * USLOT, *const stage = sring + WN * SSLOT;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int oy = R + blockIdx.y * TY, ox = R + blockIdx.x * TX;
    Unit t;
    t.first = warp < W1;
    if (t.first) {
        t.rs = lane;
        t.cs = CW * warp;
    } else {
        const int u = (warp - W1) * 32 + lane;
        t.rs = R + u % TY;
        t.cs = R + CW * (u / TY);
    }
    const int gy = oy - R + t.rs, gx = ox - R + t.cs;
    t.own = t.rs >= R && t.rs < R + TY && t.cs >= R && t.cs < R + TX;
#pragma unroll
    for (int j = 0; j < CW; ++j) {
        t.grid[j] = gy >= 0 && gy < n1 && gx + j >= 0 && gx + j < n2;
        t.in[j] = gy >= R && gy < n1 - R && gx + j >= R && gx + j < n2 - R;
        t.np[j] = t.nv[j] = 0.0;
#pragma unroll
        for (int m = 0; m < WN; ++m)
            t.w[m][j] = 0.0;
    }
    t.on = t.grid[0];
    t.cell = gy * n2 + gx;
    plan(t, n1, n2, oy, ox);
    const int zo = R + blockIdx.z * ZCN, zend = min(zo + ZCN, n0 - R);
    const size_t s0 = (size_t)n1 * n2;
    const int pbase = zo - 2 * R, pend = zend + 2 * R;
#pragma unroll
    for (int i = 0; i < AHEAD; ++i)
        copy_plane(uring + i * USLOT, cur, t, pbase + i, n0, s0);
    for (int p0 = pbase; p0 <= pend; p0 += WN)
        planes<0>(t, uring, sring, stage, p0, pend, zo, zend, n0, s0, out, out_prev, prev, cur, vel);
    __syncthreads();
    flush(stage + (pend & 1) * 2 * STAGED, t, pend, zo, zend, s0, out, out_prev);
}
} // namespace

/* marker for the harness: for (int s = 2; s >= 1 */
extern "C" int stencils_cuda__acoustic25__update_u(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, double *out, double *out_prev, const double *prev_u, const double *cur_u,
                                                   const double *vel, int levels)
{
    (void)cudaGetLastError();
    if (levels != 2 || n2 % 2 != 0 || (size_t)out % 16 || (size_t)out_prev % 16 || (size_t)prev_u % 16 || (size_t)cur_u % 16 || (size_t)vel % 16)
        return (int)cudaErrorInvalidValue;
    const size_t shared = sizeof(double) * (WN * (USLOT + SSLOT) + 4 * STAGED);
    const cudaError_t e = cudaFuncSetAttribute(stencils_cuda__lean64_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared);
    if (e != cudaSuccess)
        return (int)e;
    const dim3 grid((unsigned)((n2 - 2 * R + TX - 1) / TX), (unsigned)((n1 - 2 * R + TY - 1) / TY), (unsigned)((n0 - 2 * R + ZCN - 1) / ZCN));
    stencils_cuda__lean64_kernel<<<grid, NT, shared>>>((int)n0, (int)n1, (int)n2, out, out_prev, prev_u, cur_u, vel);
    return (int)cudaGetLastError();
}
