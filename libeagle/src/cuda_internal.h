/* What cuda.c (the driver) offers gpu_graph.c (CUDA graphs).  Not part of the ABI. */
#ifndef EAGLE_CUDA_INTERNAL_H
#define EAGLE_CUDA_INTERNAL_H

#include "cuda_driver.h"
#include "internal.h"

/* The resolved entry points: drv.cuInit, drv.cuGraphCreate, ...  NULL for
 * one newer than the driver (see EG_DRIVER_ENTRY_POINTS). */
#define EG_DRIVER_FIELD(name, version) eg_PFN_##name name;
typedef struct eg_driver {
    EG_DRIVER_BOOTSTRAP(EG_DRIVER_FIELD)
    EG_DRIVER_ENTRY_POINTS(EG_DRIVER_FIELD)
    int version; /* cuDriverGetVersion: 1000*major + 10*minor */
} eg_driver;
#undef EG_DRIVER_FIELD

extern eg_driver drv;

/* An opened device: its primary context and the condition-setting kernel. */
typedef struct cuda_device {
    eg_CUcontext ctx;
    eg_CUmodule condition_module; /* loaded on first use */
    eg_CUfunction set_condition;
} cuda_device;

/* Open the driver (once per process), no device: EAGLE_OK, or the status of
 * the failure with eagle_last_error starting with api. */
int cuda_load(const char *api);

/* Open the driver and `device` (see eagle_cuda_open) and make its primary
 * context current on this thread.  On failure eagle_last_error starts with api. */
int cuda_enter(int device, const char *api, cuda_device **out);

/* EAGLE_OK for CUDA_SUCCESS, else EAGLE_ERR_CUDA with a message naming api,
 * the driver call, the error's name and what to do about it. */
int cu_check(eg_CUresult r, const char *api, const char *call);

/* The ops of the condition kernel: which value of the cell the handle gets. */
enum condition_op {
    COND_NE = 0,    /* *cell != k */
    COND_EQ = 1,    /* *cell == k */
    COND_MIN = 2,   /* min(*cell, k) */
    COND_GE = 3,    /* *cell >= k */
    COND_CONST = 4, /* k */
};

/* The kernel eagle_set_condition(handle, cell, op, k) of cuda_condition_ptx.h,
 * loaded into d on first use.  d's context must be current. */
int cuda_condition_kernel(cuda_device *d, const char *api, eg_CUfunction *out);

#endif /* EAGLE_CUDA_INTERNAL_H */
