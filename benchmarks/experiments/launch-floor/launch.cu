// Launch floor on small grids: a naive 7-point f32 stencil, launched one
// step a launch on the legacy stream, on a created stream, and replayed from
// a CUDA graph of 100 steps. Prints microseconds a step.
#include <cstdio>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void j3d7(int n, const float* __restrict__ in, float* __restrict__ out) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
    if (x >= n || y >= n) return;
    long i = ((long)z * n + y) * n + x;
    if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) { out[i] = in[i]; return; }
    long p = (long)n * n;
    out[i] = 0.4f * in[i] + 0.1f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + in[i - p] + in[i + p]);
}
__global__ void empty() {}

int main() {
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    const int steps = 2000;
    for (int n : {32, 48, 64, 80, 100, 128, 256}) {
        size_t cells = (size_t)n * n * n;
        float *u, *v; CK(cudaMalloc(&u, cells * 4)); CK(cudaMalloc(&v, cells * 4));
        CK(cudaMemset(u, 0, cells * 4)); CK(cudaMemset(v, 0, cells * 4));
        dim3 block(32, 8, 1), grid((n + 31) / 32, (n + 7) / 8, n);
        float best[4] = {1e9f, 1e9f, 1e9f, 1e9f};
        // graph of 100 steps
        cudaGraph_t g; cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int t = 0; t < 100; t++) { j3d7<<<grid, block, 0, s>>>(n, t % 2 ? v : u, t % 2 ? u : v); }
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        for (int rep = 0; rep < 6; rep++) {
            for (int mode = 0; mode < 4; mode++) {
                cudaStream_t st = mode == 0 ? 0 : s;
                CK(cudaDeviceSynchronize());
                CK(cudaEventRecord(a, st));
                if (mode == 3) { for (int t = 0; t < steps / 100; t++) CK(cudaGraphLaunch(ge, s)); }
                else if (mode == 2) { for (int t = 0; t < steps; t++) empty<<<1, 32, 0, s>>>(); }
                else { for (int t = 0; t < steps; t++) { j3d7<<<grid, block, 0, st>>>(n, t % 2 ? v : u, t % 2 ? u : v); CK(cudaGetLastError()); } }
                CK(cudaEventRecord(b, st)); CK(cudaEventSynchronize(b));
                float ms; CK(cudaEventElapsedTime(&ms, a, b));
                if (rep > 0 && ms * 1000 / steps < best[mode]) best[mode] = ms * 1000 / steps;
            }
        }
        printf("n=%4d  legacy %.2f us  stream %.2f us  empty %.2f us  graph %.2f us  (best of 5, %d steps)\n", n, best[0], best[1], best[2], best[3], steps);
        CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g)); CK(cudaFree(u)); CK(cudaFree(v));
    }
    return 0;
}
