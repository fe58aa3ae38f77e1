#include <cuda_runtime.h>
#include <stdio.h>
#include <chrono>
#include <algorithm>
__global__ void k(int n, double *out, const double *in, double a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * in[i];
}
int main() {
    int n = 512 * 512;
    double *b[2]; cudaMalloc(&b[0], n * 8); cudaMalloc(&b[1], n * 8);
    cudaStream_t s; cudaStreamCreate(&s);
    auto now = [] { return std::chrono::steady_clock::now(); };
    auto us = [](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count(); };
    auto capture = [&](double a) {
        cudaGraph_t g;
        cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
        for (int j = 0; j < 48; ++j) k<<<(n + 255) / 256, 256, 0, s>>>(n, b[(j + 1) % 2], b[j % 2], a);
        cudaStreamEndCapture(s, &g);
        return g;
    };
    cudaGraphExec_t exec; cudaGraph_t g0 = capture(1.0); cudaGraphInstantiate(&exec, g0, 0);
    for (int round = 0; round < 3; ++round) {
        double tc[9], ti[9], tu[9], tl[9];
        for (int r = 0; r < 9; ++r) {
            cudaDeviceSynchronize();
            auto t0 = now(); cudaGraph_t g = capture(1.0 + r); auto t1 = now();
            cudaGraphExec_t e; cudaGraphInstantiate(&e, g, 0); auto t2 = now();
            cudaGraphExecUpdateResultInfo info; cudaError_t st = cudaGraphExecUpdate(exec, g, &info); auto t3 = now();
            if (st != cudaSuccess) printf("update failed %s\n", cudaGetErrorString(st));
            cudaDeviceSynchronize();
            auto t4 = now(); cudaGraphLaunch(e, 0); auto t5 = now();
            cudaDeviceSynchronize();
            cudaGraphExecDestroy(e); cudaGraphDestroy(g);
            tc[r] = us(t0, t1); ti[r] = us(t1, t2); tu[r] = us(t2, t3); tl[r] = us(t4, t5);
        }
        std::sort(tc, tc + 9); std::sort(ti, ti + 9); std::sort(tu, tu + 9); std::sort(tl, tl + 9);
        printf("48 launches: capture %.1f us, instantiate %.1f us, exec update %.1f us, graph launch (host) %.1f us (medians of 9)\n", tc[4], ti[4], tu[4], tl[4]);
    }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
