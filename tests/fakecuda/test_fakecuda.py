"""fakecuda refuses what the real driver refuses, where libeagle's tests rely on it."""

from __future__ import annotations

import ctypes

import pytest

c_int, c_uint, c_size_t, c_void_p = ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p
c_u64 = ctypes.c_uint64
INVALID_VALUE, NOT_FOUND, NOT_SUPPORTED = 1, 500, 801


class NodeParams(ctypes.Structure):
    """CUgraphNodeParams holding CUDA_CONDITIONAL_NODE_PARAMS (256 bytes)."""

    _fields_ = [("type", c_int), ("reserved0", c_int * 3), ("handle", c_u64), ("cond_type", c_int),
                ("size", c_uint), ("phGraph_out", ctypes.POINTER(c_void_p)), ("ctx", c_void_p),
                ("pad", ctypes.c_longlong * 25), ("reserved2", ctypes.c_longlong)]


@pytest.fixture(scope="module")
def fake(cuda_driver):
    """The emulation (tests/conftest.py activates it where no real driver is)."""
    if cuda_driver is None:
        pytest.skip("a real CUDA driver is in use: the emulation is not loaded")
    return cuda_driver


def entry(fake, name, *argtypes):
    """Entry point `name` through cuGetProcAddress_v2 at 12.3 (the newest ABI used), as libeagle does."""
    get = fake.lib.cuGetProcAddress_v2
    get.argtypes = [ctypes.c_char_p, ctypes.POINTER(c_void_p), c_int, c_u64, ctypes.POINTER(c_int)]
    pfn, status = c_void_p(), c_int()
    assert get(name.encode(), ctypes.byref(pfn), 12030, 1, ctypes.byref(status)) == 0
    assert pfn.value, name
    return ctypes.CFUNCTYPE(c_int, *argtypes)(pfn.value)


def test_proc_address_versions(fake):
    get = fake.lib.cuGetProcAddress_v2
    pfn, status = c_void_p(), c_int()
    assert get(b"cuInit", ctypes.byref(pfn), 99000, 1, ctypes.byref(status)) == INVALID_VALUE
    assert get(b"cuNoSuchThing", ctypes.byref(pfn), 12000, 1, ctypes.byref(status)) == 0
    assert pfn.value is None and status.value == 1


def test_pointer_attributes(fake):
    alloc = entry(fake, "cuMemAlloc", ctypes.POINTER(c_u64), c_size_t)
    free = entry(fake, "cuMemFree", c_u64)
    attr = entry(fake, "cuPointerGetAttribute", c_void_p, c_int, c_u64)
    p, kind = c_u64(), c_uint()
    assert alloc(ctypes.byref(p), 1000) == 0 and p.value % 256 == 0
    assert attr(ctypes.byref(kind), 2, p.value + 999) == 0 and kind.value == 2
    pageable = ctypes.create_string_buffer(16)
    assert attr(ctypes.byref(kind), 2, ctypes.addressof(pageable)) == INVALID_VALUE
    assert free(p.value) == 0 and free(p.value) == INVALID_VALUE


def test_modules_and_graph_refusals(fake):
    load = entry(fake, "cuModuleLoadData", ctypes.POINTER(c_void_p), ctypes.c_char_p)
    get_fn = entry(fake, "cuModuleGetFunction", ctypes.POINTER(c_void_p), c_void_p, ctypes.c_char_p)
    module, fn = c_void_p(), c_void_p()
    assert load(ctypes.byref(module), b".visible .entry nobody_emulates_me(\n)\n{\n}\n") == 0
    assert get_fn(ctypes.byref(fn), module, b"missing") == NOT_FOUND
    assert get_fn(ctypes.byref(fn), module, b"nobody_emulates_me") == 0

    create = entry(fake, "cuGraphCreate", ctypes.POINTER(c_void_p), c_uint)
    add_kernel = entry(fake, "cuGraphAddKernelNode", ctypes.POINTER(c_void_p), c_void_p, c_void_p,
                       c_size_t, c_void_p)
    graph, node = c_void_p(), c_void_p()
    assert create(ctypes.byref(graph), 0) == 0
    params = (c_void_p * 9)(fn.value, 1 | 1 << 32, 1 | 1 << 32, 1 | 1 << 32, 0, 0, 0, 0, 0)
    assert add_kernel(ctypes.byref(node), graph, None, 0, params) == NOT_SUPPORTED  # no emulation

    handle_create = entry(fake, "cuGraphConditionalHandleCreate", ctypes.POINTER(c_u64), c_void_p,
                          c_void_p, c_uint, c_uint)
    add_node = entry(fake, "cuGraphAddNode", ctypes.POINTER(c_void_p), c_void_p, c_void_p, c_void_p,
                     c_size_t, ctypes.POINTER(NodeParams))
    add_host = entry(fake, "cuGraphAddHostNode", ctypes.POINTER(c_void_p), c_void_p, c_void_p, c_size_t,
                     c_void_p)
    handle = c_u64()
    assert handle_create(ctypes.byref(handle), graph, None, 0, 1) == 0
    p = NodeParams(type=13, handle=handle.value, cond_type=0, size=3)
    assert add_node(ctypes.byref(node), graph, None, None, 0, ctypes.byref(p)) == INVALID_VALUE  # IF of 3
    p.size = 1
    assert add_node(ctypes.byref(node), graph, None, None, 0, ctypes.byref(p)) == 0
    body = p.phGraph_out[0]
    host_fn = ctypes.CFUNCTYPE(None, c_void_p)(lambda _: None)
    host_params = (c_void_p * 2)(ctypes.cast(host_fn, c_void_p).value, None)
    assert add_host(ctypes.byref(node), body, None, 0, host_params) == INVALID_VALUE  # not in a body
    pageable = ctypes.create_string_buffer(8)
    copy = (c_size_t * 25)()  # CUDA_MEMCPY3D: pageable HOST source and destination
    copy[4], copy[5] = 1, ctypes.addressof(pageable)
    copy[15], copy[16] = 1, ctypes.addressof(pageable)
    copy[22], copy[23], copy[24] = 8, 1, 1
    add_copy = entry(fake, "cuGraphAddMemcpyNode", ctypes.POINTER(c_void_p), c_void_p, c_void_p, c_size_t,
                     c_void_p, c_void_p)
    assert add_copy(ctypes.byref(node), body, None, 0, copy, None) == INVALID_VALUE
    assert add_copy(ctypes.byref(node), graph, None, 0, copy, None) == 0  # top level: allowed


# ------------------------------------------------------------ stream capture and child graphs

ILLEGAL_STATE, CAPTURE_UNSUPPORTED, CAPTURE_INVALIDATED = 401, 900, 901
NON_BLOCKING, GLOBAL, THREAD_LOCAL, RELAXED = 1, 0, 1, 2

# Each launch appends `value` to log[1:], log[0] counting the entries.
APPEND_CU = """
extern "C" __global__ void fk_test_append(unsigned *log, unsigned value)
{
    log[1 + log[0]++] = value;
}
"""


class Driver:
    """The entry points these tests call, a log in device memory and the `fk_test_append` kernel."""

    def __init__(self, fake):
        ptr, u64 = ctypes.POINTER, c_u64
        self.fake = fake
        alloc = entry(fake, "cuMemAlloc", ptr(u64), c_size_t)
        self.mem_free = entry(fake, "cuMemFree", u64)
        self.memcpy = entry(fake, "cuMemcpy", u64, u64, c_size_t)
        self.stream_create = entry(fake, "cuStreamCreate", ptr(c_void_p), c_uint)
        self.stream_destroy = entry(fake, "cuStreamDestroy", c_void_p)
        self.sync = entry(fake, "cuStreamSynchronize", c_void_p)
        self.begin = entry(fake, "cuStreamBeginCapture", c_void_p, c_int)
        self.end = entry(fake, "cuStreamEndCapture", c_void_p, ptr(c_void_p))
        self.launch_kernel = entry(fake, "cuLaunchKernel", c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint,
                                   c_uint, c_uint, c_void_p, c_void_p, c_void_p)
        self.graph_create = entry(fake, "cuGraphCreate", ptr(c_void_p), c_uint)
        self.graph_destroy = entry(fake, "cuGraphDestroy", c_void_p)
        self.add_kernel = entry(fake, "cuGraphAddKernelNode", ptr(c_void_p), c_void_p, c_void_p, c_size_t,
                                c_void_p)
        self.add_child = entry(fake, "cuGraphAddChildGraphNode", ptr(c_void_p), c_void_p, c_void_p,
                               c_size_t, c_void_p)
        self.add_host = entry(fake, "cuGraphAddHostNode", ptr(c_void_p), c_void_p, c_void_p, c_size_t,
                              c_void_p)
        self.add_empty = entry(fake, "cuGraphAddEmptyNode", ptr(c_void_p), c_void_p, c_void_p, c_size_t)
        self.instantiate = entry(fake, "cuGraphInstantiateWithFlags", ptr(c_void_p), c_void_p, u64)
        self.graph_launch = entry(fake, "cuGraphLaunch", c_void_p, c_void_p)
        self.exec_destroy = entry(fake, "cuGraphExecDestroy", c_void_p)
        load = entry(fake, "cuModuleLoadData", ptr(c_void_p), ctypes.c_char_p)
        get_fn = entry(fake, "cuModuleGetFunction", ptr(c_void_p), c_void_p, ctypes.c_char_p)
        module, self.fn = c_void_p(), c_void_p()
        assert load(ctypes.byref(module), fake.kernels(APPEND_CU).ptx.encode()) == 0
        assert get_fn(ctypes.byref(self.fn), module, b"fk_test_append") == 0
        self.log_ptr = u64()
        assert alloc(ctypes.byref(self.log_ptr), 64 * 4) == 0
        self.log_array = (c_uint * 64).from_address(self.log_ptr.value)  # device memory is host memory
        self.clear()

    def clear(self):
        ctypes.memset(self.log_ptr.value, 0, 64 * 4)

    def log(self):
        return list(self.log_array[1:1 + self.log_array[0]])

    def stream(self, flags=NON_BLOCKING):
        s = c_void_p()
        assert self.stream_create(ctypes.byref(s), flags) == 0
        return s

    def graph(self):
        g = c_void_p()
        assert self.graph_create(ctypes.byref(g), 0) == 0
        return g

    def launch(self, stream, value, extra=None):
        """cuLaunchKernel of fk_test_append(log, value): its CUresult."""
        args = (c_u64(self.log_ptr.value), c_uint(value))  # copied by the launch
        params = (c_void_p * 2)(*(ctypes.addressof(a) for a in args))
        return self.launch_kernel(self.fn, 1, 1, 1, 1, 1, 1, 0, stream, params, extra)

    def kernel_node(self, graph, deps, value):
        """A kernel node fk_test_append(log, value) after `deps`."""
        args = (c_u64(self.log_ptr.value), c_uint(value))
        params = (c_void_p * 2)(*(ctypes.addressof(a) for a in args))
        # CUDA_KERNEL_NODE_PARAMS_v2: func, grid, block (paired), shared, kernelParams, extra, kern, ctx
        node_params = (c_void_p * 9)(self.fn.value, 1 | 1 << 32, 1 | 1 << 32, 1 | 1 << 32, 0,
                                     ctypes.addressof(params), 0, 0, 0)
        return self.add(self.add_kernel, graph, deps, node_params)

    def add(self, add_fn, graph, deps, *rest):
        node = c_void_p()
        dep_array = (c_void_p * max(len(deps), 1))(*deps)
        assert add_fn(ctypes.byref(node), graph, dep_array, len(deps), *rest) == 0
        return node.value

    def run(self, graph, times=1):
        """Instantiate `graph`, launch it `times` times, destroy the exec."""
        exec_ = c_void_p()
        assert self.instantiate(ctypes.byref(exec_), graph, 0) == 0
        for _ in range(times):
            assert self.graph_launch(exec_, None) == 0
        assert self.exec_destroy(exec_) == 0

    def capture(self, stream, values, mode=GLOBAL):
        """The graph of the launches of `values` captured on `stream` (none runs)."""
        assert self.begin(stream, mode) == 0
        runs = self.fake.kernel_runs()
        for v in values:
            assert self.launch(stream, v) == 0
        assert self.fake.kernel_runs() == runs and self.log() == []  # recorded, not run
        graph = c_void_p()
        assert self.end(stream, ctypes.byref(graph)) == 0 and graph.value
        return graph


@pytest.fixture
def drv(fake):
    d = Driver(fake)
    d.clear()
    yield d
    assert d.mem_free(d.log_ptr.value) == 0


def test_launch_kernel_outside_capture_runs_at_once(drv):
    s = drv.stream()
    runs = drv.fake.kernel_runs()
    assert drv.launch(s, 7) == 0 and drv.log() == [7]
    assert drv.launch(None, 8) == 0 and drv.log() == [7, 8]  # the legacy stream
    assert drv.fake.kernel_runs() == runs + 2
    extra = (c_void_p * 1)(None)
    assert drv.launch(s, 9, extra) == INVALID_VALUE  # kernelParams and extra
    assert drv.launch_kernel(drv.fn, 1, 1, 1, 1, 1, 1, 0, s, None, extra) == NOT_SUPPORTED  # not emulated
    assert drv.launch_kernel(drv.fn, 1, 1, 1, 1, 1, 1, 0, s, None, None) == INVALID_VALUE  # no parameters
    assert drv.log() == [7, 8]
    assert drv.stream_destroy(s) == 0


def test_captured_launches_run_in_order_as_a_child_graph(drv):
    s = drv.stream()
    captured = drv.capture(s, [2, 3])
    graph = drv.graph()
    before = drv.kernel_node(graph, [], 1)
    child = drv.add(drv.add_child, graph, [before], captured)
    assert drv.graph_destroy(captured) == 0  # the node holds a clone
    drv.kernel_node(graph, [child], 4)
    drv.add(drv.add_empty, graph, [])  # a root picked first: the run order is the edges'
    drv.run(graph, times=2)
    assert drv.log() == [1, 2, 3, 4, 1, 2, 3, 4]
    assert drv.graph_destroy(graph) == 0
    # the stream runs work at once again
    assert drv.launch(s, 5) == 0 and drv.log()[-1] == 5
    assert drv.stream_destroy(s) == 0


def test_child_graph_is_a_clone(drv):
    child, graph = drv.graph(), drv.graph()
    first = drv.kernel_node(child, [], 1)
    drv.kernel_node(child, [first], 2)
    node = drv.add(drv.add_child, graph, [], child)
    drv.kernel_node(child, [], 99)  # after the clone: not in the node
    assert drv.graph_destroy(child) == 0
    drv.kernel_node(graph, [node], 3)
    exec_ = c_void_p()
    assert drv.instantiate(ctypes.byref(exec_), graph, 0) == 0
    assert drv.graph_destroy(graph) == 0  # the exec is a snapshot, child nodes included
    assert drv.graph_launch(exec_, None) == 0 and drv.exec_destroy(exec_) == 0
    assert drv.log() == [1, 2, 3]


def test_child_graph_nodes_and_refusals(drv):
    calls = []
    host_fn = ctypes.CFUNCTYPE(None, c_void_p)(lambda _: calls.append(1))
    host_params = (c_void_p * 2)(ctypes.cast(host_fn, c_void_p).value, None)
    child, graph = drv.graph(), drv.graph()
    host = drv.add(drv.add_host, child, [], host_params)
    drv.kernel_node(child, [host], 1)
    drv.add(drv.add_child, graph, [], child)  # host nodes at top level: allowed
    outer = drv.graph()
    drv.add(drv.add_child, outer, [], graph)  # nested child graphs
    drv.kernel_node(outer, [], 0)
    drv.run(outer)
    assert calls == [1] and sorted(drv.log()) == [0, 1]

    # a child with host nodes in a conditional body: refused
    handle_create = entry(drv.fake, "cuGraphConditionalHandleCreate", ctypes.POINTER(c_u64), c_void_p,
                          c_void_p, c_uint, c_uint)
    add_node = entry(drv.fake, "cuGraphAddNode", ctypes.POINTER(c_void_p), c_void_p, c_void_p, c_void_p,
                     c_size_t, ctypes.POINTER(NodeParams))
    cond_graph, handle, node = drv.graph(), c_u64(), c_void_p()
    assert handle_create(ctypes.byref(handle), cond_graph, None, 1, 1) == 0
    p = NodeParams(type=13, handle=handle.value, cond_type=0, size=1)
    assert add_node(ctypes.byref(node), cond_graph, None, None, 0, ctypes.byref(p)) == 0
    body = p.phGraph_out[0]
    assert drv.add_child(ctypes.byref(node), body, None, 0, graph) == INVALID_VALUE  # host node, nested
    kernels_only = drv.graph()
    drv.kernel_node(kernels_only, [], 5)
    drv.add(drv.add_child, body, [], kernels_only)  # kernels: allowed in a body
    drv.clear()
    drv.run(cond_graph)
    assert drv.log() == [5]
    # a child holding a conditional node: refused (cuda.h)
    assert drv.add_child(ctypes.byref(node), graph, None, 0, cond_graph) == INVALID_VALUE
    assert drv.add_child(ctypes.byref(node), None, None, 0, graph) == INVALID_VALUE
    assert drv.add_child(ctypes.byref(node), graph, None, 0, None) == INVALID_VALUE
    for g in (child, graph, outer, cond_graph, kernels_only):
        assert drv.graph_destroy(g) == 0


def test_capture_state_errors(drv):
    s, graph = drv.stream(), c_void_p()
    assert drv.end(s, ctypes.byref(graph)) == ILLEGAL_STATE  # not capturing
    assert drv.begin(s, 3) == INVALID_VALUE  # no such mode
    assert drv.begin(None, GLOBAL) == CAPTURE_UNSUPPORTED  # the legacy stream
    assert drv.begin(s, GLOBAL) == 0
    assert drv.begin(s, GLOBAL) == ILLEGAL_STATE  # capturing already
    assert drv.end(s, ctypes.byref(graph)) == 0 and graph.value  # an empty capture
    assert drv.graph_destroy(graph) == 0
    for mode in (GLOBAL, THREAD_LOCAL, RELAXED):
        drv.graph_destroy(drv.capture(s, [mode]))
    assert drv.log() == []
    assert drv.stream_destroy(s) == 0


def test_capture_invalidated_by_forbidden_calls(drv):
    s, graph = drv.stream(), c_void_p()
    assert drv.begin(s, GLOBAL) == 0
    assert drv.launch(s, 1) == 0
    assert drv.sync(s) == CAPTURE_UNSUPPORTED  # a capturing stream cannot be waited for
    assert drv.launch(s, 2) == CAPTURE_INVALIDATED
    assert drv.end(s, ctypes.byref(graph)) == CAPTURE_INVALIDATED and graph.value is None
    assert drv.log() == [] and drv.sync(s) == 0  # ended all the same

    src, dst = ctypes.create_string_buffer(b"abc", 4), ctypes.create_string_buffer(4)
    copy = (ctypes.addressof(dst), ctypes.addressof(src), 4)
    for mode in (GLOBAL, THREAD_LOCAL):  # the synchronous cuMemcpy is unsafe on this thread
        assert drv.begin(s, mode) == 0
        assert drv.memcpy(*copy) == CAPTURE_UNSUPPORTED and dst.value == b""
        assert drv.end(s, ctypes.byref(graph)) == CAPTURE_INVALIDATED
    assert drv.begin(s, RELAXED) == 0  # allowed: the stream does not block
    assert drv.memcpy(*copy) == 0 and dst.value == b"abc"
    assert drv.end(s, ctypes.byref(graph)) == 0 and drv.graph_destroy(graph) == 0

    blocking = drv.stream(0)  # the legacy stream waits for it
    assert drv.begin(blocking, RELAXED) == 0
    assert drv.launch(None, 3) == 906  # CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
    assert drv.end(blocking, ctypes.byref(graph)) == CAPTURE_INVALIDATED
    assert drv.begin(blocking, GLOBAL) == 0  # destroying a capturing stream drops the capture
    assert drv.stream_destroy(blocking) == 0 and drv.stream_destroy(s) == 0
    assert drv.log() == []


def test_two_modules_with_a_kernel_of_one_name_keep_their_own(drv):
    # Before, the registry was by name: loading the second source replaced the first's kernel for
    # every module, so an earlier graph ran the later kernel with its own parameters (an overflow).
    load = entry(drv.fake, "cuModuleLoadData", ctypes.POINTER(c_void_p), ctypes.c_char_p)
    get_fn = entry(drv.fake, "cuModuleGetFunction", ctypes.POINTER(c_void_p), c_void_p, ctypes.c_char_p)
    twice = APPEND_CU.replace("= value;", "= 2 * value;")
    module, other_module, other = c_void_p(), c_void_p(), c_void_p()
    assert load(ctypes.byref(other_module), drv.fake.kernels(twice).ptx.encode()) == 0
    assert get_fn(ctypes.byref(other), other_module, b"fk_test_append") == 0
    assert load(ctypes.byref(module), drv.fake.kernels(APPEND_CU).ptx.encode()) == 0
    s = drv.stream()
    assert drv.launch(s, 5) == 0  # the first module's kernel, loaded before the second
    args = (c_u64(drv.log_ptr.value), c_uint(5))
    params = (c_void_p * 2)(*(ctypes.addressof(a) for a in args))
    assert drv.launch_kernel(other, 1, 1, 1, 1, 1, 1, 0, s, params, None) == 0
    assert drv.log() == [5, 10]
    assert drv.stream_destroy(s) == 0


def test_events_order_streams_and_are_counted(drv):
    """cuEventRecord / cuStreamWaitEvent as eagle_cuda_stream_wait uses them: a wait on a recorded
    event is counted, one never recorded is a no-op (CUDA driver API), and work runs at once."""
    create = entry(drv.fake, "cuEventCreate", ctypes.POINTER(c_void_p), c_uint)
    record = entry(drv.fake, "cuEventRecord", c_void_p, c_void_p)
    wait = entry(drv.fake, "cuStreamWaitEvent", c_void_p, c_void_p, c_uint)
    destroy = entry(drv.fake, "cuEventDestroy", c_void_p)
    first, second, event = drv.stream(), drv.stream(), c_void_p()
    assert create(ctypes.byref(event), 2) == 0 and event.value  # CU_EVENT_DISABLE_TIMING
    waits, host_waits = drv.fake.event_waits(), drv.fake.host_waits()
    assert wait(second, event, 0) == 0 and drv.fake.event_waits() == waits  # never recorded
    assert drv.launch(first, 1) == 0 and record(event, first) == 0
    assert wait(second, event, 0) == 0 and drv.fake.event_waits() == waits + 1
    assert drv.launch(second, 2) == 0 and drv.log() == [1, 2]
    assert drv.fake.host_waits() == host_waits  # nothing here made the host wait
    assert wait(second, event, 4) == INVALID_VALUE  # no such flag
    assert destroy(event) == 0
    assert record(None, first) == 400 and create(ctypes.byref(event), 0x40) == INVALID_VALUE
    drv.begin(first, RELAXED)
    assert create(ctypes.byref(event), 0) == 0
    assert record(event, first) == NOT_SUPPORTED  # into a capture: not emulated
    assert wait(first, event, 0) == NOT_SUPPORTED
    graph = c_void_p()
    assert drv.end(first, ctypes.byref(graph)) == 0 and drv.graph_destroy(graph) == 0
    assert destroy(event) == 0
    for s in (first, second):
        assert drv.stream_destroy(s) == 0


def test_launch_limits_and_dynamic_shared_memory(drv):
    """The grid and block limits every GPU has (programming guide, technical specifications), and
    dynamic shared memory, which the emulation does not give a kernel."""
    args = (c_u64(drv.log_ptr.value), c_uint(1))
    params = (c_void_p * 2)(*(ctypes.addressof(a) for a in args))
    s = drv.stream()
    for grid, block in (((1, 1, 1), (1025, 1, 1)), ((1, 1, 1), (1, 1, 65)), ((1, 1, 1), (32, 32, 2)),
                        ((1, 65536, 1), (1, 1, 1)), ((0, 1, 1), (1, 1, 1))):
        assert drv.launch_kernel(drv.fn, *grid, *block, 0, s, params, None) == INVALID_VALUE, (grid, block)
    assert drv.launch_kernel(drv.fn, 1, 1, 1, 1, 1, 1, 16, s, params, None) == NOT_SUPPORTED
    assert drv.launch_kernel(drv.fn, 1, 1, 1, 2, 4, 4, 0, s, params, None) == 0
    assert drv.log() == [1] * 32  # 32 threads, one after another, each appending
    assert drv.stream_destroy(s) == 0


UNIFIED = 4


def copy_params(dst: int, src: int, width: int = 16, height: int = 1) -> ctypes.Array:
    """CUDA_MEMCPY3D of `height` rows of `width` bytes (pitch 32) between UNIFIED addresses."""
    p = (c_size_t * 25)()
    p[4], p[6], p[9] = UNIFIED, src, 32 if height > 1 else 0
    p[15], p[17], p[20] = UNIFIED, dst, 32 if height > 1 else 0
    p[22], p[23], p[24] = width, height, 1
    return p


def test_patching_a_copy_follows_the_drivers_rules(drv):
    """cuGraphExecMemcpyNodeSetParams: one-dimensional copies of some bytes, each end keeping its
    type of memory (the reason eagle rebuilds a graph when a copy end changes its kind); a refused
    patch leaves the node as it was."""
    ptr = ctypes.POINTER
    alloc = entry(drv.fake, "cuMemAlloc", ptr(c_u64), c_size_t)
    host_alloc = entry(drv.fake, "cuMemHostAlloc", ptr(c_void_p), c_size_t, c_uint)
    free_host = entry(drv.fake, "cuMemFreeHost", c_void_p)
    add_copy = entry(drv.fake, "cuGraphAddMemcpyNode", ptr(c_void_p), c_void_p, c_void_p, c_size_t, c_void_p,
                     c_void_p)
    set_copy = entry(drv.fake, "cuGraphExecMemcpyNodeSetParams", c_void_p, c_void_p, c_void_p, c_void_p)
    src, first, second = c_u64(), c_u64(), c_u64()
    for a in (src, first, second):
        assert alloc(ctypes.byref(a), 64) == 0
        ctypes.memset(a.value, 0, 64)
    ctypes.memmove(src.value, b"sixteen bytes!!!", 16)
    pinned = c_void_p()
    assert host_alloc(ctypes.byref(pinned), 64, 0) == 0
    graph, exec_ = drv.graph(), c_void_p()
    node = drv.add(add_copy, graph, [], copy_params(first.value, src.value), None)
    assert drv.instantiate(ctypes.byref(exec_), graph, 0) == 0
    assert set_copy(exec_, node, copy_params(second.value, src.value), None) == 0
    for refused in (copy_params(first.value, src.value, width=0),  # no bytes
                    copy_params(first.value, src.value, height=2),  # two rows
                    copy_params(pinned.value, src.value)):  # device memory to pinned memory
        assert set_copy(exec_, node, refused, None) == INVALID_VALUE
    assert drv.graph_launch(exec_, None) == 0
    assert ctypes.string_at(second.value, 16) == b"sixteen bytes!!!"  # the patch before the refusals
    assert ctypes.string_at(first.value, 16) == bytes(16)
    assert drv.exec_destroy(exec_) == 0 and drv.graph_destroy(graph) == 0
    assert free_host(pinned) == 0
    for a in (src, first, second):
        assert drv.mem_free(a.value) == 0


def test_a_kernel_node_in_a_conditional_body_is_patched(drv):
    """cuGraphExecKernelNodeSetParams on a node of an IF body: the documentation does not exclude
    it, eagle relies on it and the emulation allows it (a device run settles it: README.md); a
    node of a child graph's original is not a node of the instantiated graph."""
    handle_create = entry(drv.fake, "cuGraphConditionalHandleCreate", ctypes.POINTER(c_u64), c_void_p,
                          c_void_p, c_uint, c_uint)
    add_node = entry(drv.fake, "cuGraphAddNode", ctypes.POINTER(c_void_p), c_void_p, c_void_p, c_void_p,
                     c_size_t, ctypes.POINTER(NodeParams))
    set_kernel = entry(drv.fake, "cuGraphExecKernelNodeSetParams", c_void_p, c_void_p, c_void_p)
    graph, handle, cond = drv.graph(), c_u64(), c_void_p()
    assert handle_create(ctypes.byref(handle), graph, None, 1, 1) == 0  # the body runs
    p = NodeParams(type=13, handle=handle.value, cond_type=0, size=1)
    assert add_node(ctypes.byref(cond), graph, None, None, 0, ctypes.byref(p)) == 0
    in_body = drv.kernel_node(p.phGraph_out[0], [], 1)
    child = drv.graph()
    in_child = drv.kernel_node(child, [], 2)
    drv.add(drv.add_child, graph, [cond], child)
    exec_ = c_void_p()
    assert drv.instantiate(ctypes.byref(exec_), graph, 0) == 0
    args = (c_u64(drv.log_ptr.value), c_uint(7))
    params = (c_void_p * 2)(*(ctypes.addressof(a) for a in args))
    node_params = (c_void_p * 9)(drv.fn.value, 1 | 1 << 32, 1 | 1 << 32, 1 | 1 << 32, 0,
                                 ctypes.addressof(params), 0, 0, 0)
    assert set_kernel(exec_, in_body, node_params) == 0
    assert set_kernel(exec_, in_child, node_params) == INVALID_VALUE
    assert drv.graph_launch(exec_, None) == 0
    assert drv.log() == [7, 2]
    assert drv.exec_destroy(exec_) == 0
    for g in (graph, child):
        assert drv.graph_destroy(g) == 0
