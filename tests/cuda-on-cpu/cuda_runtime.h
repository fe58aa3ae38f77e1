/* Test-only: runs stencil-build's generated CUDA on the CPU, so that the
 * kernels' logic is checked against the reference on machines without a GPU
 * (CI). `Config::cuda_on_cpu` compiles the generated source as C++ with this
 * folder first on the include path, after rewriting each `kernel<<<grid,
 * block, shared>>>(args)` as `cuda_on_cpu::launch(kernel, grid, block,
 * shared, args)` and `extern __shared__ ... shared[]` as `using ::shared`.
 *
 * Every GPU thread is a fiber (its own stack), and a block's fibers run in turns on
 * one OS thread: a fiber runs until it reaches a barrier (`__syncthreads`, or
 * a warp shuffle, which is a barrier of its 32 lanes), then the next one
 * runs. Blocks run one after another; those of a cooperative launch each as
 * far as it can before the next starts, up to the grid's sync (a missing
 * grid sync shows as stale values). Each OS thread (a test) has its own
 * emulated device, except for what one thread's device synchronization does
 * to another's capture, which is CUDA's (see `cudaDeviceSynchronize`). What
 * this checks and what it does not:
 *
 * - checked: the values a kernel computes (same IEEE arithmetic, up to the
 *   contraction of multiply-adds), shuffles across lanes (with CUDA's rules
 *   for lanes off the group), barriers that can never open (threads of a
 *   block or warp waiting at different ones: the run aborts, naming every
 *   thread and where it waits; as in PTX, threads that have exited do not
 *   hold a barrier), launch limits (1024 threads, 227 KiB of shared memory,
 *   the opt-in above 48 KiB, blocks of a cooperative launch resident at once),
 *   accesses past the end of a device buffer (a guard page: SIGSEGV);
 * - not checked: races (turns are deterministic: the fiber that runs first
 *   always writes first), accesses before the start of a buffer or between
 *   its end and the guard page (under 16 bytes), timing. Dynamic shared
 *   memory starts as NaN bytes (0xff) in every block, so a read of a slot no
 *   thread wrote is seen in the results; static shared memory starts as 0.
 */
#pragma once
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <algorithm>
#include <functional>
#include <type_traits>
#include <utility>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

/* ---- CUDA's spelling ---- */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define __constant__
#define __align__(n) __attribute__((aligned(n)))

struct uint3 {
    unsigned x, y, z;
};

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1) : x(x), y(y), z(z) {}
};

#define CUDA_ON_CPU_VECTOR(T, N, ...)                \
    struct __attribute__((aligned(sizeof(T) * N))) T##N { \
        T __VA_ARGS__;                               \
    };
CUDA_ON_CPU_VECTOR(float, 2, x, y)
CUDA_ON_CPU_VECTOR(float, 4, x, y, z, w)
CUDA_ON_CPU_VECTOR(double, 2, x, y)
CUDA_ON_CPU_VECTOR(double, 4, x, y, z, w)
inline float2 make_float2(float x, float y) { return float2{x, y}; }
inline double2 make_double2(double x, double y) { return double2{x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
struct float3 {
    float x, y, z;
};
struct double3 {
    double x, y, z;
};

typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorCooperativeLaunchTooLarge = 720,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorGraphExecUpdateFailure = 910,
} cudaError_t;

/* Streams and graphs: a stream runs its launches at once, unless it is
 * capturing, when it records them; a graph replays what was recorded. */
struct CUstream_st {
    int unused;
};
typedef struct CUstream_st *cudaStream_t;
struct CUgraph_st;
typedef struct CUgraph_st *cudaGraph_t;
struct CUgraphExec_st;
typedef struct CUgraphExec_st *cudaGraphExec_t;
struct CUgraphNode_st;
typedef struct CUgraphNode_st *cudaGraphNode_t;
enum cudaGraphExecUpdateResult {
    cudaGraphExecUpdateSuccess = 0,
    cudaGraphExecUpdateError = 1,
    cudaGraphExecUpdateErrorTopologyChanged = 2,
};
struct cudaGraphExecUpdateResultInfo {
    enum cudaGraphExecUpdateResult result;
    cudaGraphNode_t errorNode;
    cudaGraphNode_t errorFromNode;
};
enum { cudaStreamDefault = 0, cudaStreamNonBlocking = 1 };
enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2,
};

enum cudaDeviceAttr {
    cudaDevAttrMultiProcessorCount = 16,
};

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
};

enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
};

/* The dynamic shared memory of the block that runs: the generated kernels'
 * `extern __shared__ unsigned char shared[]` becomes a `using` of this array. */
alignas(16) inline thread_local unsigned char shared[227 * 1024];

namespace cuda_on_cpu {

/* The H100's limits, which the generator plans for. */
constexpr unsigned MAX_THREADS = 1024;
constexpr size_t SHARED_DEFAULT = 48 * 1024;
constexpr size_t SHARED_MAX = sizeof(::shared);
constexpr unsigned WARP = 32;
constexpr size_t STACK = 256 * 1024;
/* The emulated device's multiprocessors, each holding one block of a
 * cooperative launch: small, so that persistent kernels' blocks take several
 * tiles each. */
constexpr int MULTIPROCESSORS = 2;

enum class State { Runnable, AtWarpBarrier, AtBlockBarrier, AtGridBarrier, Done };

#if defined(__x86_64__)
/* A fiber's saved stack pointer; what it needs to resume lies on that stack.
 * Switching saves and restores only what the ABI has a callee keep (no signal
 * mask): ucontext's `swapcontext` and `getcontext` each make a system call for
 * the mask, and took three quarters of the emulated tests' time. */
struct Context {
    void *sp = nullptr;
};

/* Pushes the callee-saved registers and the SSE and x87 control words onto
 * this stack, stores its pointer in `*from`, then pops the same from the stack
 * `to` and returns to whatever called `switch_stack` there (or, the first time,
 * to the entry `make_context` put there). */
__attribute__((naked, noinline)) static void switch_stack(void **from, void *to) {
    __asm__ volatile("pushq %rbp\n\t"
                     "pushq %rbx\n\t"
                     "pushq %r12\n\t"
                     "pushq %r13\n\t"
                     "pushq %r14\n\t"
                     "pushq %r15\n\t"
                     "subq $8, %rsp\n\t"
                     "stmxcsr (%rsp)\n\t"
                     "fnstcw 4(%rsp)\n\t"
                     "movq %rsp, (%rdi)\n\t"
                     "movq %rsi, %rsp\n\t"
                     "ldmxcsr (%rsp)\n\t"
                     "fldcw 4(%rsp)\n\t"
                     "addq $8, %rsp\n\t"
                     "popq %r15\n\t"
                     "popq %r14\n\t"
                     "popq %r13\n\t"
                     "popq %r12\n\t"
                     "popq %rbx\n\t"
                     "popq %rbp\n\t"
                     "ret\n\t");
}

inline void switch_context(Context &from, Context &to) { switch_stack(&from.sp, to.sp); }

/* A context that starts `entry` (which must never return) on `stack`: the
 * frame `switch_stack` pops (nine slots: the caller's control words, six
 * registers, the return address `entry`, and a return address for `entry`
 * itself), so that `entry` starts with the stack aligned as after a call. */
inline void make_context(Context &c, char *stack, size_t size, void (*entry)()) {
    uintptr_t top = (uintptr_t)(stack + size) & ~(uintptr_t)15;
    void **sp = (void **)(top - 9 * sizeof(void *));
    uint32_t words[2] = {0, 0};
    __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(words[0]), "=m"(*(uint16_t *)&words[1]));
    memcpy(&sp[0], words, sizeof words);
    for (int r = 1; r <= 6; ++r) sp[r] = nullptr;
    sp[7] = (void *)entry;
    sp[8] = nullptr; /* the return address `entry` never uses */
    c.sp = sp;
}
#else
/* Elsewhere, ucontext (each switch a system call for the signal mask). */
struct Context {
    ucontext_t uc;
};

inline void switch_context(Context &from, Context &to) { swapcontext(&from.uc, &to.uc); }

inline void make_context(Context &c, char *stack, size_t size, void (*entry)()) {
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = stack;
    c.uc.uc_stack.ss_size = size;
    c.uc.uc_link = nullptr;
    makecontext(&c.uc, entry, 0);
}
#endif

struct Fiber {
    Context context;
    uint3 thread, block;
    /* The fiber index of the first lane of this thread's warp. */
    size_t warp_first;
    unsigned lane;
    State state;
};

struct World {
    std::vector<Fiber> fibers;
    std::vector<std::unique_ptr<char[]>> stacks;
    /* One value per thread, for the shuffle its warp is in. */
    std::vector<uint64_t> lanes;
    Context scheduler;
    Fiber *current = nullptr;
    dim3 block, grid;
    bool cooperative = false;
    std::function<void()> body;
    cudaError_t last_error = cudaSuccess;
    /* Opted-in dynamic shared memory per kernel. */
    std::map<const void *, size_t> shared_allowed;
    /* Blocks running together: each one's dynamic shared memory while
     * another's is in `::shared`, and which one is there. */
    std::vector<std::vector<unsigned char>> block_shared;
    size_t shared_bytes = 0, loaded = 0;
    /* The stream capturing launches, and what it recorded. */
    cudaStream_t capturing = nullptr;
    std::vector<std::function<cudaError_t()>> recorded;
    /* Set by another thread's device synchronization during the capture
     * (under `captures().lock`). */
    bool invalidated = false;
    /* Captures still to refuse (`cuda_on_cpu_refuse_captures`). */
    int refusals = 0;
    /* Graph updates still to refuse (`cuda_on_cpu_refuse_updates`). */
    int update_refusals = 0;
};

inline World &world() {
    static thread_local World w;
    return w;
}

/* The threads whose devices capture now, process-wide. */
struct Captures {
    std::mutex lock;
    std::set<World *> open;
};

inline Captures &captures() {
    static Captures c;
    return c;
}

inline const uint3 &thread_index() { return world().current->thread; }
inline const uint3 &block_index() { return world().current->block; }
inline uint3 block_dim() { return {world().block.x, world().block.y, world().block.z}; }
inline uint3 grid_dim() { return {world().grid.x, world().grid.y, world().grid.z}; }

[[noreturn]] inline void fail(const char *what) {
    World &w = world();
    fprintf(stderr, "cuda-on-cpu: %s (grid %u x %u x %u, blocks of %u x %u x %u threads)\n", what, w.grid.x,
            w.grid.y, w.grid.z, w.block.x, w.block.y, w.block.z);
    for (const Fiber &f : w.fibers) {
        const char *s = f.state == State::Runnable         ? "runnable"
                        : f.state == State::AtWarpBarrier  ? "at a warp shuffle"
                        : f.state == State::AtBlockBarrier ? "at __syncthreads"
                        : f.state == State::AtGridBarrier  ? "at the grid's sync"
                                                           : "exited";
        fprintf(stderr, "  block %u,%u,%u thread %u,%u,%u: %s\n", f.block.x, f.block.y, f.block.z, f.thread.x,
                f.thread.y, f.thread.z, s);
    }
    abort();
}

/* Hands the turn back to the scheduler until the barrier this fiber waits at opens. */
inline void wait(State at) {
    World &w = world();
    Fiber *self = w.current;
    self->state = at;
    switch_context(self->context, w.scheduler);
}

/* A fiber's entry: the kernel's body, then the turn back for good (the
 * scheduler never resumes a fiber that is done). */
[[noreturn]] inline void start() {
    World &w = world();
    w.body();
    w.current->state = State::Done;
    switch_context(w.current->context, w.scheduler);
    fail("a fiber resumed after its kernel returned");
}

/* Opens the barrier that every live fiber of [first, last) waits at, if they all wait at `at`. */
inline bool open(size_t first, size_t last, State at) {
    World &w = world();
    size_t waiting = 0, exited = 0;
    for (size_t f = first; f < last; ++f) {
        waiting += w.fibers[f].state == at;
        exited += w.fibers[f].state == State::Done;
    }
    if (waiting == 0 || waiting + exited < last - first) return false;
    if (at == State::AtWarpBarrier && exited > 0)
        fail("a warp shuffle with the full mask, reached by a warp some of whose lanes have exited");
    for (size_t f = first; f < last; ++f)
        if (w.fibers[f].state == at) w.fibers[f].state = State::Runnable;
    return true;
}

/* Opens every barrier that all the live threads of block `b`, or of one of
 * its warps, wait at; false if none. */
inline bool open_barriers(size_t b) {
    World &w = world();
    const size_t threads = (size_t)w.block.x * w.block.y * w.block.z, first = b * threads;
    bool opened = open(first, first + threads, State::AtBlockBarrier);
    for (size_t warp = first; warp < first + threads; warp += WARP)
        opened |= open(warp, std::min(warp + WARP, first + threads), State::AtWarpBarrier);
    return opened;
}

/* Puts the dynamic shared memory of block `b` (of several running together) in `::shared`. */
inline void load_shared(size_t b) {
    World &w = world();
    if (w.block_shared.empty() || w.loaded == b) return;
    memcpy(w.block_shared[w.loaded].data(), ::shared, w.shared_bytes);
    memcpy(::shared, w.block_shared[b].data(), w.shared_bytes);
    w.loaded = b;
}

/* Runs `blocks` together, each fiber in turn, until every fiber has exited. */
inline void run_together(const std::vector<uint3> &blocks) {
    World &w = world();
    const size_t threads = (size_t)w.block.x * w.block.y * w.block.z, total = threads * blocks.size();
    w.fibers.assign(total, Fiber{});
    if (w.lanes.size() < total) w.lanes.resize(total);
    while (w.stacks.size() < total) w.stacks.emplace_back(new char[STACK]);
    w.block_shared.clear();
    memset(::shared, 0xff, w.shared_bytes);
    if (blocks.size() > 1) w.block_shared.assign(blocks.size(), std::vector<unsigned char>(w.shared_bytes, 0xff));
    w.loaded = 0;
    for (size_t i = 0; i < total; ++i) {
        Fiber &f = w.fibers[i];
        const size_t b = i / threads, t = i % threads;
        f.thread = {unsigned(t % w.block.x), unsigned(t / w.block.x % w.block.y),
                    unsigned(t / ((size_t)w.block.x * w.block.y))};
        f.block = blocks[b];
        f.warp_first = b * threads + t / WARP * WARP;
        f.lane = unsigned(t % WARP);
        f.state = State::Runnable;
        make_context(f.context, w.stacks[i].get(), STACK, start);
    }
    /* Each block in turn runs as far as it can (to its end, or to the grid's
     * sync), so that a missing grid barrier shows: the blocks after it would
     * read what the first has already overwritten. */
    for (;;) {
        for (size_t b = 0; b < blocks.size(); ++b) {
            load_shared(b);
            do {
                for (size_t i = b * threads; i < (b + 1) * threads; ++i) {
                    Fiber &f = w.fibers[i];
                    if (f.state != State::Runnable) continue;
                    w.current = &f;
                    switch_context(w.scheduler, f.context);
                }
            } while (open_barriers(b));
        }
        bool done = true;
        for (const Fiber &f : w.fibers) done = done && f.state == State::Done;
        if (done) break;
        if (!open(0, total, State::AtGridBarrier))
            fail("deadlock: threads wait at barriers the others of their grid, block or warp never reach");
    }
    w.current = nullptr;
}

/* Whether a launch of `threads` per block with `shared` bytes of `kernel`'s may run. */
inline bool fits(const void *kernel, size_t threads, size_t shared) {
    World &w = world();
    const auto allowed = w.shared_allowed.find(kernel);
    const size_t limit = allowed == w.shared_allowed.end() ? SHARED_DEFAULT : allowed->second;
    return threads > 0 && threads <= MAX_THREADS && shared <= limit;
}

/* Runs `body` as the kernel of a launch: block after block, or (cooperative) all blocks together. */
inline cudaError_t run(const void *kernel, dim3 grid, dim3 block, size_t shared, bool cooperative,
                       std::function<void()> body) {
    World &w = world();
    if (!fits(kernel, (size_t)block.x * block.y * block.z, shared) || grid.x == 0 || grid.y == 0 ||
        grid.z == 0 || grid.y > 65535 || grid.z > 65535)
        return cudaErrorInvalidConfiguration;
    if (cooperative && (size_t)grid.x * grid.y * grid.z > (size_t)MULTIPROCESSORS)
        return cudaErrorCooperativeLaunchTooLarge;
    w.grid = grid;
    w.block = block;
    w.cooperative = cooperative;
    w.shared_bytes = shared;
    w.body = std::move(body);
    std::vector<uint3> blocks;
    for (unsigned z = 0; z < grid.z; ++z)
        for (unsigned y = 0; y < grid.y; ++y)
            for (unsigned x = 0; x < grid.x; ++x) blocks.push_back({x, y, z});
    if (cooperative) {
        run_together(blocks);
    } else {
        for (const uint3 &b : blocks) run_together({b});
    }
    w.body = nullptr;
    return cudaSuccess;
}

/* A launch on `stream`: run now, or recorded where the stream is capturing. */
template <typename Kernel, typename... Args>
void launch(Kernel kernel, dim3 grid, dim3 block, size_t shared, cudaStream_t stream, Args... args) {
    auto now = [=] { return run((const void *)kernel, grid, block, shared, false, [&] { kernel(args...); }); };
    if (stream != nullptr && stream == world().capturing) {
        world().recorded.push_back(now);
        return;
    }
    const cudaError_t e = now();
    if (e != cudaSuccess) world().last_error = e;
}

template <typename... P, size_t... I>
void call(void (*kernel)(P...), void **args, std::index_sequence<I...>) {
    kernel(*static_cast<std::remove_cv_t<P> *>(args[I])...);
}

/* `value` from fiber `source` of this thread's warp; its own unless `inside`. */
template <typename T>
T shuffle(T value, int source, bool inside) {
    static_assert(sizeof(T) <= sizeof(uint64_t), "shuffles move at most 8 bytes");
    World &w = world();
    Fiber *self = w.current;
    memcpy(&w.lanes[self->warp_first + self->lane], &value, sizeof(T));
    wait(State::AtWarpBarrier); /* every lane has written */
    T out = value;
    if (inside) memcpy(&out, &w.lanes[self->warp_first + (unsigned)source], sizeof(T));
    wait(State::AtWarpBarrier); /* every lane has read */
    return out;
}

inline int group_start(int width) { return (int)world().current->lane / width * width; }

}  // namespace cuda_on_cpu

#define threadIdx (::cuda_on_cpu::thread_index())
#define blockIdx (::cuda_on_cpu::block_index())
#define blockDim (::cuda_on_cpu::block_dim())
#define gridDim (::cuda_on_cpu::grid_dim())

inline void __syncthreads() { cuda_on_cpu::wait(cuda_on_cpu::State::AtBlockBarrier); }

/* Waits until every lane of the warp (but those that exited) gets here. */
inline void __syncwarp(unsigned mask = 0xffffffffu) {
    if (mask != 0xffffffffu) cuda_on_cpu::fail("warp barriers with a partial mask are not emulated");
    cuda_on_cpu::wait(cuda_on_cpu::State::AtWarpBarrier);
}

template <typename T>
T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = 32) {
    if (mask != 0xffffffffu) cuda_on_cpu::fail("shuffles with a partial mask are not emulated");
    const int lane = (int)cuda_on_cpu::world().current->lane, start = cuda_on_cpu::group_start(width);
    const int source = lane - (int)delta;
    return cuda_on_cpu::shuffle(value, source, source >= start);
}

template <typename T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = 32) {
    if (mask != 0xffffffffu) cuda_on_cpu::fail("shuffles with a partial mask are not emulated");
    const int lane = (int)cuda_on_cpu::world().current->lane, start = cuda_on_cpu::group_start(width);
    const int source = lane + (int)delta;
    return cuda_on_cpu::shuffle(value, source, source < start + width);
}

/* The device's reciprocal square roots are approximations: CUDA's `rsqrtf` is
 * within 2 ulp of 1 / sqrt(x), `rsqrt` within 1. The emulation returns the host's
 * 1 / sqrt(x) moved that many ulp away from zero, so that the tests hold kernels
 * to the device's worst case rather than to an exact root. */
inline float rsqrtf(float x) {
    const float r = 1.0f / sqrtf(x);
    return isfinite(r) && r != 0.0f ? nextafterf(nextafterf(r, 2.0f * r), 2.0f * r) : r;
}
inline double rsqrt(double x) {
    const double r = 1.0 / sqrt(x);
    return isfinite(r) && r != 0.0 ? nextafter(r, 2.0 * r) : r;
}

/* ---- the runtime API the generated code calls; "device" memory is host memory ---- */
/* Device buffers end where an inaccessible page starts (to 16 bytes, the
 * widest vector), so that a kernel reading or writing past the end of one
 * crashes the test (SIGSEGV). Each maps to the allocation it frees. */
inline std::map<void *, std::pair<void *, size_t>> &buffers() {
    static thread_local std::map<void *, std::pair<void *, size_t>> m;
    return m;
}
inline cudaError_t cudaMalloc(void **ptr, size_t bytes) {
    const size_t page = 4096, used = (bytes + 15) / 16 * 16, span = (used + page - 1) / page * page + page;
    void *base = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return cudaErrorMemoryAllocation;
    if (mprotect((char *)base + span - page, page, PROT_NONE) != 0) {
        munmap(base, span);
        return cudaErrorMemoryAllocation;
    }
    *ptr = (char *)base + span - page - used;
    buffers()[*ptr] = {base, span};
    return cudaSuccess;
}
/* The memfd of each buffer shared with other processes (`cudaIpcGetMemHandle`),
 * by the buffer's mapping, and the buffers of other processes mapped here. */
inline std::map<void *, int> &exported() {
    static thread_local std::map<void *, int> m;
    return m;
}
inline std::map<void *, std::pair<void *, size_t>> &opened() {
    static thread_local std::map<void *, std::pair<void *, size_t>> m;
    return m;
}
inline cudaError_t cudaFree(void *ptr) {
    const auto it = buffers().find(ptr);
    if (it == buffers().end()) return ptr == nullptr ? cudaSuccess : cudaErrorInvalidValue;
    munmap(it->second.first, it->second.second);
    const auto fd = exported().find(it->second.first);
    if (fd != exported().end()) {
        close(fd->second);
        exported().erase(fd);
    }
    buffers().erase(it);
    return cudaSuccess;
}
/* Device memory shared between processes (CUDA IPC, as the ranks of a node
 * use it): a buffer's pages move into a memfd, mapped shared at the same
 * address with its values kept, and the handle names the process and the
 * descriptor, which another process of the machine maps through /proc. */
typedef struct cudaIpcMemHandle_st {
    char reserved[64];
} cudaIpcMemHandle_t;
#define cudaIpcMemLazyEnablePeerAccess 0x01
namespace cuda_on_cpu {
struct IpcHandle {
    int pid, fd;
    size_t offset, span;
};
} // namespace cuda_on_cpu
inline cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *ptr) {
    const auto it = buffers().find(ptr);
    if (it == buffers().end()) return cudaErrorInvalidValue;
    void *base = it->second.first;
    const size_t span = it->second.second - 4096; /* all but the guard page */
    const auto known = exported().find(base);
    int fd = known == exported().end() ? -1 : known->second;
    if (fd < 0) {
        fd = memfd_create("cuda-on-cpu-ipc", 0);
        if (fd < 0) return cudaErrorMemoryAllocation;
        if (ftruncate(fd, (off_t)span) != 0 || pwrite(fd, base, span, 0) != (ssize_t)span ||
            mmap(base, span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
            close(fd);
            return cudaErrorMemoryAllocation;
        }
        exported()[base] = fd;
    }
    const cuda_on_cpu::IpcHandle h{(int)getpid(), fd, (size_t)((char *)ptr - (char *)base), span};
    memset(handle, 0, sizeof *handle);
    memcpy(handle->reserved, &h, sizeof h);
    return cudaSuccess;
}
/* As CUDA, a process cannot map its own buffer's handle. */
inline cudaError_t cudaIpcOpenMemHandle(void **ptr, cudaIpcMemHandle_t handle, unsigned int) {
    cuda_on_cpu::IpcHandle h;
    memcpy(&h, handle.reserved, sizeof h);
    if (h.pid == (int)getpid()) return cudaErrorInvalidValue;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", h.pid, h.fd);
    const int fd = open(path, O_RDWR);
    if (fd < 0) return cudaErrorInvalidValue;
    void *base = mmap(nullptr, h.span, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) return cudaErrorMemoryAllocation;
    *ptr = (char *)base + h.offset;
    opened()[*ptr] = {base, h.span};
    return cudaSuccess;
}
inline cudaError_t cudaIpcCloseMemHandle(void *ptr) {
    const auto it = opened().find(ptr);
    if (it == opened().end()) return cudaErrorInvalidValue;
    munmap(it->second.first, it->second.second);
    opened().erase(it);
    return cudaSuccess;
}
/* Page-locked host memory: on the emulated device, memory like any other. */
inline cudaError_t cudaMallocHost(void **ptr, size_t bytes) { return cudaMalloc(ptr, bytes); }
inline cudaError_t cudaFreeHost(void *ptr) { return cudaFree(ptr); }
inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind) {
    memmove(dst, src, bytes);
    return cudaSuccess;
}
inline cudaError_t cudaMemset(void *ptr, int value, size_t bytes) {
    memset(ptr, value, bytes);
    return cudaSuccess;
}
/* As CUDA's (measured on the H100, design notes, `capture-threads`):
 * while another thread captures, whatever its capture mode, a device
 * synchronization fails and ends that capture invalidated. */
inline cudaError_t cudaDeviceSynchronize() {
    cuda_on_cpu::Captures &c = cuda_on_cpu::captures();
    std::lock_guard<std::mutex> held(c.lock);
    bool others = false;
    for (cuda_on_cpu::World *w : c.open) {
        if (w != &cuda_on_cpu::world()) {
            w->invalidated = true;
            others = true;
        }
    }
    return others ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}
/* Launches run at once; a stream's, the legacy one's included, are done. */
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int *count) {
    *count = 1;
    return cudaSuccess;
}
inline cudaError_t cudaGetLastError() {
    const cudaError_t e = cuda_on_cpu::world().last_error;
    cuda_on_cpu::world().last_error = cudaSuccess;
    return e;
}
inline const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorCooperativeLaunchTooLarge: return "too many blocks in cooperative launch";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case cudaErrorGraphExecUpdateFailure: return "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update";
    }
    return "unknown error";
}
template <typename Kernel>
cudaError_t cudaFuncSetAttribute(Kernel kernel, cudaFuncAttribute attribute, int value) {
    if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 ||
        (size_t)value > cuda_on_cpu::SHARED_MAX)
        return cudaErrorInvalidValue;
    cuda_on_cpu::world().shared_allowed[(const void *)kernel] = (size_t)value;
    return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int *device) {
    *device = 0;
    return cudaSuccess;
}
/* The emulated device is the only one: device 0. */
inline cudaError_t cudaSetDevice(int device) {
    return device == 0 ? cudaSuccess : cudaErrorInvalidDevice;
}
/* The emulated device's name is `STENCIL_EMULATED_DEVICE` where set (a test
 * standing in for a device a tuning file names), else "Emulated device"; its
 * compute capability is 9.0. */
struct cudaDeviceProp {
    char name[256];
    int major;
    int minor;
};
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp *props, int device) {
    if (device != 0) return cudaErrorInvalidValue;
    const char *name = getenv("STENCIL_EMULATED_DEVICE");
    snprintf(props->name, sizeof props->name, "%s", name && *name ? name : "Emulated device");
    props->major = 9;
    props->minor = 0;
    return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attribute, int device) {
    if (attribute != cudaDevAttrMultiProcessorCount || device != 0) return cudaErrorInvalidValue;
    *value = cuda_on_cpu::MULTIPROCESSORS;
    return cudaSuccess;
}
/* One block per multiprocessor, where one fits. */
template <typename Kernel>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, Kernel kernel, int threads, size_t shared) {
    *blocks = cuda_on_cpu::fits((const void *)kernel, threads < 0 ? 0 : (size_t)threads, shared) ? 1 : 0;
    return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned) {
    *stream = new CUstream_st{0};
    return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    if (stream == nullptr || stream == cuda_on_cpu::world().capturing) return cudaErrorInvalidValue;
    delete stream;
    return cudaSuccess;
}
inline cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
    cuda_on_cpu::World &w = cuda_on_cpu::world();
    if (stream == nullptr || w.capturing != nullptr) return cudaErrorInvalidValue;
    w.capturing = stream;
    w.recorded.clear();
    cuda_on_cpu::Captures &c = cuda_on_cpu::captures();
    std::lock_guard<std::mutex> held(c.lock);
    w.invalidated = false;
    c.open.insert(&w);
    return cudaSuccess;
}
struct CUgraph_st {
    std::vector<std::function<cudaError_t()>> launches;
};
struct CUgraphExec_st {
    std::vector<std::function<cudaError_t()>> launches;
};
inline cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
    cuda_on_cpu::World &w = cuda_on_cpu::world();
    if (stream == nullptr || w.capturing != stream) return cudaErrorInvalidValue;
    bool invalidated;
    {
        cuda_on_cpu::Captures &c = cuda_on_cpu::captures();
        std::lock_guard<std::mutex> held(c.lock);
        c.open.erase(&w);
        invalidated = w.invalidated;
    }
    if (invalidated || w.refusals > 0) {
        /* As CUDA ends a capture something invalidated: no graph, nothing ran. */
        if (!invalidated) --w.refusals;
        w.capturing = nullptr;
        w.recorded.clear();
        *graph = nullptr;
        return cudaErrorStreamCaptureInvalidated;
    }
    *graph = new CUgraph_st{std::move(w.recorded)};
    w.capturing = nullptr;
    w.recorded.clear();
    return cudaSuccess;
}
inline cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long) {
    *exec = new CUgraphExec_st{graph->launches};
    return cudaSuccess;
}
/* As CUDA: a graph of as many launches (one kernel node each) takes their
 * arguments in place; another count is a changed topology, and `exec` stays. */
inline cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo *info) {
    cuda_on_cpu::World &w = cuda_on_cpu::world();
    if (exec->launches.size() != graph->launches.size() || w.update_refusals > 0) {
        if (w.update_refusals > 0) --w.update_refusals;
        *info = cudaGraphExecUpdateResultInfo{cudaGraphExecUpdateErrorTopologyChanged, nullptr, nullptr};
        return cudaErrorGraphExecUpdateFailure;
    }
    exec->launches = graph->launches;
    *info = cudaGraphExecUpdateResultInfo{cudaGraphExecUpdateSuccess, nullptr, nullptr};
    return cudaSuccess;
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    delete graph;
    return cudaSuccess;
}
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    delete exec;
    return cudaSuccess;
}
/* The recorded launches in order; the first that fails stops the replay. */
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t) {
    for (const auto &launch : exec->launches) {
        const cudaError_t e = launch();
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}
/* Every block at once, so that the grid's sync (cooperative_groups.h) can wait for all. */
template <typename... P>
cudaError_t cudaLaunchCooperativeKernel(void (*kernel)(P...), dim3 grid, dim3 block, void **args, size_t shared = 0,
                                        cudaStream_t = nullptr) {
    return cuda_on_cpu::run((const void *)kernel, grid, block, shared, true, [&] {
        cuda_on_cpu::call(kernel, args, std::index_sequence_for<P...>{});
    });
}

/* Test-only fault injection: the calling thread's next `count` captures end
 * refused, as CUDA ends one that something invalidated. Emitted in every file
 * that includes this header (`used`), once in the program (`inline`). */
extern "C" __attribute__((used)) inline void cuda_on_cpu_refuse_captures(int count) {
    cuda_on_cpu::world().refusals = count;
}

/* Test-only fault injection: the calling thread's next `count` graph updates
 * fail, as CUDA refuses one whose launches differ in kind. */
extern "C" __attribute__((used)) inline void cuda_on_cpu_refuse_updates(int count) {
    cuda_on_cpu::world().update_refusals = count;
}
