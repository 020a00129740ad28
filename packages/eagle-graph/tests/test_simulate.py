"""eagle.simulate on the CPU with eagle-graph alone: opaque steps compacted or not (the same bits, in
the user's order, on any thread count), a run that raises or is capped, the report and its picture,
the compaction and dispatch rules as pure functions, dispatch groups through the BoundPlan surface,
and every refusal with its message."""

from __future__ import annotations

import copy
import importlib.util

import numpy as np
import pytest

import eagle
from eagle import _core
from eagle._simulate import CHUNK, should_compact
from eagle._simulate_dispatch import MIX_SLOTS, Decision, Dispatch, choose
from eagle.native import Library, compile_library
from eagle.plan import BoundPlan, DispatchGroup, Plan

N = 20_000


def walkers(n: int = N) -> dict[str, np.ndarray]:
    """Sample i counts up to its own target, 1 to 100 steps (a long tail: few live past 60), doubling
    its two rows of y on the way, and keeps its id (a plane compaction moves)."""
    i = np.arange(n)
    target = np.where(i % 97 == 0, 100.0, (i * 7919 % 37 + 1)).astype(np.float64)
    return {"x": np.zeros(n), "target": target, "y": np.linspace(0.5, 1.5, 2 * n).reshape(2, n),
            "pid": i.astype(np.int64), "done": np.zeros(n, np.uint8)}


def opaque_step(s: dict[str, np.ndarray], calls: list[int] | None = None, fail_at: int = -1) -> eagle.node:
    def step() -> None:
        if calls is not None:
            calls.append(int((s["done"] == 0).sum()))
            if len(calls) == fail_at:
                raise RuntimeError("the step broke")
        live = s["done"] == 0
        s["x"][live] += 1.0
        s["y"][:, live] *= 2.0
        s["done"][:] = s["x"] >= s["target"]

    return eagle.opaque(step, reads={"target": s["target"], "pid": s["pid"], "done": s["done"]},
                        writes={"x": s["x"], "y": s["y"], "done": s["done"]})


def same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), name


def uncompacted(n: int = N, max_steps: int = 1000) -> tuple[dict[str, np.ndarray], eagle.SimulateResult]:
    s = walkers(n)
    return s, eagle.simulate(opaque_step(s), terminated=s["done"], max_steps=max_steps, compact=False)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_compaction_on_and_off_give_the_same_bits_in_the_users_order(threads):
    want, plain = uncompacted()
    assert plain.steps == 100 and plain.done and plain.report.compactions == []
    before = _core.num_threads()
    _core.set_num_threads(threads)
    try:
        s = walkers()
        calls: list[int] = []
        result = eagle.simulate(opaque_step(s, calls), terminated=s["done"], max_steps=1000, compact=True)
    finally:
        _core.set_num_threads(before)
    assert (result.steps, result.live) == (100, 0)
    same(s, want)
    np.testing.assert_array_equal(s["pid"], np.arange(N))  # every plane back in the user's order
    np.testing.assert_array_equal(s["x"], s["target"])
    assert set(result.state) == {"x", "y", "done"}  # the written planes, by name
    assert all(result.state[name] is s[name] for name in ("x", "y", "done"))  # the user's own arrays
    # compacted at chunk boundaries: the loop shrank to the live samples
    steps = [c.step for c in result.report.compactions]
    assert steps and all(step % CHUNK == 0 for step in steps)
    assert all(c.after < c.before for c in result.report.compactions)
    done = result.report.compactions
    assert [c.before for c in done[1:]] == [c.after for c in done[:-1]]


def test_a_step_that_raises_leaves_the_arrays_in_the_users_order():
    s = walkers()
    calls: list[int] = []
    with pytest.raises(RuntimeError, match="the step broke"):
        eagle.simulate(opaque_step(s, calls, fail_at=40), terminated=s["done"], max_steps=1000, compact=True)
    np.testing.assert_array_equal(s["pid"], np.arange(N))
    np.testing.assert_array_equal(s["target"], walkers()["target"])
    # 39 steps ran: each sample stopped at its target or at 39, in its own place
    np.testing.assert_array_equal(s["x"], np.minimum(s["target"], 39.0))
    np.testing.assert_array_equal(s["done"], (s["target"] <= 39.0).astype(np.uint8))


def test_max_steps_stops_the_run_and_says_samples_are_live():
    want, plain = uncompacted(max_steps=45)
    s = walkers()
    result = eagle.simulate(opaque_step(s), terminated=s["done"], max_steps=45, compact=True)
    assert result.steps == plain.steps == 45 and not result.done
    assert result.live == plain.live == int((s["target"] > 45).sum()) > 0
    same(s, want)
    assert result.report.live[-1] == (45, result.live)
    assert [step for step, _ in result.report.live] == [0, 16, 32, 45]


def test_the_report_says_what_ran_and_when():
    s = walkers()
    result = eagle.simulate(opaque_step(s), terminated=s["done"], max_steps=1000, compact=True)
    report = result.report
    assert report.live[0] == (0, N) and report.live[-1] == (100, 0) and report.steps == 100
    assert [step for step, _ in report.live] == [*range(0, 100, CHUNK), 100]
    lives = [live for _, live in report.live]
    assert lives == sorted(lives, reverse=True)
    assert lives[1:] == [int((s["target"] > step).sum()) for step, _ in report.live[1:]]
    assert set(report.seconds) == {"steps", "compaction", "decisions", "restore"}
    assert all(t >= 0.0 for t in report.seconds.values()) and report.seconds["compaction"] > 0.0
    assert report.seconds["compaction"] == pytest.approx(sum(c.seconds for c in report.compactions))
    first = report.compactions[0]
    assert (first.step, first.before, first.after) == (16, N, int((s["target"] > 16).sum()))
    assert report.dispatch == [] and report.policies() == {}


def test_auto_does_not_compact_an_opaque_step_and_says_why():
    want, _ = uncompacted()
    s = walkers()
    result = eagle.simulate(opaque_step(s), terminated=s["done"], max_steps=1000)
    assert result.report.compactions == []
    assert any("item 0 ('step') is an opaque node, which eagle cannot see inside" in note
               for note in result.report.notes)
    same(s, want)


def test_a_single_item_is_a_step_and_a_finished_batch_runs_no_steps():
    s = walkers(64)
    s["done"][:] = 1
    result = eagle.simulate(opaque_step(s), terminated=s["done"], max_steps=10, compact=True)
    assert (result.steps, result.live, result.report.live) == (0, 0, [(0, 0)])


# ------------------------------------------------------------------ the rules, as pure functions


def test_the_compaction_rule():
    big = 100 * eagle.BLOCK
    gather = 1e-4 + big * 1e-9  # the fixed cost and a gather of every slot
    assert should_compact(big, big // 4, gather, 1e-9, 1e-4)  # the waste has paid for a gather
    assert not should_compact(big, big // 4, 0.99 * gather, 1e-9, 1e-4)
    assert should_compact(big, big - 1, gather, 1e-9, 1e-4)  # however few finished, once repaid
    assert not should_compact(big, big, 1.0, 1e-9, 1e-4)  # none finished: nothing to gather
    # before the first compaction, the restore it commits the run to is owed too
    assert not should_compact(big, big // 4, gather, 1e-9, 1e-4, restore_seconds=1e-6)
    assert should_compact(big, big // 4, gather + 1e-6, 1e-9, 1e-4, restore_seconds=1e-6)
    # a small loop: the fixed cost dominates what its slots can waste
    assert not should_compact(200, 20, 2e-5, 1e-9, 5e-5)


def test_the_dispatch_rule_splits_at_15_percent_and_fuses_under_5():
    assert choose("switch", 1.0, 0.85) == "segmented"
    assert choose("switch", 1.0, 0.86) == "switch"
    assert choose("segmented", 1.0, 0.95) == "segmented"
    assert choose("segmented", 1.0, 0.9501) == "switch"
    assert choose("segmented", 1.0, 1.2) == "switch" and choose("switch", 1.0, 1.2) == "switch"


# ------------------------------------------------------------------ dispatch groups through BoundPlan

GROW_C = r"""
#include "eagle/eagle.h"

/* live samples: x += 1 (arm 0) or 2 (arm 1, sel[i] == 1); done = x >= target */
void grow(int64_t b, int64_t e, const eagle_arg *a)
{
    double *x = a[0].ptr;
    const double *target = a[1].ptr;
    const int32_t *sel = a[2].ptr;
    unsigned char *done = a[3].ptr;
    for (int64_t i = b; i < e; ++i) {
        x[i] += sel[i] == 1 ? 2.0 : 1.0;
        done[i] = x[i] >= target[i];
    }
}

/* the same values by two passes, one per arm: what a split group computes */
void grow_split(int64_t b, int64_t e, const eagle_arg *a)
{
    double *x = a[0].ptr;
    const double *target = a[1].ptr;
    const int32_t *sel = a[2].ptr;
    unsigned char *done = a[3].ptr;
    for (int arm = 0; arm < 2; ++arm)
        for (int64_t i = b; i < e; ++i)
            if ((sel[i] == 1) == arm)
                x[i] += arm ? 2.0 : 1.0;
    for (int64_t i = b; i < e; ++i)
        done[i] = x[i] >= target[i];
}
"""


@pytest.fixture(scope="module")
def kernels() -> Library:
    return Library(compile_library(GROW_C, name="test_simulate_grow"))


class Grouped(BoundPlan):
    """A native plan that declares one dispatch group, "arm", over its selector plane: each policy runs
    a kernel of its own (the same values), and every with_dispatch call is recorded."""

    def __init__(self, plans: dict[str, Plan], args: list, policy: str, chosen: list) -> None:
        super().__init__(plans["switch"], args)
        self.plans, self.policy, self.chosen = plans, policy, chosen

    def dispatch_groups(self) -> dict[str, DispatchGroup]:
        return {"arm": DispatchGroup("arm", self.policy, (0, None), self.args[2])}

    def with_dispatch(self, policies, *, skip=None):
        super().with_dispatch(policies, skip=skip)
        policy = policies["arm"]
        self.chosen.append(policy)
        new = copy.copy(self)
        new.plan = self.plans["segmented" if policy == "segmented" else "switch"]
        return new


def grouped(kernels: Library, n: int, policy: str = "auto") -> tuple[Grouped, dict[str, np.ndarray], list]:
    params = [("x", "readwrite"), ("target", "read"), ("sel", "read"), ("done", "readwrite")]
    plans = {"switch": Plan(kernels.kernel("grow"), params, name="grow"),
             "segmented": Plan(kernels.kernel("grow_split"), params, name="grow")}
    i = np.arange(n)
    s = {"x": np.zeros(n), "target": (i * 31 % 200 + 1).astype(np.float64),
         "sel": (i % 3 == 0).astype(np.int32), "done": np.zeros(n, np.uint8)}
    chosen: list = []
    return Grouped(plans, [s["x"], s["target"], s["sel"], s["done"]], policy, chosen), s, chosen


def test_an_arm_mix_is_counted_over_evenly_spaced_live_slots(kernels):
    """In a loop of more than MIX_SLOTS slots the mix is counted over every k-th slot: close to the
    whole loop's, of about MIX_SLOTS samples; finished samples are left out, as in a small loop."""
    n = 5 * MIX_SLOTS + 3
    plan, s, _ = grouped(kernels, n)
    s["done"][n // 2:] = 1  # the second half finished: its selectors must not count
    s["sel"][:] = np.arange(n) % 4 == 0  # a quarter of the live samples take "case _"
    choices = Dispatch([plan], None, s["done"])
    group = plan.dispatch_groups()["arm"]
    mix, counted = choices._mix(group, n)
    assert MIX_SLOTS // 2 - 2 <= counted <= MIX_SLOTS // 2 + 2
    np.testing.assert_allclose(mix, [0.75, 0.25], atol=0.01)
    small, all_live = choices._mix(group, 4000)
    assert all_live == 4000 and small.tolist() == [0.75, 0.25]


@pytest.mark.parametrize("dispatch", [None, "switch", "segmented", {"arm": "segmented"}, "predicated"])
def test_every_dispatch_gives_the_same_bits(kernels, dispatch):
    plan, want, _ = grouped(kernels, 5000)
    eagle.simulate(plan, terminated=want["done"], max_steps=1000, dispatch="switch")
    plan, s, chosen = grouped(kernels, 5000)
    result = eagle.simulate(plan, terminated=s["done"], max_steps=1000, dispatch=dispatch)
    same(s, want)
    decisions = result.report.dispatch
    assert decisions[0].step == 0 and decisions[0].group == "arm"
    if dispatch is None:
        assert decisions[0] == Decision(0, "arm", "switch", "start fused")
        assert chosen[0] == "segmented"  # can it split? (it can: an "auto" group) ...
        assert "segmented" in chosen[1:]  # ... then the split form was measured (a probe) ...
        assert len(set(chosen[1:])) == len(chosen[1:])  # ... and each runner built once, then reused
    else:
        forced = dispatch if isinstance(dispatch, str) else dispatch["arm"]
        assert decisions == [Decision(0, "arm", forced, "dispatch=")] and chosen == [forced]


class Unsplittable(Grouped):
    """A group whose split form its plan refuses, as hawk refuses one with checked Table reads."""

    def with_dispatch(self, policies, *, skip=None):
        if policies.get("arm") == "segmented":
            raise ValueError("eagle.plan.BoundPlan.with_dispatch: plan 'grow': dispatch group 'arm' cannot "
                             "run \"segmented\" here")
        return super().with_dispatch(policies, skip=skip)


def test_a_group_its_plan_cannot_split_stays_fused_and_the_report_says_why(kernels):
    plan, s, chosen = grouped(kernels, 500)
    plan = Unsplittable(plan.plans, plan.args, "auto", chosen)
    result = eagle.simulate(plan, terminated=s["done"], max_steps=1000)
    assert result.done and result.report.dispatch == [Decision(0, "arm", "switch", "start fused")]
    assert result.report.notes[-1] == ("dispatch group 'arm' stays fused (\"switch\"): eagle.plan.BoundPlan."
                                       "with_dispatch: plan 'grow': dispatch group 'arm' cannot run "
                                       "\"segmented\" here")
    s["done"][:] = 0
    with pytest.raises(ValueError, match="cannot run \"segmented\" here"):  # forced: the plan's refusal
        eagle.simulate(plan, terminated=s["done"], max_steps=10, dispatch="segmented")


class Movable(Grouped):
    """The test kernels read only their own sample's values: moving samples keeps their bits."""

    def position_dependent(self) -> bool:
        return False


def test_no_compaction_comes_between_a_chunk_and_the_probe_it_is_compared_with(kernels):
    plan, want, _ = grouped(kernels, 4 * eagle.BLOCK)
    eagle.simulate(plan, terminated=want["done"], max_steps=1000, dispatch="switch", compact=False)
    plan, s, chosen = grouped(kernels, 4 * eagle.BLOCK)
    movable = Movable(plan.plans, plan.args, "auto", chosen)
    result = eagle.simulate(movable, terminated=s["done"], max_steps=1000, compact=True)
    same(s, want)
    probes = {d.step for d in result.report.dispatch if d.why == "probe"}
    assert probes and result.report.compactions
    assert not probes & {c.step for c in result.report.compactions}


def test_an_authors_policy_is_kept(kernels):
    plan, s, chosen = grouped(kernels, 500, policy="segmented")
    result = eagle.simulate(plan, terminated=s["done"], max_steps=1000, dispatch="switch")
    assert result.report.dispatch == [Decision(0, "arm", "segmented", "author")] and chosen == ["segmented"]
    with pytest.raises(ValueError, match=r"eagle.simulate: dispatch\['arm'\] = 'switch', but the kernel's "
                                         r"author chose 'segmented' for group 'arm', which dispatch= never "
                                         "overrides"):
        eagle.simulate(plan, terminated=s["done"], max_steps=10, dispatch={"arm": "switch"})


def test_the_auto_decision_follows_the_measured_times(kernels):
    """Dispatch fed chosen times: probe the split form, split when it is >= 15 % faster, stay while the
    gain holds, probe again when the estimate is stale, fuse when the gain falls under 5 %."""
    plan, s, _ = grouped(kernels, 100)
    choices = Dispatch([plan], None, s["done"])
    fused, split = (("arm", "switch"),), (("arm", "segmented"),)
    assert choices.assignment() == fused
    choices.observe(fused, 1.0, 16, 100, 16)
    assert choices.assignment() == split  # a probe of the split form
    choices.observe(split, 0.8, 16, 100, 32)
    assert choices.assignment() == split  # 20 % faster: split
    for step in range(48, 48 + 16 * 6, 16):
        choices.observe(split, 0.8, 16, 100, step)
        assert choices.assignment() == split
    choices.observe(split, 0.8, 16, 100, 144)  # the fused time is 8 chunks old: measure it again
    assert choices.assignment() == fused
    choices.observe(fused, 0.82, 16, 100, 160)  # the gain fell under 5 %: fuse
    assert choices.assignment() == fused
    assert [(d.step, d.policy, d.why) for d in choices.decisions] == [
        (0, "switch", "start fused"), (16, "segmented", "probe"), (32, "segmented", "measured"),
        (144, "switch", "probe"), (160, "switch", "measured")]


def test_an_estimate_from_a_loop_compaction_shrank_is_measured_again(kernels):
    plan, s, _ = grouped(kernels, 100)
    choices = Dispatch([plan], None, s["done"])
    fused, split = (("arm", "switch"),), (("arm", "segmented"),)
    choices.observe(fused, 1.0, 16, 100, 16)
    choices.observe(split, 0.5, 16, 100, 32)  # split, measured over 100 slots
    choices.observe(split, 0.15, 16, 30, 48)  # 100 -> 30 slots, the same time per slot: the fused
    assert choices.assignment() == split  # time still stands
    choices.observe(split, 0.05, 16, 10, 64)  # 100 -> 10 slots: more than eightfold, measure it again
    assert choices.assignment() == fused and choices.decisions[-1] == Decision(64, "arm", "switch", "probe")


def test_dispatch_refusals_name_the_group_or_the_policy(kernels):
    plan, s, _ = grouped(kernels, 100)
    with pytest.raises(ValueError, match=r"eagle.simulate: dispatch names group 'material', which no plan of "
                                         r"the step declares; its groups are 'arm'"):
        eagle.simulate(plan, terminated=s["done"], max_steps=10, dispatch={"material": "switch"})
    for bad in ("fast", {"arm": "fused"}):
        with pytest.raises(ValueError, match=r"eagle.simulate: dispatch(\['arm'\])? is '(fast|fused)', "
                                             "which is no dispatch policy; the policies are 'switch', "
                                             "'predicated'"):
            eagle.simulate(plan, terminated=s["done"], max_steps=10, dispatch=bad)
    with pytest.raises(TypeError, match=r"eagle.simulate: dispatch is None, a policy name"):
        eagle.simulate(plan, terminated=s["done"], max_steps=10, dispatch=["switch"])


# ------------------------------------------------------------------ compaction refusals


def test_a_native_plan_is_not_compacted_and_compact_true_is_refused_by_name(kernels):
    plan, s, _ = grouped(kernels, 6 * eagle.BLOCK)
    result = eagle.simulate(plan, terminated=s["done"], max_steps=1000)
    assert result.done and result.report.compactions == []
    assert any("item 0 ('grow'): kernel 'grow' depends on its sample's position" in note
               for note in result.report.notes)
    with pytest.raises(ValueError, match=r"eagle.simulate: compact=True, but item 0 \('grow'\): kernel "
                                         r"'grow' depends on its sample's position .* key draws by an id "
                                         r"plane, hawk.random.uniform\(seed, counter, sample=pid\); or pass "
                                         "compact=False"):
        eagle.simulate(plan, terminated=s["done"], max_steps=10, compact=True)


def test_overlapping_planes_are_refused_compaction_by_name():
    s = walkers(64)
    both = np.zeros((2, 64))
    node = eagle.opaque(lambda: s["done"].fill(1), reads={"rows": both, "first": both[0], "done": s["done"]},
                        writes={"done": s["done"]})
    with pytest.raises(ValueError, match=r"eagle.simulate: compact=True, but item 0 \('opaque'\) plane "
                                         r"'first' and item 0 \('opaque'\) plane 'rows' are overlapping"):
        eagle.simulate(node, terminated=s["done"], max_steps=10, compact=True)
    twice = {"a": both[0], "b": both[0:1][0], "done": s["done"]}
    same_twice = eagle.opaque(lambda: s["done"].fill(1), reads=twice, writes={"done": s["done"]})
    assert eagle.simulate(same_twice, terminated=s["done"], max_steps=10, compact=True).done  # one plane


def test_a_read_only_plane_is_refused_compaction_by_name():
    s = walkers(64)
    s["target"].setflags(write=False)
    with pytest.raises(ValueError, match=r"item 0 \('step'\) plane 'target' is not a contiguous, writable "
                                         "array"):
        eagle.simulate(opaque_step(s), terminated=s["done"], max_steps=10, compact=True)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_compact_is_true_false_or_auto(bad):
    s = walkers(8)
    with pytest.raises(ValueError, match=r"eagle.simulate: compact is True, False or \"auto\""):
        eagle.simulate(opaque_step(s), terminated=s["done"], max_steps=10, compact=bad)


def test_the_step_is_checked_as_until_done_checks_it():
    s = walkers(8)
    with pytest.raises(ValueError, match=r"eagle.until_done: max_steps must be a positive int"):
        eagle.simulate(opaque_step(s), terminated=s["done"], max_steps=0)


# ------------------------------------------------------------------ the picture


def test_the_report_draws_live_samples_and_policies(kernels):
    pytest.importorskip("matplotlib")
    if importlib.util.find_spec("eagle.viz") is None:
        pytest.skip("the picture is eagle-viz's")
    from matplotlib.figure import Figure

    s = walkers()
    report = eagle.simulate(opaque_step(s), terminated=s["done"], max_steps=1000, compact=True).report
    fig = report.plot()
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and ax.get_xlabel() == "steps"
    xs, _ = ax.lines[0].get_data()
    assert list(xs) == [step for step, _ in report.live]
    assert len([line for line in ax.lines if line.get_linestyle() == ":"]) == len(report.compactions) + 1
    plan, g, _ = grouped(kernels, 2000)
    grouped_report = eagle.simulate(plan, terminated=g["done"], max_steps=1000).report
    other = Figure()
    drawn = grouped_report.plot(ax=other.add_subplot())
    assert drawn is other
    labels = {t.get_text().strip() for t in other.axes[0].texts}
    assert labels == {"arm"}  # one band per group, coloured by policy


def test_without_eagle_viz_the_plot_says_what_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "eagle.viz", None)
    with pytest.raises(ImportError, match=r"eagle.SimulateReport.plot: pictures come from the eagle-viz"):
        eagle.SimulateReport(live=[(0, 1)]).plot()


# ------------------------------------------------------------------ the native gather itself


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int32, np.uint32])
@pytest.mark.parametrize("threads", [1, 2])
def test_the_gather_is_a_stable_partition_and_restore_its_inverse(dtype, threads):
    from eagle._compaction import Compactor

    n = 3 * eagle.BLOCK + 17
    rng = np.random.default_rng(5)
    done = (rng.random(n) < 0.6).astype(dtype)
    planes = [rng.normal(size=(2, n)), rng.integers(0, 2**15, n).astype(np.int16),
              rng.integers(0, 255, (3, n)).astype(np.uint8), (rng.normal(size=n) + 1j).astype(np.complex128)]
    before = [p.copy() for p in [*planes, done]]
    old = _core.num_threads()
    _core.set_num_threads(threads)
    try:
        moved = Compactor([*planes, done], done)
        live = moved.compact(n - 100)  # the last 100 slots stay where they are
        head = before[-1][:n - 100]
        order = np.concatenate([np.flatnonzero(head == 0), np.flatnonzero(head), np.arange(n - 100, n)])
        assert live == int((head == 0).sum())
        np.testing.assert_array_equal(moved.origin, order)
        for plane, was in zip([*planes, done], before, strict=True):
            assert plane.tobytes() == was[..., order].tobytes()
        moved.restore()
    finally:
        _core.set_num_threads(old)
    np.testing.assert_array_equal(moved.origin, np.arange(n))
    for plane, was in zip([*planes, done], before, strict=True):
        assert plane.tobytes() == was.tobytes()
