"""The DOT face: the layout's boxes, links and frames for Graphviz (``dot -Tsvg``)."""

from __future__ import annotations

from typing import Any

from eagle.extend import picture_dot
from eagle.viz._bulk import without_cycle_passes
from eagle.viz._layout import Layout, layout, node_texts, pair_labels, stage_notes
from eagle.viz._model import describe


@without_cycle_passes
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
    """The DOT graph of ``lay``: libeagle's drawer (:func:`eagle.extend.picture_dot`), the one a C++
    ``eagle::GraphView`` writes with."""
    return picture_dot(lay.native, lay.model.header, *node_texts(lay), [f.label for f in lay.frames],
                       stage_notes(lay), pair_labels(lay))
