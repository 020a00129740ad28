"""A hawk kernel called on planes where a written one partly overlaps another is refused, at the
call (also once a direct call of that shape is cached) and at Graph.add (issue 17, defect 4)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import eagle
import hawk
from hawk import Mutable, Scalar

PARTLY = "writes plane 'y', which partly overlaps plane 'x' it reads"


@hawk.kernel
def shift(x: Scalar, y: Mutable[Scalar]):
    y = x + 1.0


@pytest.mark.parametrize("n", [10, 5000], ids=["direct", "program"])
def test_an_eager_call_on_partly_overlapping_planes_is_refused(n):
    x = np.arange(float(n))
    shift(np.zeros(n - 1), np.zeros(n - 1))  # the direct call of this shape, cached
    with pytest.raises(ValueError, match="^" + re.escape(f"hawk.kernel shift {PARTLY}")):
        shift(x[:-1], x[1:])
    assert x.tolist() == np.arange(float(n)).tolist()
    y = np.zeros(n)
    shift(y, y)  # the very same plane: each sample reads its own value first
    assert y.tolist() == [1.0] * n


def test_a_kernel_plan_on_partly_overlapping_planes_is_refused_at_add():
    x = np.arange(64.0)
    with pytest.raises(ValueError, match="^" + re.escape(f"eagle.Graph.add: plan 'shift' {PARTLY}")):
        eagle.Graph().add(shift.plan(x[:-1], x[1:]))
