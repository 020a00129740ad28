/*
 * overlap.c -- do two strided views share a byte?
 *
 * A port of NumPy's mem_overlap.c (Pauli Virtanen, 2015, BSD-3): the same
 * reduction, the same simplification, the same search and the same work
 * counting, over eagle_view instead of PyArrayObject.
 *
 *
 * The question
 *
 * A view has a data pointer d, an item size s, a shape n[0..ndim-1] and byte
 * strides st[0..ndim-1]; byte y of element (x[0], x[1], ...) lives at
 * d + sum(st[k] * x[k]) + y.  Views a and b share a byte iff the integer
 * program
 *
 *     d_a + sum_i st_a[i] x_a[i] + y_a  ==  d_b + sum_j st_b[j] x_b[j] + y_b
 *
 *     0 <= x_a[i] <= n_a[i] - 1,   0 <= y_a <= s_a - 1
 *     0 <= x_b[j] <= n_b[j] - 1,   0 <= y_b <= s_b - 1
 *
 * has a solution.  The item size is one more axis: stride 1, length s.
 *
 *
 * The reduction
 *
 * Let [start, end) be a view's byte extent (offset_bounds_from_strides).
 * Substituting x -> n - 1 - x on the axes with negative stride writes every
 * byte of a as start_a + sum |st_a[i]| x_a[i] + y_a, all coefficients
 * positive.  Substituting on the axes of b with positive stride instead
 * writes every byte of b as end_b - 1 - sum |st_b[j]| x_b[j] - y_b.  Equating
 * the two and moving b's terms to the left:
 *
 *     sum_i |st_a[i]| x_a[i] + y_a + sum_j |st_b[j]| x_b[j] + y_b
 *         == end_b - 1 - start_a
 *
 * (or the mirror image with end_a - 1 - start_b; we take the smaller
 * right-hand side).  An axis with stride 0 or length <= 1 adds nothing and is
 * dropped; an item size of 1 adds nothing either.  What is left is a bounded
 * Diophantine equation with positive coefficients,
 *
 *     E[0].a z_0 + E[1].a z_1 + ... + E[n-1].a z_{n-1} == b
 *
 *     E[k].a > 0,   0 <= z_k <= E[k].ub,   n <= 2 * EAGLE_MAX_DIMS + 2,
 *
 * an equality-constrained knapsack: NP-hard, exponential in n at worst.
 *
 * diophantine_simplify keeps the yes/no answer while shrinking it: terms are
 * sorted by coefficient, largest first; equal coefficients merge (a z + a z'
 * takes exactly the values a z'' with 0 <= z'' <= ub + ub', so the bounds
 * add); every bound is trimmed to b / a, and terms trimmed to 0 vanish.
 *
 *
 * The algorithm (Ramachandran [1])
 *
 * With g = gcd(a_0, a_1) and z' = (a_0/g) z_0 + (a_1/g) z_1, the equation
 * implies the shorter one
 *
 *     g z' + a_2 z_2 + ... + a_{n-1} z_{n-1} == b,
 *     0 <= z' <= (a_0/g) ub_0 + (a_1/g) ub_1.
 *
 * Repeating gives the chain Ep[0].a = gcd(E[0].a, E[1].a),
 * Ep[j-1].a = gcd(Ep[j-2].a, E[j].a), with combined bounds Ep[j].ub
 * (diophantine_precompute).  Level v (1 <= v <= n-1) of the search is then
 * the two-variable equation
 *
 *     a1 x1 + a2 x2 == b_v,   0 <= x1 <= u1,   0 <= x2 <= u2,
 *
 * where (a1, u1) is E[0] for v == 1 and Ep[v-2] above, (a2, u2) = E[v], and
 * a_gcd = Ep[v-1].a = gcd(a1, a2).  It has integer solutions iff a_gcd
 * divides b_v.  Euclid's algorithm gives gamma a1 + epsilon a2 == a_gcd; with
 * c = b_v / a_gcd, c1 = a2 / a_gcd and c2 = a1 / a_gcd all solutions are
 *
 *     x1 = gamma c + c1 t,   x2 = epsilon c - c2 t,   t any integer,
 *
 * and the bounds on x1 and x2 cut t to a range [t_l, t_u].  The search starts
 * at v = n - 1 with b_{n-1} = b.  Each t in the range fixes z_v = x2, and
 * level v - 1 solves with b_{v-1} = b_v - a2 x2 (diophantine_dfs).  At v == 1
 * a non-empty t range is a solution: the views overlap.  If every candidate
 * of every level fails, there is no solution: they do not.
 *
 * Work: each sub-problem found infeasible (a_gcd does not divide b_v, an
 * empty t range, a level whose candidates all failed) counts one, and the
 * search gives up with EAGLE_OVERLAP_TOO_HARD once the count reaches
 * max_work.  This is NumPy's counting, so np.may_share_memory(a, b,
 * max_work=k) predicts the capped answer; the tests rely on that.
 *
 *
 * Performance
 *
 * Common views are easy:
 *
 * - Disjoint extents.  The O(ndim) extent check answers NO before any gcd
 *   is computed, and max_work == 0 stops right after it.
 * - Slices of a contiguous parent, e.g. x[:, 0, :] against x[:, 1, :].  The
 *   strides sorted largest first divide each other, so at every level at most
 *   one t fits the bounds: at most one unit of work.
 * - Starts incommensurate with the strides, e.g. x[:, ::2] against
 *   x[:, 1::2].  a_gcd does not divide b at the top level: one unit.
 *
 * Hard ones exist.  For int8 x of shape (4, 20), a = x[:, ::7] and
 * b = x[:, 3::3] simplify to 20 z_0 + 7 z_1 + 3 z_2 == 71 with z_0 <= 3,
 * z_1 <= 2, z_2 <= 5 (the row strides merged, then trimmed).  They do not
 * overlap, but only because x.shape[1] <= lcm(7, 3).  Combining z_0 and z_1
 * leaves the coefficient gcd(20, 7) = 1, which does not restrict z_2, so all
 * six candidates z_2 = 0..5 are tried: TOO_HARD for max_work 1..5, NO from 6.  The work is bounded only by
 * prod(shape_a) * prod(shape_b), and hard knapsacks [2, 3] make it real:
 * over a 192163377-byte buffer the views with strides (36674, 61119, 85569)
 * and (12223, 12224, 1), shapes (1049, 1049, 1049) and (1049, 1049, 1), the
 * second 64023025 bytes in, do not overlap, yet 10^7 units of work (20 to
 * 50 ns each) do not settle it.  So callers cap the work; eagle's Python side
 * passes MAX_WORK (eagle/_views.py).
 *
 * Checking all pairs of n accesses is O(n^2) calls of even the cheap check;
 * index.c sorts the extents and sweeps them so that only pairs whose extents
 * intersect, and of which one writes, reach this file.
 *
 *
 * Integer overflow
 *
 * Everything is fixed-width and every overflow is caught:
 *
 * - A view's extent (sums of stride * (length - 1), the item size, the data
 *   pointer added) may not fit in int64 or uintptr_t: no allocation is that
 *   large, so such a view is a caller's mistake, answered OVERFLOW.
 * - |stride| for a stride of INT64_MIN, merged bounds in the simplification,
 *   the combined bounds Ep[j].ub and the new right-hand side b_v - a2 x2 are
 *   computed with overflow checks: OVERFLOW.
 * - gamma c and epsilon c need up to 126 bits (|gamma| < a2 / a_gcd,
 *   c < 2^63): they and the t bounds are computed in 128 bits.  The t range
 *   keeps x1 in [0, u1] and x2 in [0, u2], so x1, x2 and t_u - t_l fit in
 *   int64 again.
 *
 *
 * The contract of eagle_overlap
 *
 * NO and YES are exact.  TOO_HARD (the work cap was hit) and OVERFLOW mean
 * "not decided", and a caller must read them as overlap: a conflict is never
 * missed, only an independence is sometimes not proven.  NumPy leaves this
 * policy to its binding (may_share_memory says yes); here it is the
 * function's contract.
 *
 * max_work < 0 searches without a cap, 0 stops after the extent check, k > 0
 * allows k failed sub-problems.  Views on different devices never overlap;
 * an empty view (a 0 in its shape) overlaps nothing.  A view's `base` is not
 * read: the extents decide, because a wrong base from some foreign array
 * interface would turn a real conflict into NO.  A malformed view gives
 * EAGLE_OVERLAP_BAD_VIEW, and eagle_last_error() says what is wrong.
 *
 *
 * References
 *
 * [1] P. Ramachandran, "Use of Extended Euclidean Algorithm in Solving a
 *     System of Linear Diophantine Equations with Bounded Variables",
 *     Algorithmic Number Theory, LNCS 4076, 182-192 (2006).
 * [2] G. Cornuejols, R. Urbaniak, R. Weismantel, L. Wolsey, "Decomposition
 *     of integer programs and of generating sets", LNCS 1284, 92-103 (1997).
 * [3] K. Aardal, A. K. Lenstra, "Hard equality constrained integer
 *     knapsacks", LNCS 2337, 350-366 (2002).
 */
#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "internal.h"

#if !defined(__SIZEOF_INT128__)
#error "overlap.c needs a compiler with __int128 (gcc or clang)"
#endif

/* `__extension__`: -pedantic builds accept the type without a warning. */
__extension__ typedef __int128 int128;

/* One term a z of the equation, with 0 <= z <= ub. */
typedef struct diophantine_term_t {
    int64_t a;
    int64_t ub;
} diophantine_term_t;

/* Every axis of both views plus one item-size term each. */
#define MAX_TERMS (2 * EAGLE_MAX_DIMS + 2)

static int64_t min_i64(int64_t x, int64_t y) { return x < y ? x : y; }

static int128 max_128(int128 x, int128 y) { return x > y ? x : y; }

static int128 min_128(int128 x, int128 y) { return x < y ? x : y; }

/* floor(num / den) and ceil(num / den) for den > 0 (C division truncates). */
static int128 floordiv_128(int128 num, int64_t den)
{
    int128 q = num / den;
    return (num % den < 0) ? q - 1 : q;
}

static int128 ceildiv_128(int128 num, int64_t den)
{
    int128 q = num / den;
    return (num % den > 0) ? q + 1 : q;
}

const char *eagle_view_problem(const eagle_view *v)
{
    if (v == NULL) {
        return "null view";
    }
    if (v->ndim < 0 || v->ndim > EAGLE_MAX_DIMS) {
        return "ndim out of range 0..32";
    }
    if (v->itemsize < 1) {
        return "itemsize < 1";
    }
    for (int32_t k = 0; k < v->ndim; ++k) {
        if (v->shape[k] < 0) {
            return "negative shape";
        }
    }
    return NULL;
}

typedef enum extent_t {
    EXTENT_OK,
    EXTENT_EMPTY,    /* a 0 in the shape: no bytes at all */
    EXTENT_OVERFLOW, /* the extent does not fit in int64 / uintptr_t */
} extent_t;

/*
 * The byte offsets [*lower, *upper) from v->data that a valid view v
 * touches: each axis stretches the range up (positive stride) or down
 * (negative stride) by stride * (length - 1), and the last item adds its
 * size.
 */
static extent_t offset_bounds_from_strides(const eagle_view *v, int64_t *lower, int64_t *upper)
{
    int64_t lo = 0, hi = 0, max_axis_offset;
    bool overflow = false;

    for (int32_t k = 0; k < v->ndim; ++k) {
        if (v->shape[k] == 0) {
            return EXTENT_EMPTY;
        }
    }
    for (int32_t k = 0; k < v->ndim; ++k) {
        overflow |= __builtin_mul_overflow(v->strides[k], v->shape[k] - 1, &max_axis_offset);
        if (max_axis_offset > 0) {
            overflow |= __builtin_add_overflow(hi, max_axis_offset, &hi);
        } else {
            overflow |= __builtin_add_overflow(lo, max_axis_offset, &lo);
        }
    }
    overflow |= __builtin_add_overflow(hi, v->itemsize, &hi);
    if (overflow) {
        return EXTENT_OVERFLOW;
    }
    *lower = lo;
    *upper = hi;
    return EXTENT_OK;
}

/* The absolute half-open byte range [*start, *end) of a valid view v. */
static extent_t get_view_extent(const eagle_view *v, uintptr_t *start, uintptr_t *end)
{
    int64_t lo = 0, hi = 0;
    extent_t res = offset_bounds_from_strides(v, &lo, &hi);
    if (res != EXTENT_OK) {
        return res;
    }
    /* |lo|, |hi| < 2^63 and data < 2^64: the sums fit in 128 bits. */
    int128 s = (int128)v->data + lo;
    int128 e = (int128)v->data + hi;
    if (s < 0 || e > (int128)UINTPTR_MAX) {
        return EXTENT_OVERFLOW;
    }
    *start = (uintptr_t)s;
    *end = (uintptr_t)e;
    return EXTENT_OK;
}

/*
 * An invalid or overflowing view reports all of memory, [0, UINTPTR_MAX), so
 * an index built on extents stays conservative; an empty one reports [0, 0).
 */
EAGLE_API void eagle_view_extent(const eagle_view *v, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t start = 0, end = UINTPTR_MAX;

    if (lo == NULL || hi == NULL) {
        return;
    }
    if (eagle_view_problem(v) == NULL) {
        switch (get_view_extent(v, &start, &end)) {
        case EXTENT_OK:
            break;
        case EXTENT_EMPTY:
            start = end = 0;
            break;
        case EXTENT_OVERFLOW:
            start = 0;
            end = UINTPTR_MAX;
            break;
        }
    }
    *lo = start;
    *hi = end;
}

/*
 * Euclid's algorithm: *a_gcd = gcd(a1, a2) with
 * gamma * a1 + epsilon * a2 == a_gcd, |gamma| < a2 / a_gcd and
 * |epsilon| < a1 / a_gcd, for a1, a2 > 0.  All values stay within
 * [-max(a1, a2), max(a1, a2)]: no overflow.
 */
static void euclid(int64_t a1, int64_t a2, int64_t *a_gcd, int64_t *gamma, int64_t *epsilon)
{
    int64_t gamma1 = 1, gamma2 = 0, epsilon1 = 0, epsilon2 = 1, r;

    for (;;) {
        if (a2 == 0) {
            *a_gcd = a1;
            *gamma = gamma1;
            *epsilon = epsilon1;
            return;
        }
        r = a1 / a2;
        a1 -= r * a2;
        gamma1 -= r * gamma2;
        epsilon1 -= r * epsilon2;

        if (a1 == 0) {
            *a_gcd = a2;
            *gamma = gamma2;
            *epsilon = epsilon2;
            return;
        }
        r = a2 / a1;
        a2 -= r * a1;
        gamma2 -= r * gamma1;
        epsilon2 -= r * epsilon1;
    }
}

/*
 * The gcd chain for n >= 2 terms: Ep[0].a = gcd(E[0].a, E[1].a) and
 * Ep[j-1].a = gcd(Ep[j-2].a, E[j].a), with Gamma[j], Epsilon[j] the Euclid
 * coefficients of Ep[j], and the bounds of the combined variables,
 * Ep[j-1].ub = c1 * ub_prev + c2 * E[j].ub (the last one is never read).
 * Returns false on int64 overflow.
 */
static bool diophantine_precompute(unsigned n, const diophantine_term_t *E, diophantine_term_t *Ep,
                                   int64_t *Gamma, int64_t *Epsilon)
{
    int64_t a_gcd, gamma, epsilon, c1, c2, ub1, ub2;
    bool overflow = false;

    euclid(E[0].a, E[1].a, &a_gcd, &gamma, &epsilon);
    Ep[0].a = a_gcd;
    Ep[0].ub = 0;
    Gamma[0] = gamma;
    Epsilon[0] = epsilon;
    if (n > 2) {
        c1 = E[0].a / a_gcd;
        c2 = E[1].a / a_gcd;
        overflow |= __builtin_mul_overflow(E[0].ub, c1, &ub1);
        overflow |= __builtin_mul_overflow(E[1].ub, c2, &ub2);
        overflow |= __builtin_add_overflow(ub1, ub2, &Ep[0].ub);
    }

    for (unsigned j = 2; j < n; ++j) {
        euclid(Ep[j - 2].a, E[j].a, &a_gcd, &gamma, &epsilon);
        Ep[j - 1].a = a_gcd;
        Ep[j - 1].ub = 0;
        Gamma[j - 1] = gamma;
        Epsilon[j - 1] = epsilon;
        if (j < n - 1) {
            c1 = Ep[j - 2].a / a_gcd;
            c2 = E[j].a / a_gcd;
            overflow |= __builtin_mul_overflow(Ep[j - 2].ub, c1, &ub1);
            overflow |= __builtin_mul_overflow(E[j].ub, c2, &ub2);
            overflow |= __builtin_add_overflow(ub1, ub2, &Ep[j - 1].ub);
        }
    }
    return !overflow;
}

/*
 * Level v of the search (see the header): is there a solution of
 * a1 x1 + a2 x2 == b with the level's bounds that extends, level by level
 * down to v == 1, to a solution of the whole equation?  *count is the work
 * done so far.  Returns EAGLE_OVERLAP_NO, _YES, _TOO_HARD or _OVERFLOW.
 */
static int diophantine_dfs(unsigned v, const diophantine_term_t *E, const diophantine_term_t *Ep,
                           const int64_t *Gamma, const int64_t *Epsilon, int64_t b,
                           int64_t max_work, int64_t *count)
{
    int64_t a1, u1, a2, u2, a_gcd, gamma, epsilon, c, c1, c2, x2, t_span, b2, a2x2;
    int128 x10, x20, t_l, t_u;
    int res;

    if (max_work >= 0 && *count >= max_work) {
        return EAGLE_OVERLAP_TOO_HARD;
    }

    if (v == 1) {
        a1 = E[0].a;
        u1 = E[0].ub;
    } else {
        a1 = Ep[v - 2].a;
        u1 = Ep[v - 2].ub;
    }
    a2 = E[v].a;
    u2 = E[v].ub;
    a_gcd = Ep[v - 1].a;
    gamma = Gamma[v - 1];
    epsilon = Epsilon[v - 1];

    if (b % a_gcd != 0) {
        ++*count;
        return EAGLE_OVERLAP_NO;
    }
    c = b / a_gcd;
    c1 = a2 / a_gcd;
    c2 = a1 / a_gcd;

    /*
     * x1 = gamma c + c1 t and x2 = epsilon c - c2 t, with c1, c2 > 0:
     * 0 <= x1 <= u1 and 0 <= x2 <= u2 give t_l <= t <= t_u.  |gamma c| and
     * |epsilon c| are below 2^126, so nothing here overflows 128 bits.
     */
    x10 = (int128)gamma * c;
    x20 = (int128)epsilon * c;
    t_l = max_128(ceildiv_128(-x10, c1), ceildiv_128(x20 - u2, c2));
    t_u = min_128(floordiv_128((int128)u1 - x10, c1), floordiv_128(x20, c2));
    if (t_l > t_u) {
        ++*count;
        return EAGLE_OVERLAP_NO;
    }

    /* Within [t_l, t_u], 0 <= x2 <= u2: x2 at t_l and the span
     * t_u - t_l <= u2 / c2 fit in int64.  (x1 is not needed: level v - 1
     * finds it again from the new right-hand side.) */
    x2 = (int64_t)(x20 - (int128)c2 * t_l);
    t_span = (int64_t)(t_u - t_l);

    if (v == 1) {
        return EAGLE_OVERLAP_YES;
    }

    /* Written without `t <= t_span` so that t never steps past INT64_MAX. */
    for (int64_t t = 0;; ++t) {
        int64_t z_v = x2 - c2 * t; /* in [0, u2] by the t range */
        if (__builtin_mul_overflow(a2, z_v, &a2x2) || __builtin_sub_overflow(b, a2x2, &b2)) {
            return EAGLE_OVERLAP_OVERFLOW;
        }
        res = diophantine_dfs(v - 1, E, Ep, Gamma, Epsilon, b2, max_work, count);
        if (res != EAGLE_OVERLAP_NO) {
            return res;
        }
        if (t == t_span) {
            break;
        }
    }
    ++*count;
    return EAGLE_OVERLAP_NO;
}

/*
 * Is there z with sum(E[k].a z_k) == b and 0 <= z_k <= E[k].ub, for
 * E[k].a > 0?  max_work as for eagle_overlap.
 */
static int solve_diophantine(unsigned n, const diophantine_term_t *E, int64_t b, int64_t max_work)
{
    diophantine_term_t Ep[MAX_TERMS];
    int64_t Gamma[MAX_TERMS], Epsilon[MAX_TERMS];
    int64_t count = 0;

    for (unsigned j = 0; j < n; ++j) {
        if (E[j].ub < 0) {
            return EAGLE_OVERLAP_NO;
        }
    }
    if (b < 0) {
        return EAGLE_OVERLAP_NO;
    }
    if (n == 0) {
        return b == 0 ? EAGLE_OVERLAP_YES : EAGLE_OVERLAP_NO;
    }
    if (n == 1) {
        return (b % E[0].a == 0 && b / E[0].a <= E[0].ub) ? EAGLE_OVERLAP_YES : EAGLE_OVERLAP_NO;
    }
    if (!diophantine_precompute(n, E, Ep, Gamma, Epsilon)) {
        return EAGLE_OVERLAP_OVERFLOW;
    }
    return diophantine_dfs(n - 1, E, Ep, Gamma, Epsilon, b, max_work, &count);
}

/*
 * Shrink the equation without changing whether it has a solution: sort by
 * coefficient, largest first (the order the search needs to stay cheap on
 * sliced views); merge equal coefficients; trim each bound to b / a and drop
 * the terms trimmed to 0.  Returns false on int64 overflow.
 */
static bool diophantine_simplify(unsigned *n, diophantine_term_t *E, int64_t b)
{
    unsigned i, j, m;
    bool overflow = false;

    for (j = 0; j < *n; ++j) {
        if (E[j].ub < 0) {
            return true; /* infeasible as it stands; solve_diophantine says NO */
        }
    }
    if (b < 0) {
        return true;
    }

    /* Insertion sort, descending and stable: at most MAX_TERMS terms. */
    for (j = 1; j < *n; ++j) {
        diophantine_term_t term = E[j];
        for (i = j; i > 0 && E[i - 1].a < term.a; --i) {
            E[i] = E[i - 1];
        }
        E[i] = term;
    }

    m = *n;
    i = 0;
    for (j = 1; j < m; ++j) {
        if (E[i].a == E[j].a) {
            overflow |= __builtin_add_overflow(E[i].ub, E[j].ub, &E[i].ub);
        } else {
            E[++i] = E[j];
        }
    }
    m = (m == 0) ? 0 : i + 1;

    i = 0;
    for (j = 0; j < m; ++j) {
        E[j].ub = min_i64(E[j].ub, b / E[j].a);
        if (E[j].ub != 0) { /* a bound of 0 forces z = 0: the term is gone */
            E[i++] = E[j];
        }
    }
    *n = i;
    return !overflow;
}

/*
 * Append the terms of view v: |stride| with bound length - 1 for each axis
 * that moves (stride != 0, length > 1).  Returns false when |stride| does
 * not fit in int64.
 */
static bool strides_to_terms(const eagle_view *v, diophantine_term_t *terms, unsigned *nterms)
{
    for (int32_t k = 0; k < v->ndim; ++k) {
        if (v->shape[k] <= 1 || v->strides[k] == 0) {
            continue;
        }
        if (v->strides[k] == INT64_MIN) {
            return false;
        }
        terms[*nterms].a = v->strides[k] < 0 ? -v->strides[k] : v->strides[k];
        terms[*nterms].ub = v->shape[k] - 1;
        ++*nterms;
    }
    return true;
}

/* eagle_overlap for two valid views on the same device. */
static int solve_may_share_memory(const eagle_view *a, const eagle_view *b, int64_t max_work)
{
    diophantine_term_t terms[MAX_TERMS];
    unsigned nterms = 0;
    uintptr_t start1 = 0, end1 = 0, start2 = 0, end2 = 0, uintp_rhs;
    extent_t ext1 = get_view_extent(a, &start1, &end1);
    extent_t ext2 = get_view_extent(b, &start2, &end2);

    if (ext1 == EXTENT_EMPTY || ext2 == EXTENT_EMPTY) {
        return EAGLE_OVERLAP_NO;
    }
    if (ext1 == EXTENT_OVERFLOW || ext2 == EXTENT_OVERFLOW) {
        return EAGLE_OVERLAP_OVERFLOW;
    }
    if (!(start1 < end2 && start2 < end1)) {
        return EAGLE_OVERLAP_NO;
    }
    if (max_work == 0) {
        return EAGLE_OVERLAP_TOO_HARD;
    }

    /* Both differences are >= 0 once the extents intersect; the smaller one
     * makes the smaller search (see the header). */
    uintp_rhs = end2 - 1 - start1;
    if (end1 - 1 - start2 < uintp_rhs) {
        uintp_rhs = end1 - 1 - start2;
    }
    if (uintp_rhs > (uintptr_t)INT64_MAX) {
        return EAGLE_OVERLAP_OVERFLOW;
    }
    int64_t rhs = (int64_t)uintp_rhs;

    if (!strides_to_terms(a, terms, &nterms) || !strides_to_terms(b, terms, &nterms)) {
        return EAGLE_OVERLAP_OVERFLOW;
    }
    if (a->itemsize > 1) {
        terms[nterms].a = 1;
        terms[nterms].ub = a->itemsize - 1;
        ++nterms;
    }
    if (b->itemsize > 1) {
        terms[nterms].a = 1;
        terms[nterms].ub = b->itemsize - 1;
        ++nterms;
    }
    if (!diophantine_simplify(&nterms, terms, rhs)) {
        return EAGLE_OVERLAP_OVERFLOW;
    }
    return solve_diophantine(nterms, terms, rhs, max_work);
}

EAGLE_API int eagle_overlap(const eagle_view *a, const eagle_view *b, int64_t max_work)
{
    const char *problem;

    if ((problem = eagle_view_problem(a)) != NULL) {
        return eagle_fail(EAGLE_OVERLAP_BAD_VIEW, "eagle_overlap: view a: %s", problem);
    }
    if ((problem = eagle_view_problem(b)) != NULL) {
        return eagle_fail(EAGLE_OVERLAP_BAD_VIEW, "eagle_overlap: view b: %s", problem);
    }
    if (a->device != b->device) {
        return EAGLE_OVERLAP_NO; /* separate memories */
    }
    return solve_may_share_memory(a, b, max_work);
}
