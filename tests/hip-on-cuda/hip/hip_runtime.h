/* Test-only: maps the HIP runtime API that stencil-build's generated HIP code
 * uses onto CUDA, so that the very same HIP source can be compiled by nvcc and
 * executed on an NVIDIA GPU (the HIP 5.2 headers' own NVIDIA path does not
 * build with CUDA 13). Kernel syntax (__global__, <<< >>>, threadIdx, ...) is
 * common to both. Never used in a build for AMD GPUs. */
#pragma once
#include <cuda_runtime.h>
/* Before the shuffle macros below: CUDA's cooperative groups (which
 * hip_cooperative_groups.h includes) include cuda_fp16.h, whose own
 * `__shfl_up` and `__shfl_down` the macros would mangle. */
#include <cooperative_groups.h>

#define hipError_t cudaError_t
#define hipSuccess cudaSuccess
#define hipGetLastError cudaGetLastError
#define hipGetErrorString cudaGetErrorString
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemset cudaMemset
#define hipMemcpy cudaMemcpy
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipStreamSynchronize cudaStreamSynchronize
#define hipGetDeviceCount cudaGetDeviceCount

/* HIP's warp shuffles have no mask: every lane of the group takes part. */
#define __shfl_up(value, delta, width) __shfl_up_sync(0xffffffffu, value, delta, width)
#define __shfl_down(value, delta, width) __shfl_down_sync(0xffffffffu, value, delta, width)

/* Opting in to more dynamic shared memory than a block gets by default. */
#define hipFuncSetAttribute cudaFuncSetAttribute
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize

/* A device's name and target: `gcnArchName` holds CUDA's `sm_<major><minor>`. */
#include <stdio.h>
struct hipDeviceProp_t {
    char name[256];
    char gcnArchName[256];
};
inline cudaError_t hipGetDeviceProperties(hipDeviceProp_t *props, int device) {
    cudaDeviceProp cuda;
    const cudaError_t code = cudaGetDeviceProperties(&cuda, device);
    if (code != cudaSuccess) return code;
    snprintf(props->name, sizeof props->name, "%s", cuda.name);
    snprintf(props->gcnArchName, sizeof props->gcnArchName, "sm_%d%d:emulated+", cuda.major, cuda.minor);
    return cudaSuccess;
}

/* The cooperative launch of `persistent` and what sizes its grid. */
#define hipGetDevice cudaGetDevice
#define hipSetDevice cudaSetDevice
#define hipHostMalloc(ptr, bytes, flags) cudaMallocHost(ptr, bytes)
#define hipHostFree cudaFreeHost
#define hipIpcMemHandle_t cudaIpcMemHandle_t
#define hipIpcGetMemHandle cudaIpcGetMemHandle
#define hipIpcOpenMemHandle cudaIpcOpenMemHandle
#define hipIpcCloseMemHandle cudaIpcCloseMemHandle
#define hipIpcMemLazyEnablePeerAccess cudaIpcMemLazyEnablePeerAccess
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#define hipLaunchCooperativeKernel cudaLaunchCooperativeKernel
#define hipErrorCooperativeLaunchTooLarge cudaErrorCooperativeLaunchTooLarge

/* What a fused launcher returns for grids its kernel cannot take (the session asks `_fuses` first). */
#define hipErrorInvalidValue cudaErrorInvalidValue

/* A session's graphs: its launches captured on a stream of its own, replayed. */
#define hipStream_t cudaStream_t
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamBeginCapture cudaStreamBeginCapture
#define hipStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#define hipStreamEndCapture cudaStreamEndCapture
#define hipGraph_t cudaGraph_t
#define hipGraphExec_t cudaGraphExec_t
#define hipGraphInstantiateWithFlags cudaGraphInstantiateWithFlags
#define hipGraphDestroy cudaGraphDestroy
#define hipGraphLaunch cudaGraphLaunch
#define hipGraphExecDestroy cudaGraphExecDestroy
/* HIP's update (CUDA 11's form) returns the node and the result CUDA's keeps in one record. */
#define hipGraphNode_t cudaGraphNode_t
#define hipGraphExecUpdateResult cudaGraphExecUpdateResult
inline cudaError_t hipGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphNode_t *node,
                                      cudaGraphExecUpdateResult *result) {
    cudaGraphExecUpdateResultInfo info;
    const cudaError_t e = cudaGraphExecUpdate(exec, graph, &info);
    *node = info.errorNode;
    *result = info.result;
    return e;
}
