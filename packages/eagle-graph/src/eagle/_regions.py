"""Device constructs as nodes: if/else, switch and loops over bodies of nodes,
and the waits that order one branch of a fork after a node of another.

The graph builder records ``if cell:``, ``match cell:`` and device loops
into these.  A :class:`Body` is a list of steps, each a node or a
:class:`Fork` of branches (each a Body); a construct's planes are its
guard cell and everything its bodies touch, so edges and refusals treat it
as one node.  On the CPU a construct lowers to a libeagle sub-program run
under an if, switch or loop item, and the whole graph still replays in one
native call.  Inside a construct the branches of a fork run one after
another (nested runs are serial), so their waits have nothing to do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from eagle._flows import ChoiceFlow, Flow, InnerFlow, LoopFlow, NoFlow
from eagle._kinds import GpuItems, HostItems, Node, PlaneTuple, Swap, register_node_kind
from eagle._lower_cpu import lowered
from eagle._pictures import FramePicture, NoPicture, Picture
from eagle._recording import withdrawn

if TYPE_CHECKING:
    from eagle._target import Target


@dataclass
class Fork:
    """A step of a :class:`Body` whose branches (each a Body) may run at the same time.

    >>> from eagle.graph import opaque
    >>> a, b = np.zeros(1), np.zeros(1)
    >>> fork = eagle.Fork([eagle.Body([opaque(lambda: a.fill(1.0), writes={"a": a})]),
    ...                    eagle.Body([opaque(lambda: b.fill(2.0), writes={"b": b})])])
    >>> [len(list(branch.nodes())) for branch in fork.branches]
    [1, 1]
    """

    branches: list[Body]


@dataclass
class Body:
    """Steps run in order: nodes, and forks whose branches are bodies.

    The builder records device ``if``, ``match`` and loops as bodies under a
    :class:`DeviceIf`, :class:`DeviceSwitch` or :class:`DeviceLoop` node.

    >>> from eagle.graph import opaque
    >>> x = np.zeros(2)
    >>> body = eagle.Body([opaque(lambda: np.add(x, 1.0, out=x), reads={"x": x}, writes={"x": x})])
    >>> [(name, role) for name, _, role in body.planes()]
    [('x', 'readwrite')]
    """

    steps: list[Node | Fork] = field(default_factory=list)

    def __post_init__(self) -> None:
        for step in self.steps:  # made while recording, a step runs in this body only
            if isinstance(step, Node):
                withdrawn(step)

    def nodes(self) -> Iterator[Node]:
        """The nodes of this body and of its forks (a construct's own bodies stay inside it)."""
        for step in self.steps:
            if isinstance(step, Fork):
                for branch in step.branches:
                    yield from branch.nodes()
            else:
                yield step

    def planes(self) -> list[PlaneTuple]:
        return [t for node in self.nodes() for t in node.planes()]

    def lower(self, parent: Target) -> Target | None:
        """A body of ``parent`` running the steps in order (None when there are none)."""
        if not self.steps:
            return None
        return parent.body().nodes(list(self.nodes()))


@dataclass
class DeviceIf:
    """Run ``then`` when ``cell[0] != 0``, else ``orelse``; the cell is read at every replay.

    >>> from eagle.graph import Node, opaque
    >>> x, cell = np.zeros(1), np.array([1], np.uint32)
    >>> then = eagle.Body([opaque(lambda: x.fill(1.0), writes={"x": x})])
    >>> orelse = eagle.Body([opaque(lambda: x.fill(-1.0), writes={"x": x})])
    >>> g = eagle.Graph().add_node(Node("device_if", eagle.DeviceIf(cell, then, orelse))).build()
    >>> g = g.launch()
    >>> x
    array([1.])
    >>> cell[0] = 0
    >>> g = g.launch()
    >>> x
    array([-1.])
    """

    cell: np.ndarray
    then: Body
    orelse: Body

    def lower(self, target: Target) -> None:
        """Append the if to ``target`` (a lowering target), its arms as bodies of it; an elif
        chain (an else arm that is one more device if, and so on) as one chain, decided once
        at its head (seed 000)."""
        links = self.elifs()
        if len(links) == 1:
            target.if_(self.cell, self.then.lower(target), self.orelse.lower(target))
            return
        target.chain([link.cell for link in links], [link.then.lower(target) for link in links],
                     links[-1].orelse.lower(target))

    def elifs(self) -> list[DeviceIf]:
        """This if and the ifs of its elif chain: while an else arm is one device if alone."""
        links = [self]
        while len(links[-1].orelse.steps) == 1:
            step = links[-1].orelse.steps[0]
            if not (isinstance(step, Node) and step.kind == "device_if"):
                break
            links.append(step.payload)
        return links


@dataclass
class DeviceSwitch:
    """Run the arm whose key equals ``cell[0]``, else ``default``.

    >>> from eagle.graph import Node, opaque
    >>> x, cell = np.zeros(1), np.array([2], np.uint32)
    >>> arm = lambda v: eagle.Body([opaque(lambda: x.fill(v), writes={"x": x})])
    >>> switch = eagle.DeviceSwitch(cell, {1: arm(10.0), 2: arm(20.0)}, arm(0.0))
    >>> g = eagle.Graph().add_node(Node("device_switch", switch)).build().launch()
    >>> x
    array([20.])
    """

    cell: np.ndarray
    arms: dict[int, Body]
    default: Body

    def lower(self, target: Target) -> None:
        """Append the switch to ``target`` (a lowering target), its arms as bodies of it."""
        arms = {key: body.lower(target) for key, body in self.arms.items()}
        target.switch(self.cell, arms, self.default.lower(target))


@dataclass
class DeviceLoop:
    """Repeat ``body``: ``kind`` "while" (cell read before each turn), "do" (after each)
    or "count" (``cell[0]`` turns); at most ``max_iters`` turns, -1 for no cap.

    >>> from eagle.graph import Node, opaque
    >>> x, turns = np.zeros(1), np.array([3], np.uint32)
    >>> body = eagle.Body([opaque(lambda: np.add(x, 1.0, out=x), reads={"x": x}, writes={"x": x})])
    >>> loop = eagle.DeviceLoop(turns, "count", -1, body)
    >>> g = eagle.Graph().add_node(Node("device_loop", loop)).build().launch()
    >>> x, loop.label
    (array([3.]), 'repeat guard times')
    """

    cell: np.ndarray
    kind: str
    max_iters: int
    body: Body

    def lower(self, target: Target) -> None:
        """Append the loop to ``target`` (a lowering target); an empty body still runs its turns,
        which read the cell."""
        target.loop(self.cell, self.body.lower(target) or target.body(), self.kind, self.max_iters)

    @property
    def label(self) -> str:
        if self.kind == "count":
            return "repeat guard times"
        return f"repeat ≤ {self.max_iters}" if self.max_iters >= 0 else "repeat while guard"


def _if_picture(p: DeviceIf) -> FramePicture:
    arms = (p.then, *([p.orelse] if p.orelse.steps else []))
    return FramePicture("if guard" + " · else" * (len(arms) > 1), "if", arms, side_by_side=True,
                        one_runs=len(arms) > 1)


def _switch_picture(p: DeviceSwitch) -> FramePicture:
    """The arms that do something, side by side, named by their keys (``_``: the default)."""
    shown = [(str(k), a) for k, a in [*p.arms.items(), ("_", p.default)] if a.steps]
    return FramePicture("match guard: " + " | ".join(k for k, _ in shown), "switch",
                        tuple(a for _, a in shown), side_by_side=True, one_runs=bool(p.default.steps))


def _register_construct(name: str, bodies: Callable[[Any], list[Body]], rebuild: Callable[[Any, Swap], Any],
                        picture: Callable[[Any], Picture], flow: Callable[[Any], Flow],
                        reference: Callable[[Any, Any], None]) -> None:
    """A device construct's kind: its planes are its guard cell and everything its bodies touch."""

    def reads(p: Any) -> list[PlaneTuple]:
        inner = [t for body in bodies(p) for t in body.planes() if t[2] == "read"]
        return [("guard", p.cell, "read"), *inner]

    def writes(p: Any) -> list[PlaneTuple]:
        return [t for body in bodies(p) for t in body.planes() if t[2] != "read"]

    register_node_kind(name, reads=reads, writes=writes, reference=reference,
                       lower=lambda p, target: p.lower(target), both_sides=True,
                       bodies=bodies, rebuild=rebuild, picture=picture, flow=flow)


def _cell_value(cell: Any) -> int:
    return int(np.asarray(cell).reshape(-1)[0])


# What a device construct means, for the reference interpreter: its cell read when the construct
# is reached (and, for a loop, before or after each turn), the chosen body run node by node.

def _reference_if(payload: DeviceIf, interpreter: Any) -> None:
    interpreter.body(payload.then if _cell_value(payload.cell) else payload.orelse)


def _reference_switch(payload: DeviceSwitch, interpreter: Any) -> None:
    interpreter.body(payload.arms.get(_cell_value(payload.cell), payload.default))


def _reference_loop(payload: DeviceLoop, interpreter: Any) -> None:
    cap = payload.max_iters if payload.max_iters >= 0 else float("inf")
    turns = _cell_value(payload.cell) if payload.kind == "count" else None
    done = 0
    while done < cap and (turns is None or done < turns):
        if payload.kind == "while" and not _cell_value(payload.cell):
            break
        interpreter.body(payload.body)
        done += 1
        if payload.kind == "do" and not _cell_value(payload.cell):
            break


_register_construct("device_if", bodies=lambda p: [p.then, p.orelse],
                    rebuild=lambda p, swap: DeviceIf(swap(p.cell), swap.body(p.then), swap.body(p.orelse)),
                    picture=_if_picture, flow=lambda p: ChoiceFlow(p.cell, None, (p.then, p.orelse)),
                    reference=_reference_if)
_register_construct("device_switch", bodies=lambda p: [*p.arms.values(), p.default],
                    rebuild=lambda p, swap: DeviceSwitch(
                        swap(p.cell), {k: swap.body(b) for k, b in p.arms.items()}, swap.body(p.default)),
                    picture=_switch_picture,
                    flow=lambda p: ChoiceFlow(p.cell, tuple(map(int, p.arms)), (*p.arms.values(), p.default)),
                    reference=_reference_switch)
_register_construct("device_loop", bodies=lambda p: [p.body],
                    rebuild=lambda p, swap: DeviceLoop(swap(p.cell), p.kind, p.max_iters, swap.body(p.body)),
                    picture=lambda p: FramePicture(p.label, "loop", (p.body,)),
                    flow=lambda p: LoopFlow(p.cell, p.kind, p.max_iters, p.body), reference=_reference_loop)


# --------------------------------------------------------------- waits


@dataclass(eq=False)
class SignalAfter:
    """A node whose end another branch waits for: the node, then a signal."""

    inner: Node


@dataclass(eq=False)
class Wait:
    """Start the rest of this branch after ``writer`` (a SignalAfter node of another branch)."""

    writer: Node
    plane: str  # what the wait is for, in messages and pictures


def _emit_signal(s: SignalAfter, target: Target) -> None:
    target.node(s.inner)
    target.signal(s)


def _signal_lowering(s: SignalAfter) -> HostItems:
    inner = lowered(s.inner, "step")  # a branch_tasks stage takes native items only
    native = isinstance(inner, HostItems) and inner.native
    return HostItems(lambda program: _emit_signal(s, program), native=native)


def _emit_wait(w: Wait, target: Target) -> None:
    target.wait(w.writer.payload)


register_node_kind("signal_after", reads=lambda s: [t for t in s.inner.planes() if t[2] == "read"],
                   writes=lambda s: [t for t in s.inner.planes() if t[2] != "read"],
                   lower_cpu=_signal_lowering,
                   reference=lambda s, interpreter: interpreter.node(s.inner),
                   lower_gpu=lambda s: GpuItems(lambda gpu: _emit_signal(s, gpu)), both_sides=True,
                   bodies=lambda s: [Body([s.inner])],
                   rebuild=lambda s, swap: SignalAfter(swap.node(s.inner)),
                   picture=lambda s: s.inner.picture(), flow=lambda s: InnerFlow(s.inner),
                   label=lambda s: s.inner.default_label(),  # drawn as the step it signals after
                   samples=lambda s: s.inner.samples())
# A wait has no samples of its own: it does not stop a stage running as branch tasks.
register_node_kind("wait", reads=lambda w: [], writes=lambda w: [],
                   lower_cpu=lambda w: HostItems(lambda program: _emit_wait(w, program), native=True),
                   reference=lambda w, interpreter: None,
                   lower_gpu=lambda w: GpuItems(lambda gpu: _emit_wait(w, gpu)),
                   rebuild=lambda w, swap: w, picture=lambda w: NoPicture(w.writer), flow=lambda w: NoFlow(),
                   samples=lambda w: 0)
