"""A ``record=True`` graph on a GPU: the forward runs on the device, the reverse on host copies.

The build lays the recorded run out as it does over NumPy arrays (:mod:`eagle.diff.forward`),
over host *twins* of the device planes (:class:`Twins`): the same steps, snapshots, loop tapes
and trace.  Those items are then emitted into the CUDA graph instead of a host program: a
snapshot is a device copy into memory of its own, a loop keeps each turn's carried state in a
device tape of one slot per turn up to its cap, a choice reads its device cell; everything else
is the node's own GPU lowering.  After every launch the twins, the snapshots and the tapes are
copied home (:meth:`DeviceRun.read_back`), so the host holds what the same run over NumPy arrays
would have left, and the reverse pass runs on it unchanged: the same bits as on the CPU.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from eagle import extend
from eagle.diff import _native
from eagle.diff.forward import Run, RunChoice, RunLoop, Snap
from eagle.diff.steps import host_view
from eagle.extend import (
    EagleMemoryError,
    EagleValueError,
    GpuItems,
    GpuProgram,
    Node,
    Swap,
    memcpy,
    on_device,
)

#: A loop's tape on the device: ``turns`` slots of ``slot`` bytes; ``count`` is the turns saved.
SOURCE = r"""
extern "C" __global__ void eagle_diff_tape_reset(unsigned int *count) { count[0] = 0; }
extern "C" __global__ void eagle_diff_tape_claim(unsigned int *count) { count[0] += 1; }
/* One array's bytes into the slot of this turn (count[0], before the claim), at `offset`. */
extern "C" __global__ void eagle_diff_tape_put(unsigned char *tape, const unsigned int *count,
                                               const long long slot, const long long offset,
                                               const unsigned char *src, const long long nbytes)
{
    unsigned char *dst = tape + (long long)count[0] * slot + offset;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < nbytes;
         i += (long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}
"""

_THREADS = 256
_ONE = ((1, 1, 1), (1, 1, 1))


def _geometry(array: Any) -> tuple[int, tuple[int, ...], tuple[int, ...], np.dtype]:
    """(address of element 0, shape, byte strides, dtype) of a device array, from its interface."""
    iface = array.__cuda_array_interface__
    dtype, shape = np.dtype(iface["typestr"]), tuple(int(n) for n in iface["shape"])
    strides = iface.get("strides")
    if strides is None:
        strides, step = [], dtype.itemsize
        for n in reversed(shape):
            strides.insert(0, step)
            step *= max(n, 1)
    return int(iface["data"][0]), shape, tuple(int(s) for s in strides), dtype


def _extent(data: int, shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> tuple[int, int]:
    """The bytes [lo, hi) the elements lie in (empty for an array of no elements)."""
    if not all(shape):
        return data, data
    lo = data + sum(min(0, (n - 1) * s) for n, s in zip(shape, strides, strict=True))
    return lo, data + sum(max(0, (n - 1) * s) for n, s in zip(shape, strides, strict=True)) + itemsize


class Twins:
    """Host copies of the device memory a recorded graph's arrays lie in, laid out as on the
    device: each run of overlapping device extents is one host buffer, and the twin of a device
    array is the view of that buffer at the same offset, shape and strides.  Two twins share
    bytes exactly where their device arrays do, which is how the reverse pass tells places."""

    def __init__(self, arrays: Iterable[Any], device: int) -> None:
        self.device = device
        spans: list[list[int]] = []
        for lo, hi in sorted({self._extent(a) for a in arrays if on_device(a)}):
            if hi <= lo:
                continue
            if spans and lo < spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], hi)
            else:
                spans.append([lo, hi])
        self._spans = [(lo, hi, np.empty(hi - lo, np.uint8)) for lo, hi in spans]
        self._twins: dict[int, np.ndarray] = {}  # id(device array) -> its twin
        self._devices: dict[int, Any] = {}  # id(twin) -> its device array (kept alive: ids stay theirs)

    @staticmethod
    def _extent(array: Any) -> tuple[int, int]:
        data, shape, strides, dtype = _geometry(array)
        return _extent(data, shape, strides, dtype.itemsize)

    def swap(self, array: Any) -> Any:
        """A device array's twin, anything else itself: what replaces it in a host copy of a node."""
        return self.twin(array) if on_device(array) else array

    def view(self, array: Any) -> np.ndarray | None:
        """How a leaf of the host copy sees a plane: a device array as its twin."""
        return self.twin(array) if on_device(array) else host_view(array)

    def twin(self, array: Any, name: str = "") -> np.ndarray:
        """The twin of a device array.  One that shares no byte with the graph's arrays gets a
        host array of its own (no plane reads it); one that shares some but lies partly outside
        them is refused (``name``: what it is called, in the refusal)."""
        found = self._twins.get(id(array))
        if found is not None:
            return found
        data, shape, strides, dtype = _geometry(array)
        lo, hi = _extent(data, shape, strides, dtype.itemsize)
        twin = None
        for start, end, buffer in self._spans if lo < hi else ():  # an empty array holds no byte
            if start <= lo and hi <= end:
                twin = np.ndarray(shape, dtype, buffer=buffer, offset=data - start, strides=strides)
            elif lo < end and start < hi:
                raise EagleValueError(f"eagle.diff.reverse: {name or 'an array'} shares device memory with "
                                      "the "
                                 "graph's planes but reaches past the memory they lie in, which the run "
                                 "copied home; name the planes' own arrays (or views inside them)")
        if twin is None:
            twin = np.zeros(shape, dtype)
        self._twins[id(array)] = twin
        self._devices[id(twin)] = array
        return twin

    def device_of(self, array: np.ndarray) -> Any:
        """The device array a twin is of; a host array (pinned memory in a GPU graph) is its own."""
        return self._devices.get(id(array), array)

    def like(self, array: np.ndarray, values: np.ndarray) -> Any:
        """``values`` (a gradient) where ``array``, a twin, lives: a new device array of its
        device array's library; NumPy for a host array."""
        device = self.device_of(array)
        return extend.device_copy_like(device, values) if on_device(device) else values

    def read_back(self) -> None:
        for lo, hi, buffer in self._spans:
            memcpy(buffer.ctypes.data, lo, hi - lo, self.device)


def home(array: Any) -> Any:
    """A NumPy copy of a device array's values (a seed given on the device); anything else
    itself."""
    if not on_device(array):
        return array
    data, shape, strides, dtype = _geometry(array)
    lo, hi = _extent(data, shape, strides, dtype.itemsize)
    buffer = np.empty(max(hi - lo, 1), np.uint8)
    memcpy(buffer.ctypes.data, lo, hi - lo, extend.device_of(array))
    return np.array(np.ndarray(shape, dtype, buffer=buffer, offset=data - lo, strides=strides))


class DeviceTape:
    """A loop's turns on the device: one slot per turn, up to ``cap`` turns, of the bytes a host
    :class:`~eagle.diff._native.Tape` keeps per turn, in its layout; read into that tape."""

    def __init__(self, tape: _native.Tape, cap: int, label: str, reference: Any) -> None:
        self.tape, self.slot = tape, int(tape.header[_native.SLOT])
        if cap < 0:
            raise EagleValueError(f"eagle.Graph.build: the device loop {label!r} has no cap; on the GPU a "
                             "record=True graph keeps every turn's state in device memory allotted at "
                             "build, so each loop needs a most turns: give it one (in a builder, "
                             "for _ in range(N): if not cell: break; by hand, eagle.DeviceLoop(cell, kind, "
                             "N, body)), or build the graph over NumPy arrays")
        try:
            self.memory = extend.empty_like_device(reference, (max(cap * self.slot, 1),), np.uint8)
        except (MemoryError, extend.CoreError) as err:
            raise EagleMemoryError(f"eagle.Graph.build: the device loop {label!r} keeps up to {cap} turns of "
                              f"{self.slot} bytes for the reverse pass, which the device cannot allot "
                              f"({err}); lower its cap, or build the graph over NumPy arrays") from None
        self.count = extend.zeros_like_device(reference, (1,), np.uint32)

    def emit(self, gpu: GpuProgram, body: GpuProgram, state: Sequence[Any]) -> None:
        """Reset the count before the loop (in ``gpu``), and save ``state`` at the start of every
        turn (in ``body``)."""
        kernels = extend.cuda_module(SOURCE, "eagle_diff_tape", gpu.device)
        gpu.kernel(kernels.function("eagle_diff_tape_reset"), [self.count], *_ONE)
        offset = 0
        for array, size in zip(state, self.tape.sizes, strict=True):
            blocks = min(max(-(-size // _THREADS), 1), 65536)
            args = [self.memory, self.count, np.int64(self.slot), np.int64(offset), array, np.int64(size)]
            body.kernel(kernels.function("eagle_diff_tape_put"), args, (blocks, 1, 1), (_THREADS, 1, 1))
            offset += size
        body.kernel(kernels.function("eagle_diff_tape_claim"), [self.count], *_ONE)

    def read_back(self, device: int) -> None:
        count = np.zeros(1, np.uint32)
        memcpy(count.ctypes.data, _address(self.count), 4, device)
        turns = int(count[0])
        room = self.tape.room(turns)
        if room:
            memcpy(room, _address(self.memory), turns * self.slot, device)


def _address(array: Any) -> int:
    """Element 0 of a device array, or of a host one (pinned memory in a GPU graph)."""
    iface = getattr(array, "__cuda_array_interface__", None)
    return int(iface["data"][0]) if iface is not None else int(array.ctypes.data)


class DeviceRun:
    """What a recorded graph's launch leaves on the device for its reverse pass, and the copy of
    it home: the twins, the snapshots' device copies and the loops' device tapes."""

    def __init__(self, twins: Twins, original: dict[int, Node]) -> None:
        self.twins = twins
        #: id of each node of the host copy -> the graph's own node it is of
        self.original = original
        self._kept: dict[int, tuple[Any, np.ndarray]] = {}  # id(host snapshot) -> (its device copy, it)
        self._tapes: list[DeviceTape] = []

    def read_back(self) -> None:
        self.twins.read_back()
        device = self.twins.device
        for copy, kept in self._kept.values():
            memcpy(kept.ctypes.data, _address(copy), kept.nbytes, device)
        for tape in self._tapes:
            tape.read_back(device)

    # ------------------------------------------------------------ emitting
    def lowering(self, lowering: GpuItems, items: list[Any]) -> GpuItems:
        """A top-level node's GPU lowering with what is kept beside it (``items``).  A node that
        runs on the host at every launch (``eager=``, ``stream=``) takes its snapshots there, from
        a drained device: it is then host-synchronized (``eager_host``) whatever its tier."""
        if lowering.eager is None:
            return GpuItems(lambda gpu: self.emit(items, gpu))
        snaps = [item for item in items if isinstance(item, Snap)]
        pairs = [(self.twins.device_of(s.src), self._device_copy(s.src, s.dst)) for s in snaps]
        device = self.twins.device

        def call() -> None:
            for (src, dst), snap in zip(pairs, snaps, strict=True):
                memcpy(_address(dst), _address(src), snap.dst.nbytes, device)
            lowering.eager()

        return GpuItems(eager=call)

    def emit(self, items: list[Any], gpu: GpuProgram) -> None:
        """The recorded run's items (:mod:`eagle.diff.forward`), over twins, as GPU work."""
        for item in items:
            if isinstance(item, Snap):
                gpu.copy(self.twins.device_of(item.src), self._device_copy(item.src, item.dst))
            elif isinstance(item, Run):
                if isinstance(item.what, GpuItems):  # a top-level node's own GPU lowering
                    item.what.emit(gpu)
                else:  # a node of a body, in the host copy: the graph's own node
                    gpu.node(self.original.get(id(item.what), item.what))
            elif isinstance(item, RunChoice):
                arms = [self._body(arm, gpu) for arm in item.arms]
                cell = self.twins.device_of(item.cell)
                if item.kind == "if":
                    gpu.if_(cell, arms[0], arms[1])
                else:
                    gpu.switch(cell, dict(zip(item.keys, arms[:-1], strict=True)), arms[-1])
            else:
                self._loop(item, gpu)

    def _body(self, items: list[Any], gpu: GpuProgram) -> GpuProgram | None:
        if not items:
            return None
        body = gpu.body()
        self.emit(items, body)
        return body

    def _loop(self, item: RunLoop, gpu: GpuProgram) -> None:
        body = gpu.body()
        if item.tape is not None:
            state = [self.twins.device_of(a) for a in item.state]
            tape = DeviceTape(item.tape, item.cap, item.label, self.twins.device_of(item.cell))
            self._tapes.append(tape)
            tape.emit(gpu, body, state)
        self.emit(item.body, body)
        gpu.loop(self.twins.device_of(item.cell), body, item.kind, item.cap)

    def _device_copy(self, src: np.ndarray, kept: np.ndarray) -> Any:
        """The device memory a snapshot ``kept`` of ``src`` is taken into on the device."""
        if id(kept) not in self._kept:
            if not kept.flags.c_contiguous or not src.flags.c_contiguous:
                raise EagleValueError("eagle.Graph.build: a record=True graph on the GPU keeps a copy of a "
                                      "plane "
                                 f"({src.dtype} {src.shape} at strides {src.strides}) that is a strided "
                                 "view; a device copy moves contiguous memory: pass contiguous arrays")
            copy = extend.empty_like_device(self.twins.device_of(src), kept.shape, kept.dtype)
            self._kept[id(kept)] = (copy, kept)
        return self._kept[id(kept)][0]


def host_copies(nodes: Sequence[Node], twins: Twins) -> tuple[list[Node], dict[int, Node]]:
    """``nodes`` over the twins of their device arrays (a kind that cannot be re-pointed keeps
    its node, whose planes the leaf sees through :meth:`Twins.view`), and the map from the id of
    each node of the copies to the graph's own node it is of."""
    swap = Swap(twins.swap, refuse=lambda node, names: None)
    copies = [swap.node(node) for node in nodes]
    original = {}
    for node, copy in zip(nodes, copies, strict=True):
        for mine, theirs in zip(copy.walk(), node.walk(), strict=True):
            original[id(mine)] = theirs
    return copies, original


def device_arrays(nodes: Sequence[Node], more: Iterable[Any]) -> list[Any]:
    """Every device array the nodes hold (their planes, and whatever else their payloads pass to a
    kernel: what a re-pointing swap is asked about) and those of ``more``."""
    found: dict[int, Any] = {id(a): a for a in more if on_device(a)}

    def note(array: Any) -> Any:
        if on_device(array):
            found.setdefault(id(array), array)
        return array

    swap = Swap(note, refuse=lambda node, names: None)
    for node in nodes:
        swap.node(node)
        for inner in node.walk():
            for _, array, _ in inner.planes():
                note(array)
    return list(found.values())
