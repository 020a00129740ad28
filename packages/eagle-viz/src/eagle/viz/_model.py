"""The one adapter from an eagle.Graph to the neutral model every picture is drawn from.

This is the only module of eagle-viz that reads a Graph's private attributes;
the layout and the faces see a :class:`GraphModel` and nothing else, so a new
source of graphs (the builder's recorder, a C++ graph) needs only a new adapter.

The model is a tree of blocks per stage: :class:`Box` (one node), :class:`Seq`
(blocks run in order), :class:`Fork` (branches that may run at once, joined
after) and :class:`Frame` (a conditional around a block). The builder's device
``if``/``else`` and ``match`` become a Frame whose body is a Fork of the arms,
its loops a Frame around a Seq; its cross-branch waits are one more edge kind.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import eagle
from eagle._nodes import Conditional, Opaque
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
    nodes: tuple[NodeInfo, ...]
    #: In run order; each stage waits for the one before.
    stages: tuple[StageInfo, ...]
    #: The derived edges (``eagle.Graph.edges()``).
    edges: tuple[Edge, ...]
    backend: str | None
    groups: int
    recorded: bool

    @property
    def header(self) -> str:
        """The first line of every picture: what the graph is so far."""
        n, k = len(self.nodes), self.groups
        parts = [f"eagle.Graph {n} node{'s' * (n != 1)}", f"{k} group{'s' * (k != 1)}",
                 f"backend: {self.backend or '(not built)'}"]
        if self.recorded:
            parts.append("recorded")
        return " · ".join(parts)


def describe(graph: Any, api: str) -> GraphModel:
    """The neutral model of ``graph`` as it stands, built or not."""
    if not isinstance(graph, eagle.Graph):
        raise TypeError(f"{api}: expected an eagle.Graph, got {type(graph).__name__}")
    nodes = tuple(_node_info(i, node, label, graph._backend)
                  for i, (node, label) in enumerate(zip(graph._nodes, graph._labels, strict=True)))
    schedule = graph._schedule
    stages = tuple(StageInfo(s, schedule[s] if schedule else None, _stage_block(stage, graph._nodes))
                   for s, stage in enumerate(graph._stages))
    return GraphModel(nodes, stages, tuple(graph.edges()), graph._backend,
                      sum(stage.group for stage in graph._stages), bool(graph.record))


def _stage_block(stage: Any, nodes: list[Any]) -> Block:
    branches = tuple(Seq(tuple(_node_block(i, nodes[i]) for i in branch)) for branch in stage.branches)
    if len(branches) > 1:
        return Fork(branches)
    only = branches[0]
    return only.items[0] if len(only.items) == 1 else only


def _node_block(index: int, node: Any) -> Block:
    payload = node.payload
    if isinstance(payload, Conditional):
        return Frame(payload.label, "skip" if payload.max_iters is None else "repeat", Box(index))
    return Box(index)


def _node_info(index: int, node: Any, label: str, backend: str | None) -> NodeInfo:
    step = node.payload.step if isinstance(node.payload, Conditional) else node
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
    return NodeInfo(index, label, role, tag)


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
