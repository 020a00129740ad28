"""One recording channel: every node function records where it is written, a node taken as another's
step runs there only, and the builder, hawk and the core share one active recording."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from eagle import extend
from hawk import Scalar


@hawk.kernel
def inc(x: Scalar) -> Scalar:
    return x + 1.0


def test_an_opaque_node_records_where_it_is_written_like_a_copy():
    seen = []

    @eagle.Graph.builder
    def step(x):
        g = eagle.Graph()
        y = inc(x)
        eagle.opaque(lambda: seen.append(float(y[0])), reads={"y": y})  # not added: recorded anyway
        z = inc(y)
        g.result = z
        return g

    g = step(np.zeros(2))
    assert g.node_labels() == ["y", "opaque", "z"]
    np.testing.assert_array_equal(g(), [2.0, 2.0])
    assert seen == [1.0]


def test_an_added_node_is_recorded_once_with_its_name():
    total = np.zeros(1)

    @eagle.Graph.builder
    def step(x):
        g = eagle.Graph()
        g.add_node(eagle.reduce(inc(x), total), name="total")  # recorded when made, named when added
        g.result = total
        return g

    g = step(np.arange(3.0))
    assert g.node_labels() == ["inc", "total"]
    np.testing.assert_array_equal(g(), [6.0])


def test_a_node_taken_as_a_conditional_step_runs_only_there():
    count, skip = np.zeros(1), np.ones(1, np.uint32)

    @eagle.Graph.builder
    def step(x):
        g = eagle.Graph()
        bump = eagle.opaque(lambda: np.add(count, 1.0, out=count), writes={"count": count})
        eagle.skippable(bump, eagle.SkipGuard.nonzero(skip))  # recorded where it is written
        g.result = inc(x)
        return g

    g = step(np.zeros(2))
    assert [n.kind for n in extend.view(g).nodes] == ["skippable", "plan"]
    g()
    assert count[0] == 0.0  # skipped: the opaque node is not also a node of its own
    skip[0] = 0
    g()
    assert count[0] == 1.0


def test_a_node_written_into_a_body_runs_only_there():
    a, b = np.full(2, 5.0), np.zeros(2)

    @eagle.Graph.builder
    def step(x, cell):
        g = eagle.Graph()
        then = eagle.Body([eagle.copy(a, into=b)])  # the copy is this arm's, not a node of its own
        g.add_node(extend.Node("device_if", eagle.DeviceIf(cell, then, eagle.Body())), name="maybe")
        g.result = inc(x)
        return g

    cell = np.zeros(1, np.uint32)
    g = step(np.zeros(2), cell)
    assert [n.kind for n in extend.view(g).nodes] == ["device_if", "plan"]
    g()
    np.testing.assert_array_equal(b, [0.0, 0.0])  # the arm did not run, and nothing else copied
    cell[0] = 1
    g()
    np.testing.assert_array_equal(b, [5.0, 5.0])


def test_the_builder_hawk_and_the_core_share_one_active_recording():
    calls = []

    class Log(extend.Recording):
        def call(self, kernel, args, kwargs):
            calls.append(kernel.__name__)
            return "recorded"

        def add_node(self, node, name):
            calls.append(node.kind)

        def adopt(self, graph):
            calls.append("graph")

    with extend.recording(Log()) as log:
        assert extend.active() is log
        assert inc(np.zeros(2)) == "recorded"
        eagle.copy(np.zeros(2), into=np.zeros(2))
        eagle.Graph()
    assert calls == ["inc", "copy", "graph"] and extend.active() is None


def test_a_recording_that_takes_no_kernel_calls_says_so():
    with extend.recording(extend.Recording()):
        with pytest.raises(TypeError, match=r"^inc: the active recording \(Recording\) takes no kernel"):
            inc(np.zeros(2))
        with pytest.raises(RuntimeError, match=r"^eagle\.Graph\.parallel: Recording, recording this graph, "):
            g = eagle.Graph()
            extend.record_into(g, extend.active())
            g.parallel()


def test_a_builder_graph_keeps_its_extension_state_in_the_one_slot():
    @eagle.Graph.builder
    def step(x):
        g = eagle.Graph()
        g.result = inc(x)
        return g

    g = step(np.zeros(2))
    assert set(extend.state(g)) == {"bind", "names"}  # the recording let go of the graph when it ended
    assert extend.recording_of(g) is None
    g.bind(x=np.ones(2))
    np.testing.assert_array_equal(g(), [2.0, 2.0])
