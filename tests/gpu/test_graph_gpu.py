"""eagle.Graph over device planes: one CUDA graph, the CPU's results and bits.

On a machine with a GPU these run on it (CuPy arrays where CuPy is installed); elsewhere on the
CPU emulation of the driver (tests/fakecuda), where eagle's CUDA C runs as a host build.
"""

from __future__ import annotations

import numpy as np
import pytest

import eagle
from eagle._regions import SignalAfter, Wait
from eagle.graph import opaque

hawk = pytest.importorskip("hawk")
from hawk import Mutable, Param, Scalar, UInt32  # noqa: E402

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint32, np.uint64, np.uint8]
SIZES = [1, 7, 1024, 1025, 5000]


@hawk.kernel
def affine(x: Scalar, a: Param, b: Param) -> Scalar:
    return a * x + b


@hawk.kernel
def centred(x: Scalar) -> Scalar:
    return x - hawk.sum(x) / 3.0


@hawk.kernel
def halve_until(x: Mutable[Scalar], limit: Param, flag: Mutable[UInt32]):
    x = x * 0.5
    flag = hawk.math.uint32(hawk.sum(x > limit))


def cpu_reduce(x: np.ndarray, op: str) -> np.ndarray:
    out = np.zeros(1, x.dtype)
    eagle.Graph().add_node(eagle.reduce(x, out, op)).build().launch()
    return out


def data(n: int, dtype: type, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(n) * 1e3).astype(dtype)
    return rng.integers(0, 200, n).astype(dtype)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_reduce_gives_the_cpus_bits(gpu, dtype, n):
    x = data(n, dtype)
    for op in ("sum", "max", "all"):
        out = gpu.zeros(1, dtype)
        g = eagle.Graph().add_node(eagle.reduce(gpu.asarray(x), out, op)).build()
        assert g.backend == "gpu"
        g.launch()
        assert gpu.get(out).tobytes() == cpu_reduce(x, op).tobytes(), op


def test_reduce_over_many_blocks_of_blocks(gpu):
    """More than EAGLE_BLOCK block partials: a third pass, same bits."""
    x = data(eagle.BLOCK * eagle.BLOCK + 3, np.float64)
    out = gpu.zeros(1)
    eagle.Graph().add_node(eagle.reduce(gpu.asarray(x), out)).build().launch()
    assert gpu.get(out).tobytes() == cpu_reduce(x, "sum").tobytes()


def test_hawk_kernels_give_the_cpus_bits(gpu):
    x = data(3000, np.float64, seed=1)
    dx = gpu.asarray(x)
    g = eagle.Graph()
    g.add(affine.plan(dx, 2.0, 1.0), name="affine")
    y = g._nodes[0].payload.outputs[0]
    g.add(centred.plan(y), name="centred")
    z = g._nodes[1].payload.outputs[0]
    g.build()
    g.launch(3)
    assert (g.captures, g.graph_builds) == (1, 1)
    np.testing.assert_array_equal(gpu.get(z), centred(affine(x, 2.0, 1.0)))


def test_a_conditional_loop_with_a_guard_the_body_writes(gpu):
    """repeat_while over a hawk kernel whose reduction rewrites the guard cell, on the device."""
    x = np.full(2000, 64.0)
    dx, flag = gpu.asarray(x), gpu.asarray(np.ones(1, np.uint32))
    step = halve_until.plan(dx, 1.0, flag).launch
    g = eagle.Graph().add_node(eagle.repeat_while(step, flag, max_iters=50)).build()
    g.launch()
    np.testing.assert_array_equal(gpu.get(dx), np.full(2000, 1.0))
    assert gpu.get(flag)[0] == 0


@pytest.mark.parametrize("cap, turns", [(-1, 7), (3, 3), (0, 0)])
def test_device_loops_count_their_turns(gpu, cap, turns):
    count = gpu.zeros(1, np.float64)
    cell = gpu.asarray(np.array([7], np.uint32))
    body = eagle.Body([eagle.graph.Node("plan", affine.plan(count, 1.0, 1.0, buffer=count))])
    g = eagle.Graph().add_node(eagle.graph.Node("device_loop", eagle.DeviceLoop(cell, "count", cap, body)))
    g.build().launch()
    assert gpu.get(count)[0] == turns


def test_if_else_and_sparse_switch_read_the_cell_per_replay(gpu):
    x = gpu.zeros(4)
    cell = gpu.asarray(np.array([1], np.uint32))

    def fill(v: float) -> eagle.Body:
        return eagle.Body([eagle.graph.Node("plan", affine.plan(x, 0.0, v, buffer=x))])

    g = eagle.Graph().add_node(eagle.graph.Node("device_if", eagle.DeviceIf(cell, fill(1.0), fill(-1.0))))
    g.build().launch()
    assert gpu.get(x)[0] == 1.0
    gpu.put(cell, 0)
    g.launch()
    assert gpu.get(x)[0] == -1.0
    switch = eagle.DeviceSwitch(cell, {3: fill(30.0), 10: fill(100.0)}, fill(0.5))
    g = eagle.Graph().add_node(eagle.graph.Node("device_switch", switch)).build()
    for key, want in ((10, 100.0), (3, 30.0), (4, 0.5), (0, 0.5)):
        gpu.put(cell, key)
        g.launch()
        assert gpu.get(x)[0] == want, key


def test_host_node_and_copies_both_ways(gpu):
    """Seed 003's shape: device -> pinned host, a host node on the host planes, back to the device."""
    n = 64
    state = gpu.asarray(np.arange(n, dtype=np.float64))
    h_probe, h_flags = eagle.pinned(n), eagle.pinned(n, np.uint32)
    flags = gpu.zeros(n, np.uint32)
    seen = []

    def check_events() -> None:
        seen.append(float(h_probe.sum()))
        h_flags[:] = h_probe > 10.0

    g = eagle.Graph()
    g.add(affine.plan(state, 1.0, 1.0, buffer=state), name="propagate")
    g.add_node(eagle.copy(state, into=h_probe), name="down")
    g.add_node(opaque(check_events, reads={"p": h_probe}, writes={"f": h_flags}), name="check")
    g.add_node(eagle.copy(h_flags, into=flags), name="up")
    g.build().launch(2)
    assert seen == [sum(range(1, n + 1)), sum(range(2, n + 2))]
    np.testing.assert_array_equal(gpu.get(flags), (np.arange(n) + 2.0 > 10.0).astype(np.uint32))


def test_a_pageable_array_is_staged_once_and_refused_in_a_body(gpu):
    d, pageable = gpu.zeros(8), np.arange(8.0)
    g = eagle.Graph().add_node(eagle.copy(pageable, into=d)).build().launch()
    np.testing.assert_array_equal(gpu.get(d), pageable)
    cell = gpu.asarray(np.ones(1, np.uint32))
    body = eagle.Body([eagle.copy(pageable, into=d)])
    g = eagle.Graph().add_node(eagle.graph.Node("device_if", eagle.DeviceIf(cell, body, eagle.Body())))
    with pytest.raises(ValueError, match=r"^eagle\.copy: src is a pageable host array, and this copy is in "
                                         r"a loop or branch body.*eagle\.pinned"):
        g.build()
    assert g.backend is None


def test_a_host_node_in_a_device_body_is_refused(gpu):
    cell, h = gpu.asarray(np.ones(1, np.uint32)), np.zeros(1)
    body = eagle.Body([opaque(lambda: None, writes={"h": h})])
    g = eagle.Graph().add_node(eagle.graph.Node("device_if", eagle.DeviceIf(cell, body, eagle.Body())),
                               name="branch")
    with pytest.raises(ValueError, match=r"is a host node .* inside a device if or loop body: CUDA does not "
                                         "allow host functions in a conditional body"):
        g.build()


def test_a_host_nodes_exception_is_raised_by_the_next_wait(gpu):
    h = eagle.pinned(4)
    d = gpu.zeros(4)

    def boom() -> None:
        raise KeyError("from the host node")

    g = eagle.Graph().add_node(eagle.copy(d, into=h)).add_node(opaque(boom, reads={"h": h}))
    g.build()
    with pytest.raises(KeyError, match="from the host node"):
        g.launch()
    with pytest.raises(KeyError, match="from the host node"):  # from enqueue or from synchronize
        g.enqueue(2)
        g.synchronize()


def test_enqueue_then_synchronize(gpu):
    x = gpu.zeros(100)
    g = eagle.Graph().add(affine.plan(x, 1.0, 1.0, buffer=x)).build()
    g.enqueue(5).synchronize()
    np.testing.assert_array_equal(gpu.get(x), np.full(100, 5.0))


def test_set_logical_size_patches_the_launches(gpu):
    x = gpu.zeros(3000)
    total = gpu.zeros(1)
    g = eagle.Graph().add(affine.plan(x, 1.0, 1.0, buffer=x)).add_node(eagle.reduce(x, total)).build()
    g.set_logical_size(1500).launch()
    got = gpu.get(x)
    assert got[:1500].tolist() == [1.0] * 1500 and not got[1500:].any()
    assert gpu.get(total)[0] == 1500.0
    g.set_logical_size(0).launch()
    assert gpu.get(total)[0] == 0.0
    g.set_logical_size(3000).launch()
    assert gpu.get(total)[0] == 1500.0 * 2 + 1500.0
    assert g.captures == 1  # patched, never rebuilt


def test_fork_branches_and_a_wait(gpu):
    """A fork's branches are branches of the CUDA graph; a wait is one edge from the node it waits for."""
    a, b, c = gpu.asarray(np.ones(16)), gpu.zeros(16), gpu.zeros(16)
    left = affine.plan(a, 2.0, 0.0, buffer=b)
    signal = eagle.graph.Node("signal_after", SignalAfter(eagle.graph.Node("plan", left)))
    wait = eagle.graph.Node("wait", Wait(signal, "b"))
    right = eagle.graph.Node("plan", affine.plan(b, 1.0, 1.0, buffer=c))
    g = eagle.Graph().add_group([signal, [wait, right]], names=["left", ["wait", "right"]])
    g.build().launch()
    np.testing.assert_array_equal(gpu.get(c), np.full(16, 3.0))


def test_a_guard_cell_in_pageable_memory_is_refused(gpu):
    x, cell = gpu.zeros(4), np.ones(1, np.uint32)
    body = eagle.Body([eagle.graph.Node("plan", affine.plan(x, 1.0, 1.0, buffer=x))])
    g = eagle.Graph().add_node(eagle.graph.Node("device_if", eagle.DeviceIf(cell, body, eagle.Body())))
    with pytest.raises(ValueError, match="guard cell of a device if, match or loop is a pageable host array"):
        g.build()


def test_a_node_with_both_sides_names_the_copy_to_add(gpu):
    h, d = np.zeros(8), gpu.zeros(8)
    g = eagle.Graph().add(affine.plan(d, 1.0, 1.0)).add_node(opaque(lambda: None, reads={"h": h, "d": d}),
                                                             name="layer")
    with pytest.raises(ValueError, match=r"node 'layer' has planes on both sides: host h, device d; add "
                                         r"eagle\.copy\(h, into=<a device array>\) before it"):
        g.build()


def test_a_native_plan_refuses_device_planes(gpu):
    from eagle.native import Library, compile_library
    from eagle.plan import Plan

    lib = Library(compile_library('#include "eagle/eagle.h"\n'
                                  "void nop(int64_t b, int64_t e, const eagle_arg *a) {}\n", name="gpu_nop"))
    plan = Plan(lib.kernel("nop"), [("x", "readwrite")], name="nop")
    g = eagle.Graph().add(plan.bind(gpu.zeros(4)))
    with pytest.raises(ValueError, match="plan 'nop' has device planes, but its kernel is native C"):
        g.build()


def test_a_second_thread_gets_busy_while_a_launch_runs(gpu):
    """The guard holds on the GPU too: a host node keeps the first launch running."""
    import threading

    h, d = eagle.pinned(4), gpu.zeros(4)
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        entered.set()
        release.wait(10)

    g = eagle.Graph().add_node(eagle.copy(d, into=h)).add_node(opaque(hold, reads={"h": h})).build()
    worker = threading.Thread(target=g.launch)
    worker.start()
    try:
        assert entered.wait(10)
        with pytest.raises(eagle.Busy, match=r"^eagle\.Graph\.launch: another call is still running"):
            g.launch()
    finally:
        release.set()
        worker.join(10)
    g.launch()  # free again


def test_copies_between_host_arrays_in_a_gpu_graph(gpu):
    """Host to host: pinned to pinned is a copy node; a pageable side makes it a host node."""
    d = gpu.asarray(np.arange(6.0))
    a, b, c = eagle.pinned(6), eagle.pinned(6), np.zeros(6)
    g = eagle.Graph().add_node(eagle.copy(d, into=a)).add_node(eagle.copy(a, into=b))
    g.add_node(eagle.copy(b, into=c)).build().launch()
    np.testing.assert_array_equal(c, np.arange(6.0))


def test_pinned_memory_comes_from_the_driver(gpu):
    from eagle import _cuda

    h = eagle.pinned((2, 3), np.float32)
    assert h.shape == (2, 3) and h.dtype == np.float32 and not h.any()
    assert _cuda.memory_type(h.ctypes.data) == "pinned"
    assert _cuda.memory_type(np.zeros(3).ctypes.data) == "pageable"
    assert _cuda.memory_type(_cuda.address(gpu.zeros(3))) == "device"


@pytest.mark.parametrize("kind, cap, cell, turns", [
    ("do", 3, 0, 1), ("do", 3, 1, 3), ("do", 0, 1, 0), ("do", -1, 0, 1),
    ("while", 5, 0, 0), ("while", 5, 1, 5), ("count", 2, 9, 2), ("count", -1, 4, 4), ("count", 5, 0, 0),
])
def test_loop_turns_match_the_host_executor(gpu, kind, cap, cell, turns):
    """Every loop kind and cap, against the same DeviceLoop run on NumPy arrays."""
    def run(count: object, guard: object) -> None:
        body = eagle.Body([eagle.graph.Node("plan", affine.plan(count, 1.0, 1.0, buffer=count))])
        eagle.Graph().add_node(eagle.graph.Node("device_loop", eagle.DeviceLoop(guard, kind, cap, body))) \
            .build().launch()

    host, device = np.zeros(1), gpu.zeros(1)
    run(host, np.array([cell], np.uint32))
    run(device, gpu.asarray(np.array([cell], np.uint32)))
    assert host[0] == turns and gpu.get(device)[0] == turns


def test_set_logical_size_reaches_a_host_node(gpu):
    """A hawk kernel on pinned planes is a host node running its CPU lowering: resized too."""
    h = eagle.pinned(8)
    g = eagle.Graph().add(affine.plan(gpu.zeros(8), 1.0, 1.0)).add(affine.plan(h, 1.0, 1.0, buffer=h))
    g.build().set_logical_size(2).launch()
    np.testing.assert_array_equal(h, [1, 1, 0, 0, 0, 0, 0, 0])


def test_opaque_code_without_planes_runs_at_every_replay(gpu):
    calls = []
    x = gpu.zeros(4)
    g = eagle.Graph().add(affine.plan(x, 1.0, 1.0, buffer=x)).add_node(opaque(lambda: calls.append(1)))
    g.build().launch(3)
    assert calls == [1, 1, 1]


@pytest.mark.parametrize("stream", [0, 1, 2])
def test_a_default_stream_cannot_be_captured(gpu, stream):
    x = gpu.zeros(4)
    g = eagle.Graph().add_node(opaque(lambda: None, writes={"x": x}, stream=stream))
    with pytest.raises(ValueError, match=r"^eagle\.graph\.opaque: stream= is a default stream"):
        g.build()


def test_an_eager_node_first_leaves_no_empty_graph(gpu):
    x, seen = gpu.zeros(4), []
    g = eagle.Graph().add_node(opaque(lambda: seen.append(1), reads={"x": x}, eager=True))
    g.add(affine.plan(x, 1.0, 1.0, buffer=x)).build().launch(2)
    assert seen == [1, 1] and g.captures == 1
    np.testing.assert_array_equal(gpu.get(x), np.full(4, 2.0))


def test_a_dtype_eagle_does_not_reduce_is_refused(gpu):
    with pytest.raises(TypeError, match=r"^eagle\.reduce: x is float16; eagle reduces float64"):
        eagle.reduce(gpu.zeros(4, np.float16), gpu.zeros(1, np.float16))


def test_no_cuda_call_from_a_host_node_even_when_it_drops_device_memory(gpu):
    """A host node runs on the driver's thread, where CUDA calls are refused: device memory
    whose last reference goes there (a collector run, say) is freed at eagle's next CUDA work."""
    from eagle import _cuda

    h = eagle.pinned(4)
    doomed, waiting = [_cuda.DeviceArray(8)], []

    def drop() -> None:
        doomed.clear()  # the last reference: the free must wait
        waiting.append(len(_cuda._pending))

    g = eagle.Graph().add_node(eagle.copy(gpu.zeros(4), into=h)).add_node(opaque(drop, reads={"h": h}))
    g.build().launch()
    assert waiting == [1]  # deferred inside the host node ...
    assert not _cuda._pending  # ... and released when the launch returned


def _lower_checked(p: dict) -> eagle.extend.GpuItems:
    def check(staged: list[np.ndarray]) -> None:
        found = int(staged[0][0])
        staged[0][...] = 0  # copied back: the device cell starts clean at the next replay
        if found:
            raise ValueError(f"the cell held {found}")

    return eagle.extend.GpuItems(lambda gpu: gpu.checked([p["cell"]], check))


eagle.extend.register_node_kind("test_checked_cell", reads=lambda p: [],
                                writes=lambda p: [("cell", p["cell"], "readwrite")], lower_gpu=_lower_checked)


@pytest.mark.parametrize("in_body", [False, True])
def test_a_checked_cell_raises_at_the_wait_and_is_cleared(gpu, in_body):
    """GpuProgram.checked: device cells staged to pinned memory, checked on a host node, copied back;
    in a device if body (no host node there), after the if."""
    cell, flag = gpu.asarray(np.array([7], np.int64)), gpu.asarray(np.ones(1, np.uint32))
    node = eagle.graph.Node("test_checked_cell", {"cell": cell})
    top = eagle.graph.Node("device_if", eagle.DeviceIf(flag, eagle.Body([node]), eagle.Body())) if in_body \
        else node
    g = eagle.Graph().add_node(top, name="check").build()
    with pytest.raises(ValueError, match="the cell held 7"):
        g.launch()
    assert gpu.get(cell)[0] == 0
    g.launch()  # clean
