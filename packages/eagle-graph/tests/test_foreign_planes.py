"""Arrays of other libraries as planes (issue 23): the one conversion (eagle._foreign), what it
refuses by name, the checks a launch makes of them, eagle.interop.import_buffer, and a child
graph refused on the CPU with the seed's way out.

Torch and JAX parts skip where those are not installed (the nox ``torch`` and ``jax`` sessions
install them); the objects with only DLPack or only an array interface run everywhere.
"""

from __future__ import annotations

import gc
import re
import subprocess
import sys
import weakref
from typing import Any

import numpy as np
import pytest

import eagle
from eagle._foreign import DevicePlane, as_plane, producer_of
from eagle.graph import opaque
from eagle.testing import DLPackOnly, InterfaceOnly


def nop() -> None:
    pass


class FakeCudaTensor:
    """What a CUDA tensor shows eagle: DLPack on kDLCUDA and a CUDA array interface (over host
    memory here, which eagle never reads: no device is opened)."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 1)

    def __dlpack__(self, **kwargs: Any) -> Any:
        raise BufferError("eagle reads the CUDA array interface")

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        iface = self.array.__array_interface__
        return {
            "data": iface["data"],
            "shape": self.array.shape,
            "strides": None,
            "typestr": iface["typestr"],
            "version": 3,
        }


# ------------------------------------------------------------------ the one conversion


@pytest.mark.parametrize(
    "make", [DLPackOnly, InterfaceOnly, bytearray], ids=["dlpack", "interface", "buffer"]
)
def test_a_foreign_host_array_is_the_numpy_array_over_its_memory(make):
    source = np.arange(6.0)
    obj = make(source.view(np.uint8).data) if make is bytearray else make(source)
    plane = as_plane(obj, "test", "x")
    assert type(plane) is np.ndarray and np.shares_memory(plane, source) == (make is not bytearray)
    assert producer_of(plane).owner is obj
    assert as_plane(obj, "test", "x") is plane  # one object, one plane, while the plane lives


def test_the_plane_keeps_its_object_alive():
    obj = DLPackOnly(np.arange(4.0))
    gone = weakref.ref(obj)
    plane = as_plane(obj, "test", "x")
    del obj
    gc.collect()
    assert gone() is not None and plane.tolist() == [0.0, 1.0, 2.0, 3.0]
    del plane
    gc.collect()
    assert gone() is None  # and no longer than that


def test_no_framework_is_imported_to_read_a_plane():
    code = (
        "import sys, numpy as np, eagle\n"
        "from eagle.testing import DLPackOnly, InterfaceOnly\n"
        "copy = eagle.copy(DLPackOnly(np.ones(3)), into=InterfaceOnly(np.zeros(3)))\n"
        "eagle.Graph().add_node(copy).build().launch()\n"
        "print(sorted(m for m in ('torch', 'jax', 'cupy') if m in sys.modules))\n"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "[]"


def test_numpy_and_eagles_own_arrays_are_held_as_they_are():
    x = np.zeros(3)
    assert as_plane(x, "test", "x") is x and producer_of(x) is None


def test_a_cuda_array_is_a_device_plane_on_its_gpu():
    plane = as_plane(FakeCudaTensor(np.zeros((2, 3), np.float32)), "test", "x")
    assert isinstance(plane, DevicePlane) and plane.device == 1
    assert (plane.shape, plane.dtype) == ((2, 3), np.float32)
    assert plane.__cuda_array_interface__["strides"] is None


def test_what_is_no_array_is_refused_by_name():
    with pytest.raises(TypeError, match=r"^eagle\.copy: src is a list, not an array"):
        eagle.copy([1.0], into=np.zeros(1))
    with pytest.raises(TypeError, match=r"^eagle\.reduce: out is the number 2\.0"):
        eagle.reduce(np.zeros(2), 2.0)


def test_an_array_on_a_device_eagle_does_not_run_on_is_refused_with_the_move():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "eagle.reduce: x lives on kDLMetal (Apple's GPU), and "
            "eagle runs planes in host memory and on CUDA GPUs: "
            "move it"
        ),
    ):
        eagle.reduce(DLPackOnly(np.zeros(4), device=(8, 0)), np.zeros(1))


def test_a_cuda_array_in_a_cpu_graph_and_a_host_one_in_a_gpu_graph_are_refused():
    cuda = FakeCudaTensor(np.zeros(4))
    g = eagle.Graph().add_node(opaque(nop, reads={"x": cuda}), name="model")
    with pytest.raises(
        ValueError,
        match=re.escape(
            "backend='cpu' but the planes model.x are device (CuPy) "
            "arrays: pass NumPy arrays (for a CUDA tensor, "
            "tensor.cpu())"
        ),
    ):
        g.build(backend="cpu")
    mixed = eagle.Graph().add_node(opaque(nop, reads={"x": cuda}, writes={"y": np.zeros(4)}), name="mixed")
    with pytest.raises(ValueError, match=r"node 'mixed' has planes on both sides: host y, device x"):
        mixed.build()
    host = eagle.Graph().add_node(opaque(nop, reads={"x": DLPackOnly(np.zeros(4))}))
    with pytest.raises(
        ValueError,
        match=re.escape(
            "backend='gpu' but every plane is a host (NumPy) array: "
            "pass CuPy arrays (for a CPU tensor, tensor.cuda())"
        ),
    ):
        host.build(backend="gpu")


def test_a_read_only_array_written_is_refused_where_the_node_is_made():
    frozen = np.zeros(4)
    frozen.flags.writeable = False
    with pytest.raises(
        ValueError, match=re.escape("eagle.graph.opaque: plane 'y' is written but the array is read-only")
    ):
        opaque(nop, writes={"y": frozen})
    with pytest.raises(ValueError, match=r"^eagle\.copy: into is written but the array is read-only"):
        eagle.copy(np.zeros(4), into=frozen)
    opaque(nop, reads={"y": frozen})  # read, it is a plane like any other


def test_a_kind_of_a_plugin_writing_a_read_only_array_is_refused_at_build():
    from eagle.graph import Node, register_node_kind

    register_node_kind(
        "foreign_writer", reads=lambda p: [], writes=lambda p: [("out", p, "write")], lower_cpu=lambda p: nop
    )
    frozen = np.zeros(2)
    frozen.flags.writeable = False
    g = eagle.Graph().add_node(Node("foreign_writer", frozen), name="writer")
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.build: node 'writer' plane 'out' is written but"):
        g.build()
    assert g.backend is None


def test_a_child_graph_on_the_cpu_is_refused_with_the_seeds_way_out():
    g = eagle.Graph().add_node(eagle.graph.child(0x7F00, reads={"x": np.zeros(2)}), name="model")
    with pytest.raises(
        ValueError,
        match=re.escape(
            "eagle.Graph.build: node 'model' of kind 'child' has no "
            "CPU lowering; a graph your framework captured runs on "
            "the GPU only: on the CPU, call the model in an opaque"
        ),
    ):
        g.build()


def test_import_buffer_of_numpy_and_dlpack():
    w = np.arange(3.0)
    assert eagle.interop.import_buffer(w) is w
    weights = DLPackOnly(np.arange(3.0))
    buffer = eagle.interop.import_buffer(weights)
    weights.array += 1.0  # an optimizer's in-place step: the buffer is that memory
    assert buffer.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(
        ValueError,
        match=r"^eagle\.interop\.import_buffer: param \(shape \(3,\)\) is not "
        r"contiguous; a Table plane is one block of memory",
    ):
        eagle.interop.import_buffer(DLPackOnly(np.arange(6.0)[::2]))
    with pytest.raises(TypeError, match=r"^eagle\.interop\.import_buffer: param is the number 1\.0"):
        eagle.interop.import_buffer(1.0)


# ------------------------------------------------------------------------------ torch


@pytest.fixture
def torch() -> Any:
    return pytest.importorskip("torch")


def _doubling(x: Any, y: Any) -> eagle.Graph:
    """A graph whose one node writes 2 * x into y, through the NumPy arrays over their memory."""
    xs, ys = as_plane(x, "test", "x"), as_plane(y, "test", "y")
    node = opaque(lambda: np.multiply(xs, 2.0, out=ys), reads={"x": x}, writes={"y": y})
    return eagle.Graph().add_node(node, name="double").build()


def test_a_tensor_that_requires_grad_is_read_but_never_written(torch):
    w = torch.nn.Parameter(torch.arange(4.0, dtype=torch.float64))
    y = torch.zeros(4, dtype=torch.float64)
    _doubling(w, y).launch()
    assert y.tolist() == [0.0, 2.0, 4.0, 6.0] and w.grad is None
    message = (
        "is a torch Parameter that requires grad, and it is written: torch allows no in-place write "
        "into a tensor autograd differentiates, and one eagle made would leave its gradient wrong; "
        "pass a tensor that does not require grad (t.detach() is the same memory"
    )
    with pytest.raises(ValueError, match="^" + re.escape("eagle.graph.opaque: plane 'w' " + message)):
        opaque(nop, writes={"w": w})
    total = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    with pytest.raises(ValueError, match=r"^eagle\.reduce: out is a torch Tensor that requires grad"):
        eagle.reduce(torch.zeros(4, dtype=torch.float64), total)
    with pytest.raises(ValueError, match=r"^eagle\.copy: into is a torch Parameter that requires grad"):
        eagle.copy(y, into=w)
    opaque(nop, writes={"w": w.detach()})  # the same memory, outside autograd: the user's word


def test_a_tensor_is_kept_alive_as_long_as_the_graph_uses_it(torch):
    x, y = torch.arange(5.0, dtype=torch.float64), torch.zeros(5, dtype=torch.float64)
    out = y.numpy()  # the result, seen without the tensor
    g = _doubling(x, y)
    del x, y
    gc.collect()
    g.launch()
    assert out.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]


def test_an_optimizers_in_place_step_is_the_refresh(torch):
    w = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
    y = torch.zeros(3, dtype=torch.float64)
    g = _doubling(eagle.interop.import_buffer(w), y)
    opt = torch.optim.SGD([w], lr=0.5)
    w.grad = torch.ones(3, dtype=torch.float64)
    opt.step()  # w = 1 - 0.5, in place
    g.launch()
    assert y.tolist() == [1.0, 1.0, 1.0]


def test_a_launch_after_param_data_is_replaced_is_refused_by_name(torch):
    w = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
    g = _doubling(w, torch.zeros(3, dtype=torch.float64))
    g.launch()
    w.data = torch.zeros(3, dtype=torch.float64)
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "eagle.Graph.launch: plane 'x' of node 'double' is no longer the memory of a torch Parameter it "
            "was made from: its storage was replaced (param.data = ...), and the graph still holds the old; "
            "bind the tensor the optimizer updates"
        ),
    ):
        g.launch()
    with pytest.raises(RuntimeError, match=r"^eagle\.Graph\.enqueue: plane 'x' of node 'double'"):
        g.enqueue()


def test_weights_changed_between_enqueue_and_synchronize_are_refused_once(torch):
    w, y = torch.ones(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
    g = _doubling(w, y)
    g.enqueue().synchronize()  # nothing changed: fine
    g.enqueue()
    w.add_(1.0)  # while the replay may still run
    with pytest.raises(
        RuntimeError,
        match=re.escape(
            "eagle.Graph.synchronize: plane 'x' of node 'double' (a torch Tensor) was changed in place "
            "between enqueue() and the call that waits for it, while a replay may have been reading it: "
            "update weights after launch() returns, or after synchronize()"
        ),
    ):
        g.synchronize()
    g.synchronize()  # said once: the replays are done
    w.add_(1.0)  # after launch() returns: the next launch reads it
    g.launch()
    assert y.tolist() == [6.0, 6.0, 6.0]
    g.enqueue()
    w.add_(1.0)
    with pytest.raises(
        RuntimeError,
        match=r"^eagle\.Graph\.launch: plane 'x' of node 'double' \(a torch "
        r"Tensor\) was changed in place between enqueue",
    ):
        g.launch()


def test_a_bfloat16_tensor_is_a_plane_of_raw_items(torch):
    """NumPy has no bfloat16: eagle reads the DLPack capsule itself, and the items are their bytes."""
    x = torch.arange(4.0, dtype=torch.bfloat16)
    plane = as_plane(x, "test", "x")
    assert plane.dtype == np.dtype("V2") and plane.__array_interface__["data"][0] == x.data_ptr()
    saved = torch.zeros(4, dtype=torch.bfloat16)
    eagle.Graph().add_node(eagle.copy(x, into=saved)).build().launch()
    assert torch.equal(saved, x)


# -------------------------------------------------------------------------------- JAX


def test_a_jax_array_is_read_and_never_written():
    jnp = pytest.importorskip("jax.numpy")
    x, y = jnp.arange(4.0), np.zeros(4, np.float32)
    _doubling(x, y).launch()
    assert y.tolist() == [0.0, 2.0, 4.0, 6.0]
    with pytest.raises(
        ValueError,
        match=re.escape("eagle.copy: into is a JAX array, and it is written: JAX arrays are immutable"),
    ):
        eagle.copy(y, into=jnp.zeros(4))
    buffer = eagle.interop.import_buffer(x)
    assert not buffer.flags.writeable and np.shares_memory(buffer, np.from_dlpack(x))


def test_one_object_is_one_plane_only_while_its_memory_lies_as_it_did():
    """``t.data = t.data.view(4, 3)`` keeps the pointer: the plane made before has the old shape,
    so the object's next plane is a new one over its memory as it lies now."""
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float64)
    before = as_plane(t, "test", "t")
    assert as_plane(t, "test", "t") is before
    t.data = t.data.view(4, 3)
    after = as_plane(t, "test", "t")
    assert before.shape == (12,) and after.shape == (4, 3)
    t.t_()
    assert as_plane(t, "test", "t").strides == (8, 24)
    mem = InterfaceOnly(np.arange(6.0))
    first = as_plane(mem, "test", "mem")
    mem.array = np.arange(6.0).reshape(2, 3)  # what its interface says now
    assert as_plane(mem, "test", "mem") is not first
