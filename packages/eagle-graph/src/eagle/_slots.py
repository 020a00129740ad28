"""Kernel argument slots (``eagle_arg``), filled in one place for host and GPU kernels.

A host kernel reads each value in one of the ABI's two widths (``i64`` or ``f64``, as it
declares); a CUDA kernel's parameter has its own size, which the driver reads from the start
of the slot, so there a float32 goes in as four bytes and a NumPy bool as an integer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from eagle._arrays import is_array
from eagle._core import ffi
from eagle._errors import EagleTypeError


def address(array: Any) -> int:
    """The address of element 0 of a device array or a NumPy array."""
    iface = getattr(array, "__cuda_array_interface__", None)
    if iface is not None:
        return int(iface["data"][0])
    return int(np.asarray(array).ctypes.data)


#: Values that are no array: a kernel item's slots skip the array interface lookup for them.
_PLAIN_NUMBERS = (int, float)


def _pointer(array: np.ndarray) -> Any:
    """The address of element 0 of a NumPy array as a ``void *``: through the buffer protocol, a
    fraction of ``ctypes.data``'s cost, which only a strided array (no simple buffer) takes."""
    try:
        return ffi.from_buffer(array)
    except ValueError:  # NumPy: "ndarray is not C-contiguous"
        return ffi.cast("void *", array.ctypes.data)


def slots(args: Sequence[Any], *, device: bool, api: str = "eagle.Graph.build") -> Any:
    """An ``eagle_arg[]`` of ``args``: an array by its address, an ``eagle_arg *`` as it is, an
    integer as i64 (u64 from 2**63), a float as f64; for a ``device`` kernel a NumPy float32 as
    f32 and a NumPy bool as an integer (the parameter's own size)."""
    filled = ffi.new("eagle_arg[]", max(len(args), 1))
    for i, arg in enumerate(args):  # the common cases first: this runs for every kernel item
        if isinstance(arg, np.ndarray):
            filled[i].ptr = _pointer(arg)
        elif type(arg) is float:  # a plan's f64 value (typed_slot passes it as it is)
            filled[i].f64 = arg
        elif isinstance(arg, ffi.CData):  # a filled 'eagle_arg *'
            filled[i] = arg[0]
        elif type(arg) not in _PLAIN_NUMBERS and is_array(arg):
            filled[i].u64 = address(arg)
        elif isinstance(arg, (bool, int, np.integer)) or (device and isinstance(arg, np.bool_)):
            value = int(arg)
            setattr(filled[i], "u64" if value >= 1 << 63 else "i64", value)
        elif device and isinstance(arg, np.float32):
            filled[i].f32 = arg
        elif isinstance(arg, (float, np.floating)) or (not device and hasattr(arg, "__float__")):
            filled[i].f64 = float(arg)
        else:
            raise EagleTypeError(f"{api}: a kernel argument is an array or a number, got "
                                 f"{type(arg).__name__}")
    return filled


def typed_slot(member: str, value: Any) -> Any:
    """One filled ``eagle_arg *`` holding ``value`` as ``member`` (``"f32"``, ``"i32"``, ...): the
    slot is a union, so a plan's value parameter is written as the member its kernel reads.

    A float for ``f64`` and an int of i64's range for ``i64`` come back as they are: :func:`slots`
    writes them as that very member, and a kernel launch then makes no slot of its own for them."""
    if ((type(value) is float and member == "f64")
            or (type(value) is int and member == "i64" and -(1 << 63) <= value < 1 << 63)):
        return value
    slot = ffi.new("eagle_arg *")
    setattr(slot, member, float(value) if member.startswith("f") else int(value))
    return slot
