"""A result the graph never writes (NumPy applied, while recording, to what a kernel returns) is
refused: it would be returned as it was before any replay."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from hawk import Mutable, Scalar

X = np.arange(3.0)


@hawk.kernel
def inc(x: Scalar) -> Scalar:
    return x + 1.0


@hawk.kernel
def into(x: Scalar, out: Mutable[Scalar]) -> None:
    out = 2.0 * x  # a Mutable is written by assignment


def test_numpy_on_a_kernels_output_as_a_result_is_refused():
    @eagle.Graph.builder
    def scaled(x):
        g = eagle.Graph()
        y = inc(x)
        g.result = {"y": y, "twice": y * 2}
        return g

    with pytest.raises(TypeError, match=r"^eagle\.Graph\.builder: scaled:5: `\*` on a float64 array of "
                                        r"shape \(3,\) that the graph computes \(or an argument of it\) "
                                        "would run once"):
        scaled(X)


def twice(v):
    return v * 2  # not a builder: Python runs it as written, while recording


def test_numpy_in_a_helper_on_a_kernels_output_as_a_result_is_refused():
    @eagle.Graph.builder
    def scaled(x):
        g = eagle.Graph()
        g.result = twice(inc(x))
        return g

    with pytest.raises(TypeError, match=r"^eagle\.Graph\.builder: g\.result holds a float64 array of shape "
                                        r"\(3,\) that no node of the graph writes and no argument is"):
        scaled(X)


# Python on an array a replay sets (an argument: a replay after a bind reads it anew)
def halved(x):
    g = eagle.Graph()
    g.result = inc(inc(x) * 0.5)
    return g


def negated(x):
    g = eagle.Graph()
    g.result = inc(-inc(x))
    return g


def shifted(x):
    g = eagle.Graph()
    g.result = inc(x + 1.0)
    return g


def compared(x):
    g = eagle.Graph()
    g.result = inc(1.0 * (inc(x)[1:] > 0.0))
    return g


def sined(x):
    g = eagle.Graph()
    g.result = inc(np.sin(inc(x)))
    return g


def summed(x):
    g = eagle.Graph()
    g.result = inc(inc(x).cumsum())
    return g


def filled(x):
    g = eagle.Graph()
    g.result = inc(x)
    g.result.fill(2.0)  # refused before it runs: nothing is written while recording
    return g


@pytest.mark.parametrize(("builder", "text"), [
    (halved, r"halved:3: `\*` on a float64 array"),
    (negated, r"negated:3: `-` on a float64 array"),
    (shifted, r"shifted:3: `\+` on a float64 array"),
    (compared, r"compared:3: `>` on a float64 array"),
    (sined, r"sined:3: sin\(\.\.\.\) on an array that the graph computes"),
    (summed, r"summed:3: ndarray.cumsum\(\.\.\.\) on an array that the graph computes"),
    (filled, r"filled:4: ndarray.fill\(\.\.\.\) on an array that the graph computes"),
])
def test_python_arithmetic_on_an_array_a_replay_sets_is_refused_at_its_line(builder, text):
    # it would run once, while recording, on bytes no replay has written yet: a silent wrong answer
    with pytest.raises(TypeError, match=rf"^eagle\.Graph\.builder: {text}"):
        eagle.Graph.builder(builder)(X)


def test_views_shapes_and_python_numbers_are_not_arithmetic_on_replayed_arrays():
    @eagle.Graph.builder
    def fine(x, k):
        g = eagle.Graph()
        y = inc(x)
        z = inc(np.zeros_like(y) if y is not None else y)  # a shape, an identity test
        g.result = (inc(y.reshape(3)[1:]), z, inc(np.full(3, 2.0 * k - 1)))
        return g

    a, b, c = fine(X, 3)()
    assert a.tolist() == [3.0, 4.0] and b.tolist() == [1.0] * 3 and c.tolist() == [6.0] * 3


def test_arguments_outputs_their_views_and_written_arrays_are_results():
    @eagle.Graph.builder
    def fine(x):
        g = eagle.Graph()
        y = inc(x)
        mine = np.zeros(3)
        into(y, mine)
        g.result = (x, y[:2], mine)
        return g

    x, head, mine = fine(X)()
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(head, X[:2] + 1)
    np.testing.assert_array_equal(mine, 2 * (X + 1))
