// What acoustic_df.cu (f32) and acoustic_tdf.cu (f64) share: the grid of
// tiles, the progress counters' loads and stores, and the launches in bands.
#pragma once
#include <cuda_runtime.h>

namespace counters {

// Tiles along x and y of a plane's interior.
struct Tiles {
    int tx, ty;
};

// A poll of a counter (no ordering: the poller fences once it has seen enough).
__device__ __forceinline__ int ld_relaxed(const int *p)
{
    int v;
    asm volatile("ld.relaxed.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// Publishes a counter after the block's stores (the barrier before it orders them).
__device__ __forceinline__ void st_release(int *p, int v)
{
    asm volatile("st.release.gpu.global.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// The ticket counter and each step's counter a tile.
inline size_t counters_needed(Tiles t)
{
    return 1 + 2 * (size_t)t.tx * t.ty;
}

// Two steps in launches of `band` tile rows: launch(items, base, row0) for each,
// base being the tickets of the launches before. The last launch holds step 2's
// last row alone past the rows' end (row0 + pairs = t.ty + 1).
template <class Launch>
void in_bands(Tiles t, int band, Launch launch)
{
    int base = 0;
    for (int row0 = 0; row0 <= t.ty; row0 += band) {
        const int pairs = row0 + band > t.ty ? t.ty + 1 - row0 : band;
        const int items = 2 * t.tx * pairs;
        launch(items, base, row0);
        base += items;
    }
}

} // namespace counters
