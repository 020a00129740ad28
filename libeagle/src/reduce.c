/*
 * Reductions in one fixed order (DESIGN.md section 4).
 *
 * T(x[0:n]) = x[0] when n == 1, else T(x[0:h]) + T(x[h:n]) with h the
 * largest power of two below n.  Evaluated level by level: add adjacent
 * pairs, carry an odd last element up unchanged, repeat; that is the same
 * tree.  Because EAGLE_BLOCK is a power of two, T of the whole array equals
 * T of its per-block results, so blocks can be reduced on any threads and
 * combined afterwards with the same bits.  The GPU uses the same tree.
 *
 * max/min propagate NaN like NumPy; all/any give 1 or 0.  Integer sums wrap
 * (they are done in the unsigned type of the same width: no signed overflow).
 *
 * Integer operations are associative (sums modulo 2^w included), so every
 * order gives T's bits: integers are reduced by a plain loop the compiler
 * vectorises.  Only floats pay for the tree.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

int reduce_itemsize(int32_t dtype)
{
    switch (dtype) {
    case EAGLE_F64:
    case EAGLE_I64:
    case EAGLE_U64:
        return 8;
    case EAGLE_F32:
    case EAGLE_I32:
    case EAGLE_U32:
        return 4;
    case EAGLE_U8:
        return 1;
    default:
        return 0;
    }
}

/* x != x is the portable NaN test; for integers it is always false. */
#define OP_SUM(T, U, a, b) ((T)((U)(a) + (U)(b)))
#define OP_MAX(T, U, a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) >= (b) ? (a) : (b))
#define OP_MIN(T, U, a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) <= (b) ? (a) : (b))
#define OP_ALL(T, U, a, b) ((T)((a) != 0 && (b) != 0))
#define OP_ANY(T, U, a, b) ((T)((a) != 0 || (b) != 0))
/* all/any map each input to 0/1 first, so one element alone is also 0/1. */
#define LEAF_SUM(T, v) (v)
#define LEAF_MAX(T, v) (v)
#define LEAF_MIN(T, v) (v)
#define LEAF_ALL(T, v) ((T)((v) != 0))
#define LEAF_ANY(T, v) ((T)((v) != 0))

/* tree_<T>_<OP>: the tree over n values of x (1 <= n <= 2 * EAGLE_BLOCK). */
#define DEFINE_TREE(T, U, OP)                                             \
    static T tree_##T##_##OP(const T *x, int64_t n)                       \
    {                                                                     \
        T buf[EAGLE_BLOCK];                                               \
        if (n == 1)                                                       \
            return LEAF_##OP(T, x[0]);                                    \
        int64_t m = n / 2;                                                \
        for (int64_t i = 0; i < m; ++i) {                                 \
            T a = LEAF_##OP(T, x[2 * i]), b = LEAF_##OP(T, x[2 * i + 1]); \
            buf[i] = OP_##OP(T, U, a, b);                                 \
        }                                                                 \
        if (n & 1)                                                        \
            buf[m++] = LEAF_##OP(T, x[n - 1]);                            \
        while (m > 1) {                                                   \
            int64_t h = m / 2;                                            \
            for (int64_t i = 0; i < h; ++i)                               \
                buf[i] = OP_##OP(T, U, buf[2 * i], buf[2 * i + 1]);       \
            if (m & 1)                                                    \
                buf[h++] = buf[m - 1];                                    \
            m = h;                                                        \
        }                                                                 \
        return buf[0];                                                    \
    }

/* linear_<T>_<OP>: the same value as tree_<T>_<OP> for an integer type. */
#define DEFINE_LINEAR(T, U, OP)                           \
    static T tree_##T##_##OP(const T *x, int64_t n)       \
    {                                                     \
        T acc = LEAF_##OP(T, x[0]);                       \
        for (int64_t i = 1; i < n; ++i)                   \
            acc = OP_##OP(T, U, acc, LEAF_##OP(T, x[i])); \
        return acc;                                       \
    }

#define DEFINE_DISPATCH(T)                               \
    static T tree_##T(const T *x, int64_t n, int32_t op) \
    {                                                    \
        switch (op) {                                    \
        case EAGLE_SUM:                                  \
            return tree_##T##_SUM(x, n);                 \
        case EAGLE_MAX:                                  \
            return tree_##T##_MAX(x, n);                 \
        case EAGLE_MIN:                                  \
            return tree_##T##_MIN(x, n);                 \
        case EAGLE_ALL:                                  \
            return tree_##T##_ALL(x, n);                 \
        default:                                         \
            return tree_##T##_ANY(x, n);                 \
        }                                                \
    }

#define DEFINE_TREES(T, U) \
    DEFINE_TREE(T, U, SUM) \
    DEFINE_TREE(T, U, MAX) \
    DEFINE_TREE(T, U, MIN) \
    DEFINE_TREE(T, U, ALL) \
    DEFINE_TREE(T, U, ANY) \
    DEFINE_DISPATCH(T)

#define DEFINE_LINEARS(T, U) \
    DEFINE_LINEAR(T, U, SUM) \
    DEFINE_LINEAR(T, U, MAX) \
    DEFINE_LINEAR(T, U, MIN) \
    DEFINE_LINEAR(T, U, ALL) \
    DEFINE_LINEAR(T, U, ANY) \
    DEFINE_DISPATCH(T)

typedef double f64;
typedef float f32;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wfloat-equal"
DEFINE_TREES(f64, f64)
DEFINE_TREES(f32, f32)
DEFINE_LINEARS(int64_t, uint64_t)
DEFINE_LINEARS(int32_t, uint32_t)
DEFINE_LINEARS(uint32_t, uint32_t)
DEFINE_LINEARS(uint64_t, uint64_t)
DEFINE_LINEARS(uint8_t, uint8_t)
#pragma GCC diagnostic pop

#define DISPATCH(dtype, CALL) \
    switch (dtype) {          \
    case EAGLE_F64:           \
        CALL(f64);            \
        break;                \
    case EAGLE_F32:           \
        CALL(f32);            \
        break;                \
    case EAGLE_I64:           \
        CALL(int64_t);        \
        break;                \
    case EAGLE_I32:           \
        CALL(int32_t);        \
        break;                \
    case EAGLE_U32:           \
        CALL(uint32_t);       \
        break;                \
    case EAGLE_U64:           \
        CALL(uint64_t);       \
        break;                \
    default:                  \
        CALL(uint8_t);        \
        break;                \
    }

void reduce_block(const void *x, int64_t begin, int64_t end, int32_t dtype, int32_t op,
                  void *partials, int64_t block)
{
#define BLOCK_CALL(T) ((T *)partials)[block] = tree_##T((const T *)x + begin, end - begin, op)
    DISPATCH(dtype, BLOCK_CALL)
#undef BLOCK_CALL
}

EAGLE_API void eagle_reduce_block(const void *x, int64_t n, int32_t dtype, int32_t op,
                                  void *partial)
{
    reduce_block(x, 0, n, dtype, op, partial, 0);
}

/* The partials of nblocks blocks, reduced in place: the same tree,
 * EAGLE_BLOCK at a time (T over whole blocks of partials equals T over all
 * of them).  Chunk k writes p[k], which lies in a chunk already read. */
#define FINISH(T)                                                      \
    do {                                                               \
        T *p = (T *)partials;                                          \
        int64_t m = nblocks;                                           \
        while (m > EAGLE_BLOCK) {                                      \
            int64_t k = 0;                                             \
            for (int64_t b = 0; b < m; b += EAGLE_BLOCK, ++k) {        \
                int64_t e = b + EAGLE_BLOCK < m ? b + EAGLE_BLOCK : m; \
                p[k] = tree_##T(p + b, e - b, op);                     \
            }                                                          \
            m = k;                                                     \
        }                                                              \
        *(T *)out = tree_##T(p, m, op);                                \
    } while (0)

void reduce_finish(void *partials, int64_t nblocks, int32_t dtype, int32_t op, void *out)
{
    DISPATCH(dtype, FINISH)
}

void reduce_identity(void *out, int32_t dtype, int32_t op)
{
    int top = op == EAGLE_MIN, v = op == EAGLE_ALL;
    if (op == EAGLE_MAX || op == EAGLE_MIN) {
        switch (dtype) {
        case EAGLE_F64:
            *(double *)out = top ? HUGE_VAL : -HUGE_VAL;
            return;
        case EAGLE_F32:
            *(float *)out = top ? HUGE_VALF : -HUGE_VALF;
            return;
        case EAGLE_I64:
            *(int64_t *)out = top ? INT64_MAX : INT64_MIN;
            return;
        case EAGLE_I32:
            *(int32_t *)out = top ? INT32_MAX : INT32_MIN;
            return;
        case EAGLE_U64:
            *(uint64_t *)out = top ? UINT64_MAX : 0;
            return;
        case EAGLE_U32:
            *(uint32_t *)out = top ? UINT32_MAX : 0;
            return;
        default:
            *(uint8_t *)out = top ? UINT8_MAX : 0;
            return;
        }
    }
    switch (dtype) {
    case EAGLE_F64:
        *(double *)out = v;
        return;
    case EAGLE_F32:
        *(float *)out = (float)v;
        return;
    case EAGLE_I64:
    case EAGLE_U64:
        *(int64_t *)out = v;
        return;
    case EAGLE_I32:
    case EAGLE_U32:
        *(int32_t *)out = v;
        return;
    default:
        *(uint8_t *)out = (uint8_t)v;
        return;
    }
}

/* The whole fixed-order sum of x[0:n] on the calling thread. */
static int sum_serial(const void *x, int64_t n, int32_t dtype, void *out)
{
    int64_t nblocks = (n + EAGLE_BLOCK - 1) / EAGLE_BLOCK;
    void *partials = malloc((size_t)nblocks * (size_t)reduce_itemsize(dtype));
    if (!partials)
        return EAGLE_ERR_NOMEM;
    for (int64_t b = 0; b < nblocks; ++b) {
        int64_t e = (b + 1) * EAGLE_BLOCK < n ? (b + 1) * EAGLE_BLOCK : n;
        reduce_block(x, b * EAGLE_BLOCK, e, dtype, EAGLE_SUM, partials, b);
    }
    reduce_finish(partials, nblocks, dtype, EAGLE_SUM, out);
    free(partials);
    return EAGLE_OK;
}

EAGLE_API double eagle_sum_f64(const double *x, int64_t n)
{
    double out = 0.0;
    if (n > 0 && sum_serial(x, n, EAGLE_F64, &out) != EAGLE_OK)
        return __builtin_nan("");
    return out;
}

EAGLE_API float eagle_sum_f32(const float *x, int64_t n)
{
    float out = 0.0f;
    if (n > 0 && sum_serial(x, n, EAGLE_F32, &out) != EAGLE_OK)
        return __builtin_nanf("");
    return out;
}
