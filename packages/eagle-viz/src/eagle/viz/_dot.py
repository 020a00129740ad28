"""The DOT face: the layout's boxes, links and frames for Graphviz (``dot -Tsvg``)."""

from __future__ import annotations

from typing import Any

from eagle.viz._layout import Layout, layout, link_text
from eagle.viz._model import describe, walk
from eagle.viz._palette import FONT, FRAME_COLOR, FRAME_FILL, ROLE_COLORS, WIRE_COLOR


def to_dot(graph: Any) -> str:
    """``graph`` in Graphviz's DOT language.

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> dot = eagle.viz.to_dot(g)
    >>> dot.splitlines()[0], "n0 -> n1" in dot
    ('digraph eagle {', True)
    """
    return draw_dot(layout(describe(graph, "eagle.Graph.to_dot")))


def draw_dot(lay: Layout) -> str:
    lines = ["digraph eagle {",
             f'  graph [label={_quote(lay.model.header)}, labelloc=t, fontname="{FONT}", fontsize=12];',
             f'  node [shape=box, style="rounded,filled", fontname="{FONT}", fontsize=11];',
             f'  edge [fontname="{FONT}", fontsize=10, color="{WIRE_COLOR}"];']
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
    lines.append("}")
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
