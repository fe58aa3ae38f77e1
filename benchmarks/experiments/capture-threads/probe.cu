// What a call in one host thread does to a stream capture in progress in
// another (same device): does the call fail, and is the capture invalidated?
// Thread A captures on a non-blocking stream of its own (the generated
// sessions' way); thread B makes one runtime call while it does.
//
//   nvcc -O2 -arch=sm_90 -L"$CUDA_PATH/lib" -o probe probe.cu && ./probe
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <cuda_runtime.h>

__global__ void bump(float *p) { p[threadIdx.x] += 1.0f; }

struct Fixture {
    float *d1, *d2, *spare;
    float *h;
    cudaStream_t other;
    cudaGraph_t graph;
    cudaGraphExec_t exec, spare_exec;
};

static const char *ops[] = {
    "none",
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize(legacy)",
    "cudaMemcpy D2H",
    "cudaMemcpy H2D",
    "cudaMemcpy D2D",
    "cudaMemset",
    "cudaMalloc",
    "cudaFree",
    "kernel launch, legacy stream",
    "cudaGraphLaunch, legacy stream",
    "cudaGraphExecDestroy",
    "cudaGraphInstantiate",
    "cudaStreamCreateWithFlags",
    "cudaStreamDestroy",
    "cudaLaunchCooperativeKernel, legacy",
    "cudaMemcpyAsync D2H legacy + sync legacy",
    "launch + cudaStreamSynchronize(own stream)",
    "cudaFreeAsync(legacy)",
    "cudaMallocAsync(legacy)",
    "capture of its own (ThreadLocal)",
    "cudaGraphExecUpdate",
    "cudaOccupancyMaxActiveBlocks",
    "cudaFuncSetAttribute",
    "cudaGraphDestroy",
    "cudaStreamQuery(legacy)",
};
static const int n_ops = sizeof(ops) / sizeof(ops[0]);

static cudaError_t run_op(int op, Fixture &f) {
    switch (op) {
    case 0: return cudaSuccess;
    case 1: return cudaDeviceSynchronize();
    case 2: return cudaStreamSynchronize(0);
    case 3: return cudaMemcpy(f.h, f.d1, 1 << 20, cudaMemcpyDeviceToHost);
    case 4: return cudaMemcpy(f.d1, f.h, 1 << 20, cudaMemcpyHostToDevice);
    case 5: return cudaMemcpy(f.d2, f.d1, 1 << 20, cudaMemcpyDeviceToDevice);
    case 6: return cudaMemset(f.d2, 0, 1 << 20);
    case 7: {
        void *p = nullptr;
        cudaError_t e = cudaMalloc(&p, 1 << 20);
        if (e == cudaSuccess) f.spare = (float *)p;  // freed after the trial
        return e;
    }
    case 8: {
        cudaError_t e = cudaFree(f.spare);
        if (e == cudaSuccess) f.spare = nullptr;
        return e;
    }
    case 9: bump<<<1, 32>>>(f.d2); return cudaGetLastError();
    case 10: return cudaGraphLaunch(f.exec, 0);
    case 11: {
        cudaError_t e = cudaGraphExecDestroy(f.spare_exec);
        if (e == cudaSuccess) f.spare_exec = nullptr;
        return e;
    }
    case 12: {
        cudaGraphExec_t e2;
        cudaError_t e = cudaGraphInstantiateWithFlags(&e2, f.graph, 0);
        if (e == cudaSuccess) cudaGraphExecDestroy(e2);
        return e;
    }
    case 13: {
        cudaStream_t s;
        cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        if (e == cudaSuccess) cudaStreamDestroy(s);
        return e;
    }
    case 14: {
        cudaError_t e = cudaStreamDestroy(f.other);
        if (e == cudaSuccess) f.other = nullptr;
        return e;
    }
    case 15: {
        void *args[] = {&f.d2};
        return cudaLaunchCooperativeKernel((void *)bump, 1, 32, args, 0, 0);
    }
    case 16: {
        cudaError_t e = cudaMemcpyAsync(f.h, f.d1, 1 << 20, cudaMemcpyDeviceToHost, 0);
        return e != cudaSuccess ? e : cudaStreamSynchronize(0);
    }
    case 17: {
        bump<<<1, 32, 0, f.other>>>(f.d2);
        return cudaStreamSynchronize(f.other);
    }
    case 18: {
        cudaError_t e = cudaFreeAsync(f.spare, 0);
        if (e == cudaSuccess) f.spare = nullptr;
        return e;
    }
    case 19: {
        void *p = nullptr;
        cudaError_t e = cudaMallocAsync(&p, 1 << 20, 0);
        if (e == cudaSuccess) cudaFreeAsync(p, 0);
        return e;
    }
    case 20: {
        cudaError_t e = cudaStreamBeginCapture(f.other, cudaStreamCaptureModeThreadLocal);
        if (e != cudaSuccess) return e;
        bump<<<1, 32, 0, f.other>>>(f.d2);
        cudaGraph_t g = nullptr;
        e = cudaStreamEndCapture(f.other, &g);
        if (g) cudaGraphDestroy(g);
        return e;
    }
    case 21: {
        cudaGraphExecUpdateResultInfo info;
        return cudaGraphExecUpdate(f.exec, f.graph, &info);
    }
    case 22: {
        int n;
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, bump, 32, 0);
    }
    case 23: return cudaFuncSetAttribute(bump, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024);
    case 24: {
        cudaGraph_t g;
        cudaStreamBeginCapture(f.other, cudaStreamCaptureModeThreadLocal);
        bump<<<1, 32, 0, f.other>>>(f.d2);
        cudaStreamEndCapture(f.other, &g);
        return cudaGraphDestroy(g);  // captured before A began, destroyed during
    }
    case 25: return cudaStreamQuery(0);
    }
    return cudaErrorInvalidValue;
}

static void trial(int op, cudaStreamCaptureMode mode, bool blocking) {
    Fixture f{};
    cudaMalloc(&f.d1, 1 << 20);
    cudaMalloc(&f.d2, 1 << 20);
    cudaMalloc(&f.spare, 1 << 20);
    cudaMallocHost(&f.h, 1 << 20);
    cudaStreamCreateWithFlags(&f.other, cudaStreamNonBlocking);
    cudaStreamBeginCapture(f.other, cudaStreamCaptureModeThreadLocal);
    bump<<<1, 32, 0, f.other>>>(f.d1);
    cudaStreamEndCapture(f.other, &f.graph);
    cudaGraphInstantiateWithFlags(&f.exec, f.graph, 0);
    cudaGraphInstantiateWithFlags(&f.spare_exec, f.graph, 0);
    // Work queued on the legacy stream, so that syncs have something to wait for.
    for (int i = 0; i < 200; i++) bump<<<1, 32>>>(f.d1);

    std::atomic<int> phase{0};
    cudaError_t b_rc = cudaSuccess, a_end = cudaSuccess, a_inst = cudaSuccess, a_launch = cudaSuccess;
    bool graph_null = false, timed_out = false;
    double b_us = 0;
    std::thread a([&] {
        cudaStream_t s;
        cudaStreamCreateWithFlags(&s, blocking ? cudaStreamDefault : cudaStreamNonBlocking);
        cudaStreamBeginCapture(s, mode);
        bump<<<1, 32, 0, s>>>(f.d1);
        phase = 1;
        auto t0 = std::chrono::steady_clock::now();
        while (phase.load() != 2) {
            if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(2)) {
                timed_out = true;
                break;
            }
        }
        bump<<<1, 32, 0, s>>>(f.d1);
        a_launch = cudaGetLastError();
        cudaGraph_t g = nullptr;
        a_end = cudaStreamEndCapture(s, &g);
        graph_null = g == nullptr;
        if (g) {
            cudaGraphExec_t e;
            a_inst = cudaGraphInstantiateWithFlags(&e, g, 0);
            if (a_inst == cudaSuccess) cudaGraphExecDestroy(e);
            cudaGraphDestroy(g);
        }
        cudaStreamDestroy(s);
    });
    std::thread b([&] {
        while (phase.load() != 1) {}
        auto t0 = std::chrono::steady_clock::now();
        b_rc = run_op(op, f);
        b_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        cudaGetLastError();
        phase = 2;
    });
    a.join();
    b.join();
    cudaError_t after = cudaDeviceSynchronize();
    printf("%-45s %-10s %-9s | B: %-40s %8.0f us | A: launch %-3d end %-40s graph %-4s inst %d%s | device %d\n",
           ops[op], mode == cudaStreamCaptureModeThreadLocal ? "threadloc" : mode == cudaStreamCaptureModeGlobal ? "global" : "relaxed",
           blocking ? "blocking" : "nonblock", cudaGetErrorName(b_rc), b_us, (int)a_launch, cudaGetErrorName(a_end),
           graph_null ? "null" : "ok", (int)a_inst, timed_out ? " TIMEOUT" : "", (int)after);
    cudaGetLastError();
    if (f.spare_exec) cudaGraphExecDestroy(f.spare_exec);
    cudaGraphExecDestroy(f.exec);
    cudaGraphDestroy(f.graph);
    if (f.other) cudaStreamDestroy(f.other);
    if (f.spare) cudaFree(f.spare);
    cudaFree(f.d1);
    cudaFree(f.d2);
    cudaFreeHost(f.h);
}

int main() {
    cudaFree(0);
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    printf("%s, driver %d, runtime %d\n", p.name, drv, rt);
    for (int op = 0; op < n_ops; op++) trial(op, cudaStreamCaptureModeThreadLocal, false);
    printf("\n");
    for (int op = 0; op < n_ops; op++) trial(op, cudaStreamCaptureModeRelaxed, false);
    printf("\n");
    for (int op = 0; op < n_ops; op++) trial(op, cudaStreamCaptureModeThreadLocal, true);
    return 0;
}
