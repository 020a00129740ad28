/*
 * fakecuda: a CPU emulation of the part of the CUDA driver API libeagle
 * uses, for tests on machines without a GPU.  libeagle opens it instead of
 * libcuda.so.1 when EAGLE_LIBCUDA names it (tests/fakecuda/harness.py).
 *
 * Model: one device (ordinal 0) with one primary context; "device memory"
 * is 256-byte aligned host memory; every stream runs its work synchronously
 * when it is enqueued, so synchronizing is a no-op and a recorded event has
 * completed (the counters of host waits and event waits say what was
 * ordered, for tests that cannot time it).  Modules record the
 * `.entry NAME` names of their PTX text; a kernel runs through a host
 * function registered under its name (fakecuda_register), which also gives
 * the parameter sizes the driver would read from the kernel image.
 *
 * Graphs are emulated faithfully where libeagle could get them wrong:
 * kernel parameters are copied when a node is added, an exec is a snapshot
 * of its graph, launches run nodes in a dependency order that differs from
 * insertion order where the edges allow (so a missing edge shows), and
 * conditional nodes (IF, IF/ELSE, SWITCH, WHILE) follow cuda.h, with the
 * version gates and body restrictions of the real driver where they are
 * cheap to check.  Child graph nodes run a clone of their graph taken when
 * they are added.  A stream that captures (cuStreamBeginCapture) records
 * the kernels launched on it into a graph instead of running them, one
 * after another; calls the real driver forbids during a capture are
 * refused and invalidate it, so cuStreamEndCapture fails as it would.  Refusals print why on stderr: the CUresult alone rarely
 * says enough in a test log.
 *
 * Declarations come from libeagle's own cuda_driver.h (checked against the
 * toolkit by tests/test_cuda_decls.py), so the fake builds without CUDA.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"

#define FK_API __attribute__((visibility("default")))

/* Values cuda_driver_types.h does not name (CUDA 13.0 cuda.h). */
enum {
    FK_CUDA_ERROR_INVALID_DEVICE = 101,
    FK_CUDA_ERROR_INVALID_CONTEXT = 201,
    FK_CUDA_ERROR_INVALID_HANDLE = 400,
    FK_CUDA_ERROR_ILLEGAL_STATE = 401,
    FK_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
    FK_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
    FK_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
    FK_CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
    FK_CAPTURE_MODE_GLOBAL = 0,
    FK_CAPTURE_MODE_RELAXED = 2,
    FK_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
    FK_GRAPH_COND_ASSIGN_DEFAULT = 1,
    FK_NODE_KERNEL = 0,
    FK_NODE_MEMCPY = 1,
    FK_NODE_HOST = 3,
    FK_NODE_GRAPH = 4,
    FK_NODE_EMPTY = 5,
    FK_NODE_CONDITIONAL = EG_CU_GRAPH_NODE_TYPE_CONDITIONAL,
};

/* Driver versions that brought the conditional features (reference notes, 2.1). */
#define FK_CONDITIONAL_DRIVER 12030
#define FK_SWITCH_DRIVER 12080 /* and two-body IF */
/* A handle without CU_GRAPH_COND_ASSIGN_DEFAULT has no specified value at
 * launch start (cuda.h); the fake gives it this one, so code that relies on
 * an unset handle runs the wrong body (non-zero: IF runs; large: SWITCH runs none). */
#define FK_UNSET_HANDLE_VALUE 0x5eedu
/* A WHILE that turns this often is taken for a bug in the test, not a loop. */
#define FK_MAX_TURNS 10000000L

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static eg_CUresult refuse(eg_CUresult r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fakecuda: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return r;
}

/* Grow *v (of *cap elements of size) to hold n + 1. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 8;
    void *p = realloc(*v, c * size);
    if (!p)
        return -1;
    *v = p;
    *cap = c;
    return 0;
}

/* ------------------------------------------------------------ counters */

static long n_graph_launches, n_kernel_runs, n_live_allocations, n_host_waits, n_event_waits;

FK_API long fakecuda_launches(void) { return n_graph_launches; }
/* Conditional nodes run, by CU_GRAPH_COND_TYPE_* (IF, WHILE, SWITCH): a WHILE once per node reached. */
static long n_conditional_runs[3];
FK_API long fakecuda_conditional_runs(int type) { return type >= 0 && type < 3 ? n_conditional_runs[type] : -1; }
/* cuStreamSynchronize and cuCtxSynchronize calls: the host waiting for the device. */
FK_API long fakecuda_host_waits(void) { return n_host_waits; }
/* cuStreamWaitEvent calls on a recorded event: one stream ordered after another. */
FK_API long fakecuda_event_waits(void) { return n_event_waits; }
FK_API long fakecuda_kernel_runs(void) { return n_kernel_runs; }
FK_API long fakecuda_live_allocations(void) { return n_live_allocations; }

/* ------------------------------------------------------- device, context */

static int driver_version(void)
{
    const char *s = getenv("FAKECUDA_DRIVER_VERSION");
    return s && *s ? atoi(s) : 13000;
}

/* The primary context: its address is all that is ever compared. */
static struct eg_CUctx_st {
    int device;
} primary;

static int initialized;

static eg_CUresult fk_cuInit(unsigned int flags)
{
    if (flags)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuInit: flags must be 0");
    initialized = 1;
    return EG_CUDA_SUCCESS;
}

static const struct {
    int code;
    const char *name;
} error_names[] = {
    {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"}, {100, "CUDA_ERROR_NO_DEVICE"},
    {101, "CUDA_ERROR_INVALID_DEVICE"}, {201, "CUDA_ERROR_INVALID_CONTEXT"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"}, {218, "CUDA_ERROR_INVALID_PTX"},
    {400, "CUDA_ERROR_INVALID_HANDLE"}, {401, "CUDA_ERROR_ILLEGAL_STATE"},
    {500, "CUDA_ERROR_NOT_FOUND"}, {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {719, "CUDA_ERROR_LAUNCH_FAILED"}, {801, "CUDA_ERROR_NOT_SUPPORTED"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"}, {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
    {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"}, {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD"},
};

static eg_CUresult fk_cuGetErrorName(eg_CUresult error, const char **pStr)
{
    for (size_t i = 0; i < sizeof error_names / sizeof error_names[0]; ++i)
        if (error_names[i].code == error) {
            *pStr = error_names[i].name;
            return EG_CUDA_SUCCESS;
        }
    *pStr = NULL;
    return EG_CUDA_ERROR_INVALID_VALUE;
}

static eg_CUresult fk_cuDeviceGetCount(int *count)
{
    if (!initialized)
        return EG_CUDA_ERROR_NOT_INITIALIZED;
    *count = 1;
    return EG_CUDA_SUCCESS;
}

static eg_CUresult fk_cuDeviceGet(eg_CUdevice *device, int ordinal)
{
    if (!initialized)
        return EG_CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal != 0)
        return FK_CUDA_ERROR_INVALID_DEVICE;
    *device = 0;
    return EG_CUDA_SUCCESS;
}

/* The emulated device: compute capability 8.0 (what a PTX JIT and a CUBIN would target). */
static eg_CUresult fk_cuDeviceGetAttribute(int *pi, eg_CUdevice_attribute attrib, eg_CUdevice dev)
{
    if (!initialized)
        return EG_CUDA_ERROR_NOT_INITIALIZED;
    if (!pi || dev != 0)
        return EG_CUDA_ERROR_INVALID_VALUE;
    if (attrib == EG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
        *pi = 8;
    else if (attrib == EG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
        *pi = 0;
    else
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuDeviceGetAttribute: attribute %d is not emulated",
                      (int)attrib);
    return EG_CUDA_SUCCESS;
}

/* Streams run their work at once: nothing is ever pending. */
static eg_CUresult fk_cuCtxSynchronize(void)
{
    n_host_waits++;
    return initialized ? EG_CUDA_SUCCESS : EG_CUDA_ERROR_NOT_INITIALIZED;
}

static eg_CUresult fk_cuDevicePrimaryCtxRetain(eg_CUcontext *pctx, eg_CUdevice dev)
{
    if (dev != 0)
        return FK_CUDA_ERROR_INVALID_DEVICE;
    *pctx = &primary;
    return EG_CUDA_SUCCESS;
}

static eg_CUresult fk_cuCtxSetCurrent(eg_CUcontext ctx)
{
    return ctx == NULL || ctx == &primary ? EG_CUDA_SUCCESS : FK_CUDA_ERROR_INVALID_CONTEXT;
}

/* A context argument of a node or handle: NULL means the current one. */
static int bad_ctx(eg_CUcontext ctx) { return ctx && ctx != &primary; }

/* --------------------------------------------------------------- streams */

struct eg_CUstream_st {
    unsigned flags;
    /* Stream capture: */
    eg_CUgraph capture;  /* the graph being captured; NULL when not capturing */
    eg_CUgraphNode last; /* the node captured last: the next one depends on it */
    int mode;            /* CU_STREAM_CAPTURE_MODE_* of cuStreamBeginCapture */
    int invalidated;     /* a refused call broke the sequence: cuStreamEndCapture fails */
    pthread_t thread;    /* that began the capture */
};

/* The streams capturing now (under lock). */
static eg_CUstream *capturing;
static size_t ncapturing, capturing_cap;

/* A stream cuStreamCreate made: not NULL, CU_STREAM_LEGACY (0x1) or CU_STREAM_PER_THREAD (0x2). */
static int is_stream(eg_CUstream s) { return (uintptr_t)s > 2; }

/* The legacy default stream (NULL: entry points are resolved with CU_GET_PROC_ADDRESS_LEGACY_STREAM). */
static int is_legacy(eg_CUstream s) { return (uintptr_t)s <= 1; }

static int is_capturing(eg_CUstream s) { return is_stream(s) && s->capture; }

static void forget_capture(eg_CUstream s)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ncapturing; ++i)
        if (capturing[i] == s) {
            capturing[i] = capturing[--ncapturing];
            break;
        }
    pthread_mutex_unlock(&lock);
    s->capture = NULL;
    s->last = NULL;
    s->invalidated = 0;
}

/* A potentially unsafe call (cuMemAlloc, cuMemFree, the synchronous
 * cuMemcpy).  cuThreadExchangeStreamCaptureMode is not emulated, so every
 * thread is in GLOBAL mode, where such a call is prohibited while this
 * thread has a capture not begun RELAXED or another thread has one begun
 * GLOBAL (cuda.h).  The call fails and the capture is invalidated. */
static eg_CUresult capture_forbids(const char *api)
{
    int forbidden = 0;
    pthread_t self = pthread_self();
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ncapturing; ++i) {
        eg_CUstream s = capturing[i];
        int mine = pthread_equal(s->thread, self);
        if ((mine && s->mode != FK_CAPTURE_MODE_RELAXED) || (!mine && s->mode == FK_CAPTURE_MODE_GLOBAL)) {
            s->invalidated = 1;
            forbidden = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    if (forbidden)
        return refuse(FK_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "%s: not permitted while a stream "
                      "captures (mode GLOBAL, or THREAD_LOCAL on this thread); the capture is "
                      "invalidated", api);
    return EG_CUDA_SUCCESS;
}

/* Work on the legacy stream waits for every blocking stream, and one that
 * captures cannot be waited for: the capture is invalidated. */
static eg_CUresult legacy_conflicts(const char *api)
{
    int conflict = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ncapturing; ++i)
        if (!(capturing[i]->flags & EG_CU_STREAM_NON_BLOCKING)) {
            capturing[i]->invalidated = 1;
            conflict = 1;
        }
    pthread_mutex_unlock(&lock);
    if (conflict)
        return refuse(FK_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "%s: work on the legacy stream while a "
                      "blocking stream captures; the capture is invalidated", api);
    return EG_CUDA_SUCCESS;
}

static eg_CUresult fk_cuStreamCreate(eg_CUstream *phStream, unsigned int flags)
{
    if (flags & ~(unsigned)EG_CU_STREAM_NON_BLOCKING)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuStreamCreate: unknown flags 0x%x", flags);
    *phStream = calloc(1, sizeof **phStream);
    if (!*phStream)
        return EG_CUDA_ERROR_OUT_OF_MEMORY;
    (*phStream)->flags = flags;
    return EG_CUDA_SUCCESS;
}

/* Work ran when it was enqueued; a capturing stream cannot be waited for. */
static eg_CUresult fk_cuStreamSynchronize(eg_CUstream hStream)
{
    n_host_waits++;
    if (is_capturing(hStream)) {
        hStream->invalidated = 1;
        return refuse(FK_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "cuStreamSynchronize: the stream "
                      "captures; the capture is invalidated");
    }
    return is_legacy(hStream) ? legacy_conflicts("cuStreamSynchronize") : EG_CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- events */

/* Work runs when it is enqueued, so a recorded event has completed already: what is emulated is
 * the API's contract (CUDA driver API, Event Management and cuStreamWaitEvent): a wait on an
 * event never recorded is a no-op, and an event may be destroyed while waits on it stand. */
struct eg_CUevent_st {
    unsigned flags;
    int recorded;
};

static eg_CUresult fk_cuEventCreate(eg_CUevent *phEvent, unsigned int Flags)
{
    if (!phEvent)
        return EG_CUDA_ERROR_INVALID_VALUE;
    if (Flags & ~0xfu) /* DEFAULT, BLOCKING_SYNC, DISABLE_TIMING, INTERPROCESS */
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuEventCreate: unknown flags 0x%x", Flags);
    *phEvent = calloc(1, sizeof **phEvent);
    if (!*phEvent)
        return EG_CUDA_ERROR_OUT_OF_MEMORY;
    (*phEvent)->flags = Flags;
    return EG_CUDA_SUCCESS;
}

static eg_CUresult fk_cuEventRecord(eg_CUevent hEvent, eg_CUstream hStream)
{
    if (!hEvent)
        return refuse(FK_CUDA_ERROR_INVALID_HANDLE, "cuEventRecord: a NULL event");
    if (is_capturing(hStream))
        return refuse(EG_CUDA_ERROR_NOT_SUPPORTED, "cuEventRecord: recording into a capture is not "
                      "emulated");
    hEvent->recorded = 1;
    return is_legacy(hStream) ? legacy_conflicts("cuEventRecord") : EG_CUDA_SUCCESS;
}

static eg_CUresult fk_cuStreamWaitEvent(eg_CUstream hStream, eg_CUevent hEvent, unsigned int Flags)
{
    if (!hEvent)
        return refuse(FK_CUDA_ERROR_INVALID_HANDLE, "cuStreamWaitEvent: a NULL event");
    if (Flags & ~1u) /* CU_EVENT_WAIT_DEFAULT, CU_EVENT_WAIT_EXTERNAL */
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuStreamWaitEvent: unknown flags 0x%x", Flags);
    if (is_capturing(hStream))
        return refuse(EG_CUDA_ERROR_NOT_SUPPORTED, "cuStreamWaitEvent: a wait inside a capture is not "
                      "emulated");
    if (hEvent->recorded)
        n_event_waits++;
    return EG_CUDA_SUCCESS;
}

static eg_CUresult fk_cuEventDestroy(eg_CUevent hEvent)
{
    if (!hEvent)
        return refuse(FK_CUDA_ERROR_INVALID_HANDLE, "cuEventDestroy: a NULL event");
    free(hEvent);
    return EG_CUDA_SUCCESS;
}

static void free_graph(eg_CUgraph g);

static eg_CUresult fk_cuStreamDestroy(eg_CUstream hStream)
{
    if (is_capturing(hStream)) {
        refuse(EG_CUDA_SUCCESS, "cuStreamDestroy: the stream was capturing; the capture is dropped");
        free_graph(hStream->capture);
        forget_capture(hStream);
    }
    if (is_stream(hStream))
        free(hStream);
    return EG_CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- memory */

typedef struct allocation {
    char *base;
    size_t size;
    int type; /* EG_CU_MEMORYTYPE_DEVICE or _HOST */
} allocation;

static allocation *allocs;
static size_t nallocs, allocs_cap;

/* The allocation holding [address, address + bytes), or NULL (lock held). */
static allocation *find_allocation(uintptr_t address, size_t bytes)
{
    for (size_t i = 0; i < nallocs; ++i) {
        uintptr_t base = (uintptr_t)allocs[i].base;
        if (address >= base && address - base < allocs[i].size && bytes <= allocs[i].size - (address - base))
            return &allocs[i];
    }
    return NULL;
}

static eg_CUresult track(void **out, size_t bytes, int type)
{
    if (bytes == 0)
        return EG_CUDA_ERROR_INVALID_VALUE;
    char *p = aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (!p)
        return EG_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    int full = grow((void **)&allocs, &allocs_cap, nallocs, sizeof *allocs);
    if (!full) {
        allocs[nallocs++] = (allocation){p, bytes, type};
        n_live_allocations++;
    }
    pthread_mutex_unlock(&lock);
    if (full) {
        free(p);
        return EG_CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = p;
    return EG_CUDA_SUCCESS;
}

/* Free an allocation that starts at p and has this type. */
static eg_CUresult untrack(void *p, int type, const char *api)
{
    pthread_mutex_lock(&lock);
    size_t i = 0;
    while (i < nallocs && !(allocs[i].base == p && allocs[i].type == type))
        ++i;
    int found = i < nallocs;
    if (found) {
        allocs[i] = allocs[--nallocs];
        n_live_allocations--;
    }
    pthread_mutex_unlock(&lock);
    if (!found)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "%s: %p is not the start of an allocation of it", api, p);
    free(p);
    return EG_CUDA_SUCCESS;
}

static eg_CUresult fk_cuMemAlloc(eg_CUdeviceptr *dptr, size_t bytesize)
{
    void *p = NULL;
    eg_CUresult r = capture_forbids("cuMemAlloc");
    if (!r)
        r = track(&p, bytesize, EG_CU_MEMORYTYPE_DEVICE);
    *dptr = (eg_CUdeviceptr)(uintptr_t)p;
    return r;
}

static eg_CUresult fk_cuMemFree(eg_CUdeviceptr dptr)
{
    eg_CUresult r = capture_forbids("cuMemFree");
    if (r)
        return r;
    return untrack((void *)(uintptr_t)dptr, EG_CU_MEMORYTYPE_DEVICE, "cuMemFree");
}

static eg_CUresult fk_cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
    if (flags & ~7u)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuMemHostAlloc: unknown flags 0x%x", flags);
    *pp = NULL;
    return track(pp, bytesize, EG_CU_MEMORYTYPE_HOST);
}

static eg_CUresult fk_cuMemFreeHost(void *p)
{
    return untrack(p, EG_CU_MEMORYTYPE_HOST, "cuMemFreeHost");
}

/* Unified addressing: any mix of device, pinned and pageable memory.
 * Synchronous, on the legacy stream. */
static eg_CUresult fk_cuMemcpy(eg_CUdeviceptr dst, eg_CUdeviceptr src, size_t bytes)
{
    eg_CUresult r = capture_forbids("cuMemcpy");
    if (!r)
        r = legacy_conflicts("cuMemcpy");
    if (r)
        return r;
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    return EG_CUDA_SUCCESS;
}

/* Memory the driver knows answers; pageable memory is INVALID_VALUE, as
 * the real driver answers for memory it never saw. */
static eg_CUresult fk_cuPointerGetAttribute(void *data, eg_CUpointer_attribute attribute,
                                            eg_CUdeviceptr ptr)
{
    pthread_mutex_lock(&lock);
    allocation *a = find_allocation((uintptr_t)ptr, 1);
    int type = a ? a->type : 0;
    pthread_mutex_unlock(&lock);
    if (!a)
        return EG_CUDA_ERROR_INVALID_VALUE;
    if (attribute == EG_CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
        *(unsigned *)data = (unsigned)type;
    else if (attribute == FK_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
        *(int *)data = 0;
    else
        return refuse(EG_CUDA_ERROR_NOT_SUPPORTED, "cuPointerGetAttribute: attribute %d is not emulated",
                      attribute);
    return EG_CUDA_SUCCESS;
}

/* ------------------------------------------------------ kernel registry */

/* Runs every block of a launch (tests/fakecuda/shim.h); non-zero: a block failed (it said why). */
typedef int (*fk_kernel_fn)(void **params, const unsigned grid[3], const unsigned block[3]);

typedef struct kernel_reg {
    char *name;
    fk_kernel_fn fn;
    int nparams;
    size_t *sizes;
} kernel_reg;

static kernel_reg *regs;
static size_t nregs, regs_cap;

/* Register (or replace) the host emulation of the kernel `name`. */
FK_API int fakecuda_register(const char *name, fk_kernel_fn fn, int nparams, const size_t *param_sizes)
{
    if (!name || !fn || nparams < 0 || (nparams && !param_sizes))
        return -1;
    size_t *sizes = malloc((size_t)(nparams ? nparams : 1) * sizeof *sizes);
    char *copy = strdup(name);
    if (!sizes || !copy) {
        free(sizes);
        free(copy);
        return -1;
    }
    if (nparams)
        memcpy(sizes, param_sizes, (size_t)nparams * sizeof *sizes);
    pthread_mutex_lock(&lock);
    size_t i = 0;
    while (i < nregs && strcmp(regs[i].name, name))
        ++i;
    int rc = 0;
    /* A replaced entry's name and sizes are not freed: nodes added before
     * hold copies of the entry (kernel_reg) that point at them. */
    if (i == nregs) {
        if (grow((void **)&regs, &regs_cap, nregs, sizeof *regs))
            rc = -1;
        else
            ++nregs;
    }
    if (!rc)
        regs[i] = (kernel_reg){copy, fn, nparams, sizes};
    pthread_mutex_unlock(&lock);
    if (rc) {
        free(sizes);
        free(copy);
    }
    return rc;
}

/* A copy of the registration of `name` (its name and sizes live on). */
static int find_reg(const char *name, kernel_reg *out)
{
    pthread_mutex_lock(&lock);
    size_t i = 0;
    while (i < nregs && strcmp(regs[i].name, name))
        ++i;
    int found = i < nregs;
    if (found)
        *out = regs[i];
    pthread_mutex_unlock(&lock);
    return found;
}

/* ---------------------------------------------------------------- modules */

struct eg_CUfunc_st {
    char name[256];
    eg_CUmodule module;
};

struct eg_CUmod_st {
    struct eg_CUfunc_st *functions; /* one per .entry */
    size_t n;
};

/* The names after ".entry" in PTX text. */
static eg_CUresult parse_entries(const char *ptx, eg_CUmodule m)
{
    size_t cap = 0;
    for (const char *p = strstr(ptx, ".entry"); p; p = strstr(p + 6, ".entry")) {
        const char *s = p + 6;
        if (*s != ' ' && *s != '\t')
            continue;
        while (*s == ' ' || *s == '\t')
            ++s;
        size_t len = strcspn(s, " \t\r\n(");
        if (len == 0 || len >= sizeof m->functions[0].name)
            return refuse(EG_CUDA_ERROR_INVALID_PTX, "cuModuleLoadData: a bad .entry name");
        if (grow((void **)&m->functions, &cap, m->n, sizeof *m->functions))
            return EG_CUDA_ERROR_OUT_OF_MEMORY;
        struct eg_CUfunc_st *f = &m->functions[m->n++];
        memcpy(f->name, s, len);
        f->name[len] = '\0';
        f->module = m;
    }
    return EG_CUDA_SUCCESS;
}

static eg_CUresult fk_cuModuleLoadData(eg_CUmodule *module, const void *image)
{
    if (!image)
        return EG_CUDA_ERROR_INVALID_VALUE;
    if (!memcmp(image, "\177ELF", 4))
        return refuse(EG_CUDA_ERROR_NO_BINARY_FOR_GPU, "cuModuleLoadData: a cubin cannot be emulated; "
                      "load PTX text whose kernels are registered with fakecuda_register");
    eg_CUmodule m = calloc(1, sizeof *m);
    if (!m)
        return EG_CUDA_ERROR_OUT_OF_MEMORY;
    eg_CUresult r = parse_entries(image, m);
    if (r) {
        free(m->functions);
        free(m);
        return r;
    }
    *module = m;
    return EG_CUDA_SUCCESS;
}

static eg_CUresult fk_cuModuleGetFunction(eg_CUfunction *hfunc, eg_CUmodule hmod, const char *name)
{
    if (!hmod || !name)
        return EG_CUDA_ERROR_INVALID_VALUE;
    /* An entry "name@tag" is the function "name" of this module: the tag makes its registration
     * its own (two modules' kernels of one name are two kernels, as on a GPU). */
    size_t len = strlen(name);
    for (size_t i = 0; i < hmod->n; ++i)
        if (!strncmp(hmod->functions[i].name, name, len)
            && (hmod->functions[i].name[len] == '\0' || hmod->functions[i].name[len] == '@')) {
            *hfunc = &hmod->functions[i];
            return EG_CUDA_SUCCESS;
        }
    return EG_CUDA_ERROR_NOT_FOUND;
}

static eg_CUresult fk_cuModuleUnload(eg_CUmodule hmod)
{
    if (!hmod)
        return EG_CUDA_ERROR_INVALID_VALUE;
    free(hmod->functions);
    free(hmod);
    return EG_CUDA_SUCCESS;
}

/* -------------------------------------------------------- graphs: model */

typedef struct kernel_node {
    eg_CUfunction func;
    kernel_reg reg;
    unsigned grid[3], block[3];
    char *args;      /* the parameter values, copied */
    size_t *offsets; /* of parameter i in args */
} kernel_node;

/* A copy, and the kind of memory of each end when it was set (see end_kind). */
typedef struct copy_node {
    eg_CUDA_MEMCPY3D p;
    int src_kind, dst_kind;
} copy_node;

typedef struct cond_node {
    eg_CUgraphConditionalHandle handle;
    int type;
    unsigned size;
    eg_CUgraph *bodies; /* the array phGraph_out points to */
} cond_node;

struct eg_CUgraphNode_st {
    int type; /* FK_NODE_* */
    eg_CUgraph graph;
    eg_CUgraphNode *deps;
    size_t ndeps;
    eg_CUgraphNode origin; /* in an exec: the template's node */
    union {
        kernel_node kernel;
        copy_node copy;
        eg_CUDA_HOST_NODE_PARAMS host;
        cond_node cond;
        eg_CUgraph child; /* a child graph node's clone of its graph */
    } u;
};

struct eg_CUgraph_st {
    eg_CUgraphNode *nodes;
    size_t n, cap;
    eg_CUgraphNode parent; /* the conditional node of a body graph (not set in a child's clone) */
    int execs;             /* live instantiations of this (top) graph */
};

/* Conditional handles: never freed, so an exec outlives its template's. */
typedef struct handle_state {
    eg_CUgraph graph;
    unsigned dflt, flags, value, used;
} handle_state;

static handle_state *handles;
static size_t nhandles, handles_cap;
#define HANDLE_TAG 0xfc00000000000000ull

static handle_state *handle_of(eg_CUgraphConditionalHandle h)
{
    uint64_t i = h & ~HANDLE_TAG;
    if ((h & HANDLE_TAG) != HANDLE_TAG || i >= nhandles)
        return NULL;
    return &handles[i];
}

static int in_conditional_body(eg_CUgraph g) { return g->parent != NULL; }

/* g itself or a graph nested in a body of one of its nodes? */
static int is_within(eg_CUgraph g, eg_CUgraph outer)
{
    for (; g; g = g->parent ? g->parent->graph : NULL)
        if (g == outer)
            return 1;
    return 0;
}

static void free_node(eg_CUgraphNode node);

static void free_graph(eg_CUgraph g)
{
    for (size_t i = 0; i < g->n; ++i)
        free_node(g->nodes[i]);
    for (size_t i = 0; i < nhandles; ++i)
        if (handles[i].graph == g)
            handles[i].graph = NULL;
    free(g->nodes);
    free(g);
}

static void free_node(eg_CUgraphNode node)
{
    if (node->type == FK_NODE_KERNEL) {
        free(node->u.kernel.args);
        free(node->u.kernel.offsets);
    } else if (node->type == FK_NODE_CONDITIONAL) {
        for (unsigned i = 0; i < node->u.cond.size; ++i)
            free_graph(node->u.cond.bodies[i]);
        free(node->u.cond.bodies);
    } else if (node->type == FK_NODE_GRAPH && node->u.child) {
        free_graph(node->u.child);
    }
    free(node->deps);
    free(node);
}

static eg_CUresult fk_cuGraphCreate(eg_CUgraph *phGraph, unsigned int flags)
{
    if (flags)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphCreate: flags must be 0");
    *phGraph = calloc(1, sizeof **phGraph);
    return *phGraph ? EG_CUDA_SUCCESS : EG_CUDA_ERROR_OUT_OF_MEMORY;
}

static eg_CUresult fk_cuGraphDestroy(eg_CUgraph hGraph)
{
    if (!hGraph)
        return EG_CUDA_ERROR_INVALID_VALUE;
    if (hGraph->parent)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphDestroy: a conditional body belongs to its node");
    free_graph(hGraph);
    return EG_CUDA_SUCCESS;
}

/* A new node of `type` in g after deps (all in g); NULL on a bad dependency. */
static eg_CUresult new_node(eg_CUgraph g, int type, const eg_CUgraphNode *deps, size_t ndeps,
                            const char *api, eg_CUgraphNode *out)
{
    if (!g || !out || (ndeps && !deps))
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "%s: a NULL graph, node or dependency array", api);
    for (size_t i = 0; i < ndeps; ++i)
        if (!deps[i] || deps[i]->graph != g)
            return refuse(EG_CUDA_ERROR_INVALID_VALUE, "%s: dependency %zu is not a node of this graph",
                          api, i);
    eg_CUgraphNode node = calloc(1, sizeof *node);
    eg_CUgraphNode *d = malloc((ndeps ? ndeps : 1) * sizeof *d);
    if (!node || !d || grow((void **)&g->nodes, &g->cap, g->n, sizeof *g->nodes)) {
        free(node);
        free(d);
        return EG_CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (ndeps)
        memcpy(d, deps, ndeps * sizeof *d);
    node->type = type;
    node->graph = g;
    node->deps = d;
    node->ndeps = ndeps;
    g->nodes[g->n++] = node;
    *out = node;
    return EG_CUDA_SUCCESS;
}

/* ------------------------------------------------------- graphs: kernels */

/* Fill k from p: the registration and a copy of every parameter value. */
static eg_CUresult set_kernel(kernel_node *k, const eg_CUDA_KERNEL_NODE_PARAMS *p, const char *api)
{
    if (!p || !p->func)
        return refuse(p ? EG_CUDA_ERROR_NOT_SUPPORTED : EG_CUDA_ERROR_INVALID_VALUE,
                      "%s: no func (CUkernel launches are not emulated)", api);
    if (p->extra)
        return refuse(EG_CUDA_ERROR_NOT_SUPPORTED, "%s: `extra` parameter buffers are not emulated", api);
    if (bad_ctx(p->ctx))
        return refuse(FK_CUDA_ERROR_INVALID_CONTEXT, "%s: not the primary context", api);
    unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
    unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    /* The limits of every compute capability from 3.0 on (CUDA C++ Programming Guide, Technical
     * Specifications per Compute Capability); a kernel's own limit (launch bounds, registers)
     * can be lower on a GPU. */
    if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2] || grid[0] > 0x7fffffffu ||
        grid[1] > 65535 || grid[2] > 65535 || block[0] > 1024 || block[1] > 1024 || block[2] > 64 ||
        (unsigned long long)block[0] * block[1] * block[2] > 1024)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "%s: bad grid %ux%ux%u or block %ux%ux%u", api,
                      grid[0], grid[1], grid[2], block[0], block[1], block[2]);
    if (p->sharedMemBytes)
        return refuse(EG_CUDA_ERROR_NOT_SUPPORTED, "%s: %u bytes of dynamic shared memory: not emulated "
                      "(a kernel's static __shared__ memory is)", api, p->sharedMemBytes);
    kernel_reg reg;
    if (!find_reg(p->func->name, &reg))
        return refuse(EG_CUDA_ERROR_NOT_SUPPORTED, "%s: kernel `%s` has no host emulation "
                      "(fakecuda_register)", api, p->func->name);
    if (reg.nparams && !p->kernelParams)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "%s: `%s` takes %d parameters, kernelParams is NULL",
                      api, reg.name, reg.nparams);
    size_t total = 0;
    size_t *offsets = malloc((size_t)(reg.nparams ? reg.nparams : 1) * sizeof *offsets);
    for (int i = 0; offsets && i < reg.nparams; ++i) {
        offsets[i] = total;
        total += (reg.sizes[i] + 7) / 8 * 8;
    }
    char *args = malloc(total ? total : 1);
    if (!offsets || !args) {
        free(offsets);
        free(args);
        return EG_CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < reg.nparams; ++i)
        memcpy(args + offsets[i], p->kernelParams[i], reg.sizes[i]);
    free(k->args);
    free(k->offsets);
    *k = (kernel_node){.func = p->func, .reg = reg, .args = args, .offsets = offsets};
    memcpy(k->grid, grid, sizeof grid);
    memcpy(k->block, block, sizeof block);
    return EG_CUDA_SUCCESS;
}

static eg_CUresult fk_cuGraphAddKernelNode(eg_CUgraphNode *phGraphNode, eg_CUgraph hGraph,
                                           const eg_CUgraphNode *dependencies, size_t numDependencies,
                                           const eg_CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    kernel_node k = {0};
    eg_CUresult r = set_kernel(&k, nodeParams, "cuGraphAddKernelNode");
    if (!r)
        r = new_node(hGraph, FK_NODE_KERNEL, dependencies, numDependencies, "cuGraphAddKernelNode",
                     phGraphNode);
    if (r) {
        free(k.args);
        free(k.offsets);
        return r;
    }
    (*phGraphNode)->u.kernel = k;
    return EG_CUDA_SUCCESS;
}

/* -------------------------------------------------------- graphs: copies */

/* The address and tracked allocation of one side of a copy; the side's
 * extent is checked against the allocation (pitch * height * depth). */
static eg_CUresult copy_side(int type, const void *host, eg_CUdeviceptr dev, size_t x, size_t y,
                             size_t z, size_t pitch, size_t height, const eg_CUDA_MEMCPY3D *p,
                             int in_body, const char *side)
{
    if (type != EG_CU_MEMORYTYPE_HOST && type != EG_CU_MEMORYTYPE_DEVICE &&
        type != EG_CU_MEMORYTYPE_UNIFIED)
        return refuse(EG_CUDA_ERROR_NOT_SUPPORTED, "cuGraphAddMemcpyNode: %s memory type %d is not "
                      "emulated (CUDA arrays)", side, type);
    uintptr_t base = type == EG_CU_MEMORYTYPE_HOST ? (uintptr_t)host : (uintptr_t)dev;
    if (!base)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddMemcpyNode: NULL %s", side);
    size_t rows = p->Height * p->Depth;
    /* cuda.h: "if specified" (non-zero) a pitch holds x + WidthInBytes; more than one row needs one. */
    if ((pitch || p->Height > 1 || p->Depth > 1) && pitch < x + p->WidthInBytes)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddMemcpyNode: %s pitch too small", side);
    if (p->Depth > 1 && height < y + p->Height)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddMemcpyNode: %s height too small", side);
    size_t first = x + y * pitch + z * pitch * height;
    size_t extent = rows ? (p->Depth - 1) * pitch * height + (p->Height - 1) * pitch + p->WidthInBytes : 0;
    pthread_mutex_lock(&lock);
    allocation *a = find_allocation(base + first, extent);
    allocation *any = find_allocation(base, 1);
    pthread_mutex_unlock(&lock);
    if (type == EG_CU_MEMORYTYPE_DEVICE && !a)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddMemcpyNode: the %s (0x%llx + %zu bytes) "
                      "is not inside one allocation", side, (unsigned long long)base, extent);
    if (any && !a)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddMemcpyNode: the %s runs past the end of "
                      "its allocation", side);
    /* cuda.h: body memcpys may only touch memory of the node's context;
     * pageable host memory is refused (programming guide, NVIDIA/warp#924). */
    if (in_body && !a)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddMemcpyNode: the %s is pageable host "
                      "memory, which a conditional body cannot copy", side);
    return EG_CUDA_SUCCESS;
}

/* The memory one end of a copy is in: EG_CU_MEMORYTYPE_DEVICE or _HOST for an allocation of
 * the driver's, 0 for pageable memory: what cuPointerGetAttribute's MEMORY_TYPE says of it, the
 * type a copy of CU_MEMORYTYPE_UNIFIED ends has. */
static int end_kind(int type, const void *host, eg_CUdeviceptr dev)
{
    uintptr_t address = type == EG_CU_MEMORYTYPE_HOST ? (uintptr_t)host : (uintptr_t)dev;
    pthread_mutex_lock(&lock);
    const allocation *a = find_allocation(address, 1);
    int kind = a ? a->type : 0;
    pthread_mutex_unlock(&lock);
    return kind;
}

static copy_node copy_of(const eg_CUDA_MEMCPY3D *p)
{
    return (copy_node){*p, end_kind(p->srcMemoryType, p->srcHost, p->srcDevice),
                       end_kind(p->dstMemoryType, p->dstHost, p->dstDevice)};
}

static eg_CUresult fk_cuGraphAddMemcpyNode(eg_CUgraphNode *phGraphNode, eg_CUgraph hGraph,
                                           const eg_CUgraphNode *dependencies, size_t numDependencies,
                                           const eg_CUDA_MEMCPY3D *p, eg_CUcontext ctx)
{
    if (!p || !hGraph)
        return EG_CUDA_ERROR_INVALID_VALUE;
    if (bad_ctx(ctx))
        return refuse(FK_CUDA_ERROR_INVALID_CONTEXT, "cuGraphAddMemcpyNode: not the primary context");
    if (!p->WidthInBytes || !p->Height || !p->Depth)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddMemcpyNode: an empty copy");
    if (p->srcLOD || p->dstLOD)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddMemcpyNode: LOD must be 0");
    int body = in_conditional_body(hGraph);
    eg_CUresult r = copy_side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, p->srcY,
                              p->srcZ, p->srcPitch, p->srcHeight, p, body, "source");
    if (!r)
        r = copy_side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY, p->dstZ,
                      p->dstPitch, p->dstHeight, p, body, "destination");
    if (!r)
        r = new_node(hGraph, FK_NODE_MEMCPY, dependencies, numDependencies, "cuGraphAddMemcpyNode",
                     phGraphNode);
    if (!r)
        (*phGraphNode)->u.copy = copy_of(p);
    return r;
}

static char *side_address(int type, const void *host, eg_CUdeviceptr dev)
{
    return type == EG_CU_MEMORYTYPE_HOST ? (char *)host : (char *)(uintptr_t)dev;
}

static void run_copy(const eg_CUDA_MEMCPY3D *p)
{
    char *src = side_address(p->srcMemoryType, p->srcHost, p->srcDevice);
    char *dst = side_address(p->dstMemoryType, p->dstHost, p->dstDevice);
    for (size_t z = 0; z < p->Depth; ++z)
        for (size_t y = 0; y < p->Height; ++y) {
            size_t s = p->srcXInBytes + (p->srcY + y) * p->srcPitch + (p->srcZ + z) * p->srcPitch * p->srcHeight;
            size_t d = p->dstXInBytes + (p->dstY + y) * p->dstPitch + (p->dstZ + z) * p->dstPitch * p->dstHeight;
            memmove(dst + d, src + s, p->WidthInBytes);
        }
}

/* ------------------------------------------------ graphs: host and empty */

static eg_CUresult fk_cuGraphAddHostNode(eg_CUgraphNode *phGraphNode, eg_CUgraph hGraph,
                                         const eg_CUgraphNode *dependencies, size_t numDependencies,
                                         const eg_CUDA_HOST_NODE_PARAMS *nodeParams)
{
    if (!nodeParams || !nodeParams->fn)
        return EG_CUDA_ERROR_INVALID_VALUE;
    /* CUDA driver API, CUDA_CONDITIONAL_NODE_PARAMS::phGraph_out: "Allowed node types are kernel
     * nodes, empty nodes, child graphs, memsets, memcopies, and conditionals." */
    if (hGraph && in_conditional_body(hGraph))
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddHostNode: host nodes are not allowed in "
                      "conditional bodies");
    eg_CUresult r = new_node(hGraph, FK_NODE_HOST, dependencies, numDependencies, "cuGraphAddHostNode",
                             phGraphNode);
    if (!r)
        (*phGraphNode)->u.host = *nodeParams;
    return r;
}

static eg_CUresult fk_cuGraphAddEmptyNode(eg_CUgraphNode *phGraphNode, eg_CUgraph hGraph,
                                          const eg_CUgraphNode *dependencies, size_t numDependencies)
{
    return new_node(hGraph, FK_NODE_EMPTY, dependencies, numDependencies, "cuGraphAddEmptyNode",
                    phGraphNode);
}

/* -------------------------------------------------- graphs: conditionals */

/* CUDA driver API, cuGraphConditionalHandleCreate: flags "currently must be
 * CU_GRAPH_COND_ASSIGN_DEFAULT or 0"; the default is "applied at the
 * beginning of each graph execution" with that flag (reset_handles); the
 * handle "must be associated with a conditional node in this graph or one of
 * its children" (check_conditional), and one no node uses "may cause graph
 * instantiation to fail" (it does from 12.8: cuGraphInstantiateWithFlags). */

static eg_CUresult fk_cuGraphConditionalHandleCreate(eg_CUgraphConditionalHandle *pHandle_out,
                                                     eg_CUgraph hGraph, eg_CUcontext ctx,
                                                     unsigned int defaultLaunchValue, unsigned int flags)
{
    if (!pHandle_out || !hGraph || flags & ~(unsigned)FK_GRAPH_COND_ASSIGN_DEFAULT)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphConditionalHandleCreate: bad arguments");
    if (bad_ctx(ctx))
        return refuse(FK_CUDA_ERROR_INVALID_CONTEXT, "cuGraphConditionalHandleCreate: not the primary "
                      "context");
    pthread_mutex_lock(&lock);
    int full = grow((void **)&handles, &handles_cap, nhandles, sizeof *handles);
    if (!full) {
        handles[nhandles] = (handle_state){hGraph, defaultLaunchValue, flags, FK_UNSET_HANDLE_VALUE, 0};
        *pHandle_out = HANDLE_TAG | nhandles++;
    }
    pthread_mutex_unlock(&lock);
    return full ? EG_CUDA_ERROR_OUT_OF_MEMORY : EG_CUDA_SUCCESS;
}

/* Every byte of `p` from `from` on is zero? */
static int zero_from(const void *p, size_t from, size_t size)
{
    for (size_t i = from; i < size; ++i)
        if (((const unsigned char *)p)[i])
            return 0;
    return 1;
}

/* The checks of cuGraphAddNode on conditional parameters.  CUDA driver API,
 * CUDA_CONDITIONAL_NODE_PARAMS::size: "1 for CU_GRAPH_COND_TYPE_WHILE, 1 or 2
 * for CU_GRAPH_COND_TYPE_IF, or any value greater than zero for
 * CU_GRAPH_COND_TYPE_SWITCH", each with the driver version that brought it. */
static eg_CUresult check_conditional(eg_CUgraph g, const eg_CUgraphNodeParams *np)
{
    const eg_CUDA_CONDITIONAL_NODE_PARAMS *c = &np->conditional;
    int version = driver_version();
    const size_t cond_end = offsetof(eg_CUgraphNodeParams, conditional) + sizeof *c;
    if (np->reserved0[0] || np->reserved0[1] || np->reserved0[2] || !zero_from(np, cond_end, sizeof *np))
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddNode: unused bytes of the parameters "
                      "are not zero");
    if (bad_ctx(c->ctx))
        return refuse(FK_CUDA_ERROR_INVALID_CONTEXT, "cuGraphAddNode: not the primary context");
    handle_state *h = handle_of(c->handle);
    if (!h || !h->graph || !is_within(g, h->graph))
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddNode: the handle does not belong to this "
                      "graph or one enclosing it");
    switch (c->type) {
    case EG_CU_GRAPH_COND_TYPE_IF:
        if (c->size == 1 || (c->size == 2 && version >= FK_SWITCH_DRIVER))
            return EG_CUDA_SUCCESS;
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddNode: an IF node of size %u (driver "
                      "%d: 1%s)", c->size, version, version >= FK_SWITCH_DRIVER ? " or 2" : "");
    case EG_CU_GRAPH_COND_TYPE_WHILE:
        if (c->size == 1)
            return EG_CUDA_SUCCESS;
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddNode: a WHILE node has size 1");
    case EG_CU_GRAPH_COND_TYPE_SWITCH:
        if (version < FK_SWITCH_DRIVER)
            return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddNode: SWITCH needs a 12.8 driver");
        if (c->size >= 1)
            return EG_CUDA_SUCCESS;
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddNode: a SWITCH node of size 0");
    default:
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddNode: conditional type %d", c->type);
    }
}

static eg_CUresult fk_cuGraphAddNode(eg_CUgraphNode *phGraphNode, eg_CUgraph hGraph,
                                     const eg_CUgraphNode *dependencies,
                                     const eg_CUgraphEdgeData *dependencyData, size_t numDependencies,
                                     eg_CUgraphNodeParams *nodeParams)
{
    if (!nodeParams || !hGraph)
        return EG_CUDA_ERROR_INVALID_VALUE;
    if (nodeParams->type != FK_NODE_CONDITIONAL)
        return refuse(EG_CUDA_ERROR_NOT_SUPPORTED, "cuGraphAddNode: node type %d is not emulated",
                      nodeParams->type);
    for (size_t i = 0; dependencyData && i < numDependencies; ++i)
        if (!zero_from(&dependencyData[i], 0, sizeof *dependencyData))
            return refuse(EG_CUDA_ERROR_NOT_SUPPORTED, "cuGraphAddNode: edge data is not emulated");
    eg_CUresult r = check_conditional(hGraph, nodeParams);
    eg_CUDA_CONDITIONAL_NODE_PARAMS *c = &nodeParams->conditional;
    eg_CUgraph *bodies = r ? NULL : calloc(c->size, sizeof *bodies);
    if (!r && !bodies)
        r = EG_CUDA_ERROR_OUT_OF_MEMORY;
    for (unsigned i = 0; !r && i < c->size; ++i)
        r = fk_cuGraphCreate(&bodies[i], 0);
    if (!r)
        r = new_node(hGraph, FK_NODE_CONDITIONAL, dependencies, numDependencies, "cuGraphAddNode",
                     phGraphNode);
    if (r) {
        for (unsigned i = 0; bodies && i < c->size; ++i)
            free(bodies[i]);
        free(bodies);
        return r;
    }
    eg_CUgraphNode node = *phGraphNode;
    for (unsigned i = 0; i < c->size; ++i)
        bodies[i]->parent = node;
    node->u.cond = (cond_node){c->handle, c->type, c->size, bodies};
    handle_of(c->handle)->used = 1;
    c->phGraph_out = bodies;
    return EG_CUDA_SUCCESS;
}

/* ------------------------------------------------- graphs: instantiation */

struct eg_CUgraphExec_st {
    eg_CUgraph graph;    /* the snapshot */
    eg_CUgraph template; /* the graph instantiated */
};

static eg_CUgraph clone_graph(eg_CUgraph g, eg_CUgraphNode parent);

/* A copy of node in graph c (whose first nodes are the copies of g's). */
static eg_CUgraphNode clone_node(eg_CUgraphNode node, eg_CUgraph g, eg_CUgraph c)
{
    eg_CUgraphNode n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    *n = *node;
    n->graph = c;
    n->origin = node;
    n->deps = malloc((node->ndeps ? node->ndeps : 1) * sizeof *n->deps);
    for (size_t i = 0; n->deps && i < node->ndeps; ++i) {
        size_t k = 0;
        while (g->nodes[k] != node->deps[i])
            ++k;
        n->deps[i] = c->nodes[k];
    }
    int ok = n->deps != NULL;
    if (node->type == FK_NODE_KERNEL) {
        const kernel_node *k = &node->u.kernel;
        size_t total = k->reg.nparams ? k->offsets[k->reg.nparams - 1] + k->reg.sizes[k->reg.nparams - 1] : 1;
        n->u.kernel.args = malloc(total);
        n->u.kernel.offsets = malloc((size_t)(k->reg.nparams ? k->reg.nparams : 1) * sizeof(size_t));
        ok = ok && n->u.kernel.args && n->u.kernel.offsets;
        if (ok) {
            memcpy(n->u.kernel.args, k->args, total);
            memcpy(n->u.kernel.offsets, k->offsets, (size_t)k->reg.nparams * sizeof(size_t));
        }
    } else if (node->type == FK_NODE_CONDITIONAL) {
        n->u.cond.bodies = calloc(node->u.cond.size, sizeof(eg_CUgraph));
        ok = ok && n->u.cond.bodies;
        for (unsigned i = 0; ok && i < node->u.cond.size; ++i)
            ok = (n->u.cond.bodies[i] = clone_graph(node->u.cond.bodies[i], n)) != NULL;
    } else if (node->type == FK_NODE_GRAPH) {
        n->u.child = ok ? clone_graph(node->u.child, NULL) : NULL;
        ok = ok && n->u.child;
    }
    if (!ok) {
        if (n->type == FK_NODE_CONDITIONAL && !n->u.cond.bodies)
            n->u.cond.size = 0;
        free_node(n);
        return NULL;
    }
    return n;
}

static eg_CUgraph clone_graph(eg_CUgraph g, eg_CUgraphNode parent)
{
    eg_CUgraph c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->parent = parent;
    for (size_t i = 0; i < g->n; ++i) {
        eg_CUgraphNode n = NULL;
        if (grow((void **)&c->nodes, &c->cap, c->n, sizeof *c->nodes) || !(n = clone_node(g->nodes[i], g, c))) {
            c->parent = NULL;
            free_graph(c);
            return NULL;
        }
        c->nodes[c->n++] = n;
    }
    return c;
}

/* Does g (or a body in it) hold a conditional node? */
static int has_conditional(eg_CUgraph g)
{
    for (size_t i = 0; i < g->n; ++i)
        if (g->nodes[i]->type == FK_NODE_CONDITIONAL)
            return 1;
    return 0;
}

/* ---------------------------------------------------- graphs: child graphs */

/* May `child` be embedded (in a conditional body when in_body)?  CUDA driver
 * API, CUDA_CHILD_GRAPH_NODE_PARAMS::graph: "The graph must not contain
 * conditional nodes"; a body's node types apply "recursively to child graphs
 * and conditional bodies" (CUDA_CONDITIONAL_NODE_PARAMS): kernels, copies of
 * memory the driver knows, memsets, empty nodes and child graphs. */
static eg_CUresult check_child(eg_CUgraph child, int in_body)
{
    for (size_t i = 0; i < child->n; ++i) {
        const eg_CUgraphNode n = child->nodes[i];
        eg_CUresult r = EG_CUDA_SUCCESS;
        if (n->type == FK_NODE_CONDITIONAL)
            r = refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddChildGraphNode: a child graph cannot hold "
                       "conditional nodes");
        else if (n->type == FK_NODE_HOST && in_body)
            r = refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddChildGraphNode: a child graph in a "
                       "conditional body cannot hold host nodes");
        else if (n->type == FK_NODE_MEMCPY && in_body) {
            const eg_CUDA_MEMCPY3D *p = &n->u.copy.p;
            r = copy_side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, p->srcY, p->srcZ,
                          p->srcPitch, p->srcHeight, p, 1, "source");
            if (!r)
                r = copy_side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY,
                              p->dstZ, p->dstPitch, p->dstHeight, p, 1, "destination");
            if (r)
                refuse(r, "cuGraphAddChildGraphNode: a copy of the child graph cannot be in a "
                       "conditional body");
        } else if (n->type == FK_NODE_GRAPH)
            r = check_child(n->u.child, in_body);
        if (r)
            return r;
    }
    return EG_CUDA_SUCCESS;
}

/* cuda.h: the child graph is cloned here; the caller keeps (and may destroy) its own. */
static eg_CUresult fk_cuGraphAddChildGraphNode(eg_CUgraphNode *phGraphNode, eg_CUgraph hGraph,
                                               const eg_CUgraphNode *dependencies, size_t numDependencies,
                                               eg_CUgraph childGraph)
{
    if (!hGraph || !childGraph)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphAddChildGraphNode: a NULL graph");
    eg_CUresult r = check_child(childGraph, in_conditional_body(hGraph));
    if (r)
        return r;
    eg_CUgraph clone = clone_graph(childGraph, NULL);
    if (!clone)
        return EG_CUDA_ERROR_OUT_OF_MEMORY;
    r = new_node(hGraph, FK_NODE_GRAPH, dependencies, numDependencies, "cuGraphAddChildGraphNode",
                 phGraphNode);
    if (r) {
        free_graph(clone);
        return r;
    }
    (*phGraphNode)->u.child = clone;
    return EG_CUDA_SUCCESS;
}

/* ------------------------------------------------- graphs: instantiation */

static eg_CUresult fk_cuGraphInstantiateWithFlags(eg_CUgraphExec *phGraphExec, eg_CUgraph hGraph,
                                                  unsigned long long flags)
{
    if (!phGraphExec || !hGraph)
        return EG_CUDA_ERROR_INVALID_VALUE;
    if (flags)
        return refuse(EG_CUDA_ERROR_NOT_SUPPORTED, "cuGraphInstantiateWithFlags: flags are not emulated");
    if (hGraph->parent)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphInstantiateWithFlags: a conditional body");
    /* cuda.h: a graph with conditional nodes has one instantiation at a time. */
    if (hGraph->execs && has_conditional(hGraph))
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphInstantiateWithFlags: a graph with "
                      "conditional nodes is instantiated already");
    /* 12.8 reports CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED. */
    for (size_t i = 0; driver_version() >= FK_SWITCH_DRIVER && i < nhandles; ++i)
        if (handles[i].graph && is_within(handles[i].graph, hGraph) && !handles[i].used)
            return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphInstantiateWithFlags: a conditional "
                          "handle no node uses");
    eg_CUgraphExec e = calloc(1, sizeof *e);
    if (!e || !(e->graph = clone_graph(hGraph, NULL))) {
        free(e);
        return EG_CUDA_ERROR_OUT_OF_MEMORY;
    }
    e->template = hGraph;
    hGraph->execs++;
    *phGraphExec = e;
    return EG_CUDA_SUCCESS;
}

static eg_CUresult fk_cuGraphExecDestroy(eg_CUgraphExec hGraphExec)
{
    if (!hGraphExec)
        return EG_CUDA_ERROR_INVALID_VALUE;
    hGraphExec->template->execs--;
    free_graph(hGraphExec->graph);
    free(hGraphExec);
    return EG_CUDA_SUCCESS;
}

static eg_CUresult not_captured(eg_CUstream s, const char *api);

static eg_CUresult fk_cuGraphUpload(eg_CUgraphExec hGraphExec, eg_CUstream hStream)
{
    if (!hGraphExec)
        return EG_CUDA_ERROR_INVALID_VALUE;
    return not_captured(hStream, "cuGraphUpload");
}

/* The exec's copy of template node `origin`, searching bodies too. */
static eg_CUgraphNode exec_node(eg_CUgraph g, eg_CUgraphNode origin)
{
    for (size_t i = 0; i < g->n; ++i) {
        eg_CUgraphNode n = g->nodes[i];
        if (n->origin == origin)
            return n;
        for (unsigned b = 0; n->type == FK_NODE_CONDITIONAL && b < n->u.cond.size; ++b) {
            eg_CUgraphNode found = exec_node(n->u.cond.bodies[b], origin);
            if (found)
                return found;
        }
    }
    return NULL;
}

/* CUDA driver API, cuGraphExecKernelNodeSetParams: "All nodeParams fields
 * may change"; what may not (the function's owning context, a change to a
 * function using dynamic parallelism, device-side graph updates or device
 * launches) the fake cannot tell, with one context and host-built kernels.
 * hNode is the node of the graph instantiated, never a node of a child
 * graph's clone.  The documentation does not exclude a node inside a
 * conditional body, and the fake accepts one; whether the driver does is
 * for a GPU to settle (reference notes, cuda-graphs 9.1). */
static eg_CUresult fk_cuGraphExecKernelNodeSetParams(eg_CUgraphExec hGraphExec, eg_CUgraphNode hNode,
                                                     const eg_CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    if (!hGraphExec || !hNode)
        return EG_CUDA_ERROR_INVALID_VALUE;
    eg_CUgraphNode n = exec_node(hGraphExec->graph, hNode);
    if (!n || n->type != FK_NODE_KERNEL)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuGraphExecKernelNodeSetParams: not a kernel node "
                      "of the instantiated graph");
    return set_kernel(&n->u.kernel, nodeParams, "cuGraphExecKernelNodeSetParams");
}

/* Is the copy one-dimensional (one row of one slice)? */
static int one_dimensional(const eg_CUDA_MEMCPY3D *p)
{
    return p->Height == 1 && p->Depth == 1 && !p->srcY && !p->srcZ && !p->dstY && !p->dstZ;
}

/* CUDA driver API, cuGraphExecMemcpyNodeSetParams: the new operands "must
 * be allocated from the same contexts as the original", both the
 * instantiation-time and the new operands "must be 1-dimensional",
 * "zero-length operations are not supported", else CUDA_ERROR_INVALID_VALUE;
 * and (cuGraphExecUpdate, memcpy nodes) "changing either the source or
 * destination memory type ... is not supported": with UNIFIED ends, the
 * type of the memory they point into (end_kind), which is why eagle
 * rebuilds a graph whose copy end changes its kind of memory.  A copy in a
 * conditional body keeps the body's rule: no pageable memory.  A refused
 * call leaves the node as it was. */
static eg_CUresult fk_cuGraphExecMemcpyNodeSetParams(eg_CUgraphExec hGraphExec, eg_CUgraphNode hNode,
                                                     const eg_CUDA_MEMCPY3D *p, eg_CUcontext ctx)
{
    const char *api = "cuGraphExecMemcpyNodeSetParams";
    if (!hGraphExec || !hNode || !p)
        return EG_CUDA_ERROR_INVALID_VALUE;
    if (bad_ctx(ctx))
        return refuse(FK_CUDA_ERROR_INVALID_CONTEXT, "%s: not the primary context", api);
    eg_CUgraphNode n = exec_node(hGraphExec->graph, hNode);
    if (!n || n->type != FK_NODE_MEMCPY)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "%s: not a copy node of the instantiated graph", api);
    if (!one_dimensional(&n->u.copy.p) || !one_dimensional(p))
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "%s: the copy %s is not one-dimensional", api,
                      one_dimensional(p) ? "instantiated" : "given");
    if (!p->WidthInBytes)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "%s: a copy of no bytes", api);
    copy_node c = copy_of(p);
    if (p->srcMemoryType != n->u.copy.p.srcMemoryType || p->dstMemoryType != n->u.copy.p.dstMemoryType ||
        c.src_kind != n->u.copy.src_kind || c.dst_kind != n->u.copy.dst_kind)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "%s: an end changes its type of memory (source %d to "
                      "%d, destination %d to %d; 2 device, 1 pinned host, 0 pageable)", api,
                      n->u.copy.src_kind, c.src_kind, n->u.copy.dst_kind, c.dst_kind);
    int body = in_conditional_body(n->graph);
    eg_CUresult r = copy_side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, p->srcY,
                              p->srcZ, p->srcPitch, p->srcHeight, p, body, "source");
    if (!r)
        r = copy_side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY, p->dstZ,
                      p->dstPitch, p->dstHeight, p, body, "destination");
    if (!r)
        n->u.copy = c;
    return r;
}

/* ----------------------------------------------------- graphs: launching */

/* The launch in progress on this thread: kernels set handles through it. */
static __thread eg_CUresult launch_error;

FK_API void fakecuda_set_conditional(unsigned long long handle, unsigned value)
{
    handle_state *h = handle_of(handle);
    if (!h) {
        launch_error = refuse(EG_CUDA_ERROR_ILLEGAL_ADDRESS, "cudaGraphSetConditional: 0x%llx is not a "
                              "conditional handle", handle);
        return;
    }
    h->value = value;
}

static void run_kernel(const kernel_node *k)
{
    void *params[64];
    if (k->reg.nparams > 64) {
        launch_error = refuse(EG_CUDA_ERROR_LAUNCH_FAILED, "kernel %s: more than 64 parameters", k->reg.name);
        return;
    }
    for (int i = 0; i < k->reg.nparams; ++i)
        params[i] = k->args + k->offsets[i];
    n_kernel_runs++;
    if (k->reg.fn(params, k->grid, k->block))
        launch_error = EG_CUDA_ERROR_LAUNCH_FAILED;
}

static void run_graph(eg_CUgraph g);

/* CUDA driver API, CUDA_CONDITIONAL_NODE_PARAMS::phGraph_out: IF runs body 0
 * "when the condition is non-zero" and body 1 (size 2) when it is zero;
 * WHILE runs body 0 "as long as the condition is non-zero", testing it when
 * the node is reached and after every turn; SWITCH runs body n "when the
 * condition is equal to n", none when it is >= size. */
static void run_conditional(const cond_node *c)
{
    handle_state *h = handle_of(c->handle);
    if (c->type >= 0 && c->type < 3)
        n_conditional_runs[c->type]++;
    switch (c->type) {
    case EG_CU_GRAPH_COND_TYPE_IF:
        if (h->value)
            run_graph(c->bodies[0]);
        else if (c->size == 2)
            run_graph(c->bodies[1]);
        break;
    case EG_CU_GRAPH_COND_TYPE_SWITCH:
        if (h->value < c->size)
            run_graph(c->bodies[h->value]);
        break;
    case EG_CU_GRAPH_COND_TYPE_WHILE:
        for (long turns = 0; h->value && !launch_error; ++turns) {
            if (turns == FK_MAX_TURNS) {
                launch_error = refuse(EG_CUDA_ERROR_LAUNCH_FAILED, "a WHILE node turned %ld times: "
                                      "taken for an endless loop", turns);
                break;
            }
            run_graph(c->bodies[0]);
        }
        break;
    }
}

static void run_node(eg_CUgraphNode n)
{
    switch (n->type) {
    case FK_NODE_KERNEL:
        run_kernel(&n->u.kernel);
        break;
    case FK_NODE_MEMCPY:
        run_copy(&n->u.copy.p);
        break;
    case FK_NODE_HOST:
        n->u.host.fn(n->u.host.userData);
        break;
    case FK_NODE_CONDITIONAL:
        run_conditional(&n->u.cond);
        break;
    case FK_NODE_GRAPH:
        run_graph(n->u.child);
        break;
    default:
        break;
    }
}

/* Run g's nodes in dependency order, always picking the LAST inserted
 * ready node: any order the edges allow is legal, and this one differs
 * from insertion order wherever an edge is missing. */
static void run_graph(eg_CUgraph g)
{
    char *done = calloc(g->n ? g->n : 1, 1);
    if (!done) {
        launch_error = EG_CUDA_ERROR_OUT_OF_MEMORY;
        return;
    }
    for (size_t ran = 0; ran < g->n && !launch_error; ++ran) {
        size_t pick = g->n;
        for (size_t i = g->n; i-- > 0 && pick == g->n;) {
            int ready = !done[i];
            for (size_t d = 0; ready && d < g->nodes[i]->ndeps; ++d) {
                size_t k = 0;
                while (g->nodes[k] != g->nodes[i]->deps[d])
                    ++k;
                ready = done[k];
            }
            if (ready)
                pick = i;
        }
        done[pick] = 1;
        run_node(g->nodes[pick]);
    }
    free(done);
}

/* Every handle of the exec's template at launch start: its default with
 * CU_GRAPH_COND_ASSIGN_DEFAULT, else FK_UNSET_HANDLE_VALUE. */
static void reset_handles(eg_CUgraph template)
{
    for (size_t i = 0; i < nhandles; ++i)
        if (handles[i].graph && is_within(handles[i].graph, template))
            handles[i].value = handles[i].flags & FK_GRAPH_COND_ASSIGN_DEFAULT ? handles[i].dflt
                                                                               : FK_UNSET_HANDLE_VALUE;
}

/* Stream-ordered work the fake does not capture: refused on a capturing
 * stream (which invalidates the capture). */
static eg_CUresult not_captured(eg_CUstream s, const char *api)
{
    if (is_capturing(s)) {
        s->invalidated = 1;
        return refuse(FK_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "%s: capturing it is not emulated; the "
                      "capture is invalidated", api);
    }
    return is_legacy(s) ? legacy_conflicts(api) : EG_CUDA_SUCCESS;
}

static eg_CUresult fk_cuGraphLaunch(eg_CUgraphExec hGraphExec, eg_CUstream hStream)
{
    if (!hGraphExec)
        return EG_CUDA_ERROR_INVALID_VALUE;
    eg_CUresult r = not_captured(hStream, "cuGraphLaunch");
    if (r)
        return r;
    n_graph_launches++;
    reset_handles(hGraphExec->template);
    launch_error = EG_CUDA_SUCCESS;
    run_graph(hGraphExec->graph);
    return launch_error;
}

/* -------------------------------------------------------- stream capture */

static eg_CUresult fk_cuStreamBeginCapture(eg_CUstream hStream, eg_CUstreamCaptureMode mode)
{
    if (mode < FK_CAPTURE_MODE_GLOBAL || mode > FK_CAPTURE_MODE_RELAXED)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuStreamBeginCapture: unknown mode %d", mode);
    if (is_legacy(hStream))
        return refuse(FK_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "cuStreamBeginCapture: the legacy "
                      "stream cannot capture");
    if (!is_stream(hStream))
        return refuse(EG_CUDA_ERROR_NOT_SUPPORTED, "cuStreamBeginCapture: the per-thread default "
                      "stream is not emulated");
    if (hStream->capture)
        return refuse(FK_CUDA_ERROR_ILLEGAL_STATE, "cuStreamBeginCapture: the stream captures already");
    eg_CUgraph g;
    eg_CUresult r = fk_cuGraphCreate(&g, 0);
    if (r)
        return r;
    pthread_mutex_lock(&lock);
    int full = grow((void **)&capturing, &capturing_cap, ncapturing, sizeof *capturing);
    if (!full)
        capturing[ncapturing++] = hStream;
    pthread_mutex_unlock(&lock);
    if (full) {
        free_graph(g);
        return EG_CUDA_ERROR_OUT_OF_MEMORY;
    }
    hStream->capture = g;
    hStream->last = NULL;
    hStream->mode = mode;
    hStream->invalidated = 0;
    hStream->thread = pthread_self();
    return EG_CUDA_SUCCESS;
}

/* The captured graph is the caller's (cuGraphDestroy); an invalidated
 * capture ends too, with a NULL graph. */
static eg_CUresult fk_cuStreamEndCapture(eg_CUstream hStream, eg_CUgraph *phGraph)
{
    if (!phGraph)
        return EG_CUDA_ERROR_INVALID_VALUE;
    if (!is_capturing(hStream))
        return refuse(FK_CUDA_ERROR_ILLEGAL_STATE, "cuStreamEndCapture: the stream is not capturing");
    if (hStream->mode != FK_CAPTURE_MODE_RELAXED && !pthread_equal(hStream->thread, pthread_self()))
        return refuse(FK_CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "cuStreamEndCapture: not the thread "
                      "that began the capture");
    eg_CUgraph g = hStream->capture;
    int invalidated = hStream->invalidated;
    forget_capture(hStream);
    if (invalidated) {
        free_graph(g);
        *phGraph = NULL;
        return refuse(FK_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "cuStreamEndCapture: the capture was "
                      "invalidated by an earlier refused call");
    }
    *phGraph = g;
    return EG_CUDA_SUCCESS;
}

/* Runs at once, as a kernel node would; on a capturing stream, appended to
 * the capture graph after the node captured last. */
static eg_CUresult fk_cuLaunchKernel(eg_CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                     unsigned int blockDimZ, unsigned int sharedMemBytes,
                                     eg_CUstream hStream, void **kernelParams, void **extra)
{
    if (!f)
        return refuse(FK_CUDA_ERROR_INVALID_HANDLE, "cuLaunchKernel: a NULL function");
    if (extra && kernelParams)
        return refuse(EG_CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel: both kernelParams and extra");
    if (extra)
        return refuse(EG_CUDA_ERROR_NOT_SUPPORTED, "cuLaunchKernel: `extra` parameter buffers are not "
                      "emulated");
    if (is_capturing(hStream) && hStream->invalidated)
        return refuse(FK_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "cuLaunchKernel: the stream's capture "
                      "was invalidated");
    const eg_CUDA_KERNEL_NODE_PARAMS p = {f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                                          sharedMemBytes, kernelParams, NULL, NULL, NULL};
    kernel_node k = {0};
    eg_CUresult r = set_kernel(&k, &p, "cuLaunchKernel");
    if (!r && is_capturing(hStream)) {
        eg_CUgraphNode node;
        r = new_node(hStream->capture, FK_NODE_KERNEL, &hStream->last, hStream->last ? 1 : 0,
                     "cuLaunchKernel", &node);
        if (!r) {
            node->u.kernel = k;
            hStream->last = node;
            return EG_CUDA_SUCCESS;
        }
    } else if (!r && is_legacy(hStream)) {
        r = legacy_conflicts("cuLaunchKernel");
    }
    if (!r) {
        launch_error = EG_CUDA_SUCCESS;
        run_kernel(&k);
        r = launch_error;
    }
    free(k.args);
    free(k.offsets);
    return r;
}

/* ------------------------------------------- the built-in condition kernel */

/* libeagle's eagle_set_condition (cuda_condition_ptx.h):
 * op 0: *cell != k, 1: *cell == k, 2: min(*cell, k), 3: *cell >= k, else k.  Every thread of
 * a launch would set the same value from the same cell: one run stands for them all. */
static int set_condition(void **params, const unsigned grid[3], const unsigned block[3])
{
    (void)grid;
    (void)block;
    unsigned long long handle = *(unsigned long long *)params[0];
    const unsigned *cell = (const unsigned *)(uintptr_t)*(unsigned long long *)params[1];
    unsigned op = *(unsigned *)params[2], k = *(unsigned *)params[3], v = *cell;
    unsigned value = op == 0 ? v != k : op == 1 ? v == k : op == 2 ? (v < k ? v : k) : op == 3 ? v >= k : k;
    fakecuda_set_conditional(handle, value);
    return 0;
}

__attribute__((constructor)) static void register_builtins(void)
{
    static const size_t sizes[4] = {8, 8, 4, 4};
    fakecuda_register("eagle_set_condition", set_condition, 4, sizes);
}

/* ------------------------------------------------------ the entry points */

/* Each fk_<name> has exactly libeagle's eg_PFN_<name> type. */
#define FK_CHECK(name, version)                                                              \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&fk_##name), eg_PFN_##name), \
                   #name " does not match cuda_driver.h");
EG_DRIVER_ENTRY_POINTS(FK_CHECK)
#undef FK_CHECK

#define FK_ENTRY(name, version) {#name, version, (void *)fk_##name},
static const struct {
    const char *name;
    int version; /* the ABI the fake implements: cuda_driver.h's */
    void *fn;
} entries[] = {EG_DRIVER_ENTRY_POINTS(FK_ENTRY)};
#undef FK_ENTRY

FK_API eg_CUresult cuDriverGetVersion(int *version)
{
    if (!version)
        return EG_CUDA_ERROR_INVALID_VALUE;
    *version = driver_version();
    return EG_CUDA_SUCCESS;
}

/* cuda.h: a version above the driver's is INVALID_VALUE; an unknown symbol
 * is SUCCESS with *pfn NULL.  The fake has one ABI per name: a request for
 * an older one gets NULL too (and a message), rather than the wrong ABI. */
FK_API eg_CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       eg_cuuint64_t flags, eg_CUdriverProcAddressQueryResult *symbolStatus)
{
    (void)flags;
    if (!symbol || !pfn)
        return EG_CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (cudaVersion > driver_version())
        return EG_CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i) {
        if (strcmp(entries[i].name, symbol))
            continue;
        if (cudaVersion < entries[i].version) {
            refuse(0, "cuGetProcAddress: %s is emulated in its CUDA %d ABI only, not %d", symbol,
                   entries[i].version, cudaVersion);
            if (symbolStatus)
                *symbolStatus = EG_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
            return EG_CUDA_SUCCESS;
        }
        *pfn = entries[i].fn;
        if (symbolStatus)
            *symbolStatus = EG_CU_GET_PROC_ADDRESS_SUCCESS;
        return EG_CUDA_SUCCESS;
    }
    if (symbolStatus)
        *symbolStatus = EG_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return EG_CUDA_SUCCESS;
}
