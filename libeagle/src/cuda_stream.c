/*
 * Streams and stream capture for callers with no CUDA runtime of their own
 * (the C++ face: eagle::cuda::Stream and StreamCapturer).  Every call works
 * in the primary context of `device`, as the rest of cuda.c.
 */
#include "cuda_internal.h"

#define STREAM(s) ((eg_CUstream)(uintptr_t)(s))

EAGLE_API int eagle_cuda_stream_create(int device, uint64_t *stream)
{
    const char *api = "eagle_cuda_stream_create";
    cuda_device *d;
    if (!stream)
        return eagle_fail(EAGLE_ERR_ARG, "%s: stream is NULL", api);
    *stream = 0;
    eg_CUstream s = NULL;
    int rc = cuda_enter(device, api, &d);
    if (!rc)
        rc = cu_check(drv.cuStreamCreate(&s, 0), api, "cuStreamCreate");
    *stream = rc ? 0 : (uint64_t)(uintptr_t)s;
    return rc;
}

EAGLE_API int eagle_cuda_stream_destroy(int device, uint64_t stream)
{
    const char *api = "eagle_cuda_stream_destroy";
    cuda_device *d;
    if (!stream)
        return eagle_fail(EAGLE_ERR_ARG, "%s: stream is 0 (the legacy stream is not destroyed)",
                          api);
    int rc = cuda_enter(device, api, &d);
    return rc ? rc : cu_check(drv.cuStreamDestroy(STREAM(stream)), api, "cuStreamDestroy");
}

EAGLE_API int eagle_cuda_stream_synchronize(int device, uint64_t stream)
{
    const char *api = "eagle_cuda_stream_synchronize";
    cuda_device *d;
    int rc = cuda_enter(device, api, &d);
    return rc ? rc : cu_check(drv.cuStreamSynchronize(STREAM(stream)), api, "cuStreamSynchronize");
}

EAGLE_API int eagle_cuda_capture_begin(int device, uint64_t stream)
{
    const char *api = "eagle_cuda_capture_begin";
    cuda_device *d;
    if (!stream)
        return eagle_fail(EAGLE_ERR_ARG,
                          "%s: the legacy default stream (0) cannot capture: capture on a stream "
                          "of eagle_cuda_stream_create",
                          api);
    int rc = cuda_enter(device, api, &d);
    /* Relaxed, as libeagle's own captures: what a library does beside its launches (an
     * allocation, a query) is not refused. */
    return rc
        ? rc
        : cu_check(drv.cuStreamBeginCapture(STREAM(stream), EG_CU_STREAM_CAPTURE_MODE_RELAXED), api,
                   "cuStreamBeginCapture");
}

EAGLE_API int eagle_cuda_capture_end(int device, uint64_t stream, uint64_t *graph)
{
    const char *api = "eagle_cuda_capture_end";
    cuda_device *d;
    if (!graph)
        return eagle_fail(EAGLE_ERR_ARG, "%s: graph is NULL", api);
    *graph = 0;
    eg_CUgraph captured = NULL;
    int rc = cuda_enter(device, api, &d);
    if (!rc)
        rc = cu_check(drv.cuStreamEndCapture(STREAM(stream), &captured), api, "cuStreamEndCapture");
    if (rc && captured) /* a capture that failed hands back nothing */
        drv.cuGraphDestroy(captured);
    *graph = rc ? 0 : (uint64_t)(uintptr_t)captured;
    return rc;
}

EAGLE_API int eagle_cuda_graph_destroy(uint64_t graph)
{
    const char *api = "eagle_cuda_graph_destroy";
    if (!graph)
        return eagle_fail(EAGLE_ERR_ARG, "%s: graph is 0", api);
    /* A CUgraph belongs to no context: no device is entered. */
    int rc = cuda_load(api);
    return rc ? rc
              : cu_check(drv.cuGraphDestroy((eg_CUgraph)(uintptr_t)graph), api, "cuGraphDestroy");
}
