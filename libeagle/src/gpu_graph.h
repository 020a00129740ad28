/* The in-memory form of a GPU graph, made by gpu_graph.c (describing) and
 * read by gpu_build.c (building, launching, patching, freeing), which alone
 * talks to the driver: gpu_graph.c needs nothing of it.  Not part of the ABI. */
#ifndef EAGLE_GPU_GRAPH_H
#define EAGLE_GPU_GRAPH_H

#include <stdatomic.h>

#include "cuda_internal.h"
#include "stages.h"

typedef enum gitem_kind {
    GI_KERNEL,
    GI_COPY,
    GI_HOST,
    GI_IF,
    GI_SWITCH,
    GI_LOOP,
    GI_WAIT,
    GI_CAPTURE,
    GI_CHILD
} gitem_kind;

typedef struct kernel_desc {
    eg_CUfunction fn;
    uint32_t grid[3], block[3], shared;
    eagle_arg *args;
    int32_t nargs;
    /* eagle_gpu_add_samples_kernel's: over `samples`, its last argument the logical end. */
    int32_t sized;
    int64_t samples;
} kernel_desc;

/* A host node's user data: its own allocation, so its address outlives
 * reallocations of the branch (the driver keeps the pointer). */
typedef struct host_desc {
    eagle_callback_fn fn;
    void *ctx;
    eagle_gpu_graph *graph;
} host_desc;

/* Work a function enqueues on a stream, captured once at instantiation. */
typedef struct capture_desc {
    eagle_capture_fn fn;
    void *ctx;
    uint64_t stream; /* the caller's stream, or 0: the graph's own */
} capture_desc;

/* IF: arms[0] = then, dflt = else.  SWITCH: arms, dflt.  LOOP: arms[0] = body. */
typedef struct cond_desc {
    uint64_t cell;
    int32_t narms, loop_kind;
    eagle_gpu_graph **arms;
    eagle_gpu_graph *dflt;
} cond_desc;

typedef struct gitem {
    gitem_kind kind;
    eg_CUgraphNode node; /* the item's last node in the built CUDA graph (NULL before) */
    union {
        kernel_desc kernel;
        struct {
            uint64_t dst, src;
            size_t bytes;
        } copy;
        host_desc *host;
        cond_desc cond;
        int32_t wait; /* GI_WAIT: the id of the item the branch waits for */
        capture_desc capture;
        struct {
            uint64_t graph; /* a CUgraph, cloned when the node is added */
            int32_t owned;  /* eagle_gpu_adopt_child's: destroyed with the graph */
        } child;            /* GI_CHILD */
    } u;
} gitem;

typedef struct node_ref {
    int32_t stage, branch, item;
} node_ref;

/* The stages (their schedule unused: the graph's edges order the work). */
struct eagle_gpu_graph {
    stages st;
    node_ref *nodes; /* node id -> item */
    int32_t nnodes, nodes_cap;
    eagle_gpu_graph *owner; /* the graph whose item holds this one, or NULL */
    /* A top graph from eagle_gpu_instantiate on. */
    int device;
    eg_CUgraph graph;
    eg_CUgraphExec exec;
    eg_CUstream stream;
    int32_t stream_given; /* eagle_gpu_set_stream's: the caller's, never destroyed */
    int64_t stats[EAGLE_GPU_NSTATS];
    atomic_int callback_status; /* the first non-zero host callback return */
};

/* The top graph of g (g itself when no graph holds it). */
eagle_gpu_graph *gpu_top(const eagle_gpu_graph *g);

/* The item of node id `node` (0 <= node < g->nnodes). */
gitem *gpu_item(const eagle_gpu_graph *g, int32_t node);

/* EAGLE_OK when dims (grid or block, named `what`) has 3 dimensions >= 1. */
int gpu_check_dims(const uint32_t *dims, const char *what, const char *api);

/* The grid of a samples kernel whose logical end is `end`. */
void gpu_samples_grid(int64_t end, uint32_t *grid);

/* Free g's description and its sub-graphs'; g holds no CUDA objects
 * (gpu_build.c releases a top graph's before). */
void gpu_graph_free(eagle_gpu_graph *g);

#endif /* EAGLE_GPU_GRAPH_H */
