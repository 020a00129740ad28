"""The SVG face: the layout's cells drawn as SVG, with no matplotlib (``g.to_svg()``, and what a
notebook shows through ``Graph._repr_svg_``).

Like the matplotlib face, a cell is about one character of the box text wide and half a box
tall; wires run through the middle of their cells, long links along the engine's routes.
"""

from __future__ import annotations

from typing import Any, Final
from xml.sax.saxutils import escape

from eagle.viz._bulk import without_cycle_passes
from eagle.viz._layout import Layout, layout, link_text
from eagle.viz._model import describe
from eagle.viz._palette import FONT, FRAME_COLOR, FRAME_FILL, LABEL_COLOR, LONG_COLOR, ROLE_COLORS, WIRE_COLOR

#: Pixels per layout cell.
CELL_W: Final = 8.0
CELL_H: Final = 16.0
#: Pixels of margin, and of the header above the drawing.
MARGIN: Final = 8.0
TITLE: Final = 24.0


@without_cycle_passes
def to_svg(graph: Any, fold: bool = True) -> str:
    """``graph`` as an SVG document, drawn from the layout every face draws.

    :param fold: runs of alike nodes as one box (``fold=False``: every node).

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> svg = eagle.viz.to_svg(g)
    >>> svg.startswith("<svg "), svg.count("<rect class=\\"box\\""), "&lt;fill&gt;" in svg
    (True, 2, True)
    """
    return draw_svg(layout(describe(graph, "eagle.Graph.to_svg", fold)))


def _x(x: float) -> float:
    return MARGIN + (x + 0.5) * CELL_W


def _y(y: float) -> float:
    return MARGIN + TITLE + (y + 0.5) * CELL_H


def _path(points: tuple[tuple[int, int], ...]) -> str:
    return " ".join(f"{_x(x):g},{_y(y):g}" for x, y in points)


@without_cycle_passes
def draw_svg(lay: Layout) -> str:
    width, height = 2 * MARGIN + lay.width * CELL_W, 2 * MARGIN + TITLE + lay.height * CELL_H
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height:g}" '
           f'viewBox="0 0 {width:g} {height:g}" font-family="{FONT}" font-size="12">',
           "<defs>" + "".join(f'<marker id="{name}" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" '
                              f'markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" '
                              f'fill="{color}"/></marker>'
                              for name, color in (("wire", WIRE_COLOR), ("long", LONG_COLOR))) + "</defs>",
           f'<text x="{MARGIN:g}" y="{MARGIN + 14:g}" fill="#222222">{escape(lay.model.header)}</text>']
    for f in lay.frames:
        out.append(f'<rect class="frame" x="{_x(f.x):g}" y="{_y(f.y):g}" width="{(f.w - 1) * CELL_W:g}" '
                   f'height="{(f.h - 1) * CELL_H:g}" rx="6" fill="{FRAME_FILL}" stroke="{FRAME_COLOR}" '
                   f'stroke-dasharray="6 4"/>')
        out.append(f'<text x="{_x(f.x + 1.5):g}" y="{_y(f.y) + 4:g}" font-size="10" fill="{FRAME_COLOR}">'
                   f"{escape(f.label)}</text>")
    for w in lay.wires:
        out.append(f'<polyline class="wire" points="{_path(w.points)}" fill="none" stroke="{WIRE_COLOR}" '
                   f'stroke-width="1.2" marker-end="url(#wire)"/>')
    for link in lay.links:
        if link.points:
            ex, ey = link.points[-1]
            tip = (ex + (0.5 if ex > link.points[-2][0] else -0.5), ey)  # onto the box's side
            out.append(f'<polyline class="long" points="{_path((*link.points, tip))}" fill="none" '
                       f'stroke="{LONG_COLOR}" stroke-dasharray="4 3" marker-end="url(#long)"/>')
            sx, sy = link.points[0]
            out.append(f'<text x="{_x(sx):g}" y="{_y(sy) - 3:g}" font-size="10" font-style="italic" '
                       f'fill="{LONG_COLOR}">{escape(link_text(link))}</text>')
    for b in lay.boxes:
        fill, border = ROLE_COLORS[b.role]
        dash = ' stroke-dasharray="5 3"' if b.dashed else ""
        out.append(f'<rect class="box" x="{_x(b.x):g}" y="{_y(b.y):g}" width="{(b.w - 1) * CELL_W:g}" '
                   f'height="{2 * CELL_H:g}" rx="4" fill="{fill}" stroke="{border}"{dash}/>')
        out.append(f'<text x="{_x(b.x + (b.w - 1) / 2):g}" y="{_y(b.y + 1) + 4:g}" text-anchor="middle" '
                   f'fill="#1a1a1a">{escape(b.text)}</text>')
    for p in lay.planes:
        if p.wired:
            out.append(f'<text x="{_x(p.x):g}" y="{_y(p.y) + 4:g}" text-anchor="middle" font-size="10" '
                       f'font-style="italic" fill="{LABEL_COLOR}">{escape(p.wired)}</text>')
    for s in lay.stages:
        out.append(f'<text x="{_x(s.x + s.width - 1.5):g}" y="{_y(s.y + 1) + 4:g}" text-anchor="end" '
                   f'font-size="10" fill="#6a6a6a">{escape(s.text)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
