"""A GPU graph over a communicator (eagle.Graph(comm=...)), ranks as threads: every reduction has
one process's bits on every rank, the same bits as the CPU graph over the same shards.

Each rank's device reduces its shard's blocks to partials; the CUDA graph is cut there and the
ranks combine the partials on the host (libeagle's collective reduce item), then the next graph
copies the result to the device.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import eagle
from eagle.graph import Node, opaque
from eagle.testing import run_ranks

hawk = pytest.importorskip("hawk")
from hawk import Int32, Scalar  # noqa: E402

BLOCK = eagle.BLOCK
N = 3 * BLOCK + 77
DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8]


def values(dtype: Any, n: int = N) -> np.ndarray:
    rng = np.random.default_rng(11)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(n) * 1e3).astype(dtype)
    return rng.integers(-100 if np.dtype(dtype).kind == "i" else 0, 100, n).astype(dtype)


def reduced(x: np.ndarray, where: Any, comm: Any = None) -> tuple[list[bytes], list[str], list[str]]:
    """Every op of eagle.reduce over ``x`` (all over x > 0), as one graph over ``comm`` built on
    ``where``'s arrays (``where.asarray``; None: NumPy): the results' bytes, the schedule and the
    reductions."""
    put = (lambda a: a) if where is None else where.asarray
    get = (lambda a: a) if where is None else where.get
    positive = (x > 0).astype(np.uint8)
    g = eagle.Graph(comm=comm)
    outs = []
    for op in ("sum", "max", "all"):
        operand = positive if op == "all" else x
        outs.append(put(np.zeros(1, operand.dtype)))
        g.add_node(eagle.reduce(put(operand), outs[-1], op=op), name=op)
    g.build().launch()
    return [get(o).tobytes() for o in outs], g.schedule, g.reductions


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [1, 2, 3])
def test_every_reduction_has_one_process_bits_on_every_rank(gpu, dtype, size):
    x = values(dtype)
    whole, _, _ = reduced(x, None)
    cpu = run_ranks(size, lambda comm: reduced(x[eagle.shard(N, comm.rank, size)], None, comm))
    device = run_ranks(size, lambda comm: reduced(x[eagle.shard(N, comm.rank, size)], gpu, comm))
    assert all(bits == whole for bits, _, _ in cpu)
    for bits, schedule, labels in device:
        assert bits == whole
        assert schedule == ["eager_host"] * 3  # the device drains; the ranks combine on the host
        assert labels == ["sum", "max", "all"]


@hawk.kernel
def moments(x: Scalar, flags: Int32):
    total = hawk.sum(x)
    centred = x - total / 1000.0
    return total, centred, hawk.sum(centred * centred), hawk.max(flags), hawk.sum(x > 0.0)


def run_moments(x0: np.ndarray, flags0: np.ndarray, where: Any, comm: Any = None
                ) -> tuple[list[np.ndarray], list[str]]:
    """A kernel whose later phase reads its own global sums (the cut inside one node), then a
    plain kernel after it."""
    put = (lambda a: a.copy()) if where is None else where.asarray
    get = (lambda a: a) if where is None else where.get
    g = eagle.Graph(comm=comm)
    plan = moments.plan(put(x0), put(flags0))
    g.add(plan, name="moments")
    g.build().launch(2)
    return [get(o) for o in plan.outputs], g.schedule


@pytest.mark.parametrize("size", [2, 3])
def test_a_kernels_own_sums_are_global_between_its_phases(gpu, size):
    x0 = values(np.float64)
    flags0 = values(np.int32).astype(np.int32)
    cut = [eagle.shard(N, r, size) for r in range(size)]
    alone, _ = run_moments(x0, flags0, gpu)  # compiled before the ranks' threads ask for it
    whole, _ = run_moments(x0, flags0, None)
    assert [a.tobytes() for a in alone] == [a.tobytes() for a in whole]
    cpu = run_ranks(size, lambda comm: run_moments(x0[cut[comm.rank]], flags0[cut[comm.rank]], None, comm))
    device = run_ranks(size, lambda comm: run_moments(x0[cut[comm.rank]], flags0[cut[comm.rank]], gpu, comm))
    for (mine, _), (theirs, schedule) in zip(cpu, device, strict=True):
        assert schedule == ["eager_host"]
        for a, b in zip(mine, theirs, strict=True):
            assert a.tobytes() == b.tobytes()
    for k in (0, 2, 3, 4):  # the sums: one process's bits on every rank
        assert all(theirs[k].tobytes() == whole[k].tobytes() for theirs, _ in device)
    assert np.concatenate([theirs[1] for theirs, _ in device]).tobytes() == whole[1].tobytes()


def test_a_graph_without_reductions_stays_one_cuda_graph(gpu):
    x0 = values(np.float64)

    def run(comm: Any) -> tuple[list[str], int | None, bytes]:
        x = gpu.asarray(x0[eagle.shard(N, comm.rank, 2)])
        y = gpu.zeros(x.shape)
        g = eagle.Graph(comm=comm).add_node(eagle.copy(x, into=y), name="copy").build()
        g.launch()
        return g.schedule, g.captures, gpu.get(y).tobytes()

    ranks = run_ranks(2, run)
    assert [r[:2] for r in ranks] == [(["capture"], 1)] * 2
    assert b"".join(r[2] for r in ranks) == x0.tobytes()


def refusal(build: Any) -> list[str]:
    def attempt(comm: Any) -> str:
        with pytest.raises(ValueError) as err:
            build(comm)
        return str(err.value)

    return run_ranks(2, attempt)


def test_a_reduction_inside_a_device_loop_body_is_refused_by_name(gpu):
    def build(comm: Any) -> None:
        x, total, flag = gpu.zeros(2 * BLOCK), gpu.zeros(1), gpu.asarray(np.ones(1, np.uint32))
        body = eagle.Body([eagle.reduce(x, total)])
        eagle.Graph(comm=comm).add_node(Node("device_loop", eagle.DeviceLoop(flag, "while", 4, body)),
                                        name="loop").build()

    message = "eagle.Graph.build: node 'reduce' reduces across samples inside a device if or loop body"
    for text in refusal(build):
        assert text.startswith(message) and "run the loop from Python, one launch per turn" in text


def test_a_reduction_inside_a_fork_is_refused_as_on_the_cpu(gpu):
    def build(comm: Any, put: Any) -> None:
        x, y, sx, sy = (put(np.zeros(n)) for n in (BLOCK, BLOCK, 1, 1))
        g = eagle.Graph(comm=comm)
        g.add_group([eagle.reduce(x, sx), eagle.reduce(y, sy)], names=["sx", "sy"]).build()

    on_cpu = refusal(lambda comm: build(comm, np.copy))
    on_gpu = refusal(lambda comm: build(comm, gpu.asarray))
    assert on_cpu[0].startswith("eagle.Graph.build: 'sx', 'sy' reduce across samples inside a fork")
    first = "eagle.Graph.build: 'sx' reduce across samples inside a fork"
    assert all(text.startswith(first) for text in on_gpu)
    assert on_gpu[0].split(";", 1)[1] == on_cpu[0].split(";", 1)[1]  # the same reason and way out


def test_a_host_node_that_reduces_is_refused_by_name(gpu):
    def build(comm: Any) -> None:
        x, y = gpu.zeros(BLOCK), gpu.zeros(BLOCK)
        host, total = np.zeros(BLOCK), np.zeros(1)
        g = eagle.Graph(comm=comm).add_node(eagle.copy(x, into=y), name="copy")
        g.add_node(eagle.reduce(host, total), name="on host").build()

    for text in refusal(build):
        assert text.startswith("eagle.Graph.build: node 'on host' reduces across samples over host planes, "
                               "in a GPU graph over a communicator")


def test_a_global_sum_read_by_host_code_after_the_cut(gpu):
    """An eager_host node after the reduction sees the global value (the cut and the eager call
    are both host calls between CUDA graphs, in graph order)."""
    x0 = values(np.float64)
    whole = eagle.testing.fixed_order("sum", x0)

    def run(comm: Any) -> float:
        x, total = gpu.asarray(x0[eagle.shard(N, comm.rank, 2)]), gpu.zeros(1)
        seen: list[float] = []
        g = eagle.Graph(comm=comm).add_node(eagle.reduce(x, total), name="total")
        g.add_node(opaque(lambda: seen.append(float(gpu.get(total)[0])), reads={"total": total}, eager=True),
                   name="look")
        g.build().launch()
        return seen[0]

    assert run_ranks(2, run) == [float(whole)] * 2
