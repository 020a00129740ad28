"""Table gathers, the sample index and Scatter sums in the GPU lowering: the CPU's bits.

On a machine with a GPU these run on it; elsewhere on the driver emulation (tests/fakecuda).
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle

hawk = pytest.importorskip("hawk")
pytest.importorskip("eagle.builder")
from hawk import Int32, Param, Scalar, Scatter, Table  # noqa: E402

N = 2000


@hawk.kernel
def wave(u: Scalar, prev: Scalar, t: Table.clamp, c: Param) -> Scalar:
    i, j = hawk.sample2(50)
    at = i * 50 + j  # a flat Table: device arrays are read as they are (no reshape)
    lap = t[at - 50] + t[at + 50] + t[at - 1] + t[at + 1] - 4.0 * u
    return 2.0 * u - prev + c * lap


@hawk.kernel
def damped(x: Scalar) -> Scalar:
    return 0.999 * x


@hawk.kernel
def checked(x: Scalar, w: Table, k: Int32) -> Scalar:
    return x * w[k]


@hawk.kernel
def histogram(x: Scalar, k: Int32, h: Scatter.clamp):
    if x > 0.2:
        h[k] += x * x
    h[k + 1] += 0.5 * x


@hawk.kernel
def placed(x: Scalar, k: Int32, y: Scatter.wrap):
    y[k] = x


@eagle.Graph.builder
def waves(u, prev):
    g = eagle.Graph()
    for _ in range(3):
        u, prev = damped(wave(u, prev, u, 0.1)), u
    g.result = u
    return g


@pytest.mark.parametrize("fuse", ["1", "0"])
def test_gathers_on_the_gpu_give_the_cpus_bits(gpu, fuse, monkeypatch):
    rng = np.random.default_rng(0)
    u, prev = rng.random(N), rng.random(N)
    monkeypatch.setenv("EAGLE_FUSE", "0")
    want = waves(u.copy(), prev.copy())()
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    g = waves(gpu.asarray(u), gpu.asarray(prev))
    assert g.backend == "gpu"
    assert gpu.get(g()).tobytes() == want.tobytes()


def test_a_scatter_sum_on_the_gpu_gives_the_cpus_bits(gpu):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(N) * 10.0 ** rng.integers(-5, 5, N)
    k = rng.integers(-1, 12, N).astype(np.int32)
    want = np.zeros(10)
    histogram(x, k, want)
    h = gpu.asarray(np.full(10, np.nan))
    bound = histogram.plan(gpu.asarray(x), gpu.asarray(k), h)
    g = eagle.Graph()
    g.add(bound, name="sum")
    g.build()
    assert g.backend == "gpu"
    g.launch()
    assert gpu.get(h).tobytes() == want.tobytes()
    g.set_logical_size(1000).launch()  # only the samples that run add
    histogram(x[:1000], k[:1000], want)
    assert gpu.get(h).tobytes() == want.tobytes()


def test_a_checked_table_and_a_placing_scatter_on_the_gpu_give_the_cpus_bits(gpu):
    """Once refused on the GPU ("annotate the Table Table.clamp"): now checked there too
    (tests/gpu/test_checks_gpu.py raises their errors)."""
    rng = np.random.default_rng(2)
    x, w, k = rng.random(N), rng.random(3), rng.integers(0, 3, N).astype(np.int32)
    out = checked.plan(gpu.asarray(x), gpu.asarray(w), gpu.asarray(k))
    perm = (rng.permutation(N) - 7).astype(np.int32)  # wrapped: -7 … -1 are the last cells
    y = gpu.asarray(np.full(N, np.nan))
    g = eagle.Graph()
    g.add(out, name="gather")
    g.add(placed.plan(gpu.asarray(x), gpu.asarray(perm), y), name="place")
    g.build()
    assert g.backend == "gpu"
    g.launch()
    assert gpu.get(out.outputs[0]).tobytes() == checked(x, w, k).tobytes()
    want = np.zeros(N)
    placed(x, perm, want)
    assert gpu.get(y).tobytes() == want.tobytes()
