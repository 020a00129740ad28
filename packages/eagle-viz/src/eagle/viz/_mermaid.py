"""The Mermaid face: a ``flowchart TD`` of the layout's boxes, links and frames."""

from __future__ import annotations

from typing import Any, Final

from eagle.viz._layout import Layout, layout, link_text
from eagle.viz._model import Frame, describe, walk
from eagle.viz._palette import FRAME_COLOR, FRAME_FILL, ROLE_COLORS

#: Characters Mermaid would read as syntax inside a quoted label, as its entity codes.
_ENTITIES: Final = {'"': "#quot;", "<": "#lt;", ">": "#gt;", "#": "#35;", "|": "#124;", "`": "#96;"}


def to_mermaid(graph: Any, fold: bool = True) -> str:
    """``graph`` as a Mermaid ``flowchart TD``: paste it into a Markdown page.

    :param fold: runs of alike nodes as one box (``fold=False``: every node).

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> for line in eagle.viz.to_mermaid(g).splitlines()[:6]:
    ...     print(line)
    flowchart TD
      %% eagle.Graph 2 nodes · 0 groups · backend: (not built)
      %% stage 0
      n0["#lt;fill#gt;"]:::python
      %% stage 1
      n1["#lt;inc#gt;"]:::python
    """
    return draw_mermaid(layout(describe(graph, "eagle.Graph.to_mermaid", fold)))


def draw_mermaid(lay: Layout) -> str:
    lines = ["flowchart TD", f"  %% {lay.model.header}"]
    frames: dict[Frame, str] = {}
    for stage in lay.model.stages:
        lines.append(f"  %% stage {stage.index}" + (f" {stage.schedule}" if stage.schedule else ""))
        depth = 1
        for event, part in walk(stage.block):
            if event == "box":
                role = lay.model.nodes[part.node].role
                lines.append(f'{"  " * depth}n{part.node}["{_quote(lay.texts[part.node])}"]:::{role}')
            elif event == "open":
                frames[part] = f"f{len(frames)}"
                lines.append(f'{"  " * depth}subgraph {frames[part]}["{_quote(part.label)}"]')
                depth += 1
            else:
                depth -= 1
                lines.append(f"{'  ' * depth}end")
    for link in lay.links:
        arrow = f'-->|"{_quote(link_text(link))}"|' if link.planes else "-.->"
        lines.append(f"  n{link.src} {arrow} n{link.dst}")
    for role, (fill, border) in ROLE_COLORS.items():
        dashes = ",stroke-dasharray:5 4" if role == "opaque" else ""
        lines.append(f"  classDef {role} fill:{fill},stroke:{border}{dashes}")
    lines += [f"  style {name} fill:{FRAME_FILL},stroke:{FRAME_COLOR},stroke-dasharray:6 4"
              for name in frames.values()]
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return "".join(_ENTITIES.get(c, c) for c in text)
