"""Arrays of other libraries as planes: the one place eagle turns a torch tensor, a JAX array, or
any object with DLPack, an array interface or the buffer protocol into what a node holds.

A node holds a NumPy array (host memory) or a device array, so every check, view and lowering
reads one kind of object.  :func:`as_plane` makes a foreign host array a NumPy array over the
same memory whose ``base`` is a :class:`Producer`: the object the memory came from, kept alive as
long as the plane is, and asked at launch whether the plane is still its memory (a torch
tensor's ``param.data = ...`` gives it new storage).  A foreign device array becomes a
:class:`DevicePlane` holding the same.  One object gives one plane while that plane lives, so a
tensor declared twice is one plane.

No framework is imported for this: eagle reads ``__dlpack_device__`` and ``__dlpack__``,
``__cuda_array_interface__``, ``__array_interface__`` and the buffer protocol, takes ``detach()``
of a tensor that requires grad (its memory, without autograd), and asks ``sys.modules`` whether
an object is a CuPy array (held as it is) or a JAX array (immutable).
"""

from __future__ import annotations

import ctypes
import sys
import weakref
from typing import Any, Final

import cffi
import numpy as np

from eagle._arrays import is_value, on_device
from eagle._errors import EagleTypeError, EagleValueError

__all__ = ["DevicePlane", "Producer", "as_plane", "gpu_ordinal", "held", "producer_of", "refuse_write"]

# DLPack device types (dlpack.h): memory the host addresses directly, and CUDA memory.
_DL_HOST: Final = frozenset({1, 3, 11})  # kDLCPU, kDLCUDAHost, kDLROCMHost
_DL_CUDA: Final = frozenset({2, 13})  # kDLCUDA, kDLCUDAManaged
_DL_NAMES: Final = {
    4: "kDLOpenCL",
    7: "kDLVulkan",
    8: "kDLMetal (Apple's GPU)",
    9: "kDLVPI",
    10: "kDLROCM (an AMD GPU)",
    12: "kDLExtDev",
    14: "kDLOneAPI",
    15: "kDLWebGPU",
    16: "kDLHexagon",
    17: "kDLMAIA",
}
# .base chains are short in practice; the bound only guards against odd objects.
_MAX_BASE_DEPTH: Final = 64

# The DLPack 0.x tensor a "dltensor" capsule points to (DLManagedTensor starts with it).  Read
# through a cffi type of its own so the field layout is the C one.
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
# A private prototype: setting restype on ctypes.pythonapi's shared attribute would change it for
# every other user in the process.
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
# DLDataType codes NumPy spells (kDLInt, kDLUInt, kDLFloat, kDLComplex, kDLBool); any other
# (bfloat16, float8) is described as raw bytes of its size: eagle reads only the item size.
_DL_KINDS: Final = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}


def _typestr(code: int, bits: int, lanes: int) -> str:
    size = max((bits * lanes + 7) // 8, 1)
    kind = _DL_KINDS.get(code) if lanes == 1 and bits % 8 == 0 else None
    if kind is None:
        return f"|V{size}"
    try:
        return np.dtype(f"<{kind}{size}").str
    except TypeError:  # a width NumPy has no type for
        return f"|V{size}"


def dlpack_interface(capsule: Any) -> tuple[dict[str, Any], int, int]:
    """``(an array interface, DLPack device type, device id)`` of a legacy ``"dltensor"`` capsule,
    read without consuming it: the capsule keeps its name, so dropping it still calls the
    producer's deleter, and whoever holds the capsule holds the memory."""
    tensor = _dl.cast("DLTensor *", _capsule_pointer(capsule, b"dltensor"))
    ndim = int(tensor.ndim)
    dtype = tensor.dtype
    typestr = _typestr(int(dtype.code), int(dtype.bits), int(dtype.lanes))
    itemsize = np.dtype(typestr).itemsize
    shape = tuple(int(tensor.shape[k]) for k in range(ndim))
    strides = None
    if tensor.strides != _dl.NULL:  # DLPack strides count elements, not bytes
        strides = tuple(int(tensor.strides[k]) * itemsize for k in range(ndim))
    data = int(_dl.cast("uintptr_t", tensor.data)) + int(tensor.byte_offset)
    iface = {"version": 3, "data": (data, False), "shape": shape, "strides": strides, "typestr": typestr}
    return iface, int(tensor.device.device_type), int(tensor.device.device_id)


def gpu_ordinal(obj: Any) -> int:
    """The GPU ordinal of a device array: CuPy and torch say; any other is on device 0."""
    # Look in sys.modules instead of importing: an object of a library that was never imported
    # cannot be one of its arrays.
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(obj, cupy.ndarray):
        return int(obj.device.id)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return int(obj.device.index or 0)
    device = getattr(obj, "device", 0)  # eagle's own device arrays say their ordinal
    return device if isinstance(device, int) else 0


def _is_jax(obj: Any) -> bool:
    jax = sys.modules.get("jax")
    return jax is not None and isinstance(obj, jax.Array)


def _requires_grad(obj: Any) -> bool:
    return getattr(obj, "requires_grad", False) is True


def _layout(obj: Any) -> tuple[Any, ...] | None:
    """Where and how ``obj``'s memory lies, read now without exporting it: a torch tensor's
    pointer, shape, strides and dtype, an array interface's, a JAX array's (which never change);
    None where only an export would say (DLPack alone: such an object is taken to keep its
    memory, as it did before there was this check)."""
    data_ptr = getattr(obj, "data_ptr", None)
    if callable(data_ptr) and callable(getattr(obj, "stride", None)):  # torch
        return int(data_ptr()), tuple(obj.shape), tuple(obj.stride()), str(obj.dtype)
    if _is_jax(obj):
        return ("immutable",)
    for name in ("__array_interface__", "__cuda_array_interface__"):
        try:
            iface = getattr(obj, name, None)
        except RuntimeError:  # torch's CUDA interface of a tensor that requires grad
            iface = None
        if isinstance(iface, dict):
            return (name, iface.get("data"), tuple(iface.get("shape", ())), iface.get("strides"),
                    iface.get("typestr"), iface.get("offset"))
    return None


class Producer:
    """What a foreign plane's memory belongs to: ``owner``, the object it came from, kept alive as
    long as the plane is, and ``keep``, what holds the memory (an export of it).  The ``base`` of a
    host plane, which NumPy reads through its ``__array_interface__``.

    >>> from eagle._foreign import as_plane, producer_of
    >>> class Memory:                    # any object with an array interface
    ...     def __init__(self, a):
    ...         self.__array_interface__ = a.__array_interface__
    ...         self.a = a
    >>> mem = Memory(np.arange(3.0))
    >>> plane = as_plane(mem, "example", "x")
    >>> type(plane).__name__, producer_of(plane).owner is mem, as_plane(mem, "example", "x") is plane
    ('ndarray', True, True)
    """

    def __init__(self, owner: Any, keep: Any, iface: dict[str, Any] | None = None) -> None:
        self.owner = owner
        self.keep = keep
        if iface is not None:
            self.__array_interface__ = iface
        #: where and how the owner's memory lay when the plane was made (None: unknown)
        self.layout = _layout(owner)
        data_ptr = getattr(owner, "data_ptr", None)  # torch: where its storage is now
        #: where the owner's memory was when the plane was made, where the owner says (else None)
        self.address: int | None = int(data_ptr()) if callable(data_ptr) else None
        #: a JAX array: JAX never changes one, so eagle reads it only
        self.immutable = _is_jax(owner)

    @property
    def what(self) -> str:
        """The owner in words: ``a torch Parameter``, ``a JAX array``."""
        if self.immutable:
            return "a JAX array"
        kind = type(self.owner)
        return f"a {kind.__module__.split('.')[0]} {kind.__name__}"

    def requires_grad(self) -> bool:
        """Whether the owner is a tensor autograd tracks (asked now: it may have changed)."""
        return _requires_grad(self.owner)

    def moved(self) -> bool:
        """Whether the owner's memory is no longer the plane's (``param.data = ...``)."""
        return self.address is not None and int(self.owner.data_ptr()) != self.address

    def version(self) -> int | None:
        """The owner's count of in-place changes (torch's ``_version``), where it keeps one."""
        version = getattr(self.owner, "_version", None)
        return version if isinstance(version, int) else None


class DevicePlane:
    """A device array of another library as eagle holds it: its CUDA array interface read once,
    with a NumPy dtype and the GPU ordinal, and its :class:`Producer` kept alive."""

    def __init__(self, iface: dict[str, Any], device: int, producer: Producer) -> None:
        self.shape = tuple(int(s) for s in iface["shape"])
        self.dtype = np.dtype(iface["typestr"])
        self.ndim = len(self.shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * self.dtype.itemsize
        #: the GPU ordinal
        self.device = device
        self.base = None
        self.producer = producer
        self.readonly = bool(iface["data"][1])
        strides = iface.get("strides")
        # no "stream": eagle orders the node itself
        self.__cuda_array_interface__ = {
            "version": 3,
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (int(iface["data"][0]), self.readonly),
            "strides": None if strides is None else tuple(int(s) for s in strides),
        }

    def __repr__(self) -> str:
        return (
            f"<eagle plane over {self.producer.what}: shape={self.shape}, dtype={self.dtype}, "
            f"device={self.device}>"
        )


def held(obj: Any) -> bool:
    """Whether a node holds ``obj`` as it is: a NumPy array, a device array of eagle's (or CuPy's),
    or one with a NumPy dtype that speaks no DLPack (Numba's, a test's own)."""
    if isinstance(obj, (np.ndarray, DevicePlane)):
        return True
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(obj, cupy.ndarray):
        return True
    if hasattr(obj, "__dlpack_device__"):  # a torch tensor, a JAX array: converted
        return False
    return isinstance(getattr(obj, "dtype", None), np.dtype) and on_device(obj)


# id(owner) -> the plane made of it, while that plane lives (it holds the owner, so the id stays
# the owner's): one object, one plane.
_planes: dict[int, weakref.ref] = {}


def _remembered(obj: Any) -> Any:
    ref = _planes.get(id(obj))
    plane = None if ref is None else ref()
    if plane is None:
        return None
    producer = producer_of(plane)
    if producer is None or producer.owner is not obj or producer.moved():
        return None
    if producer.layout is not None and _layout(obj) != producer.layout:
        return None  # its memory moved or was laid out anew since: a new plane over it as it is
    return plane


def _remember(obj: Any, plane: Any) -> Any:
    key = id(obj)

    def forget(ref: weakref.ref, key: int = key) -> None:
        if _planes.get(key) is ref:
            del _planes[key]

    _planes[key] = weakref.ref(plane, forget)
    return plane


def _host(owner: Any, iface: dict[str, Any], keep: Any) -> np.ndarray:
    return np.asarray(Producer(owner, keep, dict(iface)))


def _device(owner: Any, iface: dict[str, Any], device: int, keep: Any) -> DevicePlane:
    return DevicePlane(iface, device, Producer(owner, keep))


def _host_export(src: Any) -> tuple[dict[str, Any], Any]:
    """(the interface, what holds the memory) of a host DLPack array; NumPy reads it where it
    can (versioned DLPack says read-only), the capsule itself where NumPy lacks the dtype."""
    try:
        exported = np.from_dlpack(src)
    except (BufferError, RuntimeError, TypeError, ValueError):
        capsule = src.__dlpack__()
        return dlpack_interface(capsule)[0], capsule
    return exported.__array_interface__, exported


def _device_export(obj: Any, src: Any, device: int) -> Any:
    """The plane over a CUDA DLPack array: its CUDA array interface where it has one NumPy can
    read, else its capsule (whose own device decides where the memory is)."""
    try:
        iface = src.__cuda_array_interface__
        np.dtype(iface["typestr"])
    except (AttributeError, RuntimeError, TypeError, BufferError):
        capsule = src.__dlpack__()
        iface, device_type, device = dlpack_interface(capsule)
        return _host(obj, iface, capsule) if device_type in _DL_HOST else _device(obj, iface, device, capsule)
    return _device(obj, dict(iface), device, src)


def _where(api: str, name: str) -> str:
    return f"{api}: {name}"


def _export(obj: Any, api: str, name: str) -> Any:
    """A new plane over ``obj``'s memory."""
    src = obj.detach() if _requires_grad(obj) and callable(getattr(obj, "detach", None)) else obj
    dl_device = getattr(src, "__dlpack_device__", None)
    if dl_device is not None and hasattr(src, "__dlpack__"):
        device_type, device_id = (int(v) for v in dl_device())
        if device_type in _DL_HOST:
            return _host(obj, *_host_export(src))
        if device_type in _DL_CUDA:
            return _device_export(obj, src, device_id)
        where = _DL_NAMES.get(device_type, f"DLPack device type {device_type}")
        raise EagleValueError(
            f"{_where(api, name)} lives on {where}, and eagle runs planes in host memory "
            "and on CUDA GPUs: move it to one of them (x.cpu(), x.cuda())"
        )
    if hasattr(src, "__cuda_array_interface__"):
        return _device(obj, src.__cuda_array_interface__, gpu_ordinal(src), src)
    if hasattr(src, "__array_interface__"):
        exported = np.asarray(src)  # the interface's own memory: no copy
        return _host(obj, exported.__array_interface__, exported)
    try:
        exported = np.asarray(memoryview(src))  # bytearray, memoryview, a ctypes array
    except TypeError:
        raise EagleTypeError(
            f"{_where(api, name)} is a {type(obj).__name__}, not an array: pass a NumPy array "
            "(or any object with __array_interface__, DLPack or the buffer protocol)"
        ) from None
    return _host(obj, exported.__array_interface__, exported)


def as_plane(obj: Any, api: str, name: str, *, writes: bool = False) -> Any:
    """``obj`` as a node holds it: a NumPy array or a device array as it is (:func:`held`); any
    other array (a torch tensor, a JAX array, an object with DLPack, an array interface or the
    buffer protocol) as a NumPy array over the same memory, or a :class:`DevicePlane` for device
    memory, which keeps ``obj`` alive.  ``writes``: the node writes it, so it must be writable.

    The messages start with ``api`` and name the plane ``name``.

    :raises TypeError: ``obj`` is a number or no array.
    :raises ValueError: it lives on a device eagle does not run on, or it is written and cannot
        be (:func:`refuse_write`).

    >>> from eagle._foreign import as_plane
    >>> plane = as_plane(bytearray(16), "example", "buf")
    >>> plane.dtype, plane.shape
    (dtype('uint8'), (16,))
    """
    if held(obj):
        plane = obj
    elif is_value(obj):
        raise EagleTypeError(
            f"{_where(api, name)} is the number {obj!r}, a value copied where it is passed "
            "(a NumPy scalar too, e.g. a[5, 5]): pass an array, e.g. a one-cell a[5:6, 5]"
        )
    else:
        plane = _remembered(obj)
        if plane is None:
            plane = _remember(obj, _export(obj, api, name))
    if writes:
        refuse_write(plane, _where(api, name))
    return plane


def producer_of(plane: Any) -> Producer | None:
    """The :class:`Producer` of a plane :func:`as_plane` made (or of a view of one), else None."""
    if isinstance(plane, DevicePlane):
        return plane.producer
    base = getattr(plane, "base", None)
    for _ in range(_MAX_BASE_DEPTH):
        if base is None or isinstance(base, Producer):
            return base
        base = getattr(base, "base", None)
    return None


def refuse_write(plane: Any, where: str, written: str = "is written") -> None:
    """Refuse a write into ``plane``: a tensor autograd tracks, a JAX array, read-only memory.
    ``where`` starts the message (the API and the plane), ``written`` says how it is written.

    :raises ValueError: with the fix.
    """
    refuse_producer_write(producer_of(plane), where, written)
    # a NumPy array's flag, a DevicePlane's interface (CuPy's flags have no WRITEABLE)
    if not plane.flags.writeable if isinstance(plane, np.ndarray) else getattr(plane, "readonly", False):
        raise EagleValueError(
            f"{where} {written} but the array is read-only: pass a writable array (e.g. a.copy())"
        )


def refuse_producer_write(producer: Producer | None, where: str, written: str = "is written") -> None:
    """:func:`refuse_write`'s refusals that come from the owner of a plane's memory (None: the
    plane has none of another library)."""
    if producer is not None and producer.requires_grad():
        raise EagleValueError(
            f"{where} is {producer.what} that requires grad, and it {written}: torch allows "
            "no in-place write into a tensor autograd differentiates, and one eagle made would "
            "leave its gradient wrong; pass a tensor that does not require grad (t.detach() is "
            "the same memory; eagle's writes move its version counter, so a backward pass that "
            "saved its old values is refused)"
        )
    if producer is not None and producer.immutable:
        raise EagleValueError(
            f"{where} is a JAX array, and it {written}: JAX arrays are immutable (JAX may "
            "share one between computations), so eagle only reads them; write into a NumPy "
            "array or a torch tensor, and make a JAX array of it after the launch "
            "(jnp.asarray(out))"
        )
