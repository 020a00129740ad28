"""Issue 25: labels that say the kernel, every edge drawn (routed around boxes), folding, DOT ranks,
the SVG face and a notebook's rich display, on builder graphs as users make them."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

import eagle
import eagle.builder
import hawk
from eagle.viz import describe, draw_text, layout, to_dot, to_svg
from eagle.viz._layout import BOX_ROWS, Layout
from hawk import Scalar


@hawk.kernel
def scale_velocity(v: Scalar) -> Scalar:
    return 0.5 * v


@hawk.kernel
def shift(v: Scalar) -> Scalar:
    return v + 1.0


@hawk.kernel
def total(a: Scalar, b: Scalar) -> Scalar:
    return a + b


@eagle.Graph.builder
def fork_of(x, branches: int):
    g = eagle.Graph()
    outs = []
    with g.parallel() as p:
        for _ in range(branches):
            with p.branch():
                v = scale_velocity(x)
                outs.append(shift(v))
    acc = outs[0]
    for out in outs[1:]:
        acc = total(acc, out)
    g.result = acc
    return g


@eagle.Graph.builder
def chain_of(x, n: int):
    g = eagle.Graph()
    v = x
    for _ in range(n):
        v = shift(scale_velocity(v))
    g.result = v
    return g


@eagle.Graph.builder
def skipping(x):
    g = eagle.Graph()
    v = scale_velocity(x)
    w = shift(v)
    w = shift(w)
    g.result = total(v, w)  # v skips the two shifts
    return g


def segments(points):
    return list(itertools.pairwise(points))


def crosses(seg, box) -> bool:
    """Whether an axis-parallel segment of cells enters the cells of a box."""
    (x0, y0), (x1, y1) = seg
    bx0, by0, bx1, by1 = box.x, box.y, box.x + box.w - 1, box.y + BOX_ROWS - 1
    lo_x, hi_x, lo_y, hi_y = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
    return lo_x <= bx1 and hi_x >= bx0 and lo_y <= by1 and hi_y >= by0


def assert_routed_around_boxes(lay: Layout) -> None:
    longs = [k for k in lay.links if not k.adjacent]
    for link in longs:
        assert link.points, f"no route for {link}"
        for seg in segments(link.points):
            for box in lay.boxes:
                assert not crosses(seg, box), f"{link} crosses box {box.text!r} at {seg}"


def test_builder_boxes_say_their_kernel_and_the_name_assigned():
    """``v = scale_velocity(x)`` is ``scale_velocity → v``; an edge carries ``v``, not ``out``."""
    g = skipping(np.arange(4.0))
    text = str(g)
    assert "scale_velocity → v" in text and "shift → w" in text
    lay = layout(describe(g, "test"))
    planes = {p for k in lay.links for p in k.planes}
    assert "v" in planes and "out" not in planes


def test_a_fork_names_each_branch_by_kernel():
    """A fork of 8 branches × 2 kernels: 8 scale_velocity and 8 shift boxes, not 16 named for a variable."""
    text = draw_text(layout(describe(fork_of(np.arange(4.0), 8), "test", fold=False)))
    assert text.count("scale_velocity → v") == 8
    assert text.count("│ shift │") == 8


def assert_wait_drawn(text: str, src: str, dst: str) -> None:
    """The text face draws a dotted link leaving ``src``'s box and an arrowhead into ``dst``'s; the
    two boxes side by side, or ``dst`` inside a fused frame (a one-thread build fuses the branch)."""
    assert re.search(src + r" +│┄+", text), text
    assert re.search(r"▸│ +" + dst, text), text


def test_the_demo_picture_shows_its_wait():
    """``w.wait(l)`` in the demo: the long link from ``left → l`` to ``right → r`` is drawn."""
    from eagle.demo import whole

    g = whole(np.arange(4.0), np.ones(1, np.uint32), np.zeros(4))
    assert_wait_drawn(str(g), "left → l", "right → r")


def test_a_skipping_plane_is_drawn_in_every_face():
    """v (read two stages on) is a long link in the text, SVG, DOT and Mermaid faces, routed around boxes."""
    g = skipping(np.arange(4.0))
    lay = layout(describe(g, "test"))
    longs = [k for k in lay.links if not k.adjacent]
    assert [(lay.texts[k.src], lay.texts[k.dst], k.planes) for k in longs] == [
        ("scale_velocity → v", "total", ("v",))]
    assert_routed_around_boxes(lay)
    assert "◂" in str(g) or "▸" in str(g)
    src, dst = longs[0].src, longs[0].dst
    assert f'n{src} -> n{dst} [label="v"]' in to_dot(g)
    assert f'n{src} -->|"v"| n{dst}' in g.to_mermaid()
    assert to_svg(g).count('class="long"') == 1


@pytest.mark.parametrize("graph", ["demo", "fork", "skipping"])
def test_long_links_never_cross_a_box(graph):
    """Every long link of a graph has a route, and no segment of it enters a box."""
    if graph == "demo":
        from eagle.demo import whole

        g = whole(np.arange(4.0), np.ones(1, np.uint32), np.zeros(4))
    elif graph == "fork":
        g = fork_of(np.arange(4.0), 3)
    else:
        g = skipping(np.arange(4.0))
    for columns in (1, 2):
        assert_routed_around_boxes(layout(describe(g, "test"), columns=columns))


def test_dot_pins_each_row_to_a_rank_in_the_layout_order():
    """Each row of boxes is one ``rank=same`` with invisible edges left to right: the branch order."""
    g = fork_of(np.arange(4.0), 3)
    lay = layout(describe(g, "test"))
    dot = to_dot(g)
    assert "newrank=true;" in dot
    ranks = [re.findall(r"n(\d+);", line) for line in dot.splitlines() if "rank=same" in line]
    heads = [b.node for b in sorted(lay.boxes, key=lambda b: b.x) if "scale_velocity" in b.text]
    assert [str(n) for n in heads] in ranks
    for a, b in itertools.pairwise(heads):
        assert f"n{a} -> n{b} [style=invis];" in dot


def test_a_long_chain_folds_and_unfolds():
    """1,000 kernels (500 × scale_velocity, shift) fold into one box; fold=False draws them all."""
    g = chain_of(np.arange(4.0), 500)
    text = str(g)
    assert "scale_velocity, shift → v ×500" in text
    assert len(text.splitlines()) < 40
    folded = layout(describe(g, "test"))
    every = layout(describe(g, "test", fold=False))
    assert len(folded.boxes) < 5 and len(every.boxes) == 1000
    assert to_svg(g, fold=False).count('class="box"') == 1000
    assert len(re.findall(r"^  +n\d+ \[label=", g.to_dot(fold=False), re.M)) == 1000


def test_a_wide_fork_folds_its_alike_branches():
    """50 alike branches are one branch in a ``×50 alike`` frame; the join still has its wires."""
    g = fork_of(np.arange(4.0), 50)
    lay = layout(describe(g, "test"))
    assert [f.label for f in lay.frames if f.kind == "fold"] == ["×50 alike"]
    assert lay.width < 120
    assert len(layout(describe(g, "test", fold=False)).boxes) == 50 * 2 + 49


def test_svg_face_and_rich_display():
    """``g.to_svg()`` and ``g._repr_svg_()`` are one SVG, drawn from the layout without matplotlib."""
    g = skipping(np.arange(4.0))
    svg = g.to_svg()
    assert svg == g._repr_svg_() and svg.startswith("<svg ")
    lay = layout(describe(g, "test"))
    assert svg.count('class="box"') == len(lay.boxes)
    assert svg.count('class="wire"') == len(lay.wires)
    assert "scale_velocity → v" in svg


@eagle.Graph.builder
def waiting(x):
    g = eagle.Graph()
    v = scale_velocity(x)
    with g.parallel() as p:
        with p.branch():
            w = shift(v)
        with p.branch() as b:
            b.wait(w)  # no data flows from w to this branch: only the wait orders it
            u = scale_velocity(v)
    g.result = total(w, u)
    return g


def test_a_wait_with_no_data_is_an_arrow_in_every_face():
    """``b.wait(w)`` where the branch reads nothing of w: an arrow that only orders, in every face."""
    g = waiting(np.arange(4.0))
    lay = layout(describe(g, "test"))
    (link,) = [k for k in lay.links if not k.adjacent]
    assert (lay.texts[link.src], lay.texts[link.dst], link.planes) == ("shift → w", "scale_velocity → u", ())
    assert_routed_around_boxes(lay)
    assert_wait_drawn(str(g), "shift → w", "scale_velocity → u")
    assert f"n{link.src} -> n{link.dst} [style=dashed];" in to_dot(g)
    assert f"n{link.src} -.-> n{link.dst}" in g.to_mermaid()
    assert to_svg(g).count('class="long"') == 1
