"""The benchmark suite in one table: eagle beside NumPy eager, and JAX, Warp (CPU) and Numba where installed.

Run: ``python benchmarks/run.py`` (or ``python -m nox -s bench``); ``--quick`` for a short
run, ``--markdown`` for the table as Markdown (the README's).

Every figure is a median of repeated runs, the competitors of one case timed
in turns in this one process (a noisy spell of a shared machine falls on all
of them alike), and each is shown with its time relative to NumPy eager
(lower is faster).  The turns are blocks of calls with a pause between
them: a library whose threads spin for a while after a call (libeagle's
team, XLA's pool) must not be timed against the next one's.  For the large
sizes the limit is memory bandwidth: the "bound" column is one read and one
write of every sample at the bandwidth a STREAM triad reaches here.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from bench_builder import chain as builder_chain
from bench_builder import numpy_settle, scale, settle, shift
from bench_graph import numpy_chain
from bench_hawk import TRIAD

import eagle
import hawk
from eagle import _core
from eagle.native import compile_library
from hawk import Param, Scalar

COMPETITORS = ("eagle", "NumPy", "JAX", "Warp", "Numba")
CHAIN = 100


@dataclass
class Row:
    case: str
    times: dict[str, float] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    bound: float | None = None


def medians(fns: dict[str, Callable[[], object]], repeat: int, rounds: int = 3) -> dict[str, float]:
    """Median seconds per call of each function: ``rounds`` turns of a block of calls each, a warm-up
    call first and a pause before it, so one competitor's idle threads are asleep when the next runs."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            time.sleep(0.05)
            fn()
            for _ in range(max(1, repeat // rounds)):
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


# ------------------------------------------------------------------ competitors, each only when it imports


def load_jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)  # float64, as every other column
    return jax, jnp


def load_numba():
    try:
        import numba
    except ImportError:
        return None
    return numba


@contextlib.contextmanager
def quiet():
    """Nothing reaches stdout or stderr, from Python or from C (Warp's messages come from both)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 1)
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def load_warp():
    try:
        with quiet():
            import warp as wp  # it says it finds no CUDA driver: the CPU is what is measured

            wp.config.quiet = True
            wp.init()
    except Exception:  # noqa: BLE001 - a Warp that cannot start on this machine is a Warp not installed
        return None
    return wp


JAX, NUMBA, WARP = load_jax(), load_numba(), load_warp()

if NUMBA is not None:

    # What a Numba user writes: one compiled loop per kernel.  (Fusing the chain per sample is
    # slower here: it is latency-bound; `parallel=True` costs more than it gives at these sizes.)
    @NUMBA.njit
    def numba_chain(x, length):
        for k in range(length):
            if k % 2 == 0:
                for i in range(x.size):
                    x[i] = x[i] * 0.999
            else:
                for i in range(x.size):
                    x[i] = x[i] + 0.001

    @NUMBA.njit
    def numba_settle(x0):
        x = x0.copy()
        for _ in range(50):
            x *= 2.0
            if np.sum(x < 100.0) == 0:
                break
        return x

    @NUMBA.njit
    def numba_fork(planes, length):
        for b in range(planes.shape[0]):
            numba_chain(planes[b], length)

if WARP is not None:
    wp = WARP

    @wp.kernel
    def warp_scale(x: wp.array(dtype=wp.float64), c: wp.float64):
        i = wp.tid()
        x[i] = x[i] * c

    @wp.kernel
    def warp_shift(x: wp.array(dtype=wp.float64), d: wp.float64):
        i = wp.tid()
        x[i] = x[i] + d

    def warp_chain(x, length):
        """Recorded launches (``record_cmd=True``): Warp's cheapest replay on the CPU."""
        with quiet():  # the first launch compiles and says so
            cmds = [wp.launch(warp_scale if k % 2 == 0 else warp_shift, dim=x.shape[0],
                              inputs=[x, wp.float64(0.999 if k % 2 == 0 else 0.001)], device="cpu",
                              record_cmd=True) for k in range(length)]

        def run():
            for cmd in cmds:
                cmd.launch()

        return run


def jax_chain(length):
    jax, _ = JAX

    @jax.jit
    def run(x):
        for k in range(length):
            x = x * 0.999 if k % 2 == 0 else x + 0.001
        return x

    return run


# ------------------------------------------------------------------ cases


def chains(rows, sizes, bandwidth, repeat):
    jitted = jax_chain(CHAIN) if JAX else None
    for n in sizes:
        row = Row(f"chain of {CHAIN} kernels, {n:,} samples")
        x = np.linspace(0, 1, n)
        g = builder_chain(x, CHAIN)
        y = np.linspace(0, 1, n)
        fns = {"eagle": g.launch, "NumPy": lambda y=y: numpy_chain(y)}
        if JAX:
            xj = JAX[1].linspace(0, 1, n)
            fns["JAX"] = lambda xj=xj: jitted(xj).block_until_ready()
            row.notes["JAX"] = "jit"
        if WARP:
            fns["Warp"] = warp_chain(wp.array(np.linspace(0, 1, n), dtype=wp.float64, device="cpu"), CHAIN)
        if NUMBA:
            z = np.linspace(0, 1, n)
            fns["Numba"] = lambda z=z: numba_chain(z, CHAIN)
            row.notes["Numba"] = "njit"
        row.times = medians(fns, repeat=repeat(n))
        if n >= 1 << 20:
            row.bound = 16 * n / bandwidth  # read and write every sample once
        rows.append(row)


def loops(rows, sizes, repeat):
    if JAX:
        jax, jnp = JAX

        @jax.jit
        def jax_settle(x):
            def body(state):
                x, _, turns = state
                x = 2.0 * x
                return x, jnp.sum(x < 100.0), turns + 1

            return jax.lax.while_loop(lambda s: (s[1] > 0) & (s[2] < 50), body, (x, jnp.int64(1), 0))[0]

    for n in sizes:
        row = Row(f"capped device loop (7 of <=50 turns), {n:,} samples")
        x0, flag = np.ones(n), np.ones(1, np.uint32)
        g = settle(x0, flag)

        def replay(g=g, flag=flag):
            flag[0] = 1  # the body clears it after 7 turns
            g.launch()

        fns = {"eagle": replay, "NumPy": lambda x0=x0: numpy_settle(x0, 1)}
        if JAX:
            xj = jnp.ones(n)
            fns["JAX"] = lambda xj=xj: jax_settle(xj).block_until_ready()
            row.notes["JAX"] = "lax.while_loop"
        if NUMBA:
            fns["Numba"] = lambda x0=x0: numba_settle(x0)
        row.times = medians(fns, repeat=repeat(n))
        assert g.result[0] == 128.0  # seven turns: 2, 4, ... 128
        rows.append(row)


def fork(rows, repeat):
    branches, length, n = 8, 16, 1024
    row = Row(f"fork of {branches} branches x {length} kernels, {n:,} samples")
    rng = np.random.default_rng(0)
    planes = [rng.standard_normal(n) for _ in range(branches)]
    g = eagle.Graph().add_group([[scale.plan(x, 0.999) if k % 2 == 0 else shift.plan(x, 0.001)
                                  for k in range(length)] for x in planes]).build()
    row.notes["eagle"] = g.schedule[0]
    np_planes = [p.copy() for p in planes]
    fns = {"eagle": g.launch, "NumPy": lambda: [numpy_chain(p, length) for p in np_planes]}
    if JAX:
        jitted = jax_chain(length)
        jax = JAX[0]
        fused = jax.jit(lambda xs: [jitted(x) for x in xs])
        xs = [JAX[1].asarray(p) for p in planes]
        fns["JAX"] = lambda: jax.block_until_ready(fused(xs))
        row.notes["JAX"] = "jit"
    if WARP:
        runs = [warp_chain(wp.array(p, dtype=wp.float64, device="cpu"), length) for p in planes]
        fns["Warp"] = lambda: [run() for run in runs]
    if NUMBA:
        stacked = np.stack(planes)
        fns["Numba"] = lambda: numba_fork(stacked, length)
    row.times = medians(fns, repeat=repeat(n))
    rows.append(row)


@hawk.kernel
def logistic(v: Scalar, a: Param) -> Scalar:
    return v + a * v * (1.0 - v)


@eagle.Graph.builder
def logistic_chain(x, length, record=False):
    g = eagle.Graph(record=record)
    for _ in range(length):  # a Python loop: `length` nodes
        x = logistic(x, 0.1)
    g.result = x
    return g


def reverse(rows, repeat):
    length, n = 20, 65536
    row = Row(f"reverse pass: forward + gradient of {length} kernels, {n:,} samples")
    if not hasattr(eagle.diff, "reverse"):
        row.notes["eagle"] = "eagle.diff.reverse not installed"
        rows.append(row)
        return
    x = np.random.default_rng(1).uniform(0.1, 0.9, n)
    ones = np.ones(n)
    gr = logistic_chain(x, length, record=True)

    def eagle_grad():
        gr()
        return eagle.diff.reverse(gr.record, {"result": ones}, wrt=("x",))["x"]

    def numpy_grad():
        vs, v = [], x
        for _ in range(length):
            vs.append(v)
            v = v + 0.1 * v * (1.0 - v)
        grad = np.ones(n)
        for v in reversed(vs):
            grad = grad * (1.0 + 0.1 * (1.0 - 2.0 * v))
        return grad

    fns = {"eagle": eagle_grad, "NumPy": numpy_grad}
    if JAX:
        jax, jnp = JAX

        def f(v):
            for _ in range(length):
                v = v + 0.1 * v * (1.0 - v)
            return jnp.sum(v)

        grad = jax.jit(jax.grad(f))
        xj = jnp.asarray(x)
        fns["JAX"] = lambda: grad(xj).block_until_ready()
        row.notes["JAX"] = "jit(grad)"
        np.testing.assert_allclose(np.asarray(grad(xj)), numpy_grad(), rtol=1e-12)
    np.testing.assert_allclose(eagle_grad(), numpy_grad(), rtol=1e-12)
    row.times = medians(fns, repeat=repeat(n))
    rows.append(row)


def build_time(rows):
    nodes = 10_000
    row = Row(f"build a {nodes:,}-node graph (record + edges + lowering)")
    x = np.zeros(16)
    builder_chain(x, 10)  # the rewrite and the kernels' compilation are not the figure

    def timed(fn):
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    row.times["eagle"] = statistics.median(timed(lambda: builder_chain(x, nodes)) for _ in range(3))
    row.notes["eagle"] = "@eagle.Graph.builder"
    if JAX:
        jnp = JAX[1]
        run = jax_chain(nodes)
        row.times["JAX"] = timed(lambda: run.lower(jnp.zeros(16)).compile())
        row.notes["JAX"] = "trace + compile"
    rows.append(row)


def stream_triad(threads: int, n: int = 1 << 24) -> float:
    """Bytes per second of a STREAM triad (a = b + s * c) over ``threads`` threads, median of 9."""
    lib = ctypes.CDLL(str(compile_library(TRIAD, name="bench_triad", extra_flags=("-pthread",))))
    lib.triad.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_double, ctypes.c_int64, ctypes.c_int]
    a, b, c = np.zeros(n), np.ones(n), np.ones(n)
    t = medians({"triad": lambda: lib.triad(a.ctypes.data, b.ctypes.data, c.ctypes.data, 3.0,
                                                          n, threads)}, repeat=9)["triad"]
    return 24 * n / t


# ------------------------------------------------------------------ the table


def fmt(seconds: float) -> str:
    for unit, scale_ in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale_:
            return f"{seconds / scale_:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def cell(row: Row, who: str) -> str:
    if who not in row.times:
        return row.notes.get(who, "") if who == "eagle" else ""
    text = fmt(row.times[who])
    if "NumPy" in row.times and who != "NumPy":
        text += f" ({row.times[who] / row.times['NumPy']:.2g}x)"
    if who in row.notes:
        text += f" {row.notes[who]}"
    return text


def machine() -> str:
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        model = names[0] if names else model
    versions = [f"NumPy {np.__version__}"]
    if JAX:
        versions.append(f"JAX {JAX[0].__version__}")
    if WARP:
        versions.append(f"Warp {WARP.config.version}")
    if NUMBA:
        versions.append(f"Numba {NUMBA.__version__}")
    return (f"{model}, {os.cpu_count()} CPUs, eagle on {_core.num_threads()} threads; "
            f"{platform.python_implementation()} {platform.python_version()}, {', '.join(versions)}")


def print_table(rows: list[Row], markdown: bool, bandwidth: float) -> None:
    columns = [c for c in COMPETITORS if any(c in r.times for r in rows)] + ["bound"]
    cells = [[r.case] + [cell(r, c) for c in columns[:-1]] + [fmt(r.bound) if r.bound else ""] for r in rows]
    head = ["case", *columns]
    print(f"\n{machine()}; STREAM triad {bandwidth / 1e9:.1f} GB/s")
    print("Medians; (Nx) is the time relative to NumPy eager, lower is faster; bound: one read and one "
          "write of every sample at the triad's bandwidth.\n")
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for line in cells:
            print("| " + " | ".join(line) + " |")
        return
    widths = [max(len(line[i]) for line in [head, *cells]) for i in range(len(head))]
    for line in [head, *cells]:
        print("  ".join(text.ljust(w) for text, w in zip(line, widths, strict=True)).rstrip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no 4M-sample chain")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args()
    sizes = [16, 1024, 65536] + ([] if args.quick else [4 << 20])

    def repeat(n):
        base = 201 if n <= 1024 else 51 if n <= 65536 else 9
        return max(5, base // 4) if args.quick else base

    start = time.perf_counter()
    bandwidth = stream_triad(_core.num_threads())
    rows: list[Row] = []
    chains(rows, sizes, bandwidth, repeat)
    loops(rows, [16, 1 << 20], repeat)
    fork(rows, repeat)
    reverse(rows, repeat)
    build_time(rows)
    print_table(rows, args.markdown, bandwidth)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
