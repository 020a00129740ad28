"""The one adapter from an eagle.Graph to the neutral model every picture is drawn from.

This is the only module of eagle-viz that reads a Graph's private attributes;
the layout and the faces see a :class:`GraphModel` and nothing else, so a new
source of graphs (the builder's recorder, a C++ graph) needs only a new adapter.

The model is a tree of blocks per stage: :class:`Box` (one node), :class:`Seq`
(blocks run in order), :class:`Fork` (branches that may run at once, joined
after) and :class:`Frame` (a conditional around a block). The builder's device
``if``/``else`` and ``match`` are a Frame around a Fork of their arms, its loops
a Frame around a Seq; the nodes inside them are boxes of their own, which share
the edges of the construct they are in. A wait draws no box: the data edge it
waits for is drawn.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import eagle
from eagle._graph import _default_label
from eagle._nodes import Conditional, Opaque
from eagle._regions import Body, DeviceIf, DeviceLoop, DeviceSwitch, SignalAfter, Wait
from eagle._regions import Fork as BodyFork
from eagle.graph import Edge

#: How each node kind is drawn: a plan launch is a kernel; your Python function,
#: an opaque op (a callable eagle cannot look into) and every other kind differ.
ROLES: Final = ("kernel", "python", "opaque", "builtin")


@dataclass(frozen=True)
class NodeInfo:
    #: Position in ``Graph.node_labels()``: what edge endpoints index.
    index: int
    #: The node's label (its ``name=``, else the plan or function name).
    label: str
    #: One of :data:`ROLES`.
    role: str
    #: A tier tag (``"stream"``, ``"host"``) or ``""``.
    tag: str
    #: The graph node whose edges it has: itself, or the device construct it is inside.
    owner: int


@dataclass(frozen=True)
class Box:
    node: int


@dataclass(frozen=True)
class Seq:
    #: Run in this order; the pictures draw them top to bottom.
    items: tuple[Block, ...]


@dataclass(frozen=True)
class Fork:
    #: In add order, drawn left to right; at least two.
    branches: tuple[Seq, ...]


@dataclass(frozen=True)
class Frame:
    #: What the frame says: ``"skip if guard"``, ``"repeat ≤ N"``.
    label: str
    #: ``"skip"`` or ``"repeat"`` (the builder adds ``"if"``, ``"switch"``, ``"loop"``).
    kind: str
    body: Block


Block = Box | Seq | Fork | Frame


@dataclass(frozen=True)
class StageInfo:
    index: int
    #: ``"work_share"``, ``"branch_tasks"``, ``"capture"`` once built, else None.
    schedule: str | None
    block: Block


@dataclass(frozen=True)
class GraphModel:
    """A graph as the pictures see it: nodes, stages as a tree of blocks, the derived edges.

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> model = eagle.viz.describe(g, "example")
    >>> [n.label for n in model.nodes], len(model.stages), model.backend
    (['fill', 'inc'], 2, None)
    """

    #: The graph's nodes (``index`` < ``size``), then the nodes inside its device constructs.
    nodes: tuple[NodeInfo, ...]
    #: In run order; each stage waits for the one before.
    stages: tuple[StageInfo, ...]
    #: The derived edges (``eagle.Graph.edges()``).
    edges: tuple[Edge, ...]
    backend: str | None
    groups: int
    recorded: bool
    #: How many nodes the graph itself has (``Graph.node_labels()``).
    size: int

    @property
    def header(self) -> str:
        """The first line of every picture: what the graph is so far."""
        n, k = self.size, self.groups
        parts = [f"eagle.Graph {n} node{'s' * (n != 1)}", f"{k} group{'s' * (k != 1)}",
                 f"backend: {self.backend or '(not built)'}"]
        if self.recorded:
            parts.append("recorded")
        return " · ".join(parts)


def describe(graph: Any, api: str) -> GraphModel:
    """The neutral model of ``graph`` as it stands, built or not.

    :param api: the name refusals start with.

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> eagle.viz.describe(g, "example").edges
    (Edge(src=0, dst=1, plane='x', kind='RAW'),)
    """
    if not isinstance(graph, eagle.Graph):
        raise TypeError(f"{api}: expected an eagle.Graph, got {type(graph).__name__}")
    adapter = _Adapter(graph._backend)
    for i, (node, label) in enumerate(zip(graph._nodes, graph._labels, strict=True)):
        adapter.info(node, label, i)
    schedule = graph._schedule
    stages = tuple(StageInfo(s, schedule[s] if schedule else None, adapter.stage(stage, graph._nodes))
                   for s, stage in enumerate(graph._stages))
    return GraphModel(tuple(adapter.nodes), stages, tuple(graph.edges()), graph._backend,
                      sum(stage.group for stage in graph._stages), bool(graph.record), len(graph._nodes))


class _Adapter:
    def __init__(self, backend: str | None) -> None:
        self.backend = backend
        self.nodes: list[NodeInfo] = []

    def info(self, node: Any, label: str, owner: int) -> int:
        """Number ``node`` (the next index) and describe it; its index."""
        index = len(self.nodes)
        self.nodes.append(_node_info(index, node, label, owner, self.backend))
        return index

    def stage(self, stage: Any, nodes: list[Any]) -> Block:
        branches = [[self.block(i, nodes[i]) for i in branch if not isinstance(nodes[i].payload, Wait)]
                    for branch in stage.branches]
        return _fork(branches)

    def block(self, index: int, node: Any) -> Block:
        payload = node.payload
        if isinstance(payload, Conditional):
            return Frame(payload.label, "skip" if payload.max_iters is None else "repeat", Box(index))
        if isinstance(payload, DeviceLoop):
            return Frame(payload.label, "loop", self.body(payload.body, index))
        if isinstance(payload, DeviceIf):
            arms = [payload.then, *([payload.orelse] if payload.orelse.steps else [])]
            return Frame("if guard" + " · else" * (len(arms) > 1), "if", self.arms(arms, index))
        if isinstance(payload, DeviceSwitch):
            keys = [*map(str, payload.arms), "_"]
            arms = [*payload.arms.values(), payload.default]
            shown = [(k, a) for k, a in zip(keys, arms, strict=True) if a.steps]
            return Frame("match guard: " + " | ".join(k for k, _ in shown), "switch",
                         self.arms([a for _, a in shown], index))
        return Box(index)

    def arms(self, bodies: list[Body], owner: int) -> Block:
        """The arms of an if or a match side by side (an arm that does nothing is left out)."""
        return _fork([[self.body(b, owner)] for b in bodies if b.steps])

    def body(self, body: Body, owner: int) -> Block:
        """A construct's body: its nodes numbered after the graph's, sharing the construct's edges."""
        items: list[Block] = []
        for step in body.steps:
            if isinstance(step, BodyFork):
                items.append(_fork([[self.body(b, owner)] for b in step.branches if b.steps]))
            elif not isinstance(step.payload, Wait):
                items.append(self.block(self.info(step, _default_label(step), owner), step))
        return _seq(items)


def _seq(items: list[Block]) -> Block:
    return items[0] if len(items) == 1 else Seq(tuple(items))


def _fork(branches: list[list[Block]]) -> Block:
    """A stage or fork of branches; one branch is just a sequence."""
    branches = [b for b in branches if b]
    if len(branches) == 1:
        return _seq(branches[0])
    return Fork(tuple(b[0] if isinstance(b[0], Seq) and len(b) == 1 else Seq(tuple(b)) for b in branches))


def _node_info(index: int, node: Any, label: str, owner: int, backend: str | None) -> NodeInfo:
    step = node.payload.step if isinstance(node.payload, Conditional) else node
    if isinstance(step.payload, SignalAfter):  # a node another branch waits for: drawn as itself
        step = step.payload.inner
    payload = step.payload
    if step.kind == "plan":
        role = "kernel"
    elif isinstance(payload, Opaque):
        # Seed 002 draws opaque(your_function) as <name> in a solid box; seed 001
        # draws an opaque op (a ufunc partial, a cupy kernel) with a dashed border.
        role = "python" if isinstance(payload.fn, (types.FunctionType, types.MethodType)) else "opaque"
    else:
        role = "builtin"
    tag = ""
    if isinstance(payload, Opaque) and payload.tier == "stream":
        tag = "stream: cpu runs eagerly" if backend == "cpu" else "stream"  # seed 001, the tiers
    elif isinstance(payload, Opaque) and payload.tier == "eager":
        tag = "host"
    return NodeInfo(index, label, role, tag, owner)


def walk(block: Block) -> Iterator[tuple[str, Box | Frame]]:
    """The boxes in order, a frame opened before its body and closed after: ``("box"|"open"|"close", b)``."""
    if isinstance(block, Box):
        yield "box", block
    elif isinstance(block, Frame):
        yield "open", block
        yield from walk(block.body)
        yield "close", block
    else:
        for part in block.branches if isinstance(block, Fork) else block.items:
            yield from walk(part)
