"""Gradients through a counted loop's index and through scans over stacked rows, against central
differences (relative 1e-6): w.r.t. the carry's start and each row the loop reads, fused or not."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from hawk import Int32, Scalar
from hawk import math as hm


@hawk.kernel
def turn(y: Scalar, i: Int32) -> Scalar:
    return hm.sin(y) * (1.0 + 0.25 * hm.float64(i)) + 0.1 * hm.float64(i)


@hawk.kernel
def step(y: Scalar, x: Scalar) -> Scalar:
    return hm.sin(y) * 0.75 + x * y


@hawk.kernel
def square(v: Scalar) -> Scalar:
    return v * v


def cell(v: int) -> np.ndarray:
    return np.array([v], np.uint32)


@eagle.Graph.builder
def indexed(y, n, record=False):
    g = eagle.Graph(record=record)
    for i in range(n):
        y = turn(y, i)
        y = turn(y, 3 - i)
    g.result = square(y)
    return g


@eagle.Graph.builder
def scan(y, xs, record=False):
    g = eagle.Graph(record=record)
    ys = np.zeros_like(xs)
    for t in range(xs.shape[0]):
        y = step(y, xs[t])
        ys[t] = y
    g.result = {"y": square(y), "ys": ys}
    return g


@eagle.Graph.builder
def scan_over_a_cell(y, xs, n, record=False):
    g = eagle.Graph(record=record)
    for t in range(n):
        y = step(y, xs[t])
    g.result = square(y)
    return g


Y = np.linspace(-0.9, 0.8, 4)
XS = np.random.default_rng(5).uniform(-0.5, 0.5, (5, 4))


def close(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fuse", [True, False])
def test_the_index_carries_no_derivative_and_each_turn_reads_its_own(numeric_gradient, fuse):
    g = indexed(Y.copy(), cell(3), record=True)
    g()
    got = eagle.diff.reverse(g.record, {"result": np.ones(4)}, wrt=("y",), fuse=fuse)["y"]
    close(got, numeric_gradient(lambda a: float(indexed(a["y"], cell(3))().sum()), {"y": Y.copy()}, "y"))


@pytest.mark.parametrize("fuse", [True, False])
def test_a_scan_gives_the_gradient_of_the_start_and_of_every_row(numeric_gradient, fuse):
    g = scan(Y.copy(), XS.copy(), record=True)
    g()
    seeds = {"result": {"y": np.ones(4), "ys": np.full(XS.shape, 0.5)}}
    got = eagle.diff.reverse(g.record, seeds, wrt=("y", "xs"), fuse=fuse)

    def loss(a):
        out = scan(a["y"], a["xs"])()
        return float(out["y"].sum() + 0.5 * out["ys"].sum())

    arrays = {"y": Y.copy(), "xs": XS.copy()}
    close(got["y"], numeric_gradient(loss, arrays, "y"))
    close(got["xs"], numeric_gradient(loss, arrays, "xs"))


def rows_gradient(g: eagle.Graph, turns: int, numeric_gradient) -> np.ndarray:
    """The gradient of a launch of ``g`` (scan_over_a_cell) w.r.t. xs, held to central differences."""
    g()
    got = eagle.diff.reverse(g.record, {"result": np.ones(4)}, wrt=("xs",))["xs"]
    want = numeric_gradient(lambda a: float(scan_over_a_cell(Y.copy(), a["xs"], cell(turns))().sum()),
                            {"xs": XS.copy()}, "xs")
    close(got, want)
    return got


def test_a_scan_over_a_cell_count_differentiates_the_rows_it_read(numeric_gradient):
    got = rows_gradient(scan_over_a_cell(Y.copy(), XS.copy(), cell(3), record=True), 3, numeric_gradient)
    assert not got[3:].any()  # rows no turn read


def test_a_recorded_scan_over_a_cell_count_past_the_rows_raises_and_then_differentiates(numeric_gradient):
    n = cell(9)
    g = scan_over_a_cell(Y.copy(), XS.copy(), n, record=True)
    says = r"scan_over_a_cell:4: range\(n\) asks for 9 turns, xs has 5 rows: set n to at most 5"
    with pytest.raises(IndexError, match=says):
        g()
    n[0] = 5  # every row
    rows_gradient(g, 5, numeric_gradient)


@eagle.Graph.builder
def capped(y, flag, xs, record=False):
    g = eagle.Graph(record=record)
    for i in range(4):
        if not flag:
            break
        y = turn(y, i)
        y = step(y, xs[i])
    g.result = square(y)
    return g


def test_a_capped_loop_reading_its_index_and_rows(numeric_gradient):
    g = capped(Y.copy(), cell(1), XS.copy(), record=True)
    g()
    got = eagle.diff.reverse(g.record, {"result": np.ones(4)}, wrt=("y", "xs"))

    def loss(a):
        return float(capped(a["y"], cell(1), a["xs"])().sum())

    arrays = {"y": Y.copy(), "xs": XS.copy()}
    close(got["y"], numeric_gradient(loss, arrays, "y"))
    close(got["xs"], numeric_gradient(loss, arrays, "xs"))
