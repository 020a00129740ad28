"""One graph over a sharded batch (eagle.shard, eagle.Graph(comm=...)), ranks as threads.

eagle.testing.run_ranks gives each thread a communicator whose collectives
meet the other threads'; libeagle's collective items are the same as under
MPI (plugins/eagle-mpi runs these checks under mpiexec).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eagle
from eagle._core import CoreError
from eagle._program import Program
from eagle.graph import Node, opaque
from eagle.testing import run_ranks

BLOCK = eagle.BLOCK


@given(st.integers(0, 40 * BLOCK), st.integers(1, 8))
def test_shards_are_whole_blocks_in_rank_order_covering_every_sample(n, size):
    blocks = -(-n // BLOCK)
    if 0 < blocks < size:
        with pytest.raises(ValueError, match=rf"eagle\.shard: {n} samples make {blocks} block\(s\)"):
            eagle.shard(n, 0, size)
        return
    cuts = [eagle.shard(n, r, size) for r in range(size)]
    assert cuts[0].start == 0 and cuts[-1].stop == n
    for a, b in itertools.pairwise(cuts):
        assert a.stop == b.start and a.stop % BLOCK == 0
    held = [(c.stop - c.start + BLOCK - 1) // BLOCK for c in cuts]
    assert max(held) - min(held) <= 1  # as even as whole blocks go
    assert n == 0 or min(held) >= 1


def test_shard_refuses_bad_arguments():
    with pytest.raises(ValueError, match=r"0 <= rank < size; got n=10, rank=2, size=2"):
        eagle.shard(10, 2, 2)
    with pytest.raises(TypeError, match=r"eagle\.shard: n must be an int, got float"):
        eagle.shard(10.0, 0, 1)


DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8]


def reductions(x: np.ndarray, comm: object = None) -> list[np.ndarray]:
    """Every reduce op of libeagle over x, in one program over comm; all/any over x > 0."""
    program, outs = Program().stage(), []
    positive = (x > 0).astype(np.uint8)
    for op in ("sum", "max", "min", "all", "any"):
        operand = positive if op in ("all", "any") else x
        outs.append(np.zeros(1, operand.dtype))
        program.reduce(operand, outs[-1], op)
    program.finalize()
    if comm is not None:
        program.set_collective(comm)
    program.run()
    return outs


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 9 * BLOCK), st.integers(1, 4), st.sampled_from(DTYPES), st.integers(0, 2**32 - 1))
def test_every_reduction_has_one_process_bits_on_every_rank(n, size, dtype, seed):
    size = min(size, -(-n // BLOCK))
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 1e3).astype(dtype) if np.dtype(dtype).kind == "f" else \
        rng.integers(-100 if np.dtype(dtype).kind == "i" else 0, 100, n).astype(dtype)
    whole = reductions(x)
    for outs in run_ranks(size, lambda comm: reductions(x[eagle.shard(n, comm.rank, comm.size)], comm)):
        for got, want in zip(outs, whole, strict=True):
            assert got.tobytes() == want.tobytes()


def test_graph_reductions_are_listed_and_global():
    x = np.arange(3 * BLOCK, dtype=np.float32) / 7

    def run(comm: object = None, part: slice = slice(None)) -> tuple[list[str], list[bytes]]:
        outs = [np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros(1, np.bool_)]
        g = eagle.Graph(comm=comm).add_node(eagle.reduce(x[part], outs[0]), name="total")
        g.add_node(eagle.reduce(x[part], outs[1], op="max"), name="top")
        g.add_node(eagle.reduce(x[part] > 1.0, outs[2], op="all"), name="every").build().launch()
        return g.reductions, [o.tobytes() for o in outs]

    whole = run()
    assert whole[0] == ["total", "top", "every"]
    assert run_ranks(2, lambda comm: run(comm, eagle.shard(x.size, comm.rank, 2))) == [whole, whole]


def test_a_loop_whose_guard_is_a_global_reduction_turns_alike_on_every_rank():
    n = 5 * BLOCK + 77
    x0 = np.random.default_rng(3).uniform(0.0, 1.0, n)

    def run(comm: object = None, part: slice = slice(None)) -> tuple[int, np.ndarray, float]:
        x, total, flag, turns = x0[part].copy(), np.zeros(1), np.ones(1, np.uint32), [0]

        def grow() -> None:
            np.multiply(x, 1.1, out=x)
            turns[0] += 1

        def below() -> None:
            flag[0] = total[0] < 1e4  # reads the global sum: the same on every rank

        body = eagle.Body([opaque(grow, reads={"x": x}, writes={"x": x}), eagle.reduce(x, total),
                           opaque(below, reads={"total": total}, writes={"flag": flag})])
        g = eagle.Graph(comm=comm).add_node(Node("device_loop", eagle.DeviceLoop(flag, "while", 60, body)),
                                            name="loop")
        g.build().launch()
        return turns[0], x, float(total[0])

    turns, x, total = run()
    assert 5 < turns < 60
    ranks = run_ranks(3, lambda comm: run(comm, eagle.shard(n, comm.rank, 3)))
    assert [r[0] for r in ranks] == [turns] * 3 and {r[2] for r in ranks} == {total}
    assert np.array_equal(np.concatenate([r[1] for r in ranks]), x)


def test_a_reduction_inside_a_fork_is_refused_on_every_rank():
    def build(comm: object) -> str:
        x, y, a, b = np.ones(BLOCK), np.ones(BLOCK), np.zeros(1), np.zeros(1)
        g = eagle.Graph(comm=comm).add_group([eagle.reduce(x, a), eagle.reduce(y, b)], names=["sx", "sy"])
        with pytest.raises(ValueError) as err:
            g.build()
        return str(err.value)

    said = run_ranks(2, build)
    assert said[0] == said[1] == (
        "eagle.Graph.build: 'sx', 'sy' reduce across samples inside a fork; with a communicator every "
        "reduction is a collective, which every rank must reach in the same order, and a fork's branches "
        "keep none: move the reduction before or after the fork")


def test_ranks_with_different_graphs_name_the_first_difference():
    def build(comm: object) -> str:
        x, out = np.ones(BLOCK, np.float32 if comm.rank else np.float64), np.zeros(1)
        g = eagle.Graph(comm=comm).add_node(opaque(lambda: None, reads={"x": x}, writes={"out": out}),
                                            name="step")
        with pytest.raises(ValueError) as err:
            g.build()
        return str(err.value)

    said = run_ranks(2, build)
    assert said[0] == said[1]
    assert said[0].startswith("eagle.Graph.build: the ranks recorded different graphs: node 0 on rank 0 is "
                              "'step' (opaque; stage 0, branch 0; planes x float64[], out float64[]), on "
                              "rank 1 'step' (opaque; stage 0, branch 0; planes x float32[], out float64[])")


def test_a_rank_that_fails_to_build_stops_every_rank():
    def build(comm: object) -> str:
        g = eagle.Graph(comm=comm).add_node(eagle.reduce(np.ones(BLOCK), np.zeros(1)), name="total")
        try:
            g.build(backend="gpu" if comm.rank else None)  # refused on rank 1 alone
        except (ValueError, RuntimeError) as err:
            return f"{type(err).__name__}: {err}"
        return "built"

    said = run_ranks(2, build)
    assert said[1].startswith("ValueError: eagle.Graph.build: backend='gpu' but every plane is a host")
    assert said[0] == ("RuntimeError: eagle.Graph.build: rank 1 of 2 failed to build the graph, so every "
                       f"rank stops: {said[1]}")


def test_shards_not_cut_on_blocks_are_refused_by_every_rank():
    def build(comm: object) -> str:
        x = np.ones(BLOCK - 1 if comm.rank == 0 else BLOCK)  # rank 0 ends inside a block
        g = eagle.Graph(comm=comm).add_node(eagle.reduce(x, np.zeros(1)), name="total")
        with pytest.raises(CoreError) as err:
            g.build()
        return str(err.value)

    for said in run_ranks(2, build):
        assert ("rank 0 holds 1023 samples, not whole blocks of 1024, yet rank 1 after it holds samples: "
                "cut the batch with eagle.shard") in said


def test_a_rank_with_no_samples_is_refused():
    def build(comm: object) -> str:
        x = np.ones(0 if comm.rank == 1 else BLOCK)
        g = eagle.Graph(comm=comm).add_node(eagle.reduce(x, np.zeros(1)), name="total")
        with pytest.raises(CoreError) as err:
            g.build()
        return str(err.value)

    for said in run_ranks(2, build):
        assert "rank 1 holds no samples; every rank needs at least one" in said


def test_a_run_that_fails_on_one_rank_aborts_every_rank():
    def run(comm: object) -> str:
        x, total = np.ones(BLOCK), np.zeros(1)

        def fail() -> None:
            if comm.rank == 1:
                raise ZeroDivisionError("rank 1 gave up")

        g = eagle.Graph(comm=comm).add_node(opaque(fail, reads={"x": x}, writes={}), name="maybe")
        g.add_node(eagle.reduce(x, total), name="total").build()
        with pytest.raises(RuntimeError) as err:
            g.launch(100)
        return str(err.value)

    said = run_ranks(2, run)
    assert said[1] == "eagle.Graph.launch: rank 1 of 2 failed: ZeroDivisionError: rank 1 gave up"
    assert said[0].startswith("eagle.Graph.launch: rank 0 of 2 failed: CoreError: Program.run: eagle_run: a "
                              "collective failed")


def test_what_a_communicator_graph_refuses():
    with pytest.raises(TypeError, match=r"comm=builtins\.object is not a communicator any installed plugin "
                                        "knows: for an mpi4py communicator, pip install eagle-mpi"):
        eagle.Graph(comm=object())

    def logical(comm: object) -> str:
        g = eagle.Graph(comm=comm)
        with pytest.raises(ValueError) as err:
            g.set_logical_size(3)
        return str(err.value)

    assert run_ranks(1, logical) == ["eagle.Graph.set_logical_size: a graph over a communicator has no "
                                     "logical size: each rank's sample count is that of its shard "
                                     "(eagle.shard)"]


def test_a_collective_program_refuses_a_reduce_in_a_branch_tasks_stage():
    def build(comm: object) -> str:
        x, a, b = np.ones(4), np.zeros(1), np.zeros(1)
        p = Program().stage("branch_tasks").reduce(x, a).branch().reduce(x, b).finalize()
        with pytest.raises(CoreError) as err:
            p.set_collective(comm)
        return str(err.value)

    assert "a reduce item in a branch_tasks stage: ranks would run it out of order" in run_ranks(1, build)[0]
