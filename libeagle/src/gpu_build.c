/*
 * Building, launching and patching GPU graphs.  eagle_gpu_instantiate walks
 * the description and adds one CUDA graph node per item with explicit
 * graph-API calls; ordering is by graph edges only (no events).  Each
 * conditional becomes one-thread eagle_set_condition kernels that set the
 * handles from the cell, then the conditional node(s), with the plain-IF
 * lowerings where the driver lacks (or mishandles) IF/ELSE and SWITCH.
 */
#include <stdlib.h>
#include <string.h>

#include "gpu_graph.h"

/* Conditional nodes, IF, WHILE: 12.3.  SWITCH: 12.8.  Two-body IF: 12.8,
 * but 12.8 and 12.9 drivers reparent body nodes wrongly at instantiation
 * (fixed in 13.0, per NVIDIA Warp), so libeagle uses it from 13.0. */
#define CONDITIONAL_DRIVER 12030
#define SWITCH_DRIVER 12080
#define IF_ELSE_DRIVER 13000

typedef struct build {
    cuda_device *dev;
    eg_CUfunction set_condition;
    int native_if_else, native_switch;
    const char *api;
} build;

/* The nodes the next node depends on. */
typedef struct deps {
    eg_CUgraphNode *v;
    size_t n, cap;
} deps;

static int deps_push(deps *d, eg_CUgraphNode node, const char *api)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 4;
        eg_CUgraphNode *v = realloc(d->v, cap * sizeof *v);
        if (!v)
            return eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n++] = node;
    return EAGLE_OK;
}

static int deps_set(deps *d, eg_CUgraphNode node, const char *api)
{
    d->n = 0;
    return deps_push(d, node, api);
}

static int build_graph(const build *b, const eagle_gpu_graph *g, eg_CUgraph cg, deps *cur);

/* ---------------------------------------------------------------- nodes */

/* The driver's node parameters of a kernel; slots receives nargs pointers. */
static eg_CUDA_KERNEL_NODE_PARAMS kernel_params(const kernel_desc *k, void **slots)
{
    for (int32_t i = 0; i < k->nargs; ++i)
        slots[i] = &k->args[i];
    return (eg_CUDA_KERNEL_NODE_PARAMS){
        .func = k->fn,
        .gridDimX = k->grid[0],
        .gridDimY = k->grid[1],
        .gridDimZ = k->grid[2],
        .blockDimX = k->block[0],
        .blockDimY = k->block[1],
        .blockDimZ = k->block[2],
        .sharedMemBytes = k->shared,
        .kernelParams = k->nargs ? slots : NULL,
    };
}

static int add_kernel_node(const build *b, eg_CUgraph cg, const deps *d, const kernel_desc *k,
                           eg_CUgraphNode *out)
{
    void **slots = malloc((size_t)(k->nargs ? k->nargs : 1) * sizeof *slots);
    if (!slots)
        return eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", b->api);
    eg_CUDA_KERNEL_NODE_PARAMS p = kernel_params(k, slots);
    int rc = cu_check(drv.cuGraphAddKernelNode(out, cg, d->v, d->n, &p), b->api,
                      "cuGraphAddKernelNode");
    free(slots);
    return rc;
}

static int add_empty_node(const build *b, eg_CUgraph cg, const deps *d, eg_CUgraphNode *out)
{
    return cu_check(drv.cuGraphAddEmptyNode(out, cg, d->v, d->n), b->api, "cuGraphAddEmptyNode");
}

/* Refuse pageable host memory: CUDA graphs read it at every replay with no
 * guarantee (and not at all inside conditional bodies). */
static int check_copy_side(const char *api, uint64_t address, const char *side)
{
    int type = 0;
    eg_CUresult r = drv.cuPointerGetAttribute(&type, EG_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address);
    if (r == EG_CUDA_ERROR_INVALID_VALUE)
        return eagle_fail(EAGLE_ERR_ARG,
                          "%s: the %s of a copy (0x%llx) is pageable host memory; "
                          "a graph copies only device or pinned memory: allocate it with "
                          "eagle_cuda_host_alloc",
                          api, side, (unsigned long long)address);
    return cu_check(r, api, "cuPointerGetAttribute");
}

/* The parameters of a copy of `bytes` from src to dst, after checking both sides. */
static int copy_params(const char *api, uint64_t dst, uint64_t src, size_t bytes,
                       eg_CUDA_MEMCPY3D *p)
{
    int rc = check_copy_side(api, src, "source");
    if (!rc)
        rc = check_copy_side(api, dst, "destination");
    /* UNIFIED on both sides: the driver works out the direction. */
    *p = (eg_CUDA_MEMCPY3D){
        .srcMemoryType = EG_CU_MEMORYTYPE_UNIFIED,
        .srcDevice = src,
        .dstMemoryType = EG_CU_MEMORYTYPE_UNIFIED,
        .dstDevice = dst,
        .WidthInBytes = bytes,
        .Height = 1,
        .Depth = 1,
    };
    return rc;
}

static int add_copy_node(const build *b, eg_CUgraph cg, const deps *d, const gitem *it,
                         eg_CUgraphNode *out)
{
    eg_CUDA_MEMCPY3D p;
    int rc = copy_params(b->api, it->u.copy.dst, it->u.copy.src, it->u.copy.bytes, &p);
    return rc ? rc
              : cu_check(drv.cuGraphAddMemcpyNode(out, cg, d->v, d->n, &p, b->dev->ctx), b->api,
                         "cuGraphAddMemcpyNode");
}

/* Capture the work fn enqueues on its stream, once, into a child graph node. */
static int add_captured(const build *b, eg_CUgraph cg, const deps *d, const capture_desc *c,
                        eg_CUgraphNode *out)
{
    eg_CUstream s = c->stream ? (eg_CUstream)(uintptr_t)c->stream : NULL;
    int rc = s
        ? EAGLE_OK
        : cu_check(drv.cuStreamCreate(&s, EG_CU_STREAM_NON_BLOCKING), b->api, "cuStreamCreate");
    /* Relaxed: what fn's library does beside its launches (an allocation) is not refused, and a
     * non-blocking stream of its own: other work on the legacy stream does not break the capture. */
    if (!rc)
        rc = cu_check(drv.cuStreamBeginCapture(s, EG_CU_STREAM_CAPTURE_MODE_RELAXED), b->api,
                      "cuStreamBeginCapture");
    if (rc) {
        if (s && !c->stream)
            drv.cuStreamDestroy(s);
        return rc;
    }
    int status = c->fn(c->ctx, (uint64_t)(uintptr_t)s);
    eg_CUgraph captured = NULL;
    eg_CUresult r = drv.cuStreamEndCapture(s,
                                           &captured); /* ends the capture even after a failure */
    if (status)
        rc = eagle_fail(EAGLE_ERR_CALLBACK, "%s: the captured function failed (%d)", b->api,
                        status);
    else
        rc = cu_check(r, b->api, "cuStreamEndCapture");
    if (!rc)
        rc = cu_check(drv.cuGraphAddChildGraphNode(out, cg, d->v, d->n, captured), b->api,
                      "cuGraphAddChildGraphNode");
    if (captured) /* the child node holds a clone */
        drv.cuGraphDestroy(captured);
    if (!c->stream)
        drv.cuStreamDestroy(s);
    return rc;
}

/* The driver calls this on its own thread at every replay. */
static void host_trampoline(void *user)
{
    host_desc *h = user;
    int status = h->fn(h->ctx);
    int none = 0;
    if (status)
        atomic_compare_exchange_strong(&h->graph->callback_status, &none, status);
}

static int add_host_node(const build *b, eg_CUgraph cg, const deps *d, host_desc *h,
                         eg_CUgraphNode *out)
{
    eg_CUDA_HOST_NODE_PARAMS p = {host_trampoline, h};
    return cu_check(drv.cuGraphAddHostNode(out, cg, d->v, d->n, &p), b->api, "cuGraphAddHostNode");
}

/* --------------------------------------------------------- conditionals */

static int new_handle(const build *b, eg_CUgraph cg, eg_CUgraphConditionalHandle *h)
{
    return cu_check(drv.cuGraphConditionalHandleCreate(h, cg, b->dev->ctx, 0, 0), b->api,
                    "cuGraphConditionalHandleCreate");
}

/* A one-thread eagle_set_condition(handle, cell, op, k) after d. */
static int add_set_condition(const build *b, eg_CUgraph cg, const deps *d,
                             eg_CUgraphConditionalHandle handle, uint64_t cell, uint32_t op,
                             uint32_t k, eg_CUgraphNode *out)
{
    eagle_arg args[4] = {{.u64 = handle}, {.u64 = cell}, {.u32 = op}, {.u32 = k}};
    kernel_desc kd = {
        .fn = b->set_condition, .grid = {1, 1, 1}, .block = {1, 1, 1}, .args = args, .nargs = 4};
    return add_kernel_node(b, cg, d, &kd, out);
}

/* Fill a body graph from sub (NULL: nothing).  An empty body gets one
 * empty node so that no body graph is left without nodes. */
static int build_body(const build *b, const eagle_gpu_graph *sub, eg_CUgraph body, deps *sinks)
{
    sinks->n = 0;
    int rc = sub ? build_graph(b, sub, body, sinks) : EAGLE_OK;
    if (rc || sinks->n)
        return rc;
    eg_CUgraphNode empty;
    deps none = {0};
    rc = add_empty_node(b, body, &none, &empty);
    return rc ? rc : deps_push(sinks, empty, b->api);
}

/* One conditional node of `type` with `size` bodies built from subs[], after
 * the kernel that sets its handle to op(*cell, k).  A WHILE body ends with
 * the kernel again, as the loop test, reading the cell as *cell != 0. */
static int add_native(const build *b, eg_CUgraph cg, const deps *d, uint64_t cell, int type,
                      uint32_t op, uint32_t k, eagle_gpu_graph *const *subs, unsigned size,
                      eg_CUgraphNode *out)
{
    eg_CUgraphConditionalHandle h;
    eg_CUgraphNode set;
    deps after = {0}, sinks = {0};
    int rc = new_handle(b, cg, &h);
    if (!rc)
        rc = add_set_condition(b, cg, d, h, cell, op, k, &set);
    if (!rc)
        rc = deps_set(&after, set, b->api);
    eg_CUgraphNodeParams p;
    memset(&p, 0, sizeof p); /* the driver wants every unused byte zero */
    p.type = EG_CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional = (eg_CUDA_CONDITIONAL_NODE_PARAMS){h, type, size, NULL, b->dev->ctx};
    if (!rc)
        rc = cu_check(drv.cuGraphAddNode(out, cg, after.v, NULL, after.n, &p), b->api,
                      "cuGraphAddNode (conditional)");
    for (unsigned i = 0; !rc && i < size; ++i) {
        eg_CUgraph body = p.conditional.phGraph_out[i];
        rc = build_body(b, subs[i], body, &sinks);
        if (!rc && type == EG_CU_GRAPH_COND_TYPE_WHILE)
            rc = add_set_condition(b, body, &sinks, h, cell, COND_NE, 0, &set);
    }
    free(after.v);
    free(sinks.v);
    return rc;
}

/* n single-body IF nodes: all handles are set first (kernel i sets handle i
 * to ops[i](*cell, ks[i])), so an arm that writes the cell cannot change
 * which later arm runs; then the IF nodes, one after another. */
static int add_plain_ifs(const build *b, eg_CUgraph cg, const deps *d, uint64_t cell, int32_t n,
                         eagle_gpu_graph *const *subs, const uint32_t *ops, const uint32_t *ks,
                         eg_CUgraphNode *out)
{
    eg_CUgraphConditionalHandle *h = calloc((size_t)(n ? n : 1), sizeof *h);
    deps cur = {0}, sinks = {0};
    int rc = h ? EAGLE_OK : eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", b->api);
    for (size_t i = 0; !rc && i < d->n; ++i)
        rc = deps_push(&cur, d->v[i], b->api);
    for (int32_t i = 0; !rc && i < n; ++i) {
        rc = new_handle(b, cg, &h[i]);
        if (!rc)
            rc = add_set_condition(b, cg, &cur, h[i], cell, ops[i], ks[i], out);
        if (!rc)
            rc = deps_set(&cur, *out, b->api);
    }
    for (int32_t i = 0; !rc && i < n; ++i) {
        eg_CUgraphNodeParams p;
        memset(&p, 0, sizeof p);
        p.type = EG_CU_GRAPH_NODE_TYPE_CONDITIONAL;
        p.conditional = (eg_CUDA_CONDITIONAL_NODE_PARAMS){h[i], EG_CU_GRAPH_COND_TYPE_IF, 1, NULL,
                                                          b->dev->ctx};
        rc = cu_check(drv.cuGraphAddNode(out, cg, cur.v, NULL, cur.n, &p), b->api,
                      "cuGraphAddNode (conditional)");
        if (!rc)
            rc = build_body(b, subs[i], p.conditional.phGraph_out[0], &sinks);
        if (!rc)
            rc = deps_set(&cur, *out, b->api);
    }
    if (!rc && n == 0)
        rc = add_empty_node(b, cg, d, out);
    free(h);
    free(cur.v);
    free(sinks.v);
    return rc;
}

static int add_if(const build *b, eg_CUgraph cg, const deps *d, const cond_desc *c,
                  eg_CUgraphNode *out)
{
    eagle_gpu_graph *then_ = c->arms[0], *else_ = c->dflt;
    if (then_ && else_ && b->native_if_else) {
        eagle_gpu_graph *subs[2] = {then_, else_};
        return add_native(b, cg, d, c->cell, EG_CU_GRAPH_COND_TYPE_IF, COND_NE, 0, subs, 2, out);
    }
    eagle_gpu_graph *subs[2];
    uint32_t ops[2], ks[2] = {0, 0};
    int32_t n = 0;
    if (then_) {
        subs[n] = then_;
        ops[n++] = COND_NE;
    }
    if (else_) {
        subs[n] = else_;
        ops[n++] = COND_EQ;
    }
    return add_plain_ifs(b, cg, d, c->cell, n, subs, ops, ks, out);
}

static int add_switch(const build *b, eg_CUgraph cg, const deps *d, const cond_desc *c,
                      eg_CUgraphNode *out)
{
    int32_t narms = c->narms, n = 0;
    eagle_gpu_graph **subs = calloc((size_t)narms + 1, sizeof *subs);
    uint32_t *ops = calloc((size_t)narms + 1, sizeof *ops);
    uint32_t *ks = calloc((size_t)narms + 1, sizeof *ks);
    int rc = (subs && ops && ks) ? EAGLE_OK
                                 : eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", b->api);
    if (!rc && b->native_switch && narms + (c->dflt != NULL) > 0) {
        /* value min(*cell, narms) picks body narms, the default, past the arms. */
        memcpy(subs, c->arms, (size_t)narms * sizeof *subs);
        subs[narms] = c->dflt;
        rc = add_native(b, cg, d, c->cell, EG_CU_GRAPH_COND_TYPE_SWITCH, COND_MIN, (uint32_t)narms,
                        subs, (unsigned)narms + (c->dflt != NULL), out);
    } else if (!rc) {
        for (int32_t i = 0; i <= narms; ++i) {
            eagle_gpu_graph *sub = i < narms ? c->arms[i] : c->dflt;
            if (!sub)
                continue;
            subs[n] = sub;
            ops[n] = i < narms ? COND_EQ : COND_GE;
            ks[n++] = (uint32_t)i;
        }
        rc = add_plain_ifs(b, cg, d, c->cell, n, subs, ops, ks, out);
    }
    free(subs);
    free(ops);
    free(ks);
    return rc;
}

static int add_loop(const build *b, eg_CUgraph cg, const deps *d, const cond_desc *c,
                    eg_CUgraphNode *out)
{
    /* DO's first test is a constant 1 set by the kernel: the handle's
     * default value would be applied once per launch, not each time the
     * node is reached (a loop inside a loop). */
    if (c->loop_kind == EAGLE_LOOP_DO)
        return add_native(b, cg, d, c->cell, EG_CU_GRAPH_COND_TYPE_WHILE, COND_CONST, 1, c->arms, 1,
                          out);
    return add_native(b, cg, d, c->cell, EG_CU_GRAPH_COND_TYPE_WHILE, COND_NE, 0, c->arms, 1, out);
}

/* ---------------------------------------------------------------- graphs */

static int add_item(const build *b, eg_CUgraph cg, const deps *d, gitem *it, eg_CUgraphNode *out)
{
    switch (it->kind) {
    case GI_KERNEL:
        return add_kernel_node(b, cg, d, &it->u.kernel, out);
    case GI_COPY:
        return add_copy_node(b, cg, d, it, out);
    case GI_HOST:
        return add_host_node(b, cg, d, it->u.host, out);
    case GI_IF:
        return add_if(b, cg, d, &it->u.cond, out);
    case GI_SWITCH:
        return add_switch(b, cg, d, &it->u.cond, out);
    case GI_LOOP:
        return add_loop(b, cg, d, &it->u.cond, out);
    case GI_WAIT:
        break; /* build_branch adds the edge */
    case GI_CAPTURE:
        return add_captured(b, cg, d, &it->u.capture, out);
    case GI_CHILD:
        return cu_check(drv.cuGraphAddChildGraphNode(out, cg, d->v, d->n,
                                                     (eg_CUgraph)(uintptr_t)it->u.child.graph),
                        b->api, "cuGraphAddChildGraphNode");
    }
    return eagle_fail(EAGLE_ERR_ARG, "%s: unknown item kind %d", b->api, (int)it->kind);
}

/* A wait item: the next node of the branch also depends on the waited item's
 * node, which an earlier branch built. */
static int add_wait(const build *b, const eagle_gpu_graph *g, const gitem *it, deps *d)
{
    eg_CUgraphNode waited = gpu_item(g, it->u.wait)->node;
    if (!waited)
        return eagle_fail(EAGLE_ERR_ARG,
                          "%s: a branch waits for item %d, which is not built before "
                          "it: wait only for items of earlier branches or stages",
                          b->api, (int)it->u.wait);
    return deps_push(d, waited, b->api);
}

/* Add g's stages to cg after the nodes in *cur; on return *cur holds the
 * last node of every branch of the last non-empty stage. */
static int build_branch(const build *b, const eagle_gpu_graph *g, const branch *br, eg_CUgraph cg,
                        const deps *start, deps *sinks)
{
    deps d = {0};
    eg_CUgraphNode node = NULL;
    int rc = EAGLE_OK;
    for (size_t i = 0; !rc && i < start->n; ++i)
        rc = deps_push(&d, start->v[i], b->api);
    for (int32_t i = 0; !rc && i < br->n; ++i) {
        gitem *it = BRANCH_ITEM(gitem, br, i);
        if (it->kind == GI_WAIT) {
            rc = add_wait(b, g, it, &d);
            continue;
        }
        rc = add_item(b, cg, &d, it, &node);
        it->node = rc ? NULL : node;
        if (!rc)
            rc = deps_set(&d, node, b->api);
    }
    if (!rc && node)
        rc = deps_push(sinks, node, b->api);
    free(d.v);
    return rc;
}

static int build_graph(const build *b, const eagle_gpu_graph *g, eg_CUgraph cg, deps *cur)
{
    deps sinks = {0};
    int rc = EAGLE_OK;
    for (int32_t s = 0; !rc && s < g->st.n; ++s) {
        sinks.n = 0;
        for (int32_t i = 0; !rc && i < g->st.v[s].n; ++i)
            rc = build_branch(b, g, &g->st.v[s].branches[i], cg, cur, &sinks);
        if (!rc && sinks.n) { /* an empty stage leaves *cur as it was */
            deps t = *cur;
            *cur = sinks;
            sinks = t;
        }
    }
    free(sinks.v);
    return rc;
}

/* stages_each's test: is the item a conditional? */
static int is_conditional(void *p, void *ctx)
{
    (void)ctx;
    gitem_kind kind = ((const gitem *)p)->kind;
    return kind == GI_IF || kind == GI_SWITCH || kind == GI_LOOP;
}

static int uses_conditionals(const eagle_gpu_graph *g)
{
    return stages_each(&g->st, sizeof(gitem), is_conditional, NULL);
}

/* ---------------------------------------------------------- the public API */

/* Wait for a top graph's replays and destroy its CUDA objects. */
static void release_cuda(eagle_gpu_graph *g)
{
    cuda_device *d;
    if (!g->exec && !g->graph && !g->stream)
        return;
    if (cuda_enter(g->device, "eagle_gpu_graph_free", &d) == EAGLE_OK) {
        if (g->stream)
            drv.cuStreamSynchronize(g->stream);
        if (g->exec)
            drv.cuGraphExecDestroy(g->exec);
        if (g->graph)
            drv.cuGraphDestroy(g->graph);
        if (g->stream && !g->stream_given)
            drv.cuStreamDestroy(g->stream);
    }
    g->exec = NULL;
    g->graph = NULL;
    if (!g->stream_given)
        g->stream = NULL;
}

static void release_children(const eagle_gpu_graph *g);

/* stages_each's visit: destroy an adopted child graph, in sub-graphs too. */
static int release_child(void *p, void *ctx)
{
    (void)ctx;
    const gitem *it = p;
    if (it->kind == GI_CHILD && it->u.child.owned)
        drv.cuGraphDestroy((eg_CUgraph)(uintptr_t)it->u.child.graph);
    if (it->kind == GI_IF || it->kind == GI_SWITCH || it->kind == GI_LOOP) {
        for (int32_t i = 0; i < it->u.cond.narms; ++i)
            if (it->u.cond.arms[i])
                release_children(it->u.cond.arms[i]);
        if (it->u.cond.dflt)
            release_children(it->u.cond.dflt);
    }
    return 0;
}

/* An adopted child exists only once the driver made it, so drv is loaded. */
static void release_children(const eagle_gpu_graph *g)
{
    stages_each(&g->st, sizeof(gitem), release_child, NULL);
}

/* Here rather than in gpu_graph.c, which never talks to the driver: only a
 * top graph holds CUDA objects (a sub-graph is never instantiated). */
EAGLE_API void eagle_gpu_graph_free(eagle_gpu_graph *g)
{
    if (g && g->owner) {
        eagle_fail(EAGLE_ERR_STATE, "eagle_gpu_graph_free: a sub-graph is freed with its graph");
        return;
    }
    if (g) {
        release_cuda(g);
        release_children(g);
    }
    gpu_graph_free(g);
}

static int prepare(build *b, const eagle_gpu_graph *g, int device, int32_t flags)
{
    int rc = cuda_enter(device, b->api, &b->dev);
    if (rc || !uses_conditionals(g))
        return rc;
    if (drv.version < CONDITIONAL_DRIVER)
        return eagle_fail(EAGLE_ERR_DRIVER_TOO_OLD,
                          "%s: the graph has conditional nodes, which "
                          "need a CUDA 12.3 driver or newer; this driver is CUDA %d.%d: update the "
                          "NVIDIA driver",
                          b->api, drv.version / 1000, drv.version % 1000 / 10);
    b->native_if_else = !(flags & EAGLE_GPU_PLAIN_IF) && drv.version >= IF_ELSE_DRIVER;
    b->native_switch = !(flags & EAGLE_GPU_PLAIN_IF) && drv.version >= SWITCH_DRIVER;
    return cuda_condition_kernel(b->dev, b->api, &b->set_condition);
}

/* Build g->graph, instantiate it, and make the stream; all or nothing. */
static int instantiate(const build *b, eagle_gpu_graph *g)
{
    deps cur = {0};
    /* A blocking stream: it waits for the legacy default stream, where CuPy and torch put their
     * work unless told otherwise, so a replay sees the arrays they just wrote (and they see its). */
    int rc = g->stream_given
        ? EAGLE_OK
        : cu_check(drv.cuStreamCreate(&g->stream, 0), b->api, "cuStreamCreate");
    if (!rc)
        rc = cu_check(drv.cuGraphCreate(&g->graph, 0), b->api, "cuGraphCreate");
    if (!rc)
        rc = build_graph(b, g, g->graph, &cur);
    free(cur.v);
    if (!rc)
        g->stats[EAGLE_GPU_STAT_CAPTURES]++;
    if (!rc)
        rc = cu_check(drv.cuGraphInstantiateWithFlags(&g->exec, g->graph, 0), b->api,
                      "cuGraphInstantiateWithFlags");
    /* The first launch's upload cost, paid here rather than in a replay. */
    if (!rc)
        rc = cu_check(drv.cuGraphUpload(g->exec, g->stream), b->api, "cuGraphUpload");
    if (rc)
        release_cuda(g);
    else
        g->stats[EAGLE_GPU_STAT_GRAPH_BUILDS]++;
    return rc;
}

EAGLE_API int eagle_gpu_instantiate(eagle_gpu_graph *g, int device, int32_t flags)
{
    build b = {.api = "eagle_gpu_instantiate"};
    if (!g)
        return eagle_fail(EAGLE_ERR_ARG, "%s: graph is NULL", b.api);
    if (g->owner)
        return eagle_fail(EAGLE_ERR_STATE, "%s: a sub-graph is instantiated with its top graph",
                          b.api);
    if (g->exec)
        return eagle_fail(EAGLE_ERR_STATE, "%s: the graph is instantiated already", b.api);
    if (flags & ~EAGLE_GPU_PLAIN_IF)
        return eagle_fail(EAGLE_ERR_ARG, "%s: unknown flags 0x%x", b.api, (unsigned)flags);
    int rc = prepare(&b, g, device, flags);
    if (rc)
        return rc;
    g->device = device;
    return instantiate(&b, g);
}

/* g's top graph, instantiated, with its context current. */
static int enter_exec(const eagle_gpu_graph *g, const char *api, eagle_gpu_graph **top,
                      cuda_device **d)
{
    if (!g)
        return eagle_fail(EAGLE_ERR_ARG, "%s: graph is NULL", api);
    *top = gpu_top(g);
    if (!(*top)->exec)
        return eagle_fail(EAGLE_ERR_STATE,
                          "%s: the graph is not instantiated (eagle_gpu_instantiate)", api);
    return cuda_enter((*top)->device, api, d);
}

static int enqueue(eagle_gpu_graph *g, int64_t replays, const char *api)
{
    eagle_gpu_graph *top = NULL;
    cuda_device *d;
    int rc = enter_exec(g, api, &top, &d);
    if (rc)
        return rc;
    if (replays < 0)
        return eagle_fail(EAGLE_ERR_ARG, "%s: replays must be >= 0, got %lld", api,
                          (long long)replays);
    for (int64_t i = 0; i < replays; ++i) {
        rc = cu_check(drv.cuGraphLaunch(top->exec, top->stream), api, "cuGraphLaunch");
        if (rc)
            return rc;
        top->stats[EAGLE_GPU_STAT_REPLAYS]++;
    }
    return EAGLE_OK;
}

static int synchronize(eagle_gpu_graph *g, const char *api)
{
    eagle_gpu_graph *top = NULL;
    cuda_device *d;
    int rc = enter_exec(g, api, &top, &d);
    if (rc)
        return rc;
    rc = cu_check(drv.cuStreamSynchronize(top->stream), api, "cuStreamSynchronize");
    int status = atomic_exchange(&top->callback_status, 0);
    if (!rc && status)
        rc = eagle_fail(EAGLE_ERR_CALLBACK,
                        "%s: a host node's callback returned %d during a "
                        "replay (the replays ran to their end)",
                        api, status);
    return rc;
}

EAGLE_API int eagle_gpu_stream(const eagle_gpu_graph *g, uint64_t *stream)
{
    const char *api = "eagle_gpu_stream";
    if (!stream)
        return eagle_fail(EAGLE_ERR_ARG, "%s: stream is NULL", api);
    eagle_gpu_graph *top = NULL;
    cuda_device *d;
    int rc = enter_exec(g, api, &top, &d);
    *stream = rc ? 0 : (uint64_t)(uintptr_t)top->stream;
    return rc;
}

EAGLE_API int eagle_gpu_enqueue(eagle_gpu_graph *g, int64_t replays)
{
    return enqueue(g, replays, "eagle_gpu_enqueue");
}

EAGLE_API int eagle_gpu_synchronize(eagle_gpu_graph *g)
{
    return synchronize(g, "eagle_gpu_synchronize");
}

EAGLE_API int eagle_gpu_launch(eagle_gpu_graph *g, int64_t replays)
{
    int rc = enqueue(g, replays, "eagle_gpu_launch");
    return rc ? rc : synchronize(g, "eagle_gpu_launch");
}

/* ------------------------------------------------------------- patching */

/* Item `node` of g, of `kind`, whose top graph is instantiated and current. */
static int exec_item(const eagle_gpu_graph *g, int32_t node, gitem_kind kind, const char *api,
                     eagle_gpu_graph **top, cuda_device **d, gitem **out)
{
    int rc = enter_exec(g, api, top, d);
    if (rc)
        return rc;
    if (node < 0 || node >= g->nnodes)
        return eagle_fail(EAGLE_ERR_ARG, "%s: no node %d in this graph (it has %d)", api, node,
                          g->nnodes);
    *out = gpu_item(g, node);
    if ((*out)->kind != kind)
        return eagle_fail(EAGLE_ERR_ARG, "%s: node %d is not a %s node", api, node,
                          kind == GI_KERNEL ? "kernel" : "copy");
    return EAGLE_OK;
}

/* Set the exec's copy of it's node to k; the caller keeps k on success. */
static int patch(const eagle_gpu_graph *top, const gitem *it, const kernel_desc *k, const char *api)
{
    void **slots = malloc((size_t)(k->nargs ? k->nargs : 1) * sizeof *slots);
    if (!slots)
        return eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
    eg_CUDA_KERNEL_NODE_PARAMS p = kernel_params(k, slots);
    int rc = cu_check(drv.cuGraphExecKernelNodeSetParams(top->exec, it->node, &p), api,
                      "cuGraphExecKernelNodeSetParams");
    free(slots);
    return rc;
}

EAGLE_API int eagle_gpu_set_kernel_args(eagle_gpu_graph *g, int32_t node, const eagle_arg *args,
                                        int32_t nargs)
{
    const char *api = "eagle_gpu_set_kernel_args";
    eagle_gpu_graph *top = NULL;
    cuda_device *d;
    gitem *it = NULL;
    int rc = exec_item(g, node, GI_KERNEL, api, &top, &d, &it);
    if (rc)
        return rc;
    kernel_desc k = it->u.kernel;
    if (nargs != k.nargs || (nargs && !args))
        return eagle_fail(EAGLE_ERR_ARG, "%s: node %d takes %d arguments, got %d", api, node,
                          k.nargs, nargs);
    eagle_arg *copy = malloc((size_t)(nargs ? nargs : 1) * sizeof *copy);
    if (!copy)
        return eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
    if (nargs)
        memcpy(copy, args, (size_t)nargs * sizeof *copy);
    k.args = copy;
    rc = patch(top, it, &k, api);
    free(rc ? copy : it->u.kernel.args);
    if (!rc)
        it->u.kernel.args = copy;
    return rc;
}

EAGLE_API int eagle_gpu_set_grid(eagle_gpu_graph *g, int32_t node, const uint32_t *grid)
{
    const char *api = "eagle_gpu_set_grid";
    eagle_gpu_graph *top = NULL;
    cuda_device *d;
    gitem *it = NULL;
    int rc = exec_item(g, node, GI_KERNEL, api, &top, &d, &it);
    if (!rc)
        rc = gpu_check_dims(grid, "grid", api);
    if (rc)
        return rc;
    kernel_desc k = it->u.kernel;
    memcpy(k.grid, grid, sizeof k.grid);
    if (!(rc = patch(top, it, &k, api)))
        memcpy(it->u.kernel.grid, grid, sizeof k.grid);
    return rc;
}

EAGLE_API int eagle_gpu_set_copy(eagle_gpu_graph *g, int32_t node, uint64_t dst, uint64_t src)
{
    const char *api = "eagle_gpu_set_copy";
    eagle_gpu_graph *top = NULL;
    cuda_device *d;
    gitem *it = NULL;
    eg_CUDA_MEMCPY3D p;
    int rc = exec_item(g, node, GI_COPY, api, &top, &d, &it);
    if (!rc)
        rc = copy_params(api, dst, src, it->u.copy.bytes, &p);
    if (!rc)
        rc = cu_check(drv.cuGraphExecMemcpyNodeSetParams(top->exec, it->node, &p, d->ctx), api,
                      "cuGraphExecMemcpyNodeSetParams");
    if (!rc) {
        it->u.copy.dst = dst;
        it->u.copy.src = src;
    }
    return rc;
}

/* stages_each's context for eagle_gpu_set_logical_size. */
typedef struct resize {
    const eagle_gpu_graph *top; /* patched when instantiated */
    int64_t n;
    const char *api;
} resize;

static int resize_graph(const eagle_gpu_graph *g, const resize *r);

/* stages_each's visit: a samples kernel's new end and grid, patched into the
 * instantiated graph first, so that a refused patch leaves the item as it was. */
static int resize_item(void *p, void *ctx)
{
    gitem *it = p;
    const resize *r = ctx;
    if (it->kind == GI_IF || it->kind == GI_SWITCH || it->kind == GI_LOOP) {
        int rc = EAGLE_OK;
        for (int32_t i = 0; !rc && i < it->u.cond.narms; ++i)
            rc = it->u.cond.arms[i] ? resize_graph(it->u.cond.arms[i], r) : EAGLE_OK;
        return rc || !it->u.cond.dflt ? rc : resize_graph(it->u.cond.dflt, r);
    }
    if (it->kind != GI_KERNEL || !it->u.kernel.sized)
        return EAGLE_OK;
    kernel_desc *k = &it->u.kernel;
    int64_t end = k->samples < r->n ? k->samples : r->n;
    eagle_arg last = k->args[k->nargs - 1];
    uint32_t grid[3];
    memcpy(grid, k->grid, sizeof grid);
    k->args[k->nargs - 1].i64 = end;
    gpu_samples_grid(end, k->grid);
    int rc = r->top->exec ? patch(r->top, it, k, r->api) : EAGLE_OK;
    if (rc) {
        k->args[k->nargs - 1] = last;
        memcpy(k->grid, grid, sizeof grid);
    }
    return rc;
}

static int resize_graph(const eagle_gpu_graph *g, const resize *r)
{
    return stages_each(&g->st, sizeof(gitem), resize_item, (void *)r);
}

EAGLE_API int eagle_gpu_set_logical_size(eagle_gpu_graph *g, int64_t n)
{
    const char *api = "eagle_gpu_set_logical_size";
    if (!g || n < 0)
        return eagle_fail(EAGLE_ERR_ARG, "%s: graph is NULL or n < 0", api);
    resize r = {gpu_top(g), n, api};
    cuda_device *d;
    int rc = r.top->exec ? cuda_enter(r.top->device, api, &d) : EAGLE_OK;
    return rc ? rc : resize_graph(g, &r);
}
