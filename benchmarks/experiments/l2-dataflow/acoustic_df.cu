// Two fused leapfrog steps of acoustic25 (SUITE.md) through L2, without
// recomputation: one launch runs the items of both steps, each item a tile of
// 32 x 8 columns marching every plane along z with `stream`'s body. Items take
// tickets in launch order (an atomic counter), so an item only ever waits on
// items with smaller tickets, which are running or done: step 1's tile row r,
// then step 2's row r - 1. A step-1 item publishes how far it has written
// (a counter a tile, a release every PUB planes); a step-2 item waits until
// the step-1 tiles of its row and the rows beside it have written the plane
// it loads next. Step 2 reads step 1's output while it is still in L2.
//
// Included by main.cu after the generated `stream` kernel (the reference).
#include "counters.cuh"

#ifndef PUB
#define PUB 4 // planes between two releases of a step-1 item's counter
#endif
#ifndef SLEEP
#define SLEEP 64 // nanoseconds between two polls
#endif
#ifndef BAND
#define BAND 1000 // tile rows a launch (1000: one launch)
#endif
#ifndef LAG
#define LAG 0 // planes a step-1 item may lead the step-2 item below it (0: no limit; needs every item of a launch resident)
#endif
#ifndef MINB
#define MINB (1024 / (32 * TYR)) // blocks a multiprocessor (the launch bound)
#endif
#ifndef TYR
#define TYR 8 // rows of a tile (threads along y)
#endif

namespace df {
#ifdef TRACE
__device__ unsigned long long trace[4 * 20000];
__device__ bool trace_on;
#endif

constexpr int R = 4;
using counters::ld_relaxed;
using counters::st_release;
using counters::Tiles; // 32 columns and TYR rows

// Loads of the grid a step reads as `cur`: through the read-only path in step 1
// (the grid is not written in this launch), through L1 in step 2 (written in
// this launch by other blocks, read only after an acquire that covers it).
template <int STEP>
__device__ __forceinline__ float ld_cur(const float *p)
{
#ifdef CG
    return STEP == 1 ? __ldg(p) : __ldcg(p);
#else
    return STEP == 1 ? __ldg(p) : __ldca(p);
#endif
}

// Waits (the whole block) until the step-1 tiles that step 2's tile (tx, ty)
// reads, or shares a cache line of L1 with, have written every plane below
// `need`: rows ty - 1 .. ty + 1, tiles tx - W .. tx + W along x, circularly
// (a line can hold the end of a row and the start of the next); W = 2 unless
// ROWS (whole rows). `avail` (the same in every thread) caches the last
// minimum seen. Warp 0 polls with relaxed loads, then one acquire fence; the
// barrier orders the other warps' loads after it. `slots` alternate between
// calls, so warp 0 never overwrites a value another warp has yet to read.
__device__ __forceinline__ void wait_rows(const int *progress, Tiles t, int tx, int ty, int need, int &avail, int *slots, int &call)
{
    if (need <= avail)
        return;
#ifndef NOSYNC
    if (threadIdx.y == 0) {
        const int lo = ty > 0 ? ty - 1 : 0, hi = ty + 1 < t.ty ? ty + 1 : t.ty - 1;
#ifdef ROWS
        const int w = t.tx;
#else
        const int w = t.tx < 5 ? t.tx : 5;
#endif
        const int count = (hi - lo + 1) * w;
        int m;
        for (;;) {
            m = 0x7fffffff;
            for (int k = threadIdx.x; k < count; k += 32) {
                const int row = lo + k / w, x = w == t.tx ? k % w : (tx - 2 + k % w + t.tx) % t.tx;
                m = min(m, ld_relaxed(&progress[row * t.tx + x]));
            }
            m = __reduce_min_sync(0xffffffffu, m);
            if (m >= need)
                break;
            __nanosleep(SLEEP);
        }
#ifndef NOFENCE
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
#endif
        if (threadIdx.x == 0)
            slots[call & 1] = m;
    }
    __syncthreads();
    avail = slots[call & 1];
    ++call;
#else
    avail = 0x7fffffff;
#endif
}

// One step of the march over the tile's columns; STEP 1 publishes, STEP 2 waits.
template <int STEP>
__device__ __forceinline__ void march(int n0, int n1, int n2, float *out, const float *prev, const float *cur, const float *vel,
                                      int *progress, Tiles t, int tx, int ty, bool lagged)
{
    __shared__ int slots[2];
    int call = 0;
    const int s0 = n1 * n2, s1 = n2;
    const int z0 = R, z1 = n0 - R;
    const int i1 = R + ty * TYR + threadIdx.y, i2 = tx * 32 + threadIdx.x;
    const bool on = i1 < n1 - R && i2 >= R && i2 < n2 - R;
    const int col = on ? i1 * s1 + i2 : R * s1 + R; // any cell of a plane, for the threads off the interior
    int avail = STEP == 2 ? 0 : 0x7fffffff;
    // Step 2 first loads planes up to z0 + R of `cur`.
    if (STEP == 2)
        wait_rows(progress, t, tx, ty, min(z0 + R + 1, z1), avail, slots, call);
    float w[2 * R + 2];      // the column at planes z - 4 .. z + 5
    float xm[R], xp[R];      // along x at plane z: i2 - 1 - k, i2 + 1 + k
    float ym[R], yp[R];      // along y at plane z
    float nxm[R], nxp[R], nym[R], nyp[R];
    float pv, vv, npv = 0.f, nvv = 0.f;
#pragma unroll
    for (int m = 0; m <= 2 * R; ++m)
        w[m] = ld_cur<STEP>(&cur[(z0 - R + m) * s0 + col]);
    w[2 * R + 1] = 0.f;
#pragma unroll
    for (int k = 0; k < R; ++k) {
        xm[k] = ld_cur<STEP>(&cur[z0 * s0 + col - 1 - k]);
        xp[k] = ld_cur<STEP>(&cur[z0 * s0 + col + 1 + k]);
        ym[k] = ld_cur<STEP>(&cur[z0 * s0 + col - (1 + k) * s1]);
        yp[k] = ld_cur<STEP>(&cur[z0 * s0 + col + (1 + k) * s1]);
    }
    pv = __ldg(&prev[z0 * s0 + col]);
    vv = __ldg(&vel[z0 * s0 + col]);
    // The expression of the generated `stream` kernel, term for term.
    auto compute = [&](int z) {
        const float r = 2.0f * w[4] - pv + 0.01f * vv * vv * (3.0f * -2.8472223f * w[4] + (1.6f * (w[3] + w[5] + ym[0] + yp[0] + xm[0] + xp[0]) + -0.2f * (w[2] + w[6] + ym[1] + yp[1] + xm[1] + xp[1]) + 0.025396826f * (w[1] + w[7] + ym[2] + yp[2] + xm[2] + xp[2]) + -0.001785714f * (w[0] + w[8] + ym[3] + yp[3] + xm[3] + xp[3])));
        if (on)
            out[z * s0 + col] = r;
    };
    // Publishes how far this item has written (step 2's counters follow step 1's);
    // with LAG, a step-1 item then waits until step 2's tile below it (row ty - 1,
    // in the same launch) is at most LAG planes behind.
    auto publish = [&](int z) {
#ifndef NOSYNC
        if (STEP == 1 || LAG > 0) {
            __syncthreads();
            if (threadIdx.x == 0 && threadIdx.y == 0) {
                st_release(&progress[(STEP - 1) * t.tx * t.ty + ty * t.tx + tx], z + 1);
                if (STEP == 1 && LAG > 0 && lagged && ty > 0)
                    while (ld_relaxed(&progress[t.tx * t.ty + (ty - 1) * t.tx + tx]) < z + 1 - LAG)
                        __nanosleep(SLEEP);
            }
            if (STEP == 1 && LAG > 0 && lagged && ty > 0)
                __syncthreads();
        }
#endif
    };
    // Every plane but the last: load the next plane's reads, compute, move on.
    for (int z = z0; z < z1 - 1; ++z) {
        if (STEP == 2)
            wait_rows(progress, t, tx, ty, min(z + R + 2, z1), avail, slots, call);
#pragma unroll
        for (int k = 0; k < R; ++k) {
            nxm[k] = ld_cur<STEP>(&cur[(z + 1) * s0 + col - 1 - k]);
            nxp[k] = ld_cur<STEP>(&cur[(z + 1) * s0 + col + 1 + k]);
        }
        w[2 * R + 1] = ld_cur<STEP>(&cur[(z + R + 1) * s0 + col]);
        npv = __ldg(&prev[(z + 1) * s0 + col]);
        nvv = __ldg(&vel[(z + 1) * s0 + col]);
#pragma unroll
        for (int k = 0; k < R; ++k) {
            nym[k] = ld_cur<STEP>(&cur[(z + 1) * s0 + col - (1 + k) * s1]);
            nyp[k] = ld_cur<STEP>(&cur[(z + 1) * s0 + col + (1 + k) * s1]);
        }
        compute(z);
        if ((z - z0 + 1) % PUB == 0)
            publish(z);
#pragma unroll
        for (int m = 0; m <= 2 * R; ++m)
            w[m] = w[m + 1];
#pragma unroll
        for (int k = 0; k < R; ++k) {
            xm[k] = nxm[k];
            xp[k] = nxp[k];
            ym[k] = nym[k];
            yp[k] = nyp[k];
        }
        pv = npv;
        vv = nvv;
    }
    compute(z1 - 1);
    publish(z1 - 1);
}

// Tickets (counted from `base`, this launch's first): pair p holds step 1's
// tile row a + p (tx items), then step 2's row a + p - 1.
__global__ void __launch_bounds__(32 * TYR, MINB) fused2(int n0, int n1, int n2, float *a, const float *b, float *c, const float *vel,
                                                  int *ticket, int *progress, Tiles t, int base, int row0, bool single)
{
    __shared__ int item;
    if (threadIdx.x == 0 && threadIdx.y == 0)
        item = atomicAdd(ticket, 1) - base;
    __syncthreads();
    if (single) { // one step, every item a step-1 item (the march's cost against `stream`)
        march<1>(n0, n1, n2, c, a, b, vel, progress, t, item % t.tx, item / t.tx, false);
        return;
    }
    const int r = row0 + item / (2 * t.tx), k = item % (2 * t.tx);
#ifdef TRACE
    __shared__ unsigned long long t0;
    if (threadIdx.x == 0 && threadIdx.y == 0)
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
#endif
    if (k < t.tx) {
        if (r < t.ty) // u_{k+1} = step(prev a, cur b) into c
            march<1>(n0, n1, n2, c, a, b, vel, progress, t, k, r, true);
    } else if (r >= 1 && r - 1 < t.ty) { // u_{k+2} = step(prev b, cur c) into a
        march<2>(n0, n1, n2, a, b, c, vel, progress, t, k - t.tx, r - 1, true);
    }
#ifdef TRACE
    unsigned long long t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (threadIdx.x == 0 && threadIdx.y == 0 && trace_on) {
        unsigned smid;
        asm("mov.u32 %0, %%smid;" : "=r"(smid));
        trace[4 * (base + item)] = t0;
        trace[4 * (base + item) + 1] = t1;
        trace[4 * (base + item) + 2] = (unsigned long long)(k < t.tx ? 1 : 2) | (unsigned long long)r << 8 | (unsigned long long)smid << 32;
        trace[4 * (base + item) + 3] = (unsigned long long)k;
    }
#endif
}

inline Tiles tiles(int n1, int n2)
{
    return Tiles{(n2 + 31) / 32, (n1 - 2 * R + TYR - 1) / TYR};
}

inline size_t counters_needed(int n1, int n2)
{
    return counters::counters_needed(tiles(n1, n2));
}

// Two steps: c = step(a, b), then a = step(b, c), in launches of BAND tile rows
// (every launch's items fit the GPU at once, so they march along z together).
inline cudaError_t launch2(int n0, int n1, int n2, float *a, const float *b, float *c, const float *vel, int *counters, cudaStream_t s = 0)
{
    const Tiles t = tiles(n1, n2);
    cudaMemsetAsync(counters, 0, sizeof(int) * counters_needed(n1, n2), s);
    counters::in_bands(t, BAND, [&](int items, int base, int row0) {
        fused2<<<items, dim3(32, TYR), 0, s>>>(n0, n1, n2, a, b, c, vel, counters, counters + 1, t, base, row0, false);
    });
    return cudaGetLastError();
}

// One step through the same march: c = step(a, b).
inline cudaError_t launch1(int n0, int n1, int n2, const float *a, const float *b, float *c, const float *vel, int *counters, cudaStream_t s = 0)
{
    const Tiles t = tiles(n1, n2);
    cudaMemsetAsync(counters, 0, sizeof(int) * counters_needed(n1, n2), s);
    fused2<<<t.tx * t.ty, dim3(32, TYR), 0, s>>>(n0, n1, n2, (float *)a, b, c, vel, counters, counters + 1, t, 0, 0, true);
    return cudaGetLastError();
}

} // namespace df
