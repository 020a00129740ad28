/* The skeleton that the host program (program.h) and the GPU graph
 * (gpu_graph.h) are both made of: stages in order, each a fork of branches,
 * each branch a run of items.  The items are the owner's type; the skeleton
 * only knows their size.  Not part of the ABI. */
#ifndef EAGLE_STAGES_H
#define EAGLE_STAGES_H

#include "internal.h"

typedef struct branch {
    void *items; /* n items of the owner's item type */
    int32_t n, cap;
} branch;

/* Branches are in add order: the host program's waits and the GPU graph's
 * node ids rely on it. */
typedef struct stage {
    branch *branches;
    int32_t n, cap;
    int32_t schedule; /* the host program's EAGLE_WORK_SHARE or EAGLE_BRANCH_TASKS */
} stage;

typedef struct stages {
    stage *v;
    int32_t n, cap;
} stages;

/* Item i of br, an array of T. */
#define BRANCH_ITEM(T, br, i) ((T *)(br)->items + (i))

/* Open a stage with one empty branch.  EAGLE_OK, or EAGLE_ERR_NOMEM with s
 * as it was; the caller words the message, as for the two below. */
int stages_open(stages *s, int32_t schedule);

/* Open a branch in the last stage (there must be one). */
int stages_branch(stages *s);

/* A zeroed item of `size` bytes at the end of the last branch (there must be
 * a stage), or NULL when out of memory. */
void *stages_append(stages *s, size_t size);

/* Call fn on every item (items of `size` bytes) in stage, branch and add
 * order; stops at and returns the first non-zero answer, else 0. */
int stages_each(const stages *s, size_t size, int (*fn)(void *item, void *ctx), void *ctx);

/* Call free_item on every item, then free the skeleton's arrays. */
void stages_free(stages *s, size_t size, void (*free_item)(void *item));

#endif /* EAGLE_STAGES_H */
