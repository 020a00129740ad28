/*
 * Building programs: stages, branches and items, ownership of sub-programs,
 * and finalize, which checks the program and works out its block-fused runs.
 */
#include <stdlib.h>
#include <string.h>

#include "program.h"

/* A fused run never grows past this many items: finalize compares each new
 * item's accesses with the whole run, so this bounds that work per item. */
#define MAX_RUN 256
/* Work cap of the overlap test when deciding fusion; a cap hit only splits a run. */
#define FUSE_MAX_WORK 4096

EAGLE_API eagle_program *eagle_program_new(void)
{
    eagle_program *p = calloc(1, sizeof *p);
    if (!p) {
        eagle_fail(EAGLE_ERR_NOMEM, "eagle_program_new: out of memory");
        return NULL;
    }
    p->logical = INT64_MAX;
    return p;
}

static void free_item(void *p)
{
    item *it = p;
    switch (it->kind) {
    case ITEM_KERNEL:
        free(it->u.kernel.args);
        free(it->u.kernel.accesses);
        break;
    case ITEM_REDUCE:
        if (!it->u.reduce.given)
            free(it->u.reduce.partials);
        collective_free(&it->u.reduce);
        break;
    case ITEM_COPY:
        free(it->u.copy.src);
        free(it->u.copy.dst);
        break;
    case ITEM_IF:
    case ITEM_SWITCH:
        for (int32_t i = 0; i < it->u.sw.narms; ++i)
            eagle_program_free(it->u.sw.arms[i]);
        eagle_program_free(it->u.sw.dflt);
        free(it->u.sw.arms);
        free(it->u.sw.values);
        break;
    case ITEM_LOOP:
        eagle_program_free(it->u.loop.body);
        break;
    default:
        break;
    }
}

EAGLE_API void eagle_program_free(eagle_program *p)
{
    if (!p)
        return;
    stages_free(&p->st, sizeof(item), free_item);
    free((void *)p->events);
    free(p);
}

static int check_open(eagle_program *p, const char *api)
{
    if (!p)
        return eagle_fail(EAGLE_ERR_ARG, "%s: program is NULL", api);
    if (p->finalized)
        return eagle_fail(EAGLE_ERR_STATE, "%s: the program is finalized", api);
    return EAGLE_OK;
}

EAGLE_API int eagle_stage(eagle_program *p, int schedule)
{
    int rc = check_open(p, "eagle_stage");
    if (rc)
        return rc;
    if (schedule != EAGLE_WORK_SHARE && schedule != EAGLE_BRANCH_TASKS)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_stage: unknown schedule %d", schedule);
    if (stages_open(&p->st, schedule))
        return eagle_fail(EAGLE_ERR_NOMEM, "eagle_stage: out of memory");
    return EAGLE_OK;
}

EAGLE_API int eagle_branch(eagle_program *p)
{
    int rc = check_open(p, "eagle_branch");
    if (rc)
        return rc;
    if (p->st.n == 0)
        return eagle_fail(EAGLE_ERR_STATE, "eagle_branch: open a stage first");
    if (stages_branch(&p->st))
        return eagle_fail(EAGLE_ERR_NOMEM, "eagle_branch: out of memory");
    return EAGLE_OK;
}

/* A zeroed item appended to the current branch (a stage is opened if none
 * is); NULL only when out of memory.  Callers check_open first. */
static item *append(eagle_program *p, item_kind kind, const char *api)
{
    if (p->st.n == 0 && eagle_stage(p, EAGLE_WORK_SHARE))
        return NULL;
    item *it = stages_append(&p->st, sizeof *it);
    if (!it) {
        eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
        return NULL;
    }
    it->kind = kind;
    return it;
}

EAGLE_API int eagle_add_kernel(eagle_program *p, eagle_kernel_fn fn, const eagle_arg *args,
                               int32_t nargs, int64_t n, int32_t flags,
                               const eagle_access *accesses, int32_t naccesses)
{
    int rc = check_open(p, "eagle_add_kernel");
    if (rc)
        return rc;
    if (!fn || n < 0 || nargs < 0 || naccesses < 0 || (nargs && !args) || (naccesses && !accesses))
        return eagle_fail(EAGLE_ERR_ARG, "eagle_add_kernel: bad arguments");
    for (int32_t a = 0; a < naccesses; ++a)
        if (eagle_view_problem(&accesses[a].view) || accesses[a].role < EAGLE_READ
            || accesses[a].role > EAGLE_READWRITE)
            return eagle_fail(EAGLE_ERR_ARG, "eagle_add_kernel: access %d is not a valid view", a);
    eagle_arg *args_copy = malloc((size_t)(nargs ? nargs : 1) * sizeof *args_copy);
    eagle_access *acc_copy = malloc((size_t)(naccesses ? naccesses : 1) * sizeof *acc_copy);
    item *it = (args_copy && acc_copy) ? append(p, ITEM_KERNEL, "eagle_add_kernel") : NULL;
    if (!it) {
        free(args_copy);
        free(acc_copy);
        return eagle_fail(EAGLE_ERR_NOMEM, "eagle_add_kernel: out of memory");
    }
    if (nargs)
        memcpy(args_copy, args, (size_t)nargs * sizeof *args_copy);
    if (naccesses)
        memcpy(acc_copy, accesses, (size_t)naccesses * sizeof *acc_copy);
    it->u.kernel = (kernel_item){fn, args_copy, n, flags, naccesses, acc_copy, 1};
    return EAGLE_OK;
}

typedef struct patch {
    eagle_kernel_fn from, to;
} patch;

static int patch_item(void *p, void *ctx)
{
    item *it = p;
    const patch *pt = ctx;
    if (it->kind == ITEM_KERNEL && it->u.kernel.fn == pt->from)
        it->u.kernel.fn = pt->to;
    return 0;
}

EAGLE_API int eagle_patch_kernel(eagle_program *p, eagle_kernel_fn from, eagle_kernel_fn to)
{
    if (!p || !from || !to)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_patch_kernel: bad arguments");
    patch pt = {from, to};
    return stages_each(&p->st, sizeof(item), patch_item, &pt);
}

EAGLE_API int eagle_add_callback(eagle_program *p, eagle_callback_fn fn, void *ctx)
{
    int rc = check_open(p, "eagle_add_callback");
    if (rc)
        return rc;
    if (!fn)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_add_callback: fn is NULL");
    item *it = append(p, ITEM_CALLBACK, "eagle_add_callback");
    if (!it)
        return EAGLE_ERR_NOMEM;
    it->u.callback.fn = fn;
    it->u.callback.ctx = ctx;
    return EAGLE_OK;
}

EAGLE_API int eagle_add_reduce(eagle_program *p, const void *x, void *out, int64_t n, int32_t dtype,
                               int32_t op)
{
    int rc = check_open(p, "eagle_add_reduce");
    if (rc)
        return rc;
    int size = reduce_itemsize(dtype);
    if (!x || !out || n < 0 || size == 0 || op < EAGLE_SUM || op > EAGLE_ANY)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_add_reduce: bad arguments (n=%lld dtype=%d op=%d)",
                          (long long)n, dtype, op);
    /* An empty x (a rank's empty shard) still gets a slot: malloc(0) may give NULL. */
    int64_t nblocks = n ? (n + EAGLE_BLOCK - 1) / EAGLE_BLOCK : 1;
    void *partials = malloc((size_t)nblocks * (size_t)size);
    if (!partials)
        return eagle_fail(EAGLE_ERR_NOMEM, "eagle_add_reduce: out of memory");
    item *it = append(p, ITEM_REDUCE, "eagle_add_reduce");
    if (!it) {
        free(partials);
        return EAGLE_ERR_NOMEM;
    }
    it->u.reduce = (reduce_item){
        .x = x, .out = out, .n = n, .dtype = dtype, .op = op, .partials = partials};
    return EAGLE_OK;
}

EAGLE_API int eagle_add_reduce_partials(eagle_program *p, void *partials, void *out, int64_t n,
                                        int32_t dtype, int32_t op)
{
    int rc = check_open(p, "eagle_add_reduce_partials");
    if (rc)
        return rc;
    if (!partials || !out || n < 0 || reduce_itemsize(dtype) == 0 || op < EAGLE_SUM
        || op > EAGLE_ANY)
        return eagle_fail(EAGLE_ERR_ARG,
                          "eagle_add_reduce_partials: bad arguments (n=%lld dtype=%d op=%d)",
                          (long long)n, dtype, op);
    item *it = append(p, ITEM_REDUCE, "eagle_add_reduce_partials");
    if (!it)
        return EAGLE_ERR_NOMEM;
    it->u.reduce = (reduce_item){.x = partials,
                                 .out = out,
                                 .n = n,
                                 .dtype = dtype,
                                 .op = op,
                                 .partials = partials,
                                 .given = 1};
    return EAGLE_OK;
}

static int same_shape(const eagle_view *a, const eagle_view *b)
{
    if (a->ndim != b->ndim || a->itemsize != b->itemsize)
        return 0;
    for (int32_t d = 0; d < a->ndim; ++d)
        if (a->shape[d] != b->shape[d])
            return 0;
    return 1;
}

EAGLE_API int eagle_add_copy(eagle_program *p, const eagle_view *src, const eagle_view *dst)
{
    int rc = check_open(p, "eagle_add_copy");
    if (rc)
        return rc;
    if (!src || !dst || eagle_view_problem(src) || eagle_view_problem(dst) || !same_shape(src, dst))
        return eagle_fail(
            EAGLE_ERR_ARG,
            "eagle_add_copy: src and dst must be valid views of one shape and item size");
    eagle_view *s = malloc(sizeof *s), *d = malloc(sizeof *d);
    item *it = (s && d) ? append(p, ITEM_COPY, "eagle_add_copy") : NULL;
    if (!it) {
        free(s);
        free(d);
        return eagle_fail(EAGLE_ERR_NOMEM, "eagle_add_copy: out of memory");
    }
    *s = *src;
    *d = *dst;
    it->u.copy = (copy_item){s, d};
    return EAGLE_OK;
}

/* May `sub` become an item's sub-program of p?  Not if something owns it
 * already, and not if it is p or holds p (a cycle). */
static int adoptable(eagle_program *p, eagle_program *sub, const char *api)
{
    if (!sub)
        return EAGLE_OK;
    if (sub->owner)
        return eagle_fail(EAGLE_ERR_STATE, "%s: the sub-program already belongs to another program",
                          api);
    for (eagle_program *q = p; q; q = q->owner)
        if (q == sub)
            return eagle_fail(EAGLE_ERR_STATE, "%s: a program cannot hold itself", api);
    return EAGLE_OK;
}

static int add_switch(eagle_program *p, const uint32_t *cell, int32_t narms, const uint32_t *values,
                      eagle_program **arms, eagle_program *dflt, int is_if, const char *api)
{
    int rc = check_open(p, api);
    if (rc)
        return rc;
    if (!cell || narms < 0 || (narms && (!arms || (!values && !is_if))))
        return eagle_fail(EAGLE_ERR_ARG, "%s: bad arguments", api);
    for (int32_t i = 0; i < narms; ++i) {
        rc = adoptable(p, arms[i], api);
        if (rc)
            return rc;
        for (int32_t j = 0; j < i; ++j)
            if (arms[i] && arms[i] == arms[j])
                return eagle_fail(EAGLE_ERR_STATE, "%s: one sub-program used for two arms", api);
    }
    if ((rc = adoptable(p, dflt, api)))
        return rc;
    for (int32_t i = 0; i < narms; ++i)
        if (dflt && arms[i] == dflt)
            return eagle_fail(EAGLE_ERR_STATE, "%s: one sub-program used for two arms", api);
    uint32_t *vals = calloc((size_t)(narms ? narms : 1), sizeof *vals);
    eagle_program **arms_copy = calloc((size_t)(narms ? narms : 1), sizeof *arms_copy);
    item *it = (vals && arms_copy) ? append(p, is_if ? ITEM_IF : ITEM_SWITCH, api) : NULL;
    if (!it) {
        free(vals);
        free(arms_copy);
        return eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
    }
    for (int32_t i = 0; i < narms; ++i) {
        vals[i] = values ? values[i] : 1;
        arms_copy[i] = arms[i];
        if (arms[i])
            arms[i]->owner = p;
    }
    if (dflt)
        dflt->owner = p;
    it->u.sw = (switch_item){cell, narms, is_if, vals, arms_copy, dflt};
    return EAGLE_OK;
}

EAGLE_API int eagle_add_if(eagle_program *p, const uint32_t *cell, eagle_program *then_,
                           eagle_program *else_)
{
    return add_switch(p, cell, 1, NULL, &then_, else_, 1, "eagle_add_if");
}

EAGLE_API int eagle_add_switch(eagle_program *p, const uint32_t *cell, int32_t narms,
                               const uint32_t *values, eagle_program **arms,
                               eagle_program *default_)
{
    return add_switch(p, cell, narms, values, arms, default_, 0, "eagle_add_switch");
}

EAGLE_API int eagle_add_loop(eagle_program *p, const uint32_t *cell, int32_t kind,
                             int64_t max_iters, eagle_program *body)
{
    int rc = check_open(p, "eagle_add_loop");
    if (rc)
        return rc;
    if (!cell || !body || kind < EAGLE_LOOP_WHILE || kind > EAGLE_LOOP_COUNT)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_add_loop: bad arguments");
    if ((rc = adoptable(p, body, "eagle_add_loop")))
        return rc;
    item *it = append(p, ITEM_LOOP, "eagle_add_loop");
    if (!it)
        return eagle_fail(EAGLE_ERR_NOMEM, "eagle_add_loop: out of memory");
    body->owner = p;
    it->u.loop = (loop_item){cell, kind, max_iters, body};
    return EAGLE_OK;
}

static int add_event(eagle_program *p, item_kind kind, int32_t event, const char *api)
{
    int rc = check_open(p, api);
    if (rc)
        return rc;
    if (event < 0)
        return eagle_fail(EAGLE_ERR_ARG, "%s: event must be >= 0", api);
    item *it = append(p, kind, api);
    if (!it)
        return eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
    it->u.event = event;
    if (event >= p->nevents)
        p->nevents = event + 1;
    return EAGLE_OK;
}

EAGLE_API int eagle_add_signal(eagle_program *p, int32_t event)
{
    return add_event(p, ITEM_SIGNAL, event, "eagle_add_signal");
}

EAGLE_API int eagle_add_wait(eagle_program *p, int32_t event)
{
    return add_event(p, ITEM_WAIT, event, "eagle_add_wait");
}

/* ------------------------------------------------------------ finalize */

static int identical(const eagle_view *a, const eagle_view *b)
{
    if (a->data != b->data || a->device != b->device || !same_shape(a, b))
        return 0;
    for (int32_t d = 0; d < a->ndim; ++d)
        if (a->shape[d] > 1 && a->strides[d] != b->strides[d])
            return 0;
    return 1;
}

/* May kernel item k join a fused run with item r?  Only if every plane
 * they share is the very same view: then sample i of k touches only the
 * bytes sample i of r touched, and a block may go through both. */
static int fusable(const kernel_item *r, const kernel_item *k)
{
    for (int32_t i = 0; i < k->naccesses; ++i)
        for (int32_t j = 0; j < r->naccesses; ++j) {
            const eagle_access *a = &k->accesses[i], *b = &r->accesses[j];
            if (!((a->role | b->role) & EAGLE_WRITE))
                continue;
            if (identical(&a->view, &b->view))
                continue;
            if (eagle_overlap(&a->view, &b->view, FUSE_MAX_WORK) != EAGLE_OVERLAP_NO)
                return 0;
        }
    return 1;
}

static void find_runs(branch *br)
{
    item *items = br->items;
    for (int32_t i = 0; i < br->n;) {
        if (items[i].kind != ITEM_KERNEL) {
            ++i;
            continue;
        }
        kernel_item *head = &items[i].u.kernel;
        int32_t len = 1;
        if (head->flags & EAGLE_PER_SAMPLE) {
            while (i + len < br->n && len < MAX_RUN) {
                item *next = &items[i + len];
                if (next->kind != ITEM_KERNEL || !(next->u.kernel.flags & EAGLE_PER_SAMPLE)
                    || next->u.kernel.n != head->n)
                    break;
                int ok = 1;
                for (int32_t j = 0; j < len && ok; ++j)
                    ok = fusable(&items[i + j].u.kernel, &next->u.kernel);
                if (!ok)
                    break;
                next->u.kernel.run = 0;
                ++len;
            }
        }
        head->run = len;
        i += len;
    }
}

/* Every wait must follow a signal of the same event in an earlier branch of
 * its stage, so that branch_tasks (branches claimed in order) cannot deadlock
 * and work_share (branches in order) already satisfies it. */
static int check_events(const stage *st)
{
    for (int32_t b = 0; b < st->n; ++b)
        for (int32_t i = 0; i < st->branches[b].n; ++i) {
            const item *w = BRANCH_ITEM(const item, &st->branches[b], i);
            if (w->kind != ITEM_WAIT)
                continue;
            int found = 0;
            for (int32_t a = 0; a < b && !found; ++a)
                for (int32_t j = 0; j < st->branches[a].n && !found; ++j) {
                    const item *sig = BRANCH_ITEM(const item, &st->branches[a], j);
                    found = sig->kind == ITEM_SIGNAL && sig->u.event == w->u.event;
                }
            if (!found)
                return eagle_fail(EAGLE_ERR_WAIT,
                                  "eagle_program_finalize: a wait on event %d in branch %d has no "
                                  "signal in an earlier branch of its stage",
                                  w->u.event, b);
        }
    return EAGLE_OK;
}

static int finalize_item(void *p, void *ctx)
{
    (void)ctx;
    item *it = p;
    switch (it->kind) {
    case ITEM_IF:
    case ITEM_SWITCH:
        for (int32_t i = 0; i < it->u.sw.narms; ++i)
            if (it->u.sw.arms[i] && !it->u.sw.arms[i]->finalized) {
                int rc = eagle_program_finalize(it->u.sw.arms[i]);
                if (rc)
                    return rc;
            }
        return it->u.sw.dflt && !it->u.sw.dflt->finalized ? eagle_program_finalize(it->u.sw.dflt)
                                                          : EAGLE_OK;
    case ITEM_LOOP:
        return it->u.loop.body->finalized ? EAGLE_OK : eagle_program_finalize(it->u.loop.body);
    default:
        return EAGLE_OK;
    }
}

EAGLE_API int eagle_program_finalize(eagle_program *p)
{
    int rc = check_open(p, "eagle_program_finalize");
    if (rc)
        return rc;
    for (int32_t s = 0; s < p->st.n; ++s)
        if ((rc = check_events(&p->st.v[s])))
            return rc;
    if ((rc = stages_each(&p->st, sizeof(item), finalize_item, NULL)))
        return rc;
    if (p->nevents) {
        p->events = calloc((size_t)p->nevents, sizeof *p->events);
        if (!p->events)
            return eagle_fail(EAGLE_ERR_NOMEM, "eagle_program_finalize: out of memory");
    }
    for (int32_t s = 0; s < p->st.n; ++s)
        for (int32_t b = 0; b < p->st.v[s].n; ++b)
            find_runs(&p->st.v[s].branches[b]);
    p->finalized = 1;
    return EAGLE_OK;
}

EAGLE_API int eagle_program_set_logical_size(eagle_program *p, int64_t n)
{
    if (!p || n < 0)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_program_set_logical_size: n must be >= 0");
    if (p->coll.size)
        return eagle_fail(EAGLE_ERR_STATE,
                          "eagle_program_set_logical_size: the program has collectives: "
                          "each rank's sample count is fixed by its shard");
    p->logical = n;
    return EAGLE_OK;
}

EAGLE_API void eagle_program_stats(const eagle_program *p, int64_t *stats)
{
    stats[0] = p->stats[0];
    stats[1] = p->stats[1];
}
