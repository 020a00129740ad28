"""The client side: cut a batch into shards, run each on its worker, gather in rank order."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable, Collection
from typing import Any

import numpy as np
from distributed import Client

import eagle
from eagle.extend import EagleTypeError, EagleValueError
from eagle_dask import _worker


class Sharded:
    """A builder mapped over the shards of a batch on a Dask cluster, for graphs whose samples never meet.

    ``runner(*args, **kwargs)`` takes the builder's arguments for the whole
    batch.  Every NumPy array is a per-sample plane (samples on the last
    axis), cut with :func:`eagle.shard`; the arrays named in ``broadcast`` go
    whole to every shard; anything else (scalars) is passed through.  It
    returns the graph's result tree with every array the concatenation of the
    shards' in rank order: the bits of ``builder(*args, **kwargs)()`` in one
    process.

    Shard ``r`` always runs on the same worker (the ``r % W``-th of the
    workers, by address, when the runner was made), which keeps its built
    graph in a worker plugin: the first call builds, later calls with the
    same shapes, dtypes and scalar values only ``bind`` the new arrays and
    replay.  A worker that leaves loses its graphs; its shards run on another
    worker, which builds them again (the same bits: a shard's result does not
    depend on where it runs).

    A graph that reduces across samples (``g.reductions``) is refused with a
    ValueError: under Dask a shard would reduce over its own samples only.
    Such graphs run over MPI with eagle-mpi.

    Only the result comes back: arguments a graph writes in place are written
    in the worker's copy.

    :param client: the ``distributed.Client`` of the cluster.
    :param builder: an ``@eagle.Graph.builder`` function at the top level of
        a module the workers can import (installed there, or sent with
        ``client.upload_file``); the workers import it by name.
    :param shards: how many shards; default one per worker.
    :param broadcast: names of array arguments that are not per-sample
        planes (sent whole to every shard, bound like the planes).
    :param cache: graphs each worker keeps for this runner, least recently
        used dropped first.
    """

    def __init__(self, client: Client, builder: Callable[..., eagle.Graph], shards: int | None = None,
                 broadcast: Collection[str] = (), cache: int = 8) -> None:
        self.signature = inspect.signature(builder)
        by_name = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        odd = [p.name for p in self.signature.parameters.values() if p.kind not in by_name]
        if odd or getattr(builder, "block", False):
            raise EagleTypeError(f"eagle_dask.Sharded: {builder!r} must be a builder whose parameters all "
                                 "bind by "
                            f"name (g.bind); not a block, no *args, **kwargs or positional-only "
                            f"({', '.join(odd) or 'a block'})")
        unknown = set(broadcast) - set(self.signature.parameters)
        if unknown:
            raise EagleTypeError(f"eagle_dask.Sharded: broadcast names {sorted(unknown)}, not parameters of "
                            f"{builder!r}")
        module, qualname = getattr(builder, "__module__", None), getattr(builder, "__qualname__", "")
        try:
            found = _worker.resolve(module, qualname) if module else None
        except (ImportError, AttributeError):
            found = None
        # The same definition, reloaded, also counts: client.upload_file reloads the module in
        # this process when the scheduler runs here (a LocalCluster).
        name = (getattr(found, "__module__", None), getattr(found, "__qualname__", None))
        if found is not builder and name != (module, qualname):
            raise EagleTypeError(f"eagle_dask.Sharded: {builder!r} is not reachable by its name "
                            f"{module}.{qualname}: the workers import the builder by name, so define it at "
                            "the top level of a module they can import (client.upload_file sends a file)")
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise EagleValueError("eagle_dask.Sharded: the cluster has no workers")
        self.shards = len(workers) if shards is None else shards
        if not isinstance(self.shards, int) or self.shards < 1:
            raise EagleValueError(f"eagle_dask.Sharded: shards must be an int >= 1, got {shards!r}")
        self.client = client
        self.builder = builder
        self.broadcast = frozenset(broadcast)
        #: The worker each shard runs on, by rank.
        self.workers = [workers[r % len(workers)] for r in range(self.shards)]
        #: The name of this runner's worker plugin.
        self.name = f"eagle-dask-{getattr(builder, '__name__', 'builder')}-{uuid.uuid4().hex[:12]}"
        client.register_plugin(_worker.Graphs(module, qualname, cache), name=self.name)

    def __repr__(self) -> str:
        plural = "" if self.shards == 1 else "s"
        return f"<eagle_dask.Sharded {self.builder!r} over {self.shards} shard{plural}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        call = self.signature.bind(*args, **kwargs)
        call.apply_defaults()
        planes, whole, constants = {}, {}, {}
        for name, value in call.arguments.items():
            if name in self.broadcast:
                whole[name] = value
            elif isinstance(value, np.ndarray) and value.ndim:
                planes[name] = value
            else:
                constants[name] = value
        sizes = {name: a.shape[-1] for name, a in planes.items()}
        if len(set(sizes.values())) != 1:
            raise EagleValueError("eagle_dask.Sharded: the per-sample arrays must share their sample count "
                                  "(the "
                             f"last axis); got {sizes or 'none'}: name arrays that are not per-sample in "
                             "broadcast=")
        n = next(iter(sizes.values()))
        futures = []
        used = min(self.shards, -(-n // eagle.BLOCK))  # fewer blocks than shards: the rest stay idle
        for rank in range(used):
            cut = eagle.shard(n, rank, used)
            arrays = {name: a[..., cut] for name, a in planes.items()} | whole
            futures.append(self.client.submit(
                _worker.run_shard, self.name, rank, cut.stop - cut.start, arrays, constants,
                workers=[self.workers[rank]], allow_other_workers=True, pure=False))
        if not futures:
            raise EagleValueError("eagle_dask.Sharded: the batch has no samples")
        return _concatenate(self.client.gather(futures))

    def builds(self) -> dict[str, int]:
        """How many graphs each worker has built for this runner (a warm call builds none)."""
        return self.client.run(_worker.builds, self.name)

    def close(self) -> None:
        """Drop the workers' graphs (unregister the plugin)."""
        self.client.unregister_worker_plugin(self.name)

    def __enter__(self) -> Sharded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _concatenate(trees: list[Any]) -> Any:
    first = trees[0]
    if first is None:
        return None
    if isinstance(first, dict):
        return {k: _concatenate([t[k] for t in trees]) for k in first}
    if isinstance(first, (tuple, list)):
        return type(first)(_concatenate(list(leaves)) for leaves in zip(*trees, strict=True))
    return np.concatenate(trees, axis=-1)
