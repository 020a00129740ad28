"""Reverse passes (eagle.diff) beside the forward replay they reverse, and beside NumPy by hand.

Two graphs: a chain of 100 hawk kernels, and a capped device loop that runs
50 turns.  For each: the recorded forward replay, the reverse pass, their
ratio (goal: reverse <= 3x forward), the same gradient written by hand in
NumPy (forward keeping every intermediate, then the backward sweep), and,
for the loop, the memory the recorded run keeps.

Run: python benchmarks/bench_diff.py
"""

from __future__ import annotations

import numpy as np
from harness import fmt, interleaved_medians, table

import eagle
import eagle.diff
import hawk
from eagle import _core, extend
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm


@hawk.kernel
def bend(x: Scalar) -> Scalar:
    return 1.0001 * x + 1e-4 * x * x


@hawk.kernel
def relax(x: Scalar, y: Scalar) -> Scalar:
    return 0.9 * x + 0.1 * y


@hawk.kernel
def below(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(s < lim))


@eagle.Graph.builder
def chain(x, record=False):
    g = eagle.Graph(record=record)
    for _ in range(100):  # a Python loop: 100 nodes
        x = bend(x)
    g.result = x
    return g


@eagle.Graph.builder
def loop(x, flag, record=False):
    g = eagle.Graph(record=record)
    y = bend(x)
    for _ in range(50):  # capped; the guard stays set here, so every run takes all 50 turns
        if not flag:
            break
        x = bend(relax(x, y))
        below(x, 1e30, flag)
    g.result = x
    return g


def numpy_chain_gradient(x, seed):
    xs = [x]
    for _ in range(100):
        xs.append(1.0001 * xs[-1] + 1e-4 * xs[-1] * xs[-1])
    g = seed.copy()
    for v in reversed(xs[:-1]):
        g *= 1.0001 + 2e-4 * v
    return g


def numpy_loop_gradient(x, seed):
    y = 1.0001 * x + 1e-4 * x * x
    states, s = [], x.copy()
    for _ in range(50):
        r = 0.9 * s + 0.1 * y
        states.append(r)
        s = 1.0001 * r + 1e-4 * r * r
    gs, gy = seed.copy(), np.zeros_like(x)
    for r in reversed(states):
        gr = gs * (1.0001 + 2e-4 * r)
        gs, gy = 0.9 * gr, gy + 0.1 * gr
    return gs + gy * (1.0001 + 2e-4 * x)


def measure(name, build, arrays, numpy_gradient, rows, reset=None):
    n = arrays["x"].size
    g = build(**{k: v.copy() for k, v in arrays.items()}, record=True)
    state = extend.state(g)["names"].arguments  # the builder's arrays of the arguments

    def forward():
        if reset:
            reset(state)
        g.launch()

    forward()
    seed = np.linspace(0.5, 1.5, n)

    def backward():
        return eagle.diff.reverse(g.record, {"result": seed}, wrt=("x",))

    grads = backward()["x"]
    np.testing.assert_allclose(grads, numpy_gradient(arrays["x"], seed), rtol=1e-9)
    t = interleaved_medians({"forward": forward, "reverse": backward,
                             "numpy": lambda: numpy_gradient(arrays["x"], seed)},
                            repeat=31 if n < 100_000 else 7)
    ratio = t["reverse"] / t["forward"]
    rows.append((f"{name}, {n:,} samples: forward replay", fmt(t["forward"]),
                 "the recorded graph, g.launch()"))
    rows.append((f"{name}, {n:,} samples: reverse pass", fmt(t["reverse"]),
                 f"{ratio:.2f}x the forward (goal <= 3x); NumPy by hand {fmt(t['numpy']).strip()} "
                 f"({t['reverse'] / t['numpy']:.2f}x)"))
    return g


def main():
    rows = []
    for n in (4096, 1 << 18):
        x = np.random.default_rng(0).uniform(0.5, 1.0, n)
        measure("chain of 100 kernels", chain, {"x": x}, numpy_chain_gradient, rows)
    for n in (4096, 1 << 18):
        x = np.random.default_rng(0).uniform(0.5, 1.0, n)

        def reset(state):
            state["flag"][0] = 1

        g = measure("loop of 50 turns", loop, {"x": x, "flag": np.ones(1, np.uint32)}, numpy_loop_gradient,
                    rows, reset)
        kept = g.record.memory()
        turns = g.record._forward.tapes[0].turns
        per_turn = x.nbytes + 4  # the carried state: x and the guard cell
        rows.append((f"loop of 50 turns, {n:,} samples: memory kept", f"{kept['loops'] / 2**20:.2f} MiB",
                     f"{turns} turns x {per_turn:,} bytes of carried state = "
                     f"{turns * per_turn / 2**20:.2f} MiB; snapshots {kept['snapshots'] / 2**20:.2f} MiB"))
    table(f"eagle.diff reverse passes on the CPU ({_core.num_threads()} threads; medians)", rows)


if __name__ == "__main__":
    main()
