"""The DOT face: the layout's boxes, links and frames for Graphviz (``dot -Tsvg``)."""

from __future__ import annotations

import itertools
from typing import Any

from eagle.viz._layout import Layout, layout, link_text
from eagle.viz._model import describe, walk
from eagle.viz._palette import FONT, FRAME_COLOR, FRAME_FILL, ROLE_COLORS, WIRE_COLOR


def to_dot(graph: Any, fold: bool = True) -> str:
    """``graph`` in Graphviz's DOT language: each row of the layout one rank (``rank=same``), its
    boxes held in the layout's order, so Graphviz draws the stages and branches as every face does.

    :param fold: runs of alike nodes as one box (``fold=False``: every node).

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> dot = eagle.viz.to_dot(g)
    >>> dot.splitlines()[0], "n0 -> n1" in dot
    ('digraph eagle {', True)
    """
    return draw_dot(layout(describe(graph, "eagle.Graph.to_dot", fold)))


def draw_dot(lay: Layout) -> str:
    lines = ["digraph eagle {",
             f'  graph [label={_quote(lay.model.header)}, labelloc=t, fontname="{FONT}", fontsize=12];',
             f'  node [shape=box, style="rounded,filled", fontname="{FONT}", fontsize=11];',
             f'  edge [fontname="{FONT}", fontsize=10, color="{WIRE_COLOR}"];',
             "  newrank=true;  // ranks across clusters: a row of boxes is one rank even inside frames",
             # a second crossing pass over clusters reorders a frame's boxes against the invisible
             # edges that hold the layout's order
             "  remincross=false;"]
    frames = 0
    for stage in lay.model.stages:
        lines.append(f"  // stage {stage.index}" + (f" {stage.schedule}" if stage.schedule else ""))
        depth = 1
        for event, part in walk(stage.block):
            pad = "  " * depth
            if event == "box":
                role = lay.model.nodes[part.node].role
                fill, border = ROLE_COLORS[role]
                style = ', style="rounded,filled,dashed"' if role == "opaque" else ""
                lines.append(f'{pad}n{part.node} [label={_quote(lay.texts[part.node])}, fillcolor="{fill}", '
                             f'color="{border}"{style}];')
            elif event == "open":
                lines += [f"{pad}subgraph cluster_f{frames} {{",
                          f'{pad}  label={_quote(part.label)}; style="rounded,dashed,filled"; '
                          f'color="{FRAME_COLOR}"; fillcolor="{FRAME_FILL}"; fontcolor="{FRAME_COLOR}";']
                frames += 1
                depth += 1
            else:
                depth -= 1
                lines.append(f"{'  ' * depth}}}")
    for link in lay.links:
        attrs = f"label={_quote(link_text(link))}" if link.planes else "style=dashed"
        lines.append(f"  n{link.src} -> n{link.dst} [{attrs}];")
    lines += _ranks(lay)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _ranks(lay: Layout) -> list[str]:
    """Each row of the layout's boxes as one rank, held left to right by invisible edges; a frame
    sets its boxes one row lower, so a box's row is counted without the frames around it."""
    depth = dict.fromkeys((b.node for b in lay.boxes), 0)
    for frame in lay.frames:
        for node in frame.nodes:
            depth[node] += 1
    rows: dict[int, list[int]] = {}
    for box in sorted(lay.boxes, key=lambda b: (b.y - depth[b.node], b.x)):
        rows.setdefault(box.y - depth[box.node], []).append(box.node)
    lines = ["  // the layout's rows: one rank each, in the layout's order"]
    for nodes in rows.values():
        lines.append("  { rank=same; " + " ".join(f"n{n};" for n in nodes) + " }")
        lines += [f"  n{a} -> n{b} [style=invis];" for a, b in itertools.pairwise(nodes)]
    return lines


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
