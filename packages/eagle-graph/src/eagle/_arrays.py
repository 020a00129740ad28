"""What an object is to eagle: a number, an array (host or device), a guard cell.

The lowest layer of eagle-graph (it imports nothing of eagle), so that every module that must
tell these apart, from the host program to the builder, asks the one question the one way.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def is_value(obj: Any) -> bool:
    """Whether ``obj`` is a number: a value, copied where it is passed, so it carries no edges.
    A NumPy scalar (``arr[5, 5]``) is one too, though its interface points at a temporary."""
    return isinstance(obj, (int, float, complex, np.generic))


def on_device(array: Any) -> bool:
    """Whether ``array`` is a device array (``__cuda_array_interface__``: CuPy, a CUDA torch tensor,
    eagle's DeviceArray)."""
    if type(array) is np.ndarray:  # asked of every plane of every node: no failed attribute lookup
        return False
    return hasattr(array, "__cuda_array_interface__")


def is_array(obj: Any) -> bool:
    """Whether ``obj`` is a NumPy array or a device array: what a node holds as it is, and what a
    kernel's argument slot takes as an address."""
    return isinstance(obj, np.ndarray) or on_device(obj)


def is_guard_cell(obj: Any) -> bool:
    """Whether ``obj`` is a guard cell: a one-cell uint32 array, host or device, which a
    conditional (skippable, repeat_while, a device if, match or loop) reads at every replay."""
    return is_array(obj) and obj.dtype == np.uint32 and obj.size == 1
