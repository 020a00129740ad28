"""The one layout engine: where every box, frame, wire and label of a graph goes.

Positions are character cells (``x`` a column, ``y`` a row, both from the top
left), because the text face is the reference picture (seeds 001 and 002): the
matplotlib face scales the same cells, and the Mermaid and DOT faces take the
same node texts, links and frames. So the four faces cannot disagree.

The geometry, read off the seeds' pictures:

- a box is three rows, its width odd so that a wire meets its centre, and one
  space either side of its text; a box alone in a frame widens to fill it;
- the blocks of a sequence are aligned on one column (their *anchor*), and a
  box that is followed has one row under it for the names of the planes it
  passes on (``x``, ``left_out``), cut to the box's width;
- the branches of a fork stand side by side, three columns apart; a splitter
  row (``┌──┴──┐``) leads into them when something comes before, a joiner row
  (``└──┬──┘``) out of them when something comes after;
- a frame (``╭─ skip if guard ─╮``) is one row above and below its body, two
  columns either side, at least as wide as its label;
- the stage labels (``stage 1 work_share``) stand in a column on the left, on
  the row of the stage's first box.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from eagle.viz._model import Block, Box, Fork, Frame, GraphModel, NodeInfo, Seq

#: Columns between sibling branches (seeds 001 and 002).
GAP: Final = 3
#: A node's label is cut past this many characters.
MAX_LABEL: Final = 24
#: Columns between the columns of a long graph flowed side by side.
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


@dataclass(frozen=True)
class PlacedBox:
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


@dataclass(frozen=True)
class PlacedFrame:
    x: int
    y: int
    w: int
    h: int
    label: str
    kind: str
    #: The nodes inside, in order.
    nodes: tuple[int, ...]


@dataclass(frozen=True)
class PlacedPlanes:
    """The plane names a node passes on, in the row under it, centred on column ``x``."""

    node: int
    x: int
    y: int
    #: Every plane it passes on (the text face, which draws no long links).
    text: str
    #: Only those its wires carry (a face that draws long links apart).
    wired: str

    @property
    def start(self) -> int:
        return self.x - len(self.text) // 2


@dataclass(frozen=True)
class Wire:
    """An orthogonal path of cells from ``src``'s bottom to ``dst``'s top (where the arrow points)."""

    src: int
    dst: int
    points: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class PlacedStage:
    index: int
    x: int
    y: int
    text: str
    #: Columns of the label column, the one space before the drawing included.
    width: int


@dataclass(frozen=True)
class Link:
    """One arrow of the pictures: ``src`` runs before ``dst``.

    ``adjacent`` links are the wires (a node and what follows it in its
    sequence); the others are data edges that skip over nodes in between.
    """

    src: int
    dst: int
    #: The planes that flow along it; empty for a link that only orders.
    planes: tuple[str, ...]
    adjacent: bool


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

    def box(self, node: int) -> PlacedBox:
        return next(b for b in self.boxes if b.node == node)

    def outline(self, node: int) -> tuple[int, int, int, int]:
        """Where a long link meets ``node``: its box, or the frame of the device construct it is in."""
        if self.model.nodes[node].owner != node:
            frames = [f for f in self.frames if node in f.nodes]
            if frames:
                f = max(frames, key=lambda f: f.w * f.h)  # the outermost: the construct's own
                return f.x, f.y, f.w, f.h
        b = self.box(node)
        return b.x, b.y, b.w, BOX_ROWS

    def outgoing(self, node: int, adjacent_only: bool = False) -> tuple[str, ...]:
        """The planes ``node`` passes on, over its links (or its wires only), in first-seen order."""
        return tuple(dict.fromkeys(p for link in self.links if link.src == node
                                   and (link.adjacent or not adjacent_only) for p in link.planes))


@dataclass(frozen=True)
class _Size:
    w: int
    h: int
    anchor: int
    #: Row of the first box top: where the stage label goes.
    label_row: int
    entries: int
    exits: int


@dataclass(frozen=True)
class _Port:
    """Where a wire meets a block: a box's top (an entry) or bottom (an exit)."""

    node: int
    x: int
    y: int
    #: For an exit: the row under the block, where the plane names go, and their room.
    below: int = 0
    room: int = 0


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
    return _Engine(model).run(stage_labels, columns)


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


class _Engine:
    def __init__(self, model: GraphModel) -> None:
        self.model = model
        self.out = Layout(model, texts={n.index: node_text(n) for n in model.nodes})
        self.box_w: dict[int, int] = {}  # boxes a frame widened
        self.sizes: dict[Block, _Size] = {}  # by value: blocks are frozen, a node is in one place
        self.adjacent: list[tuple[int, int]] = []
        self.exits: list[_Port] = []  # every exit a wire leaves from: its row of plane names

    # ------------------------------------------------------------ measuring
    def size(self, block: Block) -> _Size:
        if block not in self.sizes:
            self.sizes[block] = self._measure(block)
        return self.sizes[block]

    def _measure(self, block: Block) -> _Size:
        if isinstance(block, Box):
            w = self.box_w.get(block.node) or _odd(len(self.out.texts[block.node]) + 4)
            return _Size(w, BOX_ROWS, w // 2, 0, 1, 1)
        if isinstance(block, Frame):
            body = self.size(block.body)
            w = max(body.w + 4, len(block.label) + 6)
            if isinstance(block.body, Box):  # a box alone fills its frame (seed 001's combine)
                w = _odd(w - 4) + 4
                self.box_w[block.body.node] = w - 4
                self.sizes.pop(block.body)
                body = self.size(block.body)
            return _Size(w, body.h + 2, _inset(w, body.w) + body.anchor, 1 + body.label_row, body.entries,
                         body.exits)
        if isinstance(block, Fork):
            sizes = [self.size(b) for b in block.branches]
            anchors = [x + s.anchor for x, s in zip(_offsets(sizes), sizes, strict=True)]
            middle = (anchors[0] + anchors[-1]) // 2
            # A branch's wire a column or two off the middle takes the tick: no ┬┴ side by side.
            near = min(anchors, key=lambda a: abs(a - middle))
            return _Size(anchors[-1] - sizes[-1].anchor + sizes[-1].w, max(s.h for s in sizes),
                         near if abs(near - middle) <= 2 else middle, min(s.label_row for s in sizes),
                         sum(s.entries for s in sizes), sum(s.exits for s in sizes))
        sizes = [self.size(b) for b in block.items]
        anchor = max(s.anchor for s in sizes)
        rows = sum(s.h for s in sizes) + sum(_between(a, b) for a, b in itertools.pairwise(sizes))
        return _Size(max(anchor - s.anchor + s.w for s in sizes), rows, anchor, sizes[0].label_row,
                     sizes[0].entries, sizes[-1].exits)

    # ------------------------------------------------------------- placing
    def place(self, block: Block, x: int, y: int) -> tuple[list[_Port], list[_Port]]:
        """Place ``block`` with its top left at (x, y); its entries and exits."""
        size = self.size(block)
        if isinstance(block, Box):
            node = self.model.nodes[block.node]
            self.out.boxes.append(PlacedBox(block.node, x, y, size.w, self.out.texts[block.node], node.role))
            a = x + size.anchor
            return [_Port(block.node, a, y)], [_Port(block.node, a, y + BOX_ROWS - 1, y + BOX_ROWS, size.w)]
        if isinstance(block, Frame):
            body = self.size(block.body)
            first = len(self.out.boxes)
            entries, exits = self.place(block.body, x + _inset(size.w, body.w), y + 1)
            nodes = tuple(b.node for b in self.out.boxes[first:])
            self.out.frames.append(PlacedFrame(x, y, size.w, size.h, block.label, block.kind, nodes))
            # The names go under the frame, within it and centred on their wire; a lone exit has its width.
            lone, right = len(exits) == 1, x + size.w - 1
            return entries, [_Port(e.node, e.x, e.y, y + size.h,
                                   min(size.w if lone else e.room, 2 * min(e.x - x, right - e.x) + 1))
                             for e in exits]
        if isinstance(block, Fork):
            entries, exits = [], []
            for bx, branch in zip(_offsets([self.size(b) for b in block.branches]), block.branches,
                                  strict=True):
                ins, outs = self.place(branch, x + bx, y)
                entries += ins
                exits += outs
            return entries, exits
        entries, exits, _ = self.place_seq(block.items, x, y)
        return entries, exits

    def place_seq(self, items: tuple[Block, ...], x: int, y: int,
                  ) -> tuple[list[_Port], list[_Port], list[int]]:
        """Place blocks one under another on one anchor, wired in order; also each block's top row."""
        sizes = [self.size(b) for b in items]
        anchor = max(s.anchor for s in sizes)
        first: list[_Port] = []
        exits: list[_Port] = []
        tops: list[int] = []
        for i, (block, size) in enumerate(zip(items, sizes, strict=True)):
            if i:
                y += _between(sizes[i - 1], size)
            entries, outs = self.place(block, x + anchor - size.anchor, y)
            if i:
                self.connect(exits, entries, _route_down(x + anchor, y - _between(sizes[i - 1], size),
                                                         len(exits) > 1, len(entries) > 1))
            else:
                first = entries
            tops.append(y)
            exits = outs
            y += size.h
        return first, exits, tops

    def connect(self, exits: list[_Port], entries: list[_Port], route: _Route) -> None:
        """Wire every exit to every entry along ``route``; each exit gets its row of plane names."""
        self.exits += exits
        for e in exits:
            for n in entries:
                self.out.wires.append(Wire(e.node, n.node, _corners(route(e, n))))
                self.adjacent.append((e.node, n.node))

    def run(self, stage_labels: bool, columns: int) -> Layout:
        out, stages = self.out, self.model.stages
        if not stages:
            self._links()
            return out
        texts = [f"stage {s.index}" + (f" {s.schedule}" if s.schedule else "") for s in stages]
        label_w = max(map(len, texts)) + 1 if stage_labels else 0
        chunks = _chunks([self.size(s.block) for s in stages], columns)
        top = 1 if len(chunks) > 1 else 0  # a row above for the wires from one column to the next
        x, ends, heights = 0, [], []
        for chunk in chunks:
            blocks = tuple(stages[i].block for i in chunk)
            entries, exits, tops = self.place_seq(blocks, x + label_w, top)
            for i, y in zip(chunk, tops, strict=True):
                row = y + self.size(stages[i].block).label_row
                if stage_labels:
                    out.stages.append(PlacedStage(stages[i].index, x, row, texts[i], label_w))
            size = self.size(Seq(blocks))
            ends.append((entries, exits, x + label_w + size.w))
            heights.append(size.h)
            x = ends[-1][2] + GUTTER
        bottom = top + max(heights) + 1
        for (_, exits, right), (entries, _, _) in itertools.pairwise(ends):
            self.connect(exits, entries, _route_over(right + GUTTER // 2, bottom))
        out.width = x - GUTTER
        out.height = bottom + 1 if len(chunks) > 1 else top + heights[0]
        self._links()
        return out

    def _links(self) -> None:
        # Edges are between graph nodes; a node inside a device construct has its construct's.
        owner = {n.index: n.owner for n in self.model.nodes}
        planes: dict[tuple[int, int], list[str]] = {}
        for edge in self.model.edges:
            names = planes.setdefault((edge.src, edge.dst), [])
            if edge.kind in _DATA_KINDS and edge.plane not in names:
                names.append(edge.plane)
        adjacent = dict.fromkeys(self.adjacent)
        wired = {(owner[s], owner[d]) for s, d in adjacent}
        last = {owner[b.node]: b.node for b in self.out.boxes}  # a construct's arrows leave its last box
        first = {owner[b.node]: b.node for b in reversed(self.out.boxes)}  # and enter its first
        self.out.links = [Link(s, d, tuple(planes.get((owner[s], owner[d]), ())), True) for s, d in adjacent]
        self.out.links += [Link(last[s], first[d], tuple(names), False) for (s, d), names in planes.items()
                           if names and (s, d) not in wired and s in last and d in first]
        for e in self.exits:
            every, wired = (cut(", ".join(self.out.outgoing(e.node, only)), e.room) for only in (False, True))
            self.out.planes.append(PlacedPlanes(e.node, e.x, e.below, every, wired))


_Route = Callable[[_Port, _Port], list[tuple[int, int]]]


def _route_down(anchor: int, row: int, join: bool, split: bool) -> _Route:
    """From an exit down to an entry of the next block: ``row`` holds the plane names, then a joiner
    row when several exits meet, then a splitter row when several entries part, all on ``anchor``."""
    join_row, split_row = row + 1, row + 1 + join

    def route(e: _Port, n: _Port) -> list[tuple[int, int]]:
        points = [(e.x, e.y)]
        if join:
            points += [(e.x, join_row), (anchor, join_row)]
        if split:
            points += [(anchor, split_row), (n.x, split_row)]
        return [*points, (n.x, n.y)]

    return route


def _route_over(gutter: int, bottom: int) -> _Route:
    """From the end of one column to the top of the next: down to ``bottom``, over, up the gutter."""
    return lambda e, n: [(e.x, e.y), (e.x, bottom), (gutter, bottom), (gutter, 0), (n.x, 0), (n.x, n.y)]


def _odd(n: int) -> int:
    return n | 1


def _inset(frame_w: int, body_w: int) -> int:
    """Where a frame's body starts: two columns in (border and space), centred in what is left."""
    return 2 + (frame_w - 4 - body_w) // 2


def _offsets(sizes: list[_Size]) -> list[int]:
    xs, x = [], 0
    for s in sizes:
        xs.append(x)
        x += s.w + GAP
    return xs


def _between(before: _Size, after: _Size) -> int:
    """Rows between two blocks of a sequence: the plane names, a joiner, a splitter."""
    return 1 + (before.exits > 1) + (after.entries > 1)


def _corners(points: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """The path without repeated points or points in the middle of a straight run."""
    path: list[tuple[int, int]] = []
    for p in points:
        if path and p == path[-1]:
            continue
        if len(path) >= 2 and (path[-2][0] == path[-1][0] == p[0] or path[-2][1] == path[-1][1] == p[1]):
            path[-1] = p
        else:
            path.append(p)
    return tuple(path)


def _chunks(sizes: list[_Size], columns: int) -> list[list[int]]:
    """Stage indices cut into at most ``columns`` runs of about equal height."""
    total = sum(s.h + 2 for s in sizes)
    target = math.ceil(total / max(1, columns))
    chunks: list[list[int]] = [[]]
    height = 0
    for i, s in enumerate(sizes):
        if chunks[-1] and height + s.h > target and len(chunks) < columns:
            chunks.append([])
            height = 0
        chunks[-1].append(i)
        height += s.h + 2
    return chunks


def link_text(link: Link) -> str:
    """The label of a link in the faces that draw links as arrows: its planes, cut."""
    return cut(", ".join(link.planes), MAX_LABEL)
