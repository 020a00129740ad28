/*
 * eagle-scan's kernels: inclusive prefix scans (sum, max) of a 1-D plane.
 *
 * Every function has eagle.h's kernel type, so eagle's executor runs them
 * like any plan launch.  A scan is not per-sample (y[i] depends on every
 * x[j], j <= i), so it runs in three passes on eagle's fixed blocks
 * [k*EAGLE_BLOCK, (k+1)*EAGLE_BLOCK):
 *
 *   local  (n samples, blocks in parallel): y = the scan of x inside the
 *          block, serially from its first element; totals[k] = its last value.
 *   carry  (one call): totals[k] = op(totals[k-1], totals[k]), serially.
 *   fixup  (n samples, blocks in parallel): y[i] = op(totals[k-1], y[i])
 *          for every block k >= 1.
 *
 * So y[i] = op(C[k-1], L[i]), where L is block k's own serial scan and C
 * the serial scan of the block totals: one fixed order, whatever the thread
 * count and whoever ran which block.  For max (and integer sums, which wrap
 * as unsigned) that is the serial scan exactly; a float sum is rounded in
 * this blocked order, not np.cumsum's.  A plane of at most one block is the
 * local pass alone, the serial scan.
 *
 * The local and fixup passes rely on the executor calling a kernel on whole
 * blocks (eagle.h: "one block at a time"), never on a part of one.
 */
#include <stdint.h>

#include "eagle/eagle.h"

/* eagle refuses this library unless it was compiled against its own ABI. */
EAGLE_API int eagle_plugin_abi_version(void) { return EAGLE_ABI_VERSION; }

#define SUM(a, b) ((a) + (b))
/* Unsigned arithmetic: a signed sum that overflows wraps instead of being undefined. */
#define SUM_I64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define SUM_I32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
/* Once a NaN is met it is carried on, as np.maximum.accumulate does. */
#define FMAX(a, b) (((a) >= (b) || (a) != (a)) ? (a) : (b))
#define IMAX(a, b) ((a) >= (b) ? (a) : (b))

/* args: [0] x, [1] y (may be x), [2] totals (one per block) */
#define LOCAL(NAME, T, OP)                                                      \
    EAGLE_API void eagle_scan_local_##NAME(int64_t b, int64_t e, const eagle_arg *a) \
    {                                                                           \
        const T *x = a[0].ptr;                                                  \
        T *y = a[1].ptr, *totals = a[2].ptr;                                    \
        T acc = x[b];                                                           \
        y[b] = acc;                                                             \
        for (int64_t i = b + 1; i < e; ++i) {                                   \
            acc = OP(acc, x[i]);                                                \
            y[i] = acc;                                                         \
        }                                                                       \
        totals[b / EAGLE_BLOCK] = acc;                                          \
    }

/* One call: args [0] totals, [1] number of blocks (i64). */
#define CARRY(NAME, T, OP)                                                      \
    EAGLE_API void eagle_scan_carry_##NAME(int64_t b, int64_t e, const eagle_arg *a) \
    {                                                                           \
        (void)b;                                                                \
        (void)e;                                                                \
        T *totals = a[0].ptr;                                                   \
        for (int64_t k = 1; k < a[1].i64; ++k)                                  \
            totals[k] = OP(totals[k - 1], totals[k]);                           \
    }

/* args: [0] y, [1] totals after the carry */
#define FIXUP(NAME, T, OP)                                                      \
    EAGLE_API void eagle_scan_fixup_##NAME(int64_t b, int64_t e, const eagle_arg *a) \
    {                                                                           \
        T *y = a[0].ptr;                                                        \
        const T *totals = a[1].ptr;                                             \
        int64_t k = b / EAGLE_BLOCK;                                            \
        if (k == 0)                                                             \
            return; /* block 0 has nothing before it */                         \
        T c = totals[k - 1];                                                    \
        for (int64_t i = b; i < e; ++i)                                         \
            y[i] = OP(c, y[i]);                                                 \
    }

/* The whole scan as one serial call (n = 1): args [0] x, [1] y, [2] n (i64).
 * Not what a node runs (it would ignore a logical size): the benchmark's
 * one-thread reference. */
#define SERIAL(NAME, T, OP)                                                     \
    EAGLE_API void eagle_scan_serial_##NAME(int64_t b, int64_t e, const eagle_arg *a) \
    {                                                                           \
        (void)b;                                                                \
        (void)e;                                                                \
        const T *x = a[0].ptr;                                                  \
        T *y = a[1].ptr;                                                        \
        int64_t n = a[2].i64;                                                   \
        if (n <= 0)                                                             \
            return;                                                             \
        T acc = x[0];                                                           \
        y[0] = acc;                                                             \
        for (int64_t i = 1; i < n; ++i) {                                       \
            acc = OP(acc, x[i]);                                                \
            y[i] = acc;                                                         \
        }                                                                       \
    }

#define SCAN(NAME, T, OP) LOCAL(NAME, T, OP) CARRY(NAME, T, OP) FIXUP(NAME, T, OP) SERIAL(NAME, T, OP)

SCAN(sum_f64, double, SUM)
SCAN(sum_f32, float, SUM)
SCAN(sum_i64, int64_t, SUM_I64)
SCAN(sum_i32, int32_t, SUM_I32)
SCAN(max_f64, double, FMAX)
SCAN(max_f32, float, FMAX)
SCAN(max_i64, int64_t, IMAX)
SCAN(max_i32, int32_t, IMAX)

/*
 * Reverse mode (one serial call, n = 1), for eagle.diff.
 * sum: gx[i] = sum of gy[j] for j >= i, added from the end.
 *      args [0] gy, [1] gx, [2] n.
 * max: y[j] is x[m(j)], m(j) the latest i <= j with x[i] equal to the running
 *      max; gx[m(j)] += gy[j], in order of j.  args [0] x, [1] gy, [2] gx, [3] n.
 */
#define VJP(T, SUFFIX)                                                          \
    EAGLE_API void eagle_scan_vjp_sum_##SUFFIX(int64_t b, int64_t e, const eagle_arg *a) \
    {                                                                           \
        (void)b;                                                                \
        (void)e;                                                                \
        const T *gy = a[0].ptr;                                                 \
        T *gx = a[1].ptr, acc = 0;                                              \
        for (int64_t i = a[2].i64 - 1; i >= 0; --i) {                           \
            acc += gy[i];                                                       \
            gx[i] = acc;                                                        \
        }                                                                       \
    }                                                                           \
    EAGLE_API void eagle_scan_vjp_max_##SUFFIX(int64_t b, int64_t e, const eagle_arg *a) \
    {                                                                           \
        (void)b;                                                                \
        (void)e;                                                                \
        const T *x = a[0].ptr, *gy = a[1].ptr;                                  \
        T *gx = a[2].ptr;                                                       \
        int64_t n = a[3].i64, m = 0;                                            \
        for (int64_t i = 0; i < n; ++i)                                         \
            gx[i] = 0;                                                          \
        T best = n > 0 ? x[0] : 0;                                              \
        for (int64_t j = 0; j < n; ++j) {                                       \
            if (j == 0 || x[j] >= best || x[j] != x[j]) {                       \
                if (best == best) { /* after a NaN the max stays where it is */ \
                    best = x[j];                                                \
                    m = j;                                                      \
                }                                                               \
            }                                                                   \
            gx[m] += gy[j];                                                     \
        }                                                                       \
    }

VJP(double, f64)
VJP(float, f32)
