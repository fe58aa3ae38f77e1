/* The arithmetic bound of the suite runner on the CPU: flops per second of
 * independent multiply-adds on every OpenMP thread, compiled with the flags
 * stencil-build's OpenMP kernels get (so what the compiler makes of a
 * multiply-add, fused or not, is what theirs get too), and on x86-64 once
 * more for each instruction-set level under names of its own (build.rs):
 * the runner times the one its kernels run at.
 *
 * Enough independent chains to fill every multiply-add unit: a chain waits
 * out its multiply-add's latency (4-5 cycles) before its next, and a core
 * issues two a cycle, so 12 vector registers of chains keep both busy. With
 * 32 chains (2 AVX-512 registers in f32) the loop measured the latency, a
 * quarter of the GPU machine's f32 throughput. */
#include <omp.h>

#if defined(__AVX512F__)
#define VECTOR_BYTES 64
#elif defined(__AVX__)
#define VECTOR_BYTES 32
#else
#define VECTOR_BYTES 16
#endif
#define CHAIN_VECTORS 12
/* The best of a few timings: the first also wakes the threads. */
#define TIMINGS 3

#define FMA_FLOPS(T, NAME)                                                        \
    static double NAME##_once(long iters)                                         \
    {                                                                             \
        enum { CHAINS = CHAIN_VECTORS * VECTOR_BYTES / sizeof(T) };               \
        double start = omp_get_wtime(), sink = 0.0;                               \
        int threads = 1;                                                          \
        _Pragma("omp parallel reduction(+ : sink)")                               \
        {                                                                         \
            T a[CHAINS];                                                          \
            const T m = (T)0.999999, b = (T)1e-7;                                 \
            for (int c = 0; c < CHAINS; ++c)                                      \
                a[c] = (T)(c + omp_get_thread_num()) * (T)1e-3;                   \
            for (long i = 0; i < iters; ++i) {                                    \
                _Pragma("omp simd")                                               \
                for (int c = 0; c < CHAINS; ++c) a[c] = a[c] * m + b;             \
            }                                                                     \
            for (int c = 0; c < CHAINS; ++c) sink += a[c];                        \
            _Pragma("omp single") threads = omp_get_num_threads();                \
        }                                                                         \
        double seconds = omp_get_wtime() - start;                                 \
        /* `sink` is a sum of positive values: never negative, but it must be */ \
        /* used for the chains to stay. */                                        \
        return sink < 0.0 ? 0.0 : 2.0 * CHAINS * (double)iters * threads / seconds; \
    }                                                                             \
    double NAME(long iters)                                                       \
    {                                                                             \
        double best = 0.0;                                                        \
        for (int k = 0; k < TIMINGS; ++k) {                                       \
            const double flops = NAME##_once(iters);                              \
            best = flops > best ? flops : best;                                   \
        }                                                                         \
        return best;                                                              \
    }

FMA_FLOPS(float, suite_fma_flops_f32)
FMA_FLOPS(double, suite_fma_flops_f64)
