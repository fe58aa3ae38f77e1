/* Times j2d9pt f64 single steps on small grids from three separately compiled
 * files (three modules, see build.sh): `auto`'s launcher for one step (its
 * `naive` kernel below 4096 cells per multiprocessor, else its `stream` step
 * kernel), `naive`'s, and `naive`'s in a file with an unused `__constant__`
 * table. Each as graphs of 48 launches (20 replays) and as 960 launches one
 * by one on the legacy stream; CUDA events, median of 5, three rounds.
 * Usage: cbank [n] (grid n x n, default 512). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stddef.h>
#include <algorithm>
extern "C" int A_update_u(ptrdiff_t, ptrdiff_t, double *, const double *, int, cudaStream_t);
extern "C" int N_update_u(ptrdiff_t, ptrdiff_t, double *, const double *, cudaStream_t);
extern "C" int C_update_u(ptrdiff_t, ptrdiff_t, double *, const double *, cudaStream_t);
extern "C" void C_touch(double *);
static double *buf[2];
static ptrdiff_t n;
static int launch(int which, int k, cudaStream_t s) {
    double *out = buf[(k + 1) % 2], *cur = buf[k % 2];
    if (which == 0) return A_update_u(n, n, out, cur, 1, s);
    if (which == 1) return N_update_u(n, n, out, cur, s);
    return C_update_u(n, n, out, cur, s);
}
int main(int argc, char **argv) {
    n = argc > 1 ? atoi(argv[1]) : 512;
    for (int b = 0; b < 2; ++b) { cudaMalloc(&buf[b], n * n * 8); cudaMemset(buf[b], 0, n * n * 8); }
    C_touch(buf[0]);
    cudaStream_t cs; cudaStreamCreate(&cs);
    cudaGraphExec_t exec[3];
    for (int w = 0; w < 3; ++w) {
        cudaGraph_t g;
        cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal);
        for (int k = 0; k < 48; ++k) launch(w, k, cs);
        cudaStreamEndCapture(cs, &g);
        cudaGraphInstantiate(&exec[w], g, 0);
    }
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    const char *names[3] = {"auto module (constant table), its naive kernel", "naive module", "naive module + unused constant table"};
    for (int round = 0; round < 3; ++round)
    for (int w = 0; w < 3; ++w) {
        for (int mode = 0; mode < 2; ++mode) {
            float best[5];
            for (int r = 0; r < 5; ++r) {
                cudaDeviceSynchronize();
                cudaEventRecord(e0, 0);
                for (int k = 0; k < 20; ++k) {
                    if (mode == 0) cudaGraphLaunch(exec[w], 0);
                    else for (int j = 0; j < 48; ++j) launch(w, j, 0);
                }
                cudaEventRecord(e1, 0);
                cudaEventSynchronize(e1);
                cudaEventElapsedTime(&best[r], e0, e1);
            }
            std::sort(best, best + 5);
            printf("%d^2 round %d %-50s %s %.3f us a step\n", (int)n, round, names[w], mode ? "launches" : "graphs  ", best[2] * 1000 / 960);
        }
    }
    printf("error: %s\n", cudaGetErrorString(cudaGetLastError()));
}
