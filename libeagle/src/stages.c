/* The stage/branch/item skeleton shared by the host program and the GPU graph. */
#include <stdlib.h>
#include <string.h>

#include "stages.h"

int eagle_grow(void *arr, int32_t n, int32_t *cap, size_t elem)
{
    void **p = (void **)arr;
    if (n < *cap)
        return 0;
    int32_t new_cap = *cap ? 2 * *cap : 4;
    void *q = realloc(*p, (size_t)new_cap * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = new_cap;
    return 0;
}

int stages_branch(stages *s)
{
    stage *st = &s->v[s->n - 1];
    if (GROW(st->branches, st->n, st->cap))
        return EAGLE_ERR_NOMEM;
    st->branches[st->n++] = (branch){0};
    return EAGLE_OK;
}

int stages_open(stages *s, int32_t schedule)
{
    if (GROW(s->v, s->n, s->cap))
        return EAGLE_ERR_NOMEM;
    s->v[s->n++] = (stage){.schedule = schedule};
    if (stages_branch(s) == EAGLE_OK)
        return EAGLE_OK;
    --s->n; /* all or nothing: no stage without a branch */
    return EAGLE_ERR_NOMEM;
}

void *stages_append(stages *s, size_t size)
{
    stage *st = &s->v[s->n - 1];
    branch *br = &st->branches[st->n - 1];
    if (eagle_grow(&br->items, br->n, &br->cap, size))
        return NULL;
    void *it = (char *)br->items + (size_t)br->n++ * size;
    memset(it, 0, size);
    return it;
}

int stages_each(const stages *s, size_t size, int (*fn)(void *item, void *ctx), void *ctx)
{
    for (int32_t k = 0; k < s->n; ++k)
        for (int32_t b = 0; b < s->v[k].n; ++b) {
            const branch *br = &s->v[k].branches[b];
            for (int32_t i = 0; i < br->n; ++i) {
                int rc = fn((char *)br->items + (size_t)i * size, ctx);
                if (rc)
                    return rc;
            }
        }
    return 0;
}

void stages_free(stages *s, size_t size, void (*free_item)(void *item))
{
    for (int32_t k = 0; k < s->n; ++k) {
        for (int32_t b = 0; b < s->v[k].n; ++b) {
            branch *br = &s->v[k].branches[b];
            for (int32_t i = 0; i < br->n; ++i)
                free_item((char *)br->items + (size_t)i * size);
            free(br->items);
        }
        free(s->v[k].branches);
    }
    free(s->v);
    *s = (stages){0};
}
