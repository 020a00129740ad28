"""A ``buffer=True`` name rebound in the arms of a device if names the array the builder merged
it into, so seeding it gives the gradient of the arm that ran (it named one arm's output, which
the merge had re-pointed, and gave zeros)."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from hawk import Param, Scalar


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@eagle.Graph.builder
def arms(x, c, record=False):
    g = eagle.Graph(record=record)
    if c:
        t = affine(x, 2.0, 0.0, buffer=True)
    else:
        t = affine(x, 3.0, 0.0, buffer=True)
    g.result = t
    return g


@pytest.mark.parametrize("taken, slope", [(1, 2.0), (0, 3.0)])
def test_a_buffer_set_in_device_arms_is_seeded_where_the_arm_that_ran_wrote_it(taken, slope):
    g = arms(np.arange(3.0), np.array([taken], np.uint32), record=True)
    np.testing.assert_array_equal(g(), slope * np.arange(3.0))
    grads = eagle.diff.reverse(g.record, {"t": np.ones(3)}, wrt=("x",))
    np.testing.assert_array_equal(grads["x"], np.full(3, slope))
