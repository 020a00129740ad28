/*
 * Collectives: a program's reductions made global over the ranks of a
 * sharded batch, through the function pointers a plugin hands in
 * (eagle_collective; libeagle never links MPI).
 *
 * Rank r holds a contiguous run of whole blocks (the last rank may end
 * inside one; every rank holds some), in rank order, so the concatenation of the
 * ranks' block partials is the one-process list of block partials:
 *   - a float reduction gathers every rank's partials and runs the fixed
 *     tree over all of them: the bits of one process, on every rank;
 *   - an integer reduction (sums wrap, max/min/all/any) is exact in any
 *     order, so the ranks' results are combined by one allreduce of a
 *     single value.  Loop guards and counts are integers, so every rank
 *     takes the same branch on every turn.
 */
#include <stdlib.h>
#include <string.h>

#include "program.h"

typedef struct reduce_list {
    reduce_item **items;
    int64_t n, cap;
} reduce_list;

static int is_float(int32_t dtype) { return dtype == EAGLE_F64 || dtype == EAGLE_F32; }

static int push(reduce_list *l, reduce_item *r)
{
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 8;
        reduce_item **grown = realloc(l->items, (size_t)cap * sizeof *grown);
        if (!grown)
            return eagle_fail(EAGLE_ERR_NOMEM, "eagle_program_set_collective: out of memory");
        l->items = grown, l->cap = cap;
    }
    l->items[l->n++] = r;
    return EAGLE_OK;
}

static int collect(eagle_program *p, reduce_list *l, int forked);

/* The reduce items of `it` in program order; `forked`: it sits in a
 * branch_tasks stage of several branches, whose order differs per rank. */
static int collect_item(item *it, reduce_list *l, int forked)
{
    int rc = EAGLE_OK;
    switch (it->kind) {
    case ITEM_REDUCE:
        if (forked)
            return eagle_fail(EAGLE_ERR_ARG,
                              "eagle_program_set_collective: a reduce item in a "
                              "branch_tasks stage: ranks would run it out of order");
        return push(l, &it->u.reduce);
    case ITEM_IF:
    case ITEM_SWITCH:
        for (int32_t a = 0; a < it->u.sw.narms && !rc; ++a)
            if (it->u.sw.arms[a])
                rc = collect(it->u.sw.arms[a], l, forked);
        return rc || !it->u.sw.dflt ? rc : collect(it->u.sw.dflt, l, forked);
    case ITEM_LOOP:
        return collect(it->u.loop.body, l, forked);
    default:
        return EAGLE_OK;
    }
}

static int collect(eagle_program *p, reduce_list *l, int forked)
{
    for (int32_t s = 0; s < p->st.n; ++s) {
        const stage *st = &p->st.v[s];
        int tasks = forked || (st->schedule == EAGLE_BRANCH_TASKS && st->n > 1);
        for (int32_t b = 0; b < st->n; ++b)
            for (int32_t i = 0; i < st->branches[b].n; ++i) {
                int rc = collect_item(BRANCH_ITEM(item, &st->branches[b], i), l, tasks);
                if (rc)
                    return rc;
            }
    }
    return EAGLE_OK;
}

/* Every rank's value of `mine` (k int64 each), rank after rank, into out. */
static int gather_i64(const eagle_collective *c, const int64_t *mine, int64_t k, int64_t *out)
{
    int64_t *counts = malloc((size_t)c->size * sizeof *counts);
    if (!counts)
        return eagle_fail(EAGLE_ERR_NOMEM, "eagle_program_set_collective: out of memory");
    for (int32_t r = 0; r < c->size; ++r)
        counts[r] = k;
    int failed = c->allgather(c->ctx, mine, out, counts, EAGLE_I64);
    free(counts);
    return failed
        ? eagle_fail(EAGLE_ERR_COLLECTIVE, "eagle_program_set_collective: the allgather failed")
        : EAGLE_OK;
}

/* Give reduce item j its ranks' block counts; ns holds every rank's k sizes. */
static int place_item(const eagle_collective *c, reduce_item *r, const int64_t *ns, int64_t k,
                      int64_t j)
{
    r->rank_blocks = calloc((size_t)c->size, sizeof *r->rank_blocks);
    if (!r->rank_blocks)
        return eagle_fail(EAGLE_ERR_NOMEM, "eagle_program_set_collective: out of memory");
    for (int32_t q = 0; q < c->size; ++q)
        r->global_n += ns[q * k + j];
    int32_t ragged = -1; /* a rank whose samples end inside a block */
    for (int32_t q = 0; q < c->size && r->global_n; ++q) {
        int64_t n = ns[q * k + j];
        /* A kernel writes its cells (loop guards) per sample: a rank with no
         * samples would keep stale ones and leave the others' loops. */
        if (n == 0)
            return eagle_fail(
                EAGLE_ERR_COLLECTIVE,
                "eagle_program_set_collective: reduction %lld: rank %d holds no samples; "
                "every rank needs at least one: run on at most as many ranks as there are "
                "blocks of %d samples",
                (long long)j, q, EAGLE_BLOCK);
        if (ragged >= 0)
            return eagle_fail(
                EAGLE_ERR_COLLECTIVE,
                "eagle_program_set_collective: reduction %lld: rank %d holds %lld samples, "
                "not whole blocks of %d, yet rank %d after it holds samples: cut the batch "
                "with eagle.shard",
                (long long)j, ragged, (long long)ns[ragged * k + j], EAGLE_BLOCK, q);
        if (n % EAGLE_BLOCK)
            ragged = q;
        r->rank_blocks[q] = (n + EAGLE_BLOCK - 1) / EAGLE_BLOCK;
        r->global_blocks += r->rank_blocks[q];
    }
    if (is_float(r->dtype) && r->global_blocks) {
        r->gathered = malloc((size_t)(r->global_blocks * reduce_itemsize(r->dtype)));
        if (!r->gathered)
            return eagle_fail(EAGLE_ERR_NOMEM, "eagle_program_set_collective: out of memory");
    }
    return EAGLE_OK;
}

static int exchange(const eagle_collective *c, reduce_list *l)
{
    int64_t k = l->n;
    int64_t *all = malloc((size_t)c->size * sizeof *all);
    int64_t *mine = malloc((size_t)(k ? k : 1) * sizeof *mine);
    int64_t *ns = malloc((size_t)(c->size * (k ? k : 1)) * sizeof *ns);
    int rc = all && mine && ns
        ? gather_i64(c, &k, 1, all)
        : eagle_fail(EAGLE_ERR_NOMEM, "eagle_program_set_collective: out of memory");
    for (int32_t q = 0; q < c->size && !rc; ++q)
        if (all[q] != k)
            rc = eagle_fail(
                EAGLE_ERR_COLLECTIVE,
                "eagle_program_set_collective: rank %d's program has %lld reductions, rank %d's "
                "has %lld: every rank must run the same program",
                c->rank, (long long)k, q, (long long)all[q]);
    for (int64_t j = 0; j < k && !rc; ++j)
        mine[j] = l->items[j]->n;
    if (!rc && k)
        rc = gather_i64(c, mine, k, ns);
    for (int64_t j = 0; j < k && !rc; ++j)
        rc = place_item(c, l->items[j], ns, k, j);
    free(all), free(mine), free(ns);
    return rc;
}

EAGLE_API int eagle_program_set_collective(eagle_program *p, const eagle_collective *c)
{
    if (!p || !c || !c->allreduce || !c->allgather || c->size < 1 || c->rank < 0
        || c->rank >= c->size)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_program_set_collective: bad arguments");
    if (!p->finalized || p->owner || p->coll.size)
        return eagle_fail(EAGLE_ERR_STATE,
                          "eagle_program_set_collective: once, on a finalized "
                          "top-level program");
    if (p->logical != INT64_MAX)
        return eagle_fail(EAGLE_ERR_STATE,
                          "eagle_program_set_collective: the program has a logical "
                          "size: each rank's sample count is fixed by its shard");
    reduce_list l = {0};
    int rc = collect(p, &l, 0);
    if (!rc)
        rc = exchange(c, &l);
    for (int64_t j = 0; j < l.n && rc; ++j)
        collective_free(l.items[j]);
    free(l.items);
    if (!rc)
        p->coll = *c;
    return rc;
}

void collective_free(reduce_item *r)
{
    free(r->rank_blocks);
    free(r->gathered);
    r->rank_blocks = NULL, r->gathered = NULL;
    r->global_blocks = r->global_n = 0;
}

/* What a rank with no samples contributes is the operation's identity (reduce_identity). */

int collective_finish(const eagle_collective *c, const reduce_item *r, int64_t nblocks)
{
    if (is_float(r->dtype)) {
        if (c->allgather(c->ctx, r->partials, r->gathered, r->rank_blocks, r->dtype))
            return EAGLE_ERR_COLLECTIVE;
        reduce_finish(r->gathered, r->global_blocks, r->dtype, r->op, r->out);
        return EAGLE_OK;
    }
    _Alignas(8) unsigned char value[8];
    if (nblocks)
        reduce_finish(r->partials, nblocks, r->dtype, r->op, value);
    else
        reduce_identity(value, r->dtype, r->op);
    /* all/any results are 0 or 1, so they combine as min/max; a signed sum
     * wraps only in the unsigned type of its width. */
    int32_t op = r->op == EAGLE_ALL ? EAGLE_MIN : r->op == EAGLE_ANY ? EAGLE_MAX : r->op;
    int32_t dtype = op != EAGLE_SUM ? r->dtype
        : r->dtype == EAGLE_I64     ? EAGLE_U64
        : r->dtype == EAGLE_I32     ? EAGLE_U32
                                    : r->dtype;
    if (c->allreduce(c->ctx, value, dtype, op))
        return EAGLE_ERR_COLLECTIVE;
    memcpy(r->out, value, (size_t)reduce_itemsize(r->dtype));
    return EAGLE_OK;
}
