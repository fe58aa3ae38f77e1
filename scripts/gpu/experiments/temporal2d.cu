// Issue 6 experiment: hand-written temporal blocking for j2d5pt (fixed
// boundary) on the GPU machine, to set the generator's design and targets.
// Overlapped tiles along x (BX threads, TB halo columns each side recomputed),
// streaming along y (CY output rows per block, TB halo rows above and below),
// TB fused steps per launch: each thread keeps a 3-row register window per
// level, x neighbours through shared memory (two buffers, alternating).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o temporal2d temporal2d.cu && ./temporal2d
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

template <typename T>
__device__ __forceinline__ T j2d5pt(T n, T w, T c, T e, T s) {
    return (T(5.1) * n + T(12.1) * w + T(15.0) * c + T(12.2) * e + T(5.2) * s) / T(118);
}

// The same with the division by 118 as a multiplication by its reciprocal.
template <typename T>
__device__ __forceinline__ T j2d5pt_mul(T n, T w, T c, T e, T s) {
    return (T(5.1) * n + T(12.1) * w + T(15.0) * c + T(12.2) * e + T(5.2) * s) * T(1.0 / 118);
}

// Warp tiles: each warp is its own overlapped tile of 32 V columns (TB halo
// columns each side), V cells per lane, x neighbours by shuffles: no shared
// memory, no barrier.
template <typename T, int TB, int V, int CY, bool MUL>
__global__ void __launch_bounds__(128) warp_temporal(const T* __restrict__ in, T* __restrict__ out, int ny, int nx) {
    const int lane = threadIdx.x & 31;
    const int gw = blockIdx.x * 4 + (threadIdx.x >> 5);
    const int x0 = gw * (32 * V - 2 * TB) - TB + lane * V;
    const int y0 = blockIdx.y * CY;
    T a[TB + 1][V], b[TB + 1][V], c[TB + 1][V];
#pragma unroll
    for (int s = 0; s <= TB; ++s)
#pragma unroll
        for (int k = 0; k < V; ++k) a[s][k] = b[s][k] = c[s][k] = T(0);
    for (int j = y0 - TB; j < y0 + CY + TB && j - TB < ny; ++j) {
#pragma unroll
        for (int s = 0; s <= TB; ++s)
#pragma unroll
            for (int k = 0; k < V; ++k) { a[s][k] = b[s][k]; b[s][k] = c[s][k]; }
        const bool row = j >= 0 && j < ny;
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const int x = x0 + k;
            c[0][k] = (row && x >= 0 && x < nx) ? in[(size_t)j * nx + x] : T(0);
        }
#pragma unroll
        for (int s = 1; s <= TB; ++s) {
            const int r = j - s;
            const bool edge_y = r <= 0 || r >= ny - 1;
            const T left = __shfl_up_sync(0xffffffffu, b[s - 1][V - 1], 1);
            const T right = __shfl_down_sync(0xffffffffu, b[s - 1][0], 1);
#pragma unroll
            for (int k = 0; k < V; ++k) {
                const int x = x0 + k;
                const T w = k == 0 ? left : b[s - 1][k - 1];
                const T e = k == V - 1 ? right : b[s - 1][k + 1];
                c[s][k] = (edge_y || x <= 0 || x >= nx - 1) ? b[s - 1][k]
                    : MUL ? j2d5pt_mul(a[s - 1][k], w, b[s - 1][k], e, c[s - 1][k])
                          : j2d5pt(a[s - 1][k], w, b[s - 1][k], e, c[s - 1][k]);
            }
        }
        const int r = j - TB;
        if (r >= y0 && r < y0 + CY && r < ny) {
#pragma unroll
            for (int k = 0; k < V; ++k) {
                const int t = lane * V + k, x = x0 + k;
                if (t >= TB && t < 32 * V - TB && x < nx) out[(size_t)r * nx + x] = c[TB][k];
            }
        }
    }
}

template <typename T, int TB, int BX, int CY>
__global__ void __launch_bounds__(BX) temporal(const T* __restrict__ in, T* __restrict__ out, int ny, int nx) {
    // Two buffers, alternating per level: a buffer is written again two
    // barriers after it was read.
    __shared__ T smem[2][BX];
    const int tx = threadIdx.x;
    const int x = blockIdx.x * (BX - 2 * TB) - TB + tx;
    const int y0 = blockIdx.y * CY;
    const bool col = x >= 0 && x < nx;
    const bool edge_x = x <= 0 || x >= nx - 1;
    // a[s], b[s], c[s]: level s at rows r-1, r, r+1 (level s computes row j - s).
    T a[TB + 1], b[TB + 1], c[TB + 1];
#pragma unroll
    for (int s = 0; s <= TB; ++s) a[s] = b[s] = c[s] = T(0);
    int parity = 0;
    for (int j = y0 - TB; j < y0 + CY + TB && j - TB < ny; ++j) {
#pragma unroll
        for (int s = 0; s <= TB; ++s) { a[s] = b[s]; b[s] = c[s]; }
        c[0] = (col && j >= 0 && j < ny) ? in[(size_t)j * nx + x] : T(0);
#pragma unroll
        for (int s = 1; s <= TB; ++s) {
            smem[parity][tx] = b[s - 1];
            __syncthreads();
            const int r = j - s;
            T v = b[s - 1];
            if (!(edge_x || r <= 0 || r >= ny - 1) && tx > 0 && tx < BX - 1) {
                v = j2d5pt(a[s - 1], smem[parity][tx - 1], b[s - 1], smem[parity][tx + 1], c[s - 1]);
            }
            c[s] = v;
            parity ^= 1;
        }
        const int r = j - TB;
        if (col && tx >= TB && tx < BX - TB && r >= y0 && r < y0 + CY && r < ny) {
            out[(size_t)r * nx + x] = c[TB];
        }
    }
}

template <typename T>
void reference(std::vector<T>& u, int ny, int nx, int steps) {
    std::vector<T> v = u;
    for (int t = 0; t < steps; ++t) {
        for (int y = 1; y < ny - 1; ++y)
            for (int x = 1; x < nx - 1; ++x) {
                size_t i = (size_t)y * nx + x;
                v[i] = (T(5.1) * u[i - nx] + T(12.1) * u[i - 1] + T(15.0) * u[i] + T(12.2) * u[i + 1] + T(5.2) * u[i + nx]) / T(118);
            }
        std::swap(u, v);
    }
}

// KIND 0: block tiles through shared memory (BX threads); KIND 1 and 2:
// warp tiles with BX cells per lane, dividing by 118 (1) or multiplying by
// its reciprocal (2).
template <typename T, int TB, int BX, int CY, int KIND>
double run(T* d0, T* d1, int ny, int nx, int steps, T** result) {
    const int width = KIND == 0 ? BX - 2 * TB : 4 * (32 * BX - 2 * TB);
    dim3 grid((nx + width - 1) / width, (ny + CY - 1) / CY);
    T *src = d0, *dst = d1;
    // The frame of the destination must hold the boundary: copy once.
    CHECK(cudaMemcpy(dst, src, sizeof(T) * (size_t)ny * nx, cudaMemcpyDeviceToDevice));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
    CHECK(cudaEventRecord(a));
    for (int t = 0; t < steps; t += TB) {
        if constexpr (KIND == 0) temporal<T, TB, BX, CY><<<grid, BX>>>(src, dst, ny, nx);
        else warp_temporal<T, TB, BX, CY, KIND == 2><<<grid, 128>>>(src, dst, ny, nx);
        std::swap(src, dst);
    }
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaGetLastError());
    float ms; CHECK(cudaEventElapsedTime(&ms, a, b));
    *result = src;
    return ms / 1e3;
}

template <typename T>
std::vector<T> pattern(size_t cells) {
    std::vector<T> u(cells);
    for (size_t c = 0; c < cells; ++c) u[c] = T(float((c * 7919) % 1000) / 1000.0f);
    return u;
}

template <typename T, int TB, int BX, int CY, int KIND = 0>
void check_and_time(const char* dtype, double bound) {
    // Correctness on an odd grid, steps not a multiple of CY or BX.
    {
        int ny = 301, nx = 517, steps = 3 * TB;
        auto u = pattern<T>((size_t)ny * nx);
        T *d0, *d1, *res;
        CHECK(cudaMalloc(&d0, sizeof(T) * u.size())); CHECK(cudaMalloc(&d1, sizeof(T) * u.size()));
        CHECK(cudaMemcpy(d0, u.data(), sizeof(T) * u.size(), cudaMemcpyHostToDevice));
        run<T, TB, BX, CY, KIND>(d0, d1, ny, nx, steps, &res);
        std::vector<T> g(u.size());
        CHECK(cudaMemcpy(g.data(), res, sizeof(T) * u.size(), cudaMemcpyDeviceToHost));
        reference(u, ny, nx, steps);
        double worst = 0;
        for (size_t i = 0; i < u.size(); ++i) worst = std::max(worst, (double)std::fabs(g[i] - u[i]));
        double tol = 16 * (sizeof(T) == 4 ? 1.2e-7 : 2.3e-16) * 11 * steps;
        if (!(worst <= tol)) { printf("%s TB=%d BX=%d CY=%d kind %d: WRONG, difference %g > %g\n", dtype, TB, BX, CY, KIND, worst, tol); exit(1); }
        CHECK(cudaFree(d0)); CHECK(cudaFree(d1));
    }
    int n = 16384, steps = 240;
    size_t cells = (size_t)n * n;
    auto u = pattern<T>(cells);
    T *d0, *d1, *res;
    CHECK(cudaMalloc(&d0, sizeof(T) * cells)); CHECK(cudaMalloc(&d1, sizeof(T) * cells));
    CHECK(cudaMemcpy(d0, u.data(), sizeof(T) * cells, cudaMemcpyHostToDevice));
    run<T, TB, BX, CY, KIND>(d0, d1, n, n, 2 * TB, &res);  // warm-up
    std::vector<double> t;
    for (int k = 0; k < 5; ++k) t.push_back(run<T, TB, BX, CY, KIND>(d0, d1, n, n, steps, &res));
    std::sort(t.begin(), t.end());
    double g = (double)(n - 2) * (n - 2) * steps / t[2] / 1e9;
    double single = bound / (2.0 * sizeof(T)) / 1e9;
    if (KIND == 0)
        printf("| j2d5pt | %s | 16384 x 16384 | %d | block tiles, shared memory: TB=%d [1, %d], chunk %d | %.1f | %.2fx |\n",
               dtype, steps, TB, BX, CY, g, g / single);
    else
        printf("| j2d5pt | %s | 16384 x 16384 | %d | warp tiles, shuffles: TB=%d, %d cells/lane, chunk %d, %s | %.1f | %.2fx |\n",
               dtype, steps, TB, BX, CY, KIND == 1 ? "/118" : "*(1/118)", g, g / single);
    CHECK(cudaFree(d0)); CHECK(cudaFree(d1));
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
    printf("%s: bound (cudaMemcpy 2 GiB) %.0f GB/s = %.1f GCells/s f32, %.1f f64 for one step\n\n",
           p.name, bound / 1e9, bound / 8e9, bound / 16e9);
    printf("| stencil | dtype | shape | steps | kernel | GCells/s | x single-step bound |\n|---|---|---|---|---|---|---|\n");
    check_and_time<float, 4, 256, 256>("f32", bound);
    check_and_time<double, 6, 256, 256>("f64", bound);
    check_and_time<float, 4, 1, 256, 1>("f32", bound);
    check_and_time<float, 4, 2, 256, 1>("f32", bound);
    check_and_time<float, 4, 4, 256, 1>("f32", bound);
    check_and_time<float, 4, 4, 256, 2>("f32", bound);
    check_and_time<float, 8, 2, 256, 2>("f32", bound);
    check_and_time<float, 8, 4, 256, 2>("f32", bound);
    check_and_time<float, 12, 2, 512, 2>("f32", bound);
    check_and_time<float, 12, 4, 512, 2>("f32", bound);
    check_and_time<float, 16, 4, 512, 2>("f32", bound);
    check_and_time<double, 4, 2, 256, 1>("f64", bound);
    check_and_time<double, 6, 2, 256, 1>("f64", bound);
    check_and_time<double, 6, 2, 256, 2>("f64", bound);
    check_and_time<double, 8, 2, 256, 2>("f64", bound);
    check_and_time<double, 8, 4, 256, 2>("f64", bound);
    check_and_time<double, 12, 2, 512, 2>("f64", bound);
    check_and_time<double, 12, 4, 512, 2>("f64", bound);
    return 0;
}
