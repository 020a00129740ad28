"""A counted loop's index and scans over stacked rows in a GPU graph: the host graph's bits, in one
captured graph whose loop sets the index and moves the rows on the device."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("eagle.builder")
hawk = pytest.importorskip("hawk")

import eagle  # noqa: E402
from hawk import Int32, Scalar  # noqa: E402
from hawk import math as hm  # noqa: E402


@hawk.kernel
def add_index(x: Scalar, i: Int32) -> Scalar:
    return x * 0.5 + hm.float64(i)


@hawk.kernel
def step(y: Scalar, x: Scalar) -> Scalar:
    return y * 0.75 + x


def cell(v: int) -> np.ndarray:
    return np.array([v], np.uint32)


@eagle.Graph.builder
def indexed(x, n):
    g = eagle.Graph()
    for i in range(n):
        x = add_index(x, i)
        x = add_index(x, 7 - 2 * i)
    g.result = x
    return g


@eagle.Graph.builder
def scan(y, xs, ys):
    g = eagle.Graph()
    for t in range(xs.shape[0]):
        y = step(y, xs[t])
        ys[t] = y
    g.result = (y, ys)
    return g


X = np.linspace(-1.0, 1.0, 300)
XS = np.random.default_rng(7).standard_normal((5, 300))


def test_the_index_on_the_device(gpu):
    n = gpu.asarray(cell(3))
    device = indexed(gpu.asarray(X), n)
    assert device.backend == "gpu"
    host = indexed(X.copy(), cell(3))()
    assert gpu.get(device()).tobytes() == host.tobytes()
    gpu.put(n, 5)  # the count is read at every replay; the index restarts at 0
    assert gpu.get(device()).tobytes() == indexed(X.copy(), cell(5))().tobytes()
    assert device.captures == 1


def test_a_scan_on_the_device(gpu):
    device = scan(gpu.asarray(X), gpu.asarray(XS), gpu.asarray(np.zeros_like(XS)))
    host = scan(X.copy(), XS.copy(), np.zeros_like(XS))()
    got = device()
    assert gpu.get(got[0]).tobytes() == host[0].tobytes()
    assert gpu.get(got[1]).tobytes() == host[1].tobytes()


@eagle.Graph.builder
def scan_over_a_cell(y, xs, n):
    g = eagle.Graph()
    for t in range(n):
        y = step(y, xs[t])
    g.result = y
    return g


def test_a_scan_over_a_cell_stops_at_the_last_row_on_the_device(gpu):
    n = gpu.asarray(cell(2))
    device = scan_over_a_cell(gpu.asarray(X), gpu.asarray(XS), n)
    assert gpu.get(device()).tobytes() == scan_over_a_cell(X.copy(), XS.copy(), cell(2))().tobytes()
    gpu.put(n, 40)
    assert gpu.get(device()).tobytes() == scan_over_a_cell(X.copy(), XS.copy(), cell(5))().tobytes()
