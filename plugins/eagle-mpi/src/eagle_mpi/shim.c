/*
 * eagle-mpi's collectives: the two functions of an eagle_collective table,
 * calling the MPI library mpi4py has loaded through pointers looked up at
 * run time.  No MPI header is needed: a handle (MPI_Comm, MPI_Datatype,
 * MPI_Op) is an int in MPICH's ABI and a pointer in Open MPI's, and its
 * width comes in as EAGLE_MPI_HANDLE_BYTES (mpi4py's MPI._sizeof), so the
 * shim works with whichever MPI mpi4py runs on.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eagle/eagle.h"

#if EAGLE_MPI_HANDLE_BYTES == 4
typedef int32_t mpi_handle;
#else
typedef void *mpi_handle;
#endif

typedef int (*allreduce_fn)(const void *, void *, int, mpi_handle, mpi_handle, mpi_handle);
typedef int (*allgatherv_fn)(const void *, int, mpi_handle, void *, const int *, const int *, mpi_handle,
                             mpi_handle);

/* handles[]: the communicator, the MPI datatype of each eagle dtype code
 * (EAGLE_F64 .. EAGLE_U64), then MPI_SUM, MPI_MAX, MPI_MIN. */
enum { NTYPES = 7, NOPS = 3, NHANDLES = 1 + NTYPES + NOPS };

typedef struct mpi_ctx {
    allreduce_fn allreduce;
    allgatherv_fn allgatherv;
    mpi_handle comm, types[NTYPES], ops[NOPS];
    int32_t rank, size;
    int *counts, *displs; /* MPI takes int counts: converted here on each call */
    int itemsize[NTYPES];
} mpi_ctx;

EAGLE_API int eagle_plugin_abi_version(void) { return EAGLE_ABI_VERSION; }

EAGLE_API void *eagle_mpi_new(void *allreduce, void *allgatherv, const int64_t *handles, int32_t rank,
                              int32_t size)
{
    static const int itemsize[NTYPES] = {8, 4, 8, 4, 4, 1, 8};
    mpi_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->counts = malloc((size_t)size * sizeof *c->counts);
    c->displs = malloc((size_t)size * sizeof *c->displs);
    if (!c->counts || !c->displs) {
        free(c->counts), free(c->displs), free(c);
        return NULL;
    }
    c->allreduce = (allreduce_fn)allreduce;
    c->allgatherv = (allgatherv_fn)allgatherv;
    c->comm = (mpi_handle)(intptr_t)handles[0];
    for (int i = 0; i < NTYPES; ++i)
        c->types[i] = (mpi_handle)(intptr_t)handles[1 + i];
    for (int i = 0; i < NOPS; ++i)
        c->ops[i] = (mpi_handle)(intptr_t)handles[1 + NTYPES + i];
    memcpy(c->itemsize, itemsize, sizeof itemsize);
    c->rank = rank, c->size = size;
    return c;
}

EAGLE_API void eagle_mpi_free(void *ctx)
{
    mpi_ctx *c = ctx;
    if (c)
        free(c->counts), free(c->displs), free(c);
}

/* EAGLE_SUM, EAGLE_MAX, EAGLE_MIN are 0, 1, 2: the order of ops[]. */
EAGLE_API int eagle_mpi_allreduce(void *ctx, void *value, int32_t dtype, int32_t op)
{
    mpi_ctx *c = ctx;
    if (dtype < 0 || dtype >= NTYPES || op < 0 || op >= NOPS)
        return 1;
    unsigned char mine[8];
    memcpy(mine, value, (size_t)c->itemsize[dtype]); /* MPI_IN_PLACE differs between ABIs */
    return c->allreduce(mine, value, 1, c->types[dtype], c->ops[op], c->comm) != 0;
}

EAGLE_API int eagle_mpi_allgather(void *ctx, const void *mine, void *out, const int64_t *counts, int32_t dtype)
{
    mpi_ctx *c = ctx;
    if (dtype < 0 || dtype >= NTYPES)
        return 1;
    int64_t at = 0;
    for (int32_t r = 0; r < c->size; ++r) {
        if (counts[r] > INT_MAX || at > INT_MAX)
            return 1;
        c->counts[r] = (int)counts[r], c->displs[r] = (int)at;
        at += counts[r];
    }
    return c->allgatherv(mine, c->counts[c->rank], c->types[dtype], out, c->counts, c->displs, c->types[dtype],
                         c->comm) != 0;
}
