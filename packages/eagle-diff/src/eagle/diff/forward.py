"""The forward run of a recorded graph, and of a loop turn run again in a reverse pass.

An :class:`Emitter` lays out steps as libeagle items and, beside them, a
*trace*: for each step, where the reverse pass will find the values it
needs.  A value a step reads stays where it is when nothing writes that
place again before the reverse pass reads it; otherwise it is copied aside
just before the step (a *snapshot*): a Mutable's old value, an input a later
node overwrites, a cell an arm rewrites.  A place whose memory nothing in
the run writes (an input the user may change before the reverse pass) is
copied aside after the run instead (:attr:`Emitter.after`), so its copy cuts
no fused run.  A loop keeps each turn's carried state in a
:class:`~eagle.diff._native.Tape`.  Snapshots and tapes are native items
inside the replay.

The same emitter runs a loop body again in a reverse pass, on arrays of
its own (``values``: place -> the array to use), so that nothing a user can
see is written.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from eagle.diff import _native, loops
from eagle.diff.steps import Choice, Leaf, Loop, Place, Plane, Step, read_planes, rebind
from eagle.extend import EagleAssertionError, EagleValueError, HostItems, Program, emit, emit_node

# ------------------------------------------------------------------ items


@dataclass(eq=False)
class Snap:
    src: np.ndarray
    dst: np.ndarray

    def emit(self, program: Program) -> None:
        _native.copy(program, self.src, self.dst)

    @property
    def native(self) -> bool:
        return _native.per_sample(self.src)


@dataclass(eq=False)
class Run:
    what: Any  # a node, or the graph's own lowering of one

    def emit(self, program: Program) -> None:
        if isinstance(self.what, HostItems) or callable(self.what):
            emit(self.what, program)
        else:
            emit_node(self.what, program)


@dataclass(eq=False)
class RunChoice:
    cell: np.ndarray
    kind: str
    keys: list[int]
    arms: list[list[Any]]

    def emit(self, program: Program) -> None:
        subs = [sub_program(arm) for arm in self.arms]
        if self.kind == "if":
            program.if_(self.cell, subs[0], subs[1])
        else:
            program.switch(self.cell, dict(zip(self.keys, subs[:-1], strict=True)), subs[-1])


@dataclass(eq=False)
class RunLoop:
    cell: np.ndarray
    kind: str
    cap: int
    body: list[Any]
    tape: _native.Tape | None = None  # with the arrays saved at the start of every turn
    state: tuple[np.ndarray, ...] = ()
    label: str = ""  # the loop's, in messages

    def emit(self, program: Program) -> None:
        body = Program().stage()
        if self.tape is not None:
            self.tape.reset(program)
            self.tape.save(body, list(self.state))
        for item in self.body:
            item.emit(body)
        program.loop(self.cell, body, self.kind, self.cap)


def sub_program(items: list[Any]) -> Program:
    program = Program().stage()
    for item in items:
        item.emit(program)
    return program


# ------------------------------------------------------------------ trace


@dataclass(eq=False)
class Kept:
    """A leaf as it ran: where the reverse finds the value of each place it read."""

    step: Leaf
    values: dict[Place, np.ndarray]


@dataclass(eq=False)
class Chose:
    step: Choice
    cell: np.ndarray  # the cell as the choice read it
    arms: list[list[Any]]


@dataclass(eq=False)
class Looped:
    step: Loop
    tape: _native.Tape
    state: list[Plane]  # what the tape holds, in order
    outside: dict[Place, np.ndarray]  # the places the body only reads, as they were


@dataclass(eq=False)
class Unbound:
    """A leaf that cannot run on other arrays (an opaque step keeps its own): an error only if a
    reverse pass needs it run again."""

    leaf: Leaf

    def emit(self, program: Program) -> None:
        raise EagleAssertionError("eagle.diff: an Unbound leaf is refused before emission")


def unbound(items: list[Any]) -> Iterator[Leaf]:
    """The leaves among ``items`` (and inside their arms and bodies) that cannot run on other arrays."""
    for item in items:
        if isinstance(item, Unbound):
            yield item.leaf
        elif isinstance(item, RunChoice):
            for arm in item.arms:
                yield from unbound(arm)
        elif isinstance(item, RunLoop):
            yield from unbound(item.body)


class Emitter:
    """Lays out steps with what their reverse needs kept.

    ``values`` maps each place to the array it lives in here; None means the
    recorded run, where every place is its own array.
    """

    def __init__(self, values: Mapping[Place, np.ndarray] | None = None,
                 aliases: Mapping[Place, frozenset[Place]] | None = None,
                 settled: frozenset[Place] = frozenset()) -> None:
        self.values = values
        self.aliases = aliases or {}  # place -> the places sharing its memory: a write to one is to all
        self.kept: list[np.ndarray] = []
        self.tapes: list[_native.Tape] = []
        #: places whose memory nothing in the run writes: their snapshots are taken after the run
        #: (the same value), in :attr:`after`, so no snapshot sits between two kernels of a fused run
        self.settled = settled
        self.after: list[Snap] = []

    def value(self, plane: Plane) -> np.ndarray:
        return plane.array if self.values is None else self.values[plane.place]

    def steps(self, steps: list[Step | None], later: frozenset[Place], snaps: dict[Place, np.ndarray],
              skip: frozenset[int] = frozenset()) -> tuple[list[list[Any]], list[Any]]:
        """Items per step (its snapshots first) and the trace of the steps that are not None.

        ``later``: places written after these steps, before the reverse pass
        reads them (their values must be kept); ``snaps``: snapshots taken
        before and still valid; ``skip``: steps not to run (a turn run again
        for its reverse needs only some), traced for their values all the same.
        """
        after = [frozenset()] * (len(steps) + 1)
        for i in range(len(steps) - 1, -1, -1):
            s = steps[i]
            changed = self.touched(s.writes) if s is not None and i not in skip else frozenset()
            after[i] = after[i + 1] | changed
        groups: list[list[Any]] = []
        trace: list[Any] = []
        for i, s in enumerate(steps):
            items: list[Any] = []
            groups.append(items)
            if s is None:
                continue
            written = after[i] | later
            if isinstance(s, Leaf):
                values = {}
                if s.needs_values:
                    for p in s.valued:
                        values[p.place] = self.source(p, written, snaps, items)
                if i not in skip:
                    items.append(self.run_leaf(s))
                trace.append(Kept(s, values))
            elif i in skip:  # a choice or loop nothing reads: not run, nothing to reverse
                trace.append(None)
                continue
            elif isinstance(s, Choice):
                cell = self.source(s.cell, written, snaps, items)
                arms_items, arms_trace = [], []
                for arm in s.arms:
                    arm_groups, arm_trace = self.steps(arm, after[i + 1] | later, dict(snaps))
                    arms_items.append([x for g in arm_groups for x in g])
                    arms_trace.append(arm_trace)
                items.append(RunChoice(self.value(s.cell), s.kind, s.keys, arms_items))
                trace.append(Chose(s, cell, arms_trace))
            else:
                outside = {p.place: self.source(p, written, snaps, items)
                           for p in read_planes(s.body) if p.place not in s.writes}
                state = loops.carried(s, self.aliases)
                loose = [p.name for p in state if not self.value(p).flags.c_contiguous]
                if loose:
                    raise EagleValueError(f"eagle.diff: the device loop {s.label!r} carries "
                                          f"{', '.join(loose)} "
                                     "from turn to turn in arrays that are not contiguous; a turn's state is "
                                     "kept by its bytes: use contiguous arrays")
                tape = _native.Tape(s.cap, [self.value(p).nbytes for p in state])
                self.tapes.append(tape)
                items.append(RunLoop(self.value(s.cell), s.kind, s.cap, self.plain(s.body), tape,
                                     tuple(self.value(p) for p in state), s.label))
                trace.append(Looped(s, tape, state, outside))
            if i not in skip:
                for place in self.touched(s.writes):
                    snaps.pop(place, None)
        return groups, trace

    def touched(self, writes: frozenset[Place]) -> frozenset[Place]:
        """The places a step's writes change: those it writes and those sharing their memory."""
        return writes.union(*(self.aliases.get(p, ()) for p in writes))

    def source(self, plane: Plane, written: frozenset[Place], snaps: dict[Place, np.ndarray],
               items: list[Any]) -> np.ndarray:
        """Where the reverse finds this plane's value as of now: the array itself, or a snapshot
        taken now (or earlier, when nothing wrote the place since)."""
        if plane.place not in written:
            return self.value(plane)
        if plane.place not in snaps:
            value = self.value(plane)
            snaps[plane.place] = np.empty(value.shape, value.dtype)
            self.kept.append(snaps[plane.place])
            (self.after if plane.place in self.settled else items).append(Snap(value, snaps[plane.place]))
        return snaps[plane.place]

    def run_leaf(self, leaf: Leaf) -> Run | Unbound:
        if self.values is None:
            return Run(leaf.lowering if leaf.lowering is not None else leaf.node)
        node = rebind(leaf, dict(self.values))
        return Unbound(leaf) if node is None else Run(node)

    def plain(self, steps: list[Step]) -> list[Any]:
        """Items running steps as they are, nothing kept (a loop body in the recorded run)."""
        if self.values is None:
            return [Run(s.node) for s in steps]
        items: list[Any] = []
        for s in steps:
            if isinstance(s, Leaf):
                items.append(self.run_leaf(s))
            elif isinstance(s, Choice):
                items.append(RunChoice(self.value(s.cell), s.kind, s.keys, [self.plain(a) for a in s.arms]))
            else:
                items.append(RunLoop(self.value(s.cell), s.kind, s.cap, self.plain(s.body)))
        return items
