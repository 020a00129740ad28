/*
 * Describing GPU graphs: stages, branches, items and sub-graphs, with the
 * refusals CUDA would make later (host nodes in conditional bodies, a
 * sub-graph used twice).  Never touches the driver, so these hold on
 * machines without a GPU too.  gpu_build.c turns a description into a CUDA
 * graph.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu_graph.h"

eagle_gpu_graph *gpu_top(const eagle_gpu_graph *g)
{
    while (g->owner)
        g = g->owner;
    return (eagle_gpu_graph *)g;
}

gitem *gpu_item(const eagle_gpu_graph *g, int32_t node)
{
    node_ref r = g->nodes[node];
    return BRANCH_ITEM(gitem, &g->st.v[r.stage].branches[r.branch], r.item);
}

/* ------------------------------------------------------------ describing */

EAGLE_API eagle_gpu_graph *eagle_gpu_graph_new(void)
{
    eagle_gpu_graph *g = calloc(1, sizeof *g);
    if (!g)
        eagle_fail(EAGLE_ERR_NOMEM, "eagle_gpu_graph_new: out of memory");
    return g;
}

static void free_item(void *p)
{
    gitem *it = p;
    switch (it->kind) {
    case GI_KERNEL:
        free(it->u.kernel.args);
        break;
    case GI_HOST:
        free(it->u.host);
        break;
    case GI_IF:
    case GI_SWITCH:
    case GI_LOOP:
        for (int32_t i = 0; i < it->u.cond.narms; ++i)
            gpu_graph_free(it->u.cond.arms[i]);
        gpu_graph_free(it->u.cond.dflt);
        free(it->u.cond.arms);
        break;
    case GI_COPY:
    case GI_WAIT:
    case GI_CAPTURE:
    case GI_CHILD:
        break;
    }
}

void gpu_graph_free(eagle_gpu_graph *g)
{
    if (!g)
        return;
    stages_free(&g->st, sizeof(gitem), free_item);
    free(g->nodes);
    free(g);
}

static int check_open(const eagle_gpu_graph *g, const char *api)
{
    if (!g)
        return eagle_fail(EAGLE_ERR_ARG, "%s: graph is NULL", api);
    if (gpu_top(g)->exec)
        return eagle_fail(EAGLE_ERR_STATE, "%s: the graph is instantiated", api);
    return EAGLE_OK;
}

EAGLE_API int eagle_gpu_branch(eagle_gpu_graph *g)
{
    int rc = check_open(g, "eagle_gpu_branch");
    if (rc)
        return rc;
    if (g->st.n == 0)
        return eagle_fail(EAGLE_ERR_STATE, "eagle_gpu_branch: open a stage first");
    if (stages_branch(&g->st))
        return eagle_fail(EAGLE_ERR_NOMEM, "eagle_gpu_branch: out of memory");
    return EAGLE_OK;
}

EAGLE_API int eagle_gpu_stage(eagle_gpu_graph *g)
{
    int rc = check_open(g, "eagle_gpu_stage");
    if (rc)
        return rc;
    if (stages_open(&g->st, EAGLE_WORK_SHARE))
        return eagle_fail(EAGLE_ERR_NOMEM, "eagle_gpu_stage: out of memory");
    return EAGLE_OK;
}

/* A new item at the end of the current branch, and its node id in *id. */
static gitem *append(eagle_gpu_graph *g, gitem_kind kind, const char *api, int32_t *id)
{
    if (g->st.n == 0 && eagle_gpu_stage(g))
        return NULL;
    gitem *it = GROW(g->nodes, g->nnodes, g->nodes_cap) ? NULL : stages_append(&g->st, sizeof *it);
    if (!it) {
        eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
        return NULL;
    }
    const stage *st = &g->st.v[g->st.n - 1];
    g->nodes[g->nnodes] = (node_ref){g->st.n - 1, st->n - 1, st->branches[st->n - 1].n - 1};
    *id = g->nnodes++;
    it->kind = kind;
    return it;
}

int gpu_check_dims(const uint32_t *dims, const char *what, const char *api)
{
    if (!dims)
        return eagle_fail(EAGLE_ERR_ARG, "%s: %s is NULL", api, what);
    for (int i = 0; i < 3; ++i)
        if (dims[i] == 0)
            return eagle_fail(EAGLE_ERR_ARG, "%s: %s[%d] is 0; every dimension is at least 1", api,
                              what, i);
    return EAGLE_OK;
}

EAGLE_API int eagle_gpu_add_kernel(eagle_gpu_graph *g, void *function, const uint32_t *grid,
                                   const uint32_t *block, uint32_t shared_bytes,
                                   const eagle_arg *args, int32_t nargs)
{
    const char *api = "eagle_gpu_add_kernel";
    int rc = check_open(g, api);
    if (!rc && (!function || nargs < 0 || (nargs && !args)))
        rc = eagle_fail(EAGLE_ERR_ARG, "%s: function is NULL or args do not match nargs", api);
    if (!rc)
        rc = gpu_check_dims(grid, "grid", api);
    if (!rc)
        rc = gpu_check_dims(block, "block", api);
    if (rc)
        return rc;
    eagle_arg *copy = malloc((size_t)(nargs ? nargs : 1) * sizeof *copy);
    int32_t id;
    gitem *it = copy ? append(g, GI_KERNEL, api, &id) : NULL;
    if (!it) {
        free(copy);
        return eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
    }
    if (nargs)
        memcpy(copy, args, (size_t)nargs * sizeof *copy);
    kernel_desc *k = &it->u.kernel;
    *k = (kernel_desc){.fn = function, .shared = shared_bytes, .args = copy, .nargs = nargs};
    memcpy(k->grid, grid, sizeof k->grid);
    memcpy(k->block, block, sizeof k->block);
    return id;
}

EAGLE_API int eagle_gpu_add_copy(eagle_gpu_graph *g, uint64_t dst, uint64_t src, size_t bytes)
{
    const char *api = "eagle_gpu_add_copy";
    int rc = check_open(g, api);
    if (rc)
        return rc;
    if (!dst || !src || !bytes)
        return eagle_fail(EAGLE_ERR_ARG, "%s: a NULL address or zero bytes", api);
    int32_t id;
    gitem *it = append(g, GI_COPY, api, &id);
    if (!it)
        return EAGLE_ERR_NOMEM;
    it->u.copy.dst = dst;
    it->u.copy.src = src;
    it->u.copy.bytes = bytes;
    return id;
}

EAGLE_API int eagle_gpu_add_wait(eagle_gpu_graph *g, int32_t node)
{
    const char *api = "eagle_gpu_add_wait";
    int rc = check_open(g, api);
    if (rc)
        return rc;
    if (node < 0 || node >= g->nnodes)
        return eagle_fail(EAGLE_ERR_ARG, "%s: no item %d in this graph (it has %d)", api, (int)node,
                          (int)g->nnodes);
    int32_t id;
    gitem *it = append(g, GI_WAIT, api, &id);
    if (!it)
        return EAGLE_ERR_NOMEM;
    it->u.wait = node;
    return id;
}

EAGLE_API int eagle_gpu_add_captured(eagle_gpu_graph *g, eagle_capture_fn fn, void *ctx,
                                     uint64_t stream)
{
    const char *api = "eagle_gpu_add_captured";
    int rc = check_open(g, api);
    if (rc)
        return rc;
    if (!fn)
        return eagle_fail(EAGLE_ERR_ARG, "%s: fn is NULL", api);
    int32_t id;
    gitem *it = append(g, GI_CAPTURE, api, &id);
    if (!it)
        return EAGLE_ERR_NOMEM;
    it->u.capture = (capture_desc){fn, ctx, stream};
    return id;
}

EAGLE_API int eagle_gpu_add_child(eagle_gpu_graph *g, uint64_t graph)
{
    const char *api = "eagle_gpu_add_child";
    int rc = check_open(g, api);
    if (rc)
        return rc;
    if (!graph)
        return eagle_fail(EAGLE_ERR_ARG, "%s: graph is NULL", api);
    int32_t id;
    gitem *it = append(g, GI_CHILD, api, &id);
    if (!it)
        return EAGLE_ERR_NOMEM;
    it->u.child.graph = graph;
    return id;
}

EAGLE_API int eagle_gpu_adopt_child(eagle_gpu_graph *g, uint64_t graph)
{
    int id = eagle_gpu_add_child(g, graph);
    if (id >= 0)
        gpu_item(g, id)->u.child.owned = 1;
    return id;
}

void gpu_samples_grid(int64_t end, uint32_t *grid)
{
    int64_t blocks = (end + EAGLE_GPU_THREADS - 1) / EAGLE_GPU_THREADS;
    grid[0] = (uint32_t)(blocks < 1                          ? 1
                             : blocks > EAGLE_GPU_MAX_BLOCKS ? EAGLE_GPU_MAX_BLOCKS
                                                             : blocks);
    grid[1] = grid[2] = 1;
}

EAGLE_API int eagle_gpu_add_samples_kernel(eagle_gpu_graph *g, void *function,
                                           const eagle_arg *args, int32_t nargs, int64_t n)
{
    const char *api = "eagle_gpu_add_samples_kernel";
    if (n < 0 || nargs < 0 || (nargs && !args))
        return eagle_fail(EAGLE_ERR_ARG, "%s: n < 0, or args that do not match nargs", api);
    eagle_arg *all = malloc((size_t)(nargs + 1) * sizeof *all);
    if (!all)
        return eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
    if (nargs)
        memcpy(all, args, (size_t)nargs * sizeof *all);
    all[nargs].i64 = n;
    uint32_t grid[3], block[3] = {EAGLE_GPU_THREADS, 1, 1};
    gpu_samples_grid(n, grid);
    int id = eagle_gpu_add_kernel(g, function, grid, block, 0, all, nargs + 1);
    free(all);
    if (id >= 0) {
        kernel_desc *k = &gpu_item(g, id)->u.kernel;
        k->sized = 1;
        k->samples = n;
    }
    return id;
}

EAGLE_API int eagle_gpu_set_stream(eagle_gpu_graph *g, uint64_t stream)
{
    const char *api = "eagle_gpu_set_stream";
    int rc = check_open(g, api);
    if (rc)
        return rc;
    if (g->owner)
        return eagle_fail(EAGLE_ERR_STATE, "%s: a sub-graph replays on its top graph's stream",
                          api);
    g->stream = (eg_CUstream)(uintptr_t)stream;
    g->stream_given = stream != 0;
    return EAGLE_OK;
}

EAGLE_API int eagle_gpu_add_host(eagle_gpu_graph *g, eagle_callback_fn fn, void *ctx)
{
    const char *api = "eagle_gpu_add_host";
    int rc = check_open(g, api);
    if (rc)
        return rc;
    if (!fn)
        return eagle_fail(EAGLE_ERR_ARG, "%s: fn is NULL", api);
    if (g->owner)
        return eagle_fail(EAGLE_ERR_STATE,
                          "%s: host nodes cannot run inside a conditional's "
                          "sub-graph (CUDA allows none in conditional bodies)",
                          api);
    host_desc *h = malloc(sizeof *h);
    int32_t id;
    gitem *it = h ? append(g, GI_HOST, api, &id) : NULL;
    if (!it) {
        free(h);
        return eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
    }
    *h = (host_desc){fn, ctx, g};
    it->u.host = h;
    return id;
}

static int has_host_item(const eagle_gpu_graph *g);

/* stages_each's test: is the item a host node, or does one of its sub-graphs hold one? */
static int item_has_host(void *p, void *ctx)
{
    (void)ctx;
    const gitem *it = p;
    if (it->kind == GI_HOST)
        return 1;
    if (it->kind != GI_IF && it->kind != GI_SWITCH && it->kind != GI_LOOP)
        return 0;
    for (int32_t i = 0; i < it->u.cond.narms; ++i)
        if (has_host_item(it->u.cond.arms[i]))
            return 1;
    return has_host_item(it->u.cond.dflt);
}

static int has_host_item(const eagle_gpu_graph *g)
{
    return g && stages_each(&g->st, sizeof(gitem), item_has_host, NULL);
}

/* May sub become a sub-graph of g?  Not if owned, instantiated, holding g,
 * or holding a host node. */
static int adoptable(const eagle_gpu_graph *g, const eagle_gpu_graph *sub, const char *api)
{
    if (!sub)
        return EAGLE_OK;
    if (sub->owner)
        return eagle_fail(EAGLE_ERR_STATE, "%s: the sub-graph already belongs to another graph",
                          api);
    if (sub->exec)
        return eagle_fail(EAGLE_ERR_STATE, "%s: the sub-graph is instantiated", api);
    for (const eagle_gpu_graph *q = g; q; q = q->owner)
        if (q == sub)
            return eagle_fail(EAGLE_ERR_STATE, "%s: a graph cannot hold itself", api);
    if (has_host_item(sub))
        return eagle_fail(EAGLE_ERR_STATE,
                          "%s: the sub-graph holds a host node; CUDA allows none "
                          "in conditional bodies",
                          api);
    return EAGLE_OK;
}

/* Check every sub-graph (narms arms, then dflt) and that none is used twice. */
static int check_subgraphs(const eagle_gpu_graph *g, int32_t narms, eagle_gpu_graph **arms,
                           const eagle_gpu_graph *dflt, const char *api)
{
    for (int32_t i = 0; i <= narms; ++i) {
        const eagle_gpu_graph *sub = i < narms ? arms[i] : dflt;
        int rc = adoptable(g, sub, api);
        if (rc)
            return rc;
        for (int32_t j = 0; sub && j < i; ++j)
            if (arms[j] == sub)
                return eagle_fail(EAGLE_ERR_STATE, "%s: one sub-graph used for two arms", api);
    }
    return EAGLE_OK;
}

static int add_conditional(eagle_gpu_graph *g, gitem_kind kind, uint64_t cell, int32_t narms,
                           eagle_gpu_graph **arms, eagle_gpu_graph *dflt, int32_t loop_kind,
                           const char *api)
{
    int rc = check_open(g, api);
    if (rc)
        return rc;
    if (!cell || narms < 0 || (narms && !arms))
        return eagle_fail(EAGLE_ERR_ARG, "%s: bad arguments (a NULL cell or arms)", api);
    if ((rc = check_subgraphs(g, narms, arms, dflt, api)))
        return rc;
    eagle_gpu_graph **copy = calloc((size_t)(narms ? narms : 1), sizeof *copy);
    int32_t id;
    gitem *it = copy ? append(g, kind, api, &id) : NULL;
    if (!it) {
        free(copy);
        return eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
    }
    for (int32_t i = 0; i < narms; ++i)
        if ((copy[i] = arms[i]))
            arms[i]->owner = g;
    if (dflt)
        dflt->owner = g;
    it->u.cond = (cond_desc){cell, narms, loop_kind, copy, dflt};
    return id;
}

EAGLE_API int eagle_gpu_add_if(eagle_gpu_graph *g, uint64_t cell, eagle_gpu_graph *then_,
                               eagle_gpu_graph *else_)
{
    return add_conditional(g, GI_IF, cell, 1, &then_, else_, 0, "eagle_gpu_add_if");
}

EAGLE_API int eagle_gpu_add_switch(eagle_gpu_graph *g, uint64_t cell, int32_t narms,
                                   eagle_gpu_graph **arms, eagle_gpu_graph *default_)
{
    return add_conditional(g, GI_SWITCH, cell, narms, arms, default_, 0, "eagle_gpu_add_switch");
}

EAGLE_API int eagle_gpu_add_loop(eagle_gpu_graph *g, uint64_t cell, int32_t kind,
                                 eagle_gpu_graph *body)
{
    const char *api = "eagle_gpu_add_loop";
    if (kind == EAGLE_LOOP_COUNT)
        return eagle_fail(EAGLE_ERR_ARG,
                          "%s: EAGLE_LOOP_COUNT is not available on the GPU (it "
                          "needs a device-side counter); lower it as a WHILE over a counter cell",
                          api);
    if (kind != EAGLE_LOOP_WHILE && kind != EAGLE_LOOP_DO)
        return eagle_fail(EAGLE_ERR_ARG, "%s: unknown loop kind %d", api, kind);
    if (!body)
        return eagle_fail(EAGLE_ERR_ARG, "%s: body is NULL", api);
    return add_conditional(g, GI_LOOP, cell, 1, &body, NULL, kind, api);
}

EAGLE_API void eagle_gpu_graph_stats(const eagle_gpu_graph *g, int64_t *stats)
{
    if (!g || !stats)
        return;
    memcpy(stats, gpu_top(g)->stats, sizeof g->stats);
}
