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


PAST_THE_ROWS = (r"eagle.Graph.builder: scan_over_a_cell:4: range\(n\) asks for 40 turns, xs has 5 rows: "
                 r"set n to at most 5, or pass arrays of 40 rows")


def test_a_scan_over_a_cell_past_the_rows_raises_at_the_next_launch_on_the_device(gpu):
    n = gpu.asarray(cell(2))
    device = scan_over_a_cell(gpu.asarray(X), gpu.asarray(XS), n)
    assert gpu.get(device()).tobytes() == scan_over_a_cell(X.copy(), XS.copy(), cell(2))().tobytes()
    gpu.put(n, 40)
    with pytest.raises(IndexError, match=PAST_THE_ROWS):  # the host node's error, at the wait
        device()
    with pytest.raises(IndexError, match=PAST_THE_ROWS):  # by the enqueue, or by the wait after it
        device.enqueue()
        device.synchronize()
    gpu.put(n, 5)
    assert gpu.get(device()).tobytes() == scan_over_a_cell(X.copy(), XS.copy(), cell(5))().tobytes()
    assert device.captures == 1


def test_a_scan_over_a_cell_in_a_device_loop_body_is_refused_on_the_device(gpu):
    @eagle.Graph.builder
    def nested(y, xs, m, n):
        g = eagle.Graph()
        for _ in range(m):  # CUDA allows no host node (the check of n) in a conditional body
            for t in range(n):
                y = step(y, xs[t])
        g.result = y
        return g

    says = (r"nested:5: for \.\.\. in range\(n\) over the rows of xs is inside a device if or loop body.*"
            r"make n a Python number, or move the loop to the top level")
    with pytest.raises(ValueError, match=says):
        nested(gpu.asarray(X), gpu.asarray(XS), gpu.asarray(cell(2)), gpu.asarray(cell(2)))
    host = nested(X.copy(), XS.copy(), cell(2), cell(6))
    with pytest.raises(IndexError, match=r"nested:5: range\(n\) asks for 6 turns, xs has 5 rows"):
        host()  # the host graph checks n in the body, at every turn of the outer loop
