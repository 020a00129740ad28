/* The in-memory form of a program, shared by program.c (building) and
 * executor.c (running).  Not part of the ABI. */
#ifndef EAGLE_PROGRAM_H
#define EAGLE_PROGRAM_H

#include <stdatomic.h>

#include "stages.h"

/* The closed set of item kinds; executor.c has one run_* helper per kind. */
typedef enum item_kind {
    ITEM_KERNEL,
    ITEM_CALLBACK,
    ITEM_REDUCE,
    ITEM_COPY,
    ITEM_IF,
    ITEM_SWITCH,
    ITEM_LOOP,
    ITEM_SIGNAL,
    ITEM_WAIT,
} item_kind;

typedef struct kernel_item {
    eagle_kernel_fn fn;
    eagle_arg *args;
    int64_t n;
    int32_t flags;
    int32_t naccesses;
    eagle_access *accesses;
    /* Set by finalize: the number of items in the block-fused run that
     * starts here (>= 1), or 0 for an item inside a run. */
    int32_t run;
} kernel_item;

typedef struct reduce_item {
    const void *x;
    void *out;
    int64_t n;
    int32_t dtype, op;
    void *partials; /* one slot per block of n */
    int32_t given;  /* the partials are the caller's, written by the kernels before */
    /* Set by eagle_program_set_collective: the blocks each rank holds, their
     * sum, the samples of all ranks, and room for every rank's partials. */
    int64_t *rank_blocks;
    int64_t global_blocks, global_n;
    void *gathered;
} reduce_item;

typedef struct copy_item {
    eagle_view *src, *dst;
} copy_item;

/* IF is a switch with one arm (value: any non-zero) and an optional default. */
typedef struct switch_item {
    const uint32_t *cell;
    int32_t narms;
    int32_t is_if;
    uint32_t *values;
    eagle_program **arms;
    eagle_program *dflt;
} switch_item;

typedef struct loop_item {
    const uint32_t *cell;
    int32_t kind;
    int64_t max_iters;
    eagle_program *body;
} loop_item;

typedef struct item {
    item_kind kind;
    union {
        kernel_item kernel;
        struct {
            eagle_callback_fn fn;
            void *ctx;
        } callback;
        reduce_item reduce;
        copy_item copy;
        switch_item sw;
        loop_item loop;
        int32_t event;
    } u;
} item;

/* The stages: the schedule of each is EAGLE_WORK_SHARE or EAGLE_BRANCH_TASKS,
 * and a wait names a signal of an earlier branch of its stage (checked at
 * finalize), which branch_tasks relies on. */
struct eagle_program {
    stages st;
    int finalized;
    eagle_program *owner; /* the program whose item holds this one, or NULL */
    atomic_int busy;      /* the non-blocking guard of eagle_run */
    int64_t logical;      /* per-sample items run min(n, logical) samples */
    int64_t stats[2];
    int32_t nevents;
    /* events[e] holds the stage generation in which event e was signalled. */
    _Atomic int64_t *events;
    int64_t generation;
    eagle_collective coll; /* the ranks' collectives; coll.size == 0 when there are none */
    int32_t *guard;        /* eagle_program_set_launch's */
    eagle_callback_fn poll;
    void *poll_ctx;
    uint64_t poll_thread;
};

/* collective.c: a reduce item made global by eagle_program_set_collective.
 * Its local partials are written (n local samples); returns 0 or the status. */
int collective_finish(const eagle_collective *c, const reduce_item *r, int64_t nblocks);
void collective_free(reduce_item *r);

#endif /* EAGLE_PROGRAM_H */
