"""Compaction of finished samples: the live ones gathered to the front of every per-sample plane.

``eagle.simulate`` shrinks a stepping loop to its live samples: a stable partition of the first
``logical`` slots (live in ascending slot order, then the finished ones), applied in place to each
plane the step touches, and to ``origin``, the user's index of the sample in each slot.  When the
run ends the inverse permutation puts every plane back in the user's order.  Both are native: on
the host a libeagle program (the partition one serial pass, which defines the order; the gathers
cut into blocks over the team), on a GPU grid-stride kernels over a count held in a pinned cell
(the partition a thread per block of slots: counts, a scan of them, then each block's places).
A gather goes through one scratch buffer, a plane at a time, so the extra memory is one plane's.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from eagle import _cuda
from eagle._arrays import on_device
from eagle._core import check, lib
from eagle._program import Program
from eagle._views import plane_dtype
from eagle.native import Library, compile_library

_C = r"""
#include <string.h>
#include "eagle/eagle.h"

/* order[0, L) = the slots of terminated[0, L) (items of `size` bytes: 1 or 4) whose value is 0, in
 * ascending order, then the others in ascending order; cells[1] = how many are 0.  L = cells[0]. */
void eg_sim_order(int64_t begin, int64_t end, const eagle_arg *a)
{
    (void)begin;
    (void)end;
    const unsigned char *t8 = a[0].ptr;
    const uint32_t *t32 = a[0].ptr;
    const int four = a[1].i64 == 4;
    int64_t *order = a[2].ptr, *cells = a[3].ptr;
    const int64_t slots = cells[0];
    int64_t live = 0;
    for (int64_t i = 0; i < slots; ++i)
        if (!(four ? t32[i] : t8[i]))
            order[live++] = i;
    int64_t next = live;
    for (int64_t i = 0; i < slots; ++i)
        if (four ? t32[i] : t8[i])
            order[next++] = i;
    cells[1] = live;
}

/* order[origin[i]] = i: the slot each user index sits in (origin is a permutation). */
void eg_sim_invert(int64_t begin, int64_t end, const eagle_arg *a)
{
    const int64_t *origin = a[0].ptr;
    int64_t *order = a[1].ptr;
    for (int64_t i = begin; i < end; ++i)
        order[origin[i]] = i;
}

/* dst[r, i] = src[r, index[i]] (gather) or src[r, i] (index NULL: copy) for i < cells[0], in each
 * of the `rows` rows of (rows, n) planes of `size`-byte items. */
#define EG_MOVE(T)                                                                                 \
    for (int64_t r = 0; r < rows; ++r) {                                                           \
        const T *s = (const T *)src + r * n;                                                       \
        T *d = (T *)dst + r * n;                                                                   \
        if (!index)                                                                                \
            memcpy(d + begin, s + begin, (size_t)(stop - begin) * sizeof(T));                      \
        else                                                                                       \
            for (int64_t i = begin; i < stop; ++i)                                                 \
                d[i] = s[index[i]];                                                                \
    }

void eg_sim_move(int64_t begin, int64_t end, const eagle_arg *a)
{
    const char *src = a[0].ptr;
    char *dst = a[1].ptr;
    const int64_t *index = a[2].i64 ? a[3].ptr : NULL;
    const int64_t rows = a[4].i64, n = a[5].i64, size = a[6].i64;
    const int64_t slots = ((const int64_t *)a[7].ptr)[0];
    const int64_t stop = end < slots ? end : slots;
    if (begin >= stop)
        return;
    switch (size) {
    case 1:
        EG_MOVE(uint8_t)
        break;
    case 2:
        EG_MOVE(uint16_t)
        break;
    case 4:
        EG_MOVE(uint32_t)
        break;
    case 8:
        EG_MOVE(uint64_t)
        break;
    default:
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t i = begin; i < stop; ++i)
                memcpy(dst + (r * n + i) * size, src + (r * n + (index ? index[i] : i)) * size, (size_t)size);
    }
}
"""

_CUDA = r"""
__device__ static int eg_sim_done(const unsigned char *t, long long size, long long i)
{
    return size == 4 ? ((const unsigned int *)t)[i] != 0 : t[i] != 0;
}

/* The host's serial pass, cut into blocks of EG_SIM_BLOCK slots so that a thread per block does it:
 * counts[b] = the live slots of block b; then (one thread) each block's first live position; then
 * each block writes its live slots from there and its finished ones from live + (finished before
 * it), in slot order: the same order as the host's, whatever the grid. */
#define EG_SIM_BLOCK 1024

extern "C" __global__ void eg_sim_count(const unsigned char *t, const long long size, long long *counts,
                                        const long long *cells)
{
    const long long slots = cells[0], blocks = (slots + EG_SIM_BLOCK - 1) / EG_SIM_BLOCK;
    for (long long b = (long long)blockIdx.x * blockDim.x + threadIdx.x; b < blocks;
         b += (long long)gridDim.x * blockDim.x) {
        const long long end = (b + 1) * EG_SIM_BLOCK < slots ? (b + 1) * EG_SIM_BLOCK : slots;
        long long live = 0;
        for (long long i = b * EG_SIM_BLOCK; i < end; ++i)
            live += !eg_sim_done(t, size, i);
        counts[b] = live;
    }
}

extern "C" __global__ void eg_sim_scan(long long *counts, long long *cells)
{
    const long long blocks = (cells[0] + EG_SIM_BLOCK - 1) / EG_SIM_BLOCK;
    long long live = 0;
    for (long long b = 0; b < blocks; ++b) {
        const long long mine = counts[b];
        counts[b] = live;
        live += mine;
    }
    cells[1] = live;
}

extern "C" __global__ void eg_sim_place(const unsigned char *t, const long long size, long long *order,
                                        const long long *counts, const long long *cells)
{
    const long long slots = cells[0], live = cells[1], blocks = (slots + EG_SIM_BLOCK - 1) / EG_SIM_BLOCK;
    for (long long b = (long long)blockIdx.x * blockDim.x + threadIdx.x; b < blocks;
         b += (long long)gridDim.x * blockDim.x) {
        const long long end = (b + 1) * EG_SIM_BLOCK < slots ? (b + 1) * EG_SIM_BLOCK : slots;
        long long next_live = counts[b], next_done = live + b * EG_SIM_BLOCK - counts[b];
        for (long long i = b * EG_SIM_BLOCK; i < end; ++i)
            order[eg_sim_done(t, size, i) ? next_done++ : next_live++] = i;
    }
}

extern "C" __global__ void eg_sim_invert(const long long *origin, long long *order, const long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        order[origin[i]] = i;
}

template <typename T>
__device__ static void eg_sim_items(const T *src, T *dst, long long from, long long i, long long rows,
                                    long long n)
{
    for (long long r = 0; r < rows; ++r)
        dst[r * n + i] = src[r * n + from];
}

extern "C" __global__ void eg_sim_move(const char *src, char *dst, const long long gathered,
                                       const long long *index, const long long rows, const long long n,
                                       const long long size, const long long *cells)
{
    const long long slots = cells[0];
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < slots;
         i += (long long)gridDim.x * blockDim.x) {
        const long long from = gathered ? index[i] : i;
        switch (size) {
        case 1:
            eg_sim_items((const unsigned char *)src, (unsigned char *)dst, from, i, rows, n);
            break;
        case 2:
            eg_sim_items((const unsigned short *)src, (unsigned short *)dst, from, i, rows, n);
            break;
        case 4:
            eg_sim_items((const unsigned int *)src, (unsigned int *)dst, from, i, rows, n);
            break;
        case 8:
            eg_sim_items((const unsigned long long *)src, (unsigned long long *)dst, from, i, rows, n);
            break;
        default:
            for (long long r = 0; r < rows; ++r)
                for (long long b = 0; b < size; ++b)
                    dst[(r * n + i) * size + b] = src[(r * n + from) * size + b];
        }
    }
}
"""

#: Threads per block of the device kernels, and the most blocks a grid-stride launch takes.
_THREADS, _MOST_BLOCKS = 256, 1024
#: The slots one device thread partitions (EG_SIM_BLOCK).
_SIM_BLOCK = 1024


@functools.cache
def _library() -> Library:
    return Library(compile_library(_C, name="eagle_simulate"))


def _rows(array: Any, n: int) -> int:
    return int(np.prod(np.shape(array), dtype=np.int64)) // n


class Compactor:
    """The in-place permutation of a step's per-sample ``planes`` (``terminated`` among them).

    :meth:`compact` partitions the first ``slots`` slots, :meth:`restore` puts every plane back
    in the user's order; ``origin[slot]`` is the user's index of the sample in ``slot``.
    """

    def __init__(self, planes: Sequence[Any], terminated: Any) -> None:
        self.terminated = terminated
        self.n = int(np.shape(terminated)[0])
        self.device = _cuda.device_of(terminated) if on_device(terminated) else None
        self.compacted = False
        if self.device is None:
            self.origin = np.arange(self.n, dtype=np.int64)
            self._order = np.empty(self.n, np.int64)
            self._cells = np.zeros(2, np.int64)
        else:
            self.origin = _cuda.device_copy_like(terminated, np.arange(self.n, dtype=np.int64))
            self._order = _cuda.empty_like_device(terminated, (self.n,), np.int64)
            self._cells = _cuda.pinned_array((2,), np.int64, self.device)
            self._counts = _cuda.empty_like_device(terminated, (-(-self.n // _SIM_BLOCK),), np.int64)
        self.planes = [*planes, self.origin]
        #: the bytes one sample holds over all the planes: what a gather moves per slot
        self.bytes_per_sample = sum(plane_dtype(p).itemsize * _rows(p, self.n) for p in self.planes)
        biggest = max(plane_dtype(p).itemsize * _rows(p, self.n) for p in self.planes) * self.n
        self._scratch = (np.empty(biggest, np.uint8) if self.device is None else
                         _cuda.empty_like_device(terminated, (biggest,), np.uint8))
        self._programs: dict[str, Program] = {}
        #: what building a gather's host program costs (fixed_seconds measures it): the restore's
        self.setup_seconds = 0.0

    def compact(self, slots: int) -> int:
        """Gather the live samples of the first ``slots`` to the front, stably; return how many
        are live (the logical size to shrink to)."""
        self._cells[0] = slots
        self._run("compact")
        self.compacted = True
        return int(self._cells[1])

    def restore(self) -> None:
        """Every plane back in the user's order (``origin`` the identity again)."""
        if not self.compacted:
            return
        self._cells[0] = self.n
        self._run("restore")
        self.compacted = False

    def fixed_seconds(self) -> float:
        """The fixed cost of a gather, what it takes over no slots (the calls, the barriers, on a
        GPU the launches and the wait): the best of three, which moves nothing.  On the host, what
        the first took beyond it is building the gather's program: :attr:`setup_seconds`, what the
        restore's will cost too (the library both run, compiled or loaded once a process, is
        loaded before the clock starts)."""
        if self.device is None:
            _library()
        else:
            _cuda.module(_CUDA, "eagle_simulate", self.device)
        times = []
        for _ in range(3):
            self._cells[0] = 0
            start = time.perf_counter()
            self._run("compact")
            times.append(time.perf_counter() - start)
        if self.device is None:  # a GPU's restore launches the module's kernels: nothing to build
            self.setup_seconds = max(times[0] - min(times), 0.0)
        return min(times)

    def _run(self, which: str) -> None:
        if self.device is None:
            program = self._programs.get(which)
            if program is None:
                program = self._programs[which] = self._host_program(which == "compact")
            program.run()
        else:
            self._device_run(which == "compact")

    # ------------------------------------------------------------------------- on the host

    def _scratch_like(self, plane: np.ndarray) -> np.ndarray:
        return self._scratch[:plane.nbytes].view(plane.dtype).reshape(plane.shape)

    def _host_program(self, compacting: bool) -> Program:
        """[the order: the partition, or the inverse of origin] then, plane by plane, a gather into
        the scratch and a copy back: items in order, each over the slots in blocks."""
        kernels, n, order, cells = _library(), self.n, self._order, self._cells
        program = Program().stage()
        if compacting:
            t = self.terminated
            program.kernel(kernels.kernel("eg_sim_order"), [t, t.dtype.itemsize, order, cells], 1,
                           per_sample=False, accesses=[(t, "read"), (order, "write"), (cells, "readwrite")])
        else:
            program.kernel(kernels.kernel("eg_sim_invert"), [self.origin, order], n, per_sample=False,
                           accesses=[(self.origin, "read"), (order, "write")])
        move = kernels.kernel("eg_sim_move")
        for plane in self.planes:
            scratch, rows, size = self._scratch_like(plane), _rows(plane, n), plane.dtype.itemsize
            program.kernel(move, [plane, scratch, 1, order, rows, n, size, cells], n, per_sample=False,
                           accesses=[(plane, "read"), (order, "read"), (cells, "read"), (scratch, "write")])
            program.kernel(move, [scratch, plane, 0, order, rows, n, size, cells], n, per_sample=False,
                           accesses=[(scratch, "read"), (cells, "read"), (plane, "write")])
        return program.finalize()

    # ------------------------------------------------------------------------- on a GPU

    def _device_run(self, compacting: bool) -> None:
        module = _cuda.module(_CUDA, "eagle_simulate", self.device)
        n, order, cells = self.n, self._order, self._cells
        grid = (min(_MOST_BLOCKS, -(-n // _THREADS)), 1, 1)
        block = (_THREADS, 1, 1)

        def launch(name: str, g: tuple[int, int, int], b: tuple[int, int, int], args: list[Any]) -> None:
            _cuda.launch(module.function(name), g, b, args, device=self.device)

        if compacting:
            t, size = self.terminated, np.int64(plane_dtype(self.terminated).itemsize)
            per_block = (min(_MOST_BLOCKS, -(-self._counts.size // _THREADS)), 1, 1)
            launch("eg_sim_count", per_block, block, [t, size, self._counts, cells])
            launch("eg_sim_scan", (1, 1, 1), (1, 1, 1), [self._counts, cells])
            launch("eg_sim_place", per_block, block, [t, size, order, self._counts, cells])
        else:
            launch("eg_sim_invert", grid, block, [self.origin, order, np.int64(n)])
        for plane in self.planes:
            shape = (np.int64(_rows(plane, n)), np.int64(n), np.int64(plane_dtype(plane).itemsize))
            launch("eg_sim_move", grid, block, [plane, self._scratch, np.int64(1), order, *shape, cells])
            launch("eg_sim_move", grid, block, [self._scratch, plane, np.int64(0), order, *shape, cells])
        check(lib.eagle_cuda_synchronize(self.device), "eagle.simulate: compacting")


@functools.cache
def copy_seconds_per_byte(device: int | None = None) -> float:
    """A one-off calibration: the seconds per byte of a 4 MiB copy on the host (``device`` None) or
    within GPU ``device``, the best of five, which predicts a gather's cost before the first one is
    measured."""
    nbytes, best = 1 << 22, float("inf")
    if device is None:
        src, dst = np.ones(nbytes, np.uint8), np.empty(nbytes, np.uint8)
        copy = functools.partial(np.copyto, dst, src)
    else:
        src, dst = _cuda.DeviceArray(nbytes, np.uint8, device), _cuda.DeviceArray(nbytes, np.uint8, device)

        def copy() -> None:
            check(lib.eagle_cuda_memcpy(device, _cuda.address(dst), _cuda.address(src), nbytes),
                  "eagle.simulate: calibrating the gather")
    for _ in range(5):
        start = time.perf_counter()
        copy()
        best = min(best, time.perf_counter() - start)
    return best / nbytes
