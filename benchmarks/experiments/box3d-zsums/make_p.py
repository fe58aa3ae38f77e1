#!/usr/bin/env python3
"""Writes work/<V>_<stencil>_f32.cu: a fused 2-step kernel for a 3-D f32 stencil of
radius 1 whose update is a weighted sum (the suite's boxes), in which each
plane a level reads is loaded from the ring once and added into the three
planes it feeds ("z sums", README.md).

    make_p.py STENCIL V C R BY MINB

C columns and R rows a thread, blocks of 32 x BY threads (tiles of 32 C x BY R
cells, the outer 2 on each side recomputed), __launch_bounds__(32 BY, MINB).
Reads the spec from ../box3d-bounds/work/specs and the reciprocal A multiplies
by from ../box3d-bounds/work/A_<stencil>_f32.cu (run ../box3d-bounds/gen.sh first).
"""
import os
import re
import sys

stencil, V = sys.argv[1], sys.argv[2]
C, R, BY, MINB = (int(a) for a in sys.argv[3:7])
here = os.path.dirname(os.path.abspath(__file__))
bounds = os.path.join(here, "..", "box3d-bounds", "work")
spec = open(f"{bounds}/specs/{stencil}.stencil.toml").read()
expr = re.search(r'^expr\s*=\s*"(.*)"', spec, re.M).group(1)
W = {}
for w, dz, dy, dx in re.findall(r"([0-9.]+)\*u\[(-?\d+),(-?\d+),(-?\d+)\]", expr):
    W[(int(dz), int(dy), int(dx))] = (w if "." in w else w + ".0") + "f"
a = open(f"{bounds}/A_{stencil}_f32.cu").read()
scale = re.search(r"const float u = \(.*\) \* ([0-9.e-]+f) /\* 1 / [0-9.]+f \*/;", a).group(1)
TX, TY = 32 * C, BY * R
OX, OY = TX - 4, TY - 4
HALF = 34
ROW = HALF * C
RING = 2 * 2 * (TY + 2) * ROW * 4


def col(k):
    """Ring column of the thread's column k (-1 .. C) (halves layout for C = 2)."""
    if C == 1:
        return f"tx + {k + 1}"
    return {-1: f"{HALF} + tx", C: "tx + 2"}.get(k, f"{k * HALF} + tx + 1")


def own_col(k):
    """Ring column of the thread's own column k."""
    return f"{k * HALF} + tx + 1" if C == 2 else "tx + 1"


def level(L, own, slot, acc_done, acc_mid, acc_new, done_old):
    """Level L's work in one iteration: its input plane is level L-1's plane in
    ring[L-1][slot] and the thread's `own` registers; it completes acc_done,
    adds into acc_mid and starts acc_new. Returns the lines and leaves the
    completed values in `v[j][k]`."""
    lines = []
    need = set()
    for (dz, dy, dx) in W:
        for j in range(R):
            for k in range(C):
                jj, kk = j + dy, k + dx
                if not (0 <= jj < R and 0 <= kk < C):
                    need.add((jj, kk))
    for jj, kk in sorted(need):
        lines.append(f"const float n{L}_{jj + 1}_{kk + 1} = ring[{L - 1}][{slot}][ty * {R} + {jj + 1}][{col(kk)}];")

    def nb(jj, kk):
        if 0 <= jj < R and 0 <= kk < C:
            return f"{own}[{jj}][{kk}]"
        return f"n{L}_{jj + 1}_{kk + 1}"

    for j in range(R):
        for k in range(C):
            for dz, acc, fresh in ((1, acc_done, False), (0, acc_mid, False), (-1, acc_new, True)):
                terms = [(W[(dz, dy, dx)], nb(j + dy, k + dx)) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dz, dy, dx) in W]
                target = f"{acc}[{j}][{k}]"
                for n, (w, x) in enumerate(terms):
                    if fresh and n == 0:
                        lines.append(f"{target} = {w} * {x};")
                    else:
                        lines.append(f"{target} = fmaf({w}, {x}, {target});")
                if fresh and not terms:
                    lines.append(f"{target} = 0.0f;")
            lines.append(f"v[{j}][{k}] = step{L} && (in_cells >> {j * C + k} & 1u) ? {acc_done}[{j}][{k}] * {scale} : {done_old}[{j}][{k}];")
    return lines


def copy(i):
    """Iteration p = base + i of the loop unrolled by 6: every register and slot index static."""
    o0, o0old = f"o0[{i % 2}]", f"o0[{(i + 1) % 2}]"
    L = []
    L.append(f"/* p = base + {i} */")
    L.append("{")
    cells = [(j, k) for j in range(R) for k in range(C)]
    L += [f"{o0}[{j}][{k}] = ahead[{j}][{k}];" for j, k in cells]
    L.append("{ const int z = p + 1; const int plane_at = (z < 0 ? 0 : z < n0 ? z : n0 - 1) * s0;")
    L += [f"  ahead[{j}][{k}] = cur_u[plane_at + cell_at[{j}][{k}]];" for j, k in cells]
    L.append("}")
    L += [f"ring[0][{i % 2}][ty * {R} + {j + 1}][{own_col(k)}] = {o0}[{j}][{k}];" for j, k in cells]
    L.append("__syncthreads();")
    L.append("float v[%d][%d];" % (R, C))
    # Level 2: input level-1 plane p - 2 (ring[1][i % 2], own o1[(i + 1) % 3]); completes p - 3.
    L.append("{ const int q = p - 3; const bool step2 = levels >= 2 && q >= 1 && q < n0 - 1;")
    L += level(2, f"o1[{(i + 1) % 3}]", i % 2, f"a2[{i % 3}]", f"a2[{(i + 1) % 3}]", f"a2[{(i + 2) % 3}]", f"o1[{i % 3}]")
    L.append("  if (q >= z0 && q < z1) {")
    for j in range(R):
        for k in range(C):
            L.append(f"    if (own_cells >> {j * C + k} & 1u) out[q * s0 + (i1 + {j}) * s1 + i2 + {k}] = v[{j}][{k}];")
    L.append("  } }")
    # Level 1: input level-0 plane p (ring[0][i % 2], own o0); completes p - 1.
    L.append("{ const int q = p - 1; const bool step1 = q >= 1 && q < n0 - 1;")
    L += level(1, o0, i % 2, f"a1[{(i + 2) % 3}]", f"a1[{i % 3}]", f"a1[{(i + 1) % 3}]", o0old)
    L += [f"  o1[{(i + 2) % 3}][{j}][{k}] = v[{j}][{k}]; ring[1][{(i + 1) % 2}][ty * {R} + {j + 1}][{own_col(k)}] = v[{j}][{k}];" for j, k in cells]
    L.append("}")
    L.append("}")
    L.append("if (++p == pend) break;")
    return L


body = []
for i in range(6):
    body += copy(i)
body = "\n".join("        " + l for l in body)
src = f"""/*
 * {stencil} f32, 2 steps fused (`levels` 1 or 2): written by make_p.py ({V}: {C} column(s) x {R} rows a thread,
 * blocks of 32 x {BY} threads, tiles of {TX} x {TY} cells, the outer 2 on each side recomputed).
 * Each plane a level reads is loaded once and added into the three planes it feeds
 * (README.md, "z sums"); the loop is unrolled by 6 so that every ring slot and register is static.
 * for (int s = 2; s >= 1 -- the harness reads the fused steps from this line.
 */
#include <cuda_runtime.h>
#include <stddef.h>

#define RING_BYTES {RING}

template <int CHUNK>
static __global__ void __launch_bounds__({32 * BY}, {MINB}) p_{stencil}_kernel(const int n0, const int n1, const int n2, float *__restrict__ out, const float *__restrict__ cur_u, int levels, int chunk)
{{
    const int s0 = n1 * n2;
    const int s1 = n2;
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const int i2 = 1 + (int)blockIdx.x * {OX} - 2 + tx * {C};
    const int i1 = 1 + (int)blockIdx.y * {OY} - 2 + ty * {R};
    const int span = CHUNK > 0 ? CHUNK : chunk;
    const int z0 = 1 + (int)blockIdx.z * span;
    const int z1 = z0 + span < n0 - 1 ? z0 + span : n0 - 1;
    unsigned in_cells = 0, own_cells = 0;
    int cell_at[{R}][{C}];
    #pragma unroll
    for (int k = 0; k < {C}; ++k) {{
        const int c2 = i2 + k;
        const bool in_x = c2 >= 1 && c2 < n2 - 1;
        const bool own_x = in_x && tx * {C} + k >= 2 && tx * {C} + k < {TX - 2};
        const int x = c2 < 0 ? 0 : c2 < n2 ? c2 : n2 - 1;
        #pragma unroll
        for (int j = 0; j < {R}; ++j) {{
            const int c1 = i1 + j;
            const bool in_y = c1 >= 1 && c1 < n1 - 1;
            in_cells |= (unsigned)(in_x && in_y) << (j * {C} + k);
            own_cells |= (unsigned)(own_x && in_y && ty * {R} + j >= 2 && ty * {R} + j < {TY - 2}) << (j * {C} + k);
            cell_at[j][k] = (c1 < 0 ? 0 : c1 < n1 ? c1 : n1 - 1) * s1 + x;
        }}
    }}
    extern __shared__ __align__(16) unsigned char shared[];
    float (*const ring)[2][{TY + 2}][{ROW}] = (float (*)[2][{TY + 2}][{ROW}])shared;
    for (int e = ty * 32 + tx; e < RING_BYTES / 4; e += {32 * BY})
        (&ring[0][0][0][0])[e] = 0;
    __syncthreads();
    float a1[3][{R}][{C}] = {{}}, a2[3][{R}][{C}] = {{}}, o0[2][{R}][{C}] = {{}}, o1[3][{R}][{C}] = {{}};
    float ahead[{R}][{C}];
    int p = z0 - 2;
    const int pend = z1 + 3;
    {{
        const int plane_at = (p < 0 ? 0 : p < n0 ? p : n0 - 1) * s0;
        #pragma unroll
        for (int j = 0; j < {R}; ++j)
            #pragma unroll
            for (int k = 0; k < {C}; ++k)
                ahead[j][k] = cur_u[plane_at + cell_at[j][k]];
    }}
    for (;;) {{
{body}
    }}
}}

extern "C" int stencils_cuda__{stencil}__update_u(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2, float *out, const float *cur_u, int levels, cudaStream_t stream)
{{
    (void)cudaGetLastError();
    if (n0 * n1 * n2 > 1073741824 || levels < 1 || levels > 2)
        return (int)cudaErrorInvalidValue;
    for (auto *k : {{p_{stencil}_kernel<128>, p_{stencil}_kernel<0>}}) {{
        const cudaError_t allowed = cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize, RING_BYTES);
        if (allowed != cudaSuccess)
            return (int)allowed;
    }}
    int device = 0, multiprocessors = 0, per_multiprocessor = 0;
    cudaError_t status = cudaGetDevice(&device);
    if (status == cudaSuccess)
        status = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
    if (status == cudaSuccess)
        status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, p_{stencil}_kernel<0>, {32 * BY}, RING_BYTES);
    if (status != cudaSuccess)
        return (int)status;
    const ptrdiff_t cells = n0 - 2, across = ((n2 - 2 + {OX} - 1) / {OX}) * ((n1 - 2 + {OY} - 1) / {OY});
    const ptrdiff_t parts = across > 0 ? (ptrdiff_t)multiprocessors * per_multiprocessor / across : 0;
    const int chunk = cells > 0 && parts > (cells + 128 - 1) / 128 ? (int)((cells + parts - 1) / parts) : 128;
    auto *const kernel = chunk == 128 ? p_{stencil}_kernel<128> : p_{stencil}_kernel<0>;
    const dim3 block(32, {BY});
    const dim3 grid((unsigned)((n2 - 2 + {OX} - 1) / {OX}), (unsigned)((n1 - 2 + {OY} - 1) / {OY}), (unsigned)((cells + chunk - 1) / chunk));
    kernel<<<grid, block, RING_BYTES, stream>>>((int)n0, (int)n1, (int)n2, out, cur_u, levels, chunk);
    return (int)cudaGetLastError();
}}
"""
os.makedirs(f"{here}/work", exist_ok=True)
open(f"{here}/work/{V}_{stencil}_f32.cu", "w").write(src)
print(f"work/{V}_{stencil}_f32.cu: C {C} R {R} BY {BY} tile {TX} x {TY}, ring {RING} B")
