"""The matplotlib face: the layout's cells scaled to inches, drawn without pyplot.

No pyplot means no global figure state and no GUI backend: the Figure renders
with Agg on a machine with no display, and a figure made here never leaks into
the user's ``plt.show()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from eagle.extend import EagleImportError, EagleTypeError
from eagle.viz._layout import Layout, columns_for, layout, link_text
from eagle.viz._model import describe
from eagle.viz._palette import FONT, FRAME_COLOR, FRAME_FILL, LABEL_COLOR, LONG_COLOR, ROLE_COLORS, WIRE_COLOR

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

API: Final = "eagle.Graph.plot"
#: Inches per layout cell: a cell is about one character of the box text wide, half a box tall.
CELL_W: Final = 0.11
CELL_H: Final = 0.2
#: Cells of margin around the drawing, and rows above it for the header.
MARGIN: Final = 1.5
TITLE_ROWS: Final = 2.0
#: Width over height that a long graph's columns aim for.
ASPECT: Final = 1.6
#: Font sizes in points at the natural size; a smaller ``ax`` scales them down.
BOX_PT: Final = 10.0
SMALL_PT: Final = 8.5


def plot(graph: Any, ax: Axes | None = None, edge_labels: bool = True, show_schedule: bool = True,
         fold: bool = True) -> Figure:
    """Draw ``graph`` into ``ax`` (or a new Figure made without pyplot) and return the Figure.

    ``g.plot(...)`` is this function; it needs matplotlib (``eagle-viz[plot]``).

    >>> from eagle.graph import opaque
    >>> x, y = np.zeros(4), np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: np.add(x, 1.0, out=y), reads={"x": x}, writes={"y": y}), name="inc")
    >>> fig = eagle.viz.plot(g)                              # doctest: +SKIP
    >>> fig.savefig("graph.png")                            # doctest: +SKIP
    >>> import importlib.util
    >>> if importlib.util.find_spec("matplotlib"):          # the same, run where matplotlib is
    ...     eagle.viz.plot(g, edge_labels=False).savefig("graph.png")
    """
    try:
        from matplotlib.axes import Axes
        from matplotlib.figure import Figure
    except ImportError:
        raise EagleImportError(f"{API}: needs matplotlib, the plot extra: "
                               "pip install 'eagle-viz[plot]'") from None
    if ax is not None and not isinstance(ax, Axes):
        raise EagleTypeError(f"{API}: ax must be a matplotlib Axes, got {type(ax).__name__}")
    model = describe(graph, API, fold)
    lay = layout(model, stage_labels=bool(show_schedule), columns=columns_for(model, ASPECT, CELL_W / CELL_H))
    right = lay.width + MARGIN + _right_room(lay)
    width, height = right + MARGIN, lay.height + 2 * MARGIN + TITLE_ROWS
    if ax is None:
        fig = Figure(figsize=(width * CELL_W, height * CELL_H))
        ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
        scale = 1.0
    else:
        box = ax.get_position()
        fw, fh = ax.figure.get_size_inches()
        scale = min(1.0, box.width * fw / (width * CELL_W), box.height * fh / (height * CELL_H))
    ax.set_xlim(-MARGIN, right)
    ax.set_ylim(-(lay.height + MARGIN), MARGIN + TITLE_ROWS)
    ax.set_aspect(CELL_H / CELL_W)  # one row is CELL_H inches for every CELL_W of a column
    ax.set_axis_off()
    _Painter(ax, lay, scale).draw(bool(edge_labels))
    return ax.figure


def _xy(x: float, y: float) -> tuple[float, float]:
    """A cell's centre in axes data units (rows run down)."""
    return x + 0.5, -(y + 0.5)


class _Painter:
    def __init__(self, ax: Axes, lay: Layout, scale: float) -> None:
        from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

        self.ax, self.lay, self.scale = ax, lay, scale
        self.arrow, self.rounded = FancyArrowPatch, FancyBboxPatch

    def text(self, x: float, y: float, s: str, size: float, **kw: Any) -> None:
        self.ax.text(x, y, s, fontsize=size * self.scale, fontfamily=FONT, **kw)

    def draw(self, edge_labels: bool) -> None:
        lay = self.lay
        self.text(0, MARGIN + 0.4, lay.model.header, BOX_PT, ha="left", va="center", color="#222222")
        for frame in lay.frames:
            self.rect(frame.x, frame.y, frame.w, frame.h, FRAME_FILL, FRAME_COLOR, dashed=True, z=1,
                      rounding=0.6)
            self.text(frame.x + 1.4, -(frame.y + 0.5), frame.label, SMALL_PT, ha="left", va="center",
                      color=FRAME_COLOR, zorder=5, bbox={"boxstyle": "round,pad=0.2", "fc": FRAME_FILL,
                                                         "ec": "none"})
        for box in lay.boxes:
            fill, border = ROLE_COLORS[box.role]
            self.rect(box.x, box.y, box.w, 3, fill, border, dashed=box.dashed, z=3, rounding=0.4)
            self.text(box.x + box.w / 2, -(box.y + 1.5), box.text, BOX_PT, ha="center", va="center_baseline",
                      zorder=4, color="#1a1a1a")
        for wire in lay.wires:
            self.wire(wire.points)
        self.long_links(edge_labels)
        if edge_labels:
            for planes in lay.planes:
                if planes.wired:  # long links carry their own labels
                    self.text(*_xy(planes.x, planes.y), planes.wired, SMALL_PT, ha="center", va="center",
                              style="italic", color=LABEL_COLOR, zorder=6,
                              bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"})
        for stage in lay.stages:
            self.text(stage.x + stage.width - 1.5, -(stage.y + 1.5), stage.text, SMALL_PT, ha="right",
                      va="center_baseline", color="#6a6a6a")

    def rect(self, x: int, y: int, w: int, h: int, fill: str, edge: str, dashed: bool, z: int,
             rounding: float) -> None:
        """The cells' box outline: borders run through the middle of the border cells."""
        self.ax.add_patch(self.rounded(
            (x + 0.5, -(y + h - 0.5)), w - 1, h - 1, boxstyle=f"round,pad=0,rounding_size={rounding}",
            mutation_aspect=CELL_W / CELL_H, facecolor=fill, edgecolor=edge, linewidth=1.2 * self.scale,
            linestyle=(0, (4, 2.5)) if dashed else "-", zorder=z))

    def wire(self, points: tuple[tuple[int, int], ...]) -> None:
        xs, ys = zip(*(_xy(x, y) for x, y in points), strict=True)
        self.ax.plot(xs[:-1], ys[:-1], color=WIRE_COLOR, linewidth=1.1 * self.scale, zorder=2,
                     solid_capstyle="butt")
        self.ax.add_patch(self.arrow((xs[-2], ys[-2]), (xs[-1], ys[-1]), arrowstyle="-|>",
                                     mutation_scale=9 * self.scale, shrinkA=0, shrinkB=0, color=WIRE_COLOR,
                                     linewidth=1.1 * self.scale, zorder=2))

    def long_links(self, edge_labels: bool) -> None:
        """Data edges past the nodes between (and waits), dashed, along the engine's routes: around
        the boxes, never through one, the label beside the route's first run."""
        for link in self.lay.links:
            if link.adjacent:
                continue
            xs, ys = zip(*(_xy(x, y) for x, y in link.points), strict=True)
            self.ax.plot(xs, ys, color=LONG_COLOR, linewidth=1.0 * self.scale, linestyle=(0, (3, 2)),
                         zorder=2.5)
            # a route ends on a horizontal run (layout.c): the arrow's tip on the box's side
            tip = xs[-1] + (0.5 if xs[-1] > xs[-2] else -0.5)
            self.ax.add_patch(self.arrow((xs[-1], ys[-1]), (tip, ys[-1]), arrowstyle="-|>",
                                         mutation_scale=9 * self.scale, shrinkA=0, shrinkB=0,
                                         color=LONG_COLOR, linewidth=1.0 * self.scale, zorder=2.5))
            if edge_labels:
                self.text(xs[0] + 0.3, ys[0] + 0.55, link_text(link), SMALL_PT, ha="left", va="center",
                          style="italic", color=LONG_COLOR, zorder=6)


def _right_room(lay: Layout) -> float:
    """Cells right of the layout that long links' labels need."""
    return max((link.points[0][0] + 0.7 * len(link_text(link)) - lay.width for link in lay.links
                if link.points), default=0.0)
