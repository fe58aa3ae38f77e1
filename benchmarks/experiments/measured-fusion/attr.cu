// Host cost of cudaFuncSetAttribute (MaxDynamicSharedMemorySize) against a bare launch.
#include <cstdio>
#include <chrono>
#include <cuda_runtime.h>
__global__ void k(double *p) { extern __shared__ double s[]; if (p) { s[threadIdx.x] = 1; p[threadIdx.x] = s[threadIdx.x]; } }
int main() {
    const int n = 20000;
    cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize, 160000);
    k<<<132, 512, 160000>>>(nullptr); cudaDeviceSynchronize();
    for (int round = 0; round < 3; ++round) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i) cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize, 160000);
        auto t1 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i) k<<<132, 512, 160000>>>(nullptr);
        auto t2 = std::chrono::steady_clock::now();
        cudaDeviceSynchronize();
        auto t3 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i) { cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize, 160000); k<<<132, 512, 160000>>>(nullptr); }
        cudaDeviceSynchronize();
        auto t4 = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i) { int d; cudaGetDevice(&d); }
        auto t5 = std::chrono::steady_clock::now();
        auto us = [&](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count() / n; };
        printf("round %d: FuncSetAttribute %.3f us, launch (enqueue) %.3f us, launch to idle %.3f us, attribute+launch to idle %.3f us, GetDevice %.3f us\n",
               round, us(t0, t1), us(t1, t2), us(t1, t3) - us(t0,t1)*0, us(t3, t4), us(t4, t5));
    }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
