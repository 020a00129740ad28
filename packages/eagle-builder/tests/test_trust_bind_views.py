"""bind re-points views of an argument (a row, a slice) and result leaves that are arguments: before,
both kept the old array and a replay silently gave the old values."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from hawk import Scalar


@hawk.kernel
def dbl(x: Scalar) -> Scalar:
    return 2.0 * x


@hawk.kernel
def add(a: Scalar, b: Scalar) -> Scalar:
    return a + b


@eagle.Graph.builder
def rows(xs):
    g = eagle.Graph()
    g.result = add(dbl(xs[1, :4]), xs[0, 1:])
    return g


@eagle.Graph.builder
def passthrough(x, y):
    g = eagle.Graph()
    g.result = (x, dbl(y))
    return g


def test_bind_repoints_rows_and_slices_of_an_argument() -> None:
    g = rows(np.arange(10.0).reshape(2, 5))
    new = np.arange(10.0).reshape(2, 5) + 100.0
    g.bind(xs=new)
    np.testing.assert_array_equal(g(), 2.0 * new[1, :4] + new[0, 1:])


def test_bind_repoints_a_result_that_is_an_argument() -> None:
    g = passthrough(np.ones(3), np.ones(3))
    x2 = np.full(3, 7.0)
    g.bind(x=x2)
    assert g()[0] is x2


def test_a_view_of_an_argument_of_another_layout_is_refused_and_the_graph_kept() -> None:
    g = rows(np.arange(10.0).reshape(2, 5))
    before = g().copy()
    fortran = np.asfortranarray(np.arange(10.0).reshape(2, 5) + 1.0)
    with pytest.raises(ValueError, match=r"eagle.Graph.bind: the graph reads a view .* contiguous"):
        g.bind(xs=fortran)
    np.testing.assert_array_equal(g(), before)
