"""Fixtures: small C kernels compiled in the test, as a plugin would bring its own."""

from __future__ import annotations

import pytest

from eagle.native import Library, compile_library

KERNELS_C = r"""
#include <stdatomic.h>
#include "eagle/eagle.h"

/* x[i] *= c */
void scale(int64_t b, int64_t e, const eagle_arg *a)
{
    double *x = a[0].ptr, c = a[1].f64;
    for (int64_t i = b; i < e; ++i) x[i] *= c;
}

/* x[i] += d */
void shift(int64_t b, int64_t e, const eagle_arg *a)
{
    double *x = a[0].ptr, d = a[1].f64;
    for (int64_t i = b; i < e; ++i) x[i] += d;
}

/* y[i] = a * x[i] + y[i] */
void axpy(int64_t b, int64_t e, const eagle_arg *a)
{
    const double *x = a[0].ptr;
    double *y = a[1].ptr, c = a[2].f64;
    for (int64_t i = b; i < e; ++i) y[i] = c * x[i] + y[i];
}

/* out[i] = src[i] (the planes may be shifted views of one array) */
void copy_k(int64_t b, int64_t e, const eagle_arg *a)
{
    const double *src = a[0].ptr;
    double *out = a[1].ptr;
    for (int64_t i = b; i < e; ++i) out[i] = src[i];
}

/* out[i] = sin-free mix of x[i]: a few flops so results are not trivial */
void mix(int64_t b, int64_t e, const eagle_arg *a)
{
    const double *x = a[0].ptr;
    double *out = a[1].ptr;
    for (int64_t i = b; i < e; ++i) out[i] = (x[i] * 1.0000001 + 0.5) / (1.0 + x[i] * x[i]);
}

/* calls[0] += 1 per call (counts block calls) */
void count_calls(int64_t b, int64_t e, const eagle_arg *a)
{
    (void)b; (void)e;
    atomic_fetch_add((_Atomic int64_t *)a[0].ptr, 1);
}

/* cell[0] = cell[0] - 1, stopping at 0 (n = 1) */
void decrement(int64_t b, int64_t e, const eagle_arg *a)
{
    (void)b; (void)e;
    unsigned *cell = a[0].ptr;
    if (cell[0]) cell[0] -= 1;
}

void noop(int64_t b, int64_t e, const eagle_arg *a) { (void)b; (void)e; (void)a; }
"""


@pytest.fixture(scope="session")
def kernels() -> Library:
    """The test kernels above, compiled once per session."""
    return Library(compile_library(KERNELS_C, name="test_kernels"))


def _fixed_order_sum(values: list[float]) -> float:
    if len(values) == 1:
        return values[0]
    h = 1
    while h * 2 < len(values):
        h *= 2
    return _fixed_order_sum(values[:h]) + _fixed_order_sum(values[h:])


@pytest.fixture(scope="session")
def fixed_order_sum():
    """The fixed order T of DESIGN.md section 4 in pure Python (binary64): the reduction oracle."""
    return _fixed_order_sum


class Plans:
    """Plans over the test kernels, with the parameter roles the graph tests use."""

    def __init__(self, lib: Library) -> None:
        from eagle.plan import Plan

        self.scale = Plan(lib.kernel("scale"), [("x", "readwrite"), ("c", "value")], name="scale")
        self.shift = Plan(lib.kernel("shift"), [("x", "readwrite"), ("d", "value")], name="shift")
        self.axpy = Plan(lib.kernel("axpy"), [("x", "read"), ("y", "readwrite"), ("c", "value")],
                         name="axpy")
        self.copy_k = Plan(lib.kernel("copy_k"), [("src", "read"), ("out", "write")], name="copy_k")
        self.mix = Plan(lib.kernel("mix"), [("x", "read"), ("out", "write")], name="mix")
        self.decrement = Plan(lib.kernel("decrement"), [("cell", "readwrite")], name="decrement",
                              per_sample=False)


@pytest.fixture(scope="session")
def plans(kernels: Library) -> Plans:
    """eagle.plan.Plan objects over the test kernels."""
    return Plans(kernels)
