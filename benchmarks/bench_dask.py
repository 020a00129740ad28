"""eagle-dask: the per-call overhead of a builder graph run over shards on a Dask cluster, warm.

A LocalCluster of 2 worker processes (one thread and one eagle thread each)
on this machine; each worker already holds its shard's built graph, so a
call is: cut the batch, send the shards with the tasks, bind, replay, send
the results back, concatenate.  Beside it: the same graph called in this
process on the whole batch (the ratio's base), the same with a bind first,
and a Dask round trip of two tasks that do nothing (the floor).

Run: python benchmarks/bench_dask.py   (prints a note and exits when eagle-dask or dask is missing)
"""

from __future__ import annotations

import warnings

import numpy as np
from harness import fmt, interleaved_medians, table

import eagle
import hawk
from hawk import Param, Scalar
from hawk import math as hm


@hawk.kernel
def spring(x: Scalar, v: Scalar, k: Param) -> Scalar:
    return v - k * hm.sin(x)


@hawk.kernel
def drift(x: Scalar, v: Scalar, dt: Param) -> Scalar:
    return x + dt * v


# At the top level of this file: the workers import the builder by name (the
# cluster's spawned processes run this file as their __main__).
@eagle.Graph.builder
def oscillators(x, v, dt):
    g = eagle.Graph()
    for _ in range(4):
        v = spring(x, v, 0.7)
        x = drift(x, v, dt)
    g.result = (x, v)
    return g


def nothing(x):
    return None


def main() -> None:
    try:
        import eagle_dask
        from distributed import Client, LocalCluster
    except ImportError as err:
        print(f"bench_dask: skipped ({err}); pip install plugins/eagle-dask (it brings dask[distributed])")
        return

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      env={"EAGLE_NUM_THREADS": "1"}) as cluster, Client(cluster) as client:
        runner = eagle_dask.Sharded(client, oscillators)
        workers = runner.workers
        for n in (4096, 1 << 20):
            rng = np.random.default_rng(0)
            x, v, x2 = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)
            g = oscillators(x, v, 0.01)
            assert all(np.array_equal(a, b) for a, b in zip(runner(x, v, 0.01), g(), strict=True))
            built = runner.builds()
            cut = [x[eagle.shard(n, r, 2)] for r in range(2)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a large task's "large graph" note, for the 1M row
                m = interleaved_medians({
                    "in-process g()": g,
                    "in-process bind + g()": lambda g=g, x2=x2: g.bind(x=x2)(),
                    "dask floor": lambda cut=cut: client.gather(
                        [client.submit(nothing, c, workers=[w], pure=False) for c, w in zip(cut, workers,
                                                                                            strict=True)]),
                    "eagle_dask.Sharded": lambda x2=x2, v=v: runner(x2, v, 0.01),
                }, repeat=31)
            assert runner.builds() == built, "a warm call built a graph"
            base = m["in-process g()"]
            table(f"oscillators, 8 per-sample kernels, {n:,} samples, 2 shards on 2 worker processes "
                  "(warm: bind + replay)",
                  [("in-process g(), whole batch", fmt(base), "1x"),
                   ("in-process bind + g()", fmt(m["in-process bind + g()"]),
                    f"{m['in-process bind + g()'] / base:.3g}x"),
                   ("Dask floor: 2 tasks doing nothing, one shard each", fmt(m["dask floor"]),
                    f"{m['dask floor'] / base:.3g}x"),
                   ("eagle_dask.Sharded call", fmt(m["eagle_dask.Sharded"]),
                    f"{m['eagle_dask.Sharded'] / base:.3g}x")])
        runner.close()


if __name__ == "__main__":
    main()
