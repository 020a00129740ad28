/*
 * The CUDA driver, opened at run time: libcuda.so.1 is dlopen'ed on first
 * use (libeagle never links it, and builds without the toolkit), every
 * entry point is resolved through cuGetProcAddress with the version its
 * declaration in cuda_driver.h matches, and each device is used through its
 * primary context (the one torch, CuPy and Warp use).  Memory, copies and
 * modules for callers that have no CUDA library of their own.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_condition_ptx.h"
#include "cuda_internal.h"

/* cuGetProcAddress_v2, the v2 kernel-node struct and its exec update are 12.0. */
#define MIN_DRIVER 12000
#define MAX_DEVICES 64

eg_driver drv;

/* Loading happens once per process; its outcome is kept for every caller. */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_status;
static char load_message[384];

static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static cuda_device devices[MAX_DEVICES];

static const char *error_name(eg_CUresult r)
{
    const char *name = NULL;
    if (!drv.cuGetErrorName || drv.cuGetErrorName(r, &name) != EG_CUDA_SUCCESS || !name)
        return "an unknown CUresult";
    return name;
}

/* What to do about the errors one meets most; NULL for the rest. */
static const char *error_hint(eg_CUresult r)
{
    switch (r) {
    case EG_CUDA_ERROR_OUT_OF_MEMORY:
        return "free device memory or use smaller arrays";
    case EG_CUDA_ERROR_NO_BINARY_FOR_GPU:
        return "the image has no code for this GPU: load PTX, or a cubin built for its "
               "architecture";
    case EG_CUDA_ERROR_INVALID_PTX:
        return "the PTX text does not compile for this GPU";
    case EG_CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
        return "the PTX is newer than this driver reads: update the NVIDIA driver";
    case EG_CUDA_ERROR_NOT_FOUND:
        return "no kernel of that name: kernels need extern \"C\" (unmangled) names";
    case EG_CUDA_ERROR_ILLEGAL_ADDRESS:
    case EG_CUDA_ERROR_LAUNCH_FAILED:
        return "a kernel or copy touched memory it may not; the context is now unusable: "
               "restart the process";
    case EG_CUDA_ERROR_NOT_SUPPORTED:
        return "this GPU or driver does not support the operation";
    default:
        return NULL;
    }
}

int cu_check(eg_CUresult r, const char *api, const char *call)
{
    if (r == EG_CUDA_SUCCESS)
        return EAGLE_OK;
    const char *hint = error_hint(r);
    return eagle_fail(EAGLE_ERR_CUDA, "%s: %s failed with %s (%d); %s%s", api, call, error_name(r),
                      (int)r, hint ? hint : "see the CUDA driver API documentation of ",
                      hint ? "" : call);
}

static void load_failed(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(load_message, sizeof load_message, fmt, ap);
    va_end(ap);
    load_status = status;
}

/* Every entry of EG_DRIVER_ENTRY_POINTS: its name, version and slot in drv. */
#define EG_ENTRY(name, version) {#name, version, offsetof(eg_driver, name)},
static const struct entry_point {
    const char *name;
    int version;
    size_t offset;
} entry_points[] = {EG_DRIVER_ENTRY_POINTS(EG_ENTRY)};
#undef EG_ENTRY

/* Resolve the entry points the driver's version has; 0 or -1 (message set). */
static int resolve_entry_points(void)
{
    for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; ++i) {
        const struct entry_point *e = &entry_points[i];
        if (e->version > drv.version)
            continue;
        void *fn = NULL;
        eg_CUdriverProcAddressQueryResult found = EG_CU_GET_PROC_ADDRESS_SUCCESS;
        eg_CUresult r = drv.cuGetProcAddress(e->name, &fn, e->version,
                                             EG_CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
        if (r != EG_CUDA_SUCCESS || !fn) {
            load_failed(
                EAGLE_ERR_NO_DRIVER,
                "the CUDA driver (%d.%d) has no %s of CUDA %d.%d (cuGetProcAddress: result %d, "
                "status %d); update the NVIDIA driver",
                drv.version / 1000, drv.version % 1000 / 10, e->name, e->version / 1000,
                e->version % 1000 / 10, (int)r, (int)found);
            return -1;
        }
        memcpy((char *)&drv + e->offset, &fn, sizeof fn);
    }
    return 0;
}

static void load_driver(void)
{
    /* EAGLE_LIBCUDA names another driver library: the tests' CPU emulation (tests/fakecuda). */
    const char *path = getenv("EAGLE_LIBCUDA");
    if (!path || !*path)
        path = "libcuda.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        load_failed(EAGLE_ERR_NO_DRIVER,
                    "no CUDA driver (%s) on this machine: %s; the GPU back end needs an "
                    "NVIDIA GPU with its driver installed",
                    path, why ? why : "dlopen failed");
        return;
    }
    drv.cuDriverGetVersion = (eg_PFN_cuDriverGetVersion)dlsym(lib, "cuDriverGetVersion");
    if (!drv.cuDriverGetVersion || drv.cuDriverGetVersion(&drv.version) != EG_CUDA_SUCCESS) {
        load_failed(EAGLE_ERR_NO_DRIVER, "%s does not answer cuDriverGetVersion", path);
        return;
    }
    drv.cuGetProcAddress = (eg_PFN_cuGetProcAddress)dlsym(lib, "cuGetProcAddress_v2");
    if (drv.version < MIN_DRIVER || !drv.cuGetProcAddress) {
        load_failed(EAGLE_ERR_NO_DRIVER,
                    "the CUDA driver is version %d.%d; libeagle needs CUDA 12.0 or newer: update "
                    "the NVIDIA driver",
                    drv.version / 1000, drv.version % 1000 / 10);
        return;
    }
    if (resolve_entry_points())
        return;
    eg_CUresult r = drv.cuInit(0);
    if (r != EG_CUDA_SUCCESS)
        load_failed(r == EG_CUDA_ERROR_NO_DEVICE ? EAGLE_ERR_NO_DRIVER : EAGLE_ERR_CUDA,
                    "cuInit failed with %s (%d): the driver sees no usable GPU", error_name(r),
                    (int)r);
}

/* Retain the primary context of device into d (devices_lock held). */
static int retain_device(int device, const char *api, cuda_device *d)
{
    int count = 0;
    int rc = cu_check(drv.cuDeviceGetCount(&count), api, "cuDeviceGetCount");
    if (rc)
        return rc;
    if (device >= count)
        return eagle_fail(EAGLE_ERR_NO_DRIVER, "%s: no CUDA device %d: this machine has %d", api,
                          device, count);
    eg_CUdevice dev = 0;
    if ((rc = cu_check(drv.cuDeviceGet(&dev, device), api, "cuDeviceGet")))
        return rc;
    return cu_check(drv.cuDevicePrimaryCtxRetain(&d->ctx, dev), api, "cuDevicePrimaryCtxRetain");
}

int cuda_load(const char *api)
{
    pthread_once(&load_once, load_driver);
    return load_status ? eagle_fail(load_status, "%s: %s", api, load_message) : EAGLE_OK;
}

int cuda_enter(int device, const char *api, cuda_device **out)
{
    int loaded = cuda_load(api);
    if (loaded)
        return loaded;
    if (device < 0 || device >= MAX_DEVICES)
        return eagle_fail(EAGLE_ERR_ARG, "%s: device %d is out of range", api, device);
    cuda_device *d = &devices[device];
    pthread_mutex_lock(&devices_lock);
    int rc = d->ctx ? EAGLE_OK : retain_device(device, api, d);
    pthread_mutex_unlock(&devices_lock);
    if (rc)
        return rc;
    *out = d;
    return cu_check(drv.cuCtxSetCurrent(d->ctx), api, "cuCtxSetCurrent");
}

int cuda_condition_kernel(cuda_device *d, const char *api, eg_CUfunction *out)
{
    pthread_mutex_lock(&devices_lock);
    int rc = EAGLE_OK;
    if (!d->set_condition) {
        rc = cu_check(drv.cuModuleLoadData(&d->condition_module, condition_ptx), api,
                      "cuModuleLoadData (the condition kernel)");
        if (!rc)
            rc = cu_check(drv.cuModuleGetFunction(&d->set_condition, d->condition_module,
                                                  "eagle_set_condition"),
                          api, "cuModuleGetFunction (eagle_set_condition)");
    }
    *out = d->set_condition;
    pthread_mutex_unlock(&devices_lock);
    return rc;
}

EAGLE_API int eagle_cuda_open(int device, int *driver_version)
{
    cuda_device *d;
    int rc = cuda_enter(device, "eagle_cuda_open", &d);
    if (driver_version)
        *driver_version = drv.version;
    return rc;
}

EAGLE_API int eagle_cuda_driver_version(int *version)
{
    if (!version)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_cuda_driver_version: version is NULL");
    pthread_once(&load_once, load_driver);
    *version = drv.version; /* known once the library answered, whatever failed after */
    return drv.version ? EAGLE_OK
                       : eagle_fail(load_status, "eagle_cuda_driver_version: %s", load_message);
}

EAGLE_API int eagle_cuda_malloc(int device, size_t bytes, uint64_t *address)
{
    cuda_device *d;
    if (!address)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_cuda_malloc: address is NULL");
    int rc = cuda_enter(device, "eagle_cuda_malloc", &d);
    eg_CUdeviceptr p = 0;
    if (!rc)
        rc = cu_check(drv.cuMemAlloc(&p, bytes), "eagle_cuda_malloc", "cuMemAlloc");
    *address = rc ? 0 : p;
    return rc;
}

EAGLE_API int eagle_cuda_free(int device, uint64_t address)
{
    cuda_device *d;
    int rc = cuda_enter(device, "eagle_cuda_free", &d);
    return rc ? rc : cu_check(drv.cuMemFree(address), "eagle_cuda_free", "cuMemFree");
}

EAGLE_API int eagle_cuda_host_alloc(int device, size_t bytes, void **host)
{
    cuda_device *d;
    if (!host)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_cuda_host_alloc: host is NULL");
    *host = NULL;
    int rc = cuda_enter(device, "eagle_cuda_host_alloc", &d);
    unsigned flags = EG_CU_MEMHOSTALLOC_PORTABLE | EG_CU_MEMHOSTALLOC_DEVICEMAP;
    return rc ? rc
              : cu_check(drv.cuMemHostAlloc(host, bytes, flags), "eagle_cuda_host_alloc",
                         "cuMemHostAlloc");
}

EAGLE_API int eagle_cuda_host_free(int device, void *host)
{
    cuda_device *d;
    int rc = cuda_enter(device, "eagle_cuda_host_free", &d);
    return rc ? rc : cu_check(drv.cuMemFreeHost(host), "eagle_cuda_host_free", "cuMemFreeHost");
}

EAGLE_API int eagle_cuda_memcpy(int device, uint64_t dst, uint64_t src, size_t bytes)
{
    cuda_device *d;
    int rc = cuda_enter(device, "eagle_cuda_memcpy", &d);
    return rc ? rc : cu_check(drv.cuMemcpy(dst, src, bytes), "eagle_cuda_memcpy", "cuMemcpy");
}

EAGLE_API int eagle_cuda_module_load(int device, const void *image, void **module)
{
    cuda_device *d;
    if (!image || !module)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_cuda_module_load: image or module is NULL");
    *module = NULL;
    int rc = cuda_enter(device, "eagle_cuda_module_load", &d);
    eg_CUmodule m = NULL;
    if (!rc)
        rc = cu_check(drv.cuModuleLoadData(&m, image), "eagle_cuda_module_load",
                      "cuModuleLoadData");
    *module = m;
    return rc;
}

EAGLE_API int eagle_cuda_module_function(int device, void *module, const char *name,
                                         void **function)
{
    cuda_device *d;
    if (!module || !name || !function)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_cuda_module_function: an argument is NULL");
    *function = NULL;
    int rc = cuda_enter(device, "eagle_cuda_module_function", &d);
    eg_CUfunction f = NULL;
    if (!rc)
        rc = cu_check(drv.cuModuleGetFunction(&f, (eg_CUmodule)module, name),
                      "eagle_cuda_module_function", "cuModuleGetFunction");
    *function = f;
    return rc;
}

EAGLE_API int eagle_cuda_module_unload(int device, void *module)
{
    cuda_device *d;
    int rc = cuda_enter(device, "eagle_cuda_module_unload", &d);
    return rc ? rc
              : cu_check(drv.cuModuleUnload((eg_CUmodule)module), "eagle_cuda_module_unload",
                         "cuModuleUnload");
}

EAGLE_API int eagle_cuda_memory_type(int device, uint64_t address, int32_t *type)
{
    cuda_device *d;
    const char *api = "eagle_cuda_memory_type";
    if (!type)
        return eagle_fail(EAGLE_ERR_ARG, "%s: type is NULL", api);
    int rc = cuda_enter(device, api, &d);
    if (rc)
        return rc;
    int memory = 0;
    eg_CUresult r = drv.cuPointerGetAttribute(&memory, EG_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                              address);
    if (r == EG_CUDA_ERROR_INVALID_VALUE) { /* memory the driver does not know: plain host memory */
        *type = EAGLE_MEMORY_PAGEABLE;
        return EAGLE_OK;
    }
    rc = cu_check(r, api, "cuPointerGetAttribute");
    *type = memory == EG_CU_MEMORYTYPE_DEVICE ? EAGLE_MEMORY_DEVICE : EAGLE_MEMORY_PINNED;
    return rc;
}

EAGLE_API int eagle_cuda_launch(int device, void *function, const uint32_t *grid,
                                const uint32_t *block, uint32_t shared_bytes, uint64_t stream,
                                const eagle_arg *args, int32_t nargs)
{
    cuda_device *d;
    const char *api = "eagle_cuda_launch";
    if (!function || !grid || !block || nargs < 0 || (nargs && !args))
        return eagle_fail(EAGLE_ERR_ARG,
                          "%s: a NULL function, grid or block, or args that do not "
                          "match nargs",
                          api);
    int rc = cuda_enter(device, api, &d);
    void **params = rc ? NULL : malloc((size_t)(nargs ? nargs : 1) * sizeof *params);
    if (!rc && !params)
        rc = eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
    for (int32_t i = 0; !rc && i < nargs; ++i)
        params[i] = (void *)&args[i]; /* the driver reads each parameter's size from the slot */
    if (!rc)
        rc = cu_check(drv.cuLaunchKernel((eg_CUfunction)function, grid[0], grid[1], grid[2],
                                         block[0], block[1], block[2], shared_bytes,
                                         (eg_CUstream)(uintptr_t)stream, params, NULL),
                      api, "cuLaunchKernel");
    free(params);
    return rc;
}

EAGLE_API int eagle_cuda_device_arch(int device, int *major, int *minor)
{
    cuda_device *d;
    const char *api = "eagle_cuda_device_arch";
    if (!major || !minor)
        return eagle_fail(EAGLE_ERR_ARG, "%s: major or minor is NULL", api);
    eg_CUdevice dev = 0;
    int rc = cuda_enter(device, api, &d);
    if (!rc)
        rc = cu_check(drv.cuDeviceGet(&dev, device), api, "cuDeviceGet");
    if (!rc)
        rc = cu_check(
            drv.cuDeviceGetAttribute(major, EG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
            api, "cuDeviceGetAttribute");
    if (!rc)
        rc = cu_check(
            drv.cuDeviceGetAttribute(minor, EG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
            api, "cuDeviceGetAttribute");
    return rc;
}

EAGLE_API int eagle_cuda_synchronize(int device)
{
    cuda_device *d;
    int rc = cuda_enter(device, "eagle_cuda_synchronize", &d);
    return rc ? rc : cu_check(drv.cuCtxSynchronize(), "eagle_cuda_synchronize", "cuCtxSynchronize");
}

EAGLE_API int eagle_cuda_stream_wait(int device, uint64_t waiter, uint64_t waited)
{
    cuda_device *d;
    const char *api = "eagle_cuda_stream_wait";
    eg_CUevent event = NULL;
    int rc = cuda_enter(device, api, &d);
    if (!rc)
        rc = cu_check(drv.cuEventCreate(&event, EG_CU_EVENT_DISABLE_TIMING), api, "cuEventCreate");
    if (!rc)
        rc = cu_check(drv.cuEventRecord(event, (eg_CUstream)(uintptr_t)waited), api,
                      "cuEventRecord");
    if (!rc)
        rc = cu_check(drv.cuStreamWaitEvent((eg_CUstream)(uintptr_t)waiter, event, 0), api,
                      "cuStreamWaitEvent");
    /* cuEventDestroy of a recorded event still pending returns at once; the driver frees it when
     * the event completes (CUDA driver API, cuEventDestroy), so the wait stands. */
    if (event)
        drv.cuEventDestroy(event);
    return rc;
}
