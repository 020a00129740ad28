"""A torch tensor's memory as an eagle plane.

eagle reads a plane through ``__cuda_array_interface__`` or
``__array_interface__``.  torch's own exports refuse a tensor that requires
grad, and NumPy has no bfloat16, so the plane is described here from the
tensor itself: the address of its first element in its storage, its shape
and its strides in bytes.  Two tensors that view one storage therefore
overlap exactly where their bytes do, and eagle derives the edges between
them.  The plane keeps the tensor alive.
"""

from __future__ import annotations

from typing import Any

# NumPy spellings of torch dtypes; eagle reads only the item size, and a
# dtype NumPy lacks (bfloat16, float8) is described as raw bytes of its size.
_TYPESTR = {"float64": "<f8", "float32": "<f4", "float16": "<f2", "int64": "<i8", "int32": "<i4",
            "int16": "<i2", "int8": "|i1", "uint8": "|u1", "bool": "|b1", "complex64": "<c8",
            "complex128": "<c16"}


def _interface(tensor: Any) -> dict[str, Any]:
    itemsize = tensor.element_size()
    name = str(tensor.dtype).removeprefix("torch.")
    return {"version": 3, "data": (int(tensor.data_ptr()), False), "shape": tuple(tensor.shape),
            "strides": tuple(int(s) * itemsize for s in tensor.stride()),
            "typestr": _TYPESTR.get(name, f"|V{itemsize}")}


class HostTensorPlane:
    """A CPU tensor's memory, as ``__array_interface__``."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Any) -> None:
        self.tensor = tensor

    @property
    def __array_interface__(self) -> dict[str, Any]:
        return _interface(self.tensor)

    def __repr__(self) -> str:
        return f"<eagle_torch plane of {tuple(self.tensor.shape)} {self.tensor.dtype} on cpu>"


class DeviceTensorPlane:
    """A CUDA tensor's memory, as ``__cuda_array_interface__``."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Any) -> None:
        self.tensor = tensor

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        # No "stream": eagle orders the node itself; torch's own export would sync the current stream.
        return _interface(self.tensor)

    def __repr__(self) -> str:
        t = self.tensor
        return f"<eagle_torch plane of {tuple(t.shape)} {t.dtype} on {t.device}>"


def plane_of(tensor: Any) -> HostTensorPlane | DeviceTensorPlane:
    """The plane for ``tensor``: its own memory, on the side it lives."""
    return DeviceTensorPlane(tensor) if tensor.is_cuda else HostTensorPlane(tensor)
