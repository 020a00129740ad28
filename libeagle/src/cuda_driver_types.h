/*
 * libeagle's own declarations of the CUDA driver types it uses: handles,
 * constants and structs, copied from the CUDA 13.0 cuda.h (x86-64 / aarch64
 * layouts).  libeagle is built without the toolkit, so it cannot include
 * cuda.h; every name carries an eg_ / EG_ prefix so that this file and the
 * real header can be compiled together.  tests/test_cuda_decls.py does that
 * wherever cuda.h exists and checks every size, offset and value below.
 * Private: not part of eagle.h.
 */
#ifndef EAGLE_CUDA_DRIVER_TYPES_H
#define EAGLE_CUDA_DRIVER_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* An enum in cuda.h; int has its size and passes the same way. */
typedef int eg_CUresult;
typedef int eg_CUdevice;
typedef unsigned long long eg_CUdeviceptr;
typedef uint64_t eg_cuuint64_t;
typedef uint64_t eg_CUgraphConditionalHandle;
typedef int eg_CUpointer_attribute;
typedef int eg_CUdriverProcAddressQueryResult;
typedef int eg_CUstreamCaptureMode;
typedef int eg_CUdevice_attribute;

/* Opaque handles: pointers to structs only the driver defines. */
typedef struct eg_CUctx_st *eg_CUcontext;
typedef struct eg_CUmod_st *eg_CUmodule;
typedef struct eg_CUfunc_st *eg_CUfunction;
typedef struct eg_CUkern_st *eg_CUkernel;
typedef struct eg_CUstream_st *eg_CUstream;
typedef struct eg_CUevent_st *eg_CUevent;
typedef struct eg_CUarray_st *eg_CUarray;
typedef struct eg_CUgraph_st *eg_CUgraph;
typedef struct eg_CUgraphNode_st *eg_CUgraphNode;
typedef struct eg_CUgraphExec_st *eg_CUgraphExec;

typedef void (*eg_CUhostFn)(void *userData);

/* CUresult values libeagle names in its messages or branches on. */
enum {
    EG_CUDA_SUCCESS = 0,
    EG_CUDA_ERROR_INVALID_VALUE = 1,
    EG_CUDA_ERROR_NOT_INITIALIZED = 3,
    EG_CUDA_ERROR_OUT_OF_MEMORY = 2,
    EG_CUDA_ERROR_NO_DEVICE = 100,
    EG_CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    EG_CUDA_ERROR_INVALID_PTX = 218,
    EG_CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    EG_CUDA_ERROR_NOT_FOUND = 500,
    EG_CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    EG_CUDA_ERROR_LAUNCH_FAILED = 719,
    EG_CUDA_ERROR_NOT_SUPPORTED = 801,
};

enum {
    EG_CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
    EG_CU_GET_PROC_ADDRESS_SUCCESS = 0,
    EG_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    EG_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
};

enum {
    EG_CU_STREAM_CAPTURE_MODE_RELAXED = 2,
    EG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    EG_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    EG_CU_STREAM_NON_BLOCKING = 1,
    EG_CU_EVENT_DISABLE_TIMING = 2,
    EG_CU_MEMHOSTALLOC_PORTABLE = 1,
    EG_CU_MEMHOSTALLOC_DEVICEMAP = 2,
    EG_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
};

/* CUmemorytype */
enum {
    EG_CU_MEMORYTYPE_HOST = 1,
    EG_CU_MEMORYTYPE_DEVICE = 2,
    EG_CU_MEMORYTYPE_ARRAY = 3,
    EG_CU_MEMORYTYPE_UNIFIED = 4,
};

/* CUgraphNodeType and CUgraphConditionalNodeType */
enum {
    EG_CU_GRAPH_NODE_TYPE_CONDITIONAL = 13,
    EG_CU_GRAPH_COND_TYPE_IF = 0,
    EG_CU_GRAPH_COND_TYPE_WHILE = 1,
    EG_CU_GRAPH_COND_TYPE_SWITCH = 2,
};

typedef struct eg_CUDA_KERNEL_NODE_PARAMS { /* CUDA_KERNEL_NODE_PARAMS_v2 (12.0) */
    eg_CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    void **kernelParams;
    void **extra;
    eg_CUkernel kern; /* used only when func is NULL */
    eg_CUcontext ctx;
} eg_CUDA_KERNEL_NODE_PARAMS;

typedef struct eg_CUDA_MEMCPY3D { /* CUDA_MEMCPY3D_v2 */
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;
    const void *srcHost;
    eg_CUdeviceptr srcDevice;
    eg_CUarray srcArray;
    void *reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void *dstHost;
    eg_CUdeviceptr dstDevice;
    eg_CUarray dstArray;
    void *reserved1;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} eg_CUDA_MEMCPY3D;

typedef struct eg_CUDA_HOST_NODE_PARAMS { /* CUDA_HOST_NODE_PARAMS_v1 */
    eg_CUhostFn fn;
    void *userData;
} eg_CUDA_HOST_NODE_PARAMS;

typedef struct eg_CUDA_CONDITIONAL_NODE_PARAMS { /* 12.3 */
    eg_CUgraphConditionalHandle handle;
    int type;                /* EG_CU_GRAPH_COND_TYPE_* */
    unsigned int size;       /* number of bodies */
    eg_CUgraph *phGraph_out; /* out: the driver-owned body graphs */
    eg_CUcontext ctx;
} eg_CUDA_CONDITIONAL_NODE_PARAMS;

typedef struct eg_CUgraphEdgeData { /* 12.3 */
    unsigned char from_port, to_port, type, reserved[5];
} eg_CUgraphEdgeData;

/* CUgraphNodeParams (12.2): a tagged union padded to 256 bytes.  libeagle
 * fills only the conditional member; the rest must stay zero. */
typedef struct eg_CUgraphNodeParams {
    int type;
    int reserved0[3];
    union {
        long long reserved1[29];
        eg_CUDA_CONDITIONAL_NODE_PARAMS conditional;
    };
    long long reserved2;
} eg_CUgraphNodeParams;

#endif /* EAGLE_CUDA_DRIVER_TYPES_H */
