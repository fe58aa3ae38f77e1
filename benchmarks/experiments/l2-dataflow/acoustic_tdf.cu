// Two fused leapfrog steps of acoustic25 f64 through L2 with the body of the
// generated `tensor` kernel (work/tensor.cu, included before this file: its
// helpers and coefficients). As acoustic_df.cu: one launch a band of BAND tile
// rows, items taking tickets (step 1's tile row r, then step 2's row r - 1), a
// step-1 item publishing how far it has stored, a step-2 item waiting for the
// step-1 tiles around it before it copies a plane of their output; with LAG, a
// step-1 item waits for the step-2 item below it, so the band marches along z
// together and step 2 finds step 1's planes in L2.
//
// Tiles of 16 x 32 cells (8 warps of 8 x 8, 256 threads, a ring of 10 planes of
// 24 x 40 cells: 84,480 bytes), so that two blocks share a multiprocessor.
// Unlike `tensor`, a plane's copy starts after the iteration's barrier (a
// step-2 item must know, before it copies, that the plane is stored).
#ifndef PUB
#define PUB 4
#endif
#ifndef BAND
#define BAND 5
#endif
#ifndef LAG
#define LAG 16
#endif
#ifndef SLEEP
#define SLEEP 32
#endif

#include "counters.cuh"

namespace tdf {

constexpr int TY = 16, TX = 32, RY = TY + 8, RX = TX + 8, LD = 44, SLOT = RY * LD, THREADS = TY / 8 * (TX / 8) * 32;
constexpr int SHARED = 10 * SLOT * 8;

using counters::ld_relaxed;
using counters::st_release;
using counters::Tiles; // TX columns and TY rows

// Starts the copy of the RY x RX tile at (y0, x0) of `plane` (or zeros) into `slot`.
template <int V>
__device__ __forceinline__ void copy_plane(double *slot, const double *plane, const double *any, ptrdiff_t n1, ptrdiff_t n2, ptrdiff_t y0, ptrdiff_t x0)
{
#pragma unroll
    for (int k = 0; k < (RY * (RX / V) + THREADS - 1) / THREADS; ++k) {
        const int e = threadIdx.x + k * THREADS;
        if (e >= RY * (RX / V))
            break;
        const int r = e / (RX / V), c = e % (RX / V) * V;
        const ptrdiff_t y = y0 + r, x = x0 + c;
        const bool on = plane != NULL && y >= 0 && y < n1 && x >= 0 && x < n2;
        stencil_copy_async<V>(&slot[r * LD + c], on ? &plane[y * n2 + x] : any, on);
    }
    stencil_copies_commit();
}

// Warp 0 waits until the step-1 tiles in rows ty - 1 .. ty + 1 and columns
// tx - 1 .. tx + 1 (circularly: a cache line can hold a row's end and the next
// row's start) have stored every plane below `need`; returns the minimum seen.
__device__ __forceinline__ int poll(const int *progress, Tiles t, int tx, int ty, int need)
{
    const int lo = ty > 0 ? ty - 1 : 0, hi = ty + 1 < t.ty ? ty + 1 : t.ty - 1;
    const int w = t.tx < 3 ? t.tx : 3, count = (hi - lo + 1) * w, lane = threadIdx.x & 31;
    for (;;) {
        int m = 0x7fffffff;
        for (int k = lane; k < count; k += 32) {
            const int x = w == t.tx ? k % w : (tx - 1 + k % w + t.tx) % t.tx;
            m = min(m, ld_relaxed(&progress[(lo + k / w) * t.tx + x]));
        }
        m = __reduce_min_sync(0xffffffffu, m);
        if (m >= need) {
            asm volatile("fence.acq_rel.gpu;" ::: "memory");
            return m;
        }
        __nanosleep(SLEEP);
    }
}

template <int V, int STEP>
__device__ __forceinline__ void march(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, double *out, const double *prev_u, const double *cur_u,
                                      const double *cur_vel, int *progress, Tiles t, int tile_x, int tile_y, bool lagged)
{
    __shared__ int slots[2];
    double *const ring = stencil_ring();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t4 = lane & 3;
    const ptrdiff_t oy = 4 + (ptrdiff_t)tile_y * TY, ox = 4 + (ptrdiff_t)tile_x * TX;
    const ptrdiff_t y0 = oy - 4, x0 = ox - 4;
    const int by = warp / 4 * 8, bx = warp % 4 * 8;
    const ptrdiff_t iy = oy + by + g, ix = ox + bx + 2 * t4;
    const bool mine0 = iy < n1 - 4 && ix < n2 - 4, mine1 = iy < n1 - 4 && ix + 1 < n2 - 4;
    const ptrdiff_t zo = 4, zend = n0 - 4, zlo = 0, zhi = n0, s0 = n1 * n2;
    const int me = (STEP - 1) * t.tx * t.ty + tile_y * t.tx + tile_x; // this item's counter; step 2's below: me + tiles - tx
    int avail = 0;
    // Each lane's elements of the 4 bands along y and x, in shared memory (read
    // each plane) rather than 16 registers: the body is at 128 without them.
    __shared__ double bands[8][32];
    if (warp == 0) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            bands[k][lane] = stencils_cuda__acoustic25__update_u_cy(4 * k + t4 - 4 - g);
            bands[4 + k][lane] = stencils_cuda__acoustic25__update_u_cx(4 * k + t4 - 4 - g);
        }
    }
    double w0[9], w1[9];
#pragma unroll
    for (int m = 0; m < 9; ++m)
        w0[m] = w1[m] = 0.0;
    double2 next_cells_prev_u = make_double2(0.0, 0.0), next_cells_cur_vel = make_double2(0.0, 0.0);
    int at_p = 0, at_q = 6, at_ahead = 4;
    // Planes 0 .. 3: the boundary, never stored in this launch.
#pragma unroll
    for (int i = 0; i < 4; ++i)
        copy_plane<V>(ring + i * SLOT, (zlo + i) < zhi ? cur_u + (zlo + i) * s0 : NULL, cur_u, n1, n2, y0, x0);
    for (ptrdiff_t p0 = zlo; p0 < zhi; p0 += 9) {
#pragma unroll
        for (int ph = 0; ph < 9; ++ph) {
            const ptrdiff_t p = p0 + ph;
            if (p >= zhi)
                break;
            const ptrdiff_t q = p - 4, c = q * s0 + iy * n2 + ix;
            // Step 2 copies plane p + 4 after the barrier: warp 0 makes sure it is stored.
            const int need = STEP == 2 && p + 4 >= zo && p + 4 < zend ? (int)(p + 5) : 0;
            const bool polled = need > avail;
            if (polled && warp == 0) {
                const int m = poll(progress, t, tile_x, tile_y, need);
                if (lane == 0)
                    slots[p & 1] = m;
            }
            const bool on0 = q + 1 >= zo && q + 1 < zend && mine0, on1 = q + 1 >= zo && q + 1 < zend && mine1;
            const double2 cells_prev_u = next_cells_prev_u;
            next_cells_prev_u = stencil_load_pair<V>(prev_u + c + s0, on0, on1);
            const double2 cells_cur_vel = next_cells_cur_vel;
            next_cells_cur_vel = stencil_load_pair<V>(cur_vel + c + s0, on0, on1);
            stencil_copies_wait<3>(); /* plane p has arrived */
            __syncthreads();
            if (polled)
                avail = slots[p & 1]; // rewritten two barriers later at the earliest
            // Every thread has stored plane q - 1: publish every PUB planes; step 1
            // then keeps within LAG planes of step 2's item below.
            if (threadIdx.x == 0 && q > zo && q < zend && (q - zo) % PUB == 0) {
                st_release(&progress[me], (int)q);
                if (STEP == 1 && LAG > 0 && lagged && tile_y > 0)
                    while (ld_relaxed(&progress[me + t.tx * t.ty - t.tx]) < q - LAG)
                        __nanosleep(SLEEP);
            }
            copy_plane<V>(ring + at_ahead * SLOT, (p + 4) < zhi ? cur_u + (p + 4) * s0 : NULL, cur_u, n1, n2, y0, x0);
            const double *const now = ring + at_p * SLOT + (4 + by + g) * LD + 4 + bx + 2 * t4;
            const double2 fresh = stencil_load_pair<V>(now, true, true);
            w0[(ph + 8) % 9] = fresh.x;
            w1[(ph + 8) % 9] = fresh.y;
            if (q >= zo && q < zend) {
                const double *const at = ring + at_q * SLOT;
                double sx0 = 0.0, sx1 = 0.0, sy0 = 0.0, sy1 = 0.0;
                stencil_dmma(sx0, sx1, at[(4 + by + g) * LD + bx + 0 + t4], bands[4][lane]);
                stencil_dmma(sx0, sx1, at[(4 + by + g) * LD + bx + 4 + t4], bands[5][lane]);
                stencil_dmma(sx0, sx1, at[(4 + by + g) * LD + bx + 8 + t4], bands[6][lane]);
                stencil_dmma(sx0, sx1, at[(4 + by + g) * LD + bx + 12 + t4], bands[7][lane]);
                stencil_dmma(sy0, sy1, bands[0][lane], at[(by + 0 + t4) * LD + 4 + bx + g]);
                stencil_dmma(sy0, sy1, bands[1][lane], at[(by + 4 + t4) * LD + 4 + bx + g]);
                stencil_dmma(sy0, sy1, bands[2][lane], at[(by + 8 + t4) * LD + 4 + bx + g]);
                stencil_dmma(sy0, sy1, bands[3][lane], at[(by + 12 + t4) * LD + 4 + bx + g]);
                const double in0 = sx0 + sy0, in1 = sx1 + sy1;
                // The generated expression, term for term.
                const double r0 = 2.0 * w0[(ph + 4) % 9] - cells_prev_u.x + 0.01 * cells_cur_vel.x * cells_cur_vel.x * (3.0 * -2.847222222 * w0[(ph + 4) % 9] + (in0 + 1.6 * w0[(ph + 3) % 9] + 1.6 * w0[(ph + 5) % 9] + -0.2 * w0[(ph + 2) % 9] + -0.2 * w0[(ph + 6) % 9] + 0.025396825 * w0[(ph + 1) % 9] + 0.025396825 * w0[(ph + 7) % 9] + -0.001785714 * w0[(ph + 0) % 9] + -0.001785714 * w0[(ph + 8) % 9]));
                const double r1 = 2.0 * w1[(ph + 4) % 9] - cells_prev_u.y + 0.01 * cells_cur_vel.y * cells_cur_vel.y * (3.0 * -2.847222222 * w1[(ph + 4) % 9] + (in1 + 1.6 * w1[(ph + 3) % 9] + 1.6 * w1[(ph + 5) % 9] + -0.2 * w1[(ph + 2) % 9] + -0.2 * w1[(ph + 6) % 9] + 0.025396825 * w1[(ph + 1) % 9] + 0.025396825 * w1[(ph + 7) % 9] + -0.001785714 * w1[(ph + 0) % 9] + -0.001785714 * w1[(ph + 8) % 9]));
                if (V == 2 && mine0)
                    *(double2 *)&out[c] = make_double2(r0, r1);
                if (V == 1 && mine0)
                    out[c] = r0;
                if (V == 1 && mine1)
                    out[c + 1] = r1;
            }
            at_p = at_p + 1 == 10 ? 0 : at_p + 1;
            at_q = at_q + 1 == 10 ? 0 : at_q + 1;
            at_ahead = at_ahead + 1 == 10 ? 0 : at_ahead + 1;
        }
    }
    __syncthreads();
    if (threadIdx.x == 0)
        st_release(&progress[me], (int)zend);
}

template <int V>
__global__ void __launch_bounds__(THREADS, 2) fused2(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, double *a, const double *b, double *c,
                                                     const double *vel, int *ticket, int *progress, Tiles t, int base, int row0, bool single)
{
    __shared__ int item;
    if (threadIdx.x == 0)
        item = atomicAdd(ticket, 1) - base;
    __syncthreads();
    if (single) { // one step, every item a step-1 item (the body's cost against `tensor`)
        march<V, 1>(n0, n1, n2, c, a, b, vel, progress, t, item % t.tx, item / t.tx, false);
        return;
    }
    const int r = row0 + item / (2 * t.tx), k = item % (2 * t.tx);
    if (k < t.tx) {
        if (r < t.ty) // u_{k+1} = step(prev a, cur b) into c
            march<V, 1>(n0, n1, n2, c, a, b, vel, progress, t, k, r, true);
    } else if (r >= 1 && r - 1 < t.ty) { // u_{k+2} = step(prev b, cur c) into a
        march<V, 2>(n0, n1, n2, a, b, c, vel, progress, t, k - t.tx, r - 1, true);
    }
}

inline Tiles tiles(ptrdiff_t n1, ptrdiff_t n2)
{
    return Tiles{(int)((n2 - 8 + TX - 1) / TX), (int)((n1 - 8 + TY - 1) / TY)};
}

inline size_t counters_needed(ptrdiff_t n1, ptrdiff_t n2)
{
    return counters::counters_needed(tiles(n1, n2));
}

typedef void (*Kernel)(ptrdiff_t, ptrdiff_t, ptrdiff_t, double *, const double *, double *, const double *, int *, int *, Tiles, int, int, bool);

// The kernel for these grids (pairs of cells where rows hold whole pairs and every grid is aligned),
// allowed its shared memory, and the counters zeroed.
inline cudaError_t prepare(ptrdiff_t n1, ptrdiff_t n2, const double *a, const double *b, const double *c, const double *vel, int *counters, Kernel &kernel)
{
    const bool pairs = n2 % 2 == 0 && (size_t)a % 16 == 0 && (size_t)b % 16 == 0 && (size_t)c % 16 == 0 && (size_t)vel % 16 == 0;
    kernel = pairs ? fused2<2> : fused2<1>;
    const cudaError_t e = cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED);
    if (e == cudaSuccess)
        cudaMemsetAsync(counters, 0, sizeof(int) * counters_needed(n1, n2));
    return e;
}

// Two steps: c = step(a, b), then a = step(b, c).
inline cudaError_t launch2(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, double *a, const double *b, double *c, const double *vel, int *counters)
{
    Kernel kernel;
    const cudaError_t e = prepare(n1, n2, a, b, c, vel, counters, kernel);
    if (e != cudaSuccess)
        return e;
    const Tiles t = tiles(n1, n2);
    counters::in_bands(t, BAND, [&](int items, int base, int row0) {
        kernel<<<items, THREADS, SHARED>>>(n0, n1, n2, a, b, c, vel, counters, counters + 1, t, base, row0, false);
    });
    return cudaGetLastError();
}

// One step through the same body: c = step(a, b).
inline cudaError_t launch1(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, const double *a, const double *b, double *c, const double *vel, int *counters)
{
    Kernel kernel;
    const cudaError_t e = prepare(n1, n2, a, b, c, vel, counters, kernel);
    if (e != cudaSuccess)
        return e;
    const Tiles t = tiles(n1, n2);
    kernel<<<t.tx * t.ty, THREADS, SHARED>>>(n0, n1, n2, (double *)a, b, c, vel, counters, counters + 1, t, 0, 0, true);
    return cudaGetLastError();
}

} // namespace tdf
