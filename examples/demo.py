"""eagle's demo: a 100-kernel step recorded once, replayed natively, beside NumPy.

What eagle can show so far is its core: libeagle's executor replaying a
recorded program of native per-sample kernels in one call with the GIL
released, block-fused so that a block of samples is carried through the
whole chain while it is in cache, with a fixed-order sum at the end.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from eagle import _core
from eagle._program import Program
from eagle.native import Library, compile_library

KERNELS = r"""
#include "eagle/eagle.h"
void scale(int64_t b, int64_t e, const eagle_arg *a)
{ double *x = a[0].ptr, c = a[1].f64; for (int64_t i = b; i < e; ++i) x[i] *= c; }
void shift(int64_t b, int64_t e, const eagle_arg *a)
{ double *x = a[0].ptr, d = a[1].f64; for (int64_t i = b; i < e; ++i) x[i] += d; }
"""
STEPS = 100


def record(lib: Library, x: np.ndarray, total: np.ndarray) -> Program:
    """x = x*c, x = x+d, ... 100 kernels, then total = sum(x) in the fixed order."""
    p = Program().stage()
    for k in range(STEPS):
        name, value = ("scale", 0.999) if k % 2 == 0 else ("shift", 0.001)
        p.kernel(lib.kernel(name), [x, value], x.size, accesses=[(x, "readwrite")])
    return p.reduce(x, total).finalize()


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
        program = record(lib, x, total)
        program.run()
        reference = start.copy()
        numpy_step(reference)
        same = np.array_equal(x, reference)
        repeat = 200 if n < 1000 else 10
        t_eagle = median_seconds(program.run, repeat)
        t_numpy = median_seconds(lambda r=reference: numpy_step(r), repeat)
        print(f"{n:>9}  {t_eagle * 1e6:>10.1f} us  {t_numpy * 1e6:>15.1f} us  "
              f"{t_eagle / t_numpy:>5.2f}x  {same}")
    print(f"\nlast replay's fixed-order sum of x over {n} samples: {total[0]!r}")


if __name__ == "__main__":
    main()
