"""eagle's CUDA graphs beside CuPy eager, on a GPU (CuPy and NVRTC installed).

  python benchmarks/bench_gpu.py [--quick]

1. A 100-kernel chain (x = 1.0001 * x + 0.5, a hawk kernel) replayed as one CUDA graph, against
   the same 100 launches from CuPy per step (an ElementwiseKernel: one launch each).
2. A capped 50-turn loop as one graph (a WHILE node whose guard a kernel's reduction writes),
   against a Python loop with a read-back of the guard per turn.
3. A host node's cost per replay: a graph with a copy home, a Python host node and a copy back,
   against the same graph without the host node.

Medians of interleaved runs; each eagle figure also as a ratio to its CuPy counterpart.
Timing waits for the device at the end of every call (g.launch waits; CuPy is synchronised).
"""

from __future__ import annotations

import argparse
import sys

from harness import fmt, interleaved_medians

import eagle
import hawk
from eagle import _cuda
from eagle.graph import opaque
from hawk import Param, Scalar, UInt32

try:
    import cupy as cp
except ImportError:  # pragma: no cover - a machine without the GPU extra
    cp = None


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def halve(x: Scalar, limit: Param, flag: hawk.Mutable[UInt32]) -> Scalar:
    y = x * 0.5
    flag = hawk.math.uint32(hawk.sum(y > limit))
    return y


@eagle.Graph.builder
def chain(x, length):
    g = eagle.Graph()
    for _ in range(length):  # a Python loop: unrolled at build
        x = affine(x, 1.0001, 0.5, buffer=x)
    g.result = x
    return g


@eagle.Graph.builder
def settle(x, flag):
    g = eagle.Graph()
    for _ in range(50):  # the capped device loop: one WHILE node
        if not flag:
            break
        x = halve(x, 1.0, flag, buffer=x)
    g.result = x
    return g


def bench_chain(n: int, repeat: int) -> list[str]:
    x = cp.ones(n)
    g = chain(x, 100)
    step = cp.ElementwiseKernel("float64 a, float64 b", "float64 x", "x = a * x + b", "affine")

    def eager() -> None:
        for _ in range(100):
            step(1.0001, 0.5, x)
        cp.cuda.runtime.deviceSynchronize()

    t = interleaved_medians({"eagle": g.launch, "cupy": eager}, repeat)
    return [f"100-kernel chain, {n} samples", fmt(t["eagle"]), fmt(t["cupy"]),
            f"{t['eagle'] / t['cupy']:.2f}x"]


def bench_loop(n: int, repeat: int) -> list[str]:
    start = cp.full(n, 2.0 ** 40)  # 40 halvings to reach 1.0: the loop leaves by its guard
    x, flag = start.copy(), cp.ones(1, cp.uint32)
    g = settle(x, flag)

    def graph() -> None:
        x[...] = start
        flag[...] = 1
        g.launch()

    y = cp.empty_like(start)

    def python_loop() -> None:
        y[...] = start
        for _ in range(50):
            cp.multiply(y, 0.5, out=y)
            if not int((y > 1.0).sum()):  # the read-back: one sync per turn
                break
        cp.cuda.runtime.deviceSynchronize()

    t = interleaved_medians({"eagle": graph, "cupy": python_loop}, repeat)
    return [f"capped loop (40 turns), {n} samples", fmt(t["eagle"]), fmt(t["cupy"]),
            f"{t['eagle'] / t['cupy']:.2f}x"]


def bench_host_node(repeat: int) -> list[str]:
    d, h, back = cp.zeros(64), eagle.pinned(64), cp.zeros(64)
    with_host = eagle.Graph()
    with_host.add_node(eagle.copy(d, into=h)).add_node(opaque(lambda: None, reads={"h": h}, writes={"h": h}))
    with_host.add_node(eagle.copy(h, into=back)).build()
    without = eagle.Graph().add_node(eagle.copy(d, into=h)).add_node(eagle.copy(h, into=back)).build()
    t = interleaved_medians({"with": with_host.launch, "without": without.launch}, repeat)
    return ["host node (Python), per replay", fmt(t["with"] - t["without"]), "", ""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if cp is None or not _cuda.has_driver():
        print("bench_gpu: needs a GPU, its driver, CuPy and NVRTC (pip install \"eagle-graph[cuda12]\", or "
              "[cuda13] for a CUDA 13 driver)")
        return 1
    repeat = 7 if args.quick else 31
    rows = [bench_chain(1 << 20, repeat), bench_chain(1 << 10, repeat), bench_loop(1 << 20, repeat),
            bench_loop(1 << 10, repeat), bench_host_node(repeat)]
    print(f"{'case':44} {'eagle':>12} {'CuPy':>12} {'eagle/CuPy':>11}")
    for row in rows:
        print(f"{row[0]:44} {row[1]:>12} {row[2]:>12} {row[3]:>11}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
