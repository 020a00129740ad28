/*
 * eagle.h -- the one public header of libeagle, the C core of eagle.
 *
 * It is the C ABI that Python reaches through cffi and that native plugins
 * (and hawk's generated kernels) implement.  Everything between the
 * EAGLE_CDEF markers is read by eagle._core as a cffi cdef, so that region
 * holds only plain declarations and integer #defines.
 *
 * Threads: every function may be called from any thread unless its comment
 * says otherwise.  libeagle never formats a user-facing message; it returns
 * a status and the Python side turns it into the refusal text.
 */
#ifndef EAGLE_EAGLE_H
#define EAGLE_EAGLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define EAGLE_API __declspec(dllexport)
#else
#define EAGLE_API __attribute__((visibility("default")))
#endif

/* EAGLE_CDEF_BEGIN */

/*
 * EAGLE_ABI_VERSION: one integer, compared for equality.  Bumped on any
 * change to a declaration below (a struct layout, a signature, an enum
 * value).  A library, plugin or kernel built for another value is refused.
 */
#define EAGLE_ABI_VERSION 3

/* The most axes a view may have (NumPy 2 allows 64; planes rarely pass 4). */
#define EAGLE_MAX_DIMS 32

/*
 * Samples are cut into blocks of this many, on fixed boundaries: block k is
 * [k*EAGLE_BLOCK, min((k+1)*EAGLE_BLOCK, n)).  A power of two, independent
 * of the thread count, so that no result depends on the team size.
 */
#define EAGLE_BLOCK 1024

/* Status codes.  0 is success; every error is negative. */
#define EAGLE_OK 0
#define EAGLE_ERR_ARG -1        /* a bad argument (null, out of range, bad view) */
#define EAGLE_ERR_NOMEM -2      /* an allocation failed */
#define EAGLE_ERR_CALLBACK -3   /* a callback item returned non-zero: the run stopped */
#define EAGLE_ERR_BUSY -4       /* the program is already running on another thread */
#define EAGLE_ERR_STATE -5      /* wrong order of calls (e.g. add after finalize) */
#define EAGLE_ERR_WAIT -6       /* a wait on an event no earlier branch signals */
#define EAGLE_ERR_THREAD -7     /* the team's threads could not be started */
#define EAGLE_ERR_COLLECTIVE -8 /* a collective failed, or the ranks' programs disagree */
/* No usable CUDA driver: no libcuda.so.1, older than 12.0, no device. */
#define EAGLE_ERR_NO_DRIVER -9
/* A CUDA driver call failed: the message names it and its CUresult. */
#define EAGLE_ERR_CUDA -10
/* The driver lacks a feature the graph uses (conditional nodes: 12.3). */
#define EAGLE_ERR_DRIVER_TOO_OLD -11
/* SIGINT arrived (eagle_interrupt_catch), or a launch's poll said stop. */
#define EAGLE_ERR_INTERRUPTED -12

/* ---------------------------------------------------------------- views */

/*
 * A strided view of memory, as NumPy describes an array: element
 * (i0, i1, ...) lives at data + sum(ik * strides[k]).  Strides are in bytes
 * and may be negative or zero.  `base` is the start of the allocation the
 * view lies in (0 when unknown): a hint for callers that group accesses; the
 * overlap test and the index decide by extents alone.  `device` is -1 for
 * host memory, else a GPU ordinal.
 */
typedef struct eagle_view {
    uintptr_t data;
    uintptr_t base;
    int64_t itemsize;
    int32_t ndim;
    int32_t device;
    int64_t shape[32];
    int64_t strides[32];
} eagle_view;

/* Results of the overlap test. */
#define EAGLE_OVERLAP_NO 0        /* exactly: no byte is shared */
#define EAGLE_OVERLAP_YES 1       /* exactly: some byte is shared */
#define EAGLE_OVERLAP_TOO_HARD 2  /* the work cap was hit: treat as overlap */
#define EAGLE_OVERLAP_OVERFLOW 3  /* int64 overflow in the solver: treat as overlap */
#define EAGLE_OVERLAP_BAD_VIEW -1 /* ndim out of range, negative shape, itemsize < 1 */

/*
 * Do views a and b share a byte?  Exact, stride-aware (negative and zero
 * strides, any offsets and item sizes) up to `max_work` failed candidate
 * sub-problems (< 0: no cap; 0: extents only).  Past the cap the answer is
 * EAGLE_OVERLAP_TOO_HARD, which callers must read as "overlap": a conflict
 * is never missed.  Views on different devices never overlap.  A NULL or
 * malformed view gives EAGLE_OVERLAP_BAD_VIEW and sets eagle_last_error.
 */
EAGLE_API int eagle_overlap(const eagle_view *a, const eagle_view *b, int64_t max_work);

/* The half-open byte extent [*lo, *hi) of a view: [0, 0) when it is empty,
 * all of memory [0, UINTPTR_MAX) when it is malformed or its extent
 * overflows (so an index built on extents stays conservative). */
EAGLE_API void eagle_view_extent(const eagle_view *v, uintptr_t *lo, uintptr_t *hi);

/*
 * Candidate index.  Among n accesses (views[i], writes[i] != 0 when access i
 * writes), find every pair i < j where at least one writes, both are on the
 * same device, and their byte extents intersect; with `exact` set, keep only
 * the pairs eagle_overlap (with max_work) does not answer NO.  Accesses are
 * sorted by (device, extent start) and swept, so the cost is
 * O(n log n + K) for K extent-intersecting pairs, not O(n^2).
 * On success *pairs holds 2 * (*npairs) indices (i, j), sorted, allocated
 * with malloc: free it with eagle_free.
 */
EAGLE_API int eagle_candidate_pairs(const eagle_view *views, const uint8_t *writes, int64_t n,
                                    int exact, int64_t max_work, int64_t **pairs, int64_t *npairs);

EAGLE_API void eagle_free(void *p);

/* -------------------------------------------------------------- kernels */

/* One argument slot of a kernel: a pointer to a plane or a scalar by value. */
typedef union eagle_arg {
    void *ptr;
    double f64;
    float f32;
    int64_t i64;
    uint64_t u64;
    int32_t i32;
    uint32_t u32;
} eagle_arg;

/*
 * The native kernel type: process samples [begin, end) with the argument
 * block `args`.  The executor always calls it on one block at a time (a
 * range inside one EAGLE_BLOCK-aligned block), possibly from several
 * threads at once on different blocks.  hawk emits these, and a plugin's own
 * shared library may export them: this is the C-ABI plugin point.
 */
typedef void (*eagle_kernel_fn)(int64_t begin, int64_t end, const eagle_arg *args);

/* A host callback item: returns 0, or non-zero to stop the run. */
typedef int (*eagle_callback_fn)(void *ctx);

/* --------------------------------------------------------- thread team */

/*
 * The host thread team: persistent threads, started on first use, sized by
 * EAGLE_NUM_THREADS or else the CPUs this process may run on.  Safe across
 * fork(): the child rebuilds its own team on first use.
 */
EAGLE_API int eagle_num_threads(void);

/* Resize the team (n >= 1; 0 re-reads EAGLE_NUM_THREADS / the CPU count).
 * Blocks until no run is using the team. */
EAGLE_API int eagle_set_num_threads(int n);

/* ------------------------------------------------------------- programs */

/*
 * A program is a list of stages; a stage holds one or more branches; a
 * branch is a list of items run in order.  A program is built with the
 * eagle_program_* and eagle_add_* calls, finalized once, then run any
 * number of times.  Conditional and loop items hold sub-programs, which
 * they own from the moment they are added.
 */
typedef struct eagle_program eagle_program;

/* Stage schedules. */
#define EAGLE_WORK_SHARE 0   /* items in order, each native item cut into blocks over the team */
#define EAGLE_BRANCH_TASKS 1 /* each branch's items in order on one thread */

/* Kernel item flags. */
#define EAGLE_PER_SAMPLE 1 /* reads and writes only its own sample: may be block-fused */
/* Over no samples, still called once with begin == end == 0 (a kernel
 * writing one-cell results writes them over an empty batch too). */
#define EAGLE_EMPTY_CALL 2

/* Access roles. */
#define EAGLE_READ 1
#define EAGLE_WRITE 2
#define EAGLE_READWRITE 3

/* Element types for reduce items. */
#define EAGLE_F64 0
#define EAGLE_F32 1
#define EAGLE_I64 2
#define EAGLE_I32 3
#define EAGLE_U32 4
#define EAGLE_U8 5
#define EAGLE_U64 6

/* Reduce operations. */
#define EAGLE_SUM 0
#define EAGLE_MAX 1
#define EAGLE_MIN 2
#define EAGLE_ALL 3
#define EAGLE_ANY 4

/* Loop kinds: when the guard cell is read. */
#define EAGLE_LOOP_WHILE 0 /* before every turn: run while *cell != 0 */
#define EAGLE_LOOP_DO 1    /* after every turn: run once, then again while *cell != 0 */
#define EAGLE_LOOP_COUNT 2 /* *cell read once per run: that many turns */

/* An access of a kernel item: a view and its role (EAGLE_READ ...). */
typedef struct eagle_access {
    eagle_view view;
    int32_t role;
} eagle_access;

EAGLE_API eagle_program *eagle_program_new(void);
EAGLE_API void eagle_program_free(eagle_program *p);

/* Open a new stage with the given schedule; items go to its first branch. */
EAGLE_API int eagle_stage(eagle_program *p, int schedule);
/* Open the next branch of the current stage. */
EAGLE_API int eagle_branch(eagle_program *p);

/*
 * Append a native kernel over n samples.  `args` (nargs slots) is copied.
 * `accesses` describe what it touches; they decide block fusion.
 */
EAGLE_API int eagle_add_kernel(eagle_program *p, eagle_kernel_fn fn, const eagle_arg *args,
                               int32_t nargs, int64_t n, int32_t flags,
                               const eagle_access *accesses, int32_t naccesses);
EAGLE_API int eagle_add_callback(eagle_program *p, eagle_callback_fn fn, void *ctx);
/* Make every kernel item of p (not of its sub-programs) that calls `from`
 * call `to`: a build appends a kernel whose code it compiles after lowering
 * under a stand-in address, then patches it before the program runs. */
EAGLE_API int eagle_patch_kernel(eagle_program *p, eagle_kernel_fn from, eagle_kernel_fn to);
/* out[0] = op over the first n elements of the contiguous 1-D array x, in
 * the fixed order of eagle_sum_order (see below); over none, op's identity
 * (sum and any 0, all 1, max the lowest value of dtype or -inf, min the
 * highest or +inf). */
EAGLE_API int eagle_add_reduce(eagle_program *p, const void *x, void *out, int64_t n, int32_t dtype,
                               int32_t op);
/* out[0] = op over the block partials kernels before it wrote: partials[b]
 * holds block b of the first n samples (eagle_reduce_block), and the item
 * finishes the blocks of min(n, logical size) in the same fixed order, so the
 * result has the bits eagle_add_reduce gives over the values themselves.
 * The item reduces partials in place. */
EAGLE_API int eagle_add_reduce_partials(eagle_program *p, void *partials, void *out, int64_t n,
                                        int32_t dtype, int32_t op);
/* *partial = op over x[0:n] (n <= EAGLE_BLOCK) in the fixed order: a kernel
 * computing a reduction's operand for one block reduces it here, and writes
 * no plane of values. */
EAGLE_API void eagle_reduce_block(const void *x, int64_t n, int32_t dtype, int32_t op,
                                  void *partial);
/* Copy the elements of src into dst (same shape and item size, any strides). */
EAGLE_API int eagle_add_copy(eagle_program *p, const eagle_view *src, const eagle_view *dst);
/* Run then_ when *cell != 0, else else_ (either may be NULL). */
EAGLE_API int eagle_add_if(eagle_program *p, const uint32_t *cell, eagle_program *then_,
                           eagle_program *else_);
/* Run arms[k] for the first k with *cell == values[k], else default_ (may be NULL). */
EAGLE_API int eagle_add_switch(eagle_program *p, const uint32_t *cell, int32_t narms,
                               const uint32_t *values, eagle_program **arms,
                               eagle_program *default_);
/* A loop of the given kind over body, at most max_iters turns (< 0: no cap). */
EAGLE_API int eagle_add_loop(eagle_program *p, const uint32_t *cell, int32_t kind,
                             int64_t max_iters, eagle_program *body);
/* Cross-branch events of a branch_tasks stage: wait blocks until an earlier
 * branch of the same stage has passed the matching signal in this run. */
EAGLE_API int eagle_add_signal(eagle_program *p, int32_t event);
EAGLE_API int eagle_add_wait(eagle_program *p, int32_t event);

/* Check the program and work out its block-fused runs.  Once, before run. */
EAGLE_API int eagle_program_finalize(eagle_program *p);

/* Per-sample items process min(their n, n) samples from the next run on. */
EAGLE_API int eagle_program_set_logical_size(eagle_program *p, int64_t n);

/*
 * Run the program `replays` times.  Returns EAGLE_ERR_BUSY at once if
 * another thread is running this program.  Called from inside a team
 * region (a kernel or callback of another run, or an OpenMP parallel
 * region) it runs everything on the calling thread.  May block; the
 * caller should not hold the GIL.
 */
EAGLE_API int eagle_run(eagle_program *p, int64_t replays);

/*
 * Added in ABI 3 (additive): with on=1, SIGINT stops a run (between replays
 * and loop turns, with EAGLE_ERR_INTERRUPTED) until the matching on=0.  The
 * signal still reaches the handler installed before (chained), so Python's
 * KeyboardInterrupt stays pending.  Calls nest; call from one thread.
 */
EAGLE_API int eagle_interrupt_catch(int on);

/*
 * Added in ABI 3 (additive): what a run of p has around it, set once (by
 * the caller that prepares its launches), so that a launch passes nothing
 * else.  `poll` (NULL: none) is called with `ctx` by a run of p on the
 * thread `poll_thread` ((uint64_t)pthread_self() of it: Python's main
 * thread, the one that handles signals; 0: any thread that runs p),
 * between replays and loop turns, at most once per EAGLE_POLL_MS (a
 * libeagle thread ticks that often while such runs are in progress, and
 * ends when none has been for a second; a run much shorter than that
 * seldom calls it): non-zero stops the run with EAGLE_ERR_INTERRUPTED
 * (Python's pending signals are handled there, with the GIL taken).
 * `guard` (NULL: none) is the flag eagle_launch holds, as eagle_guard_enter
 * does.
 */
#define EAGLE_POLL_MS 100
EAGLE_API int eagle_program_set_launch(eagle_program *p, int32_t *guard, eagle_callback_fn poll,
                                       void *ctx, uint64_t poll_thread);

/*
 * eagle_run holding p's guard: EAGLE_ERR_BUSY, with nothing run, when
 * another thread holds it.
 */
EAGLE_API int eagle_launch(eagle_program *p, int64_t replays);

/*
 * Collectives: one program run on every rank of a sharded batch (rank r
 * holds a contiguous, block-aligned, non-empty range of the samples, in rank
 * order).
 * libeagle never links a communication library: a plugin hands in these
 * function pointers, which must be called by every rank in the same order
 * and give every rank the same result.  Each returns 0, or non-zero when it
 * failed.
 *
 *   allreduce: *value (one element of dtype) becomes op over every rank's
 *     value.  dtype is an integer type; op is EAGLE_SUM (wrapping: signed
 *     sums arrive as their unsigned type), EAGLE_MAX or EAGLE_MIN.
 *   allgather: out = rank 0's counts[0] elements of dtype, then rank 1's
 *     counts[1], ...; this rank's counts[rank] elements are read from mine.
 */
typedef struct eagle_collective {
    void *ctx;
    int32_t rank, size;
    int (*allreduce)(void *ctx, void *value, int32_t dtype, int32_t op);
    int (*allgather)(void *ctx, const void *mine, void *out, const int64_t *counts, int32_t dtype);
} eagle_collective;

/*
 * Make every reduce item of the finalized program p (sub-programs included)
 * global over the ranks of c: an integer result is the allreduce of the
 * ranks' results (exact in any order, so every rank takes the same branch
 * of a guard), a float result runs the fixed tree over all ranks' block
 * partials gathered in rank order: the bits one process holding the whole
 * batch gets.  A collective call itself: every rank calls it once, on a
 * program of the same shape; the ranks exchange their reductions' sizes and
 * fail together (EAGLE_ERR_COLLECTIVE) when the counts differ, when a rank
 * holds no samples (its kernels would not write the cells the others' loops
 * read), or when a rank before the last does not hold whole blocks.  Refused
 * (EAGLE_ERR_ARG) for a reduce item in a branch_tasks stage of more than one
 * branch, whose order differs between ranks.  The logical size is fixed
 * from then on.  c is copied.
 */
EAGLE_API int eagle_program_set_collective(eagle_program *p, const eagle_collective *c);

/*
 * Added in ABI 3 (additive): the schedule a host stage runs with, the fixed
 * rule of seed 001 ("CPU schedules"), evaluated once when a program is
 * lowered.  EAGLE_BRANCH_TASKS when the stage is a fork/join (`group`) of at
 * least two branches, `threads` (the team size of that moment) is at least
 * two, and every one of its nnodes nodes is native (native[i] != 0: a kernel
 * the branch runner can call, no Python, no conditional) over a known number
 * of samples (samples[i] >= 0; < 0: unknown) of at most
 * EAGLE_BRANCH_TASKS_MAX_SAMPLES; else EAGLE_WORK_SHARE.  Negative (with
 * eagle_last_error set) for bad arguments.  eagle.Graph.build and
 * eagle::exec::resolve both call it, so the two cannot disagree.
 */
#define EAGLE_BRANCH_TASKS_MAX_SAMPLES 4096
EAGLE_API int eagle_stage_schedule(int32_t group, int32_t nbranches, int32_t threads,
                                   const int64_t *samples, const uint8_t *native, int64_t nnodes);

/* Counters of the last run of p: [0] team regions opened, [1] barriers passed. */
EAGLE_API void eagle_program_stats(const eagle_program *p, int64_t *stats);

/*
 * The fixed summation order (DESIGN.md section 4): T(x[0:n]) = x[0] for
 * n == 1, else T(x[0:h]) + T(x[h:n]) with h the largest power of two below
 * n.  Because EAGLE_BLOCK is a power of two, T over whole blocks equals T of
 * the block results, so a block-parallel sum is T exactly.  Exposed for
 * tests and for hawk's reductions.
 */
EAGLE_API double eagle_sum_f64(const double *x, int64_t n);
EAGLE_API float eagle_sum_f32(const float *x, int64_t n);

/*
 * A non-blocking guard over one int32 flag: enter returns 1 when it took the
 * flag and 0 when another thread holds it (never waits); leave releases it.
 * An atomic, so it holds on free-threaded Python too.
 */
EAGLE_API int eagle_guard_enter(int32_t *flag);
EAGLE_API void eagle_guard_leave(int32_t *flag);

/* ----------------------------------------------------------------- CUDA */

/*
 * libeagle reaches the CUDA driver at run time: libcuda.so.1 (or the library
 * the environment variable EAGLE_LIBCUDA names) is opened on the first call
 * below (never linked), and every entry point is resolved
 * through cuGetProcAddress with the CUDA version whose signature libeagle
 * declares.  No CUDA toolkit is needed to build libeagle.  Every call works
 * in the PRIMARY context of `device`, made current on the calling thread.
 * Device addresses are passed as uint64_t; pinned host memory from
 * eagle_cuda_host_alloc may be passed where a device address is expected.
 */

/*
 * Open the driver and retain the primary context of `device`; *driver_version
 * (may be NULL) receives cuDriverGetVersion's 1000*major + 10*minor.
 * EAGLE_ERR_NO_DRIVER when libcuda.so.1 cannot be loaded, is older than
 * CUDA 12.0, or sees no device; eagle_last_error says which.  Repeated calls
 * are cheap.  The context stays retained until the process ends.
 */
EAGLE_API int eagle_cuda_open(int device, int *driver_version);

/*
 * The driver's cuDriverGetVersion (1000*major + 10*minor) into *version,
 * loading libcuda.so.1 if need be but retaining no context: what a compiler
 * (NVRTC) is chosen by.  EAGLE_ERR_NO_DRIVER where no driver library loads.
 */
EAGLE_API int eagle_cuda_driver_version(int *version);

/* Device memory (cuMemAlloc / cuMemFree). */
EAGLE_API int eagle_cuda_malloc(int device, size_t bytes, uint64_t *address);
EAGLE_API int eagle_cuda_free(int device, uint64_t address);
/* Pinned (page-locked), portable, device-mapped host memory (cuMemHostAlloc). */
EAGLE_API int eagle_cuda_host_alloc(int device, size_t bytes, void **host);
EAGLE_API int eagle_cuda_host_free(int device, void *host);
/* A synchronous copy of `bytes` in any direction; the driver infers it
 * from the addresses (unified addressing). */
EAGLE_API int eagle_cuda_memcpy(int device, uint64_t dst, uint64_t src, size_t bytes);
/* Where `address` lies: device memory, pinned host memory (registered with
 * the driver: cuMemHostAlloc, CuPy's pinned pools), or pageable host memory. */
#define EAGLE_MEMORY_PAGEABLE 0
#define EAGLE_MEMORY_PINNED 1
#define EAGLE_MEMORY_DEVICE 2
EAGLE_API int eagle_cuda_memory_type(int device, uint64_t address, int32_t *type);
/* The compute capability of `device` (9 and 0 for an H100 or H200). */
EAGLE_API int eagle_cuda_device_arch(int device, int *major, int *minor);
/* Make stream `waiter` wait, on the device, for the work enqueued on stream `waited` so far
 * (an event recorded on `waited`, waited for on `waiter`, released at once); the host does not
 * wait.  0 is the legacy default stream. */
EAGLE_API int eagle_cuda_stream_wait(int device, uint64_t waiter, uint64_t waited);
/* Wait for all work on `device` (cuCtxSynchronize in its primary context). */
EAGLE_API int eagle_cuda_synchronize(int device);
/* Load a module from a NUL-terminated PTX text or a cubin image
 * (cuModuleLoadData) and look a kernel up in it by its (unmangled) name. */
EAGLE_API int eagle_cuda_module_load(int device, const void *image, void **module);
EAGLE_API int eagle_cuda_module_function(int device, void *module, const char *name,
                                         void **function);
EAGLE_API int eagle_cuda_module_unload(int device, void *module);
/* Launch kernel `function` on `stream` (0: the legacy default stream) with
 * parameters from args (as eagle_gpu_add_kernel takes them); not waited for.
 * Inside a captured function it is recorded, not run. */
EAGLE_API int eagle_cuda_launch(int device, void *function, const uint32_t *grid,
                                const uint32_t *block, uint32_t shared_bytes, uint64_t stream,
                                const eagle_arg *args, int32_t nargs);

/*
 * Added in ABI 3 (additive): streams and stream capture for callers with no
 * CUDA runtime of their own (the C++ face, eagle/cuda.hpp).  A stream from
 * eagle_cuda_stream_create is a CUstream of `device`'s primary context
 * (flags 0: it waits for the legacy default stream, as cudaStreamCreate's).
 * Between eagle_cuda_capture_begin and eagle_cuda_capture_end the work
 * launched on the stream (by any library: kernel launches, copies) is
 * recorded into a CUgraph instead of running; relaxed mode, as libeagle's
 * own captures.  End hands the CUgraph to the caller, who frees it with
 * eagle_cuda_graph_destroy or gives it to eagle_gpu_adopt_child.  A failed
 * capture (an unsupported call on the stream) still ends it: the stream is
 * usable again, and *graph is 0.
 */
EAGLE_API int eagle_cuda_stream_create(int device, uint64_t *stream);
EAGLE_API int eagle_cuda_stream_destroy(int device, uint64_t stream);
/* Wait, on the host, for the work enqueued on `stream` so far. */
EAGLE_API int eagle_cuda_stream_synchronize(int device, uint64_t stream);
EAGLE_API int eagle_cuda_capture_begin(int device, uint64_t stream);
EAGLE_API int eagle_cuda_capture_end(int device, uint64_t stream, uint64_t *graph);
/* A CUgraph belongs to no device: only the driver is needed. */
EAGLE_API int eagle_cuda_graph_destroy(uint64_t graph);

/*
 * A GPU graph has the shape of a program: stages of branches of items, and
 * conditional items holding sub-graphs, which they own from the moment they
 * are added.  Each item of a branch depends on the one before it; the first
 * item of a branch depends on the last item of every branch of the stage
 * before.  Nothing touches the driver until eagle_gpu_instantiate, which
 * builds one CUDA graph with explicit graph-API calls (stream capture only
 * for the work of a captured item) and instantiates it once; launches then
 * replay it.
 *
 * The eagle_gpu_add_* calls return the item's node id (>= 0, counted per
 * graph object, for the set_* calls below) or a negative status.  Calls on
 * one graph must not overlap (CUDA graphs are not thread-safe).
 */
typedef struct eagle_gpu_graph eagle_gpu_graph;

/* eagle_gpu_instantiate flags. */
#define EAGLE_GPU_PLAIN_IF 1 /* lower IF/ELSE and SWITCH as plain IF nodes on every driver */

/* Counters of eagle_gpu_graph_stats. */
#define EAGLE_GPU_STAT_CAPTURES 0     /* CUDA graphs built from the description */
#define EAGLE_GPU_STAT_GRAPH_BUILDS 1 /* instantiations */
#define EAGLE_GPU_STAT_REPLAYS 2      /* replays enqueued */
#define EAGLE_GPU_NSTATS 3

EAGLE_API eagle_gpu_graph *eagle_gpu_graph_new(void);
/* Frees g and its sub-graphs; waits for g's replays first.  A sub-graph
 * added to another graph is freed by that graph, never directly. */
EAGLE_API void eagle_gpu_graph_free(eagle_gpu_graph *g);

/* Open a new stage; items go to its first branch.  Open the next branch. */
EAGLE_API int eagle_gpu_stage(eagle_gpu_graph *g);
EAGLE_API int eagle_gpu_branch(eagle_gpu_graph *g);

/*
 * A kernel node: `function` from eagle_cuda_module_function, grid and block
 * of 3 dimensions each.  args[i] holds kernel parameter i (a device address
 * in .u64, a scalar in its own member: the driver reads the parameter's
 * size from the kernel, from the start of the slot).  Copied.
 */
EAGLE_API int eagle_gpu_add_kernel(eagle_gpu_graph *g, void *function, const uint32_t *grid,
                                   const uint32_t *block, uint32_t shared_bytes,
                                   const eagle_arg *args, int32_t nargs);
/* A copy node of `bytes` contiguous bytes; direction from the addresses.
 * A host side must be pinned (eagle_cuda_host_alloc): instantiate refuses
 * pageable memory, which the driver would read at every replay unsafely. */
EAGLE_API int eagle_gpu_add_copy(eagle_gpu_graph *g, uint64_t dst, uint64_t src, size_t bytes);
/* A host node: fn(ctx) on a driver thread at every replay, in graph order.
 * It must not call CUDA.  A non-zero return does not stop the replay (the
 * device runs on); the next launch or synchronize returns
 * EAGLE_ERR_CALLBACK.  Not allowed inside a conditional's sub-graph. */
EAGLE_API int eagle_gpu_add_host(eagle_gpu_graph *g, eagle_callback_fn fn, void *ctx);
/* The next item of the current branch also waits for item `node` of g, which
 * must lie in an earlier branch or stage (b.wait(x) of a fork: one edge). */
EAGLE_API int eagle_gpu_add_wait(eagle_gpu_graph *g, int32_t node);
/* A function that enqueues work on `stream` (a CUstream) and returns 0, or
 * non-zero to fail.  It runs once, at instantiation, while libeagle captures
 * the stream; what it enqueued becomes a child graph node. */
typedef int (*eagle_capture_fn)(void *ctx, uint64_t stream);
/* A captured node: fn's work on `stream` (the caller's), or on the graph's
 * own stream when stream is 0. */
EAGLE_API int eagle_gpu_add_captured(eagle_gpu_graph *g, eagle_capture_fn fn, void *ctx,
                                     uint64_t stream);
/* A child graph node running a clone of `graph` (a CUgraph, e.g. torch's
 * CUDAGraph.raw_cuda_graph() or a warp.Graph's), cloned at instantiation. */
EAGLE_API int eagle_gpu_add_child(eagle_gpu_graph *g, uint64_t graph);

/* Added in ABI 3 (additive): eagle_gpu_add_child of a CUgraph that g now
 * owns: freed with g (with the graph holding g, for a sub-graph), whether or
 * not g was instantiated.  On failure the caller keeps it. */
EAGLE_API int eagle_gpu_adopt_child(eagle_gpu_graph *g, uint64_t graph);
/*
 * Added in ABI 3 (additive): a kernel over n samples that
 * eagle_gpu_set_logical_size retunes.  `function` is a grid-stride kernel
 * whose parameters are args[0..nargs) followed by one int64 (its logical end:
 * it processes samples [0, end)); libeagle appends that end, min(n, logical
 * size), and launches EAGLE_GPU_THREADS threads per block over just enough
 * blocks for it (at least one, at most EAGLE_GPU_MAX_BLOCKS).
 */
#define EAGLE_GPU_THREADS 256
#define EAGLE_GPU_MAX_BLOCKS 65536
EAGLE_API int eagle_gpu_add_samples_kernel(eagle_gpu_graph *g, void *function,
                                           const eagle_arg *args, int32_t nargs, int64_t n);
/* Every samples kernel of g and its sub-graphs processes min(its n, n)
 * samples from the next replay on: patched into the instantiated graph (no
 * re-capture), or into the description before instantiation.  n >= 0. */
EAGLE_API int eagle_gpu_set_logical_size(eagle_gpu_graph *g, int64_t n);
/* Added in ABI 3 (additive): replay g on `stream` (a CUstream of the
 * device's primary context, the caller's: it must outlive g) instead of a
 * stream of its own.  Before eagle_gpu_instantiate. */
EAGLE_API int eagle_gpu_set_stream(eagle_gpu_graph *g, uint64_t stream);

/*
 * Conditionals read a one-cell uint32 array at device address `cell` (device
 * or pinned memory) once, when reached, with a one-thread kernel libeagle
 * adds before the node.  They need a CUDA 12.3 driver (instantiate returns
 * EAGLE_ERR_DRIVER_TOO_OLD below).  IF/ELSE with both arms uses the
 * two-body IF node on 13.0 and later (12.8 and 12.9 drivers mis-instantiate
 * it), else two plain IF nodes; SWITCH uses the SWITCH node on 12.8 and
 * later, else one plain IF node per arm.
 */
/* Run then_ when *cell != 0, else else_ (either may be NULL). */
EAGLE_API int eagle_gpu_add_if(eagle_gpu_graph *g, uint64_t cell, eagle_gpu_graph *then_,
                               eagle_gpu_graph *else_);
/* Run arms[*cell] when *cell < narms, else default_ (any may be NULL). */
EAGLE_API int eagle_gpu_add_switch(eagle_gpu_graph *g, uint64_t cell, int32_t narms,
                                   eagle_gpu_graph **arms, eagle_gpu_graph *default_);
/* EAGLE_LOOP_WHILE or EAGLE_LOOP_DO over body (EAGLE_LOOP_COUNT is refused:
 * it needs a device-side counter), with *cell re-read after every turn. */
EAGLE_API int eagle_gpu_add_loop(eagle_gpu_graph *g, uint64_t cell, int32_t kind,
                                 eagle_gpu_graph *body);

/* Build the CUDA graph on `device` and instantiate it.  Once per graph. */
EAGLE_API int eagle_gpu_instantiate(eagle_gpu_graph *g, int device, int32_t flags);
/* Replay `replays` times on g's own stream and wait.  May block; the
 * caller should not hold the GIL (host nodes may need it). */
EAGLE_API int eagle_gpu_launch(eagle_gpu_graph *g, int64_t replays);
/* Replay without waiting; eagle_gpu_synchronize waits. */
/* The stream g's replays run on (g instantiated): for eagle_cuda_stream_wait. */
EAGLE_API int eagle_gpu_stream(const eagle_gpu_graph *g, uint64_t *stream);
EAGLE_API int eagle_gpu_enqueue(eagle_gpu_graph *g, int64_t replays);
EAGLE_API int eagle_gpu_synchronize(eagle_gpu_graph *g);

/*
 * Patch kernel node `node` of g in the instantiated graph, for the replays
 * enqueued from now on: all its arguments (nargs must not change), or its
 * grid.  g may be a sub-graph of an instantiated graph: whether the driver
 * accepts a node inside a conditional body is not yet confirmed on a GPU.
 */
EAGLE_API int eagle_gpu_set_kernel_args(eagle_gpu_graph *g, int32_t node, const eagle_arg *args,
                                        int32_t nargs);
EAGLE_API int eagle_gpu_set_grid(eagle_gpu_graph *g, int32_t node, const uint32_t *grid);
/* Patch copy node `node` to copy its bytes from src to dst (device or pinned). */
EAGLE_API int eagle_gpu_set_copy(eagle_gpu_graph *g, int32_t node, uint64_t dst, uint64_t src);

/* stats[EAGLE_GPU_STAT_*] of g (of its top graph, for a sub-graph). */
EAGLE_API void eagle_gpu_graph_stats(const eagle_gpu_graph *g, int64_t *stats);

/* --------------------------------------------------------------- layout */

/*
 * The layered layout of a graph's picture (layout.c): where every box, frame,
 * wire and plane row goes, in character cells (x a column, y a row, from the
 * top left), and every long edge routed around the boxes.  eagle-viz's four
 * faces and a C++ view of a graph draw from the same result.
 *
 * The input is a picture tree in preorder: the stages' blocks one after the
 * other, each block followed by its children.  A BOX is one node (width: its
 * text's columns); a SEQ runs its children top to bottom; a FORK stands them
 * side by side, in the order given (never reordered: the graph's branch
 * order); a FRAME draws a titled border (width: its title's columns) around
 * its one child.  `owners[node]` is the graph node whose edges a box has (a
 * node inside a device construct has its construct's); `pairs` are the
 * (src, dst) to draw an arrow between (data flows, or a wait), each an owner
 * (from its last box, into its first) or a node inside a construct (its own
 * box): those not drawn as a wire (between owners: any wire joining them;
 * inside one owner: a wire between the two boxes) become long links, routed
 * orthogonally, every one of them (a link with no route fails the call).
 */
#define EAGLE_LAYOUT_BOX 0
#define EAGLE_LAYOUT_SEQ 1
#define EAGLE_LAYOUT_FORK 2
#define EAGLE_LAYOUT_FRAME 3

typedef struct eagle_layout_block {
    int32_t kind;  /* EAGLE_LAYOUT_* */
    int32_t count; /* children that follow (SEQ, FORK: at least one; FRAME: 1; BOX: 0) */
    int32_t node;  /* BOX: the node (0 <= node < n_nodes); else ignored */
    int32_t width; /* BOX: columns of its text; FRAME: of its title */
} eagle_layout_block;

typedef struct eagle_layout_pair {
    int32_t src, dst;
} eagle_layout_pair;

typedef struct eagle_layout_input {
    const eagle_layout_block *blocks; /* the stages' trees, one after another */
    int32_t n_blocks;
    int32_t n_stages;
    const int32_t *label_w; /* columns of each stage's label; NULL: no stage labels */
    int32_t columns;        /* > 1: the stages flow into this many columns side by side */
    const int32_t *owners;  /* n_nodes entries */
    int32_t n_nodes;
    const eagle_layout_pair *pairs; /* pairs to draw an arrow between, each once */
    int32_t n_pairs;
} eagle_layout_input;

typedef struct eagle_layout_point {
    int32_t x, y;
} eagle_layout_point;

typedef struct eagle_layout_box {
    int32_t node, x, y, w; /* three rows tall */
} eagle_layout_box;

typedef struct eagle_layout_frame {
    int32_t block; /* its index in the input */
    int32_t x, y, w, h;
    int32_t first_box, n_boxes; /* the boxes inside: boxes[first_box .. first_box + n_boxes) */
} eagle_layout_frame;

/* An exit a wire leaves from, and the row under it where the plane names go (room: columns). */
typedef struct eagle_layout_exit {
    int32_t node, x, y, room;
} eagle_layout_exit;

typedef struct eagle_layout_stage {
    int32_t stage, x, y, w; /* w: the label column, the space after it included */
} eagle_layout_stage;

/*
 * A wire (adjacent: a block and the one after it) from src's bottom to dst's
 * top, or a long link from the cell beside src to the cell beside dst (where
 * its arrow points into dst).  points[first .. first + n) are the corners,
 * at least one.  pair: in `links`, the
 * input pair it draws, -1 for a wire between owners no pair names (it only
 * orders); always -1 in `wires`.
 */
typedef struct eagle_layout_link {
    int32_t src, dst, pair, adjacent;
    int32_t first, n;
} eagle_layout_link;

/* The result: every array is owned by it, freed by eagle_layout_free. */
typedef struct eagle_layout {
    int32_t width, height; /* cells, long links' lanes and rows below included */
    eagle_layout_box *boxes;
    int32_t n_boxes;
    eagle_layout_frame *frames; /* inner frames before the frames around them */
    int32_t n_frames;
    eagle_layout_exit *exits;
    int32_t n_exits;
    eagle_layout_stage *stages;
    int32_t n_stages;
    eagle_layout_link *wires; /* every wire, in placing order (adjacent == 1) */
    int32_t n_wires;
    eagle_layout_link *links; /* each adjacent pair once, then the long links */
    int32_t n_links;
    eagle_layout_point *points;
    int32_t n_points;
    int32_t caps[7]; /* allocated sizes (private) */
} eagle_layout;

/*
 * Lay out `in` into a new *out (free it with eagle_layout_free, also after an
 * error, when *out may be NULL).  EAGLE_ERR_ARG for a malformed tree (a count
 * past the end, a node out of range, a stage that is not one tree) or a long
 * link no route reaches (boxes wall its end in),
 * EAGLE_ERR_NOMEM.  Pure: no global state, any thread.
 */
EAGLE_API int eagle_layout_run(const eagle_layout_input *in, eagle_layout **out);
EAGLE_API void eagle_layout_free(eagle_layout *lay);

/* ------------------------------------------------------------- pictures */

/* What a box holds (eagle._pictures.ROLES, in its order): its colours; an opaque op's border is
 * dashed. */
#define EAGLE_ROLE_KERNEL 0
#define EAGLE_ROLE_PYTHON 1
#define EAGLE_ROLE_OPAQUE 2
#define EAGLE_ROLE_BUILTIN 3
#define EAGLE_ROLE_COUNT 4

/* The palette every drawn face shares, by eagle_picture_style: a role's fill (FILL + role) and
 * border (BORDER + role), the frames' fill and colour, the wires', the labels', the long links'
 * colours, the font. */
#define EAGLE_STYLE_FILL 0
#define EAGLE_STYLE_BORDER 4
#define EAGLE_STYLE_FRAME_FILL 8
#define EAGLE_STYLE_FRAME 9
#define EAGLE_STYLE_WIRE 10
#define EAGLE_STYLE_LABEL 11
#define EAGLE_STYLE_LONG 12
#define EAGLE_STYLE_FONT 13
#define EAGLE_STYLE_COUNT 14

/*
 * The texts a picture of a layout says (picture_text.c, picture_faces.c),
 * UTF-8, each code point one column (as the layout's widths count them).
 * nodes[node]: the text of node's box; roles[node]: its EAGLE_ROLE_* (NULL:
 * every box a kernel's); frames[k]: the title of the layout's frame k;
 * exits[k]: the plane names under exit k ("" for none); stages[s]: the label
 * of stage s beside its first box (the `stage` of a stage row), notes[s] the
 * line DOT and Mermaid write before it ("stage 2 work_share"); pairs[p]: the
 * label of the links that draw input pair p ("": none, a dashed arrow);
 * header: the first line.  Each face reads the fields it draws.
 */
typedef struct eagle_picture_texts {
    const char *header;
    const char *const *nodes;
    const int32_t *roles;
    int32_t n_nodes;
    const char *const *frames;
    int32_t n_frames; /* lay->n_frames */
    const char *const *exits;
    int32_t n_exits; /* lay->n_exits */
    const char *const *stages;
    const char *const *notes;
    int32_t n_stages;
    const char *const *pairs;
    int32_t n_pairs; /* the layout input's n_pairs */
} eagle_picture_texts;

/*
 * The text picture of `lay` (what print(g) shows): the header line, then the
 * layout in box-drawing characters, each row without its trailing blanks,
 * joined by newlines (none at the end), into a new *out (free it with
 * eagle_free; NULL after an error).  EAGLE_ERR_ARG for texts that do not fit
 * the layout (a count that differs from the layout's, a node or stage past
 * the texts, a text wider than its box or frame, a NULL or non-UTF-8 text) or
 * a layout whose cells lie outside its width and height, EAGLE_ERR_NOMEM.
 * Pure: any thread.
 */
EAGLE_API int eagle_picture_text(const eagle_layout *lay, const eagle_picture_texts *texts,
                                 char **out);

/*
 * The Mermaid flowchart (eagle_picture_mermaid) and the Graphviz DOT graph
 * (eagle_picture_dot) of `lay`, laid out from `in`: the picture tree's boxes
 * and frames in order, the links, and for DOT each row of boxes as one rank in
 * the layout's order; a new *out as eagle_picture_text's, and its errors
 * (texts or a tree that do not fit the layout: a frame with no row, counts
 * that differ, a role out of range).
 */
EAGLE_API int eagle_picture_mermaid(const eagle_layout_input *in, const eagle_layout *lay,
                                    const eagle_picture_texts *texts, char **out);
EAGLE_API int eagle_picture_dot(const eagle_layout_input *in, const eagle_layout *lay,
                                const eagle_picture_texts *texts, char **out);

/* The palette's entry `which` (EAGLE_STYLE_*), a static string; NULL past EAGLE_STYLE_COUNT. */
EAGLE_API const char *eagle_picture_style(int32_t which);

/* EAGLE_ABI_VERSION of this build. */
EAGLE_API int eagle_abi_version(void);

/* A message for the last error on this thread ("" when none). */
EAGLE_API const char *eagle_last_error(void);

/* EAGLE_CDEF_END */

#ifdef __cplusplus
}
#endif

#endif /* EAGLE_EAGLE_H */
