"""Fused kernels: the 100-kernel chain written the natural way, fused and not, beside NumPy.

Run: python benchmarks/bench_fusion.py

The chain is ``x = scale(x, 1.0001); x = shift(x, 0.25)`` fifty times in a builder (every
output a new temporary: the functional form), against NumPy eager with ``out=`` on one
array.  Each graph replays k times per ``g.launch(k)`` (the native run) and once per
``g.launch()`` (with the Python around it), timed in turns with NumPy (medians of
interleaved rounds).  Then the build of the 10,000-node chain of
bench_build.py, fused and not.
"""

from __future__ import annotations

import os

import numpy as np
from bench_build import medians_after_collect
from bench_builder import chain as in_place_chain
from harness import fmt, interleaved_medians, table

import eagle
import hawk
from hawk import Param, Scalar

SIZES = (16, 1024, 65_536, 1 << 20)


@hawk.kernel
def scale(x: Scalar, a: Param) -> Scalar:
    return x * a


@hawk.kernel
def shift(x: Scalar, b: Param) -> Scalar:
    return x + b


@eagle.Graph.builder
def natural(x):
    g = eagle.Graph()
    for _ in range(50):
        x = scale(x, 1.0001)
        x = shift(x, 0.25)
    g.result = x
    return g


def numpy_chain(x: np.ndarray, out: np.ndarray) -> None:
    np.multiply(x, 1.0001, out=out)
    np.add(out, 0.25, out=out)
    for _ in range(49):
        np.multiply(out, 1.0001, out=out)
        np.add(out, 0.25, out=out)


def built(fuse: bool, build: object) -> object:
    os.environ["EAGLE_FUSE"] = "1" if fuse else "0"
    try:
        return build()
    finally:
        del os.environ["EAGLE_FUSE"]


def timings(n: int) -> dict[str, float]:
    """Seconds per replay: NumPy, fused and unfused replays inside one launch(k) (the native run),
    and a fused replay per launch() call (the Python around it too)."""
    x, out = np.random.default_rng(0).random(n), np.empty(n)
    fused, unfused = built(True, lambda: natural(x)), built(False, lambda: natural(x))
    assert fused().tobytes() == unfused().tobytes()
    k = max(1, 100_000 // max(n, 1000))

    def numpy_k() -> None:
        for _ in range(k):
            numpy_chain(x, out)

    t = interleaved_medians({"numpy": numpy_k, "fused": lambda: fused.launch(k),
                             "unfused": lambda: unfused.launch(k), "call": fused.launch},
                            repeat=31 if n <= 65_536 else 9)
    return {name: t[name] / (1 if name == "call" else k) for name in t}


def main() -> None:
    rows = []
    for n in SIZES:
        t = timings(n)
        rows.append((f"n = {n:>9,}: NumPy out=", fmt(t["numpy"]), ""))
        for name, what in (("fused", "eagle, fused"), ("unfused", "eagle, unfused"),
                           ("call", "eagle, fused, one launch() per replay")):
            rows.append((f"  {what}", fmt(t[name]), f"{t[name] / t['numpy']:.3f} of NumPy"))
    table("100-kernel functional chain, per replay (medians of interleaved rounds)", rows)
    x = np.zeros(16)
    builds = []
    for fuse in (True, False):
        wall, cpu = medians_after_collect(lambda fuse=fuse: built(fuse, lambda: in_place_chain(x, 10_000)), 5)
        builds.append((f"record + build, 10,000-node chain, fused {fuse}", fmt(wall), f"CPU {fmt(cpu)}"))
    table("building", builds)


if __name__ == "__main__":
    main()
