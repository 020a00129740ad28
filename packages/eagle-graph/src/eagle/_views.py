"""Arrays as libeagle views, and the overlap test and candidate index over them.

A view (``eagle_view`` in ``eagle.h``) is the metadata of a strided array: data
pointer, shape, byte strides, item size, device, and ``base``, the start of the
owning allocation where it can be found (0 otherwise).  libeagle reads only this
metadata, never the memory.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, Final

import cffi
import numpy as np

from ._arrays import is_array, is_value
from ._core import check, ffi, lib

__all__ = ["MAX_WORK", "candidate_pairs", "host_plane", "overlap", "overlap_status", "plane_dtype", "view_of"]

#: The default work cap of the exact overlap test.  Views from ordinary slicing
#: are decided with a work of 1, and hand-made strides rarely need more than a
#: few hundred units.  At 20-50 ns per unit (NumPy's pathological example, here
#: and in NumPy) 2**16 bounds the worst case at 1-3 ms per pair; past the cap
#: the answer is "overlap", which costs an edge, never a missed conflict.
MAX_WORK: Final = 1 << 16

_HOST: Final = -1
_VIEW_PTR: Final = ffi.typeof("eagle_view *")
_MAX_DIMS: Final = int(lib.EAGLE_MAX_DIMS)
# .base chains are short in practice; the bound only guards against odd objects.
_MAX_BASE_DEPTH: Final = 64

# DLPack device types (dlpack.h) whose memory the host addresses directly.
_DL_CPU: Final = 1
_DL_HOST_TYPES: Final = frozenset({1, 3, 11})  # kDLCPU, kDLCUDAHost, kDLROCMHost

# The DLPack 0.x tensor a "dltensor" capsule points to (DLManagedTensor starts
# with it).  Read through a cffi type of its own so the field layout is the C one.
_dl = cffi.FFI()
_dl.cdef("""
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} DLTensor;
""")
# A private prototype: setting restype on ctypes.pythonapi's shared attribute
# would change it for every other user in the process.
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


@lru_cache(maxsize=256)
def _itemsize(typestr: str) -> int:
    # np.dtype knows every typestr spelling, e.g. '<U3' is 12 bytes, not 3.
    return np.dtype(typestr).itemsize


def _c_strides(shape: tuple[int, ...], itemsize: int) -> list[int]:
    """The byte strides of a C-contiguous array (an interface's ``strides: None``)."""
    strides = [0] * len(shape)
    step = itemsize
    for k in range(len(shape) - 1, -1, -1):
        strides[k] = step
        step *= max(shape[k], 1)
    return strides


def _fill(view: Any, data: int, shape: tuple[int, ...], strides: tuple[int, ...] | None,
          itemsize: int, device: int, base: int) -> None:
    """Fill ``view``; ``shape`` and ``strides`` hold Python ints, strides None = C order."""
    ndim = len(shape)
    if ndim > _MAX_DIMS:
        raise ValueError(
            f"eagle.view_of: the array has {ndim} dimensions; eagle views allow at most "
            f"{_MAX_DIMS}"
        )
    view.data = data
    view.base = base
    view.itemsize = itemsize
    view.ndim = ndim
    view.device = device
    view.shape[0:ndim] = shape
    view.strides[0:ndim] = _c_strides(shape, itemsize) if strides is None else strides


def _extent_start(view: Any) -> int:
    bounds = ffi.new("uintptr_t[2]")
    lib.eagle_view_extent(view, bounds, bounds + 1)
    return int(bounds[0])  # 0 for an empty view, as for an unknown base


def _root(array: np.ndarray) -> np.ndarray:
    """The outermost ndarray that ``array`` views: its allocation, as far as NumPy knows."""
    root, owner = array, array.base
    for _ in range(_MAX_BASE_DEPTH):
        if owner is None:
            break
        if isinstance(owner, np.ndarray):
            root = owner
        elif not hasattr(owner, "__array_interface__"):
            break  # bytes, mmap, a DLPack capsule: nothing further to learn
        # as_strided's intermediate holds its parent in .base too.
        owner = getattr(owner, "base", None)
    return root


def _fill_from_ndarray(view: Any, array: np.ndarray) -> None:
    _fill(view, array.__array_interface__["data"][0], array.shape, array.strides,
          array.itemsize, _HOST, 0)
    # base: the root's extent start, found by libeagle's own extent rule.
    root = _root(array)
    if root is array:
        view.base = _extent_start(view)
    elif root.ndim <= _MAX_DIMS:
        scratch = ffi.new("eagle_view *")
        _fill(scratch, root.__array_interface__["data"][0], root.shape, root.strides,
              root.itemsize, _HOST, 0)
        view.base = _extent_start(scratch)


def _ints(values: Sequence[Any] | None) -> tuple[int, ...] | None:
    return None if values is None else tuple(int(v) for v in values)


def _fill_from_interface(view: Any, iface: dict[str, Any], device: int, base: int) -> None:
    _fill(view, int(iface["data"][0]), _ints(iface["shape"]), _ints(iface.get("strides")),
          _itemsize(iface["typestr"]), device, base)


def gpu_ordinal(obj: Any) -> int:
    """The GPU ordinal of a device array: CuPy and torch say; any other is on device 0."""
    # Look in sys.modules instead of importing: an object of a library that was
    # never imported cannot be one of its arrays.
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(obj, cupy.ndarray):
        return int(obj.device.id)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return int(obj.device.index or 0)
    device = getattr(obj, "device", 0)  # eagle's own DeviceArray says its ordinal
    return device if isinstance(device, int) else 0


def _gpu_base(obj: Any) -> int:
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(obj, cupy.ndarray):
        return int(obj.data.mem.ptr)  # the pool allocation the array lies in
    return 0


def _fill_from_dlpack_capsule(view: Any, capsule: Any) -> None:
    """Read a legacy ``"dltensor"`` capsule without consuming it.

    The capsule keeps its name, so its destructor still calls the producer's
    deleter when it is dropped.
    """
    tensor = _dl.cast("DLTensor *", _capsule_pointer(capsule, b"dltensor"))
    ndim = int(tensor.ndim)
    itemsize = max((tensor.dtype.bits * tensor.dtype.lanes + 7) // 8, 1)
    shape = tuple(int(tensor.shape[k]) for k in range(ndim))
    strides = None
    if tensor.strides != _dl.NULL:  # DLPack strides count elements, not bytes
        strides = tuple(int(tensor.strides[k]) * itemsize for k in range(ndim))
    device_type = int(tensor.device.device_type)
    device = _HOST if device_type in _DL_HOST_TYPES else int(tensor.device.device_id)
    data = int(_dl.cast("uintptr_t", tensor.data)) + int(tensor.byte_offset)
    _fill(view, data, shape, strides, itemsize, device, 0)


def _fill_view(view: Any, obj: Any) -> np.ndarray | None:
    """Fill ``view`` from ``obj``; return an array the view must keep alive, if any."""
    if isinstance(obj, np.ndarray):
        _fill_from_ndarray(view, obj)
        return None
    iface = getattr(obj, "__cuda_array_interface__", None)
    if iface is not None:
        _fill_from_interface(view, iface, gpu_ordinal(obj), _gpu_base(obj))
        return None
    iface = getattr(obj, "__array_interface__", None)
    if iface is not None:
        if isinstance(iface.get("data"), tuple):
            _fill_from_interface(view, iface, _HOST, 0)
            return None
        array = np.asarray(obj)  # the data is a buffer object: NumPy resolves it
        _fill_from_ndarray(view, array)
        return array
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        device_type, _ = obj.__dlpack_device__()
        if int(device_type) == _DL_CPU:
            _fill_from_ndarray(view, np.from_dlpack(obj))
        else:
            _fill_from_dlpack_capsule(view, obj.__dlpack__())
        return None
    buffer = _buffer(obj)
    if buffer is not None:  # bytearray, memoryview, a ctypes array: NumPy views the same bytes
        array = np.asarray(buffer)
        _fill_from_ndarray(view, array)
        return array
    if hasattr(obj, "__array__"):
        # __array__ may return a copy: the view then describes the copy, and
        # keeps it alive so that no later allocation reuses its address.
        array = np.asarray(obj)
        _fill_from_ndarray(view, array)
        return array
    raise TypeError(
        f"eagle.view_of: {type(obj).__name__} has no __cuda_array_interface__, "
        "__array_interface__, __dlpack__ or __array__; pass an array"
    )


def _buffer(obj: Any) -> memoryview | None:
    """A memoryview of an object with the buffer protocol, else None."""
    try:
        return memoryview(obj)
    except TypeError:
        return None


def host_plane(obj: Any, api: str, name: str) -> Any:
    """``obj`` as a node holds a plane: a device array as it is, a host one as an ndarray over
    the same memory (a DLPack or buffer-protocol object too), so that its dtype is NumPy's.

    :raises TypeError: ``obj`` is not memory (a list, a number): ``api`` and ``name`` say which.
    """
    if is_array(obj):
        return obj
    if is_value(obj):
        raise TypeError(f"{api}: {name} is the number {obj!r}, a value copied where it is passed "
                        "(a NumPy scalar too, e.g. a[5, 5]): pass an array, e.g. a one-cell a[5:6, 5]")
    if hasattr(obj, "__array_interface__"):
        return np.asarray(obj)  # the interface's own memory: no copy
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        if int(obj.__dlpack_device__()[0]) in _DL_HOST_TYPES:
            return np.from_dlpack(obj)
        return obj
    buffer = _buffer(obj)
    if buffer is not None:
        return np.asarray(buffer)
    raise TypeError(f"{api}: {name} is a {type(obj).__name__}, not an array: pass a NumPy array "
                    "(or any object with __array_interface__, DLPack or the buffer protocol)")


def plane_dtype(obj: Any) -> np.dtype:
    """The NumPy dtype of a plane, read from its interface where its own ``dtype`` is another
    library's (a torch tensor's ``torch.float64``): no import of that library."""
    dtype = getattr(obj, "dtype", None)
    if isinstance(dtype, np.dtype):
        return dtype
    for attr in ("__cuda_array_interface__", "__array_interface__"):
        iface = getattr(obj, attr, None)
        if iface is not None:
            return np.dtype(iface["typestr"])
    raise TypeError(f"eagle: the dtype of a {type(obj).__name__} plane cannot be read (no NumPy dtype, "
                    "no array interface): pass a NumPy or CuPy array (for torch, t.numpy() or t.cuda())")


def view_of(array: Any) -> Any:
    """The ``eagle_view *`` describing ``array`` (a cffi cdata that owns its memory).

    The interfaces are tried in the order ``__cuda_array_interface__``,
    ``__array_interface__``, DLPack, ``__array__``.  The view does not keep
    ``array`` alive.
    """
    view = ffi.new("eagle_view *")
    keep = _fill_view(view, array)
    if keep is not None:
        view = ffi.gc(view, lambda _view, keep=keep: None)
    return view


def _is_view(obj: Any) -> bool:
    return isinstance(obj, ffi.CData) and ffi.typeof(obj) == _VIEW_PTR


def _as_view(obj: Any) -> Any:
    return obj if _is_view(obj) else view_of(obj)


_INT64: Final = (-(1 << 63), (1 << 63) - 1)


def _work(max_work: Any, api: str) -> int:
    """``max_work`` checked against the C parameter's range (int64)."""
    if not isinstance(max_work, (int, np.integer)) or isinstance(max_work, bool) \
            or not _INT64[0] <= max_work <= _INT64[1]:
        raise ValueError(f"{api}: max_work must be an int from -2**63 to 2**63 - 1 (< 0: no cap, "
                         f"0: compare extents only, default {MAX_WORK}); got {max_work!r}")
    return int(max_work)


def overlap_status(a: Any, b: Any, max_work: int = MAX_WORK) -> int:
    """The raw ``eagle_overlap`` answer for two arrays or views (``EAGLE_OVERLAP_*``).

    ``max_work`` < 0 searches without a cap; 0 compares extents only.
    """
    work = _work(max_work, "eagle.overlap")
    return int(lib.eagle_overlap(_as_view(a), _as_view(b), work))


def overlap(a: Any, b: Any, max_work: int = MAX_WORK) -> bool:
    """Whether ``a`` and ``b`` may share a byte: False only when they provably do not.

    An undecided answer (work cap hit, integer overflow) counts as overlap.

    :raises ValueError: a hand-built view is malformed.
    """
    status = overlap_status(a, b, max_work)
    if status == lib.EAGLE_OVERLAP_BAD_VIEW:
        detail = ffi.string(lib.eagle_last_error()).decode()
        raise ValueError(
            f"eagle.overlap: a malformed view ({detail}); views made by eagle.view_of "
            "are always well formed"
        )
    return status != lib.EAGLE_OVERLAP_NO


def _views_array(items: Sequence[Any]) -> tuple[Any, list[Any]]:
    """Copy views into one C array; return it with the arrays it must keep alive.

    Those arrays (copies made by ``__array__``) must outlive the C call, or a
    new allocation could take the address of a freed one mid-build.
    """
    views = ffi.new("eagle_view[]", max(len(items), 1))
    keep: list[Any] = []
    for k, item in enumerate(items):
        if _is_view(item):
            views[k] = item[0]
        else:
            held = _fill_view(views + k, item)
            if held is not None:
                keep.append(held)
    return views, keep


def candidate_pairs(arrays_or_views: Iterable[Any], writes: Iterable[bool] | np.ndarray,
                    exact: bool = True, max_work: int = MAX_WORK) -> np.ndarray:
    """Pairs ``(i, j)``, ``i < j``, of accesses that may conflict, as a ``(K, 2)`` int64 array.

    A pair is reported when one of the two writes, both are on one device and
    their byte extents intersect; with ``exact``, pairs the overlap test proves
    disjoint are dropped.  Rows are sorted.

    :raises ValueError: ``writes`` does not have one entry per access.
    """
    items = list(arrays_or_views)
    n = len(items)
    flags = np.ascontiguousarray(np.asarray(writes, dtype=bool), dtype=np.uint8)
    if flags.shape != (n,):
        raise ValueError(
            f"eagle.candidate_pairs: writes has shape {flags.shape}, expected ({n},): one "
            "flag per access"
        )
    work = _work(max_work, "eagle.candidate_pairs")
    views, keep = _views_array(items)
    out = ffi.new("int64_t **")
    npairs = ffi.new("int64_t *")
    writes_ptr = ffi.from_buffer("uint8_t[]", flags) if n else ffi.NULL
    check(lib.eagle_candidate_pairs(views, writes_ptr, n, int(bool(exact)), work, out,
                                    npairs), "eagle.candidate_pairs")
    del keep  # needed until the call returned
    try:
        count = int(npairs[0])
        if count == 0:
            return np.empty((0, 2), dtype=np.int64)
        raw = ffi.buffer(out[0], count * 2 * ffi.sizeof("int64_t"))
        return np.frombuffer(raw, dtype=np.int64).reshape(count, 2).copy()
    finally:
        lib.eagle_free(out[0])
