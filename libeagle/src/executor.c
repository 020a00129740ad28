/*
 * The executor: runs a finalized program `replays` times in one call.
 *
 * The calling thread walks the program.  A native item whose samples span
 * more than one block is cut on EAGLE_BLOCK boundaries and handed to the
 * thread team (taken lazily, on the first such item, and held for the rest
 * of the run); threads claim blocks one at a time, so load balances while
 * results stay independent of who ran what.  Two things keep a replay near
 * the cost of its kernels:
 *   - block fusion: a run of per-sample kernels that share only identical
 *     views (worked out at finalize) is executed block by block, each block
 *     carried through the whole run while it is in cache, one barrier at the
 *     end instead of one per kernel;
 *   - work that fits in one block runs on the calling thread: no wake-up,
 *     no barrier.
 * A branch_tasks stage hands whole branches to the team instead; inside a
 * branch everything runs in order on that thread.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "program.h"

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

/* How the items of one walk may run: in place only, and whether they are a
 * branch task of the stage being run (where signal and wait are live). */
enum {
    MODE_TEAM = 0,
    MODE_SERIAL = 1,
    MODE_TASK = 2
};

typedef struct run_ctx {
    eagle_program *root;
    int64_t logical;
    int team;          /* threads held from the team: 0 not asked yet, 1 none */
    atomic_int status; /* the first error; every walk stops when it is set */
    eagle_callback_fn poll;
    void *poll_ctx;
    pthread_t caller; /* the only thread that polls */
    int64_t tick;     /* tick_now() when the poll last ran, or the run began */
} run_ctx;

static int failed(run_ctx *c)
{
    return atomic_load_explicit(&c->status, memory_order_relaxed) != 0;
}

static void fail(run_ctx *c, int status)
{
    int expected = 0;
    atomic_compare_exchange_strong(&c->status, &expected, status);
}

/* failed(c), after turning a pending SIGINT, or a due poll that says stop,
 * into a failure: checked where a run can go on for long (between replays,
 * between loop turns).  A poll is due once per tick (tick.c). */
static int stopped(run_ctx *c)
{
    if (eagle_interrupt_pending())
        fail(c, EAGLE_ERR_INTERRUPTED);
    /* the tick first: it rarely moved, and reading it costs less than asking who we are */
    else if (c->poll && tick_now() != c->tick && pthread_equal(pthread_self(), c->caller)) {
        c->tick = tick_now();
        if (c->poll(c->poll_ctx) != 0)
            fail(c, EAGLE_ERR_INTERRUPTED);
    }
    return failed(c);
}

/* May this walk spread work over the team?  Asks for it once per run. */
static int use_team(run_ctx *c, int mode)
{
    if (mode != MODE_TEAM)
        return 0;
    if (c->team == 0) {
        c->team = team_acquire();
        if (c->team > 1)
            c->root->stats[0]++;
    }
    return c->team > 1;
}

static void parallel(run_ctx *c, team_job_fn fn, void *job)
{
    team_parallel(fn, job);
    c->root->stats[1]++;
}

static int64_t nblocks_of(int64_t n) { return (n + EAGLE_BLOCK - 1) / EAGLE_BLOCK; }

static int64_t block_end(int64_t b, int64_t n)
{
    return (b + 1) * EAGLE_BLOCK < n ? (b + 1) * EAGLE_BLOCK : n;
}

static void run_program(run_ctx *c, eagle_program *p, int mode);

/* ------------------------------------------------------------- kernels */

typedef struct kernel_job {
    const item *items; /* the fused run */
    int32_t len;
    int64_t n, nblocks;
    atomic_llong next;
} kernel_job;

static void kernel_blocks(const item *items, int32_t len, int64_t b, int64_t n)
{
    int64_t begin = b * EAGLE_BLOCK, end = block_end(b, n);
    for (int32_t i = 0; i < len; ++i)
        items[i].u.kernel.fn(begin, end, items[i].u.kernel.args);
}

static void kernel_job_fn(void *ctx)
{
    kernel_job *job = ctx;
    for (int64_t b; (b = atomic_fetch_add(&job->next, 1)) < job->nblocks;)
        kernel_blocks(job->items, job->len, b, job->n);
}

static void run_kernels(run_ctx *c, const item *items, int mode)
{
    int32_t len = items[0].u.kernel.run;
    int64_t n = items[0].u.kernel.n < c->logical ? items[0].u.kernel.n : c->logical;
    int64_t nblocks = nblocks_of(n);
    if (nblocks == 0) {
        for (int32_t i = 0; i < len; ++i)
            if (items[i].u.kernel.flags & EAGLE_EMPTY_CALL)
                items[i].u.kernel.fn(0, 0, items[i].u.kernel.args);
        return;
    }
    if (nblocks > 1 && use_team(c, mode)) {
        kernel_job job = {items, len, n, nblocks, 0};
        parallel(c, kernel_job_fn, &job);
        return;
    }
    for (int64_t b = 0; b < nblocks; ++b)
        kernel_blocks(items, len, b, n);
}

/* ------------------------------------------------------------- reduce */

typedef struct reduce_job {
    const reduce_item *r;
    int64_t n, nblocks;
    atomic_llong next;
} reduce_job;

static void reduce_job_fn(void *ctx)
{
    reduce_job *job = ctx;
    const reduce_item *r = job->r;
    for (int64_t b; (b = atomic_fetch_add(&job->next, 1)) < job->nblocks;)
        reduce_block(r->x, b * EAGLE_BLOCK, block_end(b, job->n), r->dtype, r->op, r->partials, b);
}

static void run_reduce(run_ctx *c, const reduce_item *r, int mode)
{
    int64_t n = r->n < c->logical ? r->n : c->logical;
    const eagle_collective *coll = c->root->coll.size ? &c->root->coll : NULL;
    if ((coll ? r->global_n : n) == 0) {
        /* An empty logical range: the identity, so a guard computed from it is defined */
        reduce_identity(r->out, r->dtype, r->op);
        return;
    }
    reduce_job job = {r, n, nblocks_of(n), 0};
    /* Given partials were left by the kernels before, one per block. */
    if (!r->given && job.nblocks > 1 && use_team(c, mode))
        parallel(c, reduce_job_fn, &job);
    else if (!r->given)
        reduce_job_fn(&job);
    if (!coll)
        reduce_finish(r->partials, job.nblocks, r->dtype, r->op, r->out);
    else if (collective_finish(coll, r, job.nblocks))
        fail(c, EAGLE_ERR_COLLECTIVE);
}

/* --------------------------------------------------------------- copy */

/* Copy element by element along the axes of dst; the innermost axis
 * contiguous on both sides becomes one memmove. */
static void copy_axis(const eagle_view *s, const eagle_view *d, int32_t axis, const char *sp,
                      char *dp)
{
    int64_t len = d->shape[axis];
    if (axis == d->ndim - 1) {
        if (s->strides[axis] == s->itemsize && d->strides[axis] == d->itemsize) {
            memmove(dp, sp, (size_t)(len * d->itemsize));
            return;
        }
        for (int64_t i = 0; i < len; ++i)
            memmove(dp + i * d->strides[axis], sp + i * s->strides[axis], (size_t)d->itemsize);
        return;
    }
    for (int64_t i = 0; i < len; ++i)
        copy_axis(s, d, axis + 1, sp + i * s->strides[axis], dp + i * d->strides[axis]);
}

static void run_copy(const copy_item *cp)
{
    const eagle_view *s = cp->src, *d = cp->dst;
    if (s->data == d->data && !memcmp(s->strides, d->strides, sizeof(int64_t) * (size_t)d->ndim))
        return; /* the same storage at both ends: nothing to do */
    for (int32_t a = 0; a < d->ndim; ++a)
        if (d->shape[a] == 0)
            return;
    if (d->ndim == 0) {
        memmove((char *)d->data, (const char *)s->data, (size_t)d->itemsize);
        return;
    }
    copy_axis(s, d, 0, (const char *)s->data, (char *)d->data);
}

/* ------------------------------------------------- conditionals, loops */

static uint32_t read_cell(const uint32_t *cell)
{
    /* Written by an earlier item, possibly on another thread; the barrier
     * after that item ordered the write before this read. */
    return __atomic_load_n(cell, __ATOMIC_ACQUIRE);
}

static void run_switch(run_ctx *c, const switch_item *sw, int mode)
{
    uint32_t v = read_cell(sw->cell);
    for (int32_t i = 0; i < sw->narms; ++i)
        if (sw->is_if ? v != 0 : v == sw->values[i]) {
            if (sw->arms[i])
                run_program(c, sw->arms[i], mode & MODE_SERIAL);
            return;
        }
    if (sw->dflt)
        run_program(c, sw->dflt, mode & MODE_SERIAL);
}

static void run_loop(run_ctx *c, const loop_item *lp, int mode)
{
    int64_t cap = lp->max_iters < 0 ? INT64_MAX : lp->max_iters;
    int sub = mode & MODE_SERIAL;
    switch (lp->kind) {
    case EAGLE_LOOP_WHILE:
        for (int64_t t = 0; t < cap && !stopped(c) && read_cell(lp->cell); ++t)
            run_program(c, lp->body, sub);
        break;
    case EAGLE_LOOP_DO:
        for (int64_t t = 0; t < cap && !stopped(c); ++t) {
            run_program(c, lp->body, sub);
            if (!read_cell(lp->cell))
                break;
        }
        break;
    default: {
        int64_t trips = read_cell(lp->cell);
        for (int64_t t = 0; t < trips && t < cap && !stopped(c); ++t)
            run_program(c, lp->body, sub);
    }
    }
}

/* -------------------------------------------------------------- events */

static void run_signal(eagle_program *p, int32_t event, int mode)
{
    if (mode & MODE_TASK)
        atomic_store_explicit(&p->events[event], p->generation, memory_order_release);
}

static void run_wait(run_ctx *c, eagle_program *p, int32_t event, int mode)
{
    if (!(mode & MODE_TASK))
        return; /* branches in order: the signalling branch already ran */
    int polls = 0;
    while (atomic_load_explicit(&p->events[event], memory_order_acquire) != p->generation
           && !failed(c))
        if (++polls > 8192)
            sched_yield(); /* the signalling thread may need this core */
        else
            CPU_RELAX();
}

/* ------------------------------------------------------------- walking */

static void run_branch(run_ctx *c, eagle_program *p, const branch *br, int mode)
{
    for (int32_t i = 0; i < br->n && !failed(c);) {
        const item *it = BRANCH_ITEM(const item, br, i);
        switch (it->kind) {
        case ITEM_KERNEL:
            run_kernels(c, it, mode);
            i += it->u.kernel.run;
            continue;
        case ITEM_CALLBACK:
            if (it->u.callback.fn(it->u.callback.ctx) != 0)
                fail(c, EAGLE_ERR_CALLBACK);
            break;
        case ITEM_REDUCE:
            run_reduce(c, &it->u.reduce, mode);
            break;
        case ITEM_COPY:
            run_copy(&it->u.copy);
            break;
        case ITEM_IF:
        case ITEM_SWITCH:
            run_switch(c, &it->u.sw, mode);
            break;
        case ITEM_LOOP:
            run_loop(c, &it->u.loop, mode);
            break;
        case ITEM_SIGNAL:
            run_signal(p, it->u.event, mode);
            break;
        case ITEM_WAIT:
            run_wait(c, p, it->u.event, mode);
            break;
        }
        ++i;
    }
}

typedef struct tasks_job {
    run_ctx *c;
    eagle_program *p;
    const stage *st;
    atomic_int next;
} tasks_job;

/* Branches are claimed in order, so a branch waiting on an earlier one
 * waits on a branch some thread is already running. */
static void tasks_job_fn(void *ctx)
{
    tasks_job *job = ctx;
    for (int b; (b = atomic_fetch_add(&job->next, 1)) < job->st->n;)
        run_branch(job->c, job->p, &job->st->branches[b], MODE_SERIAL | MODE_TASK);
}

static void run_program(run_ctx *c, eagle_program *p, int mode)
{
    for (int32_t s = 0; s < p->st.n && !failed(c); ++s) {
        const stage *st = &p->st.v[s];
        if (st->schedule == EAGLE_BRANCH_TASKS && st->n > 1 && use_team(c, mode)) {
            p->generation++;
            tasks_job job = {c, p, st, 0};
            parallel(c, tasks_job_fn, &job);
            continue;
        }
        for (int32_t b = 0; b < st->n && !failed(c); ++b)
            run_branch(c, p, &st->branches[b], mode);
    }
}

EAGLE_API int eagle_run(eagle_program *p, int64_t replays)
{
    if (!p || replays < 0)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_run: bad arguments");
    if (!p->finalized || p->owner)
        return eagle_fail(EAGLE_ERR_STATE, "eagle_run: run a finalized top-level program");
    if (atomic_exchange(&p->busy, 1))
        return eagle_fail(EAGLE_ERR_BUSY, "eagle_run: the program is running on another thread");
    /* Polled on its thread only: a run elsewhere never takes the GIL to find nothing to do */
    uint64_t self = (uint64_t)pthread_self();
    int polls = p->poll && (!p->poll_thread || p->poll_thread == self);
    run_ctx c = {.root = p,
                 .logical = p->logical,
                 .team = 0,
                 .poll = polls ? p->poll : NULL,
                 .poll_ctx = p->poll_ctx};
    atomic_init(&c.status, 0);
    if (c.poll) {
        int status = tick_begin();
        if (status != EAGLE_OK) {
            atomic_store(&p->busy, 0);
            return status;
        }
        c.caller = pthread_self();
        c.tick = tick_now();
    }
    p->stats[0] = p->stats[1] = 0;
    int mode = team_in_region() ? MODE_SERIAL : MODE_TEAM;
    for (int64_t r = 0; r < replays && !stopped(&c); ++r)
        run_program(&c, p, mode);
    if (c.team > 1)
        team_release();
    if (c.poll)
        tick_end();
    atomic_store(&p->busy, 0);
    int status = atomic_load(&c.status);
    if (status == EAGLE_ERR_COLLECTIVE)
        return eagle_fail(status, "eagle_run: a collective failed");
    if (status == EAGLE_ERR_INTERRUPTED)
        return eagle_fail(status, "eagle_run: interrupted (SIGINT, or the poll)");
    return status ? eagle_fail(status, "eagle_run: a callback item stopped the run") : EAGLE_OK;
}

EAGLE_API int eagle_program_set_launch(eagle_program *p, int32_t *guard, eagle_callback_fn poll,
                                       void *ctx, uint64_t poll_thread)
{
    if (!p)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_program_set_launch: no program");
    p->guard = guard;
    p->poll = poll;
    p->poll_ctx = ctx;
    p->poll_thread = poll_thread;
    return EAGLE_OK;
}

EAGLE_API int eagle_launch(eagle_program *p, int64_t replays)
{
    if (!p)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_launch: no program");
    if (p->guard && !eagle_guard_enter(p->guard))
        return eagle_fail(EAGLE_ERR_BUSY, "eagle_launch: another call holds the program's guard");
    int status = eagle_run(p, replays);
    if (p->guard)
        eagle_guard_leave(p->guard);
    return status;
}
