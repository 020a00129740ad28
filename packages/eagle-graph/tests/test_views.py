"""view_of: every array interface it reads gives the view NumPy would."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest
from numpy.lib.array_utils import byte_bounds
from numpy.lib.stride_tricks import as_strided

from eagle._core import ffi, lib
from eagle._foreign import dlpack_interface
from eagle._views import _root, ndarray_key, overlap, view_of
from eagle.testing import DLPackOnly


def fields(view: Any) -> tuple:
    ndim = view.ndim
    return (view.data, view.itemsize, ndim, view.device, tuple(view.shape[0:ndim]),
            tuple(view.strides[0:ndim]))


def numpy_fields(array: np.ndarray, device: int = -1) -> tuple:
    return (array.__array_interface__["data"][0], array.itemsize, array.ndim, device,
            array.shape, array.strides)


class HostInterface:
    """Only ``__array_interface__``, C-contiguous, so ``strides`` is None."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.__array_interface__ = dict(array.__array_interface__, strides=None)


class Interface:
    """Only the ``__array_interface__`` given."""

    def __init__(self, iface: dict[str, Any]) -> None:
        self.__array_interface__ = iface


class CudaInterface:
    """A fake device array: ``__cuda_array_interface__`` over host memory (never read)."""

    def __init__(self, array: np.ndarray, strides: tuple | None) -> None:
        self.array = array
        iface = array.__array_interface__
        self.__cuda_array_interface__ = {"data": iface["data"], "shape": array.shape,
                                         "strides": strides, "typestr": iface["typestr"],
                                         "version": 3}


class ArrayOnly:
    """Only ``__array__``, returning a fresh copy each time."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.array.copy()


def test_ndarray_view_fields() -> None:
    """Data pointer, shape, byte strides (negative too) and item size come from NumPy."""
    x = np.zeros((6, 8), np.float32)
    for array in (x, x[1:, ::-2], x.T, x[2, 3:3], x[4, 5]):
        array = np.asarray(array)
        assert fields(view_of(array)) == numpy_fields(array)


def test_ndarray_key_is_the_views_key() -> None:
    """Deriving edges keys an ndarray without making its view: the key is the view's own, the data
    pointer read through the buffer protocol or, where that has no format, the interface."""
    x = np.zeros((6, 8), np.float32)
    for array in (x, x[1:, ::-2], x.T, x[2, 3:3], np.asarray(x[4, 5]), x.view(np.uint8)[:, 1::3],
                  as_strided(x, (3, 3), (0, 4)), np.zeros(0), np.zeros((2, 1, 3), np.int16)[:, :, ::-1],
                  np.zeros(3, "M8[s]"), np.zeros(2, object), np.zeros((2, 2), "U3")):
        view = view_of(array)
        ndim = view.ndim
        assert ndarray_key(array) == (view.device, view.data, view.itemsize, tuple(view.shape[0:ndim]),
                                      tuple(view.strides[0:ndim]))


def test_base_is_the_root_allocation_start() -> None:
    """base walks .base to the outermost ndarray, through as_strided, to its first byte."""
    x = np.zeros(100, np.int16)
    start = byte_bounds(x)[0]
    assert view_of(x).base == start
    assert view_of(x[10:20][::-1]).base == start
    assert view_of(as_strided(x[7:], shape=(3, 3), strides=(4, -2))).base == start
    reversed_root = np.zeros(10)[::-1].copy()[::-1]
    assert view_of(reversed_root).base == byte_bounds(reversed_root.base)[0]


@pytest.mark.parametrize("make", [
    lambda: np.zeros(7), lambda: np.zeros((3, 4))[::-1], lambda: np.zeros((3, 4)).T[:, ::-2],
    lambda: np.zeros(0), lambda: np.zeros((2, 0))[::-1], lambda: np.asarray(np.float32(2.0)),
    lambda: as_strided(np.zeros(9)[8:], (3, 3), (-8, -16))[::-1], lambda: np.zeros((5, 5))[3:, ::-1].copy()])
def test_the_base_shortcut_keeps_libeagles_extent_rule(make: Any) -> None:
    """A base skips libeagle's extent call where no stride of the root is negative: the same start."""
    array = make()
    root = _root(array)
    bounds = ffi.new("uintptr_t[2]")
    lib.eagle_view_extent(view_of(root), bounds, bounds + 1)  # reads data, shape, strides: not base
    assert view_of(array).base == view_of(root).base == bounds[0]


def test_array_interface_without_strides_is_c_contiguous() -> None:
    """``strides: None`` means C order: the strides are computed."""
    x = np.zeros((3, 4, 5), np.int16)
    view = view_of(HostInterface(x))
    assert fields(view) == numpy_fields(x)
    assert view.base == 0  # a foreign host object: allocation unknown


def test_cuda_array_interface_gives_a_device_view() -> None:
    """A CUDA interface without cupy/torch loaded is device 0, strides computed if None."""
    x = np.zeros((4, 6), np.float64)
    assert fields(view_of(CudaInterface(x, None))) == numpy_fields(x, device=0)
    y = x[::2, ::-3]
    assert fields(view_of(CudaInterface(y, y.strides))) == numpy_fields(y, device=0)
    # Host and device views of the same addresses are different memories.
    assert overlap(x, CudaInterface(x, None)) is False


def test_dlpack_cpu_goes_through_numpy() -> None:
    """A CPU DLPack producer is read via numpy.from_dlpack."""
    x = np.zeros((5, 7), np.int32)[:, 1::2]
    assert fields(view_of(DLPackOnly(x))) == numpy_fields(x)


def test_dlpack_capsule_reader_matches_numpy() -> None:
    """The capsule reader used for non-CPU producers decodes NumPy's capsules exactly."""
    for x in (np.zeros((5, 7), np.int32)[:, 1::2], np.zeros((3, 4), np.complex128).T,
              np.zeros(9, np.uint8), np.zeros((2, 3))[1, 1:]):
        iface, device_type, _ = dlpack_interface(x.__dlpack__())
        assert device_type == 1 and iface["typestr"] == x.dtype.str
        assert fields(view_of(Interface(iface))) == numpy_fields(x)
    # A producer claiming CUDA is routed to the capsule reader; the capsule's own
    # device (CPU here) decides the view's device.
    y = np.zeros((4, 4), np.float32)[1:, :2]
    assert fields(view_of(DLPackOnly(y, device=(2, 0)))) == numpy_fields(y)


def test_array_fallback_keeps_its_copy_alive() -> None:
    """``__array__`` may copy; the view holds the copy so its address stays reserved."""
    source = ArrayOnly(np.arange(12.0).reshape(3, 4))
    view = view_of(source)
    assert view.ndim == 2 and tuple(view.shape[0:2]) == (3, 4)
    assert tuple(view.strides[0:2]) == (32, 8) and view.itemsize == 8

    made = []

    class Copying(ArrayOnly):
        def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
            out = self.array.copy()
            made.append(weakref.ref(out))
            return out

    held = view_of(Copying(np.zeros(3)))
    gc.collect()
    assert made[-1]() is not None
    del held
    gc.collect()
    assert made[-1]() is None


def test_too_many_dimensions_and_unknown_objects_are_refused() -> None:
    """More axes than EAGLE_MAX_DIMS, or no array interface at all, raise."""
    with pytest.raises(ValueError, match=r"^eagle\.view_of: the array has 33 dimensions"):
        view_of(np.zeros((1,) * 33))
    with pytest.raises(TypeError, match=r"^eagle\.view_of: object has no"):
        view_of(object())
