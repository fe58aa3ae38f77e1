// Issue 6 experiment: what the generated `temporal` kernels lose to index
// arithmetic and per-level predicates. The kernels below are the generated
// ones (j2d5pt, j3d7pt at 184029c) in three variants:
//   0: as generated: 64-bit indices, every level checks `levels` and the grid;
//   1: 32-bit indices;
//   2: 32-bit indices, and tiles (2-D: warps; 3-D: blocks) wholly inside the
//      region run a copy of the loop without the checks (`levels` == TB);
//   3: 2 with at most 128 registers (4 blocks of 128 threads per SM; 2-D).
// Each variant is checked bit for bit against variant 0 on an odd grid, then
// timed: 100 steps, median of 5, CUDA events, bound measured in the same run.
// Written on 2026-11-23 from the SASS comparison in BENCHMARKS.md (issue 6);
// the split kernels take more registers (2-D f32 t10: 149 against 108),
// hence variant 3. Run on the H100 on 2026-11-23 (session 5; BENCHMARKS.md):
// variants 1 and 2 went into the generator for 2-D, variant 1 for 3-D. The
// 3-D variant 2 here differs from variant 0 (its `inside` test is wrong) and
// was no faster than 1, so it was left out.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o interior interior.cu && ./interior
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

// ---------------------------------------------------------------- 2-D j2d5pt
template <typename T, typename I, int V, int TB, int CH, bool SKEW, bool EDGE>
__device__ __forceinline__ void tile2(const I n0, const I n1, T* __restrict__ out, const T* __restrict__ cur_u,
                                      int levels, int lane, I tile, I z0, I z1) {
    constexpr int LAG = SKEW ? 2 : 1;
    constexpr int MARGIN = TB;
    const I s0 = n1;
    const I i1 = 1 + tile - MARGIN + lane * V;
    bool grid_x[V], in_x[V], own_x[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const I c = i1 + k;
        grid_x[k] = !EDGE || (c >= 0 && c < n1);
        in_x[k] = !EDGE || (c >= 1 && c < n1 - 1);
        own_x[k] = in_x[k] && lane * V + k >= MARGIN && lane * V + k < 32 * V - MARGIN;
    }
    T win[TB][3][V] = {};
    for (I p = z0 - TB; p < z1 + TB * LAG; ++p) {
        T plane[V];
        const bool on_grid = !EDGE || (p >= 0 && p < n0);
#pragma unroll
        for (int k = 0; k < V; ++k) plane[k] = on_grid && grid_x[k] ? cur_u[p * s0 + i1 + k] : T(0);
        if (!SKEW) {
#pragma unroll
            for (int k = 0; k < V; ++k) { win[0][0][k] = win[0][1][k]; win[0][1][k] = win[0][2][k]; win[0][2][k] = plane[k]; }
        }
#pragma unroll
        for (int ss = 1; ss <= TB; ++ss) {
            const int s = SKEW ? TB + 1 - ss : ss;
            const I q = p - LAG * s;
            const bool step = !EDGE || (s <= levels && q >= 1 && q < n0 - 1);
            T nb0[V + 2], nb1[V + 2], nb2[V + 2];
#pragma unroll
            for (int k = 0; k < V; ++k) { nb0[k + 1] = win[s - 1][0][k]; nb1[k + 1] = win[s - 1][1][k]; nb2[k + 1] = win[s - 1][2][k]; }
            nb1[0] = __shfl_up_sync(0xffffffffu, win[s - 1][1][V - 1], 1, 32);
            nb1[V + 1] = __shfl_down_sync(0xffffffffu, win[s - 1][1][0], 1, 32);
            T next[V];
#pragma unroll
            for (int k = 0; k < V; ++k) {
                T v = win[s - 1][1][k];
                if (step && in_x[k])
                    v = (T(5.1) * nb0[k + 1] + T(12.1) * nb1[k] + T(15.0) * nb1[k + 1] + T(12.2) * nb1[k + 2] + T(5.2) * nb2[k + 1]) * T(0.00847457627118644);
                next[k] = v;
            }
            if (s == TB) {
                if (q >= z0 && q < z1) {
#pragma unroll
                    for (int k = 0; k < V; ++k)
                        if (own_x[k]) out[q * s0 + i1 + k] = next[k];
                }
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k) { win[s][0][k] = win[s][1][k]; win[s][1][k] = win[s][2][k]; win[s][2][k] = next[k]; }
            }
        }
        if (SKEW) {
#pragma unroll
            for (int k = 0; k < V; ++k) { win[0][0][k] = win[0][1][k]; win[0][1][k] = win[0][2][k]; win[0][2][k] = plane[k]; }
        }
    }
}

template <typename T, typename I, int V, int TB, int CH, bool SKEW, bool SPLIT, int MINB>
__global__ void __launch_bounds__(128, MINB) k2(const I n0, const I n1, T* __restrict__ out, const T* __restrict__ cur_u, int levels) {
    constexpr int LAG = SKEW ? 2 : 1;
    const int lane = threadIdx.x % 32;
    const I tile = ((I)blockIdx.x * 4 + threadIdx.x / 32) * (32 * V - 2 * TB);
    if (1 + tile >= n1 - 1) return;
    const I z0 = 1 + (I)blockIdx.y * CH;
    const I z1 = z0 + CH < n0 - 1 ? z0 + CH : n0 - 1;
    if (SPLIT) {
        // Every row any level computes, and every column of the warp, inside the region.
        const bool inside = levels == TB && z0 - TB * LAG >= 1 && z1 + TB * LAG <= n0 - 1 && tile - TB >= 0 &&
                            1 + tile - TB + 32 * V <= n1 - 1;
        if (inside) { tile2<T, I, V, TB, CH, SKEW, false>(n0, n1, out, cur_u, levels, lane, tile, z0, z1); return; }
    }
    tile2<T, I, V, TB, CH, SKEW, true>(n0, n1, out, cur_u, levels, lane, tile, z0, z1);
}

template <typename T, typename I, int V, int TB, int CH, bool SKEW, bool SPLIT, int MINB = 1>
void launch2(int n0, int n1, T* out, const T* in, int levels) {
    const int width = 32 * V - 2 * TB;
    dim3 grid((((n1 - 2) + width - 1) / width + 3) / 4, ((n0 - 2) + CH - 1) / CH);
    k2<T, I, V, TB, CH, SKEW, SPLIT, MINB><<<grid, 128>>>((I)n0, (I)n1, out, in, levels);
}

// ---------------------------------------------------------------- 3-D j3d7pt
template <typename T, typename I, int TB, bool EDGE>
__device__ __forceinline__ void tile3(const I n0, const I n1, const I n2, T* __restrict__ out, const T* __restrict__ cur_u,
                                      int levels, I i2, I i1, I z0, I z1, T (*ring)[2][34][34]) {
    constexpr int C = 4;
    const I s0 = n1 * n2, s1 = n2;
    const bool grid_x = !EDGE || (i2 >= 0 && i2 < n2), in_x = !EDGE || (i2 >= 1 && i2 < n2 - 1);
    const bool own_x = in_x && threadIdx.x >= TB && threadIdx.x < 32 - TB;
    bool grid_y[C], in_y[C], own_y[C];
#pragma unroll
    for (int j = 0; j < C; ++j) {
        const I c = i1 + j;
        grid_y[j] = !EDGE || (c >= 0 && c < n1);
        in_y[j] = !EDGE || (c >= 1 && c < n1 - 1);
        own_y[j] = in_y[j] && threadIdx.y * C + j >= TB && threadIdx.y * C + j < 32 - TB;
    }
    T win[TB][3][C] = {};
    int slot = (int)(((z0 - TB) % 2 + 2) % 2);
    T ahead[C];
    {
        const I z = z0 - TB;
        const bool on_grid = !EDGE || (z >= 0 && z < n0);
#pragma unroll
        for (int j = 0; j < C; ++j) ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : T(0);
    }
    for (I p = z0 - TB; p < z1 + 2 * TB; ++p) {
        T cell[C];
#pragma unroll
        for (int j = 0; j < C; ++j) cell[j] = ahead[j];
        {
            const I z = p + 1;
            const bool on_grid = !EDGE || (z >= 0 && z < n0);
#pragma unroll
            for (int j = 0; j < C; ++j) ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : T(0);
        }
#pragma unroll
        for (int s = TB; s >= 1; --s) {
            const I q = p - 2 * s;
            const bool step = !EDGE || (s <= levels && q >= 1 && q < n0 - 1);
            const int at0 = (slot + 10 - 2 * s) % 2;
            T next[C];
#pragma unroll
            for (int j = 0; j < C; ++j) {
                T v = win[s - 1][1][j];
                if (step && in_y[j] && in_x)
                    v = (T(0.4) * win[s - 1][0][j] + T(0.6) * ring[s - 1][at0][threadIdx.y * C + j][threadIdx.x + 1] +
                         T(0.8) * ring[s - 1][at0][threadIdx.y * C + j + 1][threadIdx.x] + T(1.0) * win[s - 1][1][j] +
                         T(0.8) * ring[s - 1][at0][threadIdx.y * C + j + 1][threadIdx.x + 2] +
                         T(0.6) * ring[s - 1][at0][threadIdx.y * C + j + 2][threadIdx.x + 1] + T(0.4) * win[s - 1][2][j]) *
                        T(0.21739130434782608);
                next[j] = v;
            }
            if (s == TB) {
                if (q >= z0 && q < z1) {
#pragma unroll
                    for (int j = 0; j < C; ++j)
                        if (own_y[j] && own_x) out[q * s0 + (i1 + j) * s1 + i2] = next[j];
                }
            } else {
#pragma unroll
                for (int j = 0; j < C; ++j) { win[s][0][j] = win[s][1][j]; win[s][1][j] = win[s][2][j]; win[s][2][j] = next[j]; }
#pragma unroll
                for (int j = 0; j < C; ++j) ring[s][(slot + 9 - 2 * s) % 2][threadIdx.y * C + j + 1][threadIdx.x + 1] = win[s][1][j];
            }
        }
#pragma unroll
        for (int j = 0; j < C; ++j) { win[0][0][j] = win[0][1][j]; win[0][1][j] = win[0][2][j]; win[0][2][j] = cell[j]; }
#pragma unroll
        for (int j = 0; j < C; ++j) ring[0][(slot + 9) % 2][threadIdx.y * C + j + 1][threadIdx.x + 1] = win[0][1][j];
        slot = slot + 1 == 2 ? 0 : slot + 1;
        __syncthreads();
    }
}

template <typename T, typename I, int TB, bool SPLIT>
__global__ void __launch_bounds__(256) k3(const I n0, const I n1, const I n2, T* __restrict__ out, const T* __restrict__ cur_u, int levels) {
    constexpr int W = 32 - 2 * TB;
    const I i2 = 1 + (I)blockIdx.x * W - TB + threadIdx.x;
    const I i1 = 1 + (I)blockIdx.y * W - TB + threadIdx.y * 4;
    const I z0 = 1 + (I)blockIdx.z * 128;
    const I z1 = z0 + 128 < n0 - 1 ? z0 + 128 : n0 - 1;
    extern __shared__ __align__(16) unsigned char shared[];
    T (*const ring)[2][34][34] = (T (*)[2][34][34])shared;
    for (int e = threadIdx.y * 32 + threadIdx.x; e < TB * 2 * 34 * 34; e += 256) (&ring[0][0][0][0])[e] = 0;
    __syncthreads();
    if (SPLIT) {
        const I x0 = 1 + (I)blockIdx.x * W - TB, y0 = 1 + (I)blockIdx.y * W - TB;
        const bool inside = levels == TB && z0 - 2 * TB >= 1 && z1 + 2 * TB + 1 <= n0 - 1 && x0 >= 1 && x0 + 32 <= n2 - 1 &&
                            y0 >= 1 && y0 + 32 <= n1 - 1;
        if (inside) { tile3<T, I, TB, false>(n0, n1, n2, out, cur_u, levels, i2, i1, z0, z1, ring); return; }
    }
    tile3<T, I, TB, true>(n0, n1, n2, out, cur_u, levels, i2, i1, z0, z1, ring);
}

template <typename T, typename I, int TB, bool SPLIT>
void launch3(int n0, int n1, int n2, T* out, const T* in, int levels) {
    constexpr int W = 32 - 2 * TB;
    const int shared = TB * 2 * 34 * 34 * sizeof(T);
    static bool once = false;
    if (!once) { CHECK(cudaFuncSetAttribute(k3<T, I, TB, SPLIT>, cudaFuncAttributeMaxDynamicSharedMemorySize, shared)); once = true; }
    dim3 grid(((n2 - 2) + W - 1) / W, ((n1 - 2) + W - 1) / W, ((n0 - 2) + 127) / 128);
    k3<T, I, TB, SPLIT><<<grid, dim3(32, 8), shared>>>((I)n0, (I)n1, (I)n2, out, in, levels);
}

// ---------------------------------------------------------------- harness
int g_n0, g_n1, g_n2;

template <typename T>
std::vector<T> pattern(size_t cells) {
    std::vector<T> u(cells);
    for (size_t c = 0; c < cells; ++c) u[c] = T(float((c * 7919) % 1000) / 1000.0f);
    return u;
}

// Runs `steps` steps, TB per launch and a remainder launch; returns seconds and the result buffer.
template <typename T, int TB, typename L>
double run(L launch, T* d0, T* d1, size_t cells, int steps, T** result) {
    T *src = d0, *dst = d1;
    CHECK(cudaMemcpy(dst, src, sizeof(T) * cells, cudaMemcpyDeviceToDevice));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
    CHECK(cudaEventRecord(a));
    for (int t = 0; t < steps; t += TB) {
        launch(dst, src, std::min(TB, steps - t));
        std::swap(src, dst);
    }
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaGetLastError());
    float ms; CHECK(cudaEventElapsedTime(&ms, a, b));
    *result = src;
    return ms / 1e3;
}

// Checks `launch` bit for bit against `base` on `small` (3 time blocks and a remainder), then times it on `big`.
template <typename T, int TB, typename L0, typename L>
void check_and_time(const char* what, L0 base, L launch, std::vector<int> small, std::vector<int> big, double single) {
    for (int pass = 0; pass < 2; ++pass) {
        auto shape = pass == 0 ? small : big;
        g_n0 = shape[0]; g_n1 = shape[1]; g_n2 = shape.size() > 2 ? shape[2] : 1;
        size_t cells = 1;
        for (auto n : shape) cells *= n;
        auto u = pattern<T>(cells);
        T *d0, *d1, *res;
        CHECK(cudaMalloc(&d0, sizeof(T) * cells)); CHECK(cudaMalloc(&d1, sizeof(T) * cells));
        CHECK(cudaMemcpy(d0, u.data(), sizeof(T) * cells, cudaMemcpyHostToDevice));
        if (pass == 0) {
            int steps = 3 * TB + 1;
            std::vector<T> want(cells), got(cells);
            run<T, TB>(base, d0, d1, cells, steps, &res);
            CHECK(cudaMemcpy(want.data(), res, sizeof(T) * cells, cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(d0, u.data(), sizeof(T) * cells, cudaMemcpyHostToDevice));
            run<T, TB>(launch, d0, d1, cells, steps, &res);
            CHECK(cudaMemcpy(got.data(), res, sizeof(T) * cells, cudaMemcpyDeviceToHost));
            size_t bad = 0;
            for (size_t c = 0; c < cells; ++c) bad += memcmp(&want[c], &got[c], sizeof(T)) != 0;
            if (bad) { printf("%s: %zu cells differ from variant 0\n", what, bad); }
        } else {
            int steps = 100;
            run<T, TB>(launch, d0, d1, cells, 2 * TB, &res);
            std::vector<double> t;
            for (int k = 0; k < 5; ++k) t.push_back(run<T, TB>(launch, d0, d1, cells, steps, &res));
            std::sort(t.begin(), t.end());
            double inner = 1;
            for (auto n : shape) inner *= (double)(n - 2);
            double g = inner * steps / t[2] / 1e9;
            printf("| %s | %.1f | %.2fx |\n", what, g, g / single);
        }
        CHECK(cudaFree(d0)); CHECK(cudaFree(d1));
    }
}

template <typename T, int V, int TB, bool SKEW, int VARIANT>
void launch2v(T* out, const T* in, int levels) {
    if (VARIANT == 0) launch2<T, ptrdiff_t, V, TB, 256, SKEW, false>(g_n0, g_n1, out, in, levels);
    else if (VARIANT == 1) launch2<T, int, V, TB, 256, SKEW, false>(g_n0, g_n1, out, in, levels);
    else if (VARIANT == 2) launch2<T, int, V, TB, 256, SKEW, true>(g_n0, g_n1, out, in, levels);
    else launch2<T, int, V, TB, 256, SKEW, true, 4>(g_n0, g_n1, out, in, levels);
}

template <typename T, int TB, int VARIANT>
void launch3v(T* out, const T* in, int levels) {
    if (VARIANT == 0) launch3<T, ptrdiff_t, TB, false>(g_n0, g_n1, g_n2, out, in, levels);
    else if (VARIANT == 1) launch3<T, int, TB, false>(g_n0, g_n1, g_n2, out, in, levels);
    else launch3<T, int, TB, true>(g_n0, g_n1, g_n2, out, in, levels);
}

template <typename T, int V, int TB, bool SKEW, int VARIANT>
void do2(const char* dtype, double single) {
    char what[200];
    snprintf(what, sizeof what, "j2d5pt | %s | 16384^2 | t%d v%d | %d", dtype, TB, V, VARIANT);
    auto base = [](T* o, const T* i, int l) { launch2v<T, V, TB, SKEW, 0>(o, i, l); };
    auto lv = [](T* o, const T* i, int l) { launch2v<T, V, TB, SKEW, VARIANT>(o, i, l); };
    check_and_time<T, TB>(what, base, lv, {1031, 1543}, {16384, 16384}, single);
}

template <typename T, int TB, int VARIANT>
void do3(const char* dtype, double single) {
    char what[200];
    snprintf(what, sizeof what, "j3d7pt | %s | 512^3 | t%d | %d", dtype, TB, VARIANT);
    auto base = [](T* o, const T* i, int l) { launch3v<T, TB, 0>(o, i, l); };
    auto lv = [](T* o, const T* i, int l) { launch3v<T, TB, VARIANT>(o, i, l); };
    check_and_time<T, TB>(what, base, lv, {301, 131, 163}, {512, 512, 512}, single);
}

int main() {
    cudaDeviceProp p; CHECK(cudaGetDeviceProperties(&p, 0));
    size_t bytes = (size_t)2 << 30;
    void *a, *b; CHECK(cudaMalloc(&a, bytes)); CHECK(cudaMalloc(&b, bytes));
    cudaEvent_t e0, e1; CHECK(cudaEventCreate(&e0)); CHECK(cudaEventCreate(&e1));
    CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    std::vector<float> ts;
    for (int k = 0; k < 20; ++k) {
        CHECK(cudaEventRecord(e0)); CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice)); CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1)); float ms; CHECK(cudaEventElapsedTime(&ms, e0, e1)); ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    double bound = 2.0 * bytes / (ts[10] / 1e3);
    CHECK(cudaFree(a)); CHECK(cudaFree(b));
    double f32 = bound / 8e9, f64 = bound / 16e9;
    printf("%s: bound (cudaMemcpy 2 GiB) %.0f GB/s = %.1f GCells/s f32, %.1f f64 for one step\n\n", p.name, bound / 1e9, f32, f64);
    printf("| stencil | dtype | grid | tiling | variant | GCells/s | x bound |\n|---|---|---|---|---|---|---|\n");
    do2<float, 4, 10, false, 0>("f32", f32);
    do2<float, 4, 10, false, 1>("f32", f32);
    do2<float, 4, 10, false, 2>("f32", f32);
    do2<float, 4, 10, false, 3>("f32", f32);
    do2<float, 4, 8, false, 0>("f32", f32);
    do2<float, 4, 8, false, 1>("f32", f32);
    do2<float, 4, 8, false, 2>("f32", f32);
    do2<float, 4, 12, false, 1>("f32", f32);
    do2<float, 4, 12, false, 2>("f32", f32);
    do2<float, 4, 12, false, 3>("f32", f32);
    do2<double, 2, 6, true, 0>("f64", f64);
    do2<double, 2, 6, true, 1>("f64", f64);
    do2<double, 2, 6, true, 2>("f64", f64);
    do2<double, 2, 6, true, 3>("f64", f64);
    do3<float, 3, 0>("f32", f32);
    do3<float, 3, 1>("f32", f32);
    do3<float, 3, 2>("f32", f32);
    do3<double, 2, 0>("f64", f64);
    do3<double, 2, 1>("f64", f64);
    do3<double, 2, 2>("f64", f64);
    return 0;
}
