"""eagle's demo: a simulation step written once in plain Python, replayed natively, beside NumPy.

A batch of damped oscillators is integrated until every one has come to
rest (at most 2,000 steps): a capped *device* loop whose guard a hawk
kernel's cross-sample reduction writes, so the loop runs where the data is,
with no Python per step.  Then a fixed-order energy sum.  The NumPy version
does the same arithmetic with a Python loop; the demo prints both times and
checks that the bits agree.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from numpy.typing import NDArray

import eagle
import hawk
from hawk import Mutable, Param, Scalar, UInt32

N = 4096
DT, K, C, REST = 0.01, 4.0, 0.5, 1e-3


@hawk.kernel
def advance(x: Mutable[Scalar], v: Mutable[Scalar], dt: Param, k: Param, c: Param) -> None:
    v = v + dt * (-k * x - c * v)  # semi-implicit Euler
    x = x + dt * v


@hawk.kernel
def moving(x: Scalar, v: Scalar, rest: Param, flag: Mutable[UInt32]) -> None:
    flag = hawk.math.uint32(hawk.sum(abs(v) > rest or abs(x) > rest))


@hawk.kernel
def energy(x: Scalar, v: Scalar, k: Param) -> Scalar:
    return hawk.sum(0.5 * v * v + 0.5 * k * x * x)


@eagle.Graph.builder
def settle(x: NDArray[np.float64], v: NDArray[np.float64],
           flag: NDArray[np.uint32]) -> eagle.Graph[NDArray[np.float64]]:
    g = eagle.Graph[NDArray[np.float64]]()  # what g() returns: the energy
    for _ in range(2000):  # a capped device loop: at most 2,000 steps ...
        if not flag:  # ... leaving when no oscillator moves
            break
        advance(x, v, DT, K, C)
        moving(x, v, REST, flag)
    g.result = energy(x, v, K)
    return g


def numpy_settle(x: NDArray[np.float64], v: NDArray[np.float64]) -> float:
    for _ in range(2000):
        v = v + DT * (-K * x - C * v)
        x = x + DT * v
        if not np.sum((np.abs(v) > REST) | (np.abs(x) > REST)):
            break
    return float(hawk.sum(0.5 * v * v + 0.5 * K * x * x))  # eagle's fixed order, in NumPy


def main() -> None:
    rng = np.random.default_rng(0)
    x0, v0 = rng.uniform(-1, 1, N), rng.uniform(-1, 1, N)
    x, v, flag = x0.copy(), v0.copy(), np.ones(1, np.uint32)

    start = time.perf_counter()
    g = settle(x, v, flag)  # records and builds: nothing runs yet
    built = time.perf_counter() - start

    def replay() -> float:
        x[:], v[:], flag[0] = x0, v0, 1
        start = time.perf_counter()
        g()
        return time.perf_counter() - start

    def numpy() -> float:
        start = time.perf_counter()
        numpy_settle(x0, v0)
        return time.perf_counter() - start

    t_graph = statistics.median(replay() for _ in range(7))
    t_numpy = statistics.median(numpy() for _ in range(7))
    print(f"eagle: {N} damped oscillators until all rest, a builder graph on the CPU "
          f"({eagle.get_num_threads()} threads)")
    print(f"  recorded and built in {built * 1e3:.1f} ms: {g!r}, schedule {g.schedule}")
    print(f"  replay (one native call): {t_graph * 1e3:8.2f} ms")
    print(f"  NumPy, Python loop:       {t_numpy * 1e3:8.2f} ms   eagle/NumPy = {t_graph / t_numpy:.3f}")
    replay()
    energy_ = g.result[0]  # typed: g.result (what g() returns) is an NDArray[np.float64]
    same = energy_ == numpy_settle(x0, v0)
    print(f"  energy {energy_:.6e}; the same bits as NumPy: {same}")
    if not same:
        raise SystemExit("eagle and NumPy disagree")


if __name__ == "__main__":
    main()
