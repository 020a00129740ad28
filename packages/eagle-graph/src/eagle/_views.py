"""Arrays as libeagle views, and the overlap test and candidate index over them.

A view (``eagle_view`` in ``eagle.h``) is the metadata of a strided array: data
pointer, shape, byte strides, item size, device, and ``base``, the start of the
owning allocation where it can be found (0 otherwise).  libeagle reads only this
metadata, never the memory.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, Final

import numpy as np

from eagle._errors import EagleTypeError, EagleValueError

from ._core import check, ffi, lib
from ._foreign import Producer, as_plane, gpu_ordinal

__all__ = ["MAX_DIMS", "MAX_WORK", "candidate_pairs", "ndarray_key", "overlap", "overlap_status",
           "plane_dtype", "view_of"]

#: The default work cap of the exact overlap test.  Views from ordinary slicing
#: are decided with a work of 1, and hand-made strides rarely need more than a
#: few hundred units.  At 20-50 ns per unit (NumPy's pathological example, here
#: and in NumPy) 2**16 bounds the worst case at 1-3 ms per pair; past the cap
#: the answer is "overlap", which costs an edge, never a missed conflict.
MAX_WORK: Final = 1 << 16

_HOST: Final = -1
_VIEW_PTR: Final = ffi.typeof("eagle_view *")
#: The most dimensions a view holds (``EAGLE_MAX_DIMS``).
MAX_DIMS: Final = int(lib.EAGLE_MAX_DIMS)
# .base chains are short in practice; the bound only guards against odd objects.
_MAX_BASE_DEPTH: Final = 64

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


def _data(array: np.ndarray) -> int:
    """``array``'s data pointer: through the buffer protocol where it is C-contiguous (NumPy's
    ``__array_interface__`` builds a dict each time, three times as slow; a build asks it of
    every plane), else from that interface."""
    if array.flags.c_contiguous:
        try:
            return int(ffi.cast("uintptr_t", ffi.from_buffer(array)))
        except ValueError:  # a dtype the buffer protocol cannot describe (datetime64)
            pass
    return array.__array_interface__["data"][0]


def _check_dims(ndim: int) -> None:
    if ndim > MAX_DIMS:
        raise EagleValueError(
            f"eagle.view_of: the array has {ndim} dimensions; eagle views allow at most "
            f"{MAX_DIMS}"
        )


def _fill(view: Any, data: int, shape: tuple[int, ...], strides: tuple[int, ...] | None,
          itemsize: int, device: int, base: int) -> None:
    """Fill ``view``; ``shape`` and ``strides`` hold Python ints, strides None = C order."""
    _check_dims(len(shape))
    strides = _c_strides(shape, itemsize) if strides is None else strides
    view[0] = [data, base, itemsize, len(shape), device, shape, strides]


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


def _first_byte(array: np.ndarray, data: int) -> int:
    """The start of ``array``'s extent (``data``: its data pointer), by libeagle's own extent rule;
    without a C call where it is plainly ``data`` (no stride negative, not empty: the usual root
    allocation)."""
    if min(array.strides, default=0) >= 0 and array.size:
        return data
    scratch = ffi.new("eagle_view *")
    _fill(scratch, data, array.shape, array.strides, array.itemsize, _HOST, 0)
    return _extent_start(scratch)


def _ndarray_base(array: np.ndarray, data: int) -> int:
    """A host view's base (``data``: ``array``'s data pointer, read already): the start of its
    root allocation's extent; 0 where eagle does not know the allocation (another library's
    memory, or a root past ``MAX_DIMS``)."""
    root = _root(array)
    if isinstance(root.base, Producer) or root.ndim > MAX_DIMS:
        return 0
    return _first_byte(root, data if root is array else _data(root))


def _fill_from_ndarray(view: Any, array: np.ndarray) -> None:
    _check_dims(array.ndim)
    data = _data(array)
    view[0] = [data, _ndarray_base(array, data), array.itemsize, array.ndim, _HOST, array.shape,
               array.strides]


def ndarray_key(array: np.ndarray) -> tuple[Any, ...]:
    """(device, data, item size, shape, strides) of the view :func:`view_of` makes of ``array``,
    read without making it (deriving edges keys every plane; only one per key needs its view).
    ``array`` is an ndarray of at most ``EAGLE_MAX_DIMS`` dimensions (past that view_of refuses)."""
    return _HOST, _data(array), array.itemsize, array.shape, array.strides


def _ints(values: Sequence[Any] | None) -> tuple[int, ...] | None:
    return None if values is None else tuple(int(v) for v in values)


def _fill_from_interface(view: Any, iface: dict[str, Any], device: int, base: int) -> None:
    _fill(view, int(iface["data"][0]), _ints(iface["shape"]), _ints(iface.get("strides")),
          _itemsize(iface["typestr"]), device, base)


def _gpu_base(obj: Any) -> int:
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(obj, cupy.ndarray):
        return int(obj.data.mem.ptr)  # the pool allocation the array lies in
    return 0


def _fill_view(view: Any, obj: Any) -> Any:
    """Fill ``view`` from ``obj``; return what the view must keep alive, if anything."""
    if isinstance(obj, np.ndarray):
        _fill_from_ndarray(view, obj)
        return None
    try:
        plane = as_plane(obj, "eagle.view_of", "the object")
    except TypeError:
        if not hasattr(obj, "__array__"):
            raise EagleTypeError(f"eagle.view_of: {type(obj).__name__} has no __cuda_array_interface__, "
                            "__array_interface__, __dlpack__ or __array__; pass an array") from None
        # __array__ may return a copy: the view then describes the copy, and keeps it alive so
        # that no later allocation reuses its address.
        plane = np.asarray(obj)
    if isinstance(plane, np.ndarray):
        _fill_from_ndarray(view, plane)
    else:
        _fill_from_interface(view, plane.__cuda_array_interface__, gpu_ordinal(plane), _gpu_base(plane))
    return None if plane is obj else plane


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
    raise EagleTypeError(f"eagle: the dtype of a {type(obj).__name__} plane cannot be read (no NumPy dtype, "
                    "no array interface): pass a NumPy or CuPy array (for torch, t.numpy() or t.cuda())")


def view_of(array: Any) -> Any:
    """The ``eagle_view *`` describing ``array`` (a cffi cdata that owns its memory).

    ``array`` is any plane (a NumPy or device array, or an array of another library, read as
    :func:`eagle._foreign.as_plane` reads it), or has ``__array__`` (the view then describes
    the copy that may return).  The view does not keep ``array`` alive.
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
        raise EagleValueError(f"{api}: max_work must be an int from -2**63 to 2**63 - 1 (< 0: no cap, "
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
        raise EagleValueError(
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
        raise EagleValueError(
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
