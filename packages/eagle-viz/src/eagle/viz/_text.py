"""The text face: the layout drawn in box-drawing characters (what ``print(g)`` shows)."""

from __future__ import annotations

import itertools
from typing import Any, Final

from eagle.viz._layout import Layout, PlacedBox, PlacedFrame, layout
from eagle.viz._model import describe

_UP, _DOWN, _LEFT, _RIGHT = 1, 2, 4, 8
#: A wire cell's character from the directions it leaves in.
_WIRE: Final = {
    _UP: "│", _DOWN: "│", _UP | _DOWN: "│", _LEFT: "─", _RIGHT: "─", _LEFT | _RIGHT: "─",
    _DOWN | _RIGHT: "┌", _DOWN | _LEFT: "┐", _UP | _RIGHT: "└", _UP | _LEFT: "┘",
    _UP | _LEFT | _RIGHT: "┴", _DOWN | _LEFT | _RIGHT: "┬", _UP | _DOWN | _RIGHT: "├",
    _UP | _DOWN | _LEFT: "┤", _UP | _DOWN | _LEFT | _RIGHT: "┼",
}
#: A horizontal border a wire meets from above, from below, or passes through.
_TICK: Final = {_UP: "┴", _DOWN: "┬", _UP | _DOWN: "┼"}
#: A long link's cell (a data edge past the nodes between, a wait): dotted, rounded at its bends,
#: so it never reads as a wire; where it crosses a wire or border, that one is drawn.
_LONG: Final = {
    _LEFT | _RIGHT: "┄", _UP | _DOWN: "┆", _DOWN | _RIGHT: "╭", _DOWN | _LEFT: "╮", _UP | _RIGHT: "╰",
    _UP | _LEFT: "╯", _LEFT: "┄", _RIGHT: "┄", _UP: "┆", _DOWN: "┆",
}


def render_text(graph: Any) -> str:
    """The text picture of ``graph``: what ``print(g)``, ``str(g)`` and ``g.show()`` give.

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> eagle.viz.render_text(g) == str(g)
    True
    >>> print(g.build())
    eagle.Graph 2 nodes · 0 groups · backend: cpu
    stage 0 work_share ┌─────────┐
                       │ <fill>  │
                       └────┬────┘
                            x
    stage 1 work_share  ┌───┴───┐
                        │ <inc> │
                        └───────┘
    """
    return draw_text(layout(describe(graph, "eagle.Graph.__str__")))


def draw_text(lay: Layout) -> str:
    """The header line, then the layout in box-drawing characters, trailing spaces dropped.

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> text = eagle.viz.draw_text(eagle.viz.layout(eagle.viz.describe(g, "example")))
    >>> text.splitlines()[0]
    'eagle.Graph 2 nodes · 0 groups · backend: (not built)'
    """
    canvas = _Canvas(lay.width, lay.height)
    for box in lay.boxes:
        canvas.box(box)
    for frame in lay.frames:
        canvas.frame(frame)
    for planes in lay.planes:
        canvas.text(planes.start, planes.y, planes.text)
    for stage in lay.stages:
        canvas.text(stage.x, stage.y, stage.text)
    for wire in lay.wires:
        canvas.wire(wire.points)
    lines = canvas.lines()
    for link in lay.links:
        if link.points:
            src = lay.box(link.src)
            _long_link(lines, link.points, _LEFT if link.points[0][0] >= src.x + src.w else _RIGHT)
    return "\n".join([lay.model.header, *(line.rstrip() for line in lines)])


class _Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.cells = [[" "] * width for _ in range(height)]
        self.border: set[tuple[int, int]] = set()  # horizontal borders a wire may tick
        self.written: set[tuple[int, int]] = set()  # text: a wire passes under it unseen (seed 001)
        self.dirs: dict[tuple[int, int], int] = {}

    def put(self, x: int, y: int, s: str) -> None:
        self.cells[y][x:x + len(s)] = list(s)

    def text(self, x: int, y: int, s: str) -> None:
        self.put(x, y, s)
        self.written.update((x + i, y) for i in range(len(s)))

    def box(self, box: PlacedBox) -> None:
        h, v = ("╌", "╎") if box.dashed else ("─", "│")
        inner = box.w - 2
        left = (inner - len(box.text)) // 2
        self.put(box.x, box.y, "┌" + h * inner + "┐")
        self.put(box.x, box.y + 1, v + " " * left + box.text + " " * (inner - left - len(box.text)) + v)
        self.put(box.x, box.y + 2, "└" + h * inner + "┘")
        self.border.update((box.x + i, y) for i in range(1, box.w - 1) for y in (box.y, box.y + 2))

    def frame(self, frame: PlacedFrame) -> None:
        label = f" {frame.label} "
        fill = frame.w - 2 - len(label)
        self.put(frame.x, frame.y, "╭" + "─" * (fill // 2) + label + "─" * (fill - fill // 2) + "╮")
        self.written.update((frame.x + 1 + fill // 2 + i, frame.y) for i in range(len(label)))
        for y in range(frame.y + 1, frame.y + frame.h - 1):
            self.put(frame.x, y, "│")
            self.put(frame.x + frame.w - 1, y, "│")
        bottom = frame.y + frame.h - 1
        self.put(frame.x, bottom, "╰" + "─" * (frame.w - 2) + "╯")
        self.border.update((frame.x + i, y) for i in range(1, frame.w - 1) for y in (frame.y, bottom))

    def wire(self, points: tuple[tuple[int, int], ...]) -> None:
        for (x0, y0), (x1, y1) in itertools.pairwise(points):
            dx, dy = (x1 > x0) - (x1 < x0), (y1 > y0) - (y1 < y0)
            ahead = _RIGHT if dx > 0 else _LEFT if dx < 0 else _DOWN if dy > 0 else _UP
            back = {_RIGHT: _LEFT, _LEFT: _RIGHT, _DOWN: _UP, _UP: _DOWN}[ahead]
            x, y = x0, y0
            while (x, y) != (x1, y1):
                self.dirs[x, y] = self.dirs.get((x, y), 0) | ahead
                x, y = x + dx, y + dy
                self.dirs[x, y] = self.dirs.get((x, y), 0) | back

    def lines(self) -> list[str]:
        for (x, y), dirs in self.dirs.items():
            if (x, y) in self.written:
                continue
            if (x, y) in self.border:
                vertical = dirs & (_UP | _DOWN)
                if vertical:
                    self.cells[y][x] = _TICK[vertical]
            elif self.cells[y][x] == " ":
                self.cells[y][x] = _WIRE[dirs]
        return ["".join(row) for row in self.cells]


def _long_link(lines: list[str], points: tuple[tuple[int, int], ...], source: int) -> None:
    """Draw a long link into the blank cells of ``lines``: out of its source's side (``source``,
    the direction of that box from the first cell), its last cell an arrow into its box."""
    cells: dict[tuple[int, int], int] = {points[0]: source}
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        dx, dy = (x1 > x0) - (x1 < x0), (y1 > y0) - (y1 < y0)
        ahead = _RIGHT if dx > 0 else _LEFT if dx < 0 else _DOWN if dy > 0 else _UP
        back = {_RIGHT: _LEFT, _LEFT: _RIGHT, _DOWN: _UP, _UP: _DOWN}[ahead]
        x, y = x0, y0
        while (x, y) != (x1, y1):
            cells[x, y] = cells.get((x, y), 0) | ahead
            x, y = x + dx, y + dy
            cells[x, y] = cells.get((x, y), 0) | back
    (px, _), (ex, ey) = (points[-2] if len(points) > 1 else points[0]), points[-1]
    cells.pop((ex, ey), None)
    rows = {y: list(lines[y].ljust(max(x for x, _ in cells) + 1 if cells else ex + 1)) for _, y in
            [*cells, (ex, ey)]}
    rows[ey] = list(lines[ey].ljust(ex + 1)) if ey not in rows else rows[ey]
    for (x, y), dirs in cells.items():
        if rows[y][x] == " ":
            rows[y][x] = _LONG[dirs]
    rows[ey][ex] = "▸" if ex > px or (ex == px and len(points) == 1) else "◂"
    for y, row in rows.items():
        lines[y] = "".join(row)
