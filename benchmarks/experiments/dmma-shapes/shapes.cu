/*
 * Micro-benchmark (hand-written; README.md beside it): throughput of the FP64
 * tensor-core shapes on sm_90. Every warp runs CH independent accumulator
 * chains of one shape for ITERS iterations; the program prints FP64 TFLOPS
 * (2 flops a multiply-add) for each shape.
 */
#include <cuda_runtime.h>
#include <cstdio>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

template <int S> struct Shape;
template <> struct Shape<0> { static constexpr int A = 1, B = 1, C = 2, FMA = 8 * 8 * 4; static constexpr const char *name = "m8n8k4"; };
template <> struct Shape<1> { static constexpr int A = 2, B = 1, C = 4, FMA = 16 * 8 * 4; static constexpr const char *name = "m16n8k4"; };
template <> struct Shape<2> { static constexpr int A = 4, B = 2, C = 4, FMA = 16 * 8 * 8; static constexpr const char *name = "m16n8k8"; };
template <> struct Shape<3> { static constexpr int A = 8, B = 4, C = 4, FMA = 16 * 8 * 16; static constexpr const char *name = "m16n8k16"; };

__device__ __forceinline__ void mma(double (&c)[2], const double (&a)[1], const double (&b)[1])
{
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};" : "+d"(c[0]), "+d"(c[1]) : "d"(a[0]), "d"(b[0]));
}
__device__ __forceinline__ void mma(double (&c)[4], const double (&a)[2], const double (&b)[1])
{
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3]) : "d"(a[0]), "d"(a[1]), "d"(b[0]));
}
__device__ __forceinline__ void mma(double (&c)[4], const double (&a)[4], const double (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3]) : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}
__device__ __forceinline__ void mma(double (&c)[4], const double (&a)[8], const double (&b)[4])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};"
                 : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
}

template <int S, int CH>
__global__ void kernel(double *out, int iters)
{
    using Sh = Shape<S>;
    double a[Sh::A], b[Sh::B], c[CH][Sh::C];
#pragma unroll
    for (int i = 0; i < Sh::A; ++i) a[i] = 1e-3 * (threadIdx.x + i);
#pragma unroll
    for (int i = 0; i < Sh::B; ++i) b[i] = 1e-3 * (threadIdx.x - i);
#pragma unroll
    for (int j = 0; j < CH; ++j)
#pragma unroll
        for (int i = 0; i < Sh::C; ++i) c[j][i] = j + i;
    for (int it = 0; it < iters; ++it)
#pragma unroll
        for (int j = 0; j < CH; ++j) mma(c[j], a, b);
    double s = 0;
#pragma unroll
    for (int j = 0; j < CH; ++j)
#pragma unroll
        for (int i = 0; i < Sh::C; ++i) s += c[j][i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int S, int CH>
int run(double *out, int sms, int warps)
{
    const int iters = 2048, blocks = sms * 4, threads = 32 * warps;
    kernel<S, CH><<<blocks, threads>>>(out, iters);
    CK(cudaDeviceSynchronize());
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a);
    for (int r = 0; r < 5; ++r) kernel<S, CH><<<blocks, threads>>>(out, iters);
    cudaEventRecord(b);
    CK(cudaEventSynchronize(b));
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    const double flops = 2.0 * Shape<S>::FMA * CH * (double)iters * (blocks * warps) * 5;
    printf("%-9s chains %d, %2d warps a block, 4 blocks an SM: %6.1f TFLOPS\n", Shape<S>::name, CH, warps, flops / (ms * 1e-3) / 1e12);
    return 0;
}

int main()
{
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("%s, %d SMs\n", p.name, sms);
    double *out;
    CK(cudaMalloc(&out, sizeof(double) * sms * 4 * 1024));
    for (int warps : {4, 8}) {
        run<0, 2>(out, sms, warps); run<0, 4>(out, sms, warps); run<0, 8>(out, sms, warps);
        run<1, 2>(out, sms, warps); run<1, 4>(out, sms, warps);
        run<2, 2>(out, sms, warps); run<2, 4>(out, sms, warps);
        run<3, 2>(out, sms, warps); run<3, 4>(out, sms, warps);
    }
    return 0;
}
