"""``eagle.simulate``'s ``dispatch=``: which policy each dispatch group of the step runs by.

An author's explicit policy is kept; ``dispatch`` (a policy name, or ``{group: policy}``) forces
the ``"auto"`` groups; the ``"auto"`` groups left are decided by measurement, as seed 001 words
it: start fused (``"switch"``), count the samples taking each arm between chunks, and every 16
steps split a group (``"segmented"``) when that is predicted at least 15 % faster, fuse it again
when the predicted gain falls under 5 %.  A prediction is the measured time per slot and step of
the step run with that policy (per slot of the loop, not per live sample: the fused form computes
every slot, finished or not, so its time per live sample grows as samples finish, and estimates
taken at different live counts made the decision flap); one not measured yet, measured under an
arm mix that has moved on, or measured long ago, is measured by running the next call with it (a
probe: one step where a step is dear enough to run one per call, a whole chunk where steps are
cheap), of as many steps as the call before it, over the same slots; the decision follows the probe
at once.  So is one measured over a loop compaction has since shrunk more than eightfold.  The
first decision follows the run's first call: it measures the fused form, and a probe of the split
one comes next, so a step where splitting pays is not run fused for a whole chunk.  Groups are
probed one at a time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from eagle._errors import EagleTypeError, EagleValueError
from eagle._stepping import host_values
from eagle.plan import DISPATCH_POLICIES, BoundPlan, DispatchGroup

API = "eagle.simulate"
#: The policies ``dispatch=`` may force (``"auto"``: decided by measurement, as with None).
FORCED = tuple(p for p in DISPATCH_POLICIES if p != "auto")
#: Split when predicted this much faster; fuse again when the gain falls under ``FUSE_UNDER``.
SPLIT_AT, FUSE_UNDER = 0.15, 0.05
#: A time measured this many chunks ago, over a loop of more than ``STALE_SIZE`` times as many or
#: as few slots (a compaction since), or under arm fractions that moved more than ``STALE_MIX``
#: since (total variation, beyond the counts' own noise, 2 / sqrt(samples counted)), is measured
#: again.
STALE_CHUNKS, STALE_SIZE, STALE_MIX = 8, 8.0, 0.1
#: The slots an arm mix is counted over, at most (evenly spaced over the loop).
MIX_SLOTS = 8192


def choose(current: str, fused: float, split: float) -> str:
    """The policy of an ``"auto"`` group for the next chunk, from the predicted time of a step per
    slot fused (``"switch"``) and split (``"segmented"``): split when that is at least 15 %
    faster, fuse again when the gain falls under 5 % (between the two, stay: no flapping).

    >>> from eagle._simulate_dispatch import choose
    >>> choose("switch", 1.0, 0.80), choose("switch", 1.0, 0.90)
    ('segmented', 'switch')
    >>> choose("segmented", 1.0, 0.90), choose("segmented", 1.0, 0.97)
    ('segmented', 'switch')
    """
    gain = 1.0 - split / fused
    if current == "switch":
        return "segmented" if gain >= SPLIT_AT else "switch"
    return "switch" if gain < FUSE_UNDER else "segmented"


class Decision(NamedTuple):
    """A dispatch decision: from ``step`` on, ``group`` runs by ``policy``; ``why`` says what
    chose it (``"author"``, ``"dispatch="``, ``"start fused"``, ``"probe"``, ``"measured"``)."""

    step: int
    group: str
    policy: str
    why: str


@dataclass
class _Estimate:
    seconds: float  # per slot and step
    chunk: int  # the chunk it was measured in
    slots: int  # the loop's logical size then
    mix: np.ndarray  # the arm fractions then
    counted: int  # of how many live samples


@dataclass
class _Auto:
    """An ``"auto"`` group decided by measurement: its policy, and the time measured per policy."""

    group: DispatchGroup
    policy: str = "switch"
    estimates: dict[str, _Estimate] = field(default_factory=dict)


Assignment = tuple[tuple[str, str], ...]


class Dispatch:
    """The policy of every dispatch group of a step over a run, and the decisions taken."""

    def __init__(self, items: Sequence[Any], dispatch: str | Mapping[str, str] | None, terminated: Any,
                 skip: Any = None) -> None:
        self.terminated = terminated
        self.groups = _groups(items)
        forced = _forced(dispatch, self.groups)
        self.fixed: dict[str, str] = {}
        self.auto: dict[str, _Auto] = {}
        self.decisions: list[Decision] = []
        self.notes: list[str] = []
        for name, group in self.groups.items():
            if group.policy != "auto":
                self._fix(name, group.policy, "author")
            elif name in forced:
                self._fix(name, forced[name], "dispatch=")
            elif group.selector is None:
                self._fix(name, "switch", "start fused")
                self.notes.append(f"dispatch group {name!r} stays fused (\"switch\"): the kernel computes "
                                  "its selector, so eagle cannot count its arms or split it")
            elif (refused := _unsplittable(items, name, skip)) is not None:
                self._fix(name, "switch", "start fused")
                self.notes.append(f"dispatch group {name!r} stays fused (\"switch\"): {refused}")
            else:
                self.auto[name] = _Auto(group)
                self.decisions.append(Decision(0, name, "switch", "start fused"))
        self._probing: str | None = None  # the group whose other policy the next chunk measures
        self._chunks = 0

    def _fix(self, name: str, policy: str, why: str) -> None:
        self.fixed[name] = policy
        self.decisions.append(Decision(0, name, policy, why))

    @property
    def decides_now(self) -> bool:
        """The call just run is a probe, or the run's first: the next decision is taken now, not at
        the chunk's end (the first call measures the fused form; a probe of the split one follows)."""
        return self._probing is not None or (bool(self.auto) and self._chunks == 0)

    @property
    def probing(self) -> bool:
        """The next chunk measures another policy: it must start over the slots the last one ended
        on (no compaction between), so the two times compare."""
        return self._probing is not None

    def assignment(self) -> Assignment:
        """Every group's policy for the next chunk (a probe's included)."""
        chosen = {**self.fixed, **{name: auto.policy for name, auto in self.auto.items()}}
        if self._probing is not None:
            chosen[self._probing] = _other(self.auto[self._probing].policy)
        return tuple(sorted(chosen.items()))

    def observe(self, assignment: Assignment, seconds: float, steps: int, slots: int, step: int,
                slot_steps: int | None = None) -> None:
        """A chunk ran ``steps`` steps in ``seconds``, ending at ``step`` with the loop's logical
        size ``slots``, over ``slot_steps`` slots and steps in all (``steps * slots`` unless a
        compaction shrank the loop within the chunk): keep the time it measured per slot and
        step, then decide the next chunk's policies."""
        self._chunks += 1
        if not self.auto or steps == 0:
            return
        chosen = dict(assignment)
        per_slot_step = seconds / (slot_steps or steps * slots)
        now = {name: _Estimate(per_slot_step, self._chunks, slots, *self._mix(auto.group, slots))
               for name, auto in self.auto.items()}
        for name, auto in self.auto.items():
            auto.estimates[chosen[name]] = now[name]
        self._probing = None
        for name, auto in self.auto.items():
            other = _other(auto.policy)
            known = auto.estimates.get(other)
            if known is None or _stale(known, now[name]):
                self._probing = name  # measure the other policy next chunk, then decide
                self.decisions.append(Decision(step, name, other, "probe"))
                return
            mine = auto.estimates[auto.policy]
            times = {auto.policy: mine.seconds, other: known.seconds}
            policy = choose(auto.policy, times["switch"], times["segmented"])
            if policy != auto.policy or chosen[name] != auto.policy:
                self.decisions.append(Decision(step, name, policy, "measured"))
            auto.policy = policy

    def _mix(self, group: DispatchGroup, slots: int) -> tuple[np.ndarray, int]:
        """The fractions of the live samples (of the first ``slots``) taking each arm of ``group``,
        counted from its selector plane (the last, ``case _``, takes the rest), and how many: in a
        loop of more than ``MIX_SLOTS`` slots, of every k-th slot only (the stale test allows for
        the noise of the count; counting all 262,144 took a millisecond a chunk)."""
        every = max(1, slots // MIX_SLOTS)
        selector = host_values(group.selector)[..., :slots:every].reshape(-1)
        live = host_values(self.terminated)[:slots:every] == 0
        values = selector[live] if selector.size == live.size else selector
        return arm_counts(group.arms, values) / max(values.size, 1), int(values.size)


def arm_counts(arms: Sequence[int | tuple[int, ...] | None], values: np.ndarray) -> np.ndarray:
    """How many of ``values`` each arm takes, as the ``match`` does: the first arm naming a value
    takes it, ``case _`` (None) the values no arm names; one pass (a search in the sorted cases).

    >>> from eagle._simulate_dispatch import arm_counts
    >>> arm_counts((0, (1, 2), None), np.array([0, 2, 2, 7, 1, 0], np.int32)).tolist()
    [2.0, 3.0, 1.0]
    >>> arm_counts((3, (3, 4)), np.array([3, 4, 5])).tolist()  # 3 is the first arm's; 5 no arm's
    [1.0, 1.0]
    """
    first: dict[int, int] = {}
    for k, arm in enumerate(arms):
        for value in () if arm is None else np.atleast_1d(arm).tolist():
            first.setdefault(int(value), k)
    rest = arms.index(None) if None in arms else len(arms)  # the last bin counts no arm
    keys = np.array(sorted(first), np.int64)
    taken = np.full(values.size, rest, np.int64)
    if keys.size:
        at = np.minimum(np.searchsorted(keys, values), keys.size - 1)
        named = keys[at] == values
        taken[named] = np.array([first[k] for k in keys.tolist()], np.int64)[at[named]]
    return np.bincount(taken, minlength=len(arms) + 1)[:len(arms)].astype(np.float64)


def _stale(then: _Estimate, now: _Estimate) -> bool:
    """Whether an estimate taken ``then`` no longer predicts ``now``'s chunk."""
    moved = 0.5 * float(np.abs(now.mix - then.mix).sum())
    noise = 2.0 / np.sqrt(max(min(then.counted, now.counted), 1))
    resized = max(then.slots, now.slots) > STALE_SIZE * min(then.slots, now.slots)
    return now.chunk - then.chunk >= STALE_CHUNKS or resized or moved > STALE_MIX + noise


def _other(policy: str) -> str:
    return "segmented" if policy == "switch" else "switch"


def _unsplittable(items: Sequence[Any], name: str, skip: Any) -> str | None:
    """Why a plan of the step cannot run group ``name`` split (its own refusal), or None."""
    for item in items:
        if isinstance(item, BoundPlan) and name in item.dispatch_groups():
            try:
                item.with_dispatch({name: "segmented"}, skip=skip)
            except ValueError as refusal:
                return str(refusal)
    return None


def _groups(items: Sequence[Any]) -> dict[str, DispatchGroup]:
    """The dispatch groups of the step's plans, by name (a name two plans declare is one group to
    ``dispatch=``)."""
    found: dict[str, DispatchGroup] = {}
    for item in items:
        if isinstance(item, BoundPlan):
            for name, group in item.dispatch_groups().items():
                found.setdefault(name, group)
    return found


def _forced(dispatch: str | Mapping[str, str] | None, groups: Mapping[str, DispatchGroup]) -> dict[str, str]:
    """The policies ``dispatch=`` forces on the ``"auto"`` groups, refused by name where it names
    no group or no policy, or an author's explicit one."""
    if dispatch is None or dispatch == "auto":
        return {}
    if isinstance(dispatch, str):
        _policy(dispatch, "dispatch")
        return {name: dispatch for name, group in groups.items() if group.policy == "auto"}
    if not isinstance(dispatch, Mapping):
        raise EagleTypeError(f"{API}: dispatch is None, a policy name ({', '.join(FORCED)}) or a "
                        f"{{group: policy}} dict; got {type(dispatch).__name__}")
    forced = {}
    for name, policy in dispatch.items():
        if name not in groups:
            have = ", ".join(map(repr, groups)) or "none"
            raise EagleValueError(f"{API}: dispatch names group {name!r}, which no plan of the step "
                                  "declares; "
                             f"its groups are {have}")
        _policy(policy, f"dispatch[{name!r}]")
        if groups[name].policy != "auto":
            raise EagleValueError(f"{API}: dispatch[{name!r}] = {policy!r}, but the kernel's author chose "
                             f"{groups[name].policy!r} for group {name!r}, which dispatch= never overrides: "
                             "leave it out, or declare the group \"auto\"")
        if policy != "auto":
            forced[name] = policy
    return forced


def _policy(policy: Any, where: str) -> None:
    if policy not in DISPATCH_POLICIES:
        raise EagleValueError(f"{API}: {where} is {policy!r}, which is no dispatch policy; the policies are "
                         f"{', '.join(map(repr, DISPATCH_POLICIES))}")


def assigned(items: Sequence[Any], assignment: Assignment, skip: Any) -> list[Any]:
    """The step's items with each plan's groups run by ``assignment``, the samples set in ``skip``
    (the loop's mark: finished before the step) left out of a split group's arms."""
    policies = dict(assignment)
    out = []
    for item in items:
        if isinstance(item, BoundPlan):
            mine = {name: policies[name] for name in item.dispatch_groups()}
            item = item.with_dispatch(mine, skip=skip) if mine else item
        out.append(item)
    return out
