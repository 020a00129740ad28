"""The build analysis: computed once per build, kept, and exact where it derives less."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
from eagle import _analysis, _program
from eagle._analysis import Analysis
from eagle.graph import opaque


def _node(reads: dict, writes: dict):
    return opaque(lambda: None, reads=reads, writes=writes)


def _random_graph(rng: np.random.Generator) -> eagle.Graph:
    """Nodes over slices of two buffers, some stages forks of one- to three-node branches."""
    buffers = [np.zeros(12), np.zeros(12)]

    def plane():
        lo = int(rng.integers(0, 10))
        return buffers[int(rng.integers(0, 2))][lo:lo + int(rng.integers(1, 3))]

    def node():
        planes = {f"p{k}": plane() for k in range(int(rng.integers(1, 3)))}
        written = {name: a for name, a in planes.items() if rng.random() < 0.5}
        return _node({n: a for n, a in planes.items() if n not in written}, written)

    g = eagle.Graph()
    for _ in range(int(rng.integers(1, 6))):
        if rng.random() < 0.5:
            g.add_group([[node() for _ in range(int(rng.integers(1, 4)))]
                         for _ in range(int(rng.integers(1, 4)))])
        else:
            g.add_node(node())
    return g


def test_fork_edges_are_the_edges_between_siblings():
    """Deriving over the nodes of the forks whose branches share memory finds every edge
    between two branches of one fork."""
    rng = np.random.default_rng(18)
    for _ in range(400):
        g = _random_graph(rng)
        analysis = g._analyze()
        place = {i: (f, b) for f, fork in enumerate(analysis.forks) for b, branch in enumerate(fork)
                 for i in branch}
        full = Analysis(g._nodes).edges()
        assert _siblings(analysis.fork_edges(), place) == _siblings(full, place)


def _siblings(edges, place):
    return {e for e in edges if e.src in place and e.dst in place
            and place[e.src][0] == place[e.dst][0] and place[e.src][1] != place[e.dst][1]}


def test_a_graph_without_forks_derives_no_edges_at_build():
    x = np.zeros(4)
    g = eagle.Graph().add_node(_node({}, {"x": x})).add_node(_node({"x": x}, {}))
    g.build()
    assert g._analysis._edges is None  # nothing to check: not derived
    assert g.edges() == [eagle.graph.Edge(0, 1, "x", "RAW")]
    assert g._analysis.edges() is g._analysis.edges()  # then kept


def test_edges_are_the_same_before_and_after_build():
    x, y = np.zeros(8), np.zeros(8)
    g = eagle.Graph().add_node(_node({}, {"x": x}))
    g.add_group([_node({"x": x[:4]}, {"y": y[:4]}), _node({"x": x[4:]}, {"y": y[4:]})])
    g.add_node(_node({"y": y}, {"x": x}))
    before = g.edges()
    assert before == g.build().edges()


def test_each_array_is_viewed_once_per_build(monkeypatch):
    """The analysis and the host program share one table of views: each array is described
    once, whichever asks first."""
    made = []

    def counting(array):
        made.append(id(array))
        return view_of(array)

    view_of = _analysis.view_of
    monkeypatch.setattr(_analysis, "view_of", counting)
    monkeypatch.setattr(_program, "view_of", counting)
    from eagle.plan import Plan

    source = np.arange(4.0)
    plan = Plan(_scale_kernel(), [("x", "readwrite"), ("c", "value")], name="scale")
    g = eagle.Graph()
    g.add_group([plan.bind(source[:2], 2.0), plan.bind(source[2:], 2.0)])
    for _ in range(5):
        g.add(plan.bind(source, 2.0))
    g.build().launch()
    assert np.array_equal(source, np.arange(4.0) * 2.0 ** 6)
    assert sorted(made) == sorted({id(a) for node in g._nodes for _, a, _ in node.planes()})
    assert g.edges() and len(made) == 3  # the edges read the views made before


def _scale_kernel():
    from eagle.native import Library, compile_library

    source = r'''
    #include "eagle/eagle.h"
    void scale(int64_t b, int64_t e, const eagle_arg *a)
    { double *x = a[0].ptr, c = a[1].f64; for (int64_t i = b; i < e; ++i) x[i] *= c; }
    '''
    return Library(compile_library(source, name="test_analysis_scale")).kernel("scale")


def test_a_race_between_forks_split_by_a_plain_stage_is_refused():
    x = np.zeros(4)
    g = eagle.Graph().add_group([_node({}, {"x": x}), _node({}, {"y": np.zeros(1)})])
    g.add_node(_node({"x": x}, {}))
    g.add_group([_node({}, {"x": x[:2]}), _node({"x": x[1:]}, {})])
    with pytest.raises(eagle.SiblingRace, match="share memory"):
        g.build()


def test_the_device_planes_must_live_on_one_gpu():
    class OnDevice:
        def __init__(self, device):
            self.device = device
            self.__cuda_array_interface__ = {"shape": (4,), "typestr": "<f8", "version": 3,
                                             "data": (4096 * (device + 1), False), "strides": None}

    analysis = Analysis([_node({"a": OnDevice(0)}, {"b": OnDevice(1)})])
    with pytest.raises(ValueError, match="one graph runs on one GPU"):
        analysis.device()
    assert Analysis([_node({"a": OnDevice(1)}, {})]).device() == 1
