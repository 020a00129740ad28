"""A graph's nodes as the reverse pass sees them: leaves, choices and loops.

A *leaf* is one node that reads and writes planes (a kernel, a copy, a
reduce, an opaque step, a plugin's node).  A *choice* runs one of its arms
(a device if or switch, a skippable step), a *loop* repeats its body (a
device loop, a repeat_while).  Waits order branches and carry no data, so
they are dropped; a node another branch waits for is its inner node.

Arrays are compared by *place*: the memory a view covers (address, shape,
strides, dtype), so two array objects over the same memory are one place,
and a gradient belongs to a place.  A ``Param`` of a kernel leaf is a place
of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eagle.extend import (
    Body,
    ChoiceFlow,
    CopyFlow,
    EagleTypeError,
    InnerFlow,
    KernelFlow,
    LeafFlow,
    LoopFlow,
    Node,
    NoFlow,
    ReduceFlow,
    RowFlow,
    Swap,
)
from eagle.extend import node_kind as kind_of
from eagle.plan import BoundPlan

Place = tuple[Any, ...]


def place(array: np.ndarray) -> Place:
    """The memory ``array`` covers: two arrays over the same memory give one place."""
    return (array.ctypes.data, array.shape, array.strides, array.dtype.str)


def is_float(array: Any) -> bool:
    return isinstance(array, np.ndarray) and array.dtype.kind == "f"


@dataclass(frozen=True, eq=False)
class Plane:
    name: str
    array: np.ndarray
    role: str  # "read", "write" or "readwrite"
    place: Place

    @property
    def reads(self) -> bool:
        return self.role != "write"

    @property
    def writes(self) -> bool:
        return self.role != "read"


@dataclass(frozen=True, eq=False)
class ParamSlot:
    """A float ``Param`` of a kernel leaf: one value for all samples, a place of its own."""

    name: str
    value: Any
    dtype: np.dtype
    place: Place


@dataclass(eq=False)
class Leaf:
    node: Node  # what runs
    label: str
    kind: str  # "kernel" (hawk), "copy", "reduce", or "other" (opaque, plugin, plain plan)
    planes: list[Plane]
    params: list[ParamSlot] = field(default_factory=list)
    flow: Any = None  # what its kind says it does (eagle._flows): a copy's and a reduce's arrays
    lowering: Any = None  # at the top level: the graph's own lowering of the node
    #: a hawk kernel's written plane -> the read planes and Params its value has a derivative of
    #: (None: every float one it reads)
    depends: Mapping[str, frozenset[str]] | None = None

    @functools.cached_property
    def reads(self) -> frozenset[Place]:
        return frozenset(p.place for p in self.planes if p.reads)

    @functools.cached_property
    def writes(self) -> frozenset[Place]:
        return frozenset(p.place for p in self.planes if p.writes)

    @functools.cached_property
    def float_reads(self) -> frozenset[Place]:
        return frozenset(p.place for p in self.planes if p.reads and is_float(p.array)) | frozenset(
            s.place for s in self.params)

    @functools.cached_property
    def float_writes(self) -> frozenset[Place]:
        return frozenset(p.place for p in self.planes if p.writes and is_float(p.array))

    @functools.cached_property
    def sources(self) -> dict[Place, frozenset[Place]]:
        """Each float place written -> the float places its new value has a derivative of."""
        if self.depends is None:
            return {w: self.float_reads for w in self.float_writes}
        by_name = {name: p for name, p, _ in self.planes_named()}
        out: dict[Place, frozenset[Place]] = {}
        for p in self.planes:
            if p.writes and p.place in self.float_writes:
                names = self.depends.get(p.name)  # a Mutable it never stores keeps its value
                found = frozenset({p.place}) if names is None else frozenset(by_name[n] for n in names)
                out[p.place] = out.get(p.place, frozenset()) | found
        return out

    @functools.cached_property
    def defines(self) -> frozenset[Place]:
        """Places this leaf overwrites whole, whatever they held: a kernel's outputs, a copy's target."""
        if self.kind in ("kernel", "copy", "reduce", "row"):
            return frozenset(p.place for p in self.planes if p.role == "write")
        return frozenset()

    @functools.cached_property
    def valued(self) -> list[Plane]:
        """The read planes whose values its reverse reads: a row move's index only."""
        if self.kind == "row":
            return [p for p in self.planes if p.name == "index"]
        return [p for p in self.planes if p.reads]

    @functools.cached_property
    def carries(self) -> list[Plane]:
        """The read planes its writes depend on: not the table a row moves into, whose other
        rows it leaves as they are."""
        if self.kind == "row" and self.flow.put:
            return [p for p in self.planes if p.reads and p.name != "table"]
        return [p for p in self.planes if p.reads]

    @property
    def needs_values(self) -> bool:
        """Whether its reverse reads the values of what it reads (a copy or a sum does not)."""
        if not self.float_writes:
            return False
        if self.kind == "copy":
            return False
        if self.kind == "reduce":
            return self.flow.op != "sum"
        return True

    def planes_named(self) -> Iterator[tuple[str, Place, Any]]:
        yield from ((p.name, p.place, p.array) for p in self.planes)
        yield from ((s.name, s.place, s) for s in self.params)


@dataclass(eq=False)
class Choice:
    """Run one arm: ``kind`` "if" (arms: then, else) or "switch" (one arm per key, then the default)."""

    node: Node
    label: str
    cell: Plane
    kind: str
    keys: list[int]
    arms: list[list[Step]]

    @functools.cached_property
    def writes(self) -> frozenset[Place]:
        return frozenset().union(*(writes_of(arm) for arm in self.arms))

    @functools.cached_property
    def reads(self) -> frozenset[Place]:
        return frozenset([self.cell.place]).union(*(reads_of(arm) for arm in self.arms))


@dataclass(eq=False)
class Loop:
    """Repeat ``body``: kind "while", "do" or "count", at most ``cap`` turns (-1: no cap)."""

    node: Node
    label: str
    cell: Plane
    kind: str
    cap: int
    body: list[Step]

    @functools.cached_property
    def writes(self) -> frozenset[Place]:
        return writes_of(self.body)

    @functools.cached_property
    def reads(self) -> frozenset[Place]:
        return frozenset([self.cell.place]) | reads_of(self.body)


Step = Leaf | Choice | Loop


def writes_of(steps: list[Step]) -> frozenset[Place]:
    return frozenset().union(*(s.writes for s in steps))


def reads_of(steps: list[Step]) -> frozenset[Place]:
    return frozenset().union(*(s.reads for s in steps))


def leaves(steps: list[Step]) -> Iterator[Leaf]:
    for s in steps:
        if isinstance(s, Leaf):
            yield s
        elif isinstance(s, Choice):
            for arm in s.arms:
                yield from leaves(arm)
        else:
            yield from leaves(s.body)


def read_planes(steps: list[Step]) -> Iterator[Plane]:
    """Every plane a step reads (a construct's cell too), nested steps included."""
    for s in steps:
        if isinstance(s, Leaf):
            yield from (p for p in s.planes if p.reads)
        else:
            yield s.cell
            yield from read_planes(s.body if isinstance(s, Loop) else [x for arm in s.arms for x in arm])


def steps_planes(steps: list[Step]) -> Iterator[tuple[Step, Plane]]:
    """(step, plane) for every plane of a leaf and every construct's cell, in order, nested ones too."""
    for s in steps:
        if isinstance(s, Leaf):
            yield from ((s, p) for p in s.planes)
            continue
        yield s, s.cell
        for body in (s.arms if isinstance(s, Choice) else [s.body]):
            yield from steps_planes(body)


def write_planes(steps: list[Step]) -> Iterator[Plane]:
    for leaf in leaves(steps):
        yield from (p for p in leaf.planes if p.writes)


# ------------------------------------------------------------------ from nodes


#: How a leaf sees a plane: as a NumPy array over its memory (:func:`host_view`), or, for a graph
#: on a GPU, over the host copy of its memory (:class:`eagle.diff.device.Twins`); None: no memory.
View = Callable[[Any], np.ndarray | None]


def step_of(node: Node, label: str, labels: Callable[[Node], str], view: View | None = None) -> Step | None:
    """The step a graph node is, by what its kind says it does (its flow); None for a wait.
    ``view``: how its planes are seen (:func:`host_view` by default)."""
    flow = node.flow()
    make = _FROM_FLOW.get(type(flow))
    if make is None:
        raise EagleTypeError(f"eagle.diff: node {label!r} of {kind_of(node.kind).describe()} says it does "
                        f"{flow!r}, which is no form of eagle._flows: return one of them from its flow=")
    return make(node, flow, label, labels, view or host_view)


def body_of(body: Body, labels: Callable[[Node], str], view: View) -> list[Step]:
    steps = (step_of(n, labels(n), labels, view) for n in body.nodes())
    return [s for s in steps if s is not None]


def _inside(flow: ChoiceFlow | LoopFlow, label: str, labels: Callable[[Node], str]) -> Callable[[Node], str]:
    """How the nodes of a construct's bodies are named: a guarded step by the guard's label."""
    return (lambda n: label) if flow.lends_label else labels


def _choice(node: Node, flow: ChoiceFlow, label: str, labels: Callable[[Node], str], view: View) -> Choice:
    arms = [body_of(arm, _inside(flow, label, labels), view) for arm in flow.arms]
    if flow.keys is None:
        return Choice(node, label, _cell(view(flow.cell)), "if", [], arms)
    return Choice(node, label, _cell(view(flow.cell)), "switch", list(flow.keys), arms)


def _loop(node: Node, flow: LoopFlow, label: str, labels: Callable[[Node], str], view: View) -> Loop:
    body = body_of(flow.body, _inside(flow, label, labels), view)
    return Loop(node, label, _cell(view(flow.cell)), flow.kind, flow.cap, body)


_FROM_FLOW: dict[type, Callable[[Node, Any, str, Callable[[Node], str], View], Step | None]] = {
    LeafFlow: lambda node, flow, label, labels, view: leaf_of(node, label, flow, view),
    KernelFlow: lambda node, flow, label, labels, view: leaf_of(node, label, flow, view),
    CopyFlow: lambda node, flow, label, labels, view: leaf_of(node, label, flow, view),
    ReduceFlow: lambda node, flow, label, labels, view: leaf_of(node, label, flow, view),
    RowFlow: lambda node, flow, label, labels, view: leaf_of(node, label, flow, view),
    ChoiceFlow: _choice,
    LoopFlow: _loop,
    InnerFlow: lambda node, flow, label, labels, view: step_of(flow.node, label, labels, view),
    NoFlow: lambda node, flow, label, labels, view: None,
}


def _cell(cell: np.ndarray) -> Plane:
    return Plane("guard", cell, "read", place(cell))


def leaf_of(node: Node, label: str, flow: LeafFlow | KernelFlow | CopyFlow | ReduceFlow | RowFlow,
            view: View | None = None) -> Leaf:
    """The leaf a node is; a kernel launch is a "kernel" leaf when its kernel language derives
    kernels (a hawk kernel's plan has a ``vjp``), else a leaf like an opaque step."""
    viewed = ((name, (view or host_view)(array), role) for name, array, role in node.planes())
    planes = [Plane(name, array, role, place(array)) for name, array, role in viewed if array is not None]
    if isinstance(flow, KernelFlow) and hasattr(getattr(flow.bound.plan, "source", None), "vjp"):
        return Leaf(node, label, "kernel", planes, _params(node, flow.bound), depends=flow.bound.plan.depends,
                    flow=flow)
    return Leaf(node, label, _LEAF_KINDS.get(type(flow), "other"), planes, flow=flow)


_LEAF_KINDS = {CopyFlow: "copy", ReduceFlow: "reduce", RowFlow: "row"}


def host_view(plane: Any) -> np.ndarray | None:
    """A plane as a NumPy view of its memory: an ndarray, or an object exposing it through
    ``__array_interface__`` or the buffer protocol (a plugin's plane, such as a torch tensor's),
    which would otherwise drop out of the reverse path unseen; None for what holds no host memory."""
    if isinstance(plane, np.ndarray):
        return plane
    if hasattr(plane, "__array_interface__"):
        return np.asarray(plane)
    try:
        return np.asarray(memoryview(plane))
    except TypeError:
        return None


def _params(node: Node, bound: BoundPlan) -> list[ParamSlot]:
    slots = bound.plan.compiled.ir.slots
    found = []
    for k, slot in enumerate(slots[:len(bound.plan.source.params)]):
        if slot.role == "value" and slot.dtype in ("f64", "f32", "wf"):
            dtype = np.dtype(np.float32 if slot.dtype == "f32" else np.float64)
            found.append(ParamSlot(slot.name, bound.args[k], dtype, ("param", id(node), slot.name)))
    return found


# ------------------------------------------------------------------ rebinding


def rebind(leaf: Leaf, arrays: dict[Place, np.ndarray]) -> Node | None:
    """The leaf's node over other arrays (by place), rebuilt through its kind; None for a node
    whose kind cannot be re-pointed (an opaque step keeps its own references)."""
    if kind_of(leaf.node.kind).rebuild is None:
        return None if leaf.planes else leaf.node  # touching no plane, it has nothing to re-point
    return Swap(lambda a: arrays.get(place(a), a) if isinstance(a, np.ndarray) else a).node(leaf.node)
