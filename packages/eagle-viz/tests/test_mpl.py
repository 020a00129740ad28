"""The matplotlib face: a plain Figure, no pyplot, saved to PNG; long graphs flow into columns."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap

import pytest

import eagle
from eagle.viz._mpl import BOX_PT

PNG = b"\x89PNG\r\n\x1a\n"


def test_plot_returns_a_figure_that_saves_to_png(graphs, mpl):
    """g.plot() is a matplotlib.figure.Figure; savefig writes a PNG of its size."""
    from matplotlib.figure import Figure

    fig = graphs.seed_001().build().plot()
    assert isinstance(fig, Figure)
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=100)
    data = out.getvalue()
    assert data.startswith(PNG)
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == tuple(round(v * 100) for v in fig.get_size_inches())


def test_no_pyplot_and_no_display(mpl, tmp_path):
    """In a fresh process with no display, plotting never imports pyplot and the PNG is written."""
    script = textwrap.dedent(f"""
        import sys, numpy as np, eagle
        from eagle.graph import opaque
        x = np.zeros(4)
        g = eagle.Graph().add_node(opaque(lambda: None, writes={{"x": x}}), name="a")
        g.add_node(opaque(lambda: None, reads={{"x": x}}), name="b")
        g.plot().savefig({str(tmp_path / "g.png")!r})
        assert "matplotlib.pyplot" not in sys.modules
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "MPLBACKEND")}
    subprocess.run([sys.executable, "-c", script], check=True, env=env, timeout=120)
    assert (tmp_path / "g.png").read_bytes().startswith(PNG)


def test_draws_into_your_axes(graphs, mpl):
    """plot(ax=...) draws into that Axes and returns its Figure."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4))
    left, right = fig.subplots(1, 2)
    assert graphs.seed_002().plot(ax=right) is fig
    assert not left.texts and {t.get_text() for t in right.texts} >= {"<l>", "<r>", "<join>"}
    small = [t.get_fontsize() for t in right.texts if t.get_zorder() == 4]
    assert all(size < BOX_PT for size in small)  # a smaller Axes scales the type down


def test_refuses_what_is_not_an_axes_or_a_graph(graphs, mpl):
    """A wrong ax or a non-graph is a TypeError that starts with the API."""
    with pytest.raises(TypeError, match=r"^eagle\.Graph\.plot: ax must be a matplotlib Axes, got str"):
        graphs.seed_002().plot(ax="left")
    with pytest.raises(TypeError, match=r"^eagle\.Graph\.plot: expected an eagle\.Graph, got list"):
        eagle.viz.plot([])


def test_edge_labels_and_schedule_can_be_left_out(graphs, mpl):
    """edge_labels=False drops the plane names; show_schedule=False the stage column."""
    g = graphs.seed_001().build()
    texts = lambda fig: {t.get_text() for t in fig.axes[0].texts}  # noqa: E731
    full = texts(g.plot())
    assert {"x", "left_out", "right…", "stage 1 work_share"} <= full
    bare = texts(g.plot(edge_labels=False, show_schedule=False))
    assert not bare & {"x", "left_out", "right…", "stage 1 work_share"}
    assert {"seed", "left", "right", "combine", "skip if guard"} <= bare


def test_a_long_chain_flows_into_columns(graphs, mpl):
    """200 nodes do not make a 200-row strip: the stages flow into columns of a page's proportions."""
    fig = graphs.chain(200).plot()
    width, height = fig.get_size_inches()
    assert 1.0 < width / height < 2.5 and height < 30
    xs = {round(t.get_position()[0]) for t in fig.axes[0].texts if t.get_zorder() == 4}
    assert len(xs) >= 4
    assert sum(t.get_zorder() == 4 for t in fig.axes[0].texts) == 200


def test_a_wide_fork_keeps_its_labels_apart(graphs, mpl):
    """Twelve branches: no two box texts overlap, and each sits inside its box."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = graphs.wide_fork(12).plot()
    renderer = FigureCanvasAgg(fig).get_renderer()
    ax = fig.axes[0]
    labels = [t.get_window_extent(renderer) for t in ax.texts if t.get_zorder() == 4]
    boxes = [p.get_window_extent(renderer) for p in ax.patches if p.get_zorder() == 3]
    assert len(labels) == len(boxes) == 14
    for i, a in enumerate(labels):
        assert not any(a.overlaps(b) for b in labels[i + 1:])
    for label in labels:
        assert any(box.x0 < label.x0 and label.x1 < box.x1 for box in boxes)
