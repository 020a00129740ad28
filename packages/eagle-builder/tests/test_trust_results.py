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

    with pytest.raises(TypeError, match=r"^eagle\.Graph\.builder: g\.result holds a float64 array of shape "
                                        r"\(3,\) that no node of the graph writes and no argument is"):
        scaled(X)


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
