"""eagle.viz: the pictures of an eagle graph, four faces of one layout.

``print(g)`` (the text face), ``g.plot()`` (matplotlib, the ``eagle-viz[plot]``
extra), ``g.to_svg()`` (and a notebook's rich display), ``g.to_mermaid()`` and
``g.to_dot()`` all draw the layout that :func:`eagle.viz.layout` computes with
libeagle's layout engine from one model of the graph, so they list the same
nodes, links and frames.
"""

from eagle.viz._dot import to_dot as to_dot
from eagle.viz._layout import Layout as Layout
from eagle.viz._layout import layout as layout
from eagle.viz._mermaid import to_mermaid as to_mermaid
from eagle.viz._model import GraphModel as GraphModel
from eagle.viz._model import describe as describe
from eagle.viz._mpl import plot as plot
from eagle.viz._simulation import plot_simulation as plot_simulation
from eagle.viz._svg import to_svg as to_svg
from eagle.viz._text import draw_text as draw_text
from eagle.viz._text import render_text as render_text

__version__ = "0.1.0"

__all__ = ["GraphModel", "Layout", "describe", "draw_text", "layout", "plot", "plot_simulation",
           "render_text", "to_dot", "to_mermaid", "to_svg"]
