"""eagle-mpi: one graph over a batch sharded across MPI ranks, beside NumPy + mpi4py in Python.

Run: mpiexec -n 2 python benchmarks/bench_mpi.py   (and -n 1 for the one-rank figures)

1. A capped 50-turn loop whose guard is a global count (every turn reduces
   ``x < limit`` over all ranks): eagle's whole loop is one replay with the
   allreduce inside it; the competitor is a NumPy loop calling
   ``comm.allreduce`` each turn.  Per-turn costs are medians; the loop never
   ends early (the limit is out of reach), so every replay runs 50 turns.
2. The 100-kernel chain over 4M samples, each rank running its shard: the
   time of one replay on this many ranks.  Run with -n 1 and -n 2 to compare;
   on a 2-core machine the ranks share the cores with each other and with
   libeagle's thread teams.

Only rank 0 prints.
"""

from __future__ import annotations

import os
import time

import numpy as np
from bench_builder import below, chain, dbl, numpy_settle
from bench_graph import numpy_chain
from harness import fmt, interleaved_medians, table
from mpi4py import MPI

import eagle

COMM = MPI.COMM_WORLD
TURNS = 50


@eagle.Graph.builder
def settle(x, flag, comm=None):
    g = eagle.Graph(comm=comm)
    for _ in range(TURNS):
        if not flag:
            break
        x = dbl(x)
        below(x, np.inf, flag)
    g.result = x
    return g


def numpy_mpi_settle(x0: np.ndarray) -> np.ndarray:
    """What a NumPy user writes: the guard reduced over the ranks each turn from Python."""
    x, flag = x0.copy(), 1
    for _ in range(TURNS):
        if not flag:
            break
        np.multiply(x, 2.0, out=x)
        flag = COMM.allreduce(int(np.sum(x < np.inf)), op=MPI.SUM)
    return x


def synchronized(fn):
    """fn on every rank, started together (a barrier first), so no rank times another's wait."""
    def run():
        COMM.Barrier()
        fn()
    return run


def guard_rows(rows: list[tuple[str, str, str]], n: int) -> None:
    part = eagle.shard(n, COMM.rank, COMM.size)
    x0 = np.full(part.stop - part.start, 1e-300)  # doubling 50 times stays finite and below inf
    flag = np.ones(1, np.uint32)
    local, global_ = settle(x0.copy(), flag), settle(x0.copy(), flag, comm=COMM)

    def replay(g):
        flag[0] = 1
        g()

    t = interleaved_medians({"local": synchronized(lambda: replay(local)),
                             "global": synchronized(lambda: replay(global_)),
                             "numpy": synchronized(lambda: numpy_mpi_settle(x0)),
                             "numpy_local": synchronized(lambda: numpy_settle(x0, 1))}, repeat=41)
    per = {k: v / TURNS for k, v in t.items()}
    rows.append((f"50-turn loop, global guard, {n} samples on {COMM.size} rank(s): per turn",
                 fmt(per["global"]),
                 f"{fmt(per['global'] - per['local']).strip()} over the rank-local guard; NumPy + "
                 f"comm.allreduce {fmt(per['numpy']).strip()} ({per['global'] / per['numpy']:.2f}x)"))


def chain_rows(rows: list[tuple[str, str, str]], n: int) -> None:
    part = eagle.shard(n, COMM.rank, COMM.size)
    x, y = np.linspace(0, 1, n)[part].copy(), np.linspace(0, 1, n)[part].copy()
    g = chain(x, 100)
    t = interleaved_medians({"graph": synchronized(g.launch),
                             "numpy": synchronized(lambda: numpy_chain(y))}, repeat=9)
    rows.append((f"100-kernel chain, {n >> 20}M samples on {COMM.size} rank(s) ({os.cpu_count()} cores)",
                 fmt(t["graph"]), f"NumPy on the same shards {fmt(t['numpy']).strip()}: "
                 f"ratio {t['graph'] / t['numpy']:.3f}x"))


def main() -> None:
    rows: list[tuple[str, str, str]] = []
    for n in (4096, 1 << 20):
        guard_rows(rows, n)
    chain_rows(rows, 4 << 20)
    if COMM.rank == 0:
        table(f"eagle-mpi, {COMM.size} rank(s), {MPI.Get_library_version().splitlines()[0].strip()}", rows)


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    if COMM.rank == 0:
        print(f"({time.perf_counter() - t0:.0f} s)")
