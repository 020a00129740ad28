"""Run under mpiexec by test_mpi.py: one step on sharded samples against the one-process run.

    mpiexec -n R python ranks.py MODE N

MODE ``same`` checks every output, every trip count and every gradient bit
for bit; ``diverge`` records another graph on the last rank and expects the
same refusal on every rank; ``record`` fails while recording on rank 1;
``raise`` makes the last rank's run raise and expects MPI_Abort to end every
rank; ``time`` prints the per-turn cost of a global loop guard.  Rank 0
prints one line per rank, starting with the rank.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from mpi4py import MPI

import eagle
import hawk
from hawk import Mutable, Param, Scalar, UInt32

COMM = MPI.COMM_WORLD


@hawk.kernel
def relax(x: Scalar, rate: Param) -> Scalar:
    return x + rate * (1.0 - x * 0.1)


@hawk.kernel
def tick(k: Scalar) -> Scalar:
    return k + 1.0


@hawk.kernel
def below(x: Scalar, limit: Param, flag: Mutable[UInt32]) -> None:
    flag = hawk.math.uint32(hawk.sum(x < limit))  # an integer count: an allreduce on every turn


@hawk.kernel
def energy(x: Scalar, w: Param) -> Scalar:
    return w * x * x


@eagle.Graph.builder
def step(x, k, flag, total, top, limit, comm=None):
    g = eagle.Graph(comm=comm)
    for _ in range(50):  # a capped device loop whose guard is a global reduction
        if not flag:
            break
        x = relax(x, 0.3)
        k = tick(k)
        below(x, limit, flag)
    e = energy(x, 0.5)
    eagle.reduce(e, total)  # a float sum: every rank's block partials, one fixed tree
    eagle.reduce(x, top, op="max")
    g.result = {"x": x, "k": k, "e": e}
    return g


def run_step(x0: np.ndarray, limit: float, comm: object = None) -> dict[str, np.ndarray]:
    flag, total, top = np.ones(1, np.uint32), np.zeros(1), np.zeros(1)
    g = step(x0.copy(), np.zeros_like(x0), flag, total, top, limit, comm=comm)
    result = g()
    return {**{name: a.copy() for name, a in result.items()}, "total": total.copy(), "top": top.copy()}


def gradient(x0: np.ndarray, comm: object = None) -> dict[str, np.ndarray]:
    """A Param's gradient is a sum over every sample: global under a communicator."""
    x, total = x0.copy(), np.zeros(1)
    g = eagle.Graph(record=True, comm=comm)
    plan = energy.plan(x, 0.7)
    g.add(plan, name="energy").add_node(eagle.reduce(plan.outputs[0], total), name="total").build()
    g()
    return eagle.diff.reverse(g.record, {"total.out": np.ones(1)})


def gather(local: np.ndarray) -> np.ndarray:
    """The ranks' samples (the last axis) joined in rank order, on every rank."""
    return np.concatenate(COMM.allgather(local), axis=-1)


def check_same(n: int) -> str:
    rng = np.random.default_rng(7)
    x0 = rng.uniform(-3.0, 3.0, n)
    part = eagle.shard(n, COMM.rank, COMM.size)
    whole, mine = run_step(x0, 4.0), run_step(x0[part], 4.0, comm=COMM)
    for name in ("x", "k", "e"):
        assert np.array_equal(gather(mine[name]), whole[name]), name
    for name in ("total", "top"):
        assert np.array_equal(mine[name], whole[name]), (name, mine[name], whole[name])
    turns = int(whole["k"][0])
    assert 1 < turns < 50, turns  # the guard ended the loop, not the cap
    grads, mine_grads = gradient(x0), gradient(x0[part], comm=COMM)
    assert np.array_equal(mine_grads["w"], grads["w"]), (mine_grads["w"], grads["w"])
    assert np.array_equal(gather(mine_grads["energy.x"]), grads["energy.x"])
    return f"same samples={part.stop - part.start} turns={turns} total={mine['total'][0]!r}"


def check_diverge(n: int) -> str:
    part = eagle.shard(n, COMM.rank, COMM.size)
    x, y = np.ones(n)[part], np.zeros(1)
    g = eagle.Graph(comm=COMM).add_node(eagle.reduce(x, y), name="sum")
    if COMM.rank == COMM.size - 1:
        g.add_node(eagle.reduce(x, np.zeros(1), op="max"), name="extra")
    try:
        g.build()
    except ValueError as err:
        return f"refused {err}"
    return "built"


@eagle.Graph.builder
def doubled(x, comm=None):
    g = eagle.Graph(comm=comm)
    if COMM.rank == 1:
        raise ZeroDivisionError("rank 1 cannot record")
    g.result = tick(x)
    return g


def check_record(n: int) -> str:
    try:
        doubled(np.zeros(n)[eagle.shard(n, COMM.rank, COMM.size)], comm=COMM)
    except Exception as err:  # noqa: BLE001 -- what each rank raised is the result
        return f"failed {type(err).__name__ if COMM.rank == 1 else ''}{': ' if COMM.rank == 1 else ''}{err}"
    return "built"


def check_raise(n: int) -> str:
    part = eagle.shard(n, COMM.rank, COMM.size)
    x, total = np.ones(n)[part], np.zeros(1)

    def fail() -> None:
        if COMM.rank == COMM.size - 1:
            raise ZeroDivisionError(f"rank {COMM.rank} gave up")

    g = eagle.Graph(comm=COMM)
    g.add_node(eagle.graph.opaque(fail, reads={"x": x}, writes={}), name="maybe")
    g.add_node(eagle.reduce(x, total), name="sum").build()
    g.launch(1000)  # the other ranks wait in the sum's collective for the one that raised
    return "ran"


def time_guard(n: int) -> str:
    """The per-turn cost of a 50-turn loop whose guard is global, against one rank's own guard."""
    x0 = np.random.default_rng(7).uniform(-3.0, 3.0, n)
    part = eagle.shard(n, COMM.rank, COMM.size)
    costs = {}
    for comm in (None, COMM):
        flag, total, top = np.ones(1, np.uint32), np.zeros(1), np.zeros(1)
        # limit 1e9: every turn continues, so all 50 run
        g = step(x0[part].copy(), np.zeros(part.stop - part.start), flag, total, top, 1e9, comm=comm)
        samples = []
        for _ in range(30):
            flag[0] = 1
            COMM.Barrier()
            t = time.perf_counter()
            g()
            samples.append((time.perf_counter() - t) / 50)
        costs[comm is not None] = float(np.median(samples))
    return f"time local={costs[False] * 1e6:.2f}us global={costs[True] * 1e6:.2f}us per turn"


if __name__ == "__main__":
    mode, n = sys.argv[1], int(sys.argv[2])
    check = {"same": check_same, "diverge": check_diverge, "record": check_record, "raise": check_raise,
             "time": time_guard}[mode]
    said = COMM.gather(check(n))  # rank 0 prints every rank's line: lines of processes interleave
    if COMM.rank == 0:
        print("\n".join(f"{rank}: {text}" for rank, text in enumerate(said)), flush=True)
