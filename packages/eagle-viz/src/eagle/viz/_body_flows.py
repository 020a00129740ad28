"""The planes that pass between the nodes inside a device construct's bodies.

The graph's edges see a construct as one node, so a plane one node of a body
writes and a later one reads (``a`` past two nodes to a total) is found here:
walking the bodies in run order, a read flows from the plane's last writers.
Memory is told apart as eagle's edges tell it: the same view is one plane (the
builder reuses its buffers), and distinct views flow when they may share a
byte (:func:`eagle.extend.overlap`), asked only where their byte extents meet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from eagle.extend import Node, is_plane, overlap

#: A view's key and byte extent [lo, hi), None where no array interface says it.
Memory = tuple[object, tuple[int, int] | None]


class Writers:
    """The last writers of each plane so far, in one construct; each read is a flow from them."""

    def __init__(self, flows: list[tuple[int, int, str]],
                 planes: dict[object, tuple[Any, Memory, list[int]]] | None = None,
                 turn: list[Step] | None = None) -> None:
        #: (writer, reader, plane), appended to as the nodes run.
        self.flows = flows
        self.planes = planes if planes is not None else {}  # key -> (array, memory, last writers)
        #: What one turn of the innermost loop around them runs, in order; None outside loops.
        self.turn = turn

    def copy(self, turns: bool = False) -> Writers:
        """Writers that go on from these: for an arm, or (``turns``) for the body of a loop.  Inside a
        loop an arm keeps a turn of its own, which :meth:`join` puts into the loop's as one choice."""
        planes = {k: (a, m, list(nodes)) for k, (a, m, nodes) in self.planes.items()}
        return Writers(self.flows, planes, [] if turns or self.turn is not None else None)

    def carry(self) -> None:
        """After one turn of a loop's body: its reads flow also from the writers the turn before
        left (a plane written late in a turn and read early in the next, or written by one arm of
        a choice and read by another).  Running the turn again from those writers, through its
        arms, finds the flows of one turn again and those from the turn before: the new ones."""
        if self.turn is None:
            return
        again = Writers([], self.copy().planes)
        _replay(again, self.turn)
        known = set(self.flows)
        self.flows += [flow for flow in dict.fromkeys(again.flows) if flow not in known]

    def step(self, index: int, node: Node) -> None:
        """Node ``index`` runs: its reads flow from the last writers, its writes become them."""
        if self.turn is not None:
            self.turn.append((index, node))
        planes = [(name, a, role, memory(a)) for name, a, role in node.planes() if is_plane(a)]
        for name, array, role, mine in planes:
            if role != "write":
                writers = {w for a, m, nodes in self.planes.values() if _meet(a, m, array, mine)
                           for w in nodes}
                self.flows += [(w, index, name) for w in sorted(writers) if w != index]
        for _, array, role, mine in planes:
            if role != "read":
                self.planes[mine[0]] = (array, mine, [index])

    def join(self, arms: list[Writers], one_runs: bool = False) -> None:
        """After arms at most one of which runs (or a loop's body, which may run no time): a
        plane's last writers are every arm's, and, unless ``one_runs`` (one arm always runs), those
        before (the guard may choose no arm).  An arm that leaves a plane alone keeps those before."""
        if self.turn is not None:
            self.turn.append(Choice(tuple(arm.turn or [] for arm in arms), one_runs))
        planes: dict[object, tuple[Any, Memory, list[int]]] = {} if one_runs else self.planes
        for arm in arms:
            for key, (array, mine, nodes) in arm.planes.items():
                known = planes.setdefault(key, (array, mine, []))[2]
                known += [n for n in nodes if n not in known]
        self.planes = planes


@dataclass(frozen=True)
class Choice:
    """In a loop's turn: arms of which at most one runs (exactly one when ``one_runs``), each the
    steps it runs; a loop inside the loop is one arm that may not run."""

    arms: tuple[list[Step], ...]
    one_runs: bool


#: One step of a loop's turn: a node that runs (its index and itself), or a choice of arms.
Step = tuple[int, Node] | Choice


def _replay(writers: Writers, turn: list[Step]) -> None:
    """Run ``turn`` again on ``writers``: each node steps, each choice's arms from the same writers."""
    for step in turn:
        if isinstance(step, Choice):
            arms = [writers.copy() for _ in step.arms]
            for arm, steps in zip(arms, step.arms, strict=True):
                _replay(arm, steps)
            writers.join(arms, step.one_runs)
        else:
            writers.step(*step)


def memory(array: Any) -> Memory:
    """What tells the same memory seen twice (a view's address, shape, strides and type, from the
    array interfaces, else the object), and the bytes it spans."""
    face = getattr(array, "__array_interface__", None) or getattr(array, "__cuda_array_interface__", None)
    if not isinstance(face, dict):
        return id(array), None
    start, shape, strides = face["data"][0], tuple(face["shape"]), face.get("strides")
    size = np.dtype(face["typestr"]).itemsize
    if strides is None:  # C order
        strides = tuple(int(np.prod(shape[k + 1:], dtype=np.int64)) * size for k in range(len(shape)))
    if 0 in shape:
        return (start, shape, strides, face["typestr"]), (start, start)
    lo = start + sum(min(0, (n - 1) * s) for n, s in zip(shape, strides, strict=True))
    hi = start + sum(max(0, (n - 1) * s) for n, s in zip(shape, strides, strict=True)) + size
    return (start, shape, tuple(strides), face["typestr"]), (lo, hi)


def _meet(a: Any, ma: Memory, b: Any, mb: Memory) -> bool:
    """Whether two planes may share a byte: one view, or extents that meet and eagle's overlap."""
    if ma[0] == mb[0]:
        return True
    if ma[1] is not None and mb[1] is not None and (ma[1][1] <= mb[1][0] or mb[1][1] <= ma[1][0]):
        return False
    return overlap(a, b)
