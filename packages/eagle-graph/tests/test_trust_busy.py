"""Every call that changes a Graph is under the guard build and launch hold (issue 17, defect 11):
a node added while another thread builds is refused, never half-listed."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import eagle
from eagle.graph import HostItems, Node, opaque, register_node_kind

entered, release = threading.Event(), threading.Event()


def _blocking_lowering(x):
    entered.set()  # the build is under way in its thread
    release.wait(30)
    return HostItems(lambda program: program.callback(lambda: None), native=False)


register_node_kind("trust_busy_block", reads=lambda x: [("x", x, "read")], writes=lambda x: [],
                   lower_cpu=_blocking_lowering)


@pytest.mark.parametrize("call", ["add_node", "add_group", "set_logical_size"])
def test_changing_a_graph_while_another_thread_builds_it_is_busy(call):
    entered.clear()
    release.clear()
    x = np.zeros(4)
    g = eagle.Graph().add_node(Node("trust_busy_block", x), name="slow")
    builder = threading.Thread(target=g.build)
    builder.start()
    try:
        assert entered.wait(30)
        node = opaque(lambda: None, reads={"x": x})
        change = {"add_node": lambda: g.add_node(node, name="late"),
                  "add_group": lambda: g.add_group([node]),
                  "set_logical_size": lambda: g.set_logical_size(2)}[call]
        with pytest.raises(eagle.Busy, match=rf"^eagle\.Graph\.{call}: another call is still running"):
            change()
    finally:
        release.set()
        builder.join()
    assert g.node_labels() == ["slow"] and g.backend == "cpu"
    g.launch()
