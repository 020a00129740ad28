/*
 * The CUDA driver entry points libeagle calls, as its own function-pointer
 * types (eg_PFN_<name>), and the CUDA version whose ABI each one matches.
 *
 * cuda.c resolves every entry of EG_DRIVER_ENTRY_POINTS through
 * cuGetProcAddress with exactly that version: libcuda exports several ABIs
 * of one function under suffixed names, and a dlsym of the bare name gives
 * the oldest.  tests/test_cuda_decls.py checks each eg_PFN_<name> against
 * cudaTypedefs.h's PFN_<name>_v<version>, so a wrong signature or a wrong
 * version fails that test.  Private: not part of eagle.h.
 */
#ifndef EAGLE_CUDA_DRIVER_H
#define EAGLE_CUDA_DRIVER_H

#include "cuda_driver_types.h"

/* The two found with dlsym: cuDriverGetVersion under its own name (one ABI
 * only), cuGetProcAddress as the exported "cuGetProcAddress_v2" (12.0). */
#define EG_DRIVER_BOOTSTRAP(X)  \
    X(cuDriverGetVersion, 2020) \
    X(cuGetProcAddress, 12000)

/* Entry points with a version above the driver's stay NULL; the features
 * that need them check the driver version first. */
#define EG_DRIVER_ENTRY_POINTS(X)            \
    X(cuInit, 2000)                          \
    X(cuGetErrorName, 6000)                  \
    X(cuDeviceGetCount, 2000)                \
    X(cuDeviceGet, 2000)                     \
    X(cuDevicePrimaryCtxRetain, 7000)        \
    X(cuCtxSetCurrent, 4000)                 \
    X(cuStreamCreate, 2000)                  \
    X(cuStreamSynchronize, 2000)             \
    X(cuStreamDestroy, 4000)                 \
    X(cuMemAlloc, 3020)                      \
    X(cuMemFree, 3020)                       \
    X(cuMemcpy, 4000)                        \
    X(cuMemHostAlloc, 2020)                  \
    X(cuMemFreeHost, 2000)                   \
    X(cuPointerGetAttribute, 4000)           \
    X(cuModuleLoadData, 2000)                \
    X(cuModuleGetFunction, 2000)             \
    X(cuModuleUnload, 2000)                  \
    X(cuGraphCreate, 10000)                  \
    X(cuGraphDestroy, 10000)                 \
    X(cuGraphAddKernelNode, 12000)           \
    X(cuGraphAddMemcpyNode, 10000)           \
    X(cuGraphAddHostNode, 10000)             \
    X(cuGraphAddEmptyNode, 10000)            \
    X(cuGraphAddNode, 12030)                 \
    X(cuGraphConditionalHandleCreate, 12030) \
    X(cuGraphInstantiateWithFlags, 11040)    \
    X(cuGraphUpload, 11010)                  \
    X(cuGraphLaunch, 10000)                  \
    X(cuGraphExecDestroy, 10000)             \
    X(cuGraphExecKernelNodeSetParams, 12000) \
    X(cuGraphExecMemcpyNodeSetParams, 10020) \
    X(cuLaunchKernel, 4000)                  \
    X(cuStreamBeginCapture, 10010)           \
    X(cuStreamEndCapture, 10000)             \
    X(cuGraphAddChildGraphNode, 10000)       \
    X(cuDeviceGetAttribute, 2000)            \
    X(cuCtxSynchronize, 2000)                \
    X(cuEventCreate, 2000)                   \
    X(cuEventRecord, 2000)                   \
    X(cuStreamWaitEvent, 3020)               \
    X(cuEventDestroy, 4000)

typedef eg_CUresult (*eg_PFN_cuDriverGetVersion)(int *driverVersion);
typedef eg_CUresult (*eg_PFN_cuGetProcAddress)(const char *symbol, void **pfn, int cudaVersion,
                                               eg_cuuint64_t flags,
                                               eg_CUdriverProcAddressQueryResult *symbolStatus);

typedef eg_CUresult (*eg_PFN_cuInit)(unsigned int Flags);
typedef eg_CUresult (*eg_PFN_cuGetErrorName)(eg_CUresult error, const char **pStr);
typedef eg_CUresult (*eg_PFN_cuDeviceGetCount)(int *count);
typedef eg_CUresult (*eg_PFN_cuDeviceGet)(eg_CUdevice *device, int ordinal);
typedef eg_CUresult (*eg_PFN_cuDevicePrimaryCtxRetain)(eg_CUcontext *pctx, eg_CUdevice dev);
typedef eg_CUresult (*eg_PFN_cuCtxSetCurrent)(eg_CUcontext ctx);
typedef eg_CUresult (*eg_PFN_cuStreamCreate)(eg_CUstream *phStream, unsigned int Flags);
typedef eg_CUresult (*eg_PFN_cuStreamSynchronize)(eg_CUstream hStream);
typedef eg_CUresult (*eg_PFN_cuStreamDestroy)(eg_CUstream hStream);
typedef eg_CUresult (*eg_PFN_cuMemAlloc)(eg_CUdeviceptr *dptr, size_t bytesize);
typedef eg_CUresult (*eg_PFN_cuMemFree)(eg_CUdeviceptr dptr);
typedef eg_CUresult (*eg_PFN_cuMemcpy)(eg_CUdeviceptr dst, eg_CUdeviceptr src, size_t ByteCount);
typedef eg_CUresult (*eg_PFN_cuMemHostAlloc)(void **pp, size_t bytesize, unsigned int Flags);
typedef eg_CUresult (*eg_PFN_cuMemFreeHost)(void *p);
typedef eg_CUresult (*eg_PFN_cuPointerGetAttribute)(void *data, eg_CUpointer_attribute attribute,
                                                    eg_CUdeviceptr ptr);
typedef eg_CUresult (*eg_PFN_cuModuleLoadData)(eg_CUmodule *module, const void *image);
typedef eg_CUresult (*eg_PFN_cuModuleGetFunction)(eg_CUfunction *hfunc, eg_CUmodule hmod,
                                                  const char *name);
typedef eg_CUresult (*eg_PFN_cuModuleUnload)(eg_CUmodule hmod);
typedef eg_CUresult (*eg_PFN_cuGraphCreate)(eg_CUgraph *phGraph, unsigned int flags);
typedef eg_CUresult (*eg_PFN_cuGraphDestroy)(eg_CUgraph hGraph);
typedef eg_CUresult (*eg_PFN_cuGraphAddKernelNode)(eg_CUgraphNode *phGraphNode, eg_CUgraph hGraph,
                                                   const eg_CUgraphNode *dependencies,
                                                   size_t numDependencies,
                                                   const eg_CUDA_KERNEL_NODE_PARAMS *nodeParams);
typedef eg_CUresult (*eg_PFN_cuGraphAddMemcpyNode)(eg_CUgraphNode *phGraphNode, eg_CUgraph hGraph,
                                                   const eg_CUgraphNode *dependencies,
                                                   size_t numDependencies,
                                                   const eg_CUDA_MEMCPY3D *copyParams,
                                                   eg_CUcontext ctx);
typedef eg_CUresult (*eg_PFN_cuGraphAddHostNode)(eg_CUgraphNode *phGraphNode, eg_CUgraph hGraph,
                                                 const eg_CUgraphNode *dependencies,
                                                 size_t numDependencies,
                                                 const eg_CUDA_HOST_NODE_PARAMS *nodeParams);
typedef eg_CUresult (*eg_PFN_cuGraphAddEmptyNode)(eg_CUgraphNode *phGraphNode, eg_CUgraph hGraph,
                                                  const eg_CUgraphNode *dependencies,
                                                  size_t numDependencies);
typedef eg_CUresult (*eg_PFN_cuGraphAddNode)(eg_CUgraphNode *phGraphNode, eg_CUgraph hGraph,
                                             const eg_CUgraphNode *dependencies,
                                             const eg_CUgraphEdgeData *dependencyData,
                                             size_t numDependencies,
                                             eg_CUgraphNodeParams *nodeParams);
typedef eg_CUresult (*eg_PFN_cuGraphConditionalHandleCreate)(
    eg_CUgraphConditionalHandle *pHandle_out, eg_CUgraph hGraph, eg_CUcontext ctx,
    unsigned int defaultLaunchValue, unsigned int flags);
typedef eg_CUresult (*eg_PFN_cuGraphInstantiateWithFlags)(eg_CUgraphExec *phGraphExec,
                                                          eg_CUgraph hGraph,
                                                          unsigned long long flags);
typedef eg_CUresult (*eg_PFN_cuGraphUpload)(eg_CUgraphExec hGraphExec, eg_CUstream hStream);
typedef eg_CUresult (*eg_PFN_cuGraphLaunch)(eg_CUgraphExec hGraphExec, eg_CUstream hStream);
typedef eg_CUresult (*eg_PFN_cuGraphExecDestroy)(eg_CUgraphExec hGraphExec);
typedef eg_CUresult (*eg_PFN_cuGraphExecKernelNodeSetParams)(
    eg_CUgraphExec hGraphExec, eg_CUgraphNode hNode, const eg_CUDA_KERNEL_NODE_PARAMS *nodeParams);

typedef eg_CUresult (*eg_PFN_cuGraphExecMemcpyNodeSetParams)(eg_CUgraphExec hGraphExec,
                                                             eg_CUgraphNode hNode,
                                                             const eg_CUDA_MEMCPY3D *copyParams,
                                                             eg_CUcontext ctx);

typedef eg_CUresult (*eg_PFN_cuLaunchKernel)(eg_CUfunction f, unsigned int gridDimX,
                                             unsigned int gridDimY, unsigned int gridDimZ,
                                             unsigned int blockDimX, unsigned int blockDimY,
                                             unsigned int blockDimZ, unsigned int sharedMemBytes,
                                             eg_CUstream hStream, void **kernelParams,
                                             void **extra);
typedef eg_CUresult (*eg_PFN_cuStreamBeginCapture)(eg_CUstream hStream,
                                                   eg_CUstreamCaptureMode mode);
typedef eg_CUresult (*eg_PFN_cuStreamEndCapture)(eg_CUstream hStream, eg_CUgraph *phGraph);
typedef eg_CUresult (*eg_PFN_cuGraphAddChildGraphNode)(eg_CUgraphNode *phGraphNode,
                                                       eg_CUgraph hGraph,
                                                       const eg_CUgraphNode *dependencies,
                                                       size_t numDependencies,
                                                       eg_CUgraph childGraph);

typedef eg_CUresult (*eg_PFN_cuDeviceGetAttribute)(int *pi, eg_CUdevice_attribute attrib,
                                                   eg_CUdevice dev);
typedef eg_CUresult (*eg_PFN_cuCtxSynchronize)(void);
typedef eg_CUresult (*eg_PFN_cuEventCreate)(eg_CUevent *phEvent, unsigned int Flags);
typedef eg_CUresult (*eg_PFN_cuEventRecord)(eg_CUevent hEvent, eg_CUstream hStream);
typedef eg_CUresult (*eg_PFN_cuStreamWaitEvent)(eg_CUstream hStream, eg_CUevent hEvent,
                                                unsigned int Flags);
typedef eg_CUresult (*eg_PFN_cuEventDestroy)(eg_CUevent hEvent);

#endif /* EAGLE_CUDA_DRIVER_H */
