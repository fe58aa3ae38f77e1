// Runs launchers a_update and t_update (3 launches of 1 and 2 steps, on four
// odd grids, from the same random data) and exits 1 where their grids differ:
// bit for bit, or with -DTOLERANCE=<d> by more than d.
#ifndef TOLERANCE
#define TOLERANCE 0
#endif
#define SPELLED(x) #x
#define SPELL(x) SPELLED(x)
#include <cuda_runtime.h>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <vector>
extern "C" int a_update(ptrdiff_t, ptrdiff_t, ptrdiff_t, float *, const float *, int, cudaStream_t);
extern "C" int t_update(ptrdiff_t, ptrdiff_t, ptrdiff_t, float *, const float *, int, cudaStream_t);
static std::vector<float> run(int (*f)(ptrdiff_t, ptrdiff_t, ptrdiff_t, float *, const float *, int, cudaStream_t), int n0, int n1, int n2, int launches, int levels) {
    size_t n = (size_t)n0 * n1 * n2;
    std::vector<float> h(n);
    unsigned s = 12345;
    for (auto &x : h) { s = s * 1664525u + 1013904223u; x = (float)(s >> 8) / (float)(1u << 24); }
    float *a, *b;
    cudaMalloc((void **)&a, n * 4); cudaMalloc((void **)&b, n * 4);
    cudaMemcpy(a, h.data(), n * 4, cudaMemcpyHostToDevice); cudaMemcpy(b, h.data(), n * 4, cudaMemcpyHostToDevice);
    for (int i = 0; i < launches; ++i) {
        int rc = f(n0, n1, n2, b, a, levels, nullptr);
        if (rc) { printf("launch error %d\n", rc); exit(1); }
        std::swap(a, b);
    }
    cudaDeviceSynchronize();
    cudaMemcpy(h.data(), a, n * 4, cudaMemcpyDeviceToHost);
    return h;
}
int main() {
    int shapes[][3] = {{9, 61, 131}, {7, 30, 64}, {5, 4, 5}, {12, 57, 121}};
    int bad = 0;
    for (auto &sh : shapes) for (int levels = 1; levels <= 2; ++levels) {
        auto x = run(a_update, sh[0], sh[1], sh[2], 3, levels), y = run(t_update, sh[0], sh[1], sh[2], 3, levels);
        size_t diff = 0; double worst = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            double d = std::fabs((double)x[i] - y[i]);
            diff += TOLERANCE > 0 ? !(d <= TOLERANCE) : memcmp(&x[i], &y[i], 4) != 0;
            if (!(d <= worst)) worst = d;
        }
        if (TOLERANCE > 0)
            printf("%d x %d x %d, levels %d: %zu of %zu cells differ by more than %s, at most %.3g\n", sh[0], sh[1], sh[2], levels, diff, x.size(), SPELL(TOLERANCE), worst);
        else
            printf("%d x %d x %d, levels %d: %zu of %zu cells differ\n", sh[0], sh[1], sh[2], levels, diff, x.size());
        bad |= diff != 0;
    }
    return bad;
}
