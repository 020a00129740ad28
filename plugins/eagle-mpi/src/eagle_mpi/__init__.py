"""eagle-mpi: one eagle graph over a sample batch sharded across MPI ranks.

Every rank runs the same graph over its ``eagle.shard`` of the samples;
``eagle.Graph(comm=MPI.COMM_WORLD)`` makes every cross-sample reduction a
collective, and the results are those of one process holding the whole
batch, bit for bit::

    from mpi4py import MPI
    part = eagle.shard(n, MPI.COMM_WORLD.rank, MPI.COMM_WORLD.size)
    g = step(x[..., part], v[..., part], comm=MPI.COMM_WORLD)   # a builder: eagle.Graph(comm=comm)
    g(100)

The collectives run natively inside the replay (no Python, no GIL): a small
C shim, compiled once per machine, calls the MPI library mpi4py loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eagle.extend import EagleAttributeError

if TYPE_CHECKING:
    from eagle_mpi.comm import MPIComm as MPIComm

__all__ = ["MPIComm"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # eagle imports this package to load its entry point (eagle_mpi.plugin) when it lists plugins:
    # MPIComm, which imports mpi4py.MPI and so starts MPI, is imported on first use only.
    if name == "MPIComm":
        from eagle_mpi.comm import MPIComm

        return MPIComm
    raise EagleAttributeError(f"module 'eagle_mpi' has no attribute {name!r}")
