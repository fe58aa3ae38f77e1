// Prototype: star3d25 with T fused steps on thread-block clusters (sm_90).
// The cluster's blocks share the overlap of their tiles through distributed
// shared memory, so the recomputed halo is the cluster tile's, not each block's.
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
namespace cg = cooperative_groups;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

extern "C" int g_st_f32__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, float *, const float *);
extern "C" int g_st_f64__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, double *, const double *);
extern "C" int g_t1_f32__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, float *, const float *, int);
extern "C" int g_t1_f64__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, double *, const double *, int);
extern "C" int g_t2_f32__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, float *, const float *, int);
extern "C" int g_t2_f64__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, double *, const double *, int);

extern "C" int g_sc4_f32__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, float *, const float *);
extern "C" int g_sc4_f64__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, double *, const double *);
extern "C" int g_ss4_f32__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, float *, const float *);
extern "C" int g_ss4_f64__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, double *, const double *);
extern "C" int g_ss2w_f32__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, float *, const float *);
extern "C" int g_ss2w_f64__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, double *, const double *);
extern "C" int g_sv4_f32__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, float *, const float *);
extern "C" int g_sv4_f64__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, double *, const double *);
extern "C" int g_sq4_f32__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, float *, const float *);
extern "C" int g_sq4_f64__update_u(ptrdiff_t, ptrdiff_t, ptrdiff_t, double *, const double *);

template <typename R>
__device__ __forceinline__ R upd(R c, R a1, R a2, R a3, R a4)
{
    return c + R(0.05) * (R(3.0) * R(-2.847222222) * c + (R(1.6) * a1 + R(-0.2) * a2 + R(0.025396825) * a3 + R(-0.001785714) * a4));
}

template <typename R>
__global__ void naive(int n0, int n1, int n2, R *__restrict__ out, const R *__restrict__ in)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
    if (x < 4 || x >= n2 - 4 || y < 4 || y >= n1 - 4 || z < 4 || z >= n0 - 4) return;
    const long s0 = (long)n1 * n2, s1 = n2, c = z * s0 + y * s1 + x;
    R a[5];
#pragma unroll
    for (int k = 1; k <= 4; ++k)
        a[k] = in[c - k * s0] + in[c + k * s0] + in[c - k * s1] + in[c + k * s1] + in[c - k] + in[c + k];
    out[c] = upd(in[c], a[1], a[2], a[3], a[4]);
}

constexpr int RAD = 4, RW = 4, BX = 32, BY = 32, P = 40, ZC = 128;

// One block: 32 x 8 threads, 4 rows each: a 32 x 32 part of the cluster's tile.
template <typename R, int T, int CX, int CY, bool SKIP, bool SPLIT>
__global__ void __cluster_dims__(CX, CY, 1) __launch_bounds__(256)
    clus(int n0, int n1, int n2, R *__restrict__ out, const R *__restrict__ in, int levels)
{
    constexpr int H = T * RAD, TX = CX * BX, TY = CY * BY, SX = TX - 2 * H, SY = TY - 2 * H;
    cg::cluster_group cl = cg::this_cluster();
    const dim3 bi = cl.block_index();
    const int s0 = n1 * n2, s1 = n2;
    const int cx = blockIdx.x / CX, cy = blockIdx.y / CY;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int xt = bi.x * BX + tx, yt0 = bi.y * BY + ty * RW;
    const int i2 = RAD + cx * SX - H + xt, i1 = RAD + cy * SY - H + yt0;
    const int z0 = RAD + blockIdx.z * ZC, z1 = min(z0 + ZC, n0 - RAD);
    const bool grid_x = i2 >= 0 && i2 < n2, in_x = i2 >= RAD && i2 < n2 - RAD;
    const bool own_x = in_x && xt >= H && xt < TX - H;
    bool grid_y[RW], in_y[RW], own_y[RW];
#pragma unroll
    for (int j = 0; j < RW; ++j) {
        const int c = i1 + j;
        grid_y[j] = c >= 0 && c < n1;
        in_y[j] = c >= RAD && c < n1 - RAD;
        own_y[j] = in_y[j] && yt0 + j >= H && yt0 + j < TY - H;
    }
    extern __shared__ __align__(16) unsigned char shared[];
    R(*const ring)[2][P][P] = (R(*)[2][P][P])shared;
    const int tid = ty * 32 + tx;
    for (int e = tid; e < T * 2 * P * P; e += 256)
        (&ring[0][0][0][0])[e] = 0;
    // Neighbours' ranks (-1: none in this cluster).
    const int rl = bi.x > 0 ? (int)cl.block_rank() - 1 : -1;
    const int rr = bi.x + 1 < CX ? (int)cl.block_rank() + 1 : -1;
    const int ru = bi.y > 0 ? (int)cl.block_rank() - CX : -1;
    const int rd = bi.y + 1 < CY ? (int)cl.block_rank() + CX : -1;
    if (SPLIT)
        asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    else
        cl.sync();
    R win[T][9][RW];
#pragma unroll
    for (int s = 0; s < T; ++s)
#pragma unroll
        for (int m = 0; m < 9; ++m)
#pragma unroll
            for (int j = 0; j < RW; ++j)
                win[s][m][j] = 0;
    R ahead[RW];
    {
        const int z = z0 - H;
        const bool on = z >= 0 && z < n0;
#pragma unroll
        for (int j = 0; j < RW; ++j)
            ahead[j] = on && grid_y[j] && grid_x ? in[z * s0 + (i1 + j) * s1 + i2] : R(0);
    }
    for (int p = z0 - H; p < z1 + (RAD + 1) * T; ++p) {
        R cell[RW];
#pragma unroll
        for (int j = 0; j < RW; ++j)
            cell[j] = ahead[j];
        {
            const int z = p + 1;
            const bool on = z >= 0 && z < n0;
#pragma unroll
            for (int j = 0; j < RW; ++j)
                ahead[j] = on && grid_y[j] && grid_x ? in[z * s0 + (i1 + j) * s1 + i2] : R(0);
        }
        // The halos of the planes read in this iteration, from the neighbours' rings.
        if (SPLIT)
            asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
        if (CX * CY > 1) {
#pragma unroll
        for (int l = 0; l < T; ++l) {
            const int slot = (p - (RAD + 1) * (l + 1)) & 1;
            R(*const own)[P] = ring[l][slot];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int e = tid + h * 256, side = e >> 7, k = e & 127;
                if (side == 0 && rl >= 0) {
                    const R(*rem)[P] = (const R(*)[P])cl.map_shared_rank(&own[0][0], rl);
                    own[4 + (k >> 2)][k & 3] = rem[4 + (k >> 2)][32 + (k & 3)];
                } else if (side == 1 && rr >= 0) {
                    const R(*rem)[P] = (const R(*)[P])cl.map_shared_rank(&own[0][0], rr);
                    own[4 + (k >> 2)][36 + (k & 3)] = rem[4 + (k >> 2)][4 + (k & 3)];
                } else if (side == 2 && ru >= 0) {
                    const R(*rem)[P] = (const R(*)[P])cl.map_shared_rank(&own[0][0], ru);
                    own[k >> 5][4 + (k & 31)] = rem[32 + (k >> 5)][4 + (k & 31)];
                } else if (side == 3 && rd >= 0) {
                    const R(*rem)[P] = (const R(*)[P])cl.map_shared_rank(&own[0][0], rd);
                    own[36 + (k >> 5)][4 + (k & 31)] = rem[4 + (k >> 5)][4 + (k & 31)];
                }
            }
        }
        __syncthreads();
        }
#pragma unroll
        for (int s = T; s >= 1; --s) {
            const int q = p - (RAD + 1) * s;
            const bool step = s <= levels && q >= RAD && q < n0 - RAD;
            const bool needed = !SKIP || yt0 + RW > RAD * s && yt0 < TY - RAD * s;
            R(*const rg)[P] = ring[s - 1][q & 1];
            R next[RW];
#pragma unroll
            for (int j = 0; j < RW; ++j) {
                R v = win[s - 1][4][j];
                if (needed && step && in_y[j] && in_x) {
                    R a[5];
#pragma unroll
                    for (int k = 1; k <= 4; ++k) {
                        const R up = j - k >= 0 ? win[s - 1][4][j - k] : rg[4 + ty * RW + j - k][4 + tx];
                        const R dn = j + k < RW ? win[s - 1][4][j + k] : rg[4 + ty * RW + j + k][4 + tx];
                        a[k] = win[s - 1][4 - k][j] + win[s - 1][4 + k][j] + up + dn + rg[4 + ty * RW + j][4 + tx - k] + rg[4 + ty * RW + j][4 + tx + k];
                    }
                    v = upd(v, a[1], a[2], a[3], a[4]);
                }
                next[j] = v;
            }
            if (s == T) {
                if (q >= z0 && q < z1)
#pragma unroll
                    for (int j = 0; j < RW; ++j)
                        if (own_y[j] && own_x)
                            out[q * s0 + (i1 + j) * s1 + i2] = next[j];
            } else {
#pragma unroll
                for (int j = 0; j < RW; ++j) {
#pragma unroll
                    for (int m = 0; m < 8; ++m)
                        win[s][m][j] = win[s][m + 1][j];
                    win[s][8][j] = next[j];
                }
#pragma unroll
                for (int j = 0; j < RW; ++j)
                    ring[s][(q - 4) & 1][4 + ty * RW + j][4 + tx] = win[s][4][j];
            }
        }
#pragma unroll
        for (int j = 0; j < RW; ++j) {
#pragma unroll
            for (int m = 0; m < 8; ++m)
                win[0][m][j] = win[0][m + 1][j];
            win[0][8][j] = cell[j];
        }
#pragma unroll
        for (int j = 0; j < RW; ++j)
            ring[0][(p - 4) & 1][4 + ty * RW + j][4 + tx] = win[0][4][j];
        if (SPLIT)
            asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
        else if (CX * CY > 1)
            cl.sync();
        else
            __syncthreads();
    }
    if (SPLIT)
        asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    else if (CX * CY > 1)
        cl.sync();
}

template <typename R, int T, int CX, int CY, bool SKIP = true, bool SPLIT = false>
int launch_clus(int n, R *out, const R *in, int levels)
{
    constexpr int H = T * RAD, SX = CX * BX - 2 * H, SY = CY * BY - 2 * H;
    const int smem = T * 2 * P * P * sizeof(R);
    static bool set = false;
    if (!set) {
        CK(cudaFuncSetAttribute(clus<R, T, CX, CY, SKIP, SPLIT>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        set = true;
    }
    dim3 grid(CX * ((n - 8 + SX - 1) / SX), CY * ((n - 8 + SY - 1) / SY), (n - 8 + ZC - 1) / ZC);
    clus<R, T, CX, CY, SKIP, SPLIT><<<grid, dim3(32, 8), smem>>>(n, n, n, out, in, levels);
    return (int)cudaGetLastError();
}

template <typename R>
__global__ void init(R *a, long total, unsigned seed)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
        a[i] = R(h & 0xffffff) / R(0x1000000);
    }
}

template <typename R>
struct Method {
    const char *name;
    int t;                                          // steps per launch
    int (*launch)(int, R *, const R *, int);        // n, out, in, levels
};

template <typename R>
double run(const Method<R> &m, int n, R *a, R *b, const R *init0, int steps)
{
    const size_t bytes = (size_t)n * n * n * sizeof(R);
    CK(cudaMemcpy(a, init0, bytes, cudaMemcpyDeviceToDevice));
    CK(cudaMemcpy(b, init0, bytes, cudaMemcpyDeviceToDevice));
    R *cur = a, *nxt = b;
    for (int left = steps; left > 0; left -= m.t) {
        const int lv = std::min(left, m.t);
        int e = m.launch(n, nxt, cur, lv);
        if (e) { printf("%s: launch error %s\n", m.name, cudaGetErrorString((cudaError_t)e)); exit(1); }
        std::swap(cur, nxt);
    }
    CK(cudaDeviceSynchronize());
    return 0;
}

template <typename R>
void bench(const char *dt, int n, std::vector<Method<R>> ms, double bw)
{
    const long total = (long)n * n * n;
    const size_t bytes = total * sizeof(R);
    R *a, *b, *i0, *ref;
    CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes)); CK(cudaMalloc(&i0, bytes)); CK(cudaMalloc(&ref, bytes));
    init<<<1024, 256>>>(i0, total, 12345u);
    CK(cudaDeviceSynchronize());
    std::vector<R> href(total), hgot(total);
    // Reference: naive, `check` steps.
    const int check = 6;
    run(ms[0], n, a, b, i0, check);
    CK(cudaMemcpy(href.data(), (check % 2) ? b : a, bytes, cudaMemcpyDeviceToHost));
    double bound = bw / (2.0 * sizeof(R)) / 1e9;
    for (auto &m : ms) {
        // Check: `check` steps against the naive kernel (ping-pong ends in a or b).
        run(m, n, a, b, i0, check);
        const int launches = (check + m.t - 1) / m.t;
        CK(cudaMemcpy(hgot.data(), (launches % 2) ? b : a, bytes, cudaMemcpyDeviceToHost));
        double err = 0, mx = 0;
        long bad = -1;
        for (long i = 0; i < total; ++i) {
            double d = std::fabs((double)hgot[i] - (double)href[i]);
            if (d > err) { err = d; bad = i; }
            mx = std::max(mx, std::fabs((double)href[i]));
        }
        // Timing: 24 steps, median of 5.
        const int steps = 24;
        std::vector<float> ts;
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
        run(m, n, a, b, i0, m.t * 2);
        for (int rep = 0; rep < 5; ++rep) {
            R *cur = a, *nxt = b;
            CK(cudaEventRecord(e0));
            for (int left = steps; left > 0; left -= m.t) {
                m.launch(n, nxt, cur, std::min(left, m.t));
                std::swap(cur, nxt);
            }
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms_;
            CK(cudaEventElapsedTime(&ms_, e0, e1));
            ts.push_back(ms_);
        }
        CK(cudaGetLastError());
        std::sort(ts.begin(), ts.end());
        const double g = (double)total * steps / (ts[2] * 1e-3) / 1e9;
        printf("%s %-28s t=%d  %8.1f GCells/s  %5.1f%% of bound %.1f   max err %.3g (of %.3g) at %ld\n", dt, m.name, m.t, g, 100 * g / bound, bound, err, mx, bad);
        fflush(stdout);
    }
    CK(cudaFree(a)); CK(cudaFree(b)); CK(cudaFree(i0)); CK(cudaFree(ref));
}

template <typename R>
int naive_launch(int n, R *out, const R *in, int)
{
    naive<R><<<dim3((n + 31) / 32, (n + 7) / 8, n), dim3(32, 8)>>>(n, n, n, out, in);
    return (int)cudaGetLastError();
}
#define GEN(name, R) [](int n, R *o, const R *i, int) { return name(n, n, n, o, i); }
#define GENT(name, R) [](int n, R *o, const R *i, int l) { return name(n, n, n, o, i, l); }

int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 512;
    const bool f64only = argc > 2 && !strcmp(argv[2], "f64"), f32only = argc > 2 && !strcmp(argv[2], "f32");
    // Bandwidth: device-to-device copy of 1 GiB.
    double bw;
    {
        size_t bytes = 1ull << 30;
        void *x, *y;
        CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&y, bytes));
        CK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
        std::vector<float> ts;
        for (int r = 0; r < 7; ++r) {
            CK(cudaEventRecord(e0));
            CK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice));
            CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
            float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); ts.push_back(ms);
        }
        std::sort(ts.begin(), ts.end());
        bw = 2.0 * bytes / (ts[3] * 1e-3);
        printf("n=%d bandwidth %.0f GB/s\n", n, bw / 1e9);
        CK(cudaFree(x)); CK(cudaFree(y));
    }
    if (!f64only)
        bench<float>("f32", n, {
            {"naive", 1, naive_launch<float>},
            {"generated stream", 1, GEN(g_st_f32__update_u, float)},
            {"generated stream c4", 1, GEN(g_sc4_f32__update_u, float)},
            {"generated stream s4", 1, GEN(g_ss4_f32__update_u, float)},
            {"generated stream s2_w", 1, GEN(g_ss2w_f32__update_u, float)},
            {"generated stream s4_v2", 1, GEN(g_sv4_f32__update_u, float)},
            {"generated stream q4_v2", 1, GEN(g_sq4_f32__update_u, float)},
            {"generated temporal t1", 1, GENT(g_t1_f32__update_u, float)},
            {"generated temporal t2", 2, GENT(g_t2_f32__update_u, float)},
            {"1x1 t1 noskip", 1, launch_clus<float, 1, 1, 1, false>},
            {"1x1 t1 skip", 1, launch_clus<float, 1, 1, 1, true>},
            {"1x1 t2 noskip", 2, launch_clus<float, 2, 1, 1, false>},
            {"1x1 t2 skip", 2, launch_clus<float, 2, 1, 1, true>},
            {"cluster 2x2 t2", 2, launch_clus<float, 2, 2, 2>},
            {"cluster 4x2 t2", 2, launch_clus<float, 2, 4, 2>},
            {"cluster 4x2 t2 split", 2, launch_clus<float, 2, 4, 2, true, true>},
            {"cluster 2x4 t2 split", 2, launch_clus<float, 2, 2, 4, true, true>},
            {"cluster 4x2 t1 split", 1, launch_clus<float, 1, 4, 2, true, true>},
        }, bw);
    if (!f32only)
        bench<double>("f64", n, {
            {"naive", 1, naive_launch<double>},
            {"generated stream", 1, GEN(g_st_f64__update_u, double)},
            {"generated stream c4", 1, GEN(g_sc4_f64__update_u, double)},
            {"generated stream s4", 1, GEN(g_ss4_f64__update_u, double)},
            {"generated stream s2_w", 1, GEN(g_ss2w_f64__update_u, double)},
            {"generated stream s4_v2", 1, GEN(g_sv4_f64__update_u, double)},
            {"generated stream q4_v2", 1, GEN(g_sq4_f64__update_u, double)},
            {"generated temporal t1", 1, GENT(g_t1_f64__update_u, double)},
            {"generated temporal t2", 2, GENT(g_t2_f64__update_u, double)},
            {"1x1 t1 noskip", 1, launch_clus<double, 1, 1, 1, false>},
            {"1x1 t1 skip", 1, launch_clus<double, 1, 1, 1, true>},
            {"1x1 t2 noskip", 2, launch_clus<double, 2, 1, 1, false>},
            {"1x1 t2 skip", 2, launch_clus<double, 2, 1, 1, true>},
            {"cluster 2x2 t2", 2, launch_clus<double, 2, 2, 2>},
            {"cluster 4x2 t2", 2, launch_clus<double, 2, 4, 2>},
            {"cluster 4x2 t2 split", 2, launch_clus<double, 2, 4, 2, true, true>},
            {"cluster 2x4 t2 split", 2, launch_clus<double, 2, 2, 4, true, true>},
            {"cluster 4x2 t1 split", 1, launch_clus<double, 1, 4, 2, true, true>},
        }, bw);
    return 0;
}
