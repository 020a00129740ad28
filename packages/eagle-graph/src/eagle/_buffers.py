"""The buffer plan: the graph's own temporaries share storage by liveness.

A temporary is an array the graph allocated itself (a builder's kernel output without
``buffer=``) that no one else can reach: the builder declares its candidates
(``eagle.extend.declare_temporaries``), and the plan keeps only those the nodes alone hold.
Each kept temporary is swapped (through its kinds' ``rebuild``) for a view of one storage
array; temporaries whose spans (``eagle._liveness``) do not meet share one.  A temporary that
only the nodes of one body of a device construct touch is planned over that body's own order
(a loop turn's), with the other temporaries of that body: one the body reads before it writes
it (a value carried from one turn to the next) keeps storage of its own.  Host arrays and
device arrays (eagle's own ``DeviceArray`` and CuPy's) are planned alike; a
storage is shared only by planes of one device.
As in XLA's heap simulation (``GlobalDecreasingSizeBestFitHeap``) the spans are packed greedily,
largest first; the in-place rule lets a per-sample kernel's one output take the storage of a
plane it reads for the last time.  Storage is shared only between planes of one shape and dtype:
a smaller plane inside a larger one would be a shifted view of it, which block fusion refuses
(and so would a plane of another dtype on the same bytes: a view neither identical nor
disjoint).

Whether a candidate is reachable from outside is not guessed: every candidate is swapped (when
planning is off, each for a new array of its own), and one that is still alive once the nodes let
go of it (a user kept it) is put back, unplanned.  Planning never changes a result: a shared
storage is written only after every read of what it held before.
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from eagle._arrays import is_guard_cell
from eagle._cuda import DeviceArray, empty_like_device
from eagle._errors import EagleTypeError, EagleValueError
from eagle._flows import KernelFlow
from eagle._foreign import gpu_ordinal
from eagle._kinds import Node, PlaneTuple, Swap, kind_of
from eagle._liveness import Forks, Liveness, Span
from eagle._regions import Body

#: The environment variable that turns storage sharing off (``EAGLE_PLAN=0``): every temporary
#: then keeps storage of its own.
ENV = "EAGLE_PLAN"


def planning(plan: bool | None, api: str) -> bool:
    """Whether the build shares storage: ``plan`` when given, else ``EAGLE_PLAN`` (on by default)."""
    if plan is None:
        value = os.environ.get(ENV, "1").strip().lower()
        if value not in ("0", "1", "off", "on", "false", "true", ""):
            raise EagleValueError(f"{api}: {ENV}={value!r}; set it to 0 (each temporary its own storage) or "
                                  "1")
        return value not in ("0", "off", "false")
    if not isinstance(plan, bool):
        raise EagleTypeError(f"{api}: plan= takes True, False or None (then {ENV}), got {plan!r}")
    return plan


def _plain(array: Any) -> bool:
    """Whether the plan can give ``array``'s place to a view of a storage of its own making: a
    contiguous NumPy or CuPy array or an eagle DeviceArray that is no view."""
    if type(array) is DeviceArray:
        return array.base is None
    cupy = sys.modules.get("cupy")  # never imported: no array is one of its
    if type(array) is np.ndarray or (cupy is not None and type(array) is cupy.ndarray):
        return array.base is None and array.flags.c_contiguous
    return False


def _storage(array: Any) -> Any:
    """A new array like ``array`` (its shape, dtype and device)."""
    if type(array) is np.ndarray:
        return np.empty(array.shape, array.dtype)
    return empty_like_device(array, array.shape, array.dtype)


def assign(spans: Sequence[tuple[Any, Span]], in_place: Callable[[int, Any, Any], bool]) -> list[int]:
    """The storage slot of each ``(array, span)``: slots of one shape, dtype and device are
    shared by spans that do not meet, or that meet where ``in_place(position, last, new)`` lets
    ``new`` take over the storage ``last`` is read from for the last time there."""
    order = sorted(range(len(spans)), key=lambda k: (-spans[k][0].nbytes, spans[k][1].first))
    free: dict[tuple[Any, ...], list[list[Any]]] = {}  # (shape, dtype, device) -> [slot, last, occupant]
    slots = [0] * len(spans)
    count = 0
    for k in order:
        array, span = spans[k]
        device = None if type(array) is np.ndarray else gpu_ordinal(array)
        held = free.setdefault((array.shape, array.dtype.str, device), [])
        taking = next((h for h in held if h[1] == span.first and in_place(span.first, h[2], array)), None)
        fits = [h for h in held if h[1] < span.first] if taking is None else []
        chosen = taking or max(fits, key=lambda h: h[1], default=None)  # the one freed last is the warmest
        if chosen is None:
            chosen = [count, 0, None]
            held.append(chosen)
            count += 1
        chosen[1], chosen[2] = span.last, array
        slots[k] = chosen[0]
    return slots


class Planner:
    """Plans the storage of the temporaries of one order of nodes: the graph's top level, or one
    body of a device construct (``body``), whose positions are its steps' (a fork's nodes in
    turn, a construct inside one position)."""

    def __init__(self, nodes: Sequence[Node], planes: Sequence[Sequence[PlaneTuple]], forks: Forks,
                 body: bool = False) -> None:
        self.nodes, self.planes, self.body = nodes, planes, body
        self.live = Liveness(planes, forks)
        self.single = {i for i in range(len(nodes))} - {i for fork in forks for b in fork for i in b}

    def eligible(self, candidates: Sequence[Any], viewed: set[int], fixed: set[int]
                 ) -> list[tuple[Any, Span]]:
        """The candidates the plan may move: plain arrays (:func:`_plain`) the nodes hold only as
        themselves (none in ``viewed``: no node reads a view of one), written where they are
        first touched (in a body, and not read there: a value a loop's turn carries to the next
        is read first), held only by kinds that rebuild (none in ``fixed``), not guard cells
        (the host reads those)."""
        found = []
        for array in candidates:
            span = self.live.of(array)
            if (_plain(array) and array.size and not is_guard_cell(array) and span is not None
                    and span.written_first and not (self.body and span.read_first)
                    and id(array) not in viewed and id(array) not in fixed):
                found.append((array, span))
        return found

    def in_place(self, position: int, last: Any, new: Any) -> bool:
        """Whether the node at ``position`` (on its own, not in a fork) is a per-sample kernel
        whose one written plane is ``new``, one value per sample, and which reads ``last``
        without writing it: a sample's one output value is stored after that sample's reads, so
        it may land on ``last`` (a plane of several components is stored component by component,
        possibly before another component is read)."""
        if position not in self.single or new.ndim != 1:
            return False
        flow = self.nodes[position].flow()
        if not (isinstance(flow, KernelFlow) and getattr(flow.bound.plan, "per_sample", False)):
            return False
        planes = self.planes[position]
        written = [(a, role) for _, a, role in planes if role != "read"]
        return len(written) == 1 and written[0][0] is new and written[0][1] == "write" \
            and any(a is last for _, a, _ in planes)


def plan_storage(nodes: Sequence[Node], planes: Sequence[Sequence[PlaneTuple]], forks: Forks,
                 candidates: list[Any], share: bool) -> Callable[[], tuple[Any, ...]]:
    """Swap the temporaries among ``candidates`` (emptied here: the caller holds none of them
    after) for their planned storage (``share`` False: each its own).  Returns the check to call
    once the caller let go of ``planes`` too: it puts back what someone else still holds and
    returns the planned arrays."""
    viewed, fixed = _held(nodes)
    groups = _Scopes(_homes(nodes), candidates, viewed, fixed, share).groups(nodes, planes, forks, None)
    candidates.clear()
    watched = _views(groups)
    del groups  # only the nodes hold the old arrays now: settle sees who else does
    mapping = {id(ref()): view for ref, view in watched}
    _swap(nodes, mapping)
    del mapping

    def settle() -> tuple[Any, ...]:
        alive = {id(v): old for ref, v in watched if (old := ref()) is not None}
        if alive:  # reachable from outside: it keeps its own array and value
            _swap(nodes, alive)
        return tuple(v for ref, v in watched if id(v) not in alive)

    return settle


def _held(nodes: Sequence[Node]) -> tuple[set[int], set[int]]:
    """The arrays some node holds a view of, and those a node holds whose kind does not
    rebuild (ids), over every node of the graph."""
    viewed, fixed = set(), set()
    for top in nodes:
        for node in top.walk():
            rebuilds = kind_of(node.kind).rebuild is not None
            for _, array, _ in node.planes():
                base = getattr(array, "base", None)
                while base is not None:
                    viewed.add(id(base))
                    base = getattr(base, "base", None)
                if not rebuilds:
                    fixed.add(id(array))
    return viewed, fixed


class _Scopes:
    """The temporaries grouped by the storage they share, scope by scope: the top level and each
    body of a device construct, whose own temporaries (their homes, :func:`_homes`) are planned
    over its order; a body's storages then take part in the scope around it as arrays the
    construct's position touches (a loop's for every turn)."""

    def __init__(self, home: dict[int, int | None], candidates: Sequence[Any], viewed: set[int],
                 fixed: set[int], share: bool) -> None:
        self.viewed, self.fixed, self.share = viewed, fixed, share
        self.by_home: dict[int | None, list[Any]] = {}
        for array in candidates:
            self.by_home.setdefault(home.get(id(array)), []).append(array)

    def groups(self, steps: Sequence[Node], planes: Sequence[Sequence[PlaneTuple]], forks: Forks,
               body: int | None) -> list[list[Any]]:
        """The arrays planned in the scope of ``steps`` (``body``: its id, None at the top level),
        each list one storage."""
        planner = Planner(steps, planes, forks, body=body is not None)
        items = [(a, span, [a]) for a, span in planner.eligible(self.by_home.get(body, []), self.viewed,
                                                                 self.fixed)]
        for position, node in enumerate(steps):
            low, high = planner.live.extent(position)
            for inner in node.bodies():
                inner_steps, inner_forks = _steps(inner)
                found = self.groups(inner_steps, [n.planes() for n in inner_steps], inner_forks, id(inner))
                items += [(group[0], Span(low, high, high, True, False), group) for group in found]
        slots = assign([(a, span) for a, span, _ in items], planner.in_place) if self.share \
            else list(range(len(items)))
        shared: dict[int, list[Any]] = {}
        for (_, _, group), slot in zip(items, slots, strict=True):
            shared.setdefault(slot, []).extend(group)
        return list(shared.values())


def _steps(body: Body) -> tuple[list[Node], Forks]:
    """A body's nodes in order (a fork's branches one after another, as a body runs them) and
    its forks (their branches' indices)."""
    steps: list[Node] = []
    forks = []
    for step in body.steps:
        if isinstance(step, Node):
            steps.append(step)
            continue
        fork = []
        for branch in step.branches:
            inner = list(branch.nodes())
            fork.append(list(range(len(steps), len(steps) + len(inner))))
            steps += inner
        forks.append(fork)
    return steps, forks


def _views(groups: list[list[Any]]) -> list[tuple[weakref.ref, Any]]:
    """Per temporary, a weak reference to it and its new array: a view of its group's storage."""
    watched = []
    for group in groups:
        storage = _storage(group[0])
        watched += [(weakref.ref(array), storage.view()) for array in group]
    return watched


def _homes(nodes: Sequence[Node]) -> dict[int, int | None]:
    """For each array a node holds (id), the innermost body (id) whose nodes alone touch it;
    None: the top level (a top-level node, or nodes of two bodies, or a construct's own plane
    such as its condition cell, touch it)."""
    paths: dict[int, tuple[int, ...]] = {}

    def touch(array: Any, path: tuple[int, ...]) -> None:
        seen = paths.get(id(array))
        if seen is None:
            paths[id(array)] = path
            return
        k = 0
        while k < min(len(seen), len(path)) and seen[k] == path[k]:
            k += 1
        paths[id(array)] = seen[:k]

    def visit(node: Node, path: tuple[int, ...]) -> None:
        inner = {id(a) for body in node.bodies() for _, a, _ in body.planes()}
        for _, array, _ in node.planes():
            if id(array) not in inner:
                touch(array, path)
        for body in node.bodies():
            for step in body.nodes():
                visit(step, (*path, id(body)))

    for top in nodes:
        visit(top, ())
    return {key: path[-1] if path else None for key, path in paths.items()}


def _swap(nodes: Sequence[Node], mapping: dict[int, Any]) -> None:
    swap = Swap(lambda a: mapping.get(id(a), a), in_place=True)
    for node in nodes:
        swap.node(node)
