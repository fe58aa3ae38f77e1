/* The bandwidth bound of the suite runner: a device-to-device cudaMemcpy,
 * timed with CUDA events (bytes read + written per second). */
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdio.h>

extern "C" int suite_copy_seconds(size_t bytes, int reps, double *seconds)
{
    void *a = NULL, *b = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    cudaError_t e = cudaMalloc(&a, bytes);
    if (e == cudaSuccess) e = cudaMalloc(&b, bytes);
    if (e == cudaSuccess) e = cudaMemset(a, 1, bytes);
    if (e == cudaSuccess) e = cudaEventCreate(&start);
    if (e == cudaSuccess) e = cudaEventCreate(&stop);
    if (e == cudaSuccess) e = cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); /* warm-up */
    if (e == cudaSuccess) e = cudaEventRecord(start);
    for (int r = 0; r < reps && e == cudaSuccess; ++r)
        e = cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    if (e == cudaSuccess) e = cudaEventRecord(stop);
    if (e == cudaSuccess) e = cudaEventSynchronize(stop);
    float ms = 0.0f;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, start, stop);
    *seconds = ms / 1000.0 / (reps > 0 ? reps : 1);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    cudaFree(a);
    cudaFree(b);
    return (int)e;
}

/* A pair of events timing what the host queues between `suite_timer_start`
 * and `suite_timer_stop` on the default stream (where sessions launch). */
static cudaEvent_t timer_start = NULL, timer_stop = NULL;

extern "C" int suite_timer_start(void)
{
    cudaError_t e = cudaSuccess;
    if (!timer_start) e = cudaEventCreate(&timer_start);
    if (e == cudaSuccess && !timer_stop) e = cudaEventCreate(&timer_stop);
    if (e == cudaSuccess) e = cudaEventRecord(timer_start);
    return (int)e;
}

extern "C" int suite_timer_stop(double *seconds)
{
    cudaError_t e = cudaEventRecord(timer_stop);
    if (e == cudaSuccess) e = cudaEventSynchronize(timer_stop);
    float ms = 0.0f;
    if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, timer_start, timer_stop);
    *seconds = ms / 1000.0;
    return (int)e;
}

/* The name of device 0, NUL-terminated in `name` (at most `len` bytes). */
extern "C" int suite_device_name(char *name, int len)
{
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, 0);
    if (e != cudaSuccess || len < 1) return (int)e;
    snprintf(name, (size_t)len, "%s", p.name);
    return 0;
}

/* The arithmetic bound: independent chains of fused multiply-adds in every
 * thread of blocks filling the GPU, timed with CUDA events; flops per second
 * counting a multiply-add as two, as a stencil's flop count does. */
template <typename T>
__global__ void suite_fma(T *out, int iters, T m, T b)
{
    T a[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) a[k] = (T)(threadIdx.x + k) * (T)1e-3;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int k = 0; k < 8; ++k) a[k] = fma(a[k], m, b);
    }
    T s = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += a[k];
    /* Never true for these inputs, but the compiler cannot know: the chains stay. */
    if (s == (T)-1.0) out[0] = s;
}

template <typename T>
static int fma_flops(double *flops_per_second)
{
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, 0);
    T *out = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    const int iters = 1 << 14, threads = 256;
    const int blocks = (e == cudaSuccess ? p.multiProcessorCount : 1) * 8;
    if (e == cudaSuccess) e = cudaMalloc(&out, sizeof(T));
    if (e == cudaSuccess) e = cudaEventCreate(&start);
    if (e == cudaSuccess) e = cudaEventCreate(&stop);
    float best = 0.0f;
    for (int r = 0; r < 4 && e == cudaSuccess; ++r) { /* the first is a warm-up */
        cudaEventRecord(start);
        suite_fma<T><<<blocks, threads>>>(out, iters, (T)0.999999, (T)1e-7);
        cudaEventRecord(stop);
        e = cudaEventSynchronize(stop);
        float ms = 0.0f;
        if (e == cudaSuccess) e = cudaEventElapsedTime(&ms, start, stop);
        if (r > 0 && (best == 0.0f || ms < best)) best = ms;
    }
    if (e == cudaSuccess) e = cudaGetLastError();
    *flops_per_second = 2.0 * 8.0 * iters * (double)threads * blocks / (best / 1000.0);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    cudaFree(out);
    return (int)e;
}

/* Flops per second of multiply-adds in `bytes`-byte reals (4 or 8). */
extern "C" int suite_fma_flops(int bytes, double *flops_per_second)
{
    return bytes == 4 ? fma_flops<float>(flops_per_second) : fma_flops<double>(flops_per_second);
}
