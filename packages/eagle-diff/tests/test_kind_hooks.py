"""A plugin kind that holds a body works with bind, the builder's merges, eagle.diff and every
picture through its NodeKind hooks alone: nothing outside this file knows it.

The kind repeats its body ``count[0]`` times (a libeagle count loop); it says which body it
holds, how it is rebuilt over swapped arrays, how it is drawn and that it is a count loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import eagle
import eagle.diff
import eagle.viz
import hawk
from eagle.graph import FramePicture, LoopFlow, Node, register_node_kind
from hawk import Mutable, Scalar


@dataclass(frozen=True)
class Repeat:
    count: np.ndarray  # one uint32 cell: how many turns
    body: eagle.Body


def _planes(p: Repeat, reading: bool) -> list[tuple[str, object, str]]:
    inner = [t for t in p.body.planes() if (t[2] == "read") == reading]
    return [("count", p.count, "read"), *inner] if reading else inner


register_node_kind(
    "test_kind_hooks_repeat",
    reads=lambda p: _planes(p, True), writes=lambda p: _planes(p, False),
    lower=lambda p, target: target.loop(p.count, p.body.lower(target) or target.body(), "count", -1),
    bodies=lambda p: [p.body],
    rebuild=lambda p, swap: Repeat(swap(p.count), swap.body(p.body)),
    picture=lambda p: FramePicture("repeat count times", "repeat", (p.body,)),
    flow=lambda p: LoopFlow(p.count, "count", -1, p.body),
    both_sides=True,
)


def repeat(count: np.ndarray, *steps: Node) -> Node:
    return Node("test_kind_hooks_repeat", Repeat(count, eagle.Body(list(steps))))


@hawk.kernel
def blend(s: Scalar, y: Mutable[Scalar]) -> None:
    y = 0.5 * y + s * s


@eagle.Graph.builder
def repeated(x, y, count, record=False):
    g = eagle.Graph(record=record)
    g.add_node(repeat(count, Node("plan", blend.plan(x, y))), name="repeat")
    g.result = y
    return g


def expected(x: np.ndarray, y: np.ndarray, turns: int) -> np.ndarray:
    y = y.copy()
    for _ in range(turns):
        y = 0.5 * y + x * x
    return y


X, Y = np.linspace(0.2, 1.4, 6), np.linspace(-1.0, 1.0, 6)


def test_it_runs_and_its_body_is_walked():
    count = np.array([3], np.uint32)
    g = repeated(X.copy(), Y.copy(), count)
    np.testing.assert_allclose(g(), expected(X, Y, 3))
    top = g._nodes[-1]
    assert [n.kind for n in top.walk()] == ["test_kind_hooks_repeat", "plan"]


def test_bind_rebuilds_it_through_its_hook():
    x, y, count = X.copy(), Y.copy(), np.array([2], np.uint32)
    g = repeated(x, y, count)
    g()
    x2, y2 = X[::-1].copy(), np.zeros(6)
    g.bind(x=x2, y=y2)
    np.testing.assert_allclose(g(), expected(X[::-1], np.zeros(6), 2))
    np.testing.assert_allclose(y2, expected(X[::-1], np.zeros(6), 2))
    np.testing.assert_allclose(y, expected(X, Y, 2))  # the old arrays are left as they were


def test_reverse_goes_through_its_loop(gradcheck):
    arrays = {"x": X, "y": Y, "count": np.array([3], np.uint32)}
    gradcheck(repeated, arrays, {"result": np.linspace(1.0, 2.0, 6)}, wrt=("x", "y"))


def test_every_picture_draws_its_frame_around_its_body():
    g = repeated(X.copy(), Y.copy(), np.array([3], np.uint32))
    model = eagle.viz.describe(g, "test")
    frames = [part for stage in model.stages for event, part in eagle.viz._model.walk(stage.block)
              if event == "open"]
    assert [(f.label, f.kind) for f in frames] == [("repeat count times", "repeat")]
    assert [n.label for n in model.nodes][-2:] == ["repeat", "blend"]
    for picture in (str(g), g.to_mermaid(), g.to_dot()):
        assert "repeat count times" in picture and "blend" in picture
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    assert isinstance(g.plot(), Figure)


@hawk.kernel
def dbl(x: Scalar) -> Scalar:
    return 2.0 * x


@eagle.Graph.builder
def merged(x, y, count, flag, record=False):
    g = eagle.Graph(record=record)
    z = dbl(x)
    if flag:
        g.add_node(repeat(count, Node("plan", blend.plan(z, y))), name="repeat")
        z = dbl(z)  # merged in place: the arm's nodes, the kind's too, are re-pointed through its hook
    g.result = (z, y)
    return g


@pytest.mark.parametrize("flag", [0, 1])
def test_the_builder_merges_through_it_and_reverses_it_inside_a_device_if(flag, gradcheck):
    cells = {"count": np.array([2], np.uint32), "flag": np.array([flag], np.uint32)}
    z, y = merged(X.copy(), Y.copy(), **cells)()
    np.testing.assert_allclose(z, 4 * X if flag else 2 * X)
    np.testing.assert_allclose(y, expected(2 * X, Y, 2) if flag else Y)
    seeds = {"result": (np.linspace(1.0, 2.0, 6), np.linspace(-1.0, 0.5, 6))}
    gradcheck(merged, {"x": X, "y": Y, **cells}, seeds, wrt=("x", "y"))
