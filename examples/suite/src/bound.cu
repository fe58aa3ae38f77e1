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
