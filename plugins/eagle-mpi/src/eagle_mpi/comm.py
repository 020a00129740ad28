"""MPIComm: an mpi4py communicator as libeagle's table of collectives."""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import time
from importlib.resources import files
from typing import Any, NoReturn

from mpi4py import MPI

from eagle.extend import EagleMemoryError, ffi, num_threads, set_num_threads
from eagle.native import Library, compile_library

# By eagle's dtype codes (EAGLE_F64, EAGLE_F32, EAGLE_I64, EAGLE_I32, EAGLE_U32, EAGLE_U8, EAGLE_U64),
# then EAGLE_SUM, EAGLE_MAX, EAGLE_MIN: the order of the shim's handles.
_TYPES = (MPI.DOUBLE, MPI.FLOAT, MPI.INT64_T, MPI.INT32_T, MPI.UINT32_T, MPI.UINT8_T, MPI.UINT64_T)
_OPS = (MPI.SUM, MPI.MAX, MPI.MIN)
#: Seconds between printing why a rank stops and MPI_Abort (see MPIComm.abort).
ABORT_GRACE_S = 0.5


@functools.cache
def _shim() -> Library:
    """The C shim, compiled once for this MPI's handle width (cached on disk across processes)."""
    source = files("eagle_mpi").joinpath("shim.c").read_text()
    width = MPI._sizeof(MPI.Comm)
    return Library(compile_library(source, name=f"eagle_mpi_shim{width}",
                                   extra_flags=(f"-DEAGLE_MPI_HANDLE_BYTES={width}",)))


@functools.cache
def _mpi_function(name: str) -> int:
    """The address of an MPI function in the library mpi4py loaded (its dependencies are searched)."""
    return ctypes.cast(getattr(ctypes.CDLL(MPI.__file__), name), ctypes.c_void_p).value


_TEAM_SIZED = False


def _share_the_cores(comm: MPI.Intracomm) -> None:
    """Give each rank on a machine its share of the cores, once per process.

    libeagle's team is sized to the cores this process may run on; with
    several ranks on one machine, every rank's team would spin on every core
    and a rank would wait in each collective for the others to be scheduled
    (measured here: 250 us a turn instead of 3).  ``EAGLE_NUM_THREADS``, when
    set, is left as it is.  A collective call: ranks make their first
    MPIComm together.
    """
    global _TEAM_SIZED
    if _TEAM_SIZED:
        return
    _TEAM_SIZED = True
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    ranks_here = local.Get_size()
    local.Free()
    if not os.environ.get("EAGLE_NUM_THREADS"):
        set_num_threads(max(1, num_threads() // ranks_here))


class MPIComm:
    """An mpi4py intracommunicator as an :class:`eagle.Communicator`.

    eagle makes one from ``eagle.Graph(comm=MPI.COMM_WORLD)``; it can also be
    made and passed directly.
    """

    def __init__(self, comm: MPI.Intracomm) -> None:
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        _share_the_cores(comm)
        shim = _shim()
        new = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                               ctypes.POINTER(ctypes.c_int64), ctypes.c_int32, ctypes.c_int32)(
            shim.address("eagle_mpi_new"))
        handles = (ctypes.c_int64 * 11)(*(MPI._handleof(h) for h in (comm, *_TYPES, *_OPS)))
        ctx = new(_mpi_function("MPI_Allreduce"), _mpi_function("MPI_Allgatherv"), handles, self.rank,
                  self.size)
        if not ctx:
            raise EagleMemoryError("eagle_mpi.MPIComm: out of memory")
        free = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(shim.address("eagle_mpi_free"))
        self._ctx = ffi.gc(ffi.cast("void *", ctx), lambda p: free(int(ffi.cast("uintptr_t", p))))
        self._table = ffi.new("eagle_collective *", {
            "ctx": self._ctx, "rank": self.rank, "size": self.size,
            "allreduce": ffi.cast("int (*)(void *, void *, int32_t, int32_t)",
                                  shim.address("eagle_mpi_allreduce")),
            "allgather": ffi.cast("int (*)(void *, const void *, void *, const int64_t *, int32_t)",
                                  shim.address("eagle_mpi_allgather"))})
        self._shim = shim  # the table's functions live in it

    def table(self) -> Any:
        return self._table

    def allgather(self, obj: Any) -> list[Any]:
        return self.comm.allgather(obj)

    def abort(self, message: str) -> NoReturn:
        """Print ``message`` and end every rank: the others may wait in a collective for this one."""
        print(f"eagle-mpi: {message}", file=sys.stderr, flush=True)
        # MPI_Abort kills every rank at once, and mpiexec drops what it has not yet forwarded
        # (MPICH's Hydra lost the message 1 run in 15): give the launcher time to pass it on.
        time.sleep(ABORT_GRACE_S)
        self.comm.Abort(1)
        raise SystemExit(1)  # not reached: Abort ends the process

    def __repr__(self) -> str:
        return f"<eagle_mpi.MPIComm rank {self.rank} of {self.size}>"
