"""The one adapter from an eagle.Graph to the neutral model every picture is drawn from.

This is the only module of eagle-viz that reads a Graph's private attributes;
the layout and the faces see a :class:`GraphModel` and nothing else, so a new
source of graphs (the builder's recorder, a C++ graph) needs only a new adapter.

The model is a tree of blocks per stage: :class:`Box` (one node), :class:`Seq`
(blocks run in order), :class:`Fork` (branches that may run at once, joined
after) and :class:`Frame` (a conditional around a block).  Each node says how
it is drawn through its kind's ``picture`` (eagle._pictures), and this adapter
knows no kind: a box is a Box; a frame around bodies side by side (the arms of
a device ``if``/``match``) is a Frame around a Fork of them, around one body (a
loop) a Frame around a Seq, around the node's own box (a guarded step) a Frame
around its Box; the nodes inside bodies are boxes of their own, which share the
edges of the construct they are in.  A wait has no box: it is an arrow from
the node it waits for to the next node of its branch, in a stage or inside a
construct's body.  The graph's edges see a construct as one node, so the
planes that pass between the nodes of its bodies are found here (``flows``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import eagle
from eagle.extend import ROLES as ROLES
from eagle.extend import (
    Body,
    BoxPicture,
    EagleTypeError,
    EagleValueError,
    FramePicture,
    Node,
    NoPicture,
    Picture,
)
from eagle.extend import Fork as BodyFork
from eagle.graph import Edge
from eagle.viz._body_flows import Writers
from eagle.viz._bulk import without_cycle_passes


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
    #: The graph node whose edges it has: itself, or the graph's device construct it is inside
    #: (the outermost, for a node in a construct nested in another's body).
    owner: int
    #: The name its one output was assigned to (``v = scale_velocity(…)``: ``v``), or ``""``.
    output: str = ""


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
    #: ``"skip"`` or ``"repeat"`` (the builder adds ``"if"``, ``"switch"``, ``"loop"``; a
    #: plugin kind its own word), or ``"fused"``: a fused run of the build (``Graph.fused_runs``).
    kind: str
    body: Block


Block = Box | Seq | Fork | Frame


@dataclass(frozen=True)
class StageInfo:
    index: int
    #: ``"work_share"``, ``"branch_tasks"``, ``"capture"`` once built, else None.
    schedule: str | None
    block: Block
    #: The last stage of a folded run of alike stages drawn as this one, else None.
    last: int | None = None


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
    #: A folded run's first node -> the nodes of its period and how often it repeats.
    folds: dict[int, tuple[tuple[int, ...], int]] = field(default_factory=dict)
    #: A node folded away -> the node drawn for it (edges are drawn between those).
    alias: dict[int, int] = field(default_factory=dict)
    #: (the node a branch waits for, the node that waits: the first box of the rest of its
    #: branch, in a stage or a construct's body), in order.
    waits: tuple[tuple[int, int], ...] = ()
    #: The planes passed between the nodes inside one construct, which the graph's edges (between
    #: graph nodes) cannot say: (writer, reader, plane), in order.
    flows: tuple[tuple[int, int, str], ...] = ()
    #: The box that stands for the last branches of a wide fork -> how many branches it is.
    more: dict[int, int] = field(default_factory=dict)

    @property
    def header(self) -> str:
        """The first line of every picture: what the graph is so far."""
        n, k = self.size, self.groups
        parts = [f"eagle.Graph {n} node{'s' * (n != 1)}", f"{k} group{'s' * (k != 1)}",
                 f"backend: {self.backend or '(not built)'}"]
        if self.recorded:
            parts.append("recorded")
        return " · ".join(parts)


@without_cycle_passes
def describe(graph: Any, api: str, fold: bool = True) -> GraphModel:
    """The neutral model of ``graph`` as it stands, built or not.

    :param api: the name refusals start with.
    :param fold: draw a run of alike nodes (``scale, shift`` 500 times over) as one box
        (``scale, shift ×500``), alike branches of a fork as one, the branches of a wide fork
        past its first few as one box (``… 42 more branches``); False draws every node.

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> eagle.viz.describe(g, "example").edges
    (Edge(src=0, dst=1, plane='x', kind='RAW'),)
    """
    if not isinstance(graph, eagle.Graph):
        raise EagleTypeError(f"{api}: expected an eagle.Graph, got {type(graph).__name__}")
    adapter = _Adapter(graph._backend)
    for i, (node, label) in enumerate(zip(graph._nodes, graph._labels, strict=True)):
        adapter.info(node, label, i)
    schedule = graph._schedule
    stages = [StageInfo(s, schedule[s] if schedule else None, adapter.stage(stage, graph._nodes))
              for s, stage in enumerate(graph._stages)]
    runs = [[adapter.index[id(node)] for node in run] for run in graph._runs or []]
    folds: dict[int, tuple[tuple[int, ...], int]] = {}
    alias: dict[int, int] = {}
    members: dict[int, list[int]] = {}
    more: dict[int, int] = {}
    if fold:  # before the fused runs are framed: a run of alike nodes may span several
        from eagle.viz._fold import fold_stages  # _fold builds on this module's blocks

        stages, folds, alias, members, more = fold_stages(stages, adapter.nodes)
    stages = _framed_runs(stages, runs, members)
    return GraphModel(tuple(adapter.nodes), tuple(stages), tuple(graph.edges()), graph._backend,
                      sum(stage.group for stage in graph._stages), bool(graph.record), len(graph._nodes),
                      folds, alias, adapter.resolved_waits(api), tuple(adapter.flows), more)


class _Adapter:
    def __init__(self, backend: str | None) -> None:
        self.backend = backend
        self.nodes: list[NodeInfo] = []
        self.index: dict[int, int] = {}  # id of a node -> its index
        self.waits: list[tuple[Node, int]] = []  # (the node waited for, the node that waits)
        self.flows: list[tuple[int, int, str]] = []  # (writer, reader, plane) inside constructs
        self.last_box: dict[int, int] = {}  # a construct inside a body -> its last box
        self.pictures: list[Picture] = []  # each node's, asked once (a kind's hook makes a new one)

    def info(self, node: Node, label: str, owner: int, picture: Picture | None = None) -> int:
        """Number ``node`` (the next index) and describe it (``picture``: its own, when asked
        already); its index."""
        index = self.index[id(node)] = len(self.nodes)
        picture = node.picture() if picture is None else picture
        self.pictures.append(picture)
        self.nodes.append(_node_info(index, node, picture, label, owner, self.backend))
        return index

    def resolved_waits(self, api: str) -> tuple[tuple[int, int], ...]:
        """The waits as (node index, node index), once every node is numbered."""
        missing = [after.default_label() for after, _ in self.waits if id(after) not in self.index]
        if missing:
            raise EagleValueError(f"{api}: a wait waits for {', '.join(missing)}, which is not a node of "
                                  "this graph or of its constructs' bodies; wait for a node added to it")
        return tuple((self.last_box.get(i := self.index[id(after)], i), node) for after, node in self.waits)

    def stage(self, stage: Any, nodes: list[Node]) -> Block:
        branches = []
        for branch in stage.branches:
            waits = _Waits(self)
            blocks = [waits.before(nodes[i], self.block(i, nodes[i])) for i in branch]
            branches.append([b for b in blocks if b is not None])
        return _fork(branches)

    def block(self, index: int, node: Node, writers: Writers | None = None) -> Block | None:
        """How node ``index`` is drawn; None for a node that draws nothing.  ``writers``: inside a
        construct, the last writers of the planes before it, which its nodes' reads are flows from."""
        picture = self.pictures[index]
        if isinstance(picture, NoPicture):
            return None
        if not isinstance(picture, FramePicture) or not picture.bodies:  # the node's own box
            if writers is not None:
                writers.step(index, node)
            return Frame(picture.title, picture.frame, Box(index)) if isinstance(picture, FramePicture) \
                else Box(index)
        inside = Writers(self.flows) if writers is None else writers
        owner = self.nodes[index].owner  # a nested construct's nodes have the graph node's edges too
        if picture.side_by_side:  # an arm that does nothing is left out; each arm runs from the same writers
            arms = [inside.copy() for _ in picture.bodies]
            blocks = [self.body(b, owner, arm) for b, arm in zip(picture.bodies, arms, strict=True)]
            inside.join(arms, picture.one_runs)
            return self.nested(index, Frame(picture.title, picture.frame,
                                            _fork([[b] for b in blocks if b is not None])))
        # the bodies in order, which may run no time (a loop's guard false at once), or again
        run = inside.copy(turns=picture.frame == "loop")
        blocks = [self.body(b, owner, run) for b in picture.bodies]
        run.carry()
        inside.join([run])
        body = _seq([b for b in blocks if b is not None])
        return self.nested(index, Frame(picture.title, picture.frame, body))

    def nested(self, index: int, frame: Frame) -> Frame:
        """``frame``, construct ``index``'s; inside another construct, a wait for it leaves its last box
        (it has no box, nor edges of its own: those are the graph node's it is inside)."""
        if self.nodes[index].owner != index:
            self.last_box[index] = [b.node for event, b in walk(frame) if event == "box"][-1]
        return frame

    def body(self, body: Body, owner: int, writers: Writers) -> Block | None:
        """A construct's body: its nodes numbered after the graph's, sharing the construct's edges
        (``owner``'s); None when it draws nothing.  Its forks' branches run one after another."""
        items: list[Block] = []
        waits = _Waits(self)
        for step in body.steps:
            if isinstance(step, BodyFork):
                branches = [[b] for branch in step.branches if (b := self.body(branch, owner, writers))]
                block: Block | None = _fork(branches) if branches else None
            elif isinstance(picture := step.picture(), NoPicture):
                block = None
            else:
                block = self.block(self.info(step, step.default_label(), owner, picture), step, writers)
            if (block := waits.before(step, block)) is not None:
                items.append(block)
        return _seq(items) if items else None


class _Waits:
    """The waits of one branch (of a stage or of a fork inside a body): each an arrow from the
    node it waits for into the first box of what follows it in the branch."""

    def __init__(self, adapter: _Adapter) -> None:
        self.adapter = adapter
        self.waiting: list[Node] = []

    def before(self, step: Node | BodyFork, block: Block | None) -> Block | None:
        """``block`` (how ``step`` is drawn), the waits before it drawn into it; a wait is held
        for the next block."""
        if block is None:
            picture = step.picture() if isinstance(step, Node) else None
            if isinstance(picture, NoPicture) and picture.after is not None:
                self.waiting.append(picture.after)
            return None
        if not self.waiting:
            return block
        first = next(b.node for event, b in walk(block) if event == "box")
        self.adapter.waits += [(after, first) for after in self.waiting]
        self.waiting = []
        return block


class _Framer:
    """Frames each fused run (``runs``: model node index -> its run) in the blocks: a ``fused N``
    frame around the consecutive blocks wholly in one run, at any depth (a stage, a branch of a
    fork, a construct's body).  A run a fork's branches cut is framed in parts, each
    ``fused N, part k of m`` (``parts``: how many each run has, from a pass without it)."""

    def __init__(self, runs: dict[int, int], sizes: list[int], members: dict[int, list[int]],
                 parts: list[int] | None = None) -> None:
        self.runs, self.sizes, self.members, self.parts = runs, sizes, members, parts
        self.made = [0] * len(sizes)  # frames made per run

    def whole(self, block: Block) -> tuple[int, ...] | None:
        """The runs every box of ``block`` is in, when each box is in one (a folded box's nodes
        may be in several, consecutive); None when one is in none (a construct's frame is never in
        a run: the construct is not a member, only its body's nodes may be)."""
        if isinstance(block, Box):
            runs = {self.runs.get(n) for n in self.members.get(block.node, [block.node])}
            return None if None in runs else tuple(sorted(runs))  # type: ignore[type-var]
        if isinstance(block, Frame):
            return None
        found = {self.whole(part) for part in (block.branches if isinstance(block, Fork) else block.items)}
        return found.pop() if len(found) == 1 else None

    def frame(self, runs: tuple[int, ...], blocks: list[Block]) -> Frame:
        if len(runs) > 1:  # a fold across runs the build cut
            label = f"fused {sum(self.sizes[r] for r in runs)} in {len(runs)} runs"
        else:
            run = runs[0]
            self.made[run] += 1
            label = f"fused {self.sizes[run]}"
            if self.parts is not None and self.parts[run] > 1:
                label += f", part {self.made[run]} of {self.parts[run]}"
        return Frame(label, "fused", blocks[0] if len(blocks) == 1 else Seq(tuple(blocks)))

    def seq(self, items: Sequence[Block]) -> list[Block]:
        """``items`` (in order) with each stretch wholly in one run framed, the rest looked into."""
        out: list[Block] = []
        k = 0
        while k < len(items):
            run = self.whole(items[k])
            j = k + 1
            while run is not None and j < len(items) and self.whole(items[j]) == run:
                j += 1
            out.append(self.inside(items[k]) if run is None else self.frame(run, list(items[k:j])))
            k = j
        return out

    def inside(self, block: Block) -> Block:
        if isinstance(block, Box):
            return block
        if isinstance(block, Frame):
            return Frame(block.label, block.kind, self.seq([block.body])[0])
        if isinstance(block, Fork):
            return Fork(tuple(Seq(tuple(self.seq(branch.items))) for branch in block.branches))
        return Seq(tuple(self.seq(block.items)))

    def stages(self, stages: list[StageInfo]) -> list[StageInfo]:
        """The stages, those wholly in one run drawn as one stage: the run's frame."""
        out: list[StageInfo] = []
        s = 0
        while s < len(stages):
            run = self.whole(stages[s].block)
            t = s + 1
            while run is not None and t < len(stages) and self.whole(stages[t].block) == run:
                t += 1
            block = self.inside(stages[s].block) if run is None else \
                self.frame(run, [stage.block for stage in stages[s:t]])
            last = stages[t - 1].last  # a folded run of stages says which it covers
            out.append(StageInfo(stages[s].index, stages[s].schedule, block,
                                 stages[t - 1].index if t - 1 > s else last))
            s = t
        return out


def _framed_runs(stages: list[StageInfo], runs: list[list[int]], members: dict[int, list[int]],
                 ) -> list[StageInfo]:
    """The stages with every fused run (``runs``: model node indices) framed; ``members``: the
    nodes of each folded box."""
    if not runs:  # an unbuilt graph, or one the build fused nothing of
        return stages
    of = {node: r for r, run in enumerate(runs) for node in run}
    sizes = [len(run) for run in runs]
    counting = _Framer(of, sizes, members)
    counting.stages(stages)
    return _Framer(of, sizes, members, counting.made).stages(stages)


def _seq(items: list[Block]) -> Block:
    return items[0] if len(items) == 1 else Seq(tuple(items))


def _fork(branches: list[list[Block]]) -> Block:
    """A stage or fork of branches; one branch is just a sequence."""
    branches = [b for b in branches if b]
    if len(branches) == 1:
        return _seq(branches[0])
    return Fork(tuple(b[0] if isinstance(b[0], Seq) and len(b) == 1 else Seq(tuple(b)) for b in branches))


def _node_info(index: int, node: Node, picture: Picture, label: str, owner: int, backend: str | None,
               ) -> NodeInfo:
    """A kernel's box says its kernel, and the name it was given where that differs
    (``v = scale_velocity(…)`` in a builder: ``scale_velocity → v``); its one output is that name."""
    box = picture.around if isinstance(picture, FramePicture) else picture
    if not isinstance(box, BoxPicture):
        box = BoxPicture()
    output = ""
    if box.role == "kernel" and label != (kernel := node.default_label()):
        writes = [name for name, _, role in node.planes() if role != "read"]
        output = label if len(writes) == 1 else ""
        label = f"{kernel} → {label}"
    return NodeInfo(index, label, box.role, box.shown_tag(backend), owner, output)


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

