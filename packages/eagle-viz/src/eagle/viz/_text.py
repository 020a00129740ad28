"""The text face: the layout drawn in box-drawing characters (what ``print(g)`` shows)."""

from __future__ import annotations

from typing import Any

from eagle.extend import picture_text
from eagle.viz._bulk import without_cycle_passes
from eagle.viz._layout import Layout, layout, node_texts, stage_text
from eagle.viz._model import describe


@without_cycle_passes
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


@without_cycle_passes
def draw_text(lay: Layout) -> str:
    """The header line, then the layout in box-drawing characters, trailing spaces dropped:
    libeagle's drawer (:func:`eagle.extend.picture_text`), the one a C++ ``eagle::GraphView``
    prints with, given the texts the model says.

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> text = eagle.viz.draw_text(eagle.viz.layout(eagle.viz.describe(g, "example")))
    >>> text.splitlines()[0]
    'eagle.Graph 2 nodes · 0 groups · backend: (not built)'
    """
    return picture_text(lay.native, lay.model.header, *node_texts(lay), [f.label for f in lay.frames],
                        [p.text for p in lay.planes], [stage_text(s.index, s.last, s.schedule)
                                                       for s in lay.model.stages])
