/* Native kernels the Python graphs (eagle.plan.Plan) and the C++ programs both call, so that the
 * two can be compared bit for bit on the very same code. */
#include "eagle/eagle.h"

/* x[i] *= c */
void scale(int64_t b, int64_t e, const eagle_arg *a)
{
    double *x = a[0].ptr, c = a[1].f64;
    for (int64_t i = b; i < e; ++i)
        x[i] *= c;
}

/* x[i] += d */
void shift(int64_t b, int64_t e, const eagle_arg *a)
{
    double *x = a[0].ptr, d = a[1].f64;
    for (int64_t i = b; i < e; ++i)
        x[i] += d;
}

/* y[i] = c * x[i] + y[i] */
void axpy(int64_t b, int64_t e, const eagle_arg *a)
{
    const double *x = a[0].ptr;
    double *y = a[1].ptr, c = a[2].f64;
    for (int64_t i = b; i < e; ++i)
        y[i] = c * x[i] + y[i];
}

/* out[i] = a few flops of x[i], so that results are not trivial */
void mix(int64_t b, int64_t e, const eagle_arg *a)
{
    const double *x = a[0].ptr;
    double *out = a[1].ptr;
    for (int64_t i = b; i < e; ++i)
        out[i] = (x[i] * 1.0000001 + 0.5) / (1.0 + x[i] * x[i]);
}

/* cell[0] -= 1, stopping at 0 (n = 1) */
void decrement(int64_t b, int64_t e, const eagle_arg *a)
{
    (void)b;
    (void)e;
    unsigned *cell = a[0].ptr;
    if (cell[0])
        cell[0] -= 1;
}
