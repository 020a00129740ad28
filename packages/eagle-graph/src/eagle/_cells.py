"""Index cells and row moves: what a builder's counted loop needs to give its body the turn.

A counted device loop that reads its index keeps it in a one-cell int32
array: set to 0 before the loop and advanced at the end of every turn by a
:class:`CellAffine` node (``dst = m * src + k``, which also computes ``i + 1``
or ``2 * i`` in the body).  A loop over the rows of a stacked array moves row
``index[0]`` into a plane of its own at the start of the turn, or a plane into
that row, by a :class:`RowMove` node.  Both are small native kernels on the
CPU (compiled once, like a plugin's) and CUDA kernels in a GPU graph, so the
loop stays one device loop, with no host round trip per turn.

Integer arithmetic wraps in 32 bits, as hawk's does.  A row index outside
the table moves nothing: the builder bounds every loop that moves rows by
the rows there are, so a recorded graph never asks for one.  A loop counted
by a cell is preceded by a :class:`TurnCheck`, which raises ``IndexError``
at every launch whose count asks for more turns than the tables have rows:
on the CPU a native comparison, with a Python step that raises under a device
if (the launch stops before the loop); on a GPU a host node, whose error the
launch's wait raises (the loop has then run, capped at the rows).

>>> from eagle.graph import Node
>>> table, i, row = np.arange(6.0).reshape(3, 2), np.array([2], np.int32), np.zeros(2)
>>> g = eagle.Graph().add_node(Node("row_move", RowMove(table, i, row, put=False))).build().launch()
>>> row
array([4., 5.])
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from eagle import _cuda
from eagle._errors import EagleIndexError, EagleValueError
from eagle._flows import CopyFlow, RowFlow
from eagle._kinds import GpuItems, HostItems, NativeCall, register_node_kind
from eagle.native import Library, compile_library

_C = r"""
#include <string.h>
#include "eagle/eagle.h"

/* dst[0] = m * src[0] + k in 32-bit two's complement. */
void eg_cell_affine(int64_t begin, int64_t end, const eagle_arg *a)
{
    (void)begin;
    (void)end;
    const int32_t *src = a[0].ptr;
    int32_t *dst = a[1].ptr;
    dst[0] = (int32_t)((uint32_t)a[2].i64 * (uint32_t)src[0] + (uint32_t)a[3].i64);
}

/* Bytes [begin, end) of row index[0] of a table of `rows` rows, `stride` bytes apart: out of it
 * (put = 0) or into it (put = 1). */
void eg_row_move(int64_t begin, int64_t end, const eagle_arg *a)
{
    char *table = a[0].ptr, *row = a[2].ptr;
    const int64_t t = ((const int32_t *)a[1].ptr)[0], rows = a[3].i64, stride = a[4].i64;
    if (t < 0 || t >= rows)
        return;
    if (a[5].i64)
        memcpy(table + t * stride + begin, row + begin, (size_t)(end - begin));
    else
        memcpy(row + begin, table + t * stride + begin, (size_t)(end - begin));
}

/* checked[0] = count[0]; past[0] = whether it is more than `rows` (uint32 cells). */
void eg_turn_check(int64_t begin, int64_t end, const eagle_arg *a)
{
    (void)begin;
    (void)end;
    const uint32_t turns = ((const uint32_t *)a[0].ptr)[0];
    ((uint32_t *)a[1].ptr)[0] = turns;
    ((uint32_t *)a[3].ptr)[0] = (int64_t)turns > a[2].i64;
}
"""

_CUDA = r"""
extern "C" __global__ void eg_cell_affine(const int *src, int *dst, const long long m, const long long k)
{
    dst[0] = (int)((unsigned int)m * (unsigned int)src[0] + (unsigned int)k);
}

extern "C" __global__ void eg_row_move(char *table, const int *index, char *row, const long long rows,
                                       const long long stride, const long long put, const long long n)
{
    const long long t = index[0];
    if (t < 0 || t >= rows)
        return;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        if (put)
            table[t * stride + i] = row[i];
        else
            row[i] = table[t * stride + i];
    }
}
"""

_THREADS = 256


@functools.cache
def _library() -> Library:
    return Library(compile_library(_C, name="eagle_cells"))


def _function(device: int, name: str) -> Any:
    return _cuda.module(_CUDA, "eagle_cells", device).function(name)


@dataclass(frozen=True, eq=False)
class CellAffine:
    """``dst[0] = m * src[0] + k`` (int32 cells, wrapping) at every replay."""

    src: Any
    dst: Any
    m: int
    k: int

    @property
    def label(self) -> str:
        if self.m == 0:
            return f"index = {self.k}"
        if self.src is self.dst:
            return f"index {'+' if self.k >= 0 else '-'} {abs(self.k)}"
        scaled = {1: "i", -1: "-i"}.get(self.m, f"{self.m}·i")
        return scaled if self.k == 0 else f"{scaled} {'+' if self.k > 0 else '-'} {abs(self.k)}"


@dataclass(frozen=True, eq=False)
class RowMove:
    """``row = table[index[0]]`` (``put=False``) or ``table[index[0]] = row`` at every replay."""

    table: Any
    index: Any
    row: Any
    put: bool

    def __post_init__(self) -> None:
        if tuple(self.table.shape[1:]) != tuple(self.row.shape) or self.table.dtype != self.row.dtype:
            raise EagleValueError(f"eagle.RowMove: a row of a {self.table.dtype} table of shape "
                             f"{tuple(self.table.shape)} is {tuple(self.table.shape[1:])}; got a "
                             f"{self.row.dtype} plane of shape {tuple(self.row.shape)}")

    @property
    def rows(self) -> int:
        return int(self.table.shape[0])

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.row.shape, dtype=np.int64)) * self.row.dtype.itemsize


def _affine_planes(p: CellAffine, reading: bool) -> list[tuple[str, Any, str]]:
    if reading:
        return [] if p.src is p.dst else [("src", p.src, "read")]
    return [("dst", p.dst, "readwrite" if p.src is p.dst else "write")]


def _affine_reference(p: CellAffine, interpreter: Any) -> None:
    value = (p.m * int(np.asarray(p.src).reshape(-1)[0]) + p.k) & 0xFFFFFFFF
    p.dst[0] = value - (1 << 32) if value >= 1 << 31 else value


register_node_kind(
    "cell_affine", reads=lambda p: _affine_planes(p, True), writes=lambda p: _affine_planes(p, False),
    native=lambda p: [NativeCall(_library().kernel("eg_cell_affine"), [p.src, p.dst, p.m, p.k], 1,
                                 accesses=[(p.src, "read"), (p.dst, "write")])],
    lower_gpu=lambda p: GpuItems(lambda gpu: gpu.kernel(_function(gpu.device, "eg_cell_affine"),
                                                        [p.src, p.dst, np.int64(p.m), np.int64(p.k)],
                                                        (1, 1, 1), (1, 1, 1))),
    reference=_affine_reference, label=lambda p: p.label,
    samples=lambda p: 1,
    rebuild=lambda p, swap: CellAffine(swap(p.src), swap(p.dst), p.m, p.k))


def _move_reads(p: RowMove) -> list[tuple[str, Any, str]]:
    return [("index", p.index, "read"), ("row" if p.put else "table", p.row if p.put else p.table, "read")]


def _move_writes(p: RowMove) -> list[tuple[str, Any, str]]:
    return [("table", p.table, "readwrite")] if p.put else [("row", p.row, "write")]


def _move_args(p: RowMove) -> list[Any]:
    return [p.table, p.index, p.row, p.rows, p.nbytes, int(p.put)]


def _move_gpu(p: RowMove) -> GpuItems:
    def emit(gpu: Any) -> None:
        blocks = max(1, min(-(-p.nbytes // _THREADS), 1024))
        args = _move_args(p)
        gpu.kernel(_function(gpu.device, "eg_row_move"), [*args[:3], *map(np.int64, [*args[3:], p.nbytes])],
                   (blocks, 1, 1), (_THREADS, 1, 1))
    return GpuItems(emit)


def _move_reference(p: RowMove, interpreter: Any) -> None:
    t = int(np.asarray(p.index).reshape(-1)[0])
    if 0 <= t < p.rows:
        np.copyto(p.table[t], p.row) if p.put else np.copyto(p.row, p.table[t])


def _move_label(p: RowMove) -> str:
    return "put row" if p.put else "take row"


register_node_kind(
    "row_move", reads=_move_reads, writes=_move_writes,
    native=lambda p: [NativeCall(_library().kernel("eg_row_move"), _move_args(p), p.nbytes,
                                 accesses=[(p.index, "read"), (p.table, "readwrite" if p.put else "read"),
                                           (p.row, "read" if p.put else "write")])],
    lower_gpu=_move_gpu, reference=_move_reference, label=_move_label,
    flow=lambda p: RowFlow(p.table, p.index, p.row, p.put),
    rebuild=lambda p, swap: RowMove(swap(p.table), swap(p.index), swap(p.row), p.put))



@dataclass(frozen=True, eq=False)
class TurnCheck:
    """``checked[0] = count[0]`` at every replay, after raising ``IndexError`` when it asks for
    more turns than each of ``tables`` has rows: what a Python loop over the rows would raise,
    instead of fewer turns.  The loop counts over ``checked``, so it runs after the check.
    ``names``: the tables' names in the message; ``where`` and ``count_text``: the loop's
    ``function:line`` and its ``range(...)`` argument, as written."""

    count: Any
    checked: Any
    tables: tuple[Any, ...]
    names: tuple[str, ...]
    where: str
    count_text: str

    def check(self, cell: Any) -> None:
        turns = int(np.asarray(cell).reshape(-1)[0])
        short = [(name, int(t.shape[0])) for name, t in zip(self.names, self.tables, strict=True)
                 if t.shape[0] < turns]
        if short:
            shown = ", ".join(f"{name} has {n} rows" for name, n in short)
            raise EagleIndexError(f"eagle.Graph.builder: {self.where}: range({self.count_text}) asks for "
                                  f"{turns} "
                             f"turns, {shown}: set {self.count_text} to at most {min(n for _, n in short)}, "
                             f"or pass arrays of {turns} rows")

    @property
    def rows(self) -> int:
        return min(int(t.shape[0]) for t in self.tables)

    def run(self) -> None:
        self.check(self.count)
        np.copyto(self.checked, self.count)


def _check_cpu(p: TurnCheck) -> HostItems:
    """A native copy and comparison, and Python only when the count is past the rows."""
    past = np.zeros(1, np.uint32)

    def emit(program: Any) -> None:
        program.kernel(_library().kernel("eg_turn_check"), [p.count, p.checked, p.rows, past], 1,
                       per_sample=False, accesses=[(p.count, "read"), (p.checked, "write"), (past, "write")])
        raising = program.body()
        raising.callback(lambda: p.check(p.count))
        program.if_(past, raising)
    return HostItems(emit, native=False)


def _check_gpu(p: TurnCheck) -> GpuItems:
    def emit(gpu: Any) -> None:
        if gpu.in_body:  # CUDA has no host function in a conditional body: refuse, never truncate
            raise EagleValueError(f"eagle.Graph.build: {p.where}: for ... in range({p.count_text}) over the "
                                  "rows "
                             f"of {', '.join(p.names)} is inside a device if or loop body, where a GPU graph "
                             f"cannot check {p.count_text} against the rows: make {p.count_text} a Python "
                             "number, or move the loop to the top level of the builder")
        # through the host: the loop's count is the one the host node checked
        stage = _cuda.pinned_array((1,), p.count.dtype, gpu.device)
        gpu.copy(p.count, stage)
        gpu.callback(lambda: p.check(stage), touches=[stage])
        gpu.copy(stage, p.checked)
    return GpuItems(emit)


register_node_kind(
    "turn_check", reads=lambda p: [("count", p.count, "read")],
    writes=lambda p: [("checked", p.checked, "write")],
    lower_cpu=_check_cpu, lower_gpu=_check_gpu, reference=lambda p, interpreter: p.run(),
    label=lambda p: "check turns", flow=lambda p: CopyFlow(p.count, p.checked), samples=lambda p: 1,
    rebuild=lambda p, swap: TurnCheck(swap(p.count), swap(p.checked), tuple(map(swap, p.tables)), p.names,
                                      p.where, p.count_text))
