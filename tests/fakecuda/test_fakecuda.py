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
