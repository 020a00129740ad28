"""The worker side: a plugin that keeps each shard's built graph between calls.

One plugin per :class:`eagle_dask.Sharded`, registered under its name; it
names the builder by module and qualified name and imports it on the worker.
(By value, cloudpickle would carry the builder's hawk kernels with their
compiled libraries, which do not pickle.)  A task finds the plugin through
``get_worker().plugins``.
"""

from __future__ import annotations

import importlib
import pickle
import threading
from collections import OrderedDict
from typing import Any

import numpy as np
from distributed import Worker, get_worker
from distributed.diagnostics.plugin import WorkerPlugin

import eagle
from eagle.extend import EagleValueError

MPI_HINT = ("a shard sees only its own samples, so it would not give one process's result: run it over "
            "MPI with eagle-mpi instead, each rank building eagle.Graph(comm=MPI.COMM_WORLD) over its "
            "eagle.shard of the batch")


class Graphs(WorkerPlugin):
    """The graphs one :class:`~eagle_dask.Sharded` built on this worker, most recently used last."""

    def __init__(self, module: str, qualname: str, capacity: int) -> None:
        self.module = module
        self.qualname = qualname
        self.capacity = capacity

    def setup(self, worker: Worker) -> None:
        self.builder = resolve(self.module, self.qualname)
        # Made here, not in __init__: the plugin is pickled on the client, a lock is not.
        self.graphs: OrderedDict[tuple[Any, ...], eagle.Graph] = OrderedDict()
        self.builds = 0
        # A worker with several threads may run two shards at once; one eagle run at a time
        # (each run already uses the worker's eagle thread team).
        self.lock = threading.Lock()

    def teardown(self, worker: Worker) -> None:
        self.graphs.clear()

    def run(self, rank: int, samples: int, arrays: dict[str, np.ndarray], constants: dict[str, Any]) -> Any:
        """Shard ``rank``'s result: its cached graph with ``arrays`` bound, or one built now."""
        # Scalars are baked into a graph when it is recorded, so their exact values (pickled bytes:
        # -0.0 and 0.0 differ, a NaN equals itself) are part of the key; arrays only by shape.
        key = (rank, tuple((k, a.shape, a.dtype.str) for k, a in arrays.items()),
               tuple((k, pickle.dumps(v)) for k, v in constants.items()))
        with self.lock:
            graph = self.graphs.pop(key, None)
            if graph is None:
                graph = self._build(arrays, constants)
            else:
                graph.bind(**arrays)
            self.graphs[key] = graph
            while len(self.graphs) > self.capacity:
                self.graphs.popitem(last=False)
            # Copied: the result planes are the graph's own, rewritten by its next replay.
            return _copy(graph(), samples)

    def _build(self, arrays: dict[str, np.ndarray], constants: dict[str, Any]) -> eagle.Graph:
        graph = self.builder(**arrays, **constants)
        if graph.reductions:
            raise EagleValueError(f"eagle_dask: {self.builder.__name__} reduces across samples in "
                             f"{', '.join(graph.reductions)}; {MPI_HINT}")
        self.builds += 1
        return graph


def resolve(module: str, qualname: str) -> Any:
    """The object ``module.qualname``, importing the module."""
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _copy(tree: Any, samples: int) -> Any:
    if tree is None:
        return None
    if isinstance(tree, dict):
        return {k: _copy(v, samples) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_copy(v, samples) for v in tree)
    if not (isinstance(tree, np.ndarray) and tree.ndim and tree.shape[-1] == samples):
        raise EagleValueError(f"eagle_dask: a result of shape {getattr(tree, 'shape', type(tree).__name__)} "
                              "is "
                         f"not a per-sample plane of this shard ({samples} samples on the last axis); "
                         "only per-sample results are gathered")
    return tree.copy()


def run_shard(name: str, rank: int, samples: int, arrays: dict[str, np.ndarray],
              constants: dict[str, Any]) -> Any:
    """The task of one shard: run it through the plugin ``name`` of this worker."""
    graphs: Graphs = get_worker().plugins[name]
    return graphs.run(rank, samples, arrays, constants)


def builds(name: str, dask_worker: Worker) -> int:
    """How many graphs the plugin ``name`` built on this worker (for ``client.run``)."""
    return dask_worker.plugins[name].builds
