/*
 * index.c -- the candidate index: which pairs of accesses can conflict.
 *
 * Two accesses order each other only if one of them writes and they share a
 * byte.  Asking eagle_overlap about all n (n - 1) / 2 pairs costs O(n^2) even
 * when almost every pair is far apart, so the accesses are sorted by
 * (device, extent start) and swept once; only pairs whose byte extents
 * intersect are ever looked at, and only those reach the exact test.
 *
 * `base` is not used: it is a hint from the array-interface side, and the
 * extents alone are correct (overlap.c says why it does not trust it).
 */
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"
#include "internal.h"

/* One access in sweep order. */
typedef struct sweep_entry_t {
    uintptr_t lo, hi; /* byte extent [lo, hi), non-empty */
    int64_t index;    /* position in the caller's arrays */
    int32_t device;
    uint8_t writes;
} sweep_entry_t;

/* Sweep order: device, then extent start; the index makes the order total,
 * so the output never depends on qsort's handling of ties. */
static int compare_sweep_entries(const void *xp, const void *yp)
{
    const sweep_entry_t *x = xp, *y = yp;

    if (x->device != y->device) {
        return x->device < y->device ? -1 : 1;
    }
    if (x->lo != y->lo) {
        return x->lo < y->lo ? -1 : 1;
    }
    return (x->index > y->index) - (x->index < y->index);
}

static int compare_pairs(const void *xp, const void *yp)
{
    const int64_t *x = xp, *y = yp;

    if (x[0] != y[0]) {
        return x[0] < y[0] ? -1 : 1;
    }
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* A growable array of (i, j) pairs, stored flat. */
typedef struct pair_list_t {
    int64_t *ij;
    int64_t n, cap;
} pair_list_t;

static int push_pair(pair_list_t *list, int64_t i, int64_t j)
{
    if (list->n == list->cap) {
        int64_t cap = list->cap ? 2 * list->cap : 256;
        if ((uint64_t)cap > SIZE_MAX / (2 * sizeof(int64_t))) {
            return -1;
        }
        int64_t *ij = realloc(list->ij, (size_t)cap * 2 * sizeof(int64_t));
        if (ij == NULL) {
            return -1;
        }
        list->ij = ij;
        list->cap = cap;
    }
    list->ij[2 * list->n] = i;
    list->ij[2 * list->n + 1] = j;
    ++list->n;
    return 0;
}

/*
 * The active set: accesses seen so far, by position in sweep order, whose
 * extent may still reach the next start.  It is kept as two unsorted lists,
 * writers and readers, because read/read pairs never conflict: a new reader
 * scans only the writers, a new writer scans both.  Entries whose extent
 * ends at or before the current start are dropped while scanning (they can
 * meet nothing later, since starts only grow), and every entry kept during a
 * scan is an extent-intersecting pair with at least one writer.  So each
 * entry is dropped at most once and the sweep costs O(n log n + K), K being
 * the number of such pairs: a heap ordered by end would only add a log.
 */
typedef struct active_list_t {
    int64_t *pos;
    int64_t n;
} active_list_t;

typedef struct sweep_t {
    const eagle_view *views;
    const sweep_entry_t *entries;
    int exact;
    int64_t max_work;
    pair_list_t out;
} sweep_t;

/* Pair entry `s` with every live member of `list`, dropping the expired. */
static int scan_active(sweep_t *sw, active_list_t *list, int64_t s)
{
    const sweep_entry_t *e = &sw->entries[s];
    int64_t k = 0;

    while (k < list->n) {
        const sweep_entry_t *f = &sw->entries[list->pos[k]];
        if (f->hi <= e->lo) {
            list->pos[k] = list->pos[--list->n];
            continue;
        }
        int64_t i = f->index < e->index ? f->index : e->index;
        int64_t j = f->index < e->index ? e->index : f->index;
        if (!sw->exact
            || eagle_overlap(&sw->views[i], &sw->views[j], sw->max_work) != EAGLE_OVERLAP_NO) {
            if (push_pair(&sw->out, i, j) != 0) {
                return -1;
            }
        }
        ++k;
    }
    return 0;
}

EAGLE_API int eagle_candidate_pairs(const eagle_view *views, const uint8_t *writes, int64_t n,
                                    int exact, int64_t max_work, int64_t **pairs, int64_t *npairs)
{
    const char *problem;
    sweep_entry_t *entries = NULL;
    active_list_t writers = {NULL, 0}, readers = {NULL, 0};
    sweep_t sw = {views, NULL, exact, max_work, {NULL, 0, 0}};
    int64_t m = 0;
    int status = EAGLE_OK;

    if (pairs == NULL || npairs == NULL) {
        return eagle_fail(EAGLE_ERR_ARG, "eagle_candidate_pairs: null output pointer");
    }
    *pairs = NULL;
    *npairs = 0;
    if (n < 0) {
        return eagle_fail(EAGLE_ERR_ARG, "eagle_candidate_pairs: n = %lld < 0", (long long)n);
    }
    if (n == 0) {
        return EAGLE_OK;
    }
    if (views == NULL || writes == NULL) {
        return eagle_fail(EAGLE_ERR_ARG, "eagle_candidate_pairs: null views or writes");
    }
    for (int64_t k = 0; k < n; ++k) {
        if ((problem = eagle_view_problem(&views[k])) != NULL) {
            return eagle_fail(EAGLE_ERR_ARG, "eagle_candidate_pairs: views[%lld]: %s", (long long)k,
                              problem);
        }
    }
    if ((uint64_t)n > SIZE_MAX / sizeof(sweep_entry_t)) {
        return eagle_fail(EAGLE_ERR_NOMEM, "eagle_candidate_pairs: n = %lld is too large",
                          (long long)n);
    }

    entries = malloc((size_t)n * sizeof *entries);
    writers.pos = malloc((size_t)n * sizeof *writers.pos);
    readers.pos = malloc((size_t)n * sizeof *readers.pos);
    if (entries == NULL || writers.pos == NULL || readers.pos == NULL) {
        status = eagle_fail(EAGLE_ERR_NOMEM,
                            "eagle_candidate_pairs: out of memory for %lld "
                            "accesses",
                            (long long)n);
        goto done;
    }

    for (int64_t k = 0; k < n; ++k) {
        sweep_entry_t *e = &entries[m];
        eagle_view_extent(&views[k], &e->lo, &e->hi);
        if (e->lo >= e->hi) {
            continue; /* empty: overlaps nothing */
        }
        e->index = k;
        e->device = views[k].device;
        e->writes = writes[k] != 0;
        ++m;
    }
    if (m > 1) { /* qsort's pointer must be valid even for 0 items */
        qsort(entries, (size_t)m, sizeof *entries, compare_sweep_entries);
    }
    sw.entries = entries;

    for (int64_t s = 0; s < m; ++s) {
        if (s > 0 && entries[s].device != entries[s - 1].device) {
            writers.n = readers.n = 0; /* other devices never overlap */
        }
        if (scan_active(&sw, &writers, s) != 0
            || (entries[s].writes && scan_active(&sw, &readers, s) != 0)) {
            status = eagle_fail(EAGLE_ERR_NOMEM,
                                "eagle_candidate_pairs: out of memory after "
                                "%lld pairs",
                                (long long)sw.out.n);
            goto done;
        }
        active_list_t *own = entries[s].writes ? &writers : &readers;
        own->pos[own->n++] = s;
    }

    if (sw.out.n > 1) {
        qsort(sw.out.ij, (size_t)sw.out.n, 2 * sizeof(int64_t), compare_pairs);
    }
    *pairs = sw.out.ij;
    *npairs = sw.out.n;
    sw.out.ij = NULL;

done:
    free(sw.out.ij);
    free(readers.pos);
    free(writers.pos);
    free(entries);
    return status;
}
