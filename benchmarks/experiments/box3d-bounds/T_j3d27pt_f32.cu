/*
 * j3d27pt f32, 2 fused steps: a hand-written variant of `auto`'s kernel
 * (A_j3d27pt_f32.cu of gen.sh) in which each thread owns 2 columns of 4 rows
 * (README.md, "Two columns a thread"). Blocks of 32 x 8 threads cover tiles
 * of 64 x 32 cells, the outer 2 on each side recomputed, not stored.
 *
 * The rings hold each row as two halves, the threads' first columns and
 * their second ones, so that a warp reads a neighbour column as 32
 * consecutive words: the column left of a thread's pair is the second half
 * at tx - 1, the one right of it the first half at tx + 1; its own two
 * columns come from its registers but in the rows above and below it.
 * README.md has its ring loads a cell and level against the generated
 * kernel's. The sums keep the generated kernel's order, so the grids should
 * match A's bit for bit.
 */
#include <cuda_runtime.h>
#include <stddef.h>

/* Row length of a ring plane: two halves of 32 columns, each with a pad on both sides. */
#define HALF 34
#define ROW (2 * HALF)
/* Bytes of the rings: 2 levels x 4 planes x 34 rows x ROW floats. */
#define RING_BYTES (2 * 4 * 34 * ROW * 4)

/* Level s - 1 at plane q + DZ, row j + DY, column k + DX of this thread's pair:
   its registers where the cell is its own, else the ring. */
#define U(DZ, DY, DX)                                                                              \
    ((j + (DY) >= 0 && j + (DY) < 4 && k + (DX) >= 0 && k + (DX) < 2)                           \
         ? win[s - 1][1 + (DZ)][(j + (DY)) & 3][(k + (DX)) & 1]                                 \
         : ring[s - 1][at[1 + (DZ)]][ty * 4 + j + 1 + (DY)][ring_col(k + (DX))])

template <int CHUNK>
static __global__ void __launch_bounds__(256, 2) t_j3d27pt_kernel(const int n0, const int n1, const int n2, float *__restrict__ out, const float *__restrict__ cur_u, int levels, int chunk)
{
    const int s0 = n1 * n2;
    const int s1 = n2;
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    /* The thread's first column and first row. */
    const int i2 = 1 + (int)blockIdx.x * 60 - 2 + tx * 2;
    const int i1 = 1 + (int)blockIdx.y * 28 - 2 + ty * 4;
    const int span = CHUNK > 0 ? CHUNK : chunk;
    const int z0 = 1 + (int)blockIdx.z * span;
    const int z1 = z0 + span < n0 - 1 ? z0 + span : n0 - 1;
    /* Bit 2 j + k: cell (row j, column k) in the region (in_cells) and the tile's own part (own_cells). */
    unsigned in_cells = 0, own_cells = 0;
    int cell_at[4][2]; /* the cell's offset in a plane, clamped to the grid */
    #pragma unroll
    for (int k = 0; k < 2; ++k) {
        const int c2 = i2 + k;
        const bool in_x = c2 >= 1 && c2 < n2 - 1;
        const bool own_x = in_x && tx * 2 + k >= 2 && tx * 2 + k < 62;
        const int x = c2 < 0 ? 0 : c2 < n2 ? c2 : n2 - 1;
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int c1 = i1 + j;
            const bool in_y = c1 >= 1 && c1 < n1 - 1;
            in_cells |= (unsigned)(in_x && in_y) << (2 * j + k);
            own_cells |= (unsigned)(own_x && in_y && ty * 4 + j >= 2 && ty * 4 + j < 30) << (2 * j + k);
            cell_at[j][k] = (c1 < 0 ? 0 : c1 < n1 ? c1 : n1 - 1) * s1 + x;
        }
    }
    /* Column m of the thread's pair (-1 to 2) in a ring row. */
    auto ring_col = [tx](int m) -> int {
        return m == -1 ? HALF + tx : m == 2 ? tx + 2 : m * HALF + tx + 1;
    };
    extern __shared__ __align__(16) unsigned char shared[];
    float (*const ring)[4][34][ROW] = (float (*)[4][34][ROW])shared;
    for (int e = ty * 32 + tx; e < RING_BYTES / 4; e += 256)
        (&ring[0][0][0][0])[e] = 0;
    __syncthreads();
    /* win[s][m][j][k]: level s at plane p - 1 - 2 * s - 2 + m, at the start of iteration p. */
    float win[2][3][4][2] = {};
    unsigned slot = (unsigned)(((z0 - 2) % 4 + 4) % 4); /* ring slot of plane p */
    float ahead[4][2];
    {
        const int z = z0 - 2;
        const int plane_at = (z < 0 ? 0 : z < n0 ? z : n0 - 1) * s0;
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            #pragma unroll
            for (int k = 0; k < 2; ++k)
                ahead[j][k] = cur_u[plane_at + cell_at[j][k]];
    }
    #pragma unroll 3
    for (int p = z0 - 2; p < z1 + 4; ++p) {
        float cell[4][2];
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            #pragma unroll
            for (int k = 0; k < 2; ++k)
                cell[j][k] = ahead[j][k];
        {
            const int z = p + 1;
            const int plane_at = (z < 0 ? 0 : z < n0 ? z : n0 - 1) * s0;
            #pragma unroll
            for (int j = 0; j < 4; ++j)
                #pragma unroll
                for (int k = 0; k < 2; ++k)
                    ahead[j][k] = cur_u[plane_at + cell_at[j][k]];
        }
        /* Level s at plane q = p - 2 * s, from what level s - 1 finished in earlier iterations. */
        #pragma unroll
        for (int s = 2; s >= 1; --s) {
            const int q = p - 2 * s;
            const bool step = s <= levels && q >= 1 && q < n0 - 1;
            const unsigned at[3] = {(slot + 7 - 2 * s) % 4, (slot + 8 - 2 * s) % 4, (slot + 9 - 2 * s) % 4};
            float next[4][2];
            #pragma unroll
            for (int j = 0; j < 4; ++j) {
                #pragma unroll
                for (int k = 0; k < 2; ++k) {
                    const float u = (0.5f * U(-1, -1, -1) + 0.53f * U(-1, -1, 0) + 0.56f * U(-1, -1, 1) + 0.59f * U(-1, 0, -1) + 0.62f * U(-1, 0, 0) + 0.65f * U(-1, 0, 1) + 0.68f * U(-1, 1, -1) + 0.71f * U(-1, 1, 0) + 0.74f * U(-1, 1, 1) + 0.77f * U(0, -1, -1) + 0.8f * U(0, -1, 0) + 0.83f * U(0, -1, 1) + 0.86f * U(0, 0, -1) + 0.89f * U(0, 0, 0) + 0.92f * U(0, 0, 1) + 0.95f * U(0, 1, -1) + 0.98f * U(0, 1, 0) + 1.01f * U(0, 1, 1) + 1.04f * U(1, -1, -1) + 1.07f * U(1, -1, 0) + 1.1f * U(1, -1, 1) + 1.13f * U(1, 0, -1) + 1.16f * U(1, 0, 0) + 1.19f * U(1, 0, 1) + 1.22f * U(1, 1, -1) + 1.25f * U(1, 1, 0) + 1.28f * U(1, 1, 1)) * 0.041614648f /* 1 / 24.03f */;
                    next[j][k] = step && (in_cells >> (2 * j + k) & 1u) ? u : win[s - 1][1][j][k];
                }
            }
            if (s == 2) {
                if (q >= z0 && q < z1) {
                    #pragma unroll
                    for (int j = 0; j < 4; ++j)
                        #pragma unroll
                        for (int k = 0; k < 2; ++k)
                            if (own_cells >> (2 * j + k) & 1u)
                                out[q * s0 + (i1 + j) * s1 + i2 + k] = next[j][k];
                }
            } else {
                #pragma unroll
                for (int j = 0; j < 4; ++j)
                    #pragma unroll
                    for (int k = 0; k < 2; ++k) {
                        win[s][0][j][k] = win[s][1][j][k];
                        win[s][1][j][k] = win[s][2][j][k];
                        win[s][2][j][k] = next[j][k];
                        ring[s][(slot + 8 - 2 * s) % 4][ty * 4 + j + 1][k * HALF + tx + 1] = next[j][k];
                    }
            }
        }
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            #pragma unroll
            for (int k = 0; k < 2; ++k) {
                win[0][0][j][k] = win[0][1][j][k];
                win[0][1][j][k] = win[0][2][j][k];
                win[0][2][j][k] = cell[j][k];
                ring[0][(slot + 8) % 4][ty * 4 + j + 1][k * HALF + tx + 1] = cell[j][k];
            }
        slot = slot + 1 == 4 ? 0 : slot + 1;
        __syncthreads();
    }
}

/* Fused launches of 1 or 2 steps on grids of at most 2^30 cells (the harness's); chunks as A's launcher picks them. */
extern "C" int stencils_cuda__j3d27pt__update_u(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, float *out, const float *cur_u, int levels, cudaStream_t stream)
{
    (void)cudaGetLastError();
    if (n0 * n1 * n2 > 1073741824 || levels < 1 || levels > 2)
        return (int)cudaErrorInvalidValue;
    for (auto *k : {t_j3d27pt_kernel<128>, t_j3d27pt_kernel<0>}) {
        const cudaError_t allowed = cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize, RING_BYTES);
        if (allowed != cudaSuccess)
            return (int)allowed;
    }
    int device = 0, multiprocessors = 0, per_multiprocessor = 0;
    cudaError_t status = cudaGetDevice(&device);
    if (status == cudaSuccess)
        status = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
    if (status == cudaSuccess)
        status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, t_j3d27pt_kernel<0>, 256, RING_BYTES);
    if (status != cudaSuccess)
        return (int)status;
    const ptrdiff_t cells = n0 - 2, across = ((n2 - 2 + 60 - 1) / 60) * ((n1 - 2 + 28 - 1) / 28);
    const ptrdiff_t parts = across > 0 ? (ptrdiff_t)multiprocessors * per_multiprocessor / across : 0;
    const int chunk = cells > 0 && parts > (cells + 128 - 1) / 128 ? (int)((cells + parts - 1) / parts) : 128;
    auto *const kernel = chunk == 128 ? t_j3d27pt_kernel<128> : t_j3d27pt_kernel<0>;
    const dim3 block(32, 8);
    const dim3 grid((unsigned)((n2 - 2 + 60 - 1) / 60), (unsigned)((n1 - 2 + 28 - 1) / 28), (unsigned)((cells + chunk - 1) / chunk));
    kernel<<<grid, block, RING_BYTES, stream>>>((int)n0, (int)n1, (int)n2, out, cur_u, levels, chunk);
    return (int)cudaGetLastError();
}
