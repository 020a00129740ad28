"""bind applies every check add and build apply, and a failed bind changes nothing (issue 17,
defect 8); only the current arrays are kept (defect 9); a non-array says so (defect 14)."""

from __future__ import annotations

import gc
import re
import weakref

import numpy as np
import pytest

import eagle
import hawk
from hawk import Mutable, Scalar


@hawk.kernel
def twice_into(x: Scalar, y: Mutable[Scalar]):
    y = 2.0 * x


@hawk.kernel
def bump(y: Mutable[Scalar]):
    y = y + 1.0


@eagle.Graph.builder
def scaled(x, y):
    g = eagle.Graph()
    twice_into(x, y)
    return g


@eagle.Graph.builder
def forked(a, b):
    g = eagle.Graph()
    with g.parallel() as p:
        with p.branch():
            bump(a)
        with p.branch():
            bump(b)
    return g


def _still_runs_on(g, x, y):
    x[:] = np.arange(8.0)
    g()
    assert y.tolist() == (2.0 * np.arange(8.0)).tolist()


@pytest.mark.parametrize(("binding", "message"), [
    (lambda: {"y": np.zeros(8)[::-1]}, "plan 'twice_into' plane 'y' is not contiguous"),
    (lambda: {"x": np.zeros(16)[::2]}, "plan 'twice_into' plane 'x' is not contiguous"),
    (lambda: {"y": np.broadcast_to(np.zeros(1), (8,))}, "plan 'twice_into' plane 'y' is not contiguous"),
], ids=["reversed", "every-other", "broadcast"])
def test_bind_refuses_a_layout_build_refuses_and_changes_nothing(binding, message):
    x, y = np.arange(8.0), np.zeros(8)
    g = scaled(x, y)
    with pytest.raises(ValueError, match="^" + re.escape("eagle.Graph.bind: " + message)):
        g.bind(**binding())
    _still_runs_on(g, x, y)


def test_bind_refuses_a_read_only_array_where_the_kernel_writes():
    x, y = np.arange(8.0), np.zeros(8)
    g = scaled(x, y)
    frozen = np.zeros(8)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=re.escape("eagle.Graph.bind: plan 'twice_into' plane 'y' is written "
                                                   "but the array is read-only")):
        g.bind(y=frozen)
    _still_runs_on(g, x, y)


def test_bind_refuses_planes_that_partly_overlap():
    x, y = np.arange(8.0), np.zeros(8)
    g = scaled(x, y)
    base = np.zeros(9)
    with pytest.raises(ValueError, match=re.escape("eagle.Graph.bind: plan 'twice_into' writes plane 'y', "
                                                   "which partly overlaps plane 'x' it reads")):
        g.bind(x=base[:-1], y=base[1:])
    _still_runs_on(g, x, y)


def test_bind_refuses_siblings_made_to_alias_one_array():
    a, b = np.zeros(8), np.zeros(8)
    g = forked(a, b)
    one = np.zeros(8)
    with pytest.raises(eagle.SiblingRace, match=r"^eagle\.Graph\.bind: 'bump' \(node \d\) and 'bump'"):
        g.bind(a=one, b=one)
    g()
    assert a.tolist() == b.tolist() == [1.0] * 8 and one.tolist() == [0.0] * 8


def test_bind_says_it_takes_an_array():
    g = scaled(np.arange(8.0), np.zeros(8))
    with pytest.raises(TypeError, match=r"^eagle\.Graph\.bind: 'x' takes an array \(NumPy or device\), got"):
        g.bind(x=[0.0] * 8)


def test_bind_keeps_only_the_current_arrays():
    x, y = np.arange(8.0), np.zeros(8)
    g = scaled(x, y)
    refs = [weakref.ref(y)]
    for _ in range(3):
        y = np.zeros(8)
        g.bind(y=y)
        refs.append(weakref.ref(y))
    del y
    gc.collect()
    assert [ref() is None for ref in refs] == [True, True, True, False]
    g()
    assert refs[-1]().tolist() == (2.0 * x).tolist()


@hawk.kernel
def swap_into(v: Scalar, out: Mutable[Scalar]):
    out[0] = v[1]
    out[1] = v[0]


@eagle.Graph.builder
def swapped(v, out):
    g = eagle.Graph()
    swap_into(v, out)
    return g


def test_bind_refuses_a_fortran_ordered_plane():
    v, out = np.arange(16.0).reshape(2, 8), np.zeros((2, 8))
    g = swapped(v, out)
    with pytest.raises(ValueError, match=re.escape("eagle.Graph.bind: plan 'swap_into' plane 'v' is not "
                                                   "contiguous")):
        g.bind(v=np.asfortranarray(v + 1.0))
    g()
    assert out.tolist() == v[::-1].tolist()


def _analyzed(g):
    return [id(array) for planes in g._analysis.planes for _, array, _ in planes]


def test_bind_makes_the_build_analysis_anew_a_refused_bind_keeps_the_old():
    """The kept analysis (edges, views) is of the arrays the graph runs on."""
    a, b = np.zeros(4), np.zeros(4)
    g = forked(a, b)
    assert g.edges() == []
    before = _analyzed(g)
    c = np.zeros(4)
    g.bind(a=c)
    assert id(c) in _analyzed(g) and id(a) not in _analyzed(g)
    g.launch()
    assert c.tolist() == [1.0] * 4 and a.tolist() == [0.0] * 4
    bound = _analyzed(g)
    with pytest.raises(eagle.SiblingRace, match=r"eagle\.Graph\.bind: .* are siblings"):
        g.bind(a=b)  # both branches would write b
    assert _analyzed(g) == bound != before
    g.launch()
    assert c.tolist() == [2.0] * 4 and b.tolist() == [2.0] * 4
