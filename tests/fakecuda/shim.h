/*
 * fakecuda's device side: what CUDA C needs to compile as host C++, and the thread blocks its
 * kernels run in.  harness.py puts this text before every kernel source it builds for the host.
 *
 * A launch runs its blocks one after another, x fastest.  In a translation unit that uses
 * __syncthreads, each thread of a block is a fiber (ucontext) with a stack of its own; the
 * block's threads run in turn, each until it reaches a barrier or returns, and a barrier opens
 * once every thread of the block waits at it, as the CUDA C++ Programming Guide defines
 * __syncthreads ("waits until all threads in the thread block have reached this point").  The
 * guide allows a barrier in conditional code "only if the conditional evaluates identically
 * across the entire thread block"; a block that breaks that rule (some threads at a barrier
 * while others returned, or wait at another one) fails the launch here, where a GPU may hang or
 * go on.  A translation unit without __syncthreads runs each thread to its end in turn, on the
 * caller's stack: nothing in it can wait for another thread.
 *
 * Fibers switch only at barriers, so every read-modify-write is atomic, and runs are
 * deterministic.  FAKECUDA_THREAD_ORDER=reverse runs the blocks, and the threads between two
 * barriers, last first: a kernel whose result depends on that order has a race.
 *
 * __shared__ variables are static storage in one section (fk_shared), which is filled with 0xff
 * bytes (NaN, -1) before every block: a block reads only what its own threads wrote, as on a GPU,
 * and a read before any write shows.  Dynamic shared memory (extern __shared__) and the warp
 * intrinsics are not emulated: a source using them does not compile here.
 */
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <ucontext.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __device_builtin__
#define __cudart_builtin__
#define __launch_bounds__(...)

struct fk_dim3 {
    unsigned x, y, z;
};
static fk_dim3 blockIdx, threadIdx, blockDim, gridDim;

#define __shared__ static __attribute__((section("fk_shared")))
/* The linker's bounds of the section (NULL without a __shared__ variable). */
extern "C" char __start_fk_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_fk_shared[] __attribute__((weak, visibility("hidden")));

typedef unsigned long long cudaGraphConditionalHandle;
static void (*fk_set_conditional)(unsigned long long, unsigned);
extern "C" void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value)
{
    fk_set_conditional(handle, value);
}

/* Fibers switch only at barriers: every read-modify-write is atomic. */
template <typename T> static T atomicAdd(T *p, T v) { T old = *p; *p = old + v; return old; }
template <typename T> static T atomicMax(T *p, T v) { T old = *p; *p = old < v ? v : old; return old; }
template <typename T> static T atomicMin(T *p, T v) { T old = *p; *p = v < old ? v : old; return old; }
template <typename T> static T atomicExch(T *p, T v) { T old = *p; *p = v; return old; }
template <typename T> static T atomicCAS(T *p, T c, T v) { T old = *p; *p = old == c ? v : old; return old; }
static void __threadfence() {}

namespace fk {

/* One thread of a kernel: it reads the launch's parameter values from args. */
typedef void (*body_fn)(void **args);

enum state { READY, WAITING, DONE };

struct fiber {
    ucontext_t context;
    char *stack; /* a guard page below it: an overflow faults */
    int state;
    int line; /* of the barrier it waits at */
};

/* MOST_THREADS: the largest block fakecuda.c launches (set_kernel refuses larger ones). */
const size_t STACK_BYTES = 256 << 10, GUARD_BYTES = 4096, MOST_THREADS = 1024;

static std::mutex launching; /* the built-ins and shared memory are this library's globals */
/* MOST_THREADS, made by the first block of fibers: never moved, since a saved context points
 * into itself (its floating-point state). */
static fiber *fibers;
static ucontext_t scheduler;
static fiber *running;
static body_fn body;
static void **body_args;
static char fault[256];

static void enter()
{
    body(body_args);
    running->state = DONE; /* uc_link: back to the scheduler */
}

static void syncthreads(int line)
{
    if (!running) { /* harness.py gives fibers to every source that names __syncthreads */
        fprintf(stderr, "fakecuda: __syncthreads outside a block of fibers\n");
        abort();
    }
    running->state = WAITING;
    running->line = line;
    swapcontext(&running->context, &scheduler);
}

static fk_dim3 thread_index(unsigned i)
{
    return fk_dim3{i % blockDim.x, i / blockDim.x % blockDim.y, i / (blockDim.x * blockDim.y)};
}

/* Fiber i, ready to start the kernel (its stack made on first use). */
static bool prepare(unsigned i)
{
    fiber &f = fibers[i];
    if (!f.stack) {
        void *p = mmap(NULL, GUARD_BYTES + STACK_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED || mprotect(p, GUARD_BYTES, PROT_NONE) || getcontext(&f.context))
            return false;
        f.stack = (char *)p + GUARD_BYTES;
    }
    f.context.uc_stack.ss_sp = f.stack;
    f.context.uc_stack.ss_size = STACK_BYTES;
    f.context.uc_link = &scheduler;
    makecontext(&f.context, enter, 0);
    f.state = READY;
    return true;
}

/* The block's threads as fibers, each running until it waits at a barrier or returns, until
 * all have returned; false (and fault says why) where a barrier cannot open. */
static bool run_fibers(unsigned n, bool reverse)
{
    if (!fibers && !(fibers = (fiber *)calloc(MOST_THREADS, sizeof *fibers))) {
        snprintf(fault, sizeof fault, "no memory for its threads");
        return false;
    }
    for (unsigned i = 0; i < n; ++i)
        if (!prepare(i)) {
            snprintf(fault, sizeof fault, "no memory for the stack of thread %u", i);
            return false;
        }
    for (;;) {
        for (unsigned k = 0; k < n; ++k) {
            unsigned i = reverse ? n - 1 - k : k;
            if (fibers[i].state != READY)
                continue;
            threadIdx = thread_index(i);
            running = &fibers[i];
            swapcontext(&scheduler, &running->context);
        }
        running = NULL;
        unsigned waiting = 0, first = n, other = n;
        for (unsigned i = 0; i < n; ++i) {
            if (fibers[i].state != WAITING)
                continue;
            waiting++;
            if (first == n)
                first = i;
            else if (fibers[i].line != fibers[first].line && other == n)
                other = i;
        }
        if (waiting == 0)
            return true;
        if (waiting < n) {
            snprintf(fault, sizeof fault, "%u of its %u threads wait at the __syncthreads of line %d, "
                     "the others returned: a barrier in code some threads of a block skip", waiting, n,
                     fibers[first].line);
            return false;
        }
        if (other != n) {
            snprintf(fault, sizeof fault, "threads wait at the __syncthreads of lines %d and %d at once: "
                     "a barrier in code some threads of a block skip", fibers[first].line,
                     fibers[other].line);
            return false;
        }
        for (unsigned i = 0; i < n; ++i)
            fibers[i].state = READY;
    }
}

/* Every block of the grid; non-zero (and a message on stderr) when a block failed. */
static int run_grid(const char *name, const unsigned grid[3], const unsigned block[3], body_fn fn,
                    void **args, bool barriers)
{
    const char *order = getenv("FAKECUDA_THREAD_ORDER");
    bool reverse = order && !strcmp(order, "reverse");
    if (order && *order && !reverse && strcmp(order, "forward")) {
        fprintf(stderr, "fakecuda: FAKECUDA_THREAD_ORDER is forward or reverse, not %s\n", order);
        return 1;
    }
    std::lock_guard<std::mutex> hold(launching);
    gridDim = fk_dim3{grid[0], grid[1], grid[2]};
    blockDim = fk_dim3{block[0], block[1], block[2]};
    body = fn;
    body_args = args;
    unsigned long long blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
    unsigned threads = block[0] * block[1] * block[2];
    for (unsigned long long k = 0; k < blocks; ++k) {
        unsigned long long b = reverse ? blocks - 1 - k : k;
        blockIdx = fk_dim3{(unsigned)(b % grid[0]), (unsigned)(b / grid[0] % grid[1]),
                           (unsigned)(b / ((unsigned long long)grid[0] * grid[1]))};
        if (__start_fk_shared)
            memset(__start_fk_shared, 0xff, (size_t)(__stop_fk_shared - __start_fk_shared));
        if (!barriers) {
            for (unsigned t = 0; t < threads; ++t) {
                threadIdx = thread_index(reverse ? threads - 1 - t : t);
                fn(args);
            }
        } else if (!run_fibers(threads, reverse)) {
            fprintf(stderr, "fakecuda: kernel %s, block (%u, %u, %u): %s\n", name, blockIdx.x,
                    blockIdx.y, blockIdx.z, fault);
            return 1;
        }
    }
    return 0;
}

} // namespace fk

#define __syncthreads() fk::syncthreads(__LINE__)
