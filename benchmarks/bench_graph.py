"""eagle.Graph on the CPU, side by side with NumPy (and JAX when installed).

Run: python benchmarks/bench_graph.py
"""

from __future__ import annotations

import functools
import time

import numpy as np
from harness import fmt, median_time, table, two_thread_speedup
from peers import load_jax

import eagle
from eagle import _core
from eagle.graph import opaque
from eagle.native import Library, compile_library
from eagle.plan import Plan

SOURCE = r"""
#include "eagle/eagle.h"
void scale(int64_t b, int64_t e, const eagle_arg *a)
{ double *x = a[0].ptr, c = a[1].f64; for (int64_t i = b; i < e; ++i) x[i] *= c; }
void shift(int64_t b, int64_t e, const eagle_arg *a)
{ double *x = a[0].ptr, d = a[1].f64; for (int64_t i = b; i < e; ++i) x[i] += d; }
void axpy(int64_t b, int64_t e, const eagle_arg *a)
{ const double *x = a[0].ptr; double *y = a[1].ptr, c = a[2].f64;
  for (int64_t i = b; i < e; ++i) y[i] = c * x[i] + y[i]; }
"""


def plans():
    lib = Library(compile_library(SOURCE, name="bench_graph"))
    scale = Plan(lib.kernel("scale"), [("x", "readwrite"), ("c", "value")], name="scale")
    shift = Plan(lib.kernel("shift"), [("x", "readwrite"), ("d", "value")], name="shift")
    axpy = Plan(lib.kernel("axpy"), [("x", "read"), ("y", "readwrite"), ("c", "value")], name="axpy")
    return scale, shift, axpy


def chain_graph(scale, shift, x, length=100):
    g = eagle.Graph()
    for k in range(length):
        g.add(scale.bind(x, 0.999) if k % 2 == 0 else shift.bind(x, 0.001))
    return g


def numpy_chain(x, length=100, c=0.999, d=0.001):
    for k in range(length):
        if k % 2 == 0:
            np.multiply(x, c, out=x)
        else:
            np.add(x, d, out=x)


def jax_chain(jax, length=100, c=0.999, d=0.001, donate=False):
    """JAX's chain: ``jit`` of the kernels as one function (``donate``: its argument's buffer given up)."""

    @functools.partial(jax.jit, donate_argnums=(0,) if donate else ())
    def run(x):
        for k in range(length):
            x = x * c if k % 2 == 0 else x + d
        return x

    return run


def opaque_nodes(rows):
    funcs = [(lambda: None) for _ in range(100)]
    g = eagle.Graph()
    for f in funcs:
        g.add_node(opaque(f))
    g.build()
    replays = 100
    graph = median_time(lambda: g.launch(replays)) / (replays * 100)

    def loop():
        for _ in range(replays):
            for f in funcs:
                f()

    plain = median_time(loop) / (replays * 100)
    rows.append(("100 opaque no-op nodes, per node", fmt(graph), f"{graph / plain:.2f}x the Python loop "
                 f"({fmt(plain).strip()}); goal <= 1.5x"))


def chains(rows, scale, shift):
    jax = load_jax()
    for n, goal in ((16, 0.09), (4 << 20, 0.3)):
        x = np.linspace(0, 1, n)
        g = chain_graph(scale, shift, x).build()
        repeat = 200 if n < 1000 else 7
        t = median_time(g.launch, repeat=repeat)
        y = np.linspace(0, 1, n)
        t_np = median_time(lambda y=y: numpy_chain(y), repeat=repeat)
        note = f"NumPy {fmt(t_np).strip()}: ratio {t / t_np:.3f}x; goal <= {goal}x"
        if jax is not None:
            run, xj = jax_chain(jax[0]), jax[1].linspace(0, 1, n)
            t_jax = median_time(lambda run=run, xj=xj: run(xj).block_until_ready(), repeat=repeat)
            note += f"; JAX jit {t_jax / t_np:.3f}x NumPy"
        rows.append((f"chain of 100 kernels, {n} samples", fmt(t), note))


def branches(rows, scale, shift, axpy):
    n, nb, length = 1024, 8, 16
    rng = np.random.default_rng(0)

    def build():
        planes = [rng.standard_normal(n) for _ in range(nb)]
        out = np.zeros(n)
        branch_list = [[scale.bind(x, 0.999) if k % 2 == 0 else shift.bind(x, 0.001) for k in range(length)]
                       for x in planes]
        g = eagle.Graph().add_group(branch_list)
        for x in planes:
            g.add(axpy.bind(x, out, 1.0))
        return g.build(), planes, out

    before = _core.num_threads()
    _core.set_num_threads(2)
    try:
        g_tasks, planes, _ = build()
        assert g_tasks.schedule[0] == "branch_tasks", g_tasks.schedule
        t_tasks = median_time(g_tasks.launch, repeat=100)
        _core.set_num_threads(1)  # the rule picks work_share with one thread; run it on two
        g_share, _, _ = build()
        _core.set_num_threads(2)
        assert g_share.schedule[0] == "work_share"
        t_share = median_time(g_share.launch, repeat=100)
    finally:
        _core.set_num_threads(before)
    np_planes = [p.copy() for p in planes]
    np_out = np.zeros(n)

    def numpy_branches():
        for x in np_planes:
            for k in range(length):
                if k % 2 == 0:
                    np.multiply(x, 0.999, out=x)
                else:
                    np.add(x, 0.001, out=x)
        for x in np_planes:
            np_out[:] = 1.0 * x + np_out

    t_np = median_time(numpy_branches, repeat=100)
    rows.append(("8 branches x 16 kernels x 1024, branch_tasks", fmt(t_tasks),
                 f"work_share {fmt(t_share).strip()}: {t_share / t_tasks:.2f}x faster; goal >= 1.5x "
                 f"(two plain pthreads here: {two_thread_speedup():.2f}x)"))
    rows.append(("  same, whole replay vs NumPy sequential", fmt(t_tasks),
                 f"NumPy {fmt(t_np).strip()}: ratio {t_tasks / t_np:.3f}x; goal <= 0.2x"))


def big_chain(rows, scale):
    x = np.zeros(16)
    start = time.perf_counter()
    g = eagle.Graph()
    for _ in range(10_000):
        g.add(scale.bind(x, 1.0))
    added = time.perf_counter() - start
    start = time.perf_counter()
    edges = g.edges()
    derive = time.perf_counter() - start
    start = time.perf_counter()
    g.build()
    build = time.perf_counter() - start
    rows.append(("10,000-node chain: add", fmt(added), ""))
    rows.append(("10,000-node chain: edges()", fmt(derive), f"{len(edges)} edges"))
    rows.append(("10,000-node chain: build()", fmt(build), "goal < 1 s (edges + lowering)"))


def main():
    scale, shift, axpy = plans()
    rows = []
    opaque_nodes(rows)
    chains(rows, scale, shift)
    branches(rows, scale, shift, axpy)
    big_chain(rows, scale)
    table(f"eagle.Graph on the CPU ({_core.num_threads()} threads; medians)", rows)


if __name__ == "__main__":
    main()
