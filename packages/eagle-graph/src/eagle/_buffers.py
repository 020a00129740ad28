"""The buffer plan: the graph's own temporaries share storage by liveness.

A temporary is an array the graph allocated itself (a builder's kernel output without
``buffer=``) that no one else can reach: the builder declares its candidates
(``eagle.extend.declare_temporaries``), and the plan keeps only those the nodes alone hold.
Each kept temporary is swapped (through its kinds' ``rebuild``) for a view of one storage
array; temporaries whose spans (``eagle._liveness``) do not meet share one.
As in XLA's heap simulation (``GlobalDecreasingSizeBestFitHeap``) the spans are packed greedily,
largest first; the in-place rule lets a per-sample kernel's one output take the storage of a
plane it reads for the last time.  Storage is shared only between planes of one shape and dtype:
a smaller plane inside a larger one would be a shifted view of it, which block fusion refuses.

Whether a candidate is reachable from outside is not guessed: every candidate is swapped (when
planning is off, each for a new array of its own), and one that is still alive once the nodes let
go of it (a user kept it) is put back, unplanned.  Planning never changes a result: a shared
storage is written only after every read of what it held before.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from eagle._arrays import is_guard_cell
from eagle._flows import KernelFlow
from eagle._kinds import Node, PlaneTuple, Swap, kind_of
from eagle._liveness import Forks, Liveness, Span

#: The environment variable that turns storage sharing off (``EAGLE_PLAN=0``): every temporary
#: then keeps storage of its own.
ENV = "EAGLE_PLAN"


def planning(plan: bool | None, api: str) -> bool:
    """Whether the build shares storage: ``plan`` when given, else ``EAGLE_PLAN`` (on by default)."""
    if plan is None:
        value = os.environ.get(ENV, "1").strip().lower()
        if value not in ("0", "1", "off", "on", "false", "true", ""):
            raise ValueError(f"{api}: {ENV}={value!r}; set it to 0 (each temporary its own storage) or 1")
        return value not in ("0", "off", "false")
    if not isinstance(plan, bool):
        raise TypeError(f"{api}: plan= takes True, False or None (then {ENV}), got {plan!r}")
    return plan


def assign(spans: Sequence[tuple[Any, Span]], in_place: Callable[[int, Any, Any], bool]) -> list[int]:
    """The storage slot of each ``(array, span)``: slots of one shape and dtype are shared by
    spans that do not meet, or that meet where ``in_place(position, last, new)`` lets ``new``
    take over the storage ``last`` is read from for the last time there."""
    order = sorted(range(len(spans)), key=lambda k: (-spans[k][0].nbytes, spans[k][1].first))
    free: dict[tuple[Any, ...], list[list[Any]]] = {}  # (shape, dtype) -> [slot, last, occupant]
    slots = [0] * len(spans)
    count = 0
    for k in order:
        array, span = spans[k]
        held = free.setdefault((array.shape, array.dtype.str), [])
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
    """Finds the temporaries of ``nodes`` among ``candidates`` and plans their storage."""

    def __init__(self, nodes: Sequence[Node], planes: Sequence[Sequence[PlaneTuple]], forks: Forks) -> None:
        self.nodes, self.planes = nodes, planes
        self.live = Liveness(planes, forks)
        self.single = {i for i in range(len(nodes))} - {i for fork in forks for b in fork for i in b}

    def eligible(self, candidates: Sequence[Any]) -> list[tuple[Any, Span]]:
        """The candidates the plan may move: plain contiguous host arrays the nodes hold only as
        themselves (no node reads a view of one), written where they are first touched, held
        only by kinds that rebuild, and not guard cells (the host reads those)."""
        viewed, fixed = set(), set()
        for top in self.nodes:
            for node in top.walk():
                rebuilds = kind_of(node.kind).rebuild is not None
                for _, array, _ in node.planes():
                    base = getattr(array, "base", None)
                    while base is not None:
                        viewed.add(id(base))
                        base = getattr(base, "base", None)
                    if not rebuilds:
                        fixed.add(id(array))
        found = []
        for array in candidates:
            span = self.live.of(array)
            if (type(array) is np.ndarray and array.base is None and array.flags.c_contiguous
                    and array.size and not is_guard_cell(array) and span is not None and span.written_first
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
    planner = Planner(nodes, planes, forks)
    spans = planner.eligible(candidates)
    candidates.clear()
    slots = assign(spans, planner.in_place) if share else list(range(len(spans)))
    storage: dict[int, np.ndarray] = {}
    mapping: dict[int, np.ndarray] = {}
    for (array, _), slot in zip(spans, slots, strict=True):
        if slot not in storage:
            storage[slot] = np.empty(array.shape, array.dtype)
        mapping[id(array)] = storage[slot].view()  # one object per temporary: its own name and edges
    watched = [(weakref.ref(array), mapping[id(array)]) for array, _ in spans]
    del spans, planner, storage
    _swap(nodes, mapping)
    del mapping

    def settle() -> tuple[Any, ...]:
        alive = {id(v): old for ref, v in watched if (old := ref()) is not None}
        if alive:  # reachable from outside: it keeps its own array and value
            _swap(nodes, alive)
        return tuple(v for ref, v in watched if id(v) not in alive)

    return settle


def _swap(nodes: Sequence[Node], mapping: dict[int, Any]) -> None:
    swap = Swap(lambda a: mapping.get(id(a), a), in_place=True)
    for node in nodes:
        swap.node(node)
