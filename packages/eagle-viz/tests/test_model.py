"""The adapter: what of a Graph the pictures see, device constructs and waits included."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
from eagle.graph import Node, opaque
from eagle.viz import describe
from eagle.viz._model import Box, Fork, Frame, Seq


@pytest.fixture
def if_graph(kernels):
    """make, then an if/else over two arms, then an if with no else."""
    x, flag = np.zeros(4), np.ones(1, np.uint32)
    g = eagle.Graph().add_node(opaque(lambda: None, writes={"x": x}), name="make")
    then = eagle.Body([opaque(lambda: None, reads={"x": x}, writes={"x": x})])
    orelse = eagle.Body([Node("plan", kernels.scale.bind(x, 2.0))])
    g.add_node(Node("device_if", eagle.DeviceIf(flag, then, orelse)), name="choose")
    g.add_node(Node("device_if", eagle.DeviceIf(flag, eagle.Body([Node("plan", kernels.scale.bind(x, 3.0))]),
                                                eagle.Body([]))), name="maybe")
    return g


def test_roles_and_labels(graphs):
    """Plans are kernels, your functions python, ufunc partials opaque, a reduce builtin."""
    m = describe(graphs.step(), "test")
    assert [(n.label, n.role) for n in m.nodes] == [
        ("scale → load", "kernel"), ("add → forces", "kernel"),
        ("scale → damp", "kernel"), ("kinetic", "python"),
        ("add → residual", "kernel"), ("relax", "python"), ("add → correct", "kernel"), ("total", "builtin")]
    assert [n.role for n in describe(graphs.seed_001(), "test").nodes] == ["opaque"] * 4


def test_a_conditional_is_a_frame_around_its_box(graphs):
    """skippable and repeat_while are frames carrying their label around the node's box."""
    stages = describe(graphs.step(), "test").stages
    assert stages[2].block == Frame("repeat ≤ 8", "repeat", Box(5))
    assert stages[3].block == Frame("skip if guard", "skip", Box(6))
    assert stages[1].block == Fork((Seq((Box(1), Box(2))), Seq((Box(3),)), Seq((Box(4),))))


def test_device_constructs_frame_their_bodies(graphs):
    """A device loop frames its body; a match frames its arms side by side, keys in the label."""
    m = describe(graphs.builder(), "test")
    assert m.size == 8 and len(m.nodes) == 8 + 6
    loop, match = m.stages[2].block, m.stages[3].block
    assert loop == Frame("repeat ≤ 50", "loop", Seq((Box(8), Box(9))))
    assert match == Frame("match guard: 0 | 1 | _", "switch",
                          Fork((Seq((Box(10),)), Seq((Box(11), Box(12))), Seq((Box(13),)))))
    assert {n.owner for n in m.nodes[8:10]} == {5} and {n.owner for n in m.nodes[10:]} == {6}
    assert m.nodes[9].role == "python" and m.nodes[13].role == "opaque"


def test_a_wait_draws_no_box_and_its_writer_is_itself(graphs):
    """The wait node has no box; the node a branch waits for is drawn as the node it wraps."""
    m = describe(graphs.builder(), "test")
    assert m.stages[1].block == Fork((Seq((Box(1), Box(2))), Seq((Box(4),))))
    assert (m.nodes[1].label, m.nodes[1].role) == ("add → forces", "kernel")


def test_if_else_and_if_alone(if_graph):
    """An if with an else frames both arms; an if without one frames its one arm."""
    m = describe(if_graph, "test")
    assert m.stages[1].block == Frame("if guard · else", "if", Fork((Seq((Box(3),)), Seq((Box(4),)))))
    assert m.stages[2].block == Frame("if guard", "if", Box(5))
    text = str(if_graph)
    assert "if guard · else" in text and "╭─ if guard ──╮" in text
    assert text.count("scale") == 2


def test_links_of_nodes_inside_constructs_carry_the_constructs_planes(if_graph):
    """Inside a construct a node has its construct's edges: both arms of choose receive x."""
    assert '  n0 -->|"x"| n3\n  n0 -->|"x"| n4' in if_graph.to_mermaid()
