"""Liveness over the build's order and the buffer plan's packing (issue 19, planned buffers)."""

from __future__ import annotations

import numpy as np

import eagle
from eagle._buffers import assign
from eagle._liveness import Liveness
from eagle.graph import opaque


def _node(reads=(), writes=()):
    return opaque(lambda: None, reads={f"r{k}": a for k, a in enumerate(reads)},
                  writes={f"w{k}": a for k, a in enumerate(writes)})


def test_spans_first_write_last_read_and_forks():
    a, b, c, d = (np.zeros(4) for _ in range(4))
    nodes = [_node(writes=[a]), _node([a], [b]), _node([b], [c]), _node([a], [d]), _node([c, d])]
    live = Liveness([n.planes() for n in nodes], forks=[[[1], [2]]])  # nodes 1 and 2: one fork
    assert live.span(a) == (0, 3) and live.span(b) == (1, 2) and live.span(c) == (1, 4)
    assert live.of(b).written_first and live.of(b).read_first  # written and read in the fork
    assert live.of(a).written_first and not live.of(a).read_first
    assert [live.read_after(a, p) for p in range(5)] == [True, True, True, False, False]
    assert live.span(np.zeros(1)) is None and not live.read_after(np.zeros(1), 0)


def test_a_construct_is_one_position():
    t, u, cell = np.zeros(4), np.zeros(4), np.ones(1, np.uint32)
    body = eagle.Body([_node([t], [u]), _node([u], [t])])
    loop = eagle.graph.Node("device_loop", eagle.DeviceLoop(cell, "while", 3, body))
    live = Liveness([_node(writes=[t]).planes(), loop.planes(), _node([t]).planes()])
    assert live.span(u) == (1, 1) and live.span(t) == (0, 2)


def test_assign_shares_what_never_meets_and_takes_over_in_place():
    a, b, c, e = (np.zeros(8) for _ in range(4))
    f32 = np.zeros(8, np.float32)
    steps = [[(a, "write")], [(a, "read"), (b, "write")], [(b, "read"), (c, "write"), (f32, "write")],
             [(c, "read"), (e, "write")]]
    live = Liveness([[("p", x, role) for x, role in step] for step in steps])
    arrays = [a, b, c, e, f32]
    spans = [(x, live.of(x)) for x in arrays]
    apart = assign(spans, lambda position, last, new: False)
    # a dies at 1 where b is born: they meet, so two storages ping-pong; f32 has its own
    assert apart[0] != apart[1] and apart[2] == apart[0] and apart[3] == apart[1]
    assert apart[4] not in apart[:4]
    taken = assign(spans, lambda position, last, new: True)
    assert len({taken[k] for k in range(4)}) == 1  # each output lands on the plane it reads last
