/*
 * Prototype (hand-written, not generated; README.md beside it): star3d25 f64
 * (SUITE.md: the radius-4 star, 8th-order Laplacian) with the in-plane part
 * of each update on the FP64 tensor cores (mma.m8n8k4.f64).
 *
 * Each warp owns an 8 x 8 block of one plane. The in-plane sum of the star is
 * two products with banded 16 x 8 coefficient matrices:
 *   X[y][i] = sum_k u[y][x0 - 4 + k] * C[k][i]      (4 mma, k in chunks of 4)
 *   Y[i][x] = sum_k C[k][i] * u[y0 - 4 + k][x]      (4 mma)
 * with C[k][i] = c[|k - 4 - i|] for 1 <= |k - 4 - i| <= 4, so a lane's
 * coefficient fragment is the same register for both. The operands come from
 * a plane of the tile in shared memory (row pitch = 12 mod 16 doubles: both
 * fragment patterns are free of bank conflicts); the `z` part and the centre
 * come from the lane's own window of its two cells (the accumulator's layout:
 * row lane / 4, columns 2 (lane % 4) + 0, 1).
 *
 * LEVELS 1: a single step, 32 x 32 cells a block (16 warps).
 * LEVELS 2: two fused steps. 16 warps compute level 1 on a 32 x 32 tile and
 * publish it to a ring of planes; 9 more warps compute level 2 on its inner
 * 24 x 24 cells, 5 planes behind, and store them. One barrier per plane.
 * Grids need n2 % 2 == 0 (16-byte loads); fixed boundary (frame cells keep
 * their value at every level).
 *
 * Macros: LEVELS (1 or 2), ZCN (planes a block marches), BLOCKS (resident
 * blocks per multiprocessor for __launch_bounds__), STACK (1: the in-plane
 * sum as 4 products of mma.m16n8k4, the rows of u along x stacked on those of
 * u^T along y; ../dmma-shapes/README.md), PAIR (1: one barrier for two
 * planes, level 2 one plane further behind level 1), SPLIT (1: 4 accumulator
 * chains of 2 products for the in-plane sum, not 2 of 4), DEC (1: level 1 and
 * level 2 decoupled by named barriers instead of one barrier a plane: level-1
 * warps alone copy level 0 and meet at their own barrier; each of level 1's
 * S1 ring slots has a "full" barrier (level 1 arrives, level 2 waits) and an
 * "empty" one (level 2 arrives once it has read the plane, level 1 waits
 * before it overwrites it), so level 1 may run S1 - R planes ahead).
 */
#include <cuda_runtime.h>
#include <stddef.h>
#include <cuda_pipeline_primitives.h>
#include <cstdio>

#ifndef LEVELS
#define LEVELS 2
#endif
#ifndef ZCN
#define ZCN 128
#endif
#ifndef AHEAD
#define AHEAD 3
#endif
#ifndef TILEY
#define TILEY 32 /* level 1's tile: rows (multiple of 8) */
#endif
#ifndef TILEX
#define TILEX 32 /* and columns */
#endif
#ifndef CHAIN1
#define CHAIN1 0
#endif
#ifndef LEAP
#define LEAP 0 /* 1: acoustic25 (the leapfrog with its velocity grid; LEVELS 2 only) */
#endif
#ifndef BLOCKS
#define BLOCKS 1
#endif
#ifndef PAIR
#define PAIR 0 /* 1: one barrier for two planes (level 2 one plane further behind) */
#endif
#ifndef BPW
#define BPW 1 /* 8 x 8 blocks a warp computes per plane and level (their products interleave) */
#endif
#ifndef SPLIT
#define SPLIT 0 /* 1: the in-plane sum in 4 accumulator chains of 2 products (not 2 of 4) */
#endif
#ifndef ZS2
#define ZS2 0 /* 1: level 2 reads its z neighbours from level 1's ring in shared memory (9 + 1 slots), not a register window */
#endif
#ifndef DEC
#define DEC 0 /* 1: level 1 and level 2 decoupled by named barriers (see the header); 2: the same with level 1's own
                 barrier merged into the "empty" one (one barrier a plane for level 1) */
#endif
#ifndef SLOTS1
#define SLOTS1 7 /* DEC: level 1's ring slots (2 + 2 SLOTS1 named barriers <= 16) */
#endif
#ifndef STACK
#define STACK 0 /* 1: the in-plane sum as 4 m16n8k4 products of stacked rows (H100: twice m8n8k4's rate) */
#endif

namespace {
constexpr int R = 4, WN = 2 * R + 1;
constexpr int T1Y = TILEY, T1X = TILEX; /* level 1's tile */
constexpr int T0Y = T1Y + 2 * R, T0X = T1X + 2 * R; /* level 0's tile in shared memory */
constexpr int T2Y = T1Y - 2 * R, T2X = T1X - 2 * R; /* level 2's tile */
/* Row pitches, 12 mod 16 doubles (44 up to 44 columns). */
constexpr int P0 = (T0X + 3) / 16 * 16 + 12, P1 = (T1X + 3) / 16 * 16 + 12;
constexpr int D = AHEAD;               /* planes of level 0 in flight */
constexpr int S0 = PAIR ? D + R + 4 : D + 6, S1 = DEC ? SLOTS1 : PAIR ? R + 4 : ZS2 ? 2 * R + 2 : 6; /* ring slots */
static_assert(!DEC || (LEVELS == 2 && !PAIR && !ZS2 && BPW == 1 && S1 > R && 2 + 2 * S1 <= 16), "DEC: two levels, one plane a step");
static_assert(!ZS2 || (!PAIR && BPW == 1), "ZS2 takes one plane a barrier and one block a warp");
constexpr int LAG2 = PAIR ? 2 : 1;     /* level 1's centre plane a level-2 warp takes is p - R - LAG2 */
constexpr int W1 = (T1Y / 8) * (T1X / 8); /* level-1 blocks */
constexpr int W2 = LEVELS == 2 ? (T2Y / 8) * (T2X / 8) : 0;
constexpr int NW1 = (W1 + BPW - 1) / BPW, NW2 = (W2 + BPW - 1) / BPW; /* warps: BPW blocks each */
constexpr int NT = 32 * (NW1 + NW2);
static_assert(BPW == 1 || !PAIR, "PAIR takes one block a warp");
constexpr int TOUTY = LEVELS == 2 ? T2Y : T1Y, TOUTX = LEVELS == 2 ? T2X : T1X;
constexpr int NTC = DEC ? 32 * NW1 : NT; /* threads that copy level 0 (DEC: level 1's) */
constexpr int LOADS = (T0Y * T0X / 2 + NTC - 1) / NTC; /* double2 loads a thread makes per plane */

/* Ring slot of plane p (p >= -60). */
__device__ __forceinline__ int slot(int p, int s) { return (p + 60) % s; }

__constant__ double coef[5] = {-2.847222222, 1.6, -0.2, 0.025396825, -0.001785714};

__device__ __forceinline__ void dmma(double &d0, double &d1, double a, double b)
{
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(d0), "+d"(d1)
                 : "d"(a), "d"(b));
}

/* D += A B for 16 x 8 x 4 f64 matrices (sm_90): lane l holds A[l / 4][l % 4], A[l / 4 + 8][l % 4], B[l % 4][l / 4],
   D[l / 4][2 (l % 4) + 0, 1] and D[l / 4 + 8][2 (l % 4) + 0, 1]. */
__device__ __forceinline__ void dmma16(double (&d)[4], double a0, double a1, double b)
{
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a0), "d"(a1), "d"(b));
}

/* The in-plane sum (without the centre) of the 8 x 8 block whose top-left cell
   is at (ry, rx) of `src` (pitch P), in the accumulator's layout. */
template <int P>
__device__ __forceinline__ double2 inplane(const double *src, int ry, int rx, int lane, const double (&cf)[4])
{
    const int g = lane >> 2, t = lane & 3;
#if STACK
    /* One m16n8k4 product of the stacked rows [u along x; u^T along y] with the band: rows 0-7 the sum
       along x of this lane's cells, rows 8-15 the sum along y of the transposed block (dmma-shapes). */
    double d[4] = {0, 0, 0, 0};
#pragma unroll
    for (int m = 0; m < 4; ++m)
        dmma16(d, src[(ry + g) * P + rx - 4 + 4 * m + t], src[(ry - 4 + 4 * m + t) * P + rx + g], cf[m]);
    const int l0 = 8 * t + (g >> 1), l1 = l0 + 4;
    const double e0 = __shfl_sync(0xffffffffu, d[2], l0), e1 = __shfl_sync(0xffffffffu, d[2], l1);
    const double o0 = __shfl_sync(0xffffffffu, d[3], l0), o1 = __shfl_sync(0xffffffffu, d[3], l1);
    return make_double2(d[0] + (g & 1 ? o0 : e0), d[1] + (g & 1 ? o1 : e1));
#elif SPLIT
    /* Products m = 0, 2 and m = 1, 3 in separate chains: twice the independent products a warp has in flight. */
    double d0 = 0, d1 = 0, e0 = 0, e1 = 0, f0 = 0, f1 = 0, h0 = 0, h1 = 0;
#pragma unroll
    for (int m = 0; m < 4; ++m) {
        const double ax = src[(ry + g) * P + rx - 4 + 4 * m + t];
        const double by = src[(ry - 4 + 4 * m + t) * P + rx + g];
        if (m % 2 == 0) {
            dmma(d0, d1, ax, cf[m]);
            dmma(e0, e1, cf[m], by);
        } else {
            dmma(f0, f1, ax, cf[m]);
            dmma(h0, h1, cf[m], by);
        }
    }
    return make_double2((d0 + f0) + (e0 + h0), (d1 + f1) + (e1 + h1));
#else
    double d0 = 0, d1 = 0, e0 = 0, e1 = 0;
#pragma unroll
    for (int m = 0; m < 4; ++m) {
        const double ax = src[(ry + g) * P + rx - 4 + 4 * m + t];
        const double by = src[(ry - 4 + 4 * m + t) * P + rx + g];
        dmma(d0, d1, ax, cf[m]);
#if CHAIN1
        dmma(d0, d1, cf[m], by);
#else
        dmma(e0, e1, cf[m], by);
#endif
    }
    return make_double2(d0 + e0, d1 + e1);
#endif
}

/* u + 0.05 (3 c0 u + in-plane + z part), the z part from window w (w[phase + R] the centre). */
template <int PH>
__device__ __forceinline__ double update(const double (&w)[WN], double ip)
{
    const double c = w[(PH + R) % WN];
    double z = 0;
#pragma unroll
    for (int r = 1; r <= R; ++r)
        z += coef[r] * (w[(PH + R - r) % WN] + w[(PH + R + r) % WN]);
    return c + 0.05 * (3.0 * coef[0] * c + (ip + z));
}

/* The leapfrog: 2 u - u.prev + 0.01 vel^2 (3 c0 u + in-plane + z part). */
template <int PH>
__device__ __forceinline__ double leap(const double (&w)[WN], double ip, double prev, double vel)
{
    const double c = w[(PH + R) % WN];
    double z = 0;
#pragma unroll
    for (int r = 1; r <= R; ++r)
        z += coef[r] * (w[(PH + R - r) % WN] + w[(PH + R + r) % WN]);
    return 2.0 * c - prev + 0.01 * vel * vel * (3.0 * coef[0] * c + (ip + z));
}

struct Ctx {
    int n0, n1, n2, s0;
    int y0, x0;       /* grid coordinates of level 0's tile origin */
    int warp, lane;
    int by, bx;       /* this warp's block, in level-1 or level-2 tile coordinates (cells) */
    int gy, gx;       /* grid coordinates of the lane's first cell */
    bool inside_yx;   /* the lane's cells lie inside the grid's interior in y and x */
    bool mine;        /* (level 2) the lane's cells are stored */
    bool valid;       /* the warp has this block (BPW > 1: the last warp of a level may have fewer) */
    double *out_prev; /* LEAP: level 1 at the stored cells */
    const double *prev, *vel; /* LEAP: u.prev and the velocity grid */
};

/* The lane's two cells of `g` at plane q (zeros where `on` is false). */
__device__ __forceinline__ double2 cells(const Ctx &k, const double *g, int q, bool on)
{
    return on ? __ldg((const double2 *)&g[(size_t)q * k.s0 + (size_t)k.gy * k.n2 + k.gx]) : make_double2(0, 0);
}

/* Starts copying level 0's tile at plane p into its ring slot (zeros off the grid) and commits the copies. */
__device__ __forceinline__ void copy_plane(const Ctx &k, int p, int zhi, double *ring0, const double *__restrict__ in)
{
    double *dst = ring0 + slot(p, S0) * T0Y * P0;
    const int tid = k.warp * 32 + k.lane;
#pragma unroll
    for (int i = 0; i < LOADS; ++i) {
        const int e = tid + i * NTC;
        if (e < T0Y * T0X / 2) {
            const int y = k.y0 + e / (T0X / 2), x = k.x0 + 2 * (e % (T0X / 2));
            const bool on = p < zhi && p >= 0 && p < k.n0 && y >= 0 && y < k.n1 && x >= 0 && x < k.n2;
            const double *src = on ? &in[(size_t)p * k.s0 + (size_t)y * k.n2 + x] : in;
            __pipeline_memcpy_async(&dst[(e / (T0X / 2)) * P0 + 2 * (e % (T0X / 2))], src, 16, on ? 0 : 16);
        }
    }
    __pipeline_commit();
}

__device__ __forceinline__ void barrier() { asm volatile("bar.sync 1, %0;" ::"r"(NT) : "memory"); }
/* DEC: named barrier `id` over `n` threads. */
__device__ __forceinline__ void bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void bar_arrive(int id, int n) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory"); }

/* LEAP: ROLE 1's u.prev and vel at q1, ROLE 2's level 0 (u) and vel at q2, for plane p (loaded before the
   barrier: their latency passes with it). */
template <int ROLE>
__device__ __forceinline__ void leap_inputs(const Ctx &k, int p, const double *__restrict__ in, double2 &in1, double2 &in2)
{
#if LEAP
    const int qin = ROLE == 1 ? p - R : p - 2 * R - LAG2;
    const bool on = k.inside_yx && qin >= R && qin < k.n0 - R && (ROLE == 1 || k.mine);
    in1 = cells(k, ROLE == 1 ? k.prev : in, qin, on);
    in2 = cells(k, k.vel, qin, on);
#endif
}

/* A warp of level ROLE's work for plane p, after the barrier: w0, w1 its window of its two cells' columns (level ROLE - 1). */
template <int ROLE, int PH>
__device__ __forceinline__ void work(const Ctx &k, int p, int zlo, int zhi, double (&w0)[WN], double (&w1)[WN],
                                     double *ring0, double *ring1, const double (&cf)[4], double *__restrict__ out,
                                     const double2 in1, const double2 in2)
{
    const double *dst0 = ring0 + slot(p, S0) * T0Y * P0;
    const int g = k.lane >> 2, t = k.lane & 3;
    if (ROLE == 1) {
        /* Level 0's centre at plane p joins the window; level 1 at plane q1 = p - R. */
        const double2 c = *(const double2 *)&dst0[(R + k.by + g) * P0 + R + k.bx + 2 * t];
        w0[(PH + 2 * R) % WN] = c.x;
        w1[(PH + 2 * R) % WN] = c.y;
        const int q1 = p - R;
        if (q1 >= zlo) {
            const double *src = ring0 + slot(q1, S0) * T0Y * P0;
            const double2 ip = inplane<P0>(src, R + k.by, R + k.bx, k.lane, cf);
            const bool step = k.inside_yx && q1 >= R && q1 < k.n0 - R;
            double2 r;
#if LEAP
            r.x = step ? leap<PH>(w0, ip.x, in1.x, in2.x) : w0[(PH + R) % WN];
            r.y = step ? leap<PH>(w1, ip.y, in1.y, in2.y) : w1[(PH + R) % WN];
#else
            r.x = step ? update<PH>(w0, ip.x) : w0[(PH + R) % WN];
            r.y = step ? update<PH>(w1, ip.y) : w1[(PH + R) % WN];
#endif
#if LEVELS == 1
            if (k.mine && q1 >= zlo + R && q1 < zhi - R)
                *(double2 *)&out[(size_t)q1 * k.s0 + (size_t)k.gy * k.n2 + k.gx] = r;
#else
            *(double2 *)&ring1[slot(q1, S1) * T1Y * P1 + (k.by + g) * P1 + k.bx + 2 * t] = r;
#endif
        }
    }
#if LEVELS == 2
    if (ROLE == 2) {
        /* Level 1's centre at plane p - R - LAG2 joins the window; level 2 at plane q2 = p - 2 R - LAG2. */
        const int qc = p - R - LAG2;
#if ZS2
        /* Level 1's planes q2 - R .. q2 + R from its ring: w0, w1 as a window of phase 0 (w[R] the centre). */
        const int q2 = qc - R;
        if (q2 >= zlo + 2 * R && q2 < zhi - 2 * R) {
            double z0[WN], z1[WN];
#pragma unroll
            for (int m = 0; m < WN; ++m) {
                const double2 c = *(const double2 *)&ring1[slot(q2 - R + m, S1) * T1Y * P1 + (k.by + g) * P1 + k.bx + 2 * t];
                z0[m] = c.x;
                z1[m] = c.y;
            }
            const double *src = ring1 + slot(q2, S1) * T1Y * P1;
            const double2 ip = inplane<P1>(src, k.by, k.bx, k.lane, cf);
            const bool step = k.inside_yx && q2 >= R && q2 < k.n0 - R;
            double2 r;
#if LEAP
            r.x = step ? leap<0>(z0, ip.x, in1.x, in2.x) : z0[R];
            r.y = step ? leap<0>(z1, ip.y, in1.y, in2.y) : z1[R];
            if (k.mine)
                *(double2 *)&k.out_prev[(size_t)q2 * k.s0 + (size_t)k.gy * k.n2 + k.gx] = make_double2(z0[R], z1[R]);
#else
            r.x = step ? update<0>(z0, ip.x) : z0[R];
            r.y = step ? update<0>(z1, ip.y) : z1[R];
#endif
            if (k.mine)
                *(double2 *)&out[(size_t)q2 * k.s0 + (size_t)k.gy * k.n2 + k.gx] = r;
        }
        (void)w0;
        (void)w1;
#else
        if (qc >= zlo) {
            const double2 c = *(const double2 *)&ring1[slot(qc, S1) * T1Y * P1 + (k.by + g) * P1 + k.bx + 2 * t];
            w0[(PH + 2 * R) % WN] = c.x;
            w1[(PH + 2 * R) % WN] = c.y;
        }
        const int q2 = qc - R;
        if (q2 >= zlo + 2 * R && q2 < zhi - 2 * R) {
            const double *src = ring1 + slot(q2, S1) * T1Y * P1;
            const double2 ip = inplane<P1>(src, k.by, k.bx, k.lane, cf);
            const bool step = k.inside_yx && q2 >= R && q2 < k.n0 - R;
            double2 r;
#if LEAP
            r.x = step ? leap<PH>(w0, ip.x, in1.x, in2.x) : w0[(PH + R) % WN];
            r.y = step ? leap<PH>(w1, ip.y, in1.y, in2.y) : w1[(PH + R) % WN];
            if (k.mine)
                *(double2 *)&k.out_prev[(size_t)q2 * k.s0 + (size_t)k.gy * k.n2 + k.gx] = make_double2(w0[(PH + R) % WN], w1[(PH + R) % WN]);
#else
            r.x = step ? update<PH>(w0, ip.x) : w0[(PH + R) % WN];
            r.y = step ? update<PH>(w1, ip.y) : w1[(PH + R) % WN];
#endif
            if (k.mine)
                *(double2 *)&out[(size_t)q2 * k.s0 + (size_t)k.gy * k.n2 + k.gx] = r;
        }
#endif
    }
#endif
}

#if DEC
/* One plane (DEC). Level 1: copies, its own barrier (id 1), waits until level 2 has emptied the slot of its plane
   (id 2 + S1 + slot), computes, marks the slot full (id 2 + slot). Level 2: waits until the slot of its centre plane is
   full, computes, marks the slot of its in-plane source (read for the last time) empty if level 1 will refill it. */
template <int ROLE, int PH>
__device__ __forceinline__ void iteration(const Ctx (&k)[BPW], int p, int zlo, int zhi, double (&w0)[BPW][WN], double (&w1)[BPW][WN],
                                          double *ring0, double *ring1, const double (&cf)[4], double *__restrict__ out,
                                          const double *__restrict__ in)
{
    double2 in1 = make_double2(0, 0), in2 = make_double2(0, 0);
    if (ROLE == 1) {
        copy_plane(k[0], p + D, zhi, ring0, in);
        __pipeline_wait_prior(D);
        leap_inputs<1>(k[0], p, in, in1, in2);
        const int q1 = p - R;
#if DEC == 2
        bar_sync(2 + S1 + slot(q1, S1), NT); /* level 0 at p copied, and level 2 done with plane q1 - S1 */
#else
        bar_sync(1, NTC);
        if (q1 >= zlo + S1)
            bar_sync(2 + S1 + slot(q1, S1), NT);
#endif
        work<1, PH>(k[0], p, zlo, zhi, w0[0], w1[0], ring0, ring1, cf, out, in1, in2);
        if (q1 >= zlo)
            bar_arrive(2 + slot(q1, S1), NT);
    } else {
        leap_inputs<2>(k[0], p, in, in1, in2);
        const int qc = p - R - LAG2;
        if (qc >= zlo)
            bar_sync(2 + slot(qc, S1), NT);
        work<2, PH>(k[0], p, zlo, zhi, w0[0], w1[0], ring0, ring1, cf, out, in1, in2);
        const int x = qc - R;
#if DEC == 2
        if (x + S1 >= zlo - R && x + S1 <= zhi - 1) /* level 1's step for plane x + S1 may start */
            bar_arrive(2 + S1 + slot(x, S1), NT);
#else
        if (x >= zlo && x + S1 <= zhi - 1)
            bar_arrive(2 + S1 + slot(x, S1), NT);
#endif
    }
}
#else
/* One plane, one barrier; the warp's BPW blocks. */
template <int ROLE, int PH>
__device__ __forceinline__ void iteration(const Ctx (&k)[BPW], int p, int zlo, int zhi, double (&w0)[BPW][WN], double (&w1)[BPW][WN],
                                          double *ring0, double *ring1, const double (&cf)[4], double *__restrict__ out,
                                          const double *__restrict__ in)
{
    /* Level 0 at plane p + D on its way to the ring; plane p has arrived. */
    copy_plane(k[0], p + D, zhi, ring0, in);
    __pipeline_wait_prior(D);
    double2 in1[BPW], in2[BPW];
#pragma unroll
    for (int b = 0; b < BPW; ++b) {
        in1[b] = in2[b] = make_double2(0, 0);
        leap_inputs<ROLE>(k[b], p, in, in1[b], in2[b]);
    }
    barrier();
#pragma unroll
    for (int b = 0; b < BPW; ++b)
        if (BPW == 1 || k[b].valid)
            work<ROLE, PH>(k[b], p, zlo, zhi, w0[b], w1[b], ring0, ring1, cf, out, in1[b], in2[b]);
}

#endif

/* Planes p and p + 1, one barrier (PAIR): level 1's planes of this pair reach level 2 after the next one. */
template <int ROLE, int PH>
__device__ __forceinline__ void pair(const Ctx (&kb)[BPW], int p, int zlo, int zhi, double (&w0b)[BPW][WN], double (&w1b)[BPW][WN],
                                     double *ring0, double *ring1, const double (&cf)[4], double *__restrict__ out,
                                     const double *__restrict__ in)
{
    const Ctx &k = kb[0];
    double(&w0)[WN] = w0b[0];
    double(&w1)[WN] = w1b[0];
    copy_plane(k, p + D, zhi, ring0, in);
    copy_plane(k, p + D + 1, zhi, ring0, in);
    __pipeline_wait_prior(D);
    double2 a1 = make_double2(0, 0), a2 = make_double2(0, 0), b1 = make_double2(0, 0), b2 = make_double2(0, 0);
    leap_inputs<ROLE>(k, p, in, a1, a2);
    leap_inputs<ROLE>(k, p + 1, in, b1, b2);
    barrier();
    work<ROLE, PH>(k, p, zlo, zhi, w0, w1, ring0, ring1, cf, out, a1, a2);
    work<ROLE, (PH + 1) % WN>(k, p + 1, zlo, zhi, w0, w1, ring0, ring1, cf, out, b1, b2);
}

/* Every plane from zlo to last, for a warp of level ROLE. */
template <int ROLE>
__device__ __forceinline__ void march(const Ctx (&k)[BPW], int zlo, int zhi, int last, double *ring0, double *ring1,
                                      const double (&cf)[4], double *__restrict__ out, const double *__restrict__ in)
{
    double w0[BPW][WN], w1[BPW][WN];
#pragma unroll
    for (int b = 0; b < BPW; ++b)
#pragma unroll
        for (int m = 0; m < WN; ++m)
            w0[b][m] = w1[b][m] = 0;
    int p = zlo;
#if PAIR
    for (; p + 2 * WN <= last; p += 2 * WN) {
        pair<ROLE, 0>(k, p, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        pair<ROLE, 2>(k, p + 2, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        pair<ROLE, 4>(k, p + 4, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        pair<ROLE, 6>(k, p + 6, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        pair<ROLE, 8>(k, p + 8, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        pair<ROLE, 1>(k, p + 10, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        pair<ROLE, 3>(k, p + 12, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        pair<ROLE, 5>(k, p + 14, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        pair<ROLE, 7>(k, p + 16, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    }
    /* The rest in pairs (a last pair past `last` computes nothing that is stored). */
    const int n = last - p;
    if (n > 0)
        pair<ROLE, 0>(k, p, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 2)
        pair<ROLE, 2>(k, p + 2, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 4)
        pair<ROLE, 4>(k, p + 4, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 6)
        pair<ROLE, 6>(k, p + 6, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 8)
        pair<ROLE, 8>(k, p + 8, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 10)
        pair<ROLE, 1>(k, p + 10, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 12)
        pair<ROLE, 3>(k, p + 12, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 14)
        pair<ROLE, 5>(k, p + 14, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 16)
        pair<ROLE, 7>(k, p + 16, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
#else
    for (; p + WN <= last; p += WN) {
        iteration<ROLE, 0>(k, p, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        iteration<ROLE, 1>(k, p + 1, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        iteration<ROLE, 2>(k, p + 2, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        iteration<ROLE, 3>(k, p + 3, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        iteration<ROLE, 4>(k, p + 4, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        iteration<ROLE, 5>(k, p + 5, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        iteration<ROLE, 6>(k, p + 6, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        iteration<ROLE, 7>(k, p + 7, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
        iteration<ROLE, 8>(k, p + 8, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    }
    const int n = last - p;
    if (n > 0)
        iteration<ROLE, 0>(k, p + 0, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 1)
        iteration<ROLE, 1>(k, p + 1, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 2)
        iteration<ROLE, 2>(k, p + 2, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 3)
        iteration<ROLE, 3>(k, p + 3, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 4)
        iteration<ROLE, 4>(k, p + 4, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 5)
        iteration<ROLE, 5>(k, p + 5, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 6)
        iteration<ROLE, 6>(k, p + 6, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
    if (n > 7)
        iteration<ROLE, 7>(k, p + 7, zlo, zhi, w0, w1, ring0, ring1, cf, out, in);
#endif
}

/* Named stencils_cuda__...: the harness prefixes it with the variant, so ncu's -k regex:<V>_f64 selects it. */
#ifdef MAXREG /* registers a thread, where the launch bound's rounding would cap them lower */
__global__ void __maxnreg__(MAXREG) stencils_cuda__dmma_kernel(
#else
__global__ void __launch_bounds__(NT, BLOCKS) stencils_cuda__dmma_kernel(
#endif
                                                     int n0, int n1, int n2, double *__restrict__ out, double *__restrict__ out_prev,
                                                     const double *__restrict__ prev, const double *__restrict__ in,
                                                     const double *__restrict__ vel)
{
    extern __shared__ __align__(16) double shared[];
    double *ring0 = shared, *ring1 = shared + S0 * T0Y * P0;
    Ctx kb[BPW];
    /* Output tile origin (grid coordinates) and level-0 tile origin. */
    const int oy = R + (int)blockIdx.y * TOUTY, ox = R + (int)blockIdx.x * TOUTX;
    const int lead = LEVELS == 2 ? 2 * R : R;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int b = 0; b < BPW; ++b) {
        Ctx &k = kb[b];
        k.n0 = n0; k.n1 = n1; k.n2 = n2; k.s0 = n1 * n2;
        k.out_prev = out_prev; k.prev = prev; k.vel = vel;
        k.warp = warp;
        k.lane = lane;
        k.y0 = oy - lead;
        k.x0 = ox - lead;
        /* Block b of the warp: its level's warp index + b x its level's warps. */
        if (warp < NW1) {
            const int i = warp + b * NW1;
            k.valid = i < W1;
            k.by = (i / (T1X / 8)) * 8;
            k.bx = (i % (T1X / 8)) * 8;
        } else {
            const int i = warp - NW1 + b * NW2;
            k.valid = i < W2;
            k.by = R + (i / (T2X / 8)) * 8;
            k.bx = R + (i % (T2X / 8)) * 8;
        }
        /* The lane's cells: tile row R + by + g of level 0's tile. */
        k.gy = k.y0 + R + k.by + g;
        k.gx = k.x0 + R + k.bx + 2 * t;
        k.inside_yx = k.valid && k.gy >= R && k.gy < n1 - R && k.gx >= R && k.gx < n2 - R;
        k.mine = k.inside_yx && (LEVELS == 1 || warp >= NW1);
    }
    const Ctx &k = kb[0];
    /* Planes: level 1 is needed on [zo - R, zo + ZCN + R) for LEVELS 2. */
    const int zo = R + (int)blockIdx.z * ZCN;
    const int zend = min(zo + ZCN, n0 - R);
    const int zlo = zo - (LEVELS == 2 ? 2 * R : R);  /* first level-0 plane */
    const int zhi = zend + (LEVELS == 2 ? 2 * R : R); /* one past the last level-0 plane */
    double cf[4];
#pragma unroll
    for (int m = 0; m < 4; ++m) {
        const int d = 4 * m + t - 4 - g;
        const int a = d < 0 ? -d : d;
        cf[m] = a >= 1 && a <= R ? coef[a] : 0.0;
    }
    if (!DEC || warp < NW1) {
#pragma unroll
        for (int i = 0; i < D; ++i)
            copy_plane(k, zlo + i, zhi, ring0, in);
    }
#if DEC == 2
    /* Level 1's steps for planes zlo - R .. zlo + S1 - 2 R - 2 wait on no plane of level 2: arrive for them now. */
    if (warp >= NW1)
        for (int t = zlo - R; t <= zlo + S1 - 2 * R - 2; ++t)
            bar_arrive(2 + S1 + slot(t, S1), NT);
#endif
    /* Iterations p = zlo .. last: level 1 lags R planes, level 2 lags 2 R + LAG2 (DEC: level 1 stops at the last
       plane level 2 reads). */
    const int last = zhi + (LEVELS == 2 ? R + LAG2 : 0);
    if (warp < NW1)
        march<1>(kb, zlo, zhi, DEC ? zhi + R : last, ring0, ring1, cf, out, in);
    else
        march<2>(kb, zlo, zhi, last, ring0, ring1, cf, out, in);
}
} // namespace

constexpr size_t SHARED = sizeof(double) * (S0 * T0Y * P0 + (LEVELS == 2 ? S1 * T1Y * P1 : 0));

#if LEAP
/* marker for the harness: for (int s = 2; s >= 1 */
extern "C" int stencils_cuda__acoustic25__update_u(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, double *out, double *out_prev, const double *prev_u, const double *cur_u, const double *vel, int levels)
#elif LEVELS == 2
/* marker for the harness: for (int s = 2; s >= 1 */
#define MARK
extern "C" int stencils_cuda__star3d25__update_u(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, double *out, const double *cur_u, int levels)
#else
extern "C" int stencils_cuda__star3d25__update_u(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, double *out, const double *cur_u)
#endif
{
#if !LEAP
    double *out_prev = NULL;
    const double *prev_u = NULL, *vel = NULL;
#endif
    (void)cudaGetLastError();
#if LEVELS == 2
    if (levels != 2)
        return 1;
#endif
    if (n2 % 2)
        return 1;
    static bool attr = false;
    if (!attr) {
        const cudaError_t e = cudaFuncSetAttribute(stencils_cuda__dmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SHARED);
        if (e != cudaSuccess)
            printf("cudaFuncSetAttribute(%zu bytes): %s\n", SHARED, cudaGetErrorString(e));
        attr = true;
    }
    const dim3 grid((unsigned)((n2 - 2 * R + TOUTX - 1) / TOUTX), (unsigned)((n1 - 2 * R + TOUTY - 1) / TOUTY),
                    (unsigned)((n0 - 2 * R + ZCN - 1) / ZCN));
    stencils_cuda__dmma_kernel<<<grid, NT, SHARED>>>((int)n0, (int)n1, (int)n2, out, out_prev, prev_u, cur_u, vel);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        printf("launch (%zu bytes, %d threads): %s\n", SHARED, NT, cudaGetErrorString(e));
    return (int)e;
}
