/* The arithmetic bound of the suite runner on the CPU: flops per second of
 * independent multiply-adds on every OpenMP thread, compiled with the flags
 * stencil-build's OpenMP kernels get (so what the compiler makes of a
 * multiply-add, fused or not, is what theirs get too). */
#include <omp.h>

#define CHAINS 32

#define FMA_FLOPS(T, NAME)                                                        \
    double NAME(long iters)                                                       \
    {                                                                             \
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
    }

FMA_FLOPS(float, suite_fma_flops_f32)
FMA_FLOPS(double, suite_fma_flops_f64)
