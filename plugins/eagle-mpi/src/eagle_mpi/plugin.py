"""The entry point eagle loads: mpi4py communicators become eagle Communicators."""

from __future__ import annotations

import sys
from typing import Any

from eagle.hookspecs import hookimpl


@hookimpl
def eagle_communicator(comm: object) -> Any:
    """An :class:`eagle_mpi.MPIComm` for an ``mpi4py.MPI.Intracomm``; None for anything else."""
    mpi = _mpi_if_loaded()
    if mpi is None or not isinstance(comm, mpi.Intracomm):
        return None
    from eagle_mpi.comm import MPIComm

    return MPIComm(comm)


def _mpi_if_loaded() -> Any:
    # A communicator of mpi4py exists only once mpi4py.MPI is imported: asking
    # never imports it (importing it starts MPI).
    return sys.modules.get("mpi4py.MPI")
