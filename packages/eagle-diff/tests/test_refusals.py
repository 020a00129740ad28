"""What eagle.diff.reverse refuses, each with the way out."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import eagle.diff
import hawk
from eagle.graph import opaque
from hawk import Mutable, Param, Scalar, UInt32
from hawk import math as hm


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def accumulate(s: Scalar, y: Mutable[Scalar]) -> None:
    y = s + 1.0


@hawk.kernel
def square(v: Scalar) -> Scalar:
    return v * v


@hawk.kernel
def dbl(x: Scalar) -> Scalar:
    return 2.0 * x


@hawk.kernel
def add(a: Scalar, b: Scalar) -> Scalar:
    return a + b


@hawk.kernel
def below(s: Scalar, lim: Param, flag: Mutable[UInt32]) -> None:
    flag = hm.uint32(hawk.sum(s < lim))


@eagle.Graph.builder
def model(x, y, record=False):
    g = eagle.Graph(record=record)
    a = affine(x, 2.0, 1.0, buffer=True)
    accumulate(a, y)
    g.result = square(a)
    return g


X = np.arange(4.0)


def ran(g: eagle.Graph) -> eagle.Graph:
    g()
    return g


def test_a_builder_graph_has_no_default_gradients():
    g = ran(model(X, np.zeros(4), record=True))
    with pytest.raises(ValueError) as err:
        eagle.diff.reverse(g.record, {"result": np.ones(4)})
    assert str(err.value) == ("eagle.diff.reverse: a builder graph has no default gradients: pass wrt=(...) "
                              "naming the arguments it could take: x, y")


def test_a_name_that_is_not_a_key():
    g = ran(model(X, np.zeros(4), record=True))
    message = ("eagle.diff.reverse: 't' is not a builder argument, 'result' or a buffer= label: gradients "
               "flow through the arrays that enter and leave the graph. For a temporary, give it a dedicated "
               "buffer: `t = kernel(..., buffer=True)` (or pass an array), then use that name")
    for call in (lambda: eagle.diff.reverse(g.record, {"result": np.ones(4)}, wrt=("x", "t")),
                 lambda: eagle.diff.reverse(g.record, {"t": np.ones(4)}, wrt=("x",))):
        with pytest.raises(KeyError) as err:
            call()
        assert err.value.args[0] == message


def test_names_of_what_carries_no_gradient():
    g = ran(model(X, np.zeros(4), record=True))
    with pytest.raises(TypeError, match="'record' is bool: gradients flow through float arrays"):
        eagle.diff.reverse(g.record, {"result": np.ones(4)}, wrt=("record",))

    @eagle.Graph.builder
    def guarded(x, flag, record=False):
        g = eagle.Graph(record=record)
        if flag:
            x = dbl(x)
        g.result = x
        return g

    g = ran(guarded(X, np.ones(1, np.uint32), record=True))
    with pytest.raises(TypeError, match="'flag' is a uint32 array: gradients flow through float arrays"):
        eagle.diff.reverse(g.record, {"result": np.ones(4)}, wrt=("flag",))


def test_seeds_must_match_their_arrays():
    g = ran(model(X, np.zeros(4), record=True))
    with pytest.raises(ValueError, match=r"the seed of 'result' has shape \(3,\), its array \(4,\)"):
        eagle.diff.reverse(g.record, {"result": np.ones(3)}, wrt=("x",))
    with pytest.raises(ValueError, match="the seed of 'result' has 2 arrays, its arrays 1: give a tree"):
        eagle.diff.reverse(g.record, {"result": (np.ones(4), np.ones(4))}, wrt=("x",))
    with pytest.raises(TypeError, match="seeds is a dict of name -> cotangent"):
        eagle.diff.reverse(g.record, {}, wrt=("x",))
    scalar = eagle.diff.reverse(g.record, {"result": 1.0}, wrt=("x",))  # a number stands for every element
    np.testing.assert_array_equal(scalar["x"], [4.0, 12.0, 20.0, 28.0])


def test_an_uncapped_loop_cannot_be_recorded():
    @eagle.Graph.builder
    def bad(x, flag):
        g = eagle.Graph(record=True)
        while flag:
            x = dbl(x)
            below(x, 10.0, flag)
        return g

    with pytest.raises(ValueError, match="an uncapped device loop cannot be recorded"):
        bad(np.ones(4), np.ones(1, np.uint32))


def test_a_recorded_graph_does_not_enqueue():
    g = model(X, np.zeros(4), record=True)
    with pytest.raises(RuntimeError, match=r"eagle.Graph.enqueue: a record=True graph runs with launch\(\)"):
        g.enqueue()


def test_what_is_not_a_record():
    g = ran(model(X, np.zeros(4)))
    assert g.record is False
    with pytest.raises(TypeError, match=r"takes g.record of a graph built with eagle.Graph\(record=True\), "
                                        "got False"):
        eagle.diff.reverse(g.record, {"result": np.ones(4)}, wrt=("x",))


def test_a_record_describes_a_run():
    g = model(X, np.zeros(4), record=True)
    with pytest.raises(RuntimeError, match="the graph has not run since it was built or bound"):
        eagle.diff.reverse(g.record, {"result": np.ones(4)}, wrt=("x",))
    g()
    old = g.record
    g.bind(x=X + 1.0)
    with pytest.raises(RuntimeError, match="this Record is of an earlier build of the graph"):
        eagle.diff.reverse(old, {"result": np.ones(4)}, wrt=("x",))
    with pytest.raises(RuntimeError, match="the graph has not run"):
        eagle.diff.reverse(g.record, {"result": np.ones(4)}, wrt=("x",))
    g()
    np.testing.assert_array_equal(eagle.diff.reverse(g.record, {"result": np.ones(4)}, wrt=("x",))["x"],
                                  [12.0, 20.0, 28.0, 36.0])


def test_a_failed_run_describes_nothing():
    x, out = np.arange(4.0), np.zeros(4)
    fail = [False]

    def step():
        if fail[0]:
            raise RuntimeError("boom")
        np.multiply(x, 2.0, out=out)

    g = eagle.Graph(record=True)
    g.add_node(opaque(step, reads={"x": x}, writes={"y": out}), name="step")
    g.build()
    g()
    eagle.diff.reverse(g.record, {"y": np.ones(4)}, vjps={"step": lambda p, c: {"x": 2 * c["y"]}})
    fail[0] = True
    with pytest.raises(RuntimeError, match="boom"):
        g()
    with pytest.raises(RuntimeError, match="its last run failed"):
        eagle.diff.reverse(g.record, {"y": np.ones(4)}, vjps={"step": lambda p, c: {"x": 2 * c["y"]}})


def test_an_opaque_node_inside_a_reversed_loop():
    noise = np.zeros(4)

    @eagle.Graph.builder
    def looped(x, flag, record=False):
        g = eagle.Graph(record=record)
        for _ in range(5):
            if not flag:
                break
            g.add_node(opaque(lambda: noise.fill(0.1), writes={"noise": noise}), name="peek")
            x = add(dbl(x), noise)
            below(x, 10.0, flag)
        g.result = x
        return g

    g = ran(looped(np.ones(4), np.ones(1, np.uint32), record=True))
    with pytest.raises(TypeError, match=r"node 'peek' \(opaque\) runs inside the device loop 'loop': a loop "
                                        "is reversed by running each turn again"):
        eagle.diff.reverse(g.record, {"result": np.ones(4)}, wrt=("x",))


def test_a_loop_whose_turns_could_not_be_kept():
    @eagle.Graph.builder
    def looped(x, flag, record=False):
        g = eagle.Graph(record=record)
        for _ in range(5):
            if not flag:
                break
            x = dbl(x)
            below(x, 10.0, flag)
        g.result = x
        return g

    g = ran(looped(np.ones(4), np.ones(1, np.uint32), record=True))
    g.record._forward.tapes[0].header[5] = 1  # what the tape's claim sets when realloc fails
    with pytest.raises(MemoryError, match="the last run could not keep a device loop's turns"):
        eagle.diff.reverse(g.record, {"result": np.ones(4)}, wrt=("x",))
