"""The CUDA driver as eagle's Python layer uses it: devices, memory, modules.

Everything goes through libeagle (``eagle_cuda_*``), which opens the driver
at run time; nothing here imports CuPy.  Device arrays are anything with
``__cuda_array_interface__`` (CuPy, torch, Numba, a test's own).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import sys
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from eagle import _nvrtc
from eagle._arrays import on_device as on_device  # re-exported: where the device layers look for it
from eagle._core import check, ffi, lib
from eagle._driver_thread import pending as _pending  # noqa: F401 -- where the GPU tests watch deferred frees
from eagle._driver_thread import release
from eagle._errors import EagleTypeError, EagleValueError
from eagle._foreign import gpu_ordinal
from eagle._slots import address as address  # eagle._cuda.address: where callers look
from eagle._slots import slots

MEMORY = {int(lib.EAGLE_MEMORY_PAGEABLE): "pageable", int(lib.EAGLE_MEMORY_PINNED): "pinned",
          int(lib.EAGLE_MEMORY_DEVICE): "device"}


def open_device(device: int = 0, api: str = "eagle.Graph.build") -> int:
    """Open the driver on ``device`` (cheap once open); its version, 1000 * major + 10 * minor."""
    version = ffi.new("int *")
    check(lib.eagle_cuda_open(device, version), api)
    return int(version[0])


@functools.cache
def device_arch(device: int = 0) -> str:
    """``sm_<major><minor>`` of ``device``."""
    major, minor = ffi.new("int *"), ffi.new("int *")
    check(lib.eagle_cuda_device_arch(device, major, minor), "eagle.Graph.build")
    return f"sm_{major[0]}{minor[0]}"


def has_driver() -> bool:
    """Whether a CUDA driver and a device can be opened here."""
    return lib.eagle_cuda_open(0, ffi.NULL) == lib.EAGLE_OK


def device_of(array: Any) -> int:
    """The GPU ordinal a device array lives on (CuPy's and torch's say; others are on 0)."""
    return gpu_ordinal(array)


def memory_type(addr: int, device: int = 0) -> str:
    """``"device"``, ``"pinned"`` or ``"pageable"``: where the driver says ``addr`` lies."""
    out = ffi.new("int32_t *")
    check(lib.eagle_cuda_memory_type(device, addr, out), "eagle.Graph.build: asking the driver about memory")
    return MEMORY[int(out[0])]


def pinned_array(shape: int | tuple[int, ...], dtype: Any, device: int = 0) -> np.ndarray:
    """A zeroed NumPy array in page-locked memory from the driver; freed with the array."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    nbytes = max(count * dtype.itemsize, 1)
    host = ffi.new("void **")
    check(lib.eagle_cuda_host_alloc(device, nbytes, host), "eagle.pinned")
    pointer = host[0]
    buffer = ffi.buffer(pointer, nbytes)
    array = np.frombuffer(buffer, np.uint8, count * dtype.itemsize).view(dtype).reshape(shape)
    array[...] = 0
    # The buffer is the base of the array: free the memory when the last view goes.
    weakref.finalize(buffer, release, lib.eagle_cuda_host_free, device, pointer)
    return array


def memcpy(dst: int, src: int, nbytes: int, device: int = 0) -> None:
    """Copy ``nbytes`` between two addresses the driver knows (device, pinned or pageable host
    memory), synchronously: it waits for the legacy default stream, which eagle's replays are
    ordered with."""
    if nbytes:
        check(lib.eagle_cuda_memcpy(device, dst, src, nbytes), "eagle: copying device memory")


class Module:
    """A loaded CUDA module: its kernels by name."""

    def __init__(self, image: bytes, device: int) -> None:
        self.device = device
        self._image = image  # the driver reads it during the load only; kept for the error path
        handle = ffi.new("void **")
        check(lib.eagle_cuda_module_load(device, image, handle), "eagle.Graph.build: loading a module")
        self._handle = handle[0]
        self._functions: dict[str, Any] = {}

    def function(self, name: str) -> Any:
        found = self._functions.get(name)
        if found is None:
            out = ffi.new("void **")
            check(lib.eagle_cuda_module_function(self.device, self._handle, name.encode(), out),
                  f"eagle.Graph.build: kernel {name}")
            found = self._functions[name] = out[0]
        return found


_modules: dict[tuple[str, int], Module] = {}


def module(source: str, name: str, device: int = 0) -> Module:
    """CUDA C ``source`` compiled by NVRTC (cached on disk) and loaded on ``device`` (once a process):
    PTX, or a CUBIN where the driver is older than NVRTC."""
    key = (hashlib.sha256(source.encode()).hexdigest(), device)
    found = _modules.get(key)
    if found is None:
        driver = open_device(device)
        image = _nvrtc.image_for(source, name, driver, lambda: device_arch(device))
        found = _modules[key] = Module(image, device)
    return found


class DeviceBuffer:
    """Device memory eagle allocates for itself (reduction partials, loop counters), freed with it."""

    def __init__(self, device: int, nbytes: int) -> None:
        out = ffi.new("uint64_t *")
        check(lib.eagle_cuda_malloc(device, max(nbytes, 1), out), "eagle: allocating device memory")
        self.address, self.nbytes = int(out[0]), nbytes
        weakref.finalize(self, release, lib.eagle_cuda_free, device, self.address)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {"shape": (self.nbytes,), "typestr": "|u1", "data": (self.address, False), "version": 3}


class DeviceArray:
    """A C-contiguous device array of eagle's own, with ``__cuda_array_interface__``.

    What eagle allocates (a kernel's outputs, a builder's buffers) beside device
    arrays of a library it does not know; beside CuPy arrays it allocates CuPy
    arrays.  ``get()`` copies it to a NumPy array.
    """

    def __init__(self, shape: int | tuple[int, ...], dtype: Any = np.float64, device: int = 0) -> None:
        self.shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.device = device
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * self.dtype.itemsize
        self._buffer = DeviceBuffer(device, self.nbytes)
        #: The array whose memory this one is (:meth:`view`), else None: its own allocation.
        self.base: DeviceArray | None = None

    def view(self) -> DeviceArray:
        """A new array object on the same memory (as NumPy's ``view()``): the buffer plan gives
        each temporary its own object, so its own name and edges, on shared storage."""
        out = object.__new__(DeviceArray)
        out.__dict__.update(self.__dict__)
        out.base = self
        return out

    def reshape(self, *shape: int) -> DeviceArray:
        """The same memory in another shape, in C order, as NumPy's ``reshape`` of a contiguous
        array (one extent may be ``-1``): a flat plane of cells read as a 2-D Table, say."""
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if shape.count(-1) == 1 and known and self.size % known == 0:
            shape = tuple(self.size // known if s == -1 else s for s in shape)
        if shape.count(-1) or int(np.prod(shape, dtype=np.int64)) != self.size:
            raise EagleValueError(f"eagle.DeviceArray.reshape: {self.size} elements cannot take the shape "
                             f"{shape}; give extents whose product is {self.size} (one may be -1)")
        out = self.view()
        out.shape = tuple(int(s) for s in shape)
        return out

    @classmethod
    def from_host(cls, array: Any, device: int = 0) -> DeviceArray:
        """A device copy of ``array``."""
        host = np.asarray(array)
        out = cls(host.shape, host.dtype, device)
        out.set(host)
        return out

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self._buffer.address, False),
                "strides": None, "version": 3}

    def set(self, values: Any) -> None:
        """Copy ``values`` (broadcast to the array's shape) in."""
        host = np.ascontiguousarray(np.broadcast_to(np.asarray(values, self.dtype), self.shape))
        if self.nbytes:
            check(lib.eagle_cuda_memcpy(self.device, self._buffer.address, host.ctypes.data, self.nbytes),
                  "eagle.DeviceArray: copying to the device")

    def get(self) -> np.ndarray:
        """A NumPy copy (a synchronous copy: it waits for the legacy default stream, which eagle's
        replays are ordered with)."""
        out = np.empty(self.shape, self.dtype)
        if self.nbytes:
            check(lib.eagle_cuda_memcpy(self.device, out.ctypes.data, self._buffer.address, self.nbytes),
                  "eagle.DeviceArray.get")
        return out

    def __repr__(self) -> str:
        return f"eagle.DeviceArray(shape={self.shape}, dtype={self.dtype}, device={self.device})"


def empty_like_device(reference: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """A new device array on ``reference``'s GPU, of ``reference``'s library when eagle knows it."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(reference, cupy.ndarray):
        with cupy.cuda.Device(reference.device.id):
            return cupy.empty(shape, dtype)
    return DeviceArray(shape, dtype, device_of(reference))


def zeros_like_device(reference: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """:func:`empty_like_device`, zeroed."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(reference, cupy.ndarray):
        with cupy.cuda.Device(reference.device.id):
            return cupy.zeros(shape, dtype)
    return DeviceArray.from_host(np.zeros(shape, dtype), device_of(reference))


def device_copy_like(reference: Any, host: np.ndarray) -> Any:
    """A device array holding ``host``'s values, on ``reference``'s GPU and of its library when
    eagle knows it."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(reference, cupy.ndarray):
        with cupy.cuda.Device(reference.device.id):
            return cupy.asarray(host)
    return DeviceArray.from_host(host, device_of(reference))


def contiguous(array: Any) -> bool:
    """Whether a NumPy or device array is C-contiguous."""
    flags = getattr(array, "flags", None)
    if flags is not None:
        return bool(flags["C_CONTIGUOUS"])
    iface = array.__cuda_array_interface__
    strides = iface.get("strides")
    if strides is None:
        return True
    itemsize = np.dtype(iface["typestr"]).itemsize
    expected = []
    step = itemsize
    for extent in reversed(iface["shape"]):
        expected.append(step)
        step *= extent
    return all(s == e for s, e, n in zip(strides, reversed(expected), iface["shape"], strict=True) if n > 1)


class CaptureMemory:
    """What CuPy allocates while eagle captures a function: a pool of the graph's own, so no
    replay writes into memory CuPy has given to another array since (the captured kernels keep
    the addresses).  Lives as long as the graph."""

    def __init__(self) -> None:
        cupy = sys.modules.get("cupy")
        self.pool = None if cupy is None else cupy.cuda.MemoryPool()


@contextlib.contextmanager
def capturing_on(stream: int, memory: CaptureMemory) -> Iterator[None]:
    """Make CUDA stream ``stream`` the current one of CuPy and torch, where they are imported, and
    CuPy allocate from ``memory``'s pool."""
    with contextlib.ExitStack() as stack:
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            stack.enter_context(cupy.cuda.ExternalStream(stream))
            if memory.pool is not None:
                stack.enter_context(cupy.cuda.using_allocator(memory.pool.malloc))
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            stack.enter_context(torch.cuda.stream(torch.cuda.ExternalStream(stream)))
        yield


def stream_handle(stream: Any) -> int:
    """The CUstream of a CuPy, torch or Warp stream, or of an int handle; not the legacy default
    stream, which cannot be captured."""
    handle = None
    if isinstance(stream, (int, np.integer)):
        handle = int(stream)
    for attribute in ("ptr", "cuda_stream"):  # CuPy; torch and Warp
        found = getattr(stream, attribute, None)
        if handle is None and found is not None:
            handle = int(getattr(found, "value", found) or 0)
    if handle is None:
        raise EagleTypeError(f"eagle.graph.opaque: stream= takes a CuPy, torch or Warp stream or a CUstream "
                        f"handle (int), got {type(stream).__name__}")
    if handle in (0, 1, 2):  # NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD
        raise EagleValueError("eagle.graph.opaque: stream= is a default stream, which cannot be captured; "
                              "pass "
                         "a stream of your own (cupy.cuda.Stream(), torch.cuda.Stream()), or drop stream= "
                         "and launch on the current stream")
    return handle


def graph_handle(owner: Any) -> int:
    """The CUgraph of a torch.cuda.CUDAGraph (captured with keep_graph=True), a warp.Graph, or an
    int handle."""
    if isinstance(owner, (int, np.integer)):
        return int(owner)
    raw = getattr(owner, "raw_cuda_graph", None)  # torch
    if raw is not None:
        return int(raw())
    handle = getattr(owner, "graph", None)  # warp
    if handle is not None:
        return int(getattr(handle, "value", handle))
    raise EagleTypeError("eagle.graph.child: owner is a torch.cuda.CUDAGraph (keep_graph=True), a "
                         "warp.Graph "
                    f"or a CUgraph handle (int), got {type(owner).__name__}")


def launch(function: Any, grid: Sequence[int], block: Sequence[int], args: Sequence[Any], stream: int = 0,
           device: int = 0) -> None:
    """Launch a kernel of a loaded module on ``stream`` now (recorded instead while capturing)."""
    check(lib.eagle_cuda_launch(device, function, ffi.new("uint32_t[3]", list(grid)),
                                ffi.new("uint32_t[3]", list(block)), 0, stream,
                                slots(args, device=True, api="eagle._cuda.launch"), len(args)),
          "eagle._cuda.launch")
