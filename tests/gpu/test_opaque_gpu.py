"""Your own code in a CUDA graph: captured opaque nodes (on eagle's stream or yours), eager ones that
cut the graph, and child graphs made elsewhere.

The captured functions launch a kernel through eagle's own launcher on the stream being captured,
so the tests run alike on a GPU and on the emulation.
"""

from __future__ import annotations

import ctypes
import gc
import os
from collections.abc import Callable

import numpy as np
import pytest

import eagle
import eagle.graph
from eagle import _cuda
from eagle.graph import opaque

ADD_ONE = """
extern "C" __global__ void add_one(double *x, const long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1.0;
}
"""


def add_one(x: object, stream: int | None) -> None:
    """Launch x += 1 on ``stream`` (recorded, not run, while it is captured)."""
    function = _cuda.module(ADD_ONE, "add_one").function("add_one")
    _cuda.launch(function, (1, 1, 1), (64, 1, 1), [x, np.int64(len(x))], stream=stream or 0)


class Driver:
    """A few driver calls, reached the way libeagle reaches them (cuGetProcAddress), for the tests
    that need a stream or a graph of their own."""

    def __init__(self) -> None:
        lib = ctypes.CDLL(os.environ.get("EAGLE_LIBCUDA") or "libcuda.so.1")
        self._get = lib.cuGetProcAddress_v2
        self._get.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64,
                              ctypes.c_void_p]

    def call(self, name: str, version: int, *args: object) -> None:
        assert self.status(name, version, *args) == 0, name

    def status(self, name: str, version: int, *args: object) -> int:
        """Call a driver function whose parameters are all pointer-sized or int (as these are)."""
        pointer = ctypes.c_void_p()
        assert self._get(name.encode(), ctypes.byref(pointer), version, 0, None) == 0, name
        types = [ctypes.c_int if isinstance(a, ctypes.c_int) else ctypes.c_void_p for a in args]
        return ctypes.CFUNCTYPE(ctypes.c_int, *types)(pointer.value)(*args)

    def stream(self) -> int:
        handle = ctypes.c_void_p()
        self.call("cuStreamCreate", 2000, ctypes.addressof(handle), ctypes.c_int(1))
        return handle.value

    def capture(self, stream: int, record: Callable[[], None]) -> int:
        """The CUgraph of what ``record`` enqueues on ``stream``, by stream capture outside eagle.
        No garbage is collected meanwhile: a device array a collection frees would be a cuMemFree
        during the capture, which invalidates it (as on a real GPU)."""
        graph = ctypes.c_void_p()
        gc.collect()
        gc.disable()
        try:
            self.call("cuStreamBeginCapture", 10010, stream, ctypes.c_int(1))
            record()
            self.call("cuStreamEndCapture", 10000, stream, ctypes.addressof(graph))
        finally:
            gc.enable()
        return graph.value

    def captured_graph(self, x: object) -> int:
        """A CUgraph of one launch of add_one over x, made by stream capture outside eagle."""
        stream = self.stream()
        return self.capture(stream, lambda: add_one(x, stream))


@pytest.fixture
def driver(gpu) -> Driver:
    _cuda.open_device(0)
    return Driver()


def test_a_captured_function_runs_once_at_build_and_replays(gpu):
    x, calls = gpu.zeros(8), []

    def step() -> None:
        calls.append(eagle.graph.capture_stream())
        add_one(x, eagle.graph.capture_stream())

    g = eagle.Graph().add_node(opaque(step, reads={"x": x}, writes={"x": x}), name="step").build()
    assert len(calls) == 1 and calls[0]  # captured once, on eagle's stream
    assert not gpu.get(x).any()  # capturing ran nothing
    g.launch(3)
    assert len(calls) == 1
    np.testing.assert_array_equal(gpu.get(x), np.full(8, 3.0))
    assert eagle.graph.capture_stream() is None


def test_a_captured_function_on_the_callers_stream(gpu, driver):
    x, stream = gpu.zeros(8), driver.stream()
    node = opaque(lambda: add_one(x, stream), reads={"x": x}, writes={"x": x}, stream=stream)
    eagle.Graph().add_node(node).build().launch(2)
    np.testing.assert_array_equal(gpu.get(x), np.full(8, 2.0))


def test_an_exception_while_capturing_is_raised_by_build(gpu):
    x = gpu.zeros(8)

    def broken() -> None:
        raise LookupError("no such layer")

    g = eagle.Graph().add_node(opaque(broken, writes={"x": x}))
    with pytest.raises(LookupError, match="no such layer"):
        g.build()
    assert g.backend is None


def test_an_eager_function_cuts_the_graph(gpu):
    x, seen = gpu.zeros(8), []
    g = eagle.Graph()
    g.add_node(opaque(lambda: add_one(x, eagle.graph.capture_stream()), reads={"x": x}, writes={"x": x}),
               name="before")
    g.add_node(opaque(lambda: seen.append(float(gpu.get(x)[0])), reads={"x": x}, eager=True), name="read")
    g.add_node(opaque(lambda: add_one(x, eagle.graph.capture_stream()), reads={"x": x}, writes={"x": x}),
               name="after")
    g.build().launch(2)
    assert seen == [1.0, 3.0]  # the device is idle when the eager call reads
    np.testing.assert_array_equal(gpu.get(x), np.full(8, 4.0))
    assert (g.captures, g.graph_builds) == (2, 2)  # two CUDA graphs around the cut
    g.enqueue(1).synchronize()
    assert seen[-1] == 5.0


def test_an_eager_function_in_a_fork_or_a_body_is_refused(gpu):
    x, y = gpu.zeros(8), gpu.zeros(8)
    eager = opaque(lambda: None, reads={"x": x}, eager=True)
    g = eagle.Graph().add_group([eager, opaque(lambda: None, writes={"y": y})], names=["look", "other"])
    with pytest.raises(ValueError, match=r"node 'look' runs eagerly .* inside a fork"):
        g.build()
    cell = gpu.asarray(np.ones(1, np.uint32))
    body = eagle.Body([opaque(lambda: None, reads={"x": x}, eager=True)])
    g = eagle.Graph().add_node(eagle.graph.Node("device_if", eagle.DeviceIf(cell, body, eagle.Body())))
    with pytest.raises(ValueError, match=r"runs eagerly .* inside a device if or loop body"):
        g.build()


def test_a_child_graph_made_elsewhere(gpu, driver):
    x = gpu.zeros(8)
    handle = driver.captured_graph(x)
    node = eagle.graph.child(handle, reads={"x": x}, writes={"x": x})
    g = eagle.Graph().add_node(node, name="theirs").build()
    g.launch(4)
    np.testing.assert_array_equal(gpu.get(x), np.full(8, 4.0))
    driver.call("cuGraphDestroy", 10000, handle)  # eagle's graph holds a clone
    g.launch()
    np.testing.assert_array_equal(gpu.get(x), np.full(8, 5.0))


def test_a_child_graph_has_no_cpu_lowering():
    with pytest.raises(ValueError, match="kind 'child' has no CPU lowering"):
        eagle.Graph().add_node(eagle.graph.child(1, reads={"x": np.zeros(2)})).build()


def test_a_capture_that_synchronises_is_named_with_the_fix(gpu, driver):
    """A captured function that waits for its stream breaks the capture: the node is named, and
    eager=True is the way out."""
    x = gpu.zeros(8)

    def waits() -> None:
        stream = eagle.graph.capture_stream()
        add_one(x, stream)
        driver.status("cuStreamSynchronize", 2000, stream)  # refused, and the capture is invalidated

    g = eagle.Graph().add_node(opaque(waits, reads={"x": x}, writes={"x": x}), name="sync_inside")
    with pytest.raises(RuntimeError, match=r"^eagle\.Graph\.build: node 'sync_inside': capturing its device "
                                           r"work failed .*opaque\(\.\.\., eager=True\)"):
        g.build()
