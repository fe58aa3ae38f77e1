/* Test-only: the grid group of cooperative_groups for the emulated device of
 * cuda_runtime.h: `this_grid().sync()` waits until every thread of a
 * cooperative launch reaches it. */
#pragma once
#include <cuda_runtime.h>

namespace cooperative_groups {

struct grid_group {
    void sync() const {
        if (!cuda_on_cpu::world().cooperative) cuda_on_cpu::fail("a grid sync in a launch that is not cooperative");
        cuda_on_cpu::wait(cuda_on_cpu::State::AtGridBarrier);
    }
};

inline grid_group this_grid() { return {}; }

}  // namespace cooperative_groups
