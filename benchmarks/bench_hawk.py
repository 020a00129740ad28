"""hawk kernels on the CPU, side by side with NumPy and a STREAM triad in C.

Run: python benchmarks/bench_hawk.py
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
from harness import fmt, interleaved_medians, median_time, table
from limits import TRIAD

import eagle
import hawk
from eagle import _core
from eagle.native import compile_library
from hawk import Param, Scalar

N = 4 << 20


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def inc(x: Scalar) -> Scalar:
    return x + 1.0


def eager_overhead(rows):
    x = np.ones(1)
    t_hawk = median_time(lambda: inc(x), repeat=31, number=2000)
    t_np = median_time(lambda: np.add(x, 1.0), repeat=31, number=2000)
    rows.append(("eager call, 1 sample", fmt(t_hawk),
                 f"np.add {fmt(t_np).strip()}: {t_hawk / t_np:.2f}x; goal <= 3x"))


def bandwidth(rows):
    threads = _core.num_threads()
    x = np.random.default_rng(0).standard_normal(N)
    out, tmp = np.empty(N), np.empty(N)
    graph = eagle.Graph().add(affine.plan(x, 2.0, 1.0, buffer=out)).build()
    lib = ctypes.CDLL(str(compile_library(TRIAD, name="bench_triad", extra_flags=("-pthread",))))
    lib.triad.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_double, ctypes.c_int64, ctypes.c_int]
    a, b, c = np.zeros(N), np.ones(N), np.ones(N)

    def numpy_affine():
        np.multiply(x, 2.0, out=tmp)
        np.add(tmp, 1.0, out=tmp)

    t = interleaved_medians({
        "graph": graph.launch, "eager": lambda: affine(x, 2.0, 1.0), "numpy": numpy_affine,
        "numpy_alloc": lambda: 2.0 * x + 1.0,
        "triad": lambda: lib.triad(a.ctypes.data, b.ctypes.data, c.ctypes.data, 3.0, N, threads)})
    gbs, gbs_triad = 16 * N / t["graph"] / 1e9, 24 * N / t["triad"] / 1e9
    rows.append((f"a*x+b, {N} float64, graph replay", fmt(t["graph"]),
                 f"NumPy (2 ufuncs, out=) {fmt(t['numpy']).strip()}: {t['numpy'] / t['graph']:.2f}x faster; "
                 "goal >= 1x"))
    rows.append(("  same, bandwidth", f"{gbs:7.1f} GB/s",
                 f"C triad on {threads} threads {gbs_triad:.1f} GB/s: {gbs / gbs_triad:.0%}; goal >= 80%"))
    rows.append(("  same, eager call (allocates its output)", fmt(t["eager"]),
                 f"NumPy 2.0 * x + 1.0 {fmt(t['numpy_alloc']).strip()}: "
                 f"{t['numpy_alloc'] / t['eager']:.2f}x faster"))


def compile_times(rows):
    source = textwrap.dedent("""
        import time, numpy as np, hawk
        from hawk import Scalar, Param
        @hawk.kernel
        def fresh(x: Scalar, a: Param) -> Scalar:
            return a * x * x + 0.5
        start = time.perf_counter()
        fresh(np.ones(8), 2.0)
        print(time.perf_counter() - start)
    """)
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as folder:
        script = os.path.join(folder, "first_call.py")
        with open(script, "w") as f:
            f.write(source)
        env = {**os.environ, "EAGLE_CACHE_DIR": cache}
        cold = [float(subprocess.run([sys.executable, script], env=env, capture_output=True, text=True,
                                     check=True).stdout) for _ in range(1)]
        warm = sorted(float(subprocess.run([sys.executable, script], env=env, capture_output=True,
                                           text=True, check=True).stdout) for _ in range(5))
    rows.append(("first call, empty cache (lower + compile)", fmt(cold[0]), ""))
    rows.append(("first call in a new process, warm cache", fmt(warm[2]), "median of 5"))


def main():
    rows = []
    start = time.perf_counter()
    eager_overhead(rows)
    bandwidth(rows)
    compile_times(rows)
    table(f"hawk on the CPU ({_core.num_threads()} threads; medians; {time.perf_counter() - start:.0f} s)",
          rows)


if __name__ == "__main__":
    main()
