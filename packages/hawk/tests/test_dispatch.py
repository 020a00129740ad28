"""Per-sample match and dispatch groups: every policy gives the bits of the switch form and of the
reference evaluator, on any thread count, at any logical size; what a policy cannot run is refused
by name.  tests/gpu/test_dispatch_gpu.py runs the same kernels on the device."""

from __future__ import annotations

import re

import numpy as np
import pytest

import eagle
import eagle.testing
import hawk
from hawk import Int32, Mutable, Param, Scalar, Table, UInt32

POLICIES = ("switch", "predicated", "segmented")


@hawk.struct
class Photon:
    pos: hawk.vec3
    weight: Scalar


@hawk.kernel
def shade(p: Photon, m: Int32, hits: Mutable[Scalar], seed: Param[UInt32]) -> Scalar:
    """Four arms of different cost, `case 1 | 2`, a default arm; a vector local, a struct's
    fields, a Mutable written in some arms only, random draws in arms."""
    v = p.pos
    y = p.weight
    match hawk.dispatch(m, "material"):
        case 0:
            y = y * 0.5
        case 1 | 2:
            y = hawk.math.sin(y) + hawk.random.uniform(seed, 1)
            v = v * y
            hits = hits + 1.0
        case 3:
            r = hawk.math.sqrt(hawk.math.abs(y) + 1.0)
            y = hawk.math.exp(hawk.math.cos(y) * r) + hawk.math.log1p(r) * hawk.math.tanh(y)
            v = hawk.cross(v, hawk.vec3(1.0, 2.0, r))
            hits = hits + hawk.random.normal(seed, 2)
        case 5:
            y = hawk.math.atan2(y, 1.0 + hawk.length(v))
        case _:
            y = -y
    return y + hawk.dot(v, v)


@hawk.kernel
def tallied(x: Scalar, m: Int32) -> Scalar:
    """A plain match: no group; no arm for a selector no case holds."""
    y = x
    match m:
        case 0:
            y = x + 1.0
        case 2 | 4:
            y = x * 3.0
    return y


@hawk.kernel
def looped(x: Scalar, m: Int32, k: Param[Int32]) -> Scalar:
    y = x
    match hawk.dispatch(m, "walk"):
        case 0:
            for _ in range(k):
                y = y * 0.5 + 1.0
        case 1:
            y = y - 1.0
    return y


def inputs(n: int, seed: int = 1) -> tuple[Photon, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    photon = Photon(pos=rng.normal(size=(3, n)), weight=rng.normal(size=n))
    return photon, rng.integers(-1, 7, n).astype(np.int32), rng.normal(size=n)


def run(policy: str, n: int, *, logical: int | None = None, skip: np.ndarray | None = None,
        threads: int | None = None, monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[np.ndarray, ...]:
    photon, m, hits = inputs(n)
    out = np.full(n, -7.0)
    bound = shade.plan(photon, m, hits, np.uint32(9), buffer=out)
    bound = bound.with_dispatch({"material": policy}, skip=skip)
    g = eagle.Graph().add(bound).build()
    if logical is not None:
        g.set_logical_size(logical)
    if threads is not None:
        monkeypatch.setenv("EAGLE_NUM_THREADS", str(threads))
        eagle.extend.set_num_threads(threads)
    g.launch()
    return out, hits


def reference(n: int) -> tuple[np.ndarray, np.ndarray]:
    photon, m, hits = inputs(n)
    return shade.reference(photon, m, hits, np.uint32(9)), hits


N = 5000  # more than one block of samples


@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_gives_the_bits_of_the_reference(policy):
    want = reference(N)
    got = run(policy, N)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(got, want, strict=True))


@pytest.mark.parametrize("policy", POLICIES)
def test_the_same_bits_on_one_and_two_threads(policy, monkeypatch):
    before = eagle.extend.num_threads()
    try:
        one = run(policy, N, threads=1, monkeypatch=monkeypatch)
        two = run(policy, N, threads=2, monkeypatch=monkeypatch)
    finally:
        eagle.extend.set_num_threads(before)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(one, two, strict=True))


def test_a_plain_match_runs_no_arm_where_no_case_holds():
    x, m = np.arange(6.0), np.array([0, 1, 2, 3, 4, -1], np.int32)
    assert tallied(x, m).tolist() == [1.0, 1.0, 6.0, 3.0, 12.0, 5.0]
    assert tallied.reference(x, m).tobytes() == tallied(x, m).tobytes()
    assert tallied.plan(x, m).dispatch_groups() == {}


def test_the_groups_and_their_selector_plane():
    photon, m, hits = inputs(8)
    bound = shade.plan(photon, m, hits, np.uint32(9))
    (group,) = bound.dispatch_groups().values()
    assert (group.name, group.policy, group.running) == ("material", "auto", "switch")
    assert group.arms == (0, (1, 2), 3, 5, None)
    assert group.selector is m
    split = bound.with_dispatch({"material": "segmented"})
    assert split.dispatch_groups()["material"].running == "segmented"
    assert bound.with_dispatch({"material": "switch"}) is bound  # the code it runs already


@pytest.mark.parametrize("logical", [0, 1, 777, 4097])
def test_segmented_runs_the_first_samples_of_a_logical_size(logical):
    photon, m, hits = inputs(N)
    out = np.full(N, -7.0)
    want = shade.reference(photon, m, hits.copy(), np.uint32(9))
    g = eagle.Graph().add(shade.plan(photon, m, hits, np.uint32(9), buffer=out)
                          .with_dispatch({"material": "segmented"})).build()
    for size in (N, logical, 123, logical):  # counts change between launches: no new lowering
        out[:] = -7.0
        g.set_logical_size(size)
        g.launch()
        assert out[:size].tobytes() == want[:size].tobytes()
        assert (out[size:] == -7.0).all()


def test_segmented_leaves_out_the_samples_skip_marks():
    photon, m, hits = inputs(N)
    skip = (np.arange(N) % 3 == 0).astype(np.uint8)
    kept = hits.copy()
    out = np.full(N, -7.0)
    want_hits = hits.copy()
    want = shade.reference(photon, m, want_hits, np.uint32(9))
    bound = shade.plan(photon, m, hits, np.uint32(9), buffer=out).with_dispatch({"material": "segmented"},
                                                                               skip=skip)
    assert ("skip", skip, "read") in bound.planes()
    eagle.Graph().add(bound).build().launch()
    live = skip == 0
    assert out[live].tobytes() == want[live].tobytes() and (out[~live] == -7.0).all()
    assert hits[live].tobytes() == want_hits[live].tobytes()
    assert hits[~live].tobytes() == kept[~live].tobytes()
    for policy in ("switch", "predicated"):  # skip changes nothing: the caller masks
        plain = shade.plan(photon, m, hits, np.uint32(9)).with_dispatch({"material": policy})
        assert plain.with_dispatch({"material": policy}, skip=skip) is plain


def test_an_eager_call_of_an_authors_policy():
    @hawk.kernel
    def split(x: Scalar, m: Int32) -> Scalar:
        y = x
        match hawk.dispatch(m, "g", policy="segmented"):
            case 0:
                y = x + 1.0
            case _:
                y = x * 2.0
        return y

    x, m = np.arange(5000.0), (np.arange(5000) % 3).astype(np.int32)
    assert split(x, m).tobytes() == split.reference(x, m).tobytes()
    bound = split.plan(x, m)
    assert bound.split is not None and bound.with_dispatch({"g": "switch"}) is bound  # the author's stays


@pytest.mark.parametrize("policy", ["switch", "segmented"])
def test_an_arm_with_a_loop_runs_switch_or_segmented(policy):
    x, m = np.linspace(-1, 1, 3000), (np.arange(3000) % 3).astype(np.int32)
    bound = looped.plan(x, m, 5).with_dispatch({"walk": policy})
    eagle.Graph().add(bound).build().launch()
    assert bound.outputs[0].tobytes() == looped.reference(x, m, 5).tobytes()


def test_a_graph_is_held_to_the_reference_interpreter():
    photon, m, hits = inputs(3000)
    skip = (np.arange(3000) % 5 == 2).astype(np.uint8)
    for policy, skipped in [*((p, None) for p in POLICIES), ("segmented", skip)]:
        bound = shade.plan(photon, m, hits, np.uint32(9)).with_dispatch({"material": policy}, skip=skipped)
        g = eagle.Graph().add(bound, name="shade").build()
        eagle.testing.check(g, 2)


# --------------------------------------------------------------------- Graph.build(dispatch=)


def test_build_dispatch_forces_the_auto_groups_and_says_what_ran():
    photon, m, hits = inputs(N)
    want = reference(N)
    for dispatch, ran in ((None, "switch"), ("switch", "switch"), ("predicated", "predicated"),
                          ({"material": "predicated"}, "predicated")):
        _, _, hits = inputs(N)
        bound = shade.plan(photon, m, hits, np.uint32(9))
        g = eagle.Graph().add(bound).build(dispatch=dispatch)
        assert g.dispatch == {"material": ran}
        g.launch()
        assert bound.outputs[0].tobytes() == want[0].tobytes() and hits.tobytes() == want[1].tobytes()
    split = shade.plan(photon, m, hits, np.uint32(9)).with_dispatch({"material": "segmented"})
    assert eagle.Graph().add(split).build().dispatch == {"material": "segmented"}  # None keeps it


@hawk.kernel
def two(x: Scalar, m: Int32, k: Int32) -> Scalar:
    y = x
    match hawk.dispatch(m, "first"):
        case 0:
            y = y + 1.0
    match hawk.dispatch(k, "second"):
        case 1:
            y = y * 3.0
    return y


def test_a_choice_names_some_groups_and_keeps_the_others_as_they_run():
    x, m, k = np.arange(6.0), (np.arange(6) % 2).astype(np.int32), (np.arange(6) % 3).astype(np.int32)
    bound = two.plan(x, m, k).with_dispatch({"first": "predicated"}).with_dispatch({"second": "segmented"})
    assert {g.name: g.running for g in bound.dispatch_groups().values()} == {"first": "predicated",
                                                                               "second": "segmented"}
    g = eagle.Graph().add(bound).build(dispatch={"second": "switch"})
    assert g.dispatch == {"first": "predicated", "second": "switch"}
    g.launch()
    assert bound.outputs[0].tobytes() == two.reference(x, m, k).tobytes()  # the outputs are kept
    with pytest.raises(ValueError, match=r"groups 'first', 'second' would all split the samples"):
        bound.with_dispatch({"first": "segmented"})


def test_build_never_changes_an_authors_policy():
    @hawk.kernel
    def fixed(x: Scalar, m: Int32) -> Scalar:
        y = x
        match hawk.dispatch(m, "fixed", policy="predicated"):
            case 0:
                y = x + 1.0
        return y

    x, m = np.arange(4.0), np.array([0, 1, 0, 1], np.int32)
    g = eagle.Graph().add(fixed.plan(x, m)).build(dispatch={"fixed": "switch"})
    assert g.dispatch == {"fixed": "predicated"}


def test_build_dispatch_reaches_the_plans_of_an_until_done_body():
    x, m = np.zeros(10), (np.arange(10) % 2).astype(np.int32)
    done = np.zeros(10, np.uint8)

    @hawk.kernel
    def step(x: Mutable[Scalar], m: Int32, done: Mutable[UInt32]):
        match hawk.dispatch(m, "step"):
            case 0:
                x = x + 1.0
            case _:
                x = x + 2.0
        if x > 5.0:
            done = hawk.math.uint32(1)

    done = np.zeros(10, np.uint32)
    runner = eagle.until_done([step.plan(x, m, done)], terminated=done, max_steps=100)
    g = eagle.Graph().add_node(runner).build(dispatch="predicated")
    assert g.dispatch == {"step": "predicated"}
    g.launch()
    assert x.tolist() == [6.0, 6.0] * 5


def test_build_dispatch_refusals_name_what_to_change():
    photon, m, hits = inputs(8)
    g = eagle.Graph().add(shade.plan(photon, m, hits, np.uint32(9)))
    with pytest.raises(ValueError, match=re.escape(
            "eagle.Graph.build: dispatch='segmented' splits kernels as a run goes; a built graph is one "
            "structure: use 'switch' or 'predicated', or eagle.simulate(..., dispatch='segmented')")):
        g.build(dispatch="segmented")
    with pytest.raises(ValueError, match=r"^eagle\.Graph\.build: dispatch=\{'material': 'auto'\} splits"):
        g.build(dispatch={"material": "auto"})
    with pytest.raises(ValueError, match=re.escape(
            "eagle.Graph.build: dispatch names group 'metal', which no kernel of the graph declares; its "
            "groups are 'material'")):
        g.build(dispatch={"metal": "switch"})
    assert g.build(dispatch="switch").dispatch == {"material": "switch"}  # the refusals left it as it was


# ------------------------------------------------------------------------------ refusals


def test_with_dispatch_refuses_an_unknown_group_or_policy():
    photon, m, hits = inputs(8)
    bound = shade.plan(photon, m, hits, np.uint32(9))
    with pytest.raises(ValueError, match=re.escape(
            "eagle.plan.BoundPlan.with_dispatch: plan 'shade' has no dispatch group 'metal'; its groups are "
            "'material'")):
        bound.with_dispatch({"metal": "switch"})
    with pytest.raises(ValueError, match=r"^eagle\.plan\.BoundPlan\.with_dispatch: plan 'shade': dispatch "
                                         r"group 'material': policy 'fast' is not one of"):
        bound.with_dispatch({"material": "fast"})


def test_predicated_refuses_an_arm_that_could_trap():
    @hawk.kernel
    def reads(x: Scalar, m: Int32, t: Table) -> Scalar:
        y = x
        match hawk.dispatch(m, "lookup"):
            case 0:
                y = t[hawk.sample()]
            case _:
                y = x
        return y

    x, m, t = np.ones(4), np.zeros(4, np.int32), np.ones(4)
    with pytest.raises(hawk.KernelSyntaxError, match=re.escape(
            "hawk.kernel: reads: dispatch group 'lookup': the arm at line ")) as err:
        reads.plan(x, m, t).with_dispatch({"lookup": "predicated"})
    assert "holds a checked Table read" in str(err.value) and 'use policy="switch"' in str(err.value)
    with pytest.raises(hawk.KernelSyntaxError, match=r"holds a loop"):
        looped.plan(x, m, 3).with_dispatch({"walk": "predicated"})

    def divides(x: Int32, m: Int32) -> Int32:
        y = x
        match hawk.dispatch(m, "div", policy="predicated"):  # the author's: refused as it is decorated
            case 0:
                y = 7 // x
        return y

    with pytest.raises(hawk.KernelSyntaxError, match=r"'div': the arm at line \d+ holds an integer division"):
        hawk.kernel(divides)


def test_segmented_refuses_a_selector_it_cannot_partition_by():
    @hawk.kernel
    def computed(x: Scalar) -> Scalar:
        y = x
        match hawk.dispatch(hawk.math.int32(x), "computed"):
            case 0:
                y = x + 1.0
        return y

    with pytest.raises(ValueError, match=re.escape(
            "eagle.plan.BoundPlan.with_dispatch: plan 'computed': dispatch group 'computed' (line ")) as err:
        computed.plan(np.ones(4)).with_dispatch({"computed": "segmented"})
    assert "its selector is computed in the kernel" in str(err.value)
    assert 'use policy "switch" or "predicated"' in str(err.value)

    @hawk.kernel
    def summed(x: Scalar, m: Int32, total: Mutable[Scalar]) -> Scalar:
        total = hawk.sum(x)
        y = x
        match hawk.dispatch(m, "summed"):
            case 0:
                y = x + 1.0
        return y

    with pytest.raises(ValueError, match=r"'summed' \(line \d+\) cannot run \"segmented\": the kernel "
                                         r"reduces"):
        summed.plan(np.ones(4), np.zeros(4, np.int32), np.zeros(1)).with_dispatch({"summed": "segmented"})


def test_the_match_syntax_refusals_name_the_line():
    def refused(source_fn, pattern):
        with pytest.raises(hawk.KernelSyntaxError, match=pattern):
            hawk.kernel(source_fn)

    def floats(x: Scalar, m: Int32) -> Scalar:
        y = x
        match m:
            case 1.5:
                y = x
        return y

    def guarded(x: Scalar, m: Int32) -> Scalar:
        y = x
        match m:
            case 0 if x > 0.0:
                y = x
        return y

    def twice(x: Scalar, m: Int32) -> Scalar:
        y = x
        match hawk.dispatch(m, "g"):
            case 0:
                y = x
        match hawk.dispatch(m, "g"):
            case 0:
                y = x + 1.0
        return y

    def float_selector(x: Scalar) -> Scalar:
        y = x
        match x:
            case 0:
                y = x
        return y

    def bad_policy(x: Scalar, m: Int32) -> Scalar:
        y = x
        match hawk.dispatch(m, "g", policy="fast"):
            case 0:
                y = x
        return y

    refused(floats, r"the pattern `1\.5` is not in hawk")
    refused(guarded, r"has no guard")
    refused(twice, r"dispatch group 'g' is declared again \(first at line \d+\)")
    refused(float_selector, r"the selector of a match is an integer")
    refused(bad_policy, r"policy 'fast' is not one of")


@hawk.kernel
def advance(x: Mutable[Scalar], m: Int32, done: Mutable[UInt32]):
    match hawk.dispatch(m, "advance"):
        case 0:
            x = x + 1.0
        case 1:
            x = x + hawk.math.sin(x) + 2.0
        case _:
            x = x * 1.5 + 0.25
    if x > 50.0:
        done = hawk.math.uint32(1)


@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_steps_an_until_done_loop_to_the_same_bits(policy):
    """A split step in until_done with skip=terminated: finished samples never run (eagle.simulate
    passes the loop's mark plane instead, so a sample that finishes within a step runs it out)."""
    rng = np.random.default_rng(0)
    m, x0 = rng.integers(0, 4, N).astype(np.int32), rng.random(N)
    want, done = x0.copy(), np.zeros(N, np.uint32)
    steps = 0
    while not done.all():  # the loop in Python, a sample stepping until it is done
        live = done == 0
        x, d = want.copy(), done.copy()
        advance.reference(x, m, d)
        want[live], done[live] = x[live], d[live]
        steps += 1
    x, done = x0.copy(), np.zeros(N, np.uint32)
    bound = advance.plan(x, m, done).with_dispatch({"advance": policy}, skip=done)
    assert eagle.until_done([bound], terminated=done, max_steps=1000).run() == eagle.Steps(steps, 0)
    assert x.tobytes() == want.tobytes()


def test_segmented_refuses_a_selector_the_kernel_assigns():
    @hawk.kernel
    def rebound(x: Scalar, m: Mutable[Int32]) -> Scalar:
        y = x
        match hawk.dispatch(m, "rebound"):
            case 0:
                y = x + 1.0
                m = m + 1
        return y

    x, m = np.ones(4), np.zeros(4, np.int32)
    with pytest.raises(ValueError, match=r"its selector 'm' is assigned in the kernel"):
        rebound.plan(x, m).with_dispatch({"rebound": "segmented"})
    bound = rebound.plan(x, m).with_dispatch({"rebound": "predicated"})
    eagle.Graph().add(bound).build().launch()
    assert m.tolist() == [1, 1, 1, 1] and bound.outputs[0].tolist() == [2.0] * 4


def test_a_skip_plane_that_is_not_one_per_sample_is_refused():
    photon, m, hits = inputs(8)
    bound = shade.plan(photon, m, hits, np.uint32(9))
    with pytest.raises(ValueError, match=re.escape(
            "eagle.plan.BoundPlan.with_dispatch: plan 'shade': skip= is a contiguous integer or bool plane "
            "of 8 samples (a terminated plane); got a float64 array of shape (8,)")):
        bound.with_dispatch({"material": "segmented"}, skip=np.zeros(8))
