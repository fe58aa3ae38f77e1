/*
 * Prototype (hand-written, not generated; README.md beside it): the vector
 * columns of star3d25_v4.cu for any 3-D star of the suite, f32 or f64, with
 * T fused steps. A thread owns one 16-byte vector of `x` (4 floats or 2
 * doubles) in one row; the tile is 64 cells of `x` by TYN rows.
 *
 * Macros: STENCIL (1 j3d7pt, 2 j3d13pt, 3 star3d25), DOUBLE (0 or 1), T
 * (fused steps), LAG (iterations between a ring plane's publication and its
 * read; one barrier per LAG planes), TYN (threads along `y`), ZCN (planes a
 * block marches). The tile's origin along `x` is rounded down to a whole
 * vector, so a vector may hold stored and recomputed cells: the stores are
 * per cell. Grids need n2 % (16 / sizeof(real)) == 0; the launcher refuses
 * others.
 */
#include <cuda_runtime.h>
#include <stddef.h>

#ifndef STENCIL
#define STENCIL 3
#endif
#ifndef DOUBLE
#define DOUBLE 0
#endif
#ifndef T
#define T 2
#endif
#ifndef LAG
#define LAG 3
#endif
#ifndef TYN
#define TYN 32
#endif
#ifndef ZCN
#define ZCN 128
#endif

namespace {
#if DOUBLE
typedef double real;
typedef double2 vec;
constexpr int V = 2;
__device__ __forceinline__ real at(const vec &v, int i) { return i == 0 ? v.x : v.y; }
__device__ __forceinline__ vec make(const real (&o)[V]) { return make_double2(o[0], o[1]); }
#else
typedef float real;
typedef float4 vec;
constexpr int V = 4;
__device__ __forceinline__ real at(const vec &v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }
__device__ __forceinline__ vec make(const real (&o)[V]) { return make_float4(o[0], o[1], o[2], o[3]); }
#endif
__device__ __forceinline__ vec zero()
{
    real o[V] = {};
    return make(o);
}

/* The update of one cell from its centre and the sums of its pairs of
   neighbours at distance k along z, y and x (index k - 1). */
#if STENCIL == 1
constexpr int R = 1;
__device__ __forceinline__ real update(real c, const real *z, const real *y, const real *x)
{
    return (real(0.4) * z[0] + real(0.6) * y[0] + real(0.8) * x[0] + real(1.0) * c) * real(1.0 / 4.6);
}
#elif STENCIL == 2
constexpr int R = 2;
__device__ __forceinline__ real update(real c, const real *z, const real *y, const real *x)
{
    return (real(0.3) * z[1] + real(0.8) * z[0] + real(0.35) * y[1] + real(0.9) * y[0] + real(0.4) * x[1] + real(1.0) * x[0] + real(1.2) * c) * real(1.0 / 8.7);
}
#else
constexpr int R = 4;
__device__ __forceinline__ real update(real c, const real *z, const real *y, const real *x)
{
    real a[R];
#pragma unroll
    for (int k = 0; k < R; ++k)
        a[k] = z[k] + y[k] + x[k];
    return c + real(0.05) * (real(3.0) * real(-2.847222222) * c + (real(1.6) * a[0] + real(-0.2) * a[1] + real(0.025396825) * a[2] + real(-0.001785714) * a[3]));
}
#endif

constexpr int WN = 2 * R + 1;                   /* window planes */
constexpr int TX = 64 / V, TY = TYN, H = TY, PADX = (R + V - 1) / V * V, PW = 64 + 2 * PADX, PH = H + 2 * R;
constexpr int HALO = R * T;                     /* recomputed cells on each side */
/* The tile's first `x` is blockIdx.x * OX + ALIGN0: R - HALO (the first cell
   the stored region needs) rounded down to a whole vector. */
constexpr int ALIGN0 = -((HALO - R + V - 1) / V) * V;
constexpr int OX = (64 + ALIGN0 - R - HALO) / V * V; /* stored cells along `x` */
constexpr int OY = H - 2 * HALO;
constexpr int L = LAG, S = 2 * L, ZC = ZCN;
static_assert(L <= R + 1, "a window holds the published plane only up to LAG = R + 1");
static_assert(OX > 0 && OY > 0, "the tile stores nothing");

__device__ __forceinline__ int slot(int z) { return (z + 64 * S) % S; }

typedef vec Win[WN];

/* One level at one plane, from the window of the level below (logical m at
   physical (m + PHASE) % WN, centre R) and its ring plane rg. */
template <int PHASE>
__device__ __forceinline__ vec level(const Win &win, const real (*rg)[PW], int row, int col, const bool (&keep)[V])
{
    const vec c = win[(R + PHASE) % WN];
    vec left[(R + V - 1) / V], right[(R + V - 1) / V], up[R], dn[R];
#pragma unroll
    for (int i = 0; i < (R + V - 1) / V; ++i) {
        left[i] = *(const vec *)&rg[row][col - V * (i + 1)];
        right[i] = *(const vec *)&rg[row][col + V * (i + 1)];
    }
#pragma unroll
    for (int k = 1; k <= R; ++k) {
        up[k - 1] = *(const vec *)&rg[row - k][col];
        dn[k - 1] = *(const vec *)&rg[row + k][col];
    }
    real o[V];
#pragma unroll
    for (int e = 0; e < V; ++e) {
        real z[R], y[R], x[R];
#pragma unroll
        for (int k = 1; k <= R; ++k) {
            const int l = e - k, r = e + k;
            const real xl = l >= 0 ? at(c, l) : at(left[(-l - 1) / V], (l % V + V) % V);
            const real xr = r < V ? at(c, r) : at(right[r / V - 1], r % V);
            z[k - 1] = at(win[(R - k + PHASE) % WN], e) + at(win[(R + k + PHASE) % WN], e);
            y[k - 1] = at(up[k - 1], e) + at(dn[k - 1], e);
            x[k - 1] = xl + xr;
        }
        const real ce = at(c, e);
        const real u = update(ce, z, y, x); /* computed everywhere: a select, not a branch */
        o[e] = keep[e] ? ce : u;
    }
    return make(o);
}

struct Ctx {
    int n0, s0, s1, i1, i2, z0, z1, p0, levels, row, col;
    bool grid;
    unsigned inside, own, need; /* bits: element e inside the grid's interior, element e stored, level s computed */
};

template <int PHASE>
__device__ __forceinline__ void iteration(const Ctx &k, int p, vec &ahead, Win (&w)[T], real (*ring)[S][PH][PW],
                                          real *__restrict__ out, const real *__restrict__ in)
{
    /* w[s][(m + PHASE) % WN]: level s at plane p - WN - (R + 1) * s + m. */
    const vec cell = ahead;
    {
        const int z = p + 1;
        ahead = z >= 0 && z < k.n0 && k.grid ? __ldg((const vec *)&in[z * k.s0 + k.i1 * k.s1 + k.i2]) : zero();
    }
    /* The last level, at plane p - (R + 1) * T: stored. */
    {
        const int q = p - (R + 1) * T;
        if ((k.need >> T & 1) && q >= k.z0 && q < k.z1) {
            const bool step = T <= k.levels && q >= R && q < k.n0 - R;
            bool keep[V];
#pragma unroll
            for (int e = 0; e < V; ++e)
                keep[e] = !(step && (k.inside >> e & 1));
            const vec v = level<PHASE>(w[T - 1], ring[T - 1][slot(q)], k.row, k.col, keep);
            if (k.own == (1u << V) - 1) {
                *(vec *)&out[q * k.s0 + k.i1 * k.s1 + k.i2] = v;
            } else if (k.own) {
                real *o = &out[q * k.s0 + k.i1 * k.s1 + k.i2];
#pragma unroll
                for (int e = 0; e < V; ++e)
                    if (k.own >> e & 1)
                        o[e] = at(v, e);
            }
        }
    }
    /* Levels T - 1 .. 1 at planes p - (R + 1) * s: to their window and ring. */
#pragma unroll
    for (int s = T - 1; s >= 1; --s) {
        if (k.need >> s & 1) {
            const int q = p - (R + 1) * s;
            const bool step = s <= k.levels && q >= R && q < k.n0 - R;
            bool keep[V];
#pragma unroll
            for (int e = 0; e < V; ++e)
                keep[e] = !(step && (k.inside >> e & 1));
            w[s][PHASE] = level<PHASE>(w[s - 1], ring[s - 1][slot(q)], k.row, k.col, keep);
            *(vec *)&ring[s][slot(q - (R + 1) + L)][k.row][k.col] = w[s][(R + L + PHASE) % WN];
        }
    }
    w[0][PHASE] = cell;
    *(vec *)&ring[0][slot(p - (R + 1) + L)][k.row][k.col] = w[0][(R + L + PHASE) % WN];
    if ((WN % L == 0 ? PHASE % L : (p - k.p0) % L) == L - 1)
        __syncthreads();
}

template <int PHASE>
__device__ __forceinline__ bool phase(const Ctx &k, int &p, int end, vec &ahead, Win (&w)[T], real (*ring)[S][PH][PW],
                                      real *__restrict__ out, const real *__restrict__ in)
{
    iteration<PHASE>(k, p, ahead, w, ring, out, in);
    return ++p < end;
}

template <int... P>
struct Phases;
template <>
struct Phases<> {
    static __device__ __forceinline__ bool run(const Ctx &, int &, int, vec &, Win (&)[T], real (*)[S][PH][PW], real *, const real *) { return true; }
};
template <int P0, int... P>
struct Phases<P0, P...> {
    static __device__ __forceinline__ bool run(const Ctx &k, int &p, int end, vec &ahead, Win (&w)[T], real (*ring)[S][PH][PW],
                                               real *__restrict__ out, const real *__restrict__ in)
    {
        return phase<P0>(k, p, end, ahead, w, ring, out, in) && Phases<P...>::run(k, p, end, ahead, w, ring, out, in);
    }
};
template <int N, int... P>
struct Seq : Seq<N - 1, N - 1, P...> {};
template <int... P>
struct Seq<0, P...> {
    typedef Phases<P...> type;
};

__global__ void __launch_bounds__(TX * TY) stencils_cuda__proto_kernel(int n0, int n1, int n2, real *__restrict__ out, const real *__restrict__ in, int levels)
{
    Ctx k;
    const int tx = threadIdx.x, ty = threadIdx.y, warp = (ty * TX + tx) >> 5;
    k.n0 = n0; k.s0 = n1 * n2; k.s1 = n2; k.levels = levels;
    const int stored_x = R + (int)blockIdx.x * OX; /* the block's first stored `x` */
    k.i2 = (int)blockIdx.x * OX + ALIGN0 + V * tx;
    k.i1 = R + (int)blockIdx.y * OY - HALO + ty;
    k.row = R + ty;
    k.col = PADX + V * tx;
    k.z0 = R + (int)blockIdx.z * ZC;
    k.z1 = min(k.z0 + ZC, n0 - R);
    const bool gy = k.i1 >= 0 && k.i1 < n1, iy = k.i1 >= R && k.i1 < n1 - R;
    const bool oy = iy && ty >= HALO && ty < H - HALO;
    k.grid = gy && k.i2 >= 0 && k.i2 < n2;
    k.inside = k.own = 0;
#pragma unroll
    for (int e = 0; e < V; ++e) {
        const int x = k.i2 + e;
        const bool in = iy && x >= R && x < n2 - R;
        k.inside |= (unsigned)in << e;
        k.own |= (unsigned)(oy && in && x >= stored_x && x < stored_x + OX) << e;
    }
    /* The rows of this warp: [a, b); level s is needed in rows [R s, H - R s). */
    const int a = warp * 32 / TX, b = ((warp + 1) * 32 - 1) / TX + 1;
    k.need = 0;
#pragma unroll
    for (int s = 0; s <= T; ++s)
        k.need |= (unsigned)(b > R * s && a < H - R * s) << s;
    extern __shared__ __align__(16) unsigned char shared[];
    real(*ring)[S][PH][PW] = (real(*)[S][PH][PW])shared;
    for (int e = ty * TX + tx; e < T * S * PH * PW; e += TX * TY)
        (&ring[0][0][0][0])[e] = 0;
    __syncthreads();
    Win w[T];
#pragma unroll
    for (int s = 0; s < T; ++s)
#pragma unroll
        for (int m = 0; m < WN; ++m)
            w[s][m] = zero();
    int p = k.z0 - HALO;
    k.p0 = p;
    vec ahead = p >= 0 && k.grid ? __ldg((const vec *)&in[p * k.s0 + k.i1 * k.s1 + k.i2]) : zero();
    const int end = k.z1 + (R + 1) * T;
    while (Seq<WN>::type::run(k, p, end, ahead, w, ring, out, in)) {
    }
}
} // namespace

extern "C" int stencils_cuda__NAME__update_u(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, real *out, const real *cur_u, int levels)
{
    (void)cudaGetLastError();
    if (n2 % V != 0)
        return (int)cudaErrorInvalidValue;
    const dim3 block(TX, TY);
    const dim3 grid((unsigned)((n2 - 2 * R + OX - 1) / OX), (unsigned)((n1 - 2 * R + OY - 1) / OY), (unsigned)((n0 - 2 * R + ZC - 1) / ZC));
    const size_t bytes = (size_t)T * S * PH * PW * sizeof(real);
    if (bytes > 48 * 1024)
        cudaFuncSetAttribute(stencils_cuda__proto_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    stencils_cuda__proto_kernel<<<grid, block, bytes>>>((int)n0, (int)n1, (int)n2, out, cur_u, levels);
    return (int)cudaGetLastError();
}
