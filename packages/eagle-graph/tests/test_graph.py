"""eagle.Graph on the CPU: the seeds' examples, derived edges, schedules, node kinds, replay."""

from __future__ import annotations

import contextlib
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest

import eagle
from eagle import _core
from eagle.graph import Edge, HostItems, Node, opaque, register_node_kind

BUSY = "another call is still running on this Graph; give each thread its own Graph, or wait for it"
MAX = _core.BRANCH_TASKS_MAX_SAMPLES


@contextlib.contextmanager
def team(n: int) -> Iterator[None]:
    """Run the block under a host team of ``n`` threads."""
    before = _core.num_threads()
    _core.set_num_threads(n)
    try:
        yield
    finally:
        _core.set_num_threads(before)


def head(g: eagle.Graph) -> str:
    """The first line of the graph's picture or listing: what the graph is so far."""
    return str(g).splitlines()[0]


# ------------------------------------------------------------------ the seeds


def test_seed_001_first_graph():
    """Seed 001 "Your first graph": double then shift gives 1.0 everywhere, ordered by y."""
    x, y, z = np.zeros(8), np.zeros(8), np.zeros(8)
    g = eagle.Graph()
    g.add_node(opaque(lambda: np.multiply(x, 2.0, out=y), reads={"x": x}, writes={"y": y}), name="double")
    g.add_node(opaque(lambda: np.add(y, 1.0, out=z), reads={"y": y}, writes={"z": z}), name="shift")
    assert g.edges() == [Edge(0, 1, "y", "RAW")]
    g.build()
    g.launch()
    np.testing.assert_array_equal(z, np.ones(8))
    x[:] = 3.0
    g.launch()
    np.testing.assert_array_equal(z, np.full(8, 7.0))


def test_seed_002_record_build_replay(capsys):
    """Seed 002: l and r fork off x, join waits for both; launch(3) prints the seed's lines."""
    x, left, right, out = np.arange(4.0), np.zeros(4), np.zeros(4), np.zeros(4)
    calls = {"l": 0, "r": 0, "join": 0}

    def run_l():
        calls["l"] += 1
        left[:] = 2 * x

    def run_r():
        calls["r"] += 1
        right[:] = x + 1

    def run_join():
        calls["join"] += 1
        out[:] = left + right

    g = eagle.Graph()
    g.add_group([opaque(run_l, reads={"x": x}, writes={"a": left}),
                 opaque(run_r, reads={"x": x}, writes={"b": right})], names=["l", "r"])
    g.add_node(opaque(run_join, reads={"a": left, "b": right}, writes={"out": out}), name="join")
    assert head(g) == "eagle.Graph 3 nodes · 1 group · backend: (not built)"
    assert calls == {"l": 0, "r": 0, "join": 0}  # recording runs nothing
    g.build()
    assert head(g) == "eagle.Graph 3 nodes · 1 group · backend: cpu"
    g.launch(3)
    print(calls)
    print(out)
    assert capsys.readouterr().out == "{'l': 3, 'r': 3, 'join': 3}\n[ 1.  4.  7. 10.]\n"


def test_backend_and_schedule_appear_at_build():
    """backend and schedule are None before build, "cpu" and one entry per stage after."""
    x = np.zeros(4)
    g = eagle.Graph().add_node(opaque(lambda: None, writes={"x": x}))
    g.add_group([opaque(lambda: None, reads={"x": x}), opaque(lambda: None, reads={"x": x})])
    assert (g.backend, g.schedule) == (None, None)
    g.build()
    assert g.backend == "cpu"
    assert g.schedule == ["work_share", "work_share"]
    g.schedule.append("mutated")  # a copy: the graph's own schedule is untouched
    assert len(g.schedule) == 2


def test_repr(plans):
    """repr counts nodes and stages and names the backend, before and after build."""
    xs = [np.zeros(8) for _ in range(10)]
    g = eagle.Graph()
    assert repr(g) == "<eagle.Graph 0 nodes, 0 stages, not built>"
    g.add(plans.scale.bind(xs[0], 2.0))
    g.add_group([[plans.scale.bind(xs[1], 2.0), plans.shift.bind(xs[1], 1.0)],
                 [plans.scale.bind(xs[2], 2.0), plans.shift.bind(xs[2], 1.0)]])
    g.add_node(eagle.reduce(xs[0], xs[3][:1]))
    g.add_group([plans.scale.bind(xs[4], 2.0), plans.scale.bind(xs[5], 2.0)])
    g.add_group([opaque(lambda: None, writes={"a": xs[6]}), opaque(lambda: None, writes={"b": xs[7]})])
    assert repr(g) == "<eagle.Graph 10 nodes, 5 stages, not built>"
    g.build()
    assert repr(g) == "<eagle.Graph 10 nodes, 5 stages, cpu>"


def test_every_method_returns_the_graph(plans):
    """add, add_node, add_group, set_logical_size, build, launch, enqueue, synchronize chain."""
    x, y, z = np.ones(8), np.ones(8), np.zeros(8)
    g = eagle.Graph()
    same = (g.add(plans.scale.bind(x, 2.0), name="s")
            .add_group([plans.shift.bind(x, 1.0), plans.shift.bind(y, 1.0)], names=["a", "b"])
            .add_node(opaque(lambda: np.add(x, y, out=z), reads={"x": x, "y": y}, writes={"z": z}))
            .set_logical_size(8).build().launch().enqueue(2).synchronize())
    assert same is g
    # three replays: x = ((1*2+1)*2+1)*2+1, y = 1+3
    np.testing.assert_array_equal(x, np.full(8, 15.0))
    np.testing.assert_array_equal(z, np.full(8, 19.0))


def test_edges_and_labels_before_and_after_build(plans):
    """edges() and node_labels() answer the same before and after build."""
    x, y = np.zeros(16), np.zeros(16)
    g = eagle.Graph().add(plans.scale.bind(x, 2.0), name="first")
    g.add_group([plans.mix.bind(x, y), plans.shift.bind(x, 1.0)], names=["m", None])
    g.add(plans.axpy.bind(x, y, 0.5))
    labels = ["first", "m", "shift", "axpy"]
    assert g.node_labels() == labels
    before = g.edges()
    assert before == [Edge(0, 1, "x", "RAW"), Edge(0, 2, "x", "RAW"), Edge(1, 2, "x", "WAR"),
                      Edge(1, 3, "out", "RAW"), Edge(2, 3, "x", "RAW")]
    with pytest.raises(ValueError, match="siblings"):
        g.build()  # m reads x while its sibling shift rewrites it
    g2 = eagle.Graph().add(plans.scale.bind(x, 2.0), name="first")
    g2.add_group([[plans.mix.bind(x, y), plans.shift.bind(x, 1.0)]], names=[["m", "shift"]])
    g2.add(plans.axpy.bind(x, y, 0.5))
    assert g2.node_labels() == labels
    assert g2.edges() == before
    g2.build()
    assert g2.node_labels() == labels
    assert g2.edges() == before


def test_edge_meaning():
    """Edge.meaning gives the seed's plain-words reading of each kind."""
    assert Edge(0, 1, "x", "RAW").meaning == "data flows: read after write"
    assert Edge(0, 1, "x", "WAR").meaning == "must wait to overwrite: write after read"
    assert Edge(0, 1, "x", "WAW").meaning == "same output: write after write"


def test_show_prints_the_graph(capsys):
    """g.show() prints str(g), which lists every stage and node label."""
    g = eagle.Graph().add_node(opaque(nop), name="first")
    g.add_group([opaque(nop), opaque(nop)], names=["left", "right"])
    g.show()
    text = capsys.readouterr().out
    assert text == str(g) + "\n"
    assert all(label in text for label in ("first", "left", "right"))


def test_default_labels(plans):
    """Unnamed nodes are labelled by plan name, function name, 'opaque' for a lambda, or kind."""
    x, out = np.zeros(4), np.zeros(1)

    def refine():
        pass

    g = eagle.Graph().add(plans.scale.bind(x, 1.0)).add_node(opaque(refine))
    g.add_node(opaque(lambda: None)).add_node(eagle.reduce(x, out))
    g.add_node(eagle.skippable(refine, eagle.SkipGuard.nonzero(np.zeros(1, np.uint32))))
    g.add_group([opaque(refine), opaque(refine)], names=["a", None])
    g.add_group([[opaque(refine), opaque(refine)]], names=["pair"])
    assert g.node_labels() == ["scale", "refine", "opaque", "reduce", "refine", "a", "refine",
                               "pair.0", "pair.1"]


# ---------------------------------------------------------------------- edges


def nop() -> None:
    pass


def touch(reads=None, writes=None) -> Node:
    """An opaque node that does nothing but declares planes."""
    return opaque(nop, reads=reads, writes=writes)


def edges_of(*nodes: Node) -> list[Edge]:
    g = eagle.Graph()
    for node in nodes:
        g.add_node(node)
    return g.edges()


def test_raw_war_waw():
    """A write then a read is RAW, a read then a write WAR, two writes WAW."""
    x = np.zeros(8)
    assert edges_of(touch(writes={"x": x}), touch(reads={"x": x})) == [Edge(0, 1, "x", "RAW")]
    assert edges_of(touch(reads={"x": x}), touch(writes={"x": x})) == [Edge(0, 1, "x", "WAR")]
    assert edges_of(touch(writes={"x": x}), touch(writes={"x": x})) == [Edge(0, 1, "x", "WAW")]
    assert edges_of(touch(reads={"x": x}), touch(reads={"x": x})) == []


def test_edges_carry_the_plane_names():
    """An edge carries the writer's name for RAW and WAW, the overwriter's name for WAR."""
    x = np.zeros(8)
    assert edges_of(touch(writes={"w": x}), touch(reads={"r": x})) == [Edge(0, 1, "w", "RAW")]
    assert edges_of(touch(reads={"r": x}), touch(writes={"w": x})) == [Edge(0, 1, "w", "WAR")]
    assert edges_of(touch(writes={"w1": x}), touch(writes={"w2": x})) == [Edge(0, 1, "w2", "WAW")]


def test_column_views_of_one_matrix_do_not_overlap():
    """Two column views of one (N, w) matrix carry no edge; a column and the matrix do."""
    m = np.zeros((64, 3))
    a, b = m[:, 0], m[:, 1]
    assert edges_of(touch(writes={"a": a}), touch(writes={"b": b})) == []
    assert edges_of(touch(writes={"a": a}), touch(reads={"m": m})) == [Edge(0, 1, "a", "RAW")]
    # and as siblings they build: they cannot race
    g = eagle.Graph().add_group([touch(writes={"a": a}), touch(writes={"b": b})]).build()
    assert g.edges() == []


def test_view_of_the_tail_overlaps_the_array():
    """A view of the tail of an array overlaps the array; a disjoint head does not."""
    x = np.zeros(16)
    assert edges_of(touch(writes={"x": x}), touch(reads={"tail": x[12:]})) == [Edge(0, 1, "x", "RAW")]
    assert edges_of(touch(reads={"tail": x[12:]}), touch(writes={"x": x})) == [Edge(0, 1, "x", "WAR")]
    assert edges_of(touch(writes={"head": x[:8]}), touch(reads={"tail": x[8:]})) == []
    assert edges_of(touch(writes={"even": x[::2]}), touch(reads={"odd": x[1::2]})) == []


def test_scalars_by_value_carry_no_edges(plans):
    """Plans sharing only a by-value scalar, or opaque nodes declaring floats, have no edges."""
    x, y = np.zeros(8), np.zeros(8)
    g = eagle.Graph().add(plans.scale.bind(x, 2.0)).add(plans.scale.bind(y, 2.0))
    assert g.edges() == []
    assert edges_of(touch(writes={"c": 2.0}), touch(writes={"c": 2.0})) == []


class DLPackOnly:
    """An array that speaks only DLPack (as a torch CPU tensor does to eagle)."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_only_planes_carry_edges():
    """A plane seen only through DLPack is an array, not a scalar: it carries edges."""
    x = np.zeros(8)
    assert edges_of(touch(writes={"t": DLPackOnly(x)}), touch(reads={"u": DLPackOnly(x[4:])})) == [
        Edge(0, 1, "t", "RAW")]
    assert edges_of(touch(writes={"t": DLPackOnly(x[:4])}), touch(reads={"u": DLPackOnly(x[4:])})) == []


def test_chain_over_one_plane_gives_the_reduced_set(plans):
    """A 3-node chain over one plane orders 0->1->2, with no redundant 0->2 edge."""
    x = np.zeros(8)
    g = eagle.Graph()
    for _ in range(3):
        g.add(plans.scale.bind(x, 2.0))
    assert g.edges() == [Edge(0, 1, "x", "RAW"), Edge(1, 2, "x", "RAW")]
    # write, two reads, write: the second writer waits for both readers, not for the first writer
    assert edges_of(touch(writes={"x": x}), touch(reads={"x": x}), touch(reads={"x": x}),
                    touch(writes={"x": x})) == [
        Edge(0, 1, "x", "RAW"), Edge(0, 2, "x", "RAW"), Edge(1, 3, "x", "WAR"), Edge(2, 3, "x", "WAR")]


def test_plan_roles_decide_the_edges(plans):
    """A plan's parameter roles are how it touches its planes: read, write, readwrite."""
    x, y, z = np.zeros(8), np.zeros(8), np.zeros(8)
    g = eagle.Graph().add(plans.mix.bind(x, y)).add(plans.copy_k.bind(y, z)).add(plans.axpy.bind(z, x, 1.0))
    assert g.edges() == [Edge(0, 1, "out", "RAW"), Edge(0, 2, "y", "WAR"), Edge(1, 2, "out", "RAW")]


# ------------------------------------------------------------------ schedules


def chains(plans, planes: list[np.ndarray], length: int = 4) -> list[list]:
    """One branch per plane: length kernels alternating x*c and x+d."""
    return [[plans.scale.bind(x, 1.0 + 0.01 * k) if k % 2 == 0 else plans.shift.bind(x, 0.25 * k)
             for k in range(length)] for x in planes]


def chain_reference(x: np.ndarray, length: int = 4) -> np.ndarray:
    x = x.copy()
    for k in range(length):
        if k % 2 == 0:
            np.multiply(x, 1.0 + 0.01 * k, out=x)
        else:
            np.add(x, 0.25 * k, out=x)
    return x


@pytest.mark.parametrize("n", [16, MAX])
def test_small_fork_of_plans_runs_branch_tasks(plans, threads, n):
    """A fork of >= 2 plan branches over <= 4096 samples runs branch_tasks with >= 2 threads."""
    planes = [np.ones(n) for _ in range(3)]
    g = eagle.Graph().add(plans.scale.bind(planes[0], 2.0)).add_group(chains(plans, planes))
    g.add(plans.axpy.bind(planes[1], planes[2], 1.0)).build()
    assert g.schedule == ["work_share", "branch_tasks" if threads >= 2 else "work_share", "work_share"]


@pytest.mark.parametrize("case", ["too_many_samples", "opaque", "conditional", "reduce", "one_branch"])
def test_what_work_shares(plans, case):
    """Over 4096 samples, an opaque, a conditional or a reduce in a branch, or one branch: work_share."""
    n = MAX + 1 if case == "too_many_samples" else 64
    a, b, total = np.ones(n), np.ones(n), np.zeros(1)
    other = {
        "too_many_samples": plans.scale.bind(b, 2.0),
        "opaque": opaque(nop, writes={"b": b}),
        "conditional": eagle.skippable(plans.scale.bind(b, 2.0).launch,
                                       eagle.SkipGuard.nonzero(np.zeros(1, np.uint32))),
        "reduce": eagle.reduce(b, total),
        "one_branch": None,
    }[case]
    branches = [plans.scale.bind(a, 2.0)] if other is None else [plans.scale.bind(a, 2.0), [other]]
    with team(2):
        g = eagle.Graph().add_group(branches).build()
    assert g.schedule == ["work_share"]


def test_one_thread_and_plain_stages_work_share(plans):
    """With one thread a fork work-shares; a stage that is not a fork always does."""
    x, y = np.ones(64), np.ones(64)
    with team(1):
        g1 = eagle.Graph().add_group([plans.scale.bind(x, 2.0), plans.scale.bind(y, 2.0)]).build()
    with team(2):
        g2 = eagle.Graph().add(plans.scale.bind(x, 2.0)).add(plans.scale.bind(y, 2.0)).build()
        assert g1.schedule == ["work_share"]  # decided at build, with the team of that moment
        g1.launch()
    assert g2.schedule == ["work_share", "work_share"]
    np.testing.assert_array_equal(x, np.full(64, 2.0))


@pytest.mark.parametrize("n", [1000, MAX + 100])
def test_graph_of_plans_matches_numpy_for_any_team(plans, threads, n):
    """8 branches of kernel chains joined by axpy: NumPy's bits under 1, 2 and 4 threads."""
    rng = np.random.default_rng(n)
    start = [rng.standard_normal(n) for _ in range(8)]
    planes = [s.copy() for s in start]
    acc = np.zeros(n)
    g = eagle.Graph().add_group(chains(plans, planes, 6), names=[f"b{i}" for i in range(8)])
    for i, x in enumerate(planes):
        g.add(plans.axpy.bind(x, acc, 0.5 + i), name=f"join{i}")
    g.build().launch(2)
    expected = "branch_tasks" if threads >= 2 and n <= MAX else "work_share"
    assert g.schedule[0] == expected
    ref_planes = [chain_reference(chain_reference(s, 6), 6) for s in start]
    ref_acc = np.zeros(n)
    for ref in ([chain_reference(s, 6) for s in start], ref_planes):
        for i, x in enumerate(ref):
            ref_acc = (0.5 + i) * x + ref_acc
    for got, ref in zip(planes, ref_planes, strict=True):
        np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(acc, ref_acc)


# --------------------------------------------------------------- conditionals


def test_skippable_opaque_reads_the_flag_at_every_launch(threads):
    """skippable(opaque, SkipGuard.nonzero(flag)) skips exactly the launches where flag != 0."""
    x = np.zeros(4)
    flag = np.zeros(1, np.uint32)
    step = opaque(lambda: np.add(x, 1.0, out=x), reads={"x": x}, writes={"x": x})
    g = eagle.Graph().add_node(eagle.skippable(step, eagle.SkipGuard.nonzero(flag)), name="refine").build()
    seen = []
    for f in (0, 1, 0, 7, 0):
        flag[0] = f
        g.launch()
        seen.append(x[0])
    assert seen == [1.0, 1.0, 2.0, 2.0, 3.0]


def test_skippable_bound_launch_takes_the_plans_planes(plans, threads):
    """skippable(bound.launch) is ordered by the plan's planes and skipped by the flag."""
    x, out = np.ones(32), np.zeros(1)
    flag = np.zeros(1, np.uint32)
    g = eagle.Graph().add_node(opaque(lambda: None, writes={"flag": flag}), name="decide")
    g.add_node(eagle.skippable(plans.scale.bind(x, 3.0).launch, eagle.SkipGuard.nonzero(flag)))
    g.add_node(eagle.reduce(x, out), name="total")
    assert g.node_labels() == ["decide", "scale", "total"]
    assert g.edges() == [Edge(0, 1, "flag", "RAW"), Edge(1, 2, "x", "RAW")]
    g.build().launch()
    assert out[0] == 96.0
    flag[0] = 1
    g.launch(3)
    assert out[0] == 96.0
    flag[0] = 0
    g.launch()
    assert out[0] == 288.0


def test_skippable_plain_callable_is_ordered_by_its_guard_only():
    """A plain callable under a guard has only the guard's plane."""
    calls = []
    flag = np.ones(1, np.uint32)
    node = eagle.skippable(lambda: calls.append(1), eagle.SkipGuard.nonzero(flag))
    assert [(name, role) for name, _, role in node.planes()] == [("guard", "read")]
    g = eagle.Graph().add_node(node).build().launch(2)
    assert calls == []
    flag[0] = 0
    g.launch(2)
    assert calls == [1, 1]


def test_repeat_while_runs_while_the_cell_is_nonzero_capped(plans, threads):
    """repeat_while(step, flag, max_iters) repeats while the cell is non-zero, at most max_iters."""
    cell = np.array([5], np.uint32)
    g = eagle.Graph().add_node(eagle.repeat_while(plans.decrement.bind(cell).launch,
                                                  eagle.SkipGuard.nonzero(cell), 3)).build()
    g.launch()
    assert cell[0] == 2  # capped at three turns
    g.launch()
    assert cell[0] == 0  # two turns, then the cell stops it
    turns = []

    def step():
        turns.append(int(cell[0]))
        cell[0] -= 1

    cell[0] = 4
    eagle.Graph().add_node(eagle.repeat_while(opaque(step, reads={"c": cell}, writes={"c": cell}),
                                              cell, 10)).build().launch()
    assert turns == [4, 3, 2, 1]


def test_reduce_is_ordered_after_the_writer_of_x(plans, threads):
    """reduce(x, out) follows the node that wrote x and precedes the one that reads out."""
    x = np.arange(1.0, 101.0)
    total, biggest, every = np.zeros(1), np.zeros(1), np.zeros(1)
    seen = []
    g = eagle.Graph().add(plans.scale.bind(x, 2.0), name="double")
    g.add_node(eagle.reduce(x, total), name="sum")
    g.add_node(eagle.reduce(x, biggest, "max"), name="max")
    g.add_node(eagle.reduce(x, every, "all"), name="all")
    g.add_node(opaque(lambda: seen.append(total[0]), reads={"total": total}), name="read")
    assert g.edges() == [Edge(0, 1, "x", "RAW"), Edge(0, 2, "x", "RAW"), Edge(0, 3, "x", "RAW"),
                         Edge(1, 4, "out", "RAW")]
    g.build().launch()
    assert (total[0], biggest[0], every[0], seen) == (10100.0, 200.0, 1.0, [10100.0])
    x[5] = 0.0
    g.launch()
    assert every[0] == 0.0


def test_reduce_sum_is_the_fixed_order(plans, threads, fixed_order_sum):
    """A float sum of what a kernel wrote over many blocks gives the fixed-order bits for any team."""
    src = np.random.default_rng(11).standard_normal(3 * _core.BLOCK + 7) * 1e3
    x, out = np.zeros_like(src), np.zeros(1)
    eagle.Graph().add(plans.copy_k.bind(src, x)).add_node(eagle.reduce(x, out)).build().launch()
    assert out[0] == fixed_order_sum(src.tolist())


def test_python_steps_see_every_sample_the_kernels_wrote(plans, threads):
    """Between kernels over many blocks, an opaque node sees all of the earlier kernel's samples."""
    n = 5 * _core.BLOCK + 3
    x = np.zeros(n)
    seen = []
    g = eagle.Graph().add(plans.shift.bind(x, 1.0))
    g.add_node(opaque(lambda: seen.append(float(x.sum())), reads={"x": x}), name="look")
    g.add(plans.scale.bind(x, 2.0)).add_node(opaque(lambda: seen.append(float(x.sum())), reads={"x": x}))
    g.build().launch(2)
    assert seen == [n * 1.0, n * 2.0, n * 3.0, n * 6.0]


def test_copy_host_to_host(plans):
    """copy(src, into=dst) copies in graph order; copy(x, into=x) is a node that does nothing."""
    src, dst = np.zeros(8), np.zeros(8)
    g = eagle.Graph().add(plans.shift.bind(src, 1.0)).add_node(eagle.copy(src, into=dst), name="copy")
    g.add(plans.scale.bind(dst, 3.0))
    assert g.edges() == [Edge(0, 1, "x", "RAW"), Edge(1, 2, "into", "RAW")]
    g.build().launch(2)
    np.testing.assert_array_equal(src, np.full(8, 2.0))
    np.testing.assert_array_equal(dst, np.full(8, 6.0))
    x = np.arange(5.0)
    same = eagle.copy(x, into=x)
    assert same.planes() == []
    eagle.Graph().add_node(same).build().launch()
    np.testing.assert_array_equal(x, np.arange(5.0))
    with pytest.raises(ValueError, match="one shape and dtype"):
        eagle.copy(np.zeros(3), into=np.zeros(4))


def test_pinned():
    """pinned(shape, dtype) is a zeroed NumPy array of that shape and dtype."""
    a = eagle.pinned((3, 4), np.float32)
    assert isinstance(a, np.ndarray) and a.shape == (3, 4) and a.dtype == np.float32
    assert not a.any()
    b = eagle.pinned(5)
    assert b.shape == (5,) and b.dtype == np.float64 and not b.any()


# ----------------------------------------------------------------- node kinds


@dataclass(frozen=True)
class Negate:
    src: np.ndarray
    dst: np.ndarray


def _negate_reads(p: Negate) -> list:
    return [("src", p.src, "read")]


def _negate_writes(p: Negate) -> list:
    return [("dst", p.dst, "write")]


def _negate_lower(p: Negate):
    return lambda: np.negative(p.src, out=p.dst)


register_node_kind("test_graph_negate", reads=_negate_reads, writes=_negate_writes, lower_cpu=_negate_lower)


def test_custom_kind_runs_in_order_with_derived_edges(plans):
    """A registered kind whose lower_cpu returns a callable runs in order, ordered by its planes."""
    x, y = np.full(8, 2.0), np.zeros(8)
    g = eagle.Graph().add(plans.scale.bind(x, 3.0))
    g.add_node(Node("test_graph_negate", Negate(x, y)), name="neg")
    g.add(plans.shift.bind(y, 1.0))
    assert g.node_labels() == ["scale", "neg", "shift"]
    assert g.edges() == [Edge(0, 1, "x", "RAW"), Edge(1, 2, "dst", "RAW")]
    g.build().launch()
    np.testing.assert_array_equal(y, np.full(8, -5.0))
    # registering the same kind again is fine
    again = register_node_kind("test_graph_negate", reads=_negate_reads, writes=_negate_writes,
                               lower_cpu=_negate_lower)
    assert again.name == "test_graph_negate"


@dataclass(frozen=True)
class Doubler:
    x: np.ndarray
    scale: object  # the Plan


def _doubler_writes(p: Doubler) -> list:
    return [("x", p.x, "readwrite")]


def _doubler_lower(p: Doubler) -> HostItems:
    return HostItems(p.scale.bind(p.x, 2.0).emit)


register_node_kind("test_graph_doubler", reads=lambda p: [], writes=_doubler_writes, lower_cpu=_doubler_lower)


def test_native_custom_kind_in_a_fork(plans):
    """A kind lowering to native HostItems builds in a fork and work-shares (it is no plan launch)."""
    a, b = np.ones(16), np.ones(16)
    with team(2):
        g = eagle.Graph().add_group([Node("test_graph_doubler", Doubler(a, plans.scale)),
                                     Node("test_graph_doubler", Doubler(b, plans.scale))]).build()
        assert g.schedule == ["work_share"]
        g.launch(2)
    np.testing.assert_array_equal(a, np.full(16, 4.0))
    np.testing.assert_array_equal(b, np.full(16, 4.0))


def test_opaque_tiers_are_plain_calls_in_order_on_the_cpu():
    """opaque(fn), opaque(fn, stream=S) and opaque(fn, eager=True) run as calls in graph order."""
    order = []
    g = eagle.Graph().add_node(opaque(lambda: order.append("capture")))
    g.add_node(opaque(lambda: order.append("stream"), stream=object()))
    g.add_node(opaque(lambda: order.append("eager"), eager=True))
    g.build().launch(2)
    assert order == ["capture", "stream", "eager"] * 2
    assert "stage 1 work_share: opaque [stream: cpu runs eagerly]" in g._listing()


# ----------------------------------------------------------- running a graph


def test_busy_second_caller_and_looking_during_a_run():
    """A second thread's launch/enqueue/build gets eagle.Busy; looking works; the graph stays usable."""
    entered, release = threading.Event(), threading.Event()
    x = np.zeros(4)
    runs = []

    def block():
        runs.append(1)
        entered.set()
        release.wait(10)

    g = eagle.Graph().add_node(opaque(block, writes={"x": x}), name="block").build()
    worker = threading.Thread(target=g.launch)
    worker.start()
    try:
        assert entered.wait(10)
        for call, api in [(g.launch, "launch"), (g.enqueue, "enqueue"), (g.build, "build")]:
            with pytest.raises(eagle.Busy) as info:
                call()
            assert str(info.value) == f"eagle.Graph.{api}: {BUSY}"
        assert isinstance(info.value, RuntimeError)
        # looking takes no guard
        assert g.edges() == [] and g.node_labels() == ["block"]
        assert repr(g) == "<eagle.Graph 1 node, 1 stage, cpu>"
        assert "block" in str(g)
        assert g.schedule == ["work_share"] and g.backend == "cpu"
    finally:
        release.set()
        worker.join(10)
    assert not worker.is_alive()
    g.launch(2)
    assert runs == [1, 1, 1]


def test_exception_in_an_opaque_node_propagates():
    """An exception in an opaque node reaches launch with its traceback; the graph stays usable."""
    x = np.zeros(4)
    fail = [True]

    def explode():
        if fail[0]:
            raise ZeroDivisionError("inside the graph")

    g = eagle.Graph().add_node(opaque(lambda: np.add(x, 1.0, out=x), writes={"x": x}), name="before")
    g.add_node(opaque(explode, reads={"x": x}), name="explode")
    g.add_node(opaque(lambda: np.multiply(x, 10.0, out=x), writes={"x": x}), name="after")
    g.build()
    with pytest.raises(ZeroDivisionError, match="inside the graph") as info:
        g.launch(3)
    assert "explode" in "".join(traceback.format_tb(info.value.__traceback__))
    np.testing.assert_array_equal(x, np.ones(4))  # the run stopped at the failing node
    fail[0] = False
    g.launch()
    np.testing.assert_array_equal(x, np.full(4, 20.0))


def test_set_logical_size(plans, threads):
    """set_logical_size(n) makes the next replays process only the first n samples, no rebuild."""
    n = 3 * _core.BLOCK
    x = np.ones(n)
    g = eagle.Graph().add(plans.shift.bind(x, 1.0)).build()
    g.set_logical_size(_core.BLOCK + 5).launch()
    np.testing.assert_array_equal(x, np.r_[np.full(_core.BLOCK + 5, 2.0), np.ones(n - _core.BLOCK - 5)])
    g.set_logical_size(n).launch()
    np.testing.assert_array_equal(x, np.r_[np.full(_core.BLOCK + 5, 3.0), np.full(n - _core.BLOCK - 5, 2.0)])
    y = np.zeros(8)
    eagle.Graph().add(plans.shift.bind(y, 1.0)).set_logical_size(3).build().launch()  # before build
    np.testing.assert_array_equal(y, [1, 1, 1, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="n must be an int >= 0"):
        g.set_logical_size(-1)


def test_enqueue_and_synchronize_on_the_cpu(plans):
    """On the CPU enqueue(n) is launch(n) and synchronize() has nothing to wait for."""
    x = np.zeros(8)
    g = eagle.Graph().add(plans.shift.bind(x, 1.0)).build()
    g.enqueue(3)
    np.testing.assert_array_equal(x, np.full(8, 3.0))  # done when enqueue returns
    assert g.synchronize() is g
    g.launch(0)
    np.testing.assert_array_equal(x, np.full(8, 3.0))


def test_launch_before_build_and_bad_counts(plans):
    """launch/enqueue need a build and a count >= 0."""
    g = eagle.Graph().add(plans.shift.bind(np.zeros(4), 1.0))
    with pytest.raises(RuntimeError, match=r"^eagle\.Graph\.launch: the graph is not built"):
        g.launch()
    with pytest.raises(RuntimeError, match=r"^eagle\.Graph\.enqueue: the graph is not built"):
        g.enqueue()
    g.build()
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.launch: n must be an int >= 0"):
        g.launch(-1)
    g.launch()  # the refused calls left the guard free


def test_graph_pipeline():
    """GraphPipeline replays recorded callables in order; record, launch, enqueue, synchronize."""
    order = []
    p = eagle.GraphPipeline()
    assert p.record(lambda: order.append("a")).record(lambda: order.append("b")) is p
    assert len(p) == 2
    assert p.launch(2) is p
    assert order == ["a", "b", "a", "b"]
    p.record(lambda: order.append("c"))
    order.clear()
    assert p.enqueue() is p and p.synchronize() is p
    assert order == ["a", "b", "c"]
    with pytest.raises(TypeError, match="expected a callable"):
        p.record(42)
