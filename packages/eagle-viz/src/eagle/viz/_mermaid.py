"""The Mermaid face: a ``flowchart TD`` of the layout's boxes, links and frames."""

from __future__ import annotations

from typing import Any

from eagle.extend import picture_mermaid
from eagle.viz._bulk import without_cycle_passes
from eagle.viz._layout import Layout, layout, node_texts, pair_labels, stage_notes
from eagle.viz._model import describe


@without_cycle_passes
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
    """The Mermaid flowchart of ``lay``: libeagle's drawer (:func:`eagle.extend.picture_mermaid`),
    the one a C++ ``eagle::GraphView`` writes with."""
    return picture_mermaid(lay.native, lay.model.header, *node_texts(lay), [f.label for f in lay.frames],
                           stage_notes(lay), pair_labels(lay))
