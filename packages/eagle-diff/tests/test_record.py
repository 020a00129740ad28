"""g.record, the Record's names and what it keeps, and a recorded replay beside a plain one."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def accumulate(s: Scalar, y: Mutable[Scalar]) -> None:
    y = s + 1.0 + 0.5 * y


@hawk.kernel
def square(v: Scalar) -> Scalar:
    return v * v


@hawk.kernel
def grow(x: Scalar) -> Scalar:
    return 1.5 * x + 0.1 * hm.sin(x)


@hawk.kernel
def below(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(s < lim))


@eagle.Graph.builder
def model(x, y, flag, record=False):
    g = eagle.Graph(record=record)
    a = affine(x, 2.0, 1.0, buffer=True)
    accumulate(a, y)
    for _ in range(30):
        if not flag:
            break
        a = grow(a)
        below(a, 50.0, flag)
    g.result = square(a)
    return g


def test_g_record_is_false_true_then_a_record():
    plain = eagle.Graph()
    assert plain.record is False
    g = eagle.Graph(record=True)
    assert g.record is True  # recorded, not built yet
    g.add_node(eagle.reduce(np.ones(4), np.zeros(1)), name="sum")
    g.build()
    assert isinstance(g.record, eagle.diff.Record)
    assert repr(g.record) == "<eagle.diff.Record of 1 node, not run yet>"
    g()
    assert repr(g.record) == "<eagle.diff.Record of 1 node, ran>"
    assert "recorded" in str(g).splitlines()[0]


def test_a_builder_graphs_names():
    g = model(np.arange(4.0), np.zeros(4), np.ones(1, np.uint32), record=True)
    # flag is a cell, record a bool; a kernel's float Param goes by its node's label
    assert g.record.names == ["x", "y", "result", "a", "a.a", "a.b", "below.lim"]


def test_a_recorded_replay_gives_the_same_bits_and_keeps_what_it_needs():
    args = (np.linspace(0.1, 1.0, 8), np.linspace(-1.0, 1.0, 8))
    plain = model(args[0].copy(), args[1].copy(), np.ones(1, np.uint32))
    recorded = model(args[0].copy(), args[1].copy(), np.ones(1, np.uint32), record=True)
    assert recorded.schedule == plain.schedule
    np.testing.assert_array_equal(recorded(), plain())
    kept = recorded.record.memory()
    # x (the user may change it before the reverse pass), a and y as accumulate read them (the loop
    # rewrites a, accumulate y); and the loop's carried state, a (8 floats) and its guard cell, per turn
    assert kept["snapshots"] == 3 * 8 * 8
    turns = recorded.record._forward.tapes[0].turns
    assert 0 < turns < 30 and kept["loops"] >= turns * (8 * 8 + 4)


def test_the_user_may_change_an_input_before_the_reverse_pass():
    x, y = np.linspace(0.1, 1.0, 8), np.linspace(-1.0, 1.0, 8)
    g = model(x, y.copy(), np.ones(1, np.uint32), record=True)
    g()
    before = eagle.diff.reverse(g.record, {"result": np.ones(8)}, wrt=("x", "y"))
    x[:] = 7.0  # kept at the run: the gradient is still the run's
    after = eagle.diff.reverse(g.record, {"result": np.ones(8)}, wrt=("x", "y"))
    for k in ("x", "y"):
        np.testing.assert_array_equal(before[k], after[k])


def test_without_eagle_diff_a_recorded_build_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "eagle.diff", None)  # as if eagle-diff were not installed
    g = eagle.Graph(record=True).add_node(eagle.reduce(np.ones(4), np.zeros(1)))
    with pytest.raises(ImportError, match="a record=True graph needs eagle-diff: pip install eagle-diff"):
        g.build()
    assert g.backend is None  # a failed build leaves the graph as it was


def test_a_recorded_replay_looks_nothing_up(monkeypatch):
    """eagle.diff's replay hook is the one found at build: a replay imports nothing (issue 19)."""
    import importlib

    g = model(np.linspace(0.1, 1.0, 8), np.zeros(8), np.ones(1, np.uint32), record=True)
    g.launch()

    def refuse(name, *args):
        raise AssertionError(f"a replay imported {name}")

    monkeypatch.setattr(importlib, "import_module", refuse)
    g.launch(2)
    g.record._check()  # the Record describes the run
