"""Ranks as threads: try a sharded graph in one process, without MPI.

:func:`run_ranks` runs ``fn(comm)`` on ``size`` threads at once, each with an
:class:`eagle.Communicator` whose collectives meet the other threads'.  The
graphs built with ``eagle.Graph(comm=comm)`` behave as they do under
``mpiexec -n size`` (eagle-mpi), so a test can compare them with the
one-process run; only the speed differs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import numpy as np

from eagle._core import ffi
from eagle._program import DTYPES

T = TypeVar("T")

_NUMPY = {code: dtype for dtype, code in DTYPES.items() if dtype != np.dtype(np.bool_)}
_REDUCE = {0: np.add, 1: np.maximum, 2: np.minimum}  # EAGLE_SUM, EAGLE_MAX, EAGLE_MIN


class _Hub:
    """Where the threads of one run_ranks meet."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.barrier = threading.Barrier(size)
        self.slots: list[Any] = [None] * size

    def exchange(self, rank: int, value: Any) -> list[Any]:
        self.slots[rank] = value
        self.barrier.wait()
        everyone = list(self.slots)
        self.barrier.wait()  # nobody writes the next exchange before all have read this one
        return everyone


class ThreadComm:
    """Rank ``rank`` of a :func:`run_ranks`: an eagle.Communicator over threads."""

    def __init__(self, hub: _Hub, rank: int) -> None:
        self.hub, self.rank, self.size = hub, rank, hub.size
        self._handle = ffi.new_handle(self)
        self._table = ffi.new("eagle_collective *", {
            "ctx": self._handle, "rank": rank, "size": hub.size,
            "allreduce": _allreduce, "allgather": _allgather})

    def table(self) -> Any:
        return self._table

    def allgather(self, obj: Any) -> list[Any]:
        return self.hub.exchange(self.rank, obj)

    def abort(self, message: str) -> NoReturn:
        self.hub.barrier.abort()  # every rank waiting in a collective wakes with an error
        raise RuntimeError(message)


@ffi.callback("int(void *, void *, int32_t, int32_t)", error=1)
def _allreduce(ctx: Any, value: Any, dtype: int, op: int) -> int:
    comm: ThreadComm = ffi.from_handle(ctx)
    kind = _NUMPY[dtype]
    cell = np.frombuffer(ffi.buffer(value, kind.itemsize), kind)
    everyone = np.array(comm.hub.exchange(comm.rank, cell[0]), kind)
    cell[0] = _REDUCE[op].reduce(everyone)  # unsigned sums wrap, as MPI's do
    return 0


@ffi.callback("int(void *, const void *, void *, const int64_t *, int32_t)", error=1)
def _allgather(ctx: Any, mine: Any, out: Any, counts: Any, dtype: int) -> int:
    comm: ThreadComm = ffi.from_handle(ctx)
    size = _NUMPY[dtype].itemsize
    parts = comm.hub.exchange(comm.rank, bytes(ffi.buffer(mine, counts[comm.rank] * size)))
    joined = b"".join(parts)
    ffi.memmove(out, joined, len(joined))
    return 0


def run_ranks(size: int, fn: Callable[[ThreadComm], T]) -> list[T]:
    """``fn(comm)`` on ``size`` threads, one per rank; their results in rank order.

    An exception on any rank is raised here (the lowest rank's first), after
    every thread has ended.

    >>> from eagle.testing import run_ranks
    >>> run_ranks(3, lambda comm: comm.allgather(comm.rank * 10))
    [[0, 10, 20], [0, 10, 20], [0, 10, 20]]
    """
    hub = _Hub(size)
    results: list[Any] = [None] * size
    errors: list[BaseException | None] = [None] * size

    def rank_main(rank: int) -> None:
        try:
            results[rank] = fn(ThreadComm(hub, rank))
        except BaseException as exc:  # noqa: BLE001 -- raised again in the caller's thread
            errors[rank] = exc
            hub.barrier.abort()  # the other ranks must not wait for this one

    threads = [threading.Thread(target=rank_main, args=(r,), name=f"eagle-rank-{r}") for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = [e for e in errors if e is not None and not isinstance(e, threading.BrokenBarrierError)]
    if failed or any(errors):
        raise (failed or [e for e in errors if e is not None])[0]
    return results
