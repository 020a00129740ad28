"""The planes between the nodes of a construct's bodies (eagle.viz._body_flows): memory told apart
as eagle's edges tell it, arms that may run instead of each other, and loops."""

from __future__ import annotations

from functools import partial

import numpy as np

import eagle
from eagle.graph import Node, opaque
from eagle.viz import describe


def construct(*steps) -> eagle.Graph:
    """A graph of one device if whose body is ``steps`` (its nodes are 1, 2, … in the model)."""
    iff = Node("device_if", eagle.DeviceIf(np.ones(1, np.uint32), eagle.Body(list(steps)), eagle.Body([])))
    return eagle.Graph().add_node(iff)


def write(array: np.ndarray, name: str) -> Node:
    return opaque(partial(array.fill, 1.0), writes={name: array})


def read(array: np.ndarray, name: str) -> Node:
    return opaque(lambda: None, reads={name: array})


def test_views_flow_where_they_may_share_a_byte():
    """x written whole, then its first half; the second half read flows from the whole only (the
    halves share no byte); the first half read flows from both (the whole is a distinct view that
    meets it: conservative, as eagle's edges are)."""
    x = np.zeros(4)
    g = construct(write(x, "x"), write(x[:2], "lo"), read(x[2:], "hi"), read(x[:2], "lo"))
    assert describe(g, "test").flows == ((1, 3, "hi"), (1, 4, "lo"), (2, 4, "lo"))


def test_the_same_memory_written_again_has_one_writer():
    """Two views of the same bytes (the builder's reused buffers) are one plane: the second write
    replaces the first as the read's writer."""
    x = np.zeros(4)
    g = construct(write(x, "x"), write(x[:], "again"), read(x.view(), "x"))
    assert describe(g, "test").flows == ((2, 3, "x"),)


def test_after_an_if_and_its_else_that_both_write_a_plane_their_writes_are_its_writers():
    """p written, then an if/else whose arms both write it (one of them always runs), then read: the
    read flows from both arms, not from the write before."""
    p, cell = np.zeros(2), np.ones(1, np.uint32)
    arms = eagle.Body([write(p, "then")]), eagle.Body([write(p, "else")])
    inner = Node("device_if", eagle.DeviceIf(cell, *arms))
    g = construct(write(p, "first"), inner, read(p, "p"))
    model = describe(g, "test")
    assert [n.index for n in model.nodes] == [0, 1, 2, 3, 4, 5]  # 2 is the inner if: no box
    assert model.flows == ((3, 5, "p"), (4, 5, "p"))


def test_after_arms_that_may_all_be_skipped_what_was_before_is_a_writer_too():
    """The same with arms of a match without a default, and an if whose else leaves p alone: the
    write before may still be the last, so the read flows from it too."""
    p, cell = np.zeros(2), np.ones(1, np.uint32)
    arms = {0: eagle.Body([write(p, "zero")]), 1: eagle.Body([write(p, "one")])}
    match = Node("device_switch", eagle.DeviceSwitch(cell, arms, eagle.Body([])))
    assert describe(construct(write(p, "first"), match, read(p, "p")), "test").flows == (
        (1, 5, "p"), (3, 5, "p"), (4, 5, "p"))
    iff = Node("device_if", eagle.DeviceIf(cell, eagle.Body([write(p, "then")]), eagle.Body([read(p, "p")])))
    assert describe(construct(write(p, "first"), iff, read(p, "p")), "test").flows == (
        (1, 4, "p"), (1, 5, "p"), (3, 5, "p"))


def test_a_loop_carries_a_plane_from_one_arm_into_the_other_the_next_turn():
    """A loop around an if/else: the then arm writes p, the else arm reads it; the else arm's read in
    one turn flows from the then arm's write in the turn before (never in the same turn)."""
    p, more = np.zeros(2), np.ones(1, np.uint32)
    iff = Node("device_if", eagle.DeviceIf(more, eagle.Body([write(p, "then")]), eagle.Body([read(p, "p")])))
    loop = Node("device_loop", eagle.DeviceLoop(more, "while", 4, eagle.Body([iff])))
    # nodes: 0 the if, 1 p0, 2 the loop, 3 the inner if, 4 write p, 5 read p
    assert set(describe(construct(write(p, "p0"), loop), "test").flows) == {(1, 5, "p"), (4, 5, "p")}


def test_a_loop_carries_a_plane_into_its_next_turn():
    """In a loop, a read before the write of the same plane flows from that write (the turn before),
    and from the write before the loop; a plane the loop writes and only later nodes read flows from
    the loop's write and, as the loop may run no time, from the one before it."""
    p, q, more = np.zeros(2), np.zeros(2), np.ones(1, np.uint32)
    loop = Node("device_loop", eagle.DeviceLoop(more, "while", 4, eagle.Body([read(p, "p"), write(p, "p2"),
                                                                                 write(q, "q")])))
    g = construct(write(p, "p0"), write(q, "q0"), loop, read(q, "q"))
    flows = set(describe(g, "test").flows)
    # nodes: 0 the if, 1 p0, 2 q0, 3 the loop, 4 read p, 5 write p, 6 write q, 7 read q
    assert flows == {(1, 4, "p"), (5, 4, "p"), (2, 7, "q"), (6, 7, "q")}
