"""A bind makes the graph's build analysis anew from the new arrays; a refused bind keeps the old."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from hawk import Mutable, Scalar


@hawk.kernel
def bump(y: Mutable[Scalar]):
    y = y + 1.0


@eagle.Graph.builder
def forked(a, b):
    g = eagle.Graph()
    with g.parallel() as p:
        with p.branch():
            bump(a)
        with p.branch():
            bump(b)
    return g


def _planes(g):
    return [id(array) for planes in g._analysis.planes for _, array, _ in planes]


def test_bind_reads_the_new_arrays_and_a_refused_bind_the_old():
    a, b = np.zeros(4), np.zeros(4)
    g = forked(a, b)
    assert g.edges() == []
    before = _planes(g)
    c = np.zeros(4)
    g.bind(a=c)
    assert id(c) in _planes(g) and id(a) not in _planes(g)
    g.launch()
    assert c.tolist() == [1.0] * 4 and a.tolist() == [0.0] * 4
    bound = _planes(g)
    with pytest.raises(eagle.SiblingRace, match=r"eagle\.Graph\.bind: .* are siblings"):
        g.bind(a=b)  # both branches would write b
    assert _planes(g) == bound != before
    g.launch()
    assert c.tolist() == [2.0] * 4 and b.tolist() == [2.0] * 4
