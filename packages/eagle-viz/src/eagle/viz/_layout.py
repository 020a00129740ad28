"""Where every box, frame, wire and long link of a graph goes: libeagle's layout engine, bound.

Positions are character cells (``x`` a column, ``y`` a row, both from the top
left), because the text face is the reference picture (seeds 001 and 002): the
matplotlib and SVG faces scale the same cells, and the Mermaid and DOT faces
take the same node texts, links, frames and rows.  So the faces cannot
disagree.  The engine itself is C (``libeagle/src/layout.c``, reached through
:func:`eagle.extend.lay_out`), so a C++ view of a graph draws the same
picture; this module turns the model into its picture tree and the result
into the records the faces read (named tuples: a 10,000-node picture makes
100,000 of them, and a frozen dataclass takes three times as long to make).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from eagle.extend import NativeLayout, lay_out
from eagle.viz._bulk import without_cycle_passes
from eagle.viz._model import Block, Box, Fork, Frame, GraphModel, NodeInfo, Seq

#: A node's label is cut past this many characters.
MAX_LABEL: Final = 24
#: Columns between the columns of a long graph flowed side by side (as layout.c's GUTTER).
GUTTER: Final = 6
#: Rows of a box: top border, text, bottom border.
BOX_ROWS: Final = 3
#: Edge kinds that carry a plane from the source to the destination (a WAR
#: edge only orders: the source read the plane the destination overwrites).
_DATA_KINDS: Final = ("RAW", "WAW")


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut at a word with ``…`` (seed 001's ``right…``)."""
    if len(text) <= width:
        return text
    room = width - 1
    if room <= 0:
        return "…"[:width]
    words = [k for k in range(1, room + 1) if text[k] in "_.- "]
    if words and 2 * words[-1] >= room:  # a word boundary that keeps at least half the room
        return text[:words[-1]] + "…"
    return text[:room] + "…"


def node_text(node: NodeInfo) -> str:
    """What a node's box says in every face: ``<name>`` for your Python function, and its tier tag."""
    text = cut(node.label, MAX_LABEL)
    if node.role == "python":
        text = f"<{text}>"
    return f"{text} [{node.tag}]" if node.tag else text


class PlacedBox(NamedTuple):
    node: int
    x: int
    y: int
    w: int
    text: str
    #: The node's role (see eagle.viz._model.ROLES); an ``"opaque"`` box is dashed.
    role: str

    @property
    def dashed(self) -> bool:
        return self.role == "opaque"

    @property
    def anchor(self) -> int:
        return self.x + self.w // 2


class PlacedFrame(NamedTuple):
    x: int
    y: int
    w: int
    h: int
    label: str
    kind: str


class PlacedPlanes(NamedTuple):
    """The plane names a node passes on, in the row under it, centred on column ``x``."""

    node: int
    x: int
    y: int
    #: Every plane it passes on (the text face, which draws no long links).
    text: str
    #: Only those its wires carry (a face that draws long links apart).
    wired: str


class Wire(NamedTuple):
    """An orthogonal path of cells from ``src``'s bottom to ``dst``'s top (where the arrow points)."""

    src: int
    dst: int
    points: tuple[tuple[int, int], ...]


class PlacedStage(NamedTuple):
    index: int
    x: int
    y: int
    text: str
    #: Columns of the label column, the one space before the drawing included.
    width: int


class Link(NamedTuple):
    """One arrow of the pictures: ``src`` runs before ``dst``.

    ``adjacent`` links are the wires (a node and what follows it in its
    sequence); the others are data edges that skip over nodes in between, or
    run to a sibling branch (a wait), in a stage or inside a construct's body,
    routed around the boxes: ``points``, from the cell beside ``src`` to the
    cell beside ``dst`` (the engine routes every one, or refuses the layout).
    """

    src: int
    dst: int
    #: The planes that flow along it; empty for a link that only orders.
    planes: tuple[str, ...]
    adjacent: bool
    points: tuple[tuple[int, int], ...] = ()


@dataclass
class Layout:
    """A model placed in character cells: boxes, frames, plane names and wires; every face draws it.

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> lay = eagle.viz.layout(eagle.viz.describe(g, "example"))
    >>> [lay.texts[b.node] for b in lay.boxes], lay.width > 0 and lay.height > 0
    (['<fill>', '<inc>'], True)
    """

    model: GraphModel
    #: The engine's own result, which libeagle's text drawer reads.
    native: NativeLayout
    width: int = 0
    height: int = 0
    #: node index -> the text of its box, the same in every face.
    texts: dict[int, str] = field(default_factory=dict)
    boxes: list[PlacedBox] = field(default_factory=list)
    frames: list[PlacedFrame] = field(default_factory=list)
    planes: list[PlacedPlanes] = field(default_factory=list)
    wires: list[Wire] = field(default_factory=list)
    stages: list[PlacedStage] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    #: The planes of each owner pair the engine was given, in its order (what a link's pair names).
    pairs: list[tuple[str, ...]] = field(default_factory=list)
    #: node index -> the planes it passes on over its links, and over its wires only, in first-seen order.
    passes_on: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)

    def box(self, node: int) -> PlacedBox:
        return next(b for b in self.boxes if b.node == node)

    def outgoing(self, node: int, adjacent_only: bool = False) -> tuple[str, ...]:
        """The planes ``node`` passes on, over its links (or its wires only), in first-seen order."""
        return self.passes_on.get(node, ((), ()))[adjacent_only]


@without_cycle_passes
def layout(model: GraphModel, *, stage_labels: bool = True, columns: int = 1) -> Layout:
    """Place ``model``; with ``columns`` > 1 its stages flow into that many columns side by side.

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> print(eagle.viz.draw_text(eagle.viz.layout(eagle.viz.describe(g, "example"), stage_labels=False)))
    eagle.Graph 2 nodes · 0 groups · backend: (not built)
    ┌─────────┐
    │ <fill>  │
    └────┬────┘
         x
     ┌───┴───┐
     │ <inc> │
     └───────┘
    """
    texts = {n.index: node_text(n) for n in model.nodes}
    for rep, (period, repeats) in model.folds.items():
        texts[rep] = fold_text([texts[n] for n in period], repeats)
    for rest, branches in model.more.items():
        texts[rest] = more_text(branches)
    order = [b for stage in model.stages for b in _preorder(stage.block)]  # the engine's block rows
    labels = [stage_text(s.index, s.last, s.schedule) for s in model.stages]
    pairs, planes = _data_pairs(model)
    owners = [model.alias.get(n.owner, n.owner) for n in model.nodes]
    native = lay_out([_row(b, texts) for b in order], len(model.stages),
                     [len(t) for t in labels] if stage_labels else None, columns, owners, pairs)
    out = Layout(model, native, native.width, native.height, texts, pairs=planes)
    roles = {n.index: n.role for n in model.nodes}
    out.boxes = [PlacedBox(node, x, y, w, out.texts[node], roles[node]) for node, x, y, w in native.boxes]
    for block, x, y, w, h, _, _ in native.frames:
        frame = order[block]
        assert isinstance(frame, Frame)  # the engine reports frames only
        out.frames.append(PlacedFrame(x, y, w, h, frame.label, frame.kind))
    out.stages = [PlacedStage(model.stages[s].index, x, y, labels[s], w) for s, x, y, w in native.stages]
    out.wires = [Wire(s, d, points) for s, d, _, _, points in native.wires]
    out.links = [Link(s, d, planes[pair] if pair >= 0 else (), bool(adjacent), () if adjacent else points)
                 for s, d, pair, adjacent, points in native.links]
    out.passes_on = _passes_on(out.links)
    out.planes = [PlacedPlanes(node, x, y, cut(", ".join(out.outgoing(node)), room),
                               cut(", ".join(out.outgoing(node, adjacent_only=True)), room))
                  for node, x, y, room in native.exits]
    return out


def _passes_on(links: list[Link]) -> dict[int, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Each source's planes over all its links and over its wires only, in first-seen order: one
    pass (a search of the links per node is quadratic, and a 10,000-node graph has as many exits)."""
    every: dict[int, dict[str, None]] = {}
    wired: dict[int, dict[str, None]] = {}
    for link in links:
        if link.planes:
            every.setdefault(link.src, {}).update(dict.fromkeys(link.planes))
            if link.adjacent:
                wired.setdefault(link.src, {}).update(dict.fromkeys(link.planes))
    return {node: (tuple(planes), tuple(wired.get(node, ()))) for node, planes in every.items()}


def stage_text(index: int, last: int | None, schedule: str | None) -> str:
    """A stage's label: ``stage 2 work_share``, or ``stages 1–998`` for a folded run of stages."""
    text = f"stage {index}" if last is None else f"stages {index}–{last}"
    return text + (f" {schedule}" if schedule else "")


def fold_text(texts: list[str], repeats: int) -> str:
    """A folded run's box: its period's texts and how often it repeats (``scale, shift ×500``)."""
    return f"{', '.join(texts)} ×{repeats}"


def more_text(branches: int) -> str:
    """The box for a wide fork's last branches (``fold=False`` draws them): how many they are."""
    return f"… {branches} more branches"


_KINDS: Final = {Box: 0, Seq: 1, Fork: 2, Frame: 3}


def _row(block: Block, texts: dict[int, str]) -> tuple[int, int, int, int]:
    """``block`` as the engine's row: (kind, children, node, columns of its text)."""
    if isinstance(block, Box):
        return 0, 0, block.node, len(texts[block.node])
    if isinstance(block, Frame):
        return 3, 1, -1, len(block.label)
    return _KINDS[type(block)], len(block.branches if isinstance(block, Fork) else block.items), -1, 0


def columns_for(model: GraphModel, aspect: float, cell_aspect: float) -> int:
    """How many columns make a tall graph about ``aspect`` (width / height) wide.

    ``cell_aspect`` is a cell's width over its height in the face that draws it.
    """
    one = layout(model)
    if one.height <= 60:  # a graph that fits a page stays in one column
        return 1
    column_w = one.width + GUTTER
    k = math.sqrt(aspect * one.height / (column_w * cell_aspect))
    return max(1, min(len(model.stages), round(k)))


def _preorder(block: Block) -> list[Block]:
    out = [block]
    if isinstance(block, Frame):
        out += _preorder(block.body)
    elif not isinstance(block, Box):
        for part in block.branches if isinstance(block, Fork) else block.items:
            out += _preorder(part)
    return out


def _data_pairs(model: GraphModel) -> tuple[list[tuple[int, int]], list[tuple[str, ...]]]:
    """The pairs data flows along (the owner pairs of RAW and WAW edges, then the flows between
    the nodes inside a construct; folded nodes as their run's first), then the waits, each pair
    once, and the planes of each (none for a wait), named as :func:`plane_name` says."""
    planes: dict[tuple[int, int], list[str]] = {}  # in first-seen order: the engine's pair order
    data = [(e.src, e.dst, e.plane) for e in model.edges if e.kind in _DATA_KINDS]
    for src, dst, plane in data + list(model.flows):
        s, d = model.alias.get(src, src), model.alias.get(dst, dst)
        if s == d:
            continue
        names = planes.setdefault((s, d), [])
        name = plane_name(model.nodes[src], plane)
        if name not in names:
            names.append(name)
    for s, d in model.waits:  # an arrow that only orders, where no data flows already
        planes.setdefault((model.alias.get(s, s), model.alias.get(d, d)), [])
    return list(planes), [tuple(p) for p in planes.values()]


def plane_name(src: NodeInfo, plane: str) -> str:
    """A plane on an edge: the name its source's output was assigned to (``v = scale(…)``: ``v``),
    else the plane's own name (the kernel's parameter or output)."""
    return src.output or plane


def node_texts(lay: Layout) -> tuple[list[str], list[str]]:
    """Each node's box text and role, by index: what libeagle's drawers take."""
    nodes = lay.model.nodes
    return [lay.texts[n.index] for n in nodes], [n.role for n in nodes]


def stage_notes(lay: Layout) -> list[str]:
    """The line the DOT and Mermaid faces write before each stage: ``stage 2 work_share``."""
    return [f"stage {s.index}" + (f" {s.schedule}" if s.schedule else "") for s in lay.model.stages]


def pair_labels(lay: Layout) -> list[str]:
    """The label of the links drawing each pair the engine was given: its planes, cut (``""``: a
    wait, which only orders)."""
    return [cut(", ".join(planes), MAX_LABEL) for planes in lay.pairs]


def link_text(link: Link) -> str:
    """The label of a link in the faces that draw links as arrows: its planes, cut."""
    return cut(", ".join(link.planes), MAX_LABEL)
