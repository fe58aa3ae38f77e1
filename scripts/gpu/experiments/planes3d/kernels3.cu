#include <cuda_runtime.h>
#include <stddef.h>
#include "drv.h"
static __global__ void __launch_bounds__(256) kern_f32_1_8_32_base(const int n0, const int n1, const int n2, float *__restrict__ out, const float *__restrict__ cur_u, int levels)
{
    const int s0 = n1 * n2;
    const int s1 = n2;
    /* This block's tile: 32 threads along `x` by 8 along `y` (4 rows each): 32 x 32 cells, the outer 3 and 3 on each side recomputed, not stored. */
    const int i2 = 1 + (int)blockIdx.x * 26 - 3 + threadIdx.x;
    const int i1 = 1 + (int)blockIdx.y * 26 - 3 + threadIdx.y * 4;
    const int z0 = 1 + (int)blockIdx.z * 128;
    const int z1 = z0 + 128 < n0 - 1 ? z0 + 128 : n0 - 1;
    const bool grid_x = i2 >= 0 && i2 < n2, in_x = i2 >= 1 && i2 < n2 - 1;
    const bool own_x = in_x && threadIdx.x >= 3 && threadIdx.x < 29;
    bool grid_y[4], in_y[4], own_y[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int c = i1 + j;
        grid_y[j] = c >= 0 && c < n1;
        in_y[j] = c >= 1 && c < n1 - 1;
        own_y[j] = in_y[j] && threadIdx.y * 4 + j >= 3 && threadIdx.y * 4 + j < 29;
    }
    /* ring[s][m]: level s at the planes whose index is m modulo 2, row and column offset by the pad of 1 and 1. */
    extern __shared__ __align__(16) unsigned char shared[];
    float (*const ring)[2][34][34] = (float (*)[2][34][34])shared;
    for (int e = threadIdx.y * 32 + threadIdx.x; e < 6936; e += 256)
        (&ring[0][0][0][0])[e] = 0;
    __syncthreads();
    /* win[s][m][j]: the thread's row j of level s at plane p - 1 - 2 * s - 2 + m, at the start of iteration p. */
    float win[3][3][4] = {};
    int slot = (int)(((z0 - 3) % 2 + 2) % 2); /* ring slot of plane p */
    /* ahead: the thread's rows of the plane the next iteration computes from. */
    float ahead[4];
    {
        const int z = z0 - 3;
        const bool on_grid = z >= 0 && z < n0;
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;
    }
    for (int p = z0 - 3; p < z1 + 6; ++p) {
        /* Level 0: plane p, loaded in the iteration before; plane p + 1 loads while this one computes. */
        float cell[4];
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            cell[j] = ahead[j];
        {
            const int z = p + 1;
            const bool on_grid = z >= 0 && z < n0;
            #pragma unroll
            for (int j = 0; j < 4; ++j)
                ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;
        }
        /* Level s at plane q = p - 2 * s, from what level s - 1 finished in earlier iterations. */
        #pragma unroll
        for (int s = 3; s >= 1; --s) {
            const int q = p - 2 * s;
            const bool step = s <= levels && q >= 1 && q < n0 - 1;
            const int at0 = (slot + 10 - 2 * s) % 2; /* plane q */
            float next[4];
            #pragma unroll
            for (int j = 0; j < 4; ++j) {
                float v = win[s - 1][1][j];
                if (step && in_y[j] && in_x) {
                    v = (0.4f * win[s - 1][0][j] + 0.6f * (j >= 1 ? win[s - 1][1][j - 1] : ring[s - 1][at0][threadIdx.y * 4 + j][threadIdx.x + 1]) + 0.8f * ring[s - 1][at0][threadIdx.y * 4 + j + 1][threadIdx.x] + 1.0f * win[s - 1][1][j] + 0.8f * ring[s - 1][at0][threadIdx.y * 4 + j + 1][threadIdx.x + 2] + 0.6f * (j < 3 ? win[s - 1][1][j + 1] : ring[s - 1][at0][threadIdx.y * 4 + j + 2][threadIdx.x + 1]) + 0.4f * win[s - 1][2][j]) * 0.21739131f /* 1 / 4.6f */;
                }
                next[j] = v;
            }
            if (s == 3) {
                /* The last level: stored where it is this block's and this tile's own. */
                if (q >= z0 && q < z1) {
                    #pragma unroll
                    for (int j = 0; j < 4; ++j)
                        if (own_y[j] && own_x)
                            out[q * s0 + (i1 + j) * s1 + i2] = next[j];
                }
            } else {
                #pragma unroll
                for (int j = 0; j < 4; ++j) {
                    win[s][0][j] = win[s][1][j];
                    win[s][1][j] = win[s][2][j];
                    win[s][2][j] = next[j];
                }
                /* Level s's plane q - 1 (window plane 1) for the level above, whose next iteration reads it. */
                #pragma unroll
                for (int j = 0; j < 4; ++j)
                    ring[s][(slot + 9 - 2 * s) % 2][threadIdx.y * 4 + j + 1][threadIdx.x + 1] = win[s][1][j];
            }
        }
        /* Level 0's window moves on to plane p. */
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            win[0][0][j] = win[0][1][j];
            win[0][1][j] = win[0][2][j];
            win[0][2][j] = cell[j];
        }
        /* Level 0's plane p - 1 (window plane 1) for the level above, whose next iteration reads it. */
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            ring[0][(slot + 9) % 2][threadIdx.y * 4 + j + 1][threadIdx.x + 1] = win[0][1][j];
        slot = slot + 1 == 2 ? 0 : slot + 1;
        __syncthreads();
    }
}


static int launch_f32_1_8_32_base(int n0,int n1,int n2,float*out,const float*in,int levels){
  cudaFuncSetAttribute((const void*)kern_f32_1_8_32_base, cudaFuncAttributeMaxDynamicSharedMemorySize, 27744);
  const dim3 block(32,8); const dim3 grid((unsigned)(((n2 - 1 - 1) + 26 - 1) / 26), (unsigned)(((n1 - 1 - 1) + 26 - 1) / 26), (unsigned)(((n0 - 1 - 1) + 128 - 1) / 128));
  kern_f32_1_8_32_base<<<grid,block,27744>>>(n0,n1,n2,out,in,levels); return (int)cudaGetLastError(); }
static __global__ void __launch_bounds__(256) kern_f32_1_8_32_sel(const int n0, const int n1, const int n2, float *__restrict__ out, const float *__restrict__ cur_u, int levels)
{
    const int s0 = n1 * n2;
    const int s1 = n2;
    /* This block's tile: 32 threads along `x` by 8 along `y` (4 rows each): 32 x 32 cells, the outer 3 and 3 on each side recomputed, not stored. */
    const int i2 = 1 + (int)blockIdx.x * 26 - 3 + threadIdx.x;
    const int i1 = 1 + (int)blockIdx.y * 26 - 3 + threadIdx.y * 4;
    const int z0 = 1 + (int)blockIdx.z * 128;
    const int z1 = z0 + 128 < n0 - 1 ? z0 + 128 : n0 - 1;
    const bool grid_x = i2 >= 0 && i2 < n2, in_x = i2 >= 1 && i2 < n2 - 1;
    const bool own_x = in_x && threadIdx.x >= 3 && threadIdx.x < 29;
    bool grid_y[4], in_y[4], own_y[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int c = i1 + j;
        grid_y[j] = c >= 0 && c < n1;
        in_y[j] = c >= 1 && c < n1 - 1;
        own_y[j] = in_y[j] && threadIdx.y * 4 + j >= 3 && threadIdx.y * 4 + j < 29;
    }
    /* ring[s][m]: level s at the planes whose index is m modulo 2, row and column offset by the pad of 1 and 1. */
    extern __shared__ __align__(16) unsigned char shared[];
    float (*const ring)[2][34][34] = (float (*)[2][34][34])shared;
    for (int e = threadIdx.y * 32 + threadIdx.x; e < 6936; e += 256)
        (&ring[0][0][0][0])[e] = 0;
    __syncthreads();
    /* win[s][m][j]: the thread's row j of level s at plane p - 1 - 2 * s - 2 + m, at the start of iteration p. */
    float win[3][3][4] = {};
    int slot = (int)(((z0 - 3) % 2 + 2) % 2); /* ring slot of plane p */
    /* ahead: the thread's rows of the plane the next iteration computes from. */
    float ahead[4];
    {
        const int z = z0 - 3;
        const bool on_grid = z >= 0 && z < n0;
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;
    }
    for (int p = z0 - 3; p < z1 + 6; ++p) {
        /* Level 0: plane p, loaded in the iteration before; plane p + 1 loads while this one computes. */
        float cell[4];
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            cell[j] = ahead[j];
        {
            const int z = p + 1;
            const bool on_grid = z >= 0 && z < n0;
            #pragma unroll
            for (int j = 0; j < 4; ++j)
                ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;
        }
        /* Level s at plane q = p - 2 * s, from what level s - 1 finished in earlier iterations. */
        #pragma unroll
        for (int s = 3; s >= 1; --s) {
            const int q = p - 2 * s;
            const bool step = s <= levels && q >= 1 && q < n0 - 1;
            const int at0 = (slot + 10 - 2 * s) % 2; /* plane q */
            float next[4];
            #pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float u = (0.4f * win[s - 1][0][j] + 0.6f * (j >= 1 ? win[s - 1][1][j - 1] : ring[s - 1][at0][threadIdx.y * 4 + j][threadIdx.x + 1]) + 0.8f * ring[s - 1][at0][threadIdx.y * 4 + j + 1][threadIdx.x] + 1.0f * win[s - 1][1][j] + 0.8f * ring[s - 1][at0][threadIdx.y * 4 + j + 1][threadIdx.x + 2] + 0.6f * (j < 3 ? win[s - 1][1][j + 1] : ring[s - 1][at0][threadIdx.y * 4 + j + 2][threadIdx.x + 1]) + 0.4f * win[s - 1][2][j]) * 0.21739131f /* 1 / 4.6f */;
                next[j] = step && in_y[j] && in_x ? u : win[s - 1][1][j];
            }
            if (s == 3) {
                /* The last level: stored where it is this block's and this tile's own. */
                if (q >= z0 && q < z1) {
                    #pragma unroll
                    for (int j = 0; j < 4; ++j)
                        if (own_y[j] && own_x)
                            out[q * s0 + (i1 + j) * s1 + i2] = next[j];
                }
            } else {
                #pragma unroll
                for (int j = 0; j < 4; ++j) {
                    win[s][0][j] = win[s][1][j];
                    win[s][1][j] = win[s][2][j];
                    win[s][2][j] = next[j];
                }
                /* Level s's plane q - 1 (window plane 1) for the level above, whose next iteration reads it. */
                #pragma unroll
                for (int j = 0; j < 4; ++j)
                    ring[s][(slot + 9 - 2 * s) % 2][threadIdx.y * 4 + j + 1][threadIdx.x + 1] = win[s][1][j];
            }
        }
        /* Level 0's window moves on to plane p. */
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            win[0][0][j] = win[0][1][j];
            win[0][1][j] = win[0][2][j];
            win[0][2][j] = cell[j];
        }
        /* Level 0's plane p - 1 (window plane 1) for the level above, whose next iteration reads it. */
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            ring[0][(slot + 9) % 2][threadIdx.y * 4 + j + 1][threadIdx.x + 1] = win[0][1][j];
        slot = slot + 1 == 2 ? 0 : slot + 1;
        __syncthreads();
    }
}


static int launch_f32_1_8_32_sel(int n0,int n1,int n2,float*out,const float*in,int levels){
  cudaFuncSetAttribute((const void*)kern_f32_1_8_32_sel, cudaFuncAttributeMaxDynamicSharedMemorySize, 27744);
  const dim3 block(32,8); const dim3 grid((unsigned)(((n2 - 1 - 1) + 26 - 1) / 26), (unsigned)(((n1 - 1 - 1) + 26 - 1) / 26), (unsigned)(((n0 - 1 - 1) + 128 - 1) / 128));
  kern_f32_1_8_32_sel<<<grid,block,27744>>>(n0,n1,n2,out,in,levels); return (int)cudaGetLastError(); }
static __global__ void __launch_bounds__(256) kern_f32_1_8_32_unroll(const int n0, const int n1, const int n2, float *__restrict__ out, const float *__restrict__ cur_u, int levels)
{
    const int s0 = n1 * n2;
    const int s1 = n2;
    /* This block's tile: 32 threads along `x` by 8 along `y` (4 rows each): 32 x 32 cells, the outer 3 and 3 on each side recomputed, not stored. */
    const int i2 = 1 + (int)blockIdx.x * 26 - 3 + threadIdx.x;
    const int i1 = 1 + (int)blockIdx.y * 26 - 3 + threadIdx.y * 4;
    const int z0 = 1 + (int)blockIdx.z * 128;
    const int z1 = z0 + 128 < n0 - 1 ? z0 + 128 : n0 - 1;
    const bool grid_x = i2 >= 0 && i2 < n2, in_x = i2 >= 1 && i2 < n2 - 1;
    const bool own_x = in_x && threadIdx.x >= 3 && threadIdx.x < 29;
    bool grid_y[4], in_y[4], own_y[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int c = i1 + j;
        grid_y[j] = c >= 0 && c < n1;
        in_y[j] = c >= 1 && c < n1 - 1;
        own_y[j] = in_y[j] && threadIdx.y * 4 + j >= 3 && threadIdx.y * 4 + j < 29;
    }
    /* ring[s][m]: level s at the planes whose index is m modulo 2, row and column offset by the pad of 1 and 1. */
    extern __shared__ __align__(16) unsigned char shared[];
    float (*const ring)[2][34][34] = (float (*)[2][34][34])shared;
    for (int e = threadIdx.y * 32 + threadIdx.x; e < 6936; e += 256)
        (&ring[0][0][0][0])[e] = 0;
    __syncthreads();
    /* win[s][m][j]: the thread's row j of level s at plane p - 1 - 2 * s - 2 + m, at the start of iteration p. */
    float win[3][3][4] = {};
    int slot = (int)(((z0 - 3) % 2 + 2) % 2); /* ring slot of plane p */
    /* ahead: the thread's rows of the plane the next iteration computes from. */
    float ahead[4];
    {
        const int z = z0 - 3;
        const bool on_grid = z >= 0 && z < n0;
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;
    }
    #pragma unroll 3
    for (int p = z0 - 3; p < z1 + 6; ++p) {
        /* Level 0: plane p, loaded in the iteration before; plane p + 1 loads while this one computes. */
        float cell[4];
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            cell[j] = ahead[j];
        {
            const int z = p + 1;
            const bool on_grid = z >= 0 && z < n0;
            #pragma unroll
            for (int j = 0; j < 4; ++j)
                ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;
        }
        /* Level s at plane q = p - 2 * s, from what level s - 1 finished in earlier iterations. */
        #pragma unroll
        for (int s = 3; s >= 1; --s) {
            const int q = p - 2 * s;
            const bool step = s <= levels && q >= 1 && q < n0 - 1;
            const int at0 = (slot + 10 - 2 * s) % 2; /* plane q */
            float next[4];
            #pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float u = (0.4f * win[s - 1][0][j] + 0.6f * (j >= 1 ? win[s - 1][1][j - 1] : ring[s - 1][at0][threadIdx.y * 4 + j][threadIdx.x + 1]) + 0.8f * ring[s - 1][at0][threadIdx.y * 4 + j + 1][threadIdx.x] + 1.0f * win[s - 1][1][j] + 0.8f * ring[s - 1][at0][threadIdx.y * 4 + j + 1][threadIdx.x + 2] + 0.6f * (j < 3 ? win[s - 1][1][j + 1] : ring[s - 1][at0][threadIdx.y * 4 + j + 2][threadIdx.x + 1]) + 0.4f * win[s - 1][2][j]) * 0.21739131f /* 1 / 4.6f */;
                next[j] = step && in_y[j] && in_x ? u : win[s - 1][1][j];
            }
            if (s == 3) {
                /* The last level: stored where it is this block's and this tile's own. */
                if (q >= z0 && q < z1) {
                    #pragma unroll
                    for (int j = 0; j < 4; ++j)
                        if (own_y[j] && own_x)
                            out[q * s0 + (i1 + j) * s1 + i2] = next[j];
                }
            } else {
                #pragma unroll
                for (int j = 0; j < 4; ++j) {
                    win[s][0][j] = win[s][1][j];
                    win[s][1][j] = win[s][2][j];
                    win[s][2][j] = next[j];
                }
                /* Level s's plane q - 1 (window plane 1) for the level above, whose next iteration reads it. */
                #pragma unroll
                for (int j = 0; j < 4; ++j)
                    ring[s][(slot + 9 - 2 * s) % 2][threadIdx.y * 4 + j + 1][threadIdx.x + 1] = win[s][1][j];
            }
        }
        /* Level 0's window moves on to plane p. */
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            win[0][0][j] = win[0][1][j];
            win[0][1][j] = win[0][2][j];
            win[0][2][j] = cell[j];
        }
        /* Level 0's plane p - 1 (window plane 1) for the level above, whose next iteration reads it. */
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            ring[0][(slot + 9) % 2][threadIdx.y * 4 + j + 1][threadIdx.x + 1] = win[0][1][j];
        slot = slot + 1 == 2 ? 0 : slot + 1;
        __syncthreads();
    }
}


static int launch_f32_1_8_32_unroll(int n0,int n1,int n2,float*out,const float*in,int levels){
  cudaFuncSetAttribute((const void*)kern_f32_1_8_32_unroll, cudaFuncAttributeMaxDynamicSharedMemorySize, 27744);
  const dim3 block(32,8); const dim3 grid((unsigned)(((n2 - 1 - 1) + 26 - 1) / 26), (unsigned)(((n1 - 1 - 1) + 26 - 1) / 26), (unsigned)(((n0 - 1 - 1) + 128 - 1) / 128));
  kern_f32_1_8_32_unroll<<<grid,block,27744>>>(n0,n1,n2,out,in,levels); return (int)cudaGetLastError(); }
static __global__ void __launch_bounds__(256) kern_f32_1_8_32_nomask(const int n0, const int n1, const int n2, float *__restrict__ out, const float *__restrict__ cur_u, int levels)
{
    const int s0 = n1 * n2;
    const int s1 = n2;
    /* This block's tile: 32 threads along `x` by 8 along `y` (4 rows each): 32 x 32 cells, the outer 3 and 3 on each side recomputed, not stored. */
    const int i2 = 1 + (int)blockIdx.x * 26 - 3 + threadIdx.x;
    const int i1 = 1 + (int)blockIdx.y * 26 - 3 + threadIdx.y * 4;
    const int z0 = 1 + (int)blockIdx.z * 128;
    const int z1 = z0 + 128 < n0 - 1 ? z0 + 128 : n0 - 1;
    const bool grid_x = i2 >= 0 && i2 < n2, in_x = i2 >= 1 && i2 < n2 - 1;
    const bool own_x = in_x && threadIdx.x >= 3 && threadIdx.x < 29;
    bool grid_y[4], in_y[4], own_y[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int c = i1 + j;
        grid_y[j] = c >= 0 && c < n1;
        in_y[j] = c >= 1 && c < n1 - 1;
        own_y[j] = in_y[j] && threadIdx.y * 4 + j >= 3 && threadIdx.y * 4 + j < 29;
    }
    /* ring[s][m]: level s at the planes whose index is m modulo 2, row and column offset by the pad of 1 and 1. */
    extern __shared__ __align__(16) unsigned char shared[];
    float (*const ring)[2][34][34] = (float (*)[2][34][34])shared;
    for (int e = threadIdx.y * 32 + threadIdx.x; e < 6936; e += 256)
        (&ring[0][0][0][0])[e] = 0;
    __syncthreads();
    /* win[s][m][j]: the thread's row j of level s at plane p - 1 - 2 * s - 2 + m, at the start of iteration p. */
    float win[3][3][4] = {};
    int slot = (int)(((z0 - 3) % 2 + 2) % 2); /* ring slot of plane p */
    /* ahead: the thread's rows of the plane the next iteration computes from. */
    float ahead[4];
    {
        const int z = z0 - 3;
        const bool on_grid = z >= 0 && z < n0;
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;
    }
    for (int p = z0 - 3; p < z1 + 6; ++p) {
        /* Level 0: plane p, loaded in the iteration before; plane p + 1 loads while this one computes. */
        float cell[4];
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            cell[j] = ahead[j];
        {
            const int z = p + 1;
            const bool on_grid = z >= 0 && z < n0;
            #pragma unroll
            for (int j = 0; j < 4; ++j)
                ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;
        }
        /* Level s at plane q = p - 2 * s, from what level s - 1 finished in earlier iterations. */
        #pragma unroll
        for (int s = 3; s >= 1; --s) {
            const int q = p - 2 * s;
            const bool step = s <= levels && q >= 1 && q < n0 - 1;
            const int at0 = (slot + 10 - 2 * s) % 2; /* plane q */
            float next[4];
            #pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float u = (0.4f * win[s - 1][0][j] + 0.6f * (j >= 1 ? win[s - 1][1][j - 1] : ring[s - 1][at0][threadIdx.y * 4 + j][threadIdx.x + 1]) + 0.8f * ring[s - 1][at0][threadIdx.y * 4 + j + 1][threadIdx.x] + 1.0f * win[s - 1][1][j] + 0.8f * ring[s - 1][at0][threadIdx.y * 4 + j + 1][threadIdx.x + 2] + 0.6f * (j < 3 ? win[s - 1][1][j + 1] : ring[s - 1][at0][threadIdx.y * 4 + j + 2][threadIdx.x + 1]) + 0.4f * win[s - 1][2][j]) * 0.21739131f /* 1 / 4.6f */;
                next[j] = step ? u : win[s - 1][1][j];
            }
            if (s == 3) {
                /* The last level: stored where it is this block's and this tile's own. */
                if (q >= z0 && q < z1) {
                    #pragma unroll
                    for (int j = 0; j < 4; ++j)
                        if (own_y[j] && own_x)
                            out[q * s0 + (i1 + j) * s1 + i2] = next[j];
                }
            } else {
                #pragma unroll
                for (int j = 0; j < 4; ++j) {
                    win[s][0][j] = win[s][1][j];
                    win[s][1][j] = win[s][2][j];
                    win[s][2][j] = next[j];
                }
                /* Level s's plane q - 1 (window plane 1) for the level above, whose next iteration reads it. */
                #pragma unroll
                for (int j = 0; j < 4; ++j)
                    ring[s][(slot + 9 - 2 * s) % 2][threadIdx.y * 4 + j + 1][threadIdx.x + 1] = win[s][1][j];
            }
        }
        /* Level 0's window moves on to plane p. */
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            win[0][0][j] = win[0][1][j];
            win[0][1][j] = win[0][2][j];
            win[0][2][j] = cell[j];
        }
        /* Level 0's plane p - 1 (window plane 1) for the level above, whose next iteration reads it. */
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            ring[0][(slot + 9) % 2][threadIdx.y * 4 + j + 1][threadIdx.x + 1] = win[0][1][j];
        slot = slot + 1 == 2 ? 0 : slot + 1;
        __syncthreads();
    }
}


static int launch_f32_1_8_32_nomask(int n0,int n1,int n2,float*out,const float*in,int levels){
  cudaFuncSetAttribute((const void*)kern_f32_1_8_32_nomask, cudaFuncAttributeMaxDynamicSharedMemorySize, 27744);
  const dim3 block(32,8); const dim3 grid((unsigned)(((n2 - 1 - 1) + 26 - 1) / 26), (unsigned)(((n1 - 1 - 1) + 26 - 1) / 26), (unsigned)(((n0 - 1 - 1) + 128 - 1) / 128));
  kern_f32_1_8_32_nomask<<<grid,block,27744>>>(n0,n1,n2,out,in,levels); return (int)cudaGetLastError(); }
static __global__ void __launch_bounds__(256) kern_f32_1_8_32_nomask_unroll(const int n0, const int n1, const int n2, float *__restrict__ out, const float *__restrict__ cur_u, int levels)
{
    const int s0 = n1 * n2;
    const int s1 = n2;
    /* This block's tile: 32 threads along `x` by 8 along `y` (4 rows each): 32 x 32 cells, the outer 3 and 3 on each side recomputed, not stored. */
    const int i2 = 1 + (int)blockIdx.x * 26 - 3 + threadIdx.x;
    const int i1 = 1 + (int)blockIdx.y * 26 - 3 + threadIdx.y * 4;
    const int z0 = 1 + (int)blockIdx.z * 128;
    const int z1 = z0 + 128 < n0 - 1 ? z0 + 128 : n0 - 1;
    const bool grid_x = i2 >= 0 && i2 < n2, in_x = i2 >= 1 && i2 < n2 - 1;
    const bool own_x = in_x && threadIdx.x >= 3 && threadIdx.x < 29;
    bool grid_y[4], in_y[4], own_y[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int c = i1 + j;
        grid_y[j] = c >= 0 && c < n1;
        in_y[j] = c >= 1 && c < n1 - 1;
        own_y[j] = in_y[j] && threadIdx.y * 4 + j >= 3 && threadIdx.y * 4 + j < 29;
    }
    /* ring[s][m]: level s at the planes whose index is m modulo 2, row and column offset by the pad of 1 and 1. */
    extern __shared__ __align__(16) unsigned char shared[];
    float (*const ring)[2][34][34] = (float (*)[2][34][34])shared;
    for (int e = threadIdx.y * 32 + threadIdx.x; e < 6936; e += 256)
        (&ring[0][0][0][0])[e] = 0;
    __syncthreads();
    /* win[s][m][j]: the thread's row j of level s at plane p - 1 - 2 * s - 2 + m, at the start of iteration p. */
    float win[3][3][4] = {};
    int slot = (int)(((z0 - 3) % 2 + 2) % 2); /* ring slot of plane p */
    /* ahead: the thread's rows of the plane the next iteration computes from. */
    float ahead[4];
    {
        const int z = z0 - 3;
        const bool on_grid = z >= 0 && z < n0;
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;
    }
    #pragma unroll 3
    for (int p = z0 - 3; p < z1 + 6; ++p) {
        /* Level 0: plane p, loaded in the iteration before; plane p + 1 loads while this one computes. */
        float cell[4];
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            cell[j] = ahead[j];
        {
            const int z = p + 1;
            const bool on_grid = z >= 0 && z < n0;
            #pragma unroll
            for (int j = 0; j < 4; ++j)
                ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;
        }
        /* Level s at plane q = p - 2 * s, from what level s - 1 finished in earlier iterations. */
        #pragma unroll
        for (int s = 3; s >= 1; --s) {
            const int q = p - 2 * s;
            const bool step = s <= levels && q >= 1 && q < n0 - 1;
            const int at0 = (slot + 10 - 2 * s) % 2; /* plane q */
            float next[4];
            #pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float u = (0.4f * win[s - 1][0][j] + 0.6f * (j >= 1 ? win[s - 1][1][j - 1] : ring[s - 1][at0][threadIdx.y * 4 + j][threadIdx.x + 1]) + 0.8f * ring[s - 1][at0][threadIdx.y * 4 + j + 1][threadIdx.x] + 1.0f * win[s - 1][1][j] + 0.8f * ring[s - 1][at0][threadIdx.y * 4 + j + 1][threadIdx.x + 2] + 0.6f * (j < 3 ? win[s - 1][1][j + 1] : ring[s - 1][at0][threadIdx.y * 4 + j + 2][threadIdx.x + 1]) + 0.4f * win[s - 1][2][j]) * 0.21739131f /* 1 / 4.6f */;
                next[j] = step ? u : win[s - 1][1][j];
            }
            if (s == 3) {
                /* The last level: stored where it is this block's and this tile's own. */
                if (q >= z0 && q < z1) {
                    #pragma unroll
                    for (int j = 0; j < 4; ++j)
                        if (own_y[j] && own_x)
                            out[q * s0 + (i1 + j) * s1 + i2] = next[j];
                }
            } else {
                #pragma unroll
                for (int j = 0; j < 4; ++j) {
                    win[s][0][j] = win[s][1][j];
                    win[s][1][j] = win[s][2][j];
                    win[s][2][j] = next[j];
                }
                /* Level s's plane q - 1 (window plane 1) for the level above, whose next iteration reads it. */
                #pragma unroll
                for (int j = 0; j < 4; ++j)
                    ring[s][(slot + 9 - 2 * s) % 2][threadIdx.y * 4 + j + 1][threadIdx.x + 1] = win[s][1][j];
            }
        }
        /* Level 0's window moves on to plane p. */
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            win[0][0][j] = win[0][1][j];
            win[0][1][j] = win[0][2][j];
            win[0][2][j] = cell[j];
        }
        /* Level 0's plane p - 1 (window plane 1) for the level above, whose next iteration reads it. */
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            ring[0][(slot + 9) % 2][threadIdx.y * 4 + j + 1][threadIdx.x + 1] = win[0][1][j];
        slot = slot + 1 == 2 ? 0 : slot + 1;
        __syncthreads();
    }
}


static int launch_f32_1_8_32_nomask_unroll(int n0,int n1,int n2,float*out,const float*in,int levels){
  cudaFuncSetAttribute((const void*)kern_f32_1_8_32_nomask_unroll, cudaFuncAttributeMaxDynamicSharedMemorySize, 27744);
  const dim3 block(32,8); const dim3 grid((unsigned)(((n2 - 1 - 1) + 26 - 1) / 26), (unsigned)(((n1 - 1 - 1) + 26 - 1) / 26), (unsigned)(((n0 - 1 - 1) + 128 - 1) / 128));
  kern_f32_1_8_32_nomask_unroll<<<grid,block,27744>>>(n0,n1,n2,out,in,levels); return (int)cudaGetLastError(); }
/* Plane p of the 3 fused steps of one tile: the levels' windows are in phase K (of 3); `slot` is plane p's ring slot. */
/* Without EDGE the thread's rows and column all lie inside the region: they are not checked. */
template <typename I, int K, bool EDGE>
static __device__ __forceinline__ void n_new_plane(const I n0, const I n1, const I n2, float *__restrict__ out, const float *__restrict__ cur_u, const int levels, const I i1, const I i2, const I z0, const I z1, const I p, const int slot, const bool grid_x, const bool in_x, const bool own_x, const bool (&grid_y)[4], const bool (&in_y)[4], const bool (&own_y)[4], float (&win)[3][3][4], float (&ahead)[4], float (*const ring)[2][34][34])
{
    const I s0 = n1 * n2;
    const I s1 = n2;
    /* Level 0: plane p, loaded in the iteration before; plane p + 1 loads while this one computes. */
    float cell[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j)
        cell[j] = ahead[j];
    {
        const I z = p + 1;
        const bool on_grid = z >= 0 && z < n0;
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            ahead[j] = on_grid && (!EDGE || (grid_y[j] && grid_x)) ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;
    }
    /* Level s at plane q = p - 2 * s, from what level s - 1 finished in earlier iterations. */
    #pragma unroll
    for (int s = 3; s >= 1; --s) {
        const I q = p - 2 * s;
        const bool step = s <= levels && q >= 1 && q < n0 - 1;
        const int at0 = (slot + 10 - 2 * s) % 2; /* plane q */
        float next[4];
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            float v = win[s - 1][(K + 1) % 3][j];
            if (step && (!EDGE || (in_y[j] && in_x))) {
                v = (0.4f * win[s - 1][K][j] + 0.6f * (j >= 1 ? win[s - 1][(K + 1) % 3][j - 1] : ring[s - 1][at0][threadIdx.y * 4 + j][threadIdx.x + 1]) + 0.8f * ring[s - 1][at0][threadIdx.y * 4 + j + 1][threadIdx.x] + 1.0f * win[s - 1][(K + 1) % 3][j] + 0.8f * ring[s - 1][at0][threadIdx.y * 4 + j + 1][threadIdx.x + 2] + 0.6f * (j < 3 ? win[s - 1][(K + 1) % 3][j + 1] : ring[s - 1][at0][threadIdx.y * 4 + j + 2][threadIdx.x + 1]) + 0.4f * win[s - 1][(K + 2) % 3][j]) * 0.21739131f /* 1 / 4.6f */;
            }
            next[j] = v;
        }
        if (s == 3) {
            /* The last level: stored where it is this block's and this tile's own. */
            if (q >= z0 && q < z1) {
                #pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (own_y[j] && own_x)
                        out[q * s0 + (i1 + j) * s1 + i2] = next[j];
            }
        } else {
            #pragma unroll
            for (int j = 0; j < 4; ++j)
                win[s][K][j] = next[j];
            /* Level s's plane q - 1 (window plane 1) for the level above, whose next iteration reads it. */
            #pragma unroll
            for (int j = 0; j < 4; ++j)
                ring[s][(slot + 9 - 2 * s) % 2][threadIdx.y * 4 + j + 1][threadIdx.x + 1] = win[s][(K + 2) % 3][j];
        }
    }
    /* Level 0's window moves on to plane p. */
    #pragma unroll
    for (int j = 0; j < 4; ++j)
        win[0][K][j] = cell[j];
    /* Level 0's plane p - 1 (window plane 1) for the level above, whose next iteration reads it. */
    #pragma unroll
    for (int j = 0; j < 4; ++j)
        ring[0][(slot + 9) % 2][threadIdx.y * 4 + j + 1][threadIdx.x + 1] = win[0][(K + 2) % 3][j];
}

static __global__ void __launch_bounds__(256) n_new_kernel(const int n0, const int n1, const int n2, float *__restrict__ out, const float *__restrict__ cur_u, int levels)
{
    const int s0 = n1 * n2;
    const int s1 = n2;
    /* This block's tile: 32 threads along `x` by 8 along `y` (4 rows each): 32 x 32 cells, the outer 3 and 3 on each side recomputed, not stored. */
    const int i2 = 1 + (int)blockIdx.x * 26 - 3 + threadIdx.x;
    const int i1 = 1 + (int)blockIdx.y * 26 - 3 + threadIdx.y * 4;
    const int z0 = 1 + (int)blockIdx.z * 128;
    const int z1 = z0 + 128 < n0 - 1 ? z0 + 128 : n0 - 1;
    const bool grid_x = i2 >= 0 && i2 < n2, in_x = i2 >= 1 && i2 < n2 - 1;
    const bool own_x = in_x && threadIdx.x >= 3 && threadIdx.x < 29;
    bool grid_y[4], in_y[4], own_y[4];
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int c = i1 + j;
        grid_y[j] = c >= 0 && c < n1;
        in_y[j] = c >= 1 && c < n1 - 1;
        own_y[j] = in_y[j] && threadIdx.y * 4 + j >= 3 && threadIdx.y * 4 + j < 29;
    }
    /* ring[s][m]: level s at the planes whose index is m modulo 2, row and column offset by the pad of 1 and 1. */
    extern __shared__ __align__(16) unsigned char shared[];
    float (*const ring)[2][34][34] = (float (*)[2][34][34])shared;
    for (int e = threadIdx.y * 32 + threadIdx.x; e < 6936; e += 256)
        (&ring[0][0][0][0])[e] = 0;
    __syncthreads();
    /* win[s][(m + K) % 3][j]: the thread's row j of level s at plane p - 1 - 2 * s - 2 + m, where phase K computes from plane p. */
    float win[3][3][4] = {};
    int slot = (int)(((z0 - 3) % 2 + 2) % 2); /* ring slot of plane p */
    /* ahead: the thread's rows of the plane the next iteration computes from. */
    float ahead[4];
    {
        const int z = z0 - 3;
        const bool on_grid = z >= 0 && z < n0;
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            ahead[j] = on_grid && grid_y[j] && grid_x ? cur_u[z * s0 + (i1 + j) * s1 + i2] : 0;
    }
    /* A thread whose rows and column all lie in the region runs its steps without checking them. */
    bool inner = in_x;
    #pragma unroll
    for (int j = 0; j < 4; ++j)
        inner = inner && in_y[j];
    /* 3 planes per iteration, one per phase of the windows (planes past z1 + 6 compute nothing stored). */
    for (int p = z0 - 3; p < z1 + 6; p += 3) {
        if (inner)
            n_new_plane<int, 0, false>(n0, n1, n2, out, cur_u, levels, i1, i2, z0, z1, p, slot, grid_x, in_x, own_x, grid_y, in_y, own_y, win, ahead, ring);
        else
            n_new_plane<int, 0, true>(n0, n1, n2, out, cur_u, levels, i1, i2, z0, z1, p, slot, grid_x, in_x, own_x, grid_y, in_y, own_y, win, ahead, ring);
        slot = slot + 1 == 2 ? 0 : slot + 1;
        __syncthreads();
        if (inner)
            n_new_plane<int, 1, false>(n0, n1, n2, out, cur_u, levels, i1, i2, z0, z1, p + 1, slot, grid_x, in_x, own_x, grid_y, in_y, own_y, win, ahead, ring);
        else
            n_new_plane<int, 1, true>(n0, n1, n2, out, cur_u, levels, i1, i2, z0, z1, p + 1, slot, grid_x, in_x, own_x, grid_y, in_y, own_y, win, ahead, ring);
        slot = slot + 1 == 2 ? 0 : slot + 1;
        __syncthreads();
        if (inner)
            n_new_plane<int, 2, false>(n0, n1, n2, out, cur_u, levels, i1, i2, z0, z1, p + 2, slot, grid_x, in_x, own_x, grid_y, in_y, own_y, win, ahead, ring);
        else
            n_new_plane<int, 2, true>(n0, n1, n2, out, cur_u, levels, i1, i2, z0, z1, p + 2, slot, grid_x, in_x, own_x, grid_y, in_y, own_y, win, ahead, ring);
        slot = slot + 1 == 2 ? 0 : slot + 1;
        __syncthreads();
    }
}

static int launch_new(int n0,int n1,int n2,float*out,const float*in,int levels){
  const dim3 block(32,8); const dim3 grid((unsigned)(((n2 - 1 - 1) + 26 - 1) / 26), (unsigned)(((n1 - 1 - 1) + 26 - 1) / 26), (unsigned)(((n0 - 1 - 1) + 128 - 1) / 128));
  n_new_kernel<<<grid,block,27744>>>(n0,n1,n2,out,in,levels); return (int)cudaGetLastError(); }
static Variant variants[] = {
  {"f32_1_8_32_new", 4, (void*)launch_new},
  {"f32_1_8_32_base", 4, (void*)launch_f32_1_8_32_base},
  {"f32_1_8_32_sel", 4, (void*)launch_f32_1_8_32_sel},
  {"f32_1_8_32_unroll", 4, (void*)launch_f32_1_8_32_unroll},
  {"f32_1_8_32_nomask", 4, (void*)launch_f32_1_8_32_nomask},
  {"f32_1_8_32_nomask_unroll", 4, (void*)launch_f32_1_8_32_nomask_unroll},
};
#include "drv_main.h"
