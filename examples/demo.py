"""eagle's demo: a 100-kernel step recorded once as an eagle.Graph, replayed natively, beside NumPy.

The graph derives its own edges from what each plan reads and writes, and
build() lowers it to libeagle's executor: a replay is one native call with
the GIL released, the kernel chain block-fused so that a block of samples is
carried through all 100 kernels while it is in cache, then a fixed-order sum.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

import eagle
from eagle import _core
from eagle.native import Library, compile_library
from eagle.plan import Plan

KERNELS = r"""
#include "eagle/eagle.h"
void scale(int64_t b, int64_t e, const eagle_arg *a)
{ double *x = a[0].ptr, c = a[1].f64; for (int64_t i = b; i < e; ++i) x[i] *= c; }
void shift(int64_t b, int64_t e, const eagle_arg *a)
{ double *x = a[0].ptr, d = a[1].f64; for (int64_t i = b; i < e; ++i) x[i] += d; }
"""
STEPS = 100


def record(lib: Library, x: np.ndarray, total: np.ndarray) -> eagle.Graph:
    """x = x*c, x = x+d, ... 100 kernels, then total = sum(x) in the fixed order."""
    scale = Plan.from_library(lib, "scale", [("x", "readwrite"), ("c", "value")])
    shift = Plan.from_library(lib, "shift", [("x", "readwrite"), ("d", "value")])
    g = eagle.Graph()
    for k in range(STEPS):
        g.add(scale.bind(x, 0.999) if k % 2 == 0 else shift.bind(x, 0.001))
    g.add_node(eagle.reduce(x, total), name="total")
    return g.build()


def numpy_step(x: np.ndarray) -> None:
    for k in range(STEPS):
        if k % 2 == 0:
            np.multiply(x, 0.999, out=x)
        else:
            np.add(x, 0.001, out=x)


def median_seconds(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    lib = Library(compile_library(KERNELS, name="demo"))
    print(f"eagle demo: a {STEPS}-kernel step, recorded once, replayed natively "
          f"({_core.num_threads()} host threads)\n")
    print(f"{'samples':>9}  {'eagle replay':>13}  {'NumPy, 100 ufuncs':>18}  {'ratio':>6}  same bits")
    for n in (16, 1 << 20):
        start = np.linspace(0.0, 1.0, n)
        x, total = start.copy(), np.zeros(1)
        graph = record(lib, x, total)
        graph.launch()
        reference = start.copy()
        numpy_step(reference)
        same = np.array_equal(x, reference)
        repeat = 200 if n < 1000 else 10
        t_eagle = median_seconds(graph.launch, repeat)
        t_numpy = median_seconds(lambda r=reference: numpy_step(r), repeat)
        print(f"{n:>9}  {t_eagle * 1e6:>10.1f} us  {t_numpy * 1e6:>15.1f} us  "
              f"{t_eagle / t_numpy:>5.2f}x  {same}")
    print(f"\n{graph!r}: {len(graph.edges())} derived edges, every stage {set(graph.schedule)}")
    print(f"last replay's fixed-order sum of x over {n} samples: {total[0]!r}")


if __name__ == "__main__":
    main()
