"""What tests hold eagle to: the reference interpreter, ranks as threads, and stand-ins for
other libraries' arrays.

:func:`interpret` runs a recorded graph node by node in NumPy: the meaning
every lowering (host program, GPU graph, any thread count) must reproduce
bit for bit; :func:`fixed_order` is eagle's one order of a reduction.

:func:`run_ranks` runs ``fn(comm)`` on ``size`` threads at once, each with an
:class:`eagle.Communicator` whose collectives meet the other threads'.  The
graphs built with ``eagle.Graph(comm=comm)`` behave as they do under
``mpiexec -n size`` (eagle-mpi), so a test can compare them with the
one-process run; only the speed differs.

:class:`DLPackOnly` and :class:`InterfaceOnly` are arrays that speak one protocol alone, as a
torch tensor or a library's own array does to eagle: a kind, or a test, takes them where it
takes such arrays, with no framework installed.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import numpy as np

from eagle._core import ffi
from eagle._errors import EagleRuntimeError
from eagle._fixed_order import fixed_order as fixed_order
from eagle._program import DTYPES
from eagle._reference import Interpreter as Interpreter
from eagle._reference import check as check
from eagle._reference import interpret as interpret

T = TypeVar("T")

_NUMPY = {code: dtype for dtype, code in DTYPES.items() if dtype != np.dtype(np.bool_)}
_REDUCE = {0: np.add, 1: np.maximum, 2: np.minimum}  # EAGLE_SUM, EAGLE_MAX, EAGLE_MIN


class _Stopped(EagleRuntimeError):
    """A rank's exchange was cut short because another rank failed."""


class _Hub:
    """Where the threads of one run_ranks meet: exchange k completes when every rank gave its value."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.cond = threading.Condition()
        self.rounds: dict[int, dict[int, Any]] = {}  # exchange number -> rank -> value
        self.left: dict[int, int] = {}  # exchange number -> ranks that have not read it yet
        self.stopped = False

    def exchange(self, rank: int, round_: int, value: Any) -> list[Any]:
        with self.cond:
            slots = self.rounds.setdefault(round_, {})
            slots[rank] = value
            self.cond.notify_all()
            while len(slots) < self.size:
                if self.stopped:
                    raise _Stopped("eagle.testing: another rank stopped")
                self.cond.wait()
            self.left[round_] = self.left.get(round_, self.size) - 1
            if not self.left[round_]:
                del self.rounds[round_], self.left[round_]
            return [slots[r] for r in range(self.size)]

    def stop(self) -> None:
        """Wake every rank waiting in an exchange that can no longer complete."""
        with self.cond:
            self.stopped = True
            self.cond.notify_all()


class ThreadComm:
    """Rank ``rank`` of a :func:`run_ranks`: an eagle.Communicator over threads."""

    def __init__(self, hub: _Hub, rank: int) -> None:
        self.hub, self.rank, self.size = hub, rank, hub.size
        self._round = 0  # collectives are called in one order on every rank: numbered alike
        self._handle = ffi.new_handle(self)
        self._table = ffi.new("eagle_collective *", {
            "ctx": self._handle, "rank": rank, "size": hub.size,
            "allreduce": _allreduce, "allgather": _allgather})

    def table(self) -> Any:
        return self._table

    def exchange(self, value: Any) -> list[Any]:
        self._round += 1
        return self.hub.exchange(self.rank, self._round, value)

    def allgather(self, obj: Any) -> list[Any]:
        return self.exchange(obj)

    def abort(self, message: str) -> NoReturn:
        self.hub.stop()  # every rank waiting in a collective wakes with an error
        raise EagleRuntimeError(message)


def _unless_stopped(kind: type[BaseException], error: BaseException, tb: Any) -> None:
    # A collective cut short by another rank's failure returns 1 quietly; anything else is a bug here.
    if not isinstance(error, _Stopped):
        traceback.print_exception(kind, error, tb)


@ffi.callback("int(void *, void *, int32_t, int32_t)", error=1, onerror=_unless_stopped)
def _allreduce(ctx: Any, value: Any, dtype: int, op: int) -> int:
    comm: ThreadComm = ffi.from_handle(ctx)
    kind = _NUMPY[dtype]
    cell = np.frombuffer(ffi.buffer(value, kind.itemsize), kind)
    everyone = np.array(comm.exchange(cell[0]), kind)
    cell[0] = _REDUCE[op].reduce(everyone)  # unsigned sums wrap, as MPI's do
    return 0


@ffi.callback("int(void *, const void *, void *, const int64_t *, int32_t)", error=1, onerror=_unless_stopped)
def _allgather(ctx: Any, mine: Any, out: Any, counts: Any, dtype: int) -> int:
    comm: ThreadComm = ffi.from_handle(ctx)
    size = _NUMPY[dtype].itemsize
    parts = comm.exchange(bytes(ffi.buffer(mine, counts[comm.rank] * size)))
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
            hub.stop()  # the other ranks must not wait for this one

    threads = [threading.Thread(target=rank_main, args=(r,), name=f"eagle-rank-{r}") for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = [e for e in errors if e is not None]
    if failed:
        raise next((e for e in failed if not isinstance(e, _Stopped)), failed[0])
    return results


class DLPackOnly:
    """A NumPy array seen through DLPack alone (``__dlpack__``, ``__dlpack_device__``), as eagle
    sees a torch CPU tensor; ``device``: the ``(DLPack device type, id)`` it claims instead of its
    array's own (a device eagle does not run on, say).

    >>> x = eagle.testing.DLPackOnly(np.arange(3.0))
    >>> hasattr(x, "__array_interface__"), eagle.interop.import_buffer(x)
    (False, array([0., 1., 2.]))
    """

    def __init__(self, array: np.ndarray, device: tuple[int, int] | None = None) -> None:
        self.array = array
        self.device = device

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.array.__dlpack_device__() if self.device is None else self.device


class InterfaceOnly:
    """A NumPy array seen through ``__array_interface__`` alone, as a library's own host array is.

    >>> x = eagle.testing.InterfaceOnly(np.arange(3.0))
    >>> hasattr(x, "__dlpack__"), eagle.interop.import_buffer(x)
    (False, array([0., 1., 2.]))
    """

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    @property
    def __array_interface__(self) -> dict[str, Any]:
        return self.array.__array_interface__
