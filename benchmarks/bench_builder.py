"""Builder graphs on the CPU, side by side with NumPy (and JAX when installed).

Run: python benchmarks/bench_builder.py
"""

from __future__ import annotations

import time

import numpy as np
from bench_graph import numpy_chain
from harness import fmt, interleaved_medians, table
from peers import load_jax

import eagle
import hawk
from eagle import _core
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm


@hawk.kernel
def scale(x: Mutable[Scalar], c: Param) -> None:
    x = x * c  # in place, as NumPy's out=


@hawk.kernel
def shift(x: Mutable[Scalar], d: Param) -> None:
    x = x + d


@hawk.kernel
def scaled(x: Scalar, c: Param) -> Scalar:
    return x * c


@hawk.kernel
def shifted(x: Scalar, d: Param) -> Scalar:
    return x + d


@hawk.kernel
def dbl(x: Scalar) -> Scalar:
    return 2.0 * x


@hawk.kernel
def below(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(s < lim))


@eagle.Graph.builder
def chain(x, length, c=0.999, d=0.001):
    g = eagle.Graph()
    for k in range(length):  # a Python loop: unrolled into `length` nodes
        if k % 2 == 0:
            scale(x, c)
        else:
            shift(x, d)
    return g


@eagle.Graph.builder
def natural_chain(x, length, c=0.999, d=0.001):
    """The chain as users write it, ``x = k(x)``: each kernel gives a new plane."""
    g = eagle.Graph()
    for k in range(length):
        x = scaled(x, c) if k % 2 == 0 else shifted(x, d)
    g.result = x
    return g


@eagle.Graph.builder
def settle(x, flag):
    g = eagle.Graph()
    for _ in range(50):
        if not flag:
            break
        x = dbl(x)
        below(x, 100.0, flag)
    g.result = x
    return g


def numpy_settle(x0, flag):
    x = x0.copy()
    for _ in range(50):
        if not flag:
            break
        np.multiply(x, 2.0, out=x)
        flag = np.sum(x < 100.0)
    return x


def jax_settle(jax, jnp, cap=50):
    """JAX's form of ``settle``: ``jit`` of a ``lax.while_loop`` that doubles until none is below 100."""

    @jax.jit
    def run(x):
        def body(state):
            x, _, turns = state
            x = 2.0 * x
            return x, jnp.sum(x < 100.0), turns + 1

        return jax.lax.while_loop(lambda s: (s[1] > 0) & (s[2] < cap), body, (x, jnp.int64(1), 0))[0]

    return run


def chains(rows):
    for n, goal in ((16, 0.09), (4 << 20, 0.3)):
        x = np.linspace(0, 1, n)
        g = chain(x, 100)
        y = np.linspace(0, 1, n)
        repeat = 101 if n < 1000 else 7
        t = interleaved_medians({"graph": g.launch, "numpy": lambda y=y: numpy_chain(y)}, repeat=repeat)
        ratio = t["graph"] / t["numpy"]
        rows.append((f"builder chain of 100 kernels, {n} samples", fmt(t["graph"]),
                     f"NumPy {fmt(t['numpy']).strip()}: ratio {ratio:.3f}x; goal <= {goal}x"))


def loops(rows):
    jax = load_jax()
    for n, goal in ((16, 0.3), (1 << 20, 0.7)):
        x0 = np.ones(n)
        flag = np.ones(1, np.uint32)
        g = settle(x0, flag)

        def replay(g=g, flag=flag):
            flag[0] = 1  # the body clears it after 7 turns
            g.launch()

        fns = {"graph": replay, "numpy": lambda x0=x0: numpy_settle(x0, 1)}
        if jax is not None:
            run, xj = jax_settle(*jax), jax[1].ones(n)
            fns["jax"] = lambda run=run, xj=xj: run(xj).block_until_ready()
        t = interleaved_medians(fns, repeat=101 if n < 1000 else 11)
        assert g.result[0] == 128.0  # seven turns: 2, 4, ... 128
        ratio = t["graph"] / t["numpy"]
        note = f"NumPy + Python loop {fmt(t['numpy']).strip()}: ratio {ratio:.3f}x; goal <= {goal}x"
        note += f"; JAX while_loop {t['jax'] / t['numpy']:.3f}x NumPy" if "jax" in t else \
            "; JAX not installed"
        rows.append((f"capped device loop, 7 of <=50 turns, {n} samples", fmt(t["graph"]), note))


def recording(rows):
    x = np.zeros(16)
    start = time.perf_counter()
    g = chain(x, 1000)
    took = time.perf_counter() - start
    rows.append(("record + build a 1,000-kernel builder graph", fmt(took),
                 f"{len(g.node_labels())} nodes; goal < 0.5 s"))


def main():
    rows = []
    chains(rows)
    loops(rows)
    recording(rows)
    table(f"builder graphs on the CPU ({_core.num_threads()} threads; medians)", rows)


if __name__ == "__main__":
    main()
