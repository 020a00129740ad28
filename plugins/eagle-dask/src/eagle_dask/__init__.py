"""eagle-dask: a builder's graph mapped over the shards of a batch on a Dask cluster.

For graphs whose samples never meet (no cross-sample reduction)::

    runner = eagle_dask.Sharded(client, step)   # one shard per worker
    out = runner(x=X, v=V, dt=0.01)             # the bits of step(X, V, 0.01)() in one process

Each worker keeps its shard's built graph between calls (a worker plugin);
a graph with a cross-sample reduction is refused: run it over MPI with eagle-mpi.
"""

from eagle_dask._sharded import Sharded as Sharded

__version__ = "0.1.0"
