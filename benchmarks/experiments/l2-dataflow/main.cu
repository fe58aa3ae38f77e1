// Times the fused leapfrog steps (acoustic_df.cu in f32, or acoustic_tdf.cu in
// f64 when built with -DF64) and the same body one step a launch ("march")
// against the generated single step they are built from (work/stream.cu,
// work/tensor.cu: included) on one grid; all are first run 12 steps from the
// same data and compared bit for bit. Usage: df N0 N1 N2 (z, y, x); grids
// under 10^8 cells are only checked.
#ifdef F64
#include "work/tensor.cu"
#include "acoustic_tdf.cu"
typedef double real;
namespace df = tdf;
#else
#include "work/stream.cu"
#include "acoustic_df.cu"
typedef float real;
#endif
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

__global__ void fill(real *p, size_t n, unsigned seed, real lo, real hi)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        p[i] = lo + (hi - lo) * (real)(h & 0xffffff) / (real)16777216;
    }
}

struct State {
    real *g[3];
    void rotate() { std::rotate(g, g + 2, g + 3); } // (a, b, c) -> (c, a, b)
};

static void ref2(int n0, int n1, int n2, State &s, const real *vel)
{
    CHECK((cudaError_t)stencils_cuda__acoustic25__update_u(n0, n1, n2, s.g[2], s.g[0], s.g[1], vel));
    CHECK((cudaError_t)stencils_cuda__acoustic25__update_u(n0, n1, n2, s.g[0], s.g[1], s.g[2], vel));
    s.rotate();
}

static void df2(int n0, int n1, int n2, State &s, const real *vel, int *counters)
{
    CHECK(df::launch2(n0, n1, n2, s.g[0], s.g[1], s.g[2], vel, counters));
    s.rotate();
}

static void one2(int n0, int n1, int n2, State &s, const real *vel, int *counters)
{
    CHECK(df::launch1(n0, n1, n2, s.g[0], s.g[1], s.g[2], vel, counters));
    CHECK(df::launch1(n0, n1, n2, s.g[1], s.g[2], s.g[0], vel, counters));
    s.rotate();
}

template <class F>
static double time_ms(F f, int launches)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<real> t;
    for (int rep = 0; rep < 5; ++rep) {
        CHECK(cudaEventRecord(a));
        for (int i = 0; i < launches; ++i)
            f();
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[2];
}

int main(int argc, char **argv)
{
    const int n0 = argc > 3 ? atoi(argv[1]) : 300, n1 = argc > 3 ? atoi(argv[2]) : 994, n2 = argc > 3 ? atoi(argv[3]) : 750;
    const size_t n = (size_t)n0 * n1 * n2;
    const double interior = (double)(n0 - 8) * (n1 - 8) * (n2 - 8);
    State ref, df, one;
    real *vel;
    for (int i = 0; i < 3; ++i) {
        CHECK(cudaMalloc(&ref.g[i], n * sizeof(real)));
        CHECK(cudaMalloc(&df.g[i], n * sizeof(real)));
        CHECK(cudaMalloc(&one.g[i], n * sizeof(real)));
        fill<<<1024, 256>>>(ref.g[i], n, 17u + i, -1.f, 1.f);
        CHECK(cudaMemcpy(df.g[i], ref.g[i], n * sizeof(real), cudaMemcpyDeviceToDevice));
        CHECK(cudaMemcpy(one.g[i], ref.g[i], n * sizeof(real), cudaMemcpyDeviceToDevice));
    }
    CHECK(cudaMalloc(&vel, n * sizeof(real)));
    fill<<<1024, 256>>>(vel, n, 99u, 0.f, 1.f);
    int *counters;
    CHECK(cudaMalloc(&counters, df::counters_needed(n1, n2) * sizeof(int)));
    for (int i = 0; i < 6; ++i) {
        ref2(n0, n1, n2, ref, vel);
        df2(n0, n1, n2, df, vel, counters);
        one2(n0, n1, n2, one, vel, counters);
    }
    CHECK(cudaDeviceSynchronize());
    size_t differ = 0;
    std::vector<real> x(n), y(n);
    for (State *s : {&df, &one}) {
        size_t d = 0;
        double worst = 0;
        for (int i = 0; i < 2; ++i) { // the state: (prev, cur) = g[0], g[1]
            CHECK(cudaMemcpy(x.data(), ref.g[i], n * sizeof(real), cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(y.data(), s->g[i], n * sizeof(real), cudaMemcpyDeviceToHost));
            for (size_t k = 0; k < n; ++k)
                if (x[k] != y[k]) {
                    ++d;
                    worst = std::max(worst, (double)fabs(x[k] - y[k]));
                }
        }
        printf("%d x %d x %d, %s, PUB %d, BAND %d, LAG %d, %s: %zu cells differ from the single step after 12 steps (at most %.3g)\n", n0, n1, n2,
               sizeof(real) == 8 ? "f64" : "f32", PUB, BAND, LAG,
               s == &df ? "fused" : "single", d, worst);
        differ += d;
    }
    if (n < 100000000)
        return differ != 0;
    real *scratch;
    CHECK(cudaMalloc(&scratch, n * sizeof(real)));
    const double copy = time_ms([&] { CHECK(cudaMemcpyAsync(scratch, ref.g[0], n * sizeof(real), cudaMemcpyDeviceToDevice)); }, 20);
    const double bw = 2.0 * n * sizeof(real) * 20 / (copy * 1e-3) / 1e9;
    printf("copy %.0f GB/s: single-step bound %.1f GCells/s (2 x %zu bytes a cell)\n", bw, bw / (2 * sizeof(real)), sizeof(real));
    const int launches = 20;
    const double tr = time_ms([&] { ref2(n0, n1, n2, ref, vel); }, launches);
    const double td = time_ms([&] { df2(n0, n1, n2, df, vel, counters); }, launches);
    const double to = time_ms([&] { one2(n0, n1, n2, one, vel, counters); }, launches);
    printf(sizeof(real) == 4 ? "stream        %7.1f GCells/s\n" : "tensor        %7.1f GCells/s\n", interior * 2 * launches / (tr * 1e-3) / 1e9);
    printf("dataflow t=2  %7.1f GCells/s (%.2fx)\n", interior * 2 * launches / (td * 1e-3) / 1e9, tr / td);
    printf("march, 1 step %7.1f GCells/s (%.2fx)\n", interior * 2 * launches / (to * 1e-3) / 1e9, tr / to);
#ifdef TRACE
    {
        bool on = true;
        CHECK(cudaMemcpyToSymbol(df::trace_on, &on, 1));
        df2(n0, n1, n2, df, vel, counters);
        CHECK(cudaDeviceSynchronize());
        std::vector<unsigned long long> tr(4 * 20000);
        CHECK(cudaMemcpyFromSymbol(tr.data(), df::trace, tr.size() * 8));
        FILE *f = fopen(getenv("TRACE_FILE") ? getenv("TRACE_FILE") : "trace.txt", "w");
        for (int i = 0; i < 20000; ++i)
            if (tr[4 * i + 1])
                fprintf(f, "%d %llu %llu %llu %llu %llu\n", i, tr[4 * i], tr[4 * i + 1], tr[4 * i + 2] & 0xff, (tr[4 * i + 2] >> 8) & 0xffffff, tr[4 * i + 2] >> 32);
        fclose(f);
        int blocks;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, df::fused2, 32 * TYR, 0));
        printf("occupancy: %d blocks a multiprocessor\n", blocks);
    }
#endif
    if (getenv("NCU_ONCE")) { // one launch of each, for ncu
        ref2(n0, n1, n2, ref, vel);
        df2(n0, n1, n2, df, vel, counters);
    }
    return differ != 0;
}
