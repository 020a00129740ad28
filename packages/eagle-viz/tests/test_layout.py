"""The layout engine on models made by hand: the frames and forks the builder will bring."""

from __future__ import annotations

import gc

import pytest

import eagle
from eagle.viz import describe, draw_text, layout
from eagle.viz._bulk import without_cycle_passes
from eagle.viz._model import Box, Fork, Frame, GraphModel, NodeInfo, Seq, StageInfo


def model(labels: str, *stages: object, edges: tuple[eagle.graph.Edge, ...] = ()) -> GraphModel:
    nodes = tuple(NodeInfo(i, label, "kernel", "", i) for i, label in enumerate(labels.split()))
    return GraphModel(nodes, tuple(StageInfo(i, None, b) for i, b in enumerate(stages)), edges, None,
                      sum(isinstance(b, Fork) for b in stages), False, len(nodes))


def test_if_else_is_a_frame_around_a_fork():
    """A device if/else (the builder's): its arms side by side inside one frame."""
    arms = Fork((Seq((Box(1),)), Seq((Box(2),))))
    m = model("a then other b", Box(0), Frame("if flag", "if", arms), Box(3))
    assert draw_text(layout(m)) == """\
eagle.Graph 4 nodes · 0 groups · backend: (not built)
stage 0           ┌───┐
                  │ a │
                  └─┬─┘
                    │
              ┌─────┴─────┐
        ╭─────┼─ if flag ─┼─────╮
stage 1 │ ┌───┴───┐   ┌───┴───┐ │
        │ │ then  │   │ other │ │
        │ └───┬───┘   └───┬───┘ │
        ╰─────┼───────────┼─────╯
              │           │
              └─────┬─────┘
stage 2           ┌─┴─┐
                  │ b │
                  └───┘"""


def test_fork_after_fork_joins_then_splits():
    """Two forks in a row: a joiner row, then a splitter row."""
    m = model("a b c d", Fork((Seq((Box(0),)), Seq((Box(1),)))), Fork((Seq((Box(2),)), Seq((Box(3),)))))
    assert draw_text(layout(m)) == """\
eagle.Graph 4 nodes · 2 groups · backend: (not built)
stage 0 ┌───┐   ┌───┐
        │ a │   │ b │
        └─┬─┘   └─┬─┘
          │       │
          └───┬───┘
          ┌───┴───┐
stage 1 ┌─┴─┐   ┌─┴─┐
        │ c │   │ d │
        └───┘   └───┘"""


def test_a_fork_inside_a_branch_joins_with_the_outer_fork():
    """A branch that forks again (seed 004's nested parallel): every exit meets the one joiner."""
    inner = Fork((Seq((Box(2),)), Seq((Box(3),))))
    m = model("a l u v r z", Box(0), Fork((Seq((Box(1), inner)), Seq((Box(4),)))), Box(5))
    text = draw_text(layout(m))
    assert text == """\
eagle.Graph 6 nodes · 1 group · backend: (not built)
stage 0           ┌───┐
                  │ a │
                  └─┬─┘
                    │
              ┌─────┴─────┐
stage 1     ┌─┴─┐       ┌─┴─┐
            │ l │       │ r │
            └─┬─┘       └─┬─┘
              │           │
          ┌───┴───┐       │
        ┌─┴─┐   ┌─┴─┐     │
        │ u │   │ v │     │
        └─┬─┘   └─┬─┘     │
          │       │       │
          └───────┴─┬─────┘
stage 2           ┌─┴─┐
                  │ z │
                  └───┘"""


def test_links_carry_data_planes_and_order_only_wires():
    """RAW and WAW planes label a link; a WAR-only pair is an order link; a pair past a node is long."""
    edges = (eagle.graph.Edge(0, 1, "x", "WAR"), eagle.graph.Edge(0, 2, "y", "RAW"),
             eagle.graph.Edge(1, 2, "z", "WAW"))
    lay = layout(model("a b c", Box(0), Box(1), Box(2), edges=edges))
    assert [(k.src, k.dst, k.planes, k.adjacent) for k in lay.links] == [
        (0, 1, (), True), (1, 2, ("z",), True), (0, 2, ("y",), False)]
    assert [(p.node, p.text, p.wired) for p in lay.planes] == [(0, "y", ""), (1, "z", "z")]


def test_columns_wire_the_bottom_of_one_to_the_top_of_the_next():
    """A long sequence flowed into columns: the continuing wire leaves by the bottom, enters at the top."""
    m = model(" ".join(f"n{i}" for i in range(6)), *(Box(i) for i in range(6)))
    lay = layout(m, columns=3)
    xs = sorted({b.x for b in lay.boxes})
    assert len(xs) == 3 and [b.node for b in lay.boxes] == list(range(6))
    hops = [w for w in lay.wires if lay.box(w.src).x != lay.box(w.dst).x]
    assert len(hops) == 2
    for w in hops:
        assert w.points[1][1] == lay.height - 1 and w.points[3][1] == 0
    text = draw_text(lay).splitlines()
    assert len(text) == 1 + lay.height and "n5" in text[-3 - 1]


def test_a_picture_pauses_the_cyclic_collector_and_resumes_it():
    """The collector is off while a picture is made, on again after, also after a refusal; one
    already off is left off."""
    seen = []
    inner = without_cycle_passes(lambda: seen.append(gc.isenabled()))
    outer = without_cycle_passes(lambda: (inner(), seen.append(gc.isenabled())))
    assert gc.isenabled()
    outer()
    assert seen == [False, False] and gc.isenabled()  # the nested call left it to the outer
    with pytest.raises(TypeError, match="expected an eagle\\.Graph"):
        describe("not a graph", "example")
    assert gc.isenabled()
    gc.disable()
    try:
        inner()
        assert not gc.isenabled()
    finally:
        gc.enable()
