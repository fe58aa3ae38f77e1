/* Test-only: HIP's cooperative groups on CUDA's (see hip_runtime.h here);
 * the generated code uses `cooperative_groups::this_grid().sync()`, spelled
 * the same in both. */
#pragma once
#include <cooperative_groups.h>
