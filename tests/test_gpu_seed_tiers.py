"""Seed 001's three tiers, child graphs and print tags, seed 000's bind and seed 003's host nodes,
on the GPU (the driver emulation where there is no GPU): what issue 22 items 1-7 ask.

The device functions launch a kernel through eagle's own launcher (test_opaque_gpu.py's add_one),
so the tests run alike on a GPU and on the emulation; the emulation's counters (host waits, event
waits) are asserted only there.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import eagle
import eagle.graph
from eagle.graph import opaque


def _opaque_tests() -> ModuleType:
    """tests/gpu/test_opaque_gpu.py (its add_one kernel and Driver), loaded by path."""
    spec = importlib.util.spec_from_file_location("seed_tiers_opaque_tests",
                                                  Path(__file__).parent / "gpu" / "test_opaque_gpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


OPAQUE = _opaque_tests()
add_one = OPAQUE.add_one


@pytest.fixture
def driver(gpu: Any) -> Any:
    from eagle import _cuda

    _cuda.open_device(0)
    return OPAQUE.Driver()


def captured(x: Any) -> Any:
    """x += 1, captured into the CUDA graph."""
    return opaque(lambda: add_one(x, eagle.graph.capture_stream()), reads={"x": x}, writes={"x": x})


# ------------------------------------------------------------------ item 1: g.schedule names tiers

def test_the_schedule_names_each_gpu_stage_by_its_tier(gpu, driver):
    x, stream = gpu.zeros(8), driver.stream()
    g = eagle.Graph()
    g.add_node(captured(x), name="first")
    theirs = opaque(lambda: add_one(x, stream), reads={"x": x}, writes={"x": x}, stream=stream)
    g.add_node(theirs, name="theirs")
    g.add_node(captured(x), name="middle")
    g.add_node(opaque(lambda: None, reads={"x": x}, eager=True), name="look")
    g.add_node(captured(x), name="last")
    g.build()
    assert g.schedule == ["capture", "eager_stream", "capture", "eager_host", "capture"]
    assert eagle.Graph().add_node(captured(x)).build().schedule == ["capture"]


# ------------------------------------------------------ item 2: opaque(fn, stream=S), every launch

def test_a_stream_node_runs_on_the_host_every_launch_its_work_on_its_stream(gpu, driver, cuda_driver):
    x, stream, calls = gpu.zeros(8), driver.stream(), []

    def theirs() -> None:
        calls.append(eagle.graph.capture_stream())
        add_one(x, stream)

    g = eagle.Graph()
    g.add_node(captured(x), name="before")
    g.add_node(opaque(theirs, reads={"x": x}, writes={"x": x}, stream=stream), name="theirs")
    g.add_node(captured(x), name="after")
    g.build()
    assert calls == []  # nothing captured at build: fn is called at launch
    assert not gpu.get(x).any()
    g.launch(2)
    assert calls == [None, None]  # on the host, once per replay, not inside a capture
    np.testing.assert_array_equal(gpu.get(x), np.full(8, 6.0))
    if cuda_driver is not None:
        waits, events = cuda_driver.host_waits(), cuda_driver.event_waits()
        g.enqueue(3)
        assert cuda_driver.host_waits() == waits  # the host never waits
        # per replay: S waits for the graph before, the graph after waits for S, and the first
        # graph for the last graph of the replay before (none after the launch's synchronize)
        assert cuda_driver.event_waits() - events == 3 * 3 - 1
        g.synchronize()
    else:
        g.enqueue(3).synchronize()
    assert len(calls) == 5
    np.testing.assert_array_equal(gpu.get(x), np.full(8, 15.0))


def test_a_stream_node_in_a_fork_or_a_body_is_refused_by_name(gpu, driver):
    x, y, stream = gpu.zeros(8), gpu.zeros(8), driver.stream()
    node = opaque(lambda: add_one(x, stream), reads={"x": x}, writes={"x": x}, stream=stream)
    g = eagle.Graph().add_group([node, captured(y)], names=["theirs", "other"])
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.build: node 'theirs' runs eagerly "
                                         r"\(opaque\(\.\.\., stream=S\): on the host at every launch\) "
                                         r"inside a fork"):
        g.build()
    cell = gpu.asarray(np.ones(1, np.uint32))

    def theirs() -> None:
        add_one(x, stream)

    body = eagle.Body([opaque(theirs, reads={"x": x}, writes={"x": x}, stream=stream)])
    g = eagle.Graph().add_node(eagle.graph.Node("device_if", eagle.DeviceIf(cell, body, eagle.Body())))
    with pytest.raises(ValueError, match=r"node 'theirs' runs eagerly \(opaque\(\.\.\., stream=S\).* "
                                         r"inside a device if or loop body"):
        g.build()


def test_a_stream_node_is_a_plain_call_on_the_cpu():
    x, calls = np.zeros(2), []
    node = opaque(lambda: calls.append(np.add(x, 1.0, out=x)), reads={"x": x}, writes={"x": x}, stream=7)
    g = eagle.Graph().add_node(node, name="theirs").build().launch(3)
    assert len(calls) == 3 and g.schedule == ["work_share"]
    np.testing.assert_array_equal(x, [3.0, 3.0])


# ------------------------------------------------------------- item 3: print(g) tags the tiers

def test_print_tags_a_child_graph_node_and_the_other_tiers(gpu, driver):
    x, stream = gpu.zeros(8), driver.stream()
    g = eagle.Graph()
    g.add_node(eagle.graph.child(driver.captured_graph(x), reads={"x": x}, writes={"x": x}), name="theirs")
    g.add_node(opaque(lambda: None, reads={"x": x}, writes={"x": x}, stream=stream), name="streamed")
    g.add_node(opaque(lambda: None, reads={"x": x}, eager=True), name="looked")
    drawn = importlib.util.find_spec("eagle.viz") is not None  # the minimal session: the listing only
    for text in (str(g), str(g.build())) if drawn else ():
        assert "theirs [child]" in text and "streamed> [stream]" in text and "looked> [host]" in text
    assert "[stream: cpu runs eagerly]" not in str(g)
    listing = g._listing()  # what print(g) shows without eagle-viz
    assert "theirs [child]" in listing and "streamed [stream]" in listing and "looked [host]" in listing


# ---------------------------------------------- item 4: a child whose owner was reset or re-captured

class Owner:
    """What eagle asks of a torch.cuda.CUDAGraph: raw_cuda_graph(), refused after reset()."""

    def __init__(self, driver: Any, x: Any) -> None:
        self.driver, self.x = driver, x
        self.handle: int | None = driver.captured_graph(x)

    def raw_cuda_graph(self) -> int:
        if self.handle is None:
            raise RuntimeError("the graph was reset")
        return self.handle

    def capture_again(self) -> None:
        self.handle = self.driver.captured_graph(self.x)

    def reset(self) -> None:
        self.handle = None


@pytest.mark.parametrize("change", ["reset", "capture_again"])
def test_a_launch_after_the_child_graphs_owner_changed_is_refused_by_name(gpu, driver, change):
    x = gpu.zeros(8)
    owner = Owner(driver, x)
    node = eagle.graph.child(owner, reads={"x": x}, writes={"x": x})
    g = eagle.Graph().add_node(node, name="theirs").build()
    g.launch(2)
    np.testing.assert_array_equal(gpu.get(x), np.full(8, 2.0))
    getattr(owner, change)()
    for call in (g.launch, g.enqueue):
        with pytest.raises(RuntimeError, match=r"^eagle\.Graph\.(launch|enqueue): node 'theirs' is a "
                                               r"child graph whose owner was reset or captured again "
                                               r".*rebuild the eagle graph then"):
            call()
    np.testing.assert_array_equal(gpu.get(x), np.full(8, 2.0))  # the stale clone never ran
    if change == "capture_again":
        eagle.Graph().add_node(eagle.graph.child(owner, reads={"x": x}, writes={"x": x})).build().launch()
        np.testing.assert_array_equal(gpu.get(x), np.full(8, 3.0))


# ------------------------------------------- item 5: bind of an array your own code declares

def _bumped() -> Any:
    """A builder over an opaque node of your own code (eagle-builder: the minimal session has
    eagle-graph alone)."""
    pytest.importorskip("eagle.builder")

    @eagle.Graph.builder
    def bumped(x):
        g = eagle.Graph()
        g.add_node(captured(x), name="bump")
        g.result = x
        return g
    return bumped


def test_bind_of_an_array_an_opaque_node_declares_rebuilds_and_warns_once(gpu):
    bumped = _bumped()
    first, second, third = gpu.zeros(4), gpu.asarray(np.full(4, 10.0)), gpu.asarray(np.full(4, 20.0))
    g = bumped(first)
    g.launch(2)
    with pytest.warns(eagle.RebuildWarning, match=r"^eagle\.Graph\.bind: a node of your own code .* "
                                                   r"the graph is built again from the builder"):
        g.bind(x=second)
    assert g.result is second
    np.testing.assert_array_equal(gpu.get(g()), np.full(4, 11.0))
    np.testing.assert_array_equal(gpu.get(first), np.full(4, 2.0))  # the old array is left alone
    assert (g.captures, g.graph_builds) == (2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per graph
        g.bind(x=third)
    np.testing.assert_array_equal(gpu.get(g(2)), np.full(4, 22.0))
    assert g.captures == 3


def test_bind_of_an_array_an_opaque_node_declares_rebuilds_on_the_cpu_too():
    pytest.importorskip("eagle.builder")
    x, y = np.zeros(3), np.full(3, 5.0)

    @eagle.Graph.builder
    def doubled(x):
        g = eagle.Graph()
        g.add_node(opaque(lambda: np.add(x, 1.0, out=x), reads={"x": x}, writes={"x": x}), name="add")
        g.result = x
        return g

    g = doubled(x)
    g()
    with pytest.warns(eagle.RebuildWarning):
        g.bind(x=y)
    np.testing.assert_array_equal(g(), [6.0, 6.0, 6.0])
    np.testing.assert_array_equal(x, [1.0, 1.0, 1.0])
    from eagle import _core

    assert _core.lib.eagle_guard_enter(g._busy)  # as another thread's call would: the launch sees it
    try:
        with pytest.raises(eagle.Busy):
            g.launch()
    finally:
        _core.lib.eagle_guard_leave(g._busy)


# ------------------------------------------------ item 6: a host node in a device body, by its label

def test_a_host_node_in_a_device_body_is_refused_by_its_own_label(gpu):
    cell, h = gpu.asarray(np.ones(1, np.uint32)), eagle.pinned(1)

    def count_events() -> None:
        h[0] += 1

    for body in (eagle.Body([opaque(count_events, writes={"h": h})]),  # a host node: host planes
                 eagle.Body([opaque(count_events)])):  # a call with no planes
        g = eagle.Graph().add_node(eagle.graph.Node("device_if", eagle.DeviceIf(cell, body, eagle.Body())),
                                   name="branch")
        with pytest.raises(ValueError, match=r"^eagle\.Graph\.build: node 'count_events' is a host "
                                             r"node .* inside a device if or loop body"):
            g.build()


# --------------------------------------- item 7: the host node's own exception, after enqueue

def test_after_enqueue_the_next_synchronize_raises_the_host_nodes_own_exception(gpu):
    h, d, failures = eagle.pinned(4), gpu.zeros(4), [KeyError("from the host node")]

    def check() -> None:
        if failures:
            raise failures.pop()

    g = eagle.Graph().add_node(eagle.copy(d, into=h)).add_node(opaque(check, reads={"h": h}), name="check")
    g.build()
    g.enqueue(2)  # returns: the exception is kept for the call that waits
    with pytest.raises(KeyError, match="from the host node"):
        g.synchronize()
    g.synchronize()  # reported once
    g.launch()
    failures.append(LookupError("again"))
    g.enqueue()
    with pytest.raises(LookupError, match="again"):  # or from the next launch
        g.launch()
    g.launch()
