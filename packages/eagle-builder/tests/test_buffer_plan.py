"""The buffer plan (issue 19): a builder's temporaries share storage by liveness, and nothing
anyone can see changes: results, buffers, arguments and Mutables keep arrays of their own, a
temporary someone holds keeps its own, the pictures, edges and schedule stay, bind keeps working,
and the bits are those of the graph built with the plan off (``EAGLE_PLAN=0``) and of the
reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import eagle
import hawk
from eagle import extend
from eagle.testing import check, interpret
from hawk import Mutable, Param, Scalar, UInt32


@hawk.kernel
def scale(x: Scalar, c: Param) -> Scalar:
    return c * x


@hawk.kernel
def shift(x: Scalar, d: Param) -> Scalar:
    return d + x


@hawk.kernel
def centred(x: Scalar) -> Scalar:
    return x - hawk.sum(x)  # reads every sample: its output may not land on its input


@hawk.kernel
def pair(x: Scalar) -> tuple[Scalar, Scalar]:
    return x + 1.0, x * 3.0


@hawk.kernel
def mix(a: Scalar, b: Scalar) -> Scalar:
    return a * 0.5 + b


@hawk.kernel
def positive(x: Scalar, flag: Mutable[UInt32]):
    flag = hawk.math.uint32(hawk.sum(x > 100.0) == 0)


@eagle.Graph.builder
def chain(x, length):
    g = eagle.Graph()
    for _ in range(length // 2):  # unrolled: the functional chain of the issue
        x = scale(x, 1.0001)
        x = shift(x, 0.25)
    g.result = x
    return g


KEPT: list[np.ndarray] = []


@eagle.Graph.builder
def leaky(x):
    g = eagle.Graph()
    t = shift(x, 1.0)
    KEPT.append(t)  # the user holds this temporary: it is not the graph's alone
    u = scale(t, 2.0)
    v = shift(u, 3.0)
    g.result = scale(v, 0.5)
    return g


@eagle.Graph.builder
def mixed(x, out):
    g = eagle.Graph()
    a, b = pair(x)
    c = centred(a)
    d = mix(c, b)
    kept = shift(d, 1.0, buffer=True)
    e = scale(kept, 2.0)
    shift(e, 0.0, buffer=out)
    g.result = mix(e, x)
    return g


@eagle.Graph.builder
def forked(x, y):
    g = eagle.Graph()
    a, b = shift(x, 1.0), shift(y, 2.0)
    with g.parallel() as p:
        with p.branch():
            c = scale(a, 3.0)
            c = shift(c, 1.0)
        with p.branch():
            d = scale(b, 5.0)
            d = shift(d, 1.0)
    g.result = mix(shift(c, 0.5), shift(d, 0.5))
    return g


@eagle.Graph.builder
def looped(x, flag):
    g = eagle.Graph()
    t = shift(x, 0.5)
    for _ in range(6):
        if not flag:
            break
        u = scale(t, 2.0)
        t = shift(u, 1.0)
        positive(t, flag)
    g.result = shift(scale(t, 1.5), 0.0)
    return g


def storage(g: eagle.Graph) -> set[int]:
    """The addresses of the memory every node's planes touch: one per distinct storage array."""
    return {a.__array_interface__["data"][0] for top in extend.view(g).nodes for node in top.walk()
            for _, a, _ in node.planes() if isinstance(a, np.ndarray) and a.size}


def built(builder, *args, plan: bool, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("EAGLE_PLAN", "1" if plan else "0")
    return builder(*args)


def test_the_functional_chain_holds_its_argument_one_temporary_and_its_result(monkeypatch):
    x = np.linspace(0.0, 1.0, 64)
    planned = built(chain, x, 100, plan=True, monkeypatch=monkeypatch)
    unplanned = built(chain, x, 100, plan=False, monkeypatch=monkeypatch)
    assert len(storage(unplanned)) == 101  # the argument and one array per kernel output
    assert len(storage(planned)) == 3  # the argument, the temporaries' one storage, the result
    # what the passes after the plan read (fusion's dead stores): the 99 outputs before the result
    assert len(planned._analysis.temporaries) == len(unplanned._analysis.temporaries) == 99
    want = x.copy()
    for _ in range(50):
        want = 0.25 + 1.0001 * want
    assert planned().tobytes() == unplanned().tobytes() == want.tobytes()
    check(planned, 3)


def test_nothing_a_user_sees_changes(monkeypatch):
    x = np.linspace(-1.0, 1.0, 40)
    outs = [np.zeros(40), np.zeros(40)]
    graphs = [built(mixed, x, out, plan=p, monkeypatch=monkeypatch)
              for p, out in zip((True, False), outs, strict=True)]
    assert str(graphs[0]) == str(graphs[1])
    assert graphs[0].edges() == graphs[1].edges()
    assert graphs[0].schedule == graphs[1].schedule
    assert graphs[0].node_labels() == graphs[1].node_labels()
    results = [g() for g in graphs]
    assert results[0].tobytes() == results[1].tobytes() and outs[0].tobytes() == outs[1].tobytes()
    for g, out in zip(graphs, outs, strict=True):
        kept = extend.state(g)["names"].buffers["kept"]
        # buffer= arrays, the result and the argument are arrays of their own, holding their values
        mine = [kept, out, g.result, x]
        assert not any(np.shares_memory(a, b) for i, a in enumerate(mine) for b in mine[i + 1:])
        assert not any(np.shares_memory(a, t) for a in mine for t in g._temporaries)
    assert graphs[0]._temporaries and len(storage(graphs[0])) < len(storage(graphs[1]))
    check(graphs[0], 2)


def test_an_output_that_reduces_across_samples_never_lands_on_its_input(monkeypatch):
    x = np.linspace(-1.0, 1.0, 3000)  # more than one block: the reduction reads other samples
    g = built(mixed, x, np.zeros(3000), plan=True, monkeypatch=monkeypatch)
    labels, nodes = g.node_labels(), extend.view(g).nodes
    node = nodes[labels.index("c")]
    (_, read, _), (_, wrote, _) = node.planes()[0], node.planes()[-1]
    assert not np.shares_memory(read, wrote)
    want = built(mixed, x, np.zeros(3000), plan=False, monkeypatch=monkeypatch)()
    assert g().tobytes() == want.tobytes()


def test_a_temporary_the_user_holds_keeps_its_array_and_value(monkeypatch):
    KEPT.clear()
    x = np.arange(8.0)
    g = built(leaky, x, plan=True, monkeypatch=monkeypatch)
    (t,) = KEPT
    assert not any(t is a for a in g._temporaries)
    g()
    assert t.tolist() == (x + 1.0).tolist()  # the run wrote it, and nothing else did
    assert g().tolist() == (((x + 1.0) * 2.0 + 3.0) * 0.5).tolist()
    KEPT.clear()


def test_forks_give_each_branch_its_own_storage(monkeypatch):
    x, y = np.arange(16.0), np.arange(16.0) * 2.0
    g = built(forked, x, y, plan=True, monkeypatch=monkeypatch)
    want = built(forked, x, y, plan=False, monkeypatch=monkeypatch)()
    assert g.schedule == built(forked, x, y, plan=False, monkeypatch=monkeypatch).schedule
    seen = extend.view(g)
    (fork,) = [stage for stage in seen.stages if stage.group]
    touched = [[a for i in branch for _, a, _ in seen.nodes[i].planes()] for branch in fork.branches]
    assert len(touched) == 2 and not any(np.shares_memory(a, b) for a in touched[0] for b in touched[1])
    before = [a for i in range(min(fork.branches[0])) for _, a, _ in seen.nodes[i].planes()]
    ends = [seen.nodes[branch[-1]].planes()[-1][1] for branch in fork.branches]
    # what the branches write lives through the fork: nothing read before it lands there
    assert not any(np.shares_memory(a, b) for a in before for b in ends if a is not b)
    assert g().tobytes() == want.tobytes()
    check(g, 2)  # the fuzzer holds planned forks to 1, 2 and 3 threads


def test_a_loop_carries_its_state_through_planned_storage(monkeypatch):
    x = np.linspace(0.0, 3.0, 32)
    graphs = [built(looped, x, np.ones(1, np.uint32), plan=p, monkeypatch=monkeypatch) for p in (True, False)]
    assert graphs[0]._temporaries
    for g in graphs:
        extend.state(g)["names"].arguments["flag"][:] = 1
    results = [g().copy() for g in graphs]
    assert results[0].tobytes() == results[1].tobytes()
    assert str(graphs[0]) == str(graphs[1]) and graphs[0].edges() == graphs[1].edges()
    flag = extend.state(graphs[0])["names"].arguments["flag"]
    flag[:] = 1
    interpreted = interpret(graphs[0], 1)
    flag[:] = 1
    assert np.asarray(graphs[0]()).tobytes() == np.asarray(interpreted).tobytes()


def test_bind_keeps_the_plan(monkeypatch):
    x = np.linspace(0.0, 1.0, 64)
    g = built(chain, x, 20, plan=True, monkeypatch=monkeypatch)
    before = storage(g) - {x.__array_interface__["data"][0]}
    other = np.linspace(5.0, 6.0, 64)
    g.bind(x=other)
    assert storage(g) - {other.__array_interface__["data"][0]} == before  # the same planned storage
    want = built(chain, other.copy(), 20, plan=False, monkeypatch=monkeypatch)()
    assert g().tobytes() == want.tobytes()
    check(g, 2)


def test_the_switch(monkeypatch):
    x = np.zeros(4)
    monkeypatch.setenv("EAGLE_PLAN", "sometimes")
    with pytest.raises(ValueError, match=r"eagle\.Graph\.build: EAGLE_PLAN='sometimes'"):
        chain(x, 4)
    monkeypatch.delenv("EAGLE_PLAN")
    with pytest.raises(TypeError, match=r"eagle\.Graph\.build: plan= takes True, False or None"):
        eagle.Graph().add_node(eagle.copy(x, into=np.zeros(4))).build(plan="yes")


def test_read_after_tells_a_later_pass_which_stores_are_dead(monkeypatch):
    x = np.arange(4.0)
    g = built(chain, x, 6, plan=True, monkeypatch=monkeypatch)
    analysis, nodes = g._analysis, extend.view(g).nodes
    outputs = [node.planes()[-1][1] for node in nodes]
    assert [analysis.read_after(out, i) for i, out in enumerate(outputs)] == [True] * 6  # each read next
    assert [analysis.read_after(out, i + 1) for i, out in enumerate(outputs[:-1])] == [False] * 5
    assert analysis.read_after(outputs[-1], 99)  # the result: read after the run
    assert analysis.read_after(x, 99)  # an argument too


@eagle.Graph.builder
def peeking(x, seen):
    g = eagle.Graph()
    t = shift(x, 1.0)
    # a Python step that reads the temporary through its closure, not only through its planes
    g.add_node(eagle.graph.opaque(lambda: np.copyto(seen, t), reads={"t": t}, writes={"seen": seen}))
    u = scale(shift(t, 2.0), 3.0)
    g.result = shift(u, 0.0)
    return g


def test_a_temporary_a_python_step_closes_over_keeps_its_array(monkeypatch):
    x, seen = np.arange(6.0), np.zeros(6)
    g = built(peeking, x, seen, plan=True, monkeypatch=monkeypatch)
    g()
    assert seen.tolist() == (x + 1.0).tolist()
    assert g().tolist() == (3.0 * (x + 3.0)).tolist()
    assert len(g._analysis.temporaries) == 2  # shift(t, 2.0) and scale(...): the closure's t is not one


@pytest.mark.parametrize("team", [1, 2, 4])
def test_shared_storage_gives_the_same_bits_on_any_team(team, monkeypatch):
    from eagle import _core

    x = np.sin(np.arange(50_000.0))  # many blocks: block-fused runs cross the shared storage
    want = [built(chain, x, 40, plan=False, monkeypatch=monkeypatch)(),
            built(mixed, x, np.zeros(x.size), plan=False, monkeypatch=monkeypatch)()]
    graphs = [built(chain, x, 40, plan=True, monkeypatch=monkeypatch),
              built(mixed, x, np.zeros(x.size), plan=True, monkeypatch=monkeypatch)]
    before = _core.num_threads()
    _core.set_num_threads(team)
    try:
        assert [g().tobytes() for g in graphs] == [w.tobytes() for w in want]
    finally:
        _core.set_num_threads(before)


@eagle.Graph.builder
def halves(x):
    g = eagle.Graph()
    t = scale(shift(x, 1.0), 2.0)
    g.result = t[:3]  # a view of a kernel's output: its array is the user's
    return g


def test_a_result_that_views_a_temporary_keeps_its_array(monkeypatch):
    x = np.arange(6.0)
    g = built(halves, x, plan=True, monkeypatch=monkeypatch)
    assert g().tolist() == ((x[:3] + 1.0) * 2.0).tolist()
    assert not any(np.shares_memory(g.result, t) for t in g._temporaries)


@eagle.Graph.builder
def bodies(x, flag, mode):
    """Temporaries at the top level, inside a capped loop's body and inside match arms."""
    g = eagle.Graph()
    t = shift(scale(x, 2.0), 1.0)
    for _ in range(4):
        if not flag:
            break
        a = scale(t, 1.0001)
        b = shift(a, 0.25)
        c = scale(b, 0.999)
        t = shift(c, 0.5)
        positive(t, flag)
    match mode:
        case 0:
            t = shift(scale(shift(t, 1.0), 2.0), 3.0)
        case _:
            t = scale(shift(scale(t, 1.0), 2.0), 3.0)
    g.result = scale(t, 1.0)
    return g


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("fuse", ["1", "0"])
def test_temporaries_inside_bodies_share_storage(mode, fuse, monkeypatch):
    """A loop body's temporaries (written each turn before they are read) share storage over the
    body's order, and with the top level's; the arms' too; the bits stay the unplanned ones."""
    monkeypatch.setenv("EAGLE_FUSE", fuse)
    x = np.linspace(0.0, 1.0, 32)
    graphs = [built(bodies, x, np.ones(1, np.uint32), np.full(1, mode, np.uint32), plan=p,
                    monkeypatch=monkeypatch) for p in (True, False)]
    planned, unplanned = graphs
    assert len(planned._temporaries) == len(unplanned._temporaries) == 9
    # the argument, the result, the flag and the mode, then the nine temporaries: in three
    # storages planned (five when the body's were planned at the loop's one position), nine not
    assert (len(storage(planned)), len(storage(unplanned))) == (7, 13)
    for g in graphs:
        extend.state(g)["names"].arguments["flag"][:] = 1
    assert planned().tobytes() == unplanned().tobytes()
    extend.state(planned)["names"].arguments["flag"][:] = 1
    interpreted = np.asarray(interpret(planned, 1)).copy()
    extend.state(planned)["names"].arguments["flag"][:] = 1
    assert np.asarray(planned()).tobytes() == interpreted.tobytes()


def test_a_value_a_loop_turn_carries_is_planned_around_the_loop(monkeypatch):
    """The carried ``t`` of ``looped`` (written before the loop, read each turn before the body
    writes it) is planned at the top level, where the loop is one position: the body's ``u`` may
    not take its storage."""
    g = built(looped, np.linspace(0.0, 3.0, 32), np.ones(1, np.uint32), plan=True, monkeypatch=monkeypatch)
    loop = next(top for top in extend.view(g).nodes if top.bodies())
    scale_in_body = next(iter(loop.bodies()[0].nodes()))
    t, u = (a for _, a, _ in scale_in_body.planes())
    assert {id(t), id(u)} <= {id(a) for a in g._temporaries}
    assert not np.shares_memory(t, u)
