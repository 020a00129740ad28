"""CUDA arrays of other libraries as planes (issue 23), on the GPU (the driver emulation where
there is no GPU): what eagle sees of a CUDA torch tensor or a JAX array on a GPU, DLPack on
kDLCUDA and a CUDA array interface, is a device plane of every node kind, kept alive by the graph,
and refused where it cannot be written.
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest

import eagle
from eagle.graph import opaque

hawk = pytest.importorskip("hawk")
from hawk import Mutable, Scalar  # noqa: E402


class CudaTensor:
    """A CUDA tensor as eagle sees one, over a device array's memory: DLPack on kDLCUDA, a CUDA
    array interface, and autograd's ``requires_grad`` and ``detach``."""

    def __init__(self, memory: Any, requires_grad: bool = False) -> None:
        self.memory = memory
        self.requires_grad = requires_grad

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)

    def __dlpack__(self, **kwargs: Any) -> Any:
        raise BufferError("eagle reads the CUDA array interface")

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        if self.requires_grad:  # as torch's does
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad")
        return self.memory.__cuda_array_interface__

    def detach(self) -> CudaTensor:
        return CudaTensor(self.memory)


@hawk.kernel
def accumulate(x: Scalar, acc: Mutable[Scalar]):
    acc = acc + 2.0 * x


def test_a_cuda_tensor_is_a_device_plane_of_a_kernel_reduce_copy_and_opaque(gpu):
    values = np.arange(1.0, 6.0)
    x, acc = CudaTensor(gpu.asarray(values)), CudaTensor(gpu.zeros(5))
    total, back = CudaTensor(gpu.zeros(1)), np.zeros(5)
    seen = []
    g = eagle.Graph()
    g.add(accumulate.plan(x, acc), name="acc")
    g.add_node(eagle.reduce(acc, total), name="total")
    g.add_node(eagle.copy(acc, into=back), name="back")
    g.add_node(opaque(lambda: seen.append(back.sum()), reads={"back": back}), name="look")
    g.build()
    assert g.backend == "gpu"
    memory = acc.memory
    del x, acc
    gc.collect()  # the graph holds the tensors it was given
    g.launch(2)
    np.testing.assert_array_equal(gpu.get(memory), 4.0 * values)
    np.testing.assert_array_equal(gpu.get(total.memory), [4.0 * values.sum()])
    np.testing.assert_array_equal(back, 4.0 * values)
    assert seen == [2.0 * values.sum(), 4.0 * values.sum()]


def test_a_cuda_tensor_that_requires_grad_is_read_and_never_written(gpu):
    w, acc = CudaTensor(gpu.asarray(np.ones(4)), requires_grad=True), CudaTensor(gpu.zeros(4))
    eagle.Graph().add(accumulate.plan(w, acc), name="acc").build().launch()
    np.testing.assert_array_equal(gpu.get(acc.memory), np.full(4, 2.0))
    with pytest.raises(
        ValueError,
        match=r"^hawk\.kernel accumulate: parameter 'acc' is a \w+ CudaTensor "
        "that requires grad, and it is written in place",
    ):
        accumulate.plan(acc, w)
    buffer = eagle.interop.import_buffer(w)
    assert (
        buffer.device == 0
        and buffer.__cuda_array_interface__["data"][0] == w.memory.__cuda_array_interface__["data"][0]
    )
