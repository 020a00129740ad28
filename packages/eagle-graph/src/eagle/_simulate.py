"""``eagle.simulate``: run a step until every sample is done, compacting and dispatching on the way.

The run is an ``until_done`` loop driven in chunks of 16 steps, each in as few calls of
``runner.run(max_steps=k)`` (one native call, or one CUDA graph launch, each) as keep a call's
fixed cost under a few percent of it: one call per chunk where steps are cheap, a call per step
where a step is dear.  After each call the host reads the live count and decides by measurement
whether to compact (gather the live samples to the front and shrink the loop with
``set_logical_size``, :mod:`eagle._compaction`); after each chunk, the policy of each ``"auto"``
dispatch group (:mod:`eagle._simulate_dispatch`) too.  Whatever happens, the planes are put
back in the user's sample order when the run ends, an error included.

The compaction rule (``compact="auto"``) is rent or buy.  Each call adds the time it spent on
finished slots, (slots finished, on average over the call) x steps x (its measured seconds per
slot and step), to what the loop has wasted since it last shrank; when that reaches the cost of
a gather of the loop's L slots, the loop compacts: the gather's fixed cost (the calls, measured
once by a gather of no slots) plus L x its seconds per slot (measured at each compaction,
predicted before the first from the bytes per sample and a one-off copy calibration), and before
the first compaction the restore it commits the run to.  A
finished slot is charged a live one's time: in a block of lanes with one live sample, the
finished ones run the arms too.  The fixed cost is what makes small loops wait long.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from eagle import _cuda
from eagle._arrays import on_device
from eagle._compaction import Compactor, copy_seconds_per_byte
from eagle._edges import same_view
from eagle._errors import EagleRuntimeError, EagleValueError
from eagle._foreign import producer_of, refuse_write
from eagle._kinds import Node
from eagle._log import simulate_log
from eagle._simulate_dispatch import Assignment, Dispatch, assigned
from eagle._simulate_report import Compaction, SimulateReport, SimulateResult
from eagle._stepping import UntilDone, host_values, loop, terminated_plane
from eagle._views import overlap
from eagle.plan import BoundPlan

API = "eagle.simulate"
#: Steps per chunk: one dispatch decision each.
CHUNK = 16
#: A chunk's steps go in calls of at least this long (a call and a look at the live count cost
#: tens of microseconds): one step a call where a step is dear, so a compaction follows it.
CALL_SECONDS = 2e-3
COMPACT = (True, False, "auto")


def simulate(step: Any, *, terminated: Any, max_steps: int, dispatch: str | Mapping[str, str] | None = None,
             compact: bool | str = "auto") -> SimulateResult:
    """Run ``step`` until every sample's ``terminated`` is set or ``max_steps`` steps have run,
    gathering the live samples to the front as samples finish (``compact``) and choosing the
    policy of each dispatch group (``dispatch``); the planes end in the user's sample order.

    ``step`` is what :func:`eagle.until_done` takes (a list of plans, captured opaque nodes and
    child graphs, or one of them).  ``compact``: ``"auto"`` compacts when the measured cost model
    says it pays and eagle can see that moving samples keeps every bit (hawk plans whose kernels do
    not read a sample's position); ``True`` compacts at every chunk in which samples finished
    (opaque and child nodes included: they must not depend on where a sample sits); ``False``
    never.  ``dispatch``: None keeps the authors' policies and decides the ``"auto"`` groups by
    measurement; a policy name or ``{group: policy}`` forces the ``"auto"`` groups.

    >>> x, done = np.array([5.0, 1.0, 3.0, 9.0]), np.zeros(4, np.uint8)
    >>> def halve():
    ...     np.multiply(x, 0.5, out=x, where=done == 0)
    ...     done[:] = x < 1.0
    >>> step = eagle.opaque(halve, reads={"done": done}, writes={"x": x, "done": done})
    >>> result = eagle.simulate(step, terminated=done, max_steps=100, compact=True)
    >>> result.steps, result.live, result.state["x"]
    (4, 0, array([0.625 , 0.5   , 0.75  , 0.5625]))
    """
    if compact not in COMPACT or not isinstance(compact, (bool, str)):
        raise EagleValueError(f"{API}: compact is True, False or \"auto\"; got {compact!r}")
    items = [step] if isinstance(step, (Node, BoundPlan)) or not isinstance(step, Sequence) else list(step)
    terminated = terminated_plane(terminated)
    base = loop(items, terminated=terminated, max_steps=max_steps, marks=_marks(terminated))
    report = SimulateReport()
    planes = _compactable(base, compact, report.notes)
    choices = Dispatch(items, dispatch, terminated, base.payload.marks)
    report.notes += choices.notes
    return _Run(items, base, planes, choices, report, int(max_steps)).go(compact)


def _marks(terminated: Any) -> Any:
    """The loop's mark plane (the samples finished before a run of plans, which the mask keeps),
    on terminated's side: a split dispatch group's skip plane, so a sample finished within a step
    is computed by every policy alike."""
    n = int(np.shape(terminated)[0])
    if on_device(terminated):
        return _cuda.zeros_like_device(terminated, (n,), np.uint8)
    return np.zeros(n, np.uint8)


# ----------------------------------------------------------------------------- which planes move


def _compactable(base: UntilDone, compact: bool | str, notes: list[str]) -> list[Any] | None:
    """The per-sample planes compaction moves (each once, terminated among them), or None where it
    must not compact: refused by name under ``compact=True``, said in ``notes`` under "auto"."""
    if compact is False:
        return None
    until = base.payload
    planes, blocker = _planes(until.items, until.terminated, until.samples, opaque_ok=compact is True)
    if blocker is None:
        return planes
    if compact is True:
        raise EagleValueError(f"{API}: compact=True, but {blocker}; or pass compact=False")
    notes.append(f"no compaction: {blocker}")
    return None


def _planes(items: list[Node], terminated: Any, n: int, opaque_ok: bool) -> tuple[list[Any], str | None]:
    """(the planes to move, None) or (_, why eagle cannot move them)."""
    moved: list[tuple[str, Any]] = [("terminated", terminated)]
    whole: list[tuple[str, str, Any]] = []
    for k, item in enumerate(items):
        label = f"item {k} ({item.default_label()!r})"
        if item.kind != "plan":
            if not opaque_ok:
                return [], (f"{label} is an {item.kind} node, which eagle cannot see inside to know that "
                            "moving samples keeps its bits; pass compact=True if it does not depend on a "
                            "sample's position")
        else:
            bound: BoundPlan = item.payload
            name = bound.plan.name
            if bound.position_dependent():
                return [], (f"{label}: kernel {name!r} depends on its sample's position (hawk.sample(), a "
                            "grid index, a draw keyed by the default sample=, or a native C kernel, given "
                            "the indices), so moving samples would change its bits: key draws by an id "
                            "plane, hawk.random.uniform(seed, counter, sample=pid)")
            tables = bound.whole_reads()
            if tables is None:
                return [], (f"{label}: eagle cannot tell which planes plan {name!r} reads whole (a Table), "
                            "which must not move")
            names = {id(a): pname for pname, a, _ in bound.planes()}
            whole += [(label, names.get(id(t), "?"), t) for t in tables]
        per_sample = [(f"{label} plane {pname!r}", a) for pname, a, _ in item.planes()
                      if np.ndim(a) and np.shape(a)[-1] == n and not any(a is t for *_, t in whole)]
        moved += per_sample
    unique, blocker = _distinct(moved)
    if blocker is None:
        blocker = next((f"{label} reads plane {pname!r} whole (a Table), and compaction would move it as a "
                        f"per-sample plane ({what}): pass a copy as the Table"
                        for label, pname, t in whole for what, a in unique if overlap(a, t)), None)
    return [a for _, a in unique], blocker


def _distinct(moved: list[tuple[str, Any]]) -> tuple[list[tuple[str, Any]], str | None]:
    """Each plane once (the same view twice is one plane), refused where two overlap otherwise or
    one cannot be moved in place."""
    unique: list[tuple[str, Any]] = []
    for what, a in moved:
        if any(a is b or same_view(a, b) for _, b in unique):
            continue
        clash = next((other for other, b in unique if overlap(a, b)), None)
        if clash is not None:
            return unique, (f"{what} and {clash} are overlapping views of the same memory, which a gather "
                            "would move twice: pass separate arrays")
        if producer_of(a) is not None:  # another library's memory: a tensor autograd tracks, a JAX array
            try:
                refuse_write(a, what, "would be moved in place by compaction")
            except ValueError as err:
                return unique, str(err)
        if not _cuda.contiguous(a) or (not on_device(a) and not _writable_ndarray(a)):
            return unique, (f"{what} is not a contiguous, writable array, which compaction moves in place: "
                            "pass np.ascontiguousarray(a) (a writable copy)")
        unique.append((what, a))
    return unique, None


def _writable_ndarray(a: Any) -> bool:
    return isinstance(a, np.ndarray) and bool(a.flags["WRITEABLE"])


# ----------------------------------------------------------------------------- the run


def should_compact(slots: int, live: int, wasted_seconds: float, gather_seconds_per_slot: float,
                   gather_fixed_seconds: float, restore_seconds: float = 0.0) -> bool:
    """The ``compact="auto"`` rule, rent or buy: compact when the time spent on finished slots
    since the loop last shrank, ``wasted_seconds``, has reached what a gather of its ``slots``
    costs now (its fixed cost and its cost per slot over all of them), and before the first
    compaction, the restore that one commits the run to (``restore_seconds``).  Waiting longer
    keeps paying for the finished slots; compacting sooner pays for a gather that has not yet
    earned its keep.  Balancing the two is the ski-rental rule, which for one purchase costs at
    most twice the best; here it aims at that balance, looked at after each call.

    >>> from eagle._simulate import should_compact
    >>> should_compact(100_000, 40_000, 1e-3, 2e-9, 5e-5)  # finished slots cost more than a gather
    True
    >>> should_compact(100_000, 99_000, 1e-4, 2e-9, 5e-5)  # a few finished: not yet repaid
    False
    >>> should_compact(100_000, 40_000, 1e-3, 2e-9, 5e-5, restore_seconds=2e-3)  # nor the restore
    False
    >>> should_compact(200, 20, 2e-5, 2e-9, 5e-5)  # a small loop: the gather's fixed cost dominates
    False
    >>> should_compact(100_000, 100_000, 1.0, 2e-9, 5e-5)  # nothing to gather
    False
    """
    gather = gather_fixed_seconds + slots * gather_seconds_per_slot
    return live < slots and wasted_seconds >= gather + restore_seconds


class _Run:
    """One ``simulate`` run: the chunks, the compactions, the runners per dispatch assignment."""

    def __init__(self, items: list[Any], base: UntilDone, planes: list[Any] | None, choices: Dispatch,
                 report: SimulateReport, max_steps: int) -> None:
        self.items, self.base, self.choices, self.report = items, base, choices, report
        self.max_steps = max_steps
        self.terminated = base.payload.terminated
        self.n = base.payload.samples
        self.compactor = Compactor(planes, self.terminated) if planes is not None else None
        self.runners: dict[Assignment, UntilDone] = {}
        self.sizes: dict[Assignment, int] = {}  # the logical size each runner was last given
        self.slots = self.n
        self.gather_per_slot: float | None = None  # measured at each compaction
        self.gather_fixed: float | None = None  # measured at the first decision
        self.per_slot_step: float | None = None  # the last call's seconds per slot and step
        self.wasted = 0.0  # seconds spent on finished slots since the loop last shrank
        self.last_steps = 1  # the last call's steps

    def runner(self, assignment: Assignment) -> UntilDone:
        """The loop for one dispatch assignment, built once, at the current logical size."""
        runner = self.runners.get(assignment)
        if runner is None:
            marks = self.base.payload.marks
            items = assigned(self.items, assignment, marks)
            runner = self.base if items == self.items else loop(items, terminated=self.terminated,
                                                                 max_steps=self.max_steps, marks=marks)
            runner._own_graph()  # built (and compiled) before its first chunk is timed
            self.runners[assignment] = runner
        if self.sizes.get(assignment) != self.slots:
            runner.set_logical_size(self.slots)
            self.sizes[assignment] = self.slots
        return runner

    def go(self, compact: bool | str) -> SimulateResult:
        report = self.report
        live = int(np.count_nonzero(host_values(self.terminated) == 0))
        report.live.append((0, live))
        total = 0
        try:
            while live and total < self.max_steps:
                total, live = self._chunk(compact, total, live)
        finally:
            if self.compactor is not None:
                start = time.perf_counter()
                self.compactor.restore()
                report.seconds["restore"] += time.perf_counter() - start
        report.dispatch = list(self.choices.decisions)
        return SimulateResult(total, live, _state(self.base), report)

    def _chunk(self, compact: bool | str, total: int, live: int) -> tuple[int, int]:
        """One chunk of up to ``CHUNK`` steps from step ``total`` with ``live`` samples live: calls
        of as few steps as keep a call's fixed cost small (so a dear step is followed by a look at
        the live count and, with ``"auto"``, a compaction where it pays), then the dispatch
        decision, then a compaction where it pays unless the next call is a probe.  A probe is one
        call, of as many steps as the call it is compared with, and the decision it informs is
        taken right after it, as is the first (after the run's first call).  Returns the steps run
        and the live count."""
        assignment = self.choices.assignment()
        ran_steps = 0
        seconds, run_steps, slot_steps = 0.0, 0, 0  # of the calls under `assignment` since a decision
        while live and ran_steps < CHUNK and total < self.max_steps:
            runner = self.runner(assignment)
            steps = min(self._steps_per_call(), CHUNK - ran_steps, self.max_steps - total)
            if self.choices.probing:
                steps = min(steps, self.last_steps)
            start = time.perf_counter()
            ran = runner.run(max_steps=steps)
            took = time.perf_counter() - start
            if not ran.steps:  # the loop's own test saw every sample done, the count did not
                raise EagleRuntimeError(f"{API}: the loop ran no step with {live} of {self.slots} samples "
                                   "live: the stop test and the live count disagree (an eagle bug)")
            self.report.seconds["steps"] += took
            ran_steps, self.last_steps = ran_steps + ran.steps, ran.steps
            seconds, run_steps = seconds + took, run_steps + ran.steps
            slot_steps += ran.steps * self.slots
            self.per_slot_step = took / (ran.steps * self.slots)
            # the finished slots over the call: the mean of those at its start and at its end
            finished = self.slots - (live + ran.live) / 2
            self.wasted += finished * ran.steps * self.per_slot_step
            total, live = total + ran.steps, ran.live
            if self.choices.decides_now:
                self._observe(assignment, seconds, run_steps, slot_steps, total)
                assignment = self.choices.assignment()
                seconds, run_steps, slot_steps = 0.0, 0, 0
            within = live and ran_steps < CHUNK and total < self.max_steps  # the chunk goes on
            if within and compact == "auto" and not self.choices.probing and self._pays(compact, live):
                self._compact(total)
        self.report.live.append((total, live))
        if run_steps:
            self._observe(assignment, seconds, run_steps, slot_steps, total)
        if live and not self.choices.probing and self._pays(compact, live):
            self._compact(total)  # (not before a probe: it runs over the slots just measured)
        return total, live

    def _observe(self, assignment: Assignment, seconds: float, steps: int, slot_steps: int,
                 total: int) -> None:
        start = time.perf_counter()
        self.choices.observe(assignment, seconds, steps, self.slots, total, slot_steps=slot_steps)
        self.report.seconds["decisions"] += time.perf_counter() - start

    def _steps_per_call(self) -> int:
        """Steps for the next call: enough that it takes ``CALL_SECONDS`` at the last measured
        time per slot and step (one step before the first measurement)."""
        if self.per_slot_step is None:
            return 1
        return max(1, min(CHUNK, math.ceil(CALL_SECONDS / (self.per_slot_step * self.slots))))

    def _pays(self, compact: bool | str, live: int) -> bool:
        if self.compactor is None or live >= self.slots:
            return False
        if compact is True:
            return True
        gather = self.gather_per_slot
        if gather is None:  # two copies of each sample's bytes: into the scratch and back
            gather = 2 * self.compactor.bytes_per_sample * copy_seconds_per_byte(self.compactor.device)
        fixed = self._fixed()
        compactor = self.compactor
        # a first compaction commits the run to a restore: its program, its calls, every sample moved
        restore = 0.0 if compactor.compacted else compactor.setup_seconds + fixed + self.n * gather
        return should_compact(self.slots, live, self.wasted, gather, fixed, restore)

    def _fixed(self) -> float:
        """The gather's fixed cost, measured once (the report counts it as compaction time)."""
        if self.gather_fixed is None:
            start = time.perf_counter()
            self.gather_fixed = self.compactor.fixed_seconds()
            self.report.seconds["compaction"] += time.perf_counter() - start
        return self.gather_fixed

    def _compact(self, step: int) -> None:
        start = time.perf_counter()
        before = self.slots
        self.slots = self.compactor.compact(before)
        self.wasted = 0.0
        took = time.perf_counter() - start
        self.gather_per_slot = max(took - (self.gather_fixed or 0.0), 0.0) / before  # "auto" measured it
        self.report.seconds["compaction"] += took
        self.report.compactions.append(Compaction(step, before, self.slots, took))
        simulate_log.debug("eagle.simulate: step %d: compacted %d slots to %d in %.3g ms", step, before,
                           self.slots, 1e3 * took)


def _state(base: UntilDone) -> dict[str, Any]:
    """The step's per-sample written planes by name (an item's parameter or key; ``label.name``
    where two items give one name to different planes)."""
    until = base.payload
    state: dict[str, Any] = {}
    for item in until.items:
        for name, array, role in item.planes():
            if role == "read" or not np.ndim(array) or np.shape(array)[-1] != until.samples:
                continue
            if any(array is a for a in state.values()):
                continue
            key = name if name not in state else f"{item.default_label()}.{name}"
            state[key] = array
    return state
