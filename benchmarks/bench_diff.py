"""Reverse passes (eagle.diff) beside the forward replay they reverse, and beside NumPy by hand.

Three graphs: the issue's 20-kernel chain ``x = scale(x, c); x = shift(x, d)``
at 65,536 samples (``wrt`` its argument), a chain of 100 hawk kernels, and a
capped device loop that runs 50 turns.  For each: the recorded forward
replay, the reverse pass (``eagle.diff.reverse``, the whole call), its native
program alone (goal: <= 1.5x the forward), the same pass with every kernel
reversed on its own (``fuse=False``), the same gradient written by hand in
NumPy (forward keeping every intermediate, then the backward sweep), and,
for the loop, the memory the recorded run keeps.

Last, the memory a recorded forward holds (peak resident growth over the
input, in a fresh process each): run.py's 20-kernel logistic chain, after
its recorded runs and after a reverse pass too.  A recorded graph fuses:
its runs keep in registers what the reverse recomputes, and store the rest.

Run: python benchmarks/bench_diff.py
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from bench_builder import scaled as scale  # the chain: x = scale(x, c); x = shift(x, d)
from bench_builder import shifted as shift
from harness import fmt, interleaved_medians, table
from run import REVERSE, logistic_chain, resident

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
def chain20(x, record=False):
    g = eagle.Graph(record=record)
    for _ in range(10):
        x = scale(x, 1.0001)
        x = shift(x, 0.25)
    g.result = x
    return g


def numpy_chain20_gradient(x, seed):
    for _ in range(10):  # the forward, for its cost (its values carry no derivative)
        x = x * 1.0001 + 0.25
    return seed * 1.0001 ** 10


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


def measure(name, build, arrays, numpy_gradient, rows, reset=None, repeat=None):
    n = arrays["x"].size
    g = build(**{k: v.copy() for k, v in arrays.items()}, record=True)
    state = extend.state(g)["names"].arguments  # the builder's arrays of the arguments

    def forward():
        if reset:
            reset(state)
        g.launch()

    forward()
    seed = np.linspace(0.5, 1.5, n)

    def backward(fuse=True):
        return eagle.diff.reverse(g.record, {"result": seed}, wrt=("x",), fuse=fuse)

    grads = backward()["x"]
    np.testing.assert_allclose(grads, numpy_gradient(arrays["x"], seed), rtol=1e-9)
    np.testing.assert_array_equal(grads, backward(fuse=False)["x"])
    passes = {key[-1]: p.program for key, p in g.record._passes.items()}  # fuse -> its native program
    t = interleaved_medians({"forward": forward, "reverse": backward, "program": passes[True].run,
                             "unfused": lambda: backward(fuse=False), "numpy": lambda: numpy_gradient(
                                 arrays["x"], seed)}, repeat=repeat or (31 if n < 100_000 else 7))
    rows.append((f"{name}, {n:,} samples: forward replay", fmt(t["forward"]),
                 "the recorded graph, g.launch()"))
    rows.append((f"{name}, {n:,} samples: reverse pass", fmt(t["reverse"]),
                 f"{t['reverse'] / t['forward']:.2f}x the forward; NumPy by hand {fmt(t['numpy']).strip()} "
                 f"({t['reverse'] / t['numpy']:.2f}x)"))
    rows.append((f"{name}, {n:,} samples: its program alone", fmt(t["program"]),
                 f"{t['program'] / t['forward']:.2f}x the forward (goal <= 1.5x); "
                 f"{passes[True].stats()['barriers']} barriers"))
    rows.append((f"{name}, {n:,} samples: reverse, unfused", fmt(t["unfused"]),
                 f"{t['unfused'] / t['forward']:.2f}x the forward: each kernel reversed on its own "
                 f"(fuse=False, same bits)"))
    return g


def main():
    rows = []
    x = np.random.default_rng(0).uniform(0.5, 1.0, 65_536)
    measure("chain of 20 kernels", chain20, {"x": x}, numpy_chain20_gradient, rows, repeat=101)
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
    for n in (65_536, 1 << 20):
        done = subprocess.run([sys.executable, __file__, "--memory", str(n)], capture_output=True, text=True,
                              check=True)
        forward, both = map(int, done.stdout.split()[-2:])
        rows.append((f"recorded chain of {REVERSE[0]} kernels, {n:,} samples: memory held",
                     f"{forward / 1e6:.1f} MB", f"{forward / (8 * n):.1f} planes after the recorded runs; "
                     f"{both / (8 * n):.1f} with the reverse pass's arrays"))
    table(f"eagle.diff reverse passes on the CPU ({_core.num_threads()} threads; medians)", rows)


def memory_child(n: int) -> None:
    """Peak resident growth over the input of the recorded chain's runs, then of a reverse pass too."""
    x = np.random.default_rng(1).uniform(0.1, 0.9, n)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak so far (imports, compilation) is not the graph's
    before = resident()[0]
    g = logistic_chain(x, REVERSE[0], record=True)
    for _ in range(3):
        g()
    forward = resident()[1] - before
    eagle.diff.reverse(g.record, {"result": np.ones(n)}, wrt=("x",))
    print(forward, resident()[1] - before)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--memory"]:
        memory_child(int(sys.argv[2]))
    else:
        main()
