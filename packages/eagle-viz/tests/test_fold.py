"""Folding a wide fork of unlike branches: its first few branches, then one box for the rest
(``… 44 more branches``); ``fold=False`` unfolds it, as it unfolds every fold."""

from __future__ import annotations

from functools import partial

import numpy as np

import eagle
from eagle.graph import opaque
from eagle.viz import describe, draw_text, layout, to_dot, to_mermaid, to_svg
from eagle.viz._fold import SHOWN_BRANCHES, WIDE_FORK

WIDE_50 = """\
eagle.Graph 52 nodes · 1 group · backend: (not built)
stage 0                                 ┌╌╌╌╌╌╌╌╌╌┐
                                        ╎ source  ╎
                                        └╌╌╌╌┬╌╌╌╌┘
                                             x
           ┌─────────┬─────────┬─────────┬───┴─────┬─────────┬─────────────────┐
stage 1 ┌╌╌┴╌╌┐   ┌╌╌┴╌╌┐   ┌╌╌┴╌╌┐   ┌╌╌┴╌╌┐   ┌╌╌┴╌╌┐   ┌╌╌┴╌╌┐   ┌╌╌╌╌╌╌╌╌╌╌┴╌╌╌╌╌╌╌╌╌╌┐
        ╎ b0  ╎   ╎ b1  ╎   ╎ b2  ╎   ╎ b3  ╎   ╎ b4  ╎   ╎ b5  ╎   ╎ … 44 more branches  ╎
        └╌╌┬╌╌┘   └╌╌┬╌╌┘   └╌╌┬╌╌┘   └╌╌┬╌╌┘   └╌╌┬╌╌┘   └╌╌┬╌╌┘   └╌╌╌╌╌╌╌╌╌╌┬╌╌╌╌╌╌╌╌╌╌┘
         out0      out1      out2      out3      out4      out5       out6, out7, out8,…
           └─────────┴─────────┴─────────┴───┬─────┴─────────┴─────────────────┘
stage 2                                  ┌╌╌╌┴╌╌╌┐
                                         ╎ sink  ╎
                                         └╌╌╌╌╌╌╌┘"""


def fork_of(names: list[str]) -> eagle.Graph:
    """One source, a branch per name (an opaque op; alike names are alike branches), one sink."""
    x, outs, total = np.zeros(4), [np.zeros(4) for _ in names], np.zeros(4)
    g = eagle.Graph().add_node(opaque(partial(np.copyto, x, 1.0), writes={"x": x}), name="source")
    g.add_group([opaque(partial(np.add, x, float(i), out=o), reads={"x": x}, writes={f"out{i}": o})
                 for i, o in enumerate(outs)], names=names)
    g.add_node(opaque(partial(np.copyto, total, 0.0), reads={f"out{i}": o for i, o in enumerate(outs)},
                      writes={"total": total}), name="sink")
    return g


def test_a_wide_fork_of_unlike_branches_shows_its_first_and_one_box_for_the_rest():
    """50 unlike branches: the first six side by side, then ``… 44 more branches``, which the
    source's wire enters and the sink's leaves, carrying the planes of the branches it stands for."""
    g = fork_of([f"b{i}" for i in range(50)])
    assert str(g) == WIDE_50
    lay = layout(describe(g, "test"))
    rest = lay.box(7)
    assert rest.text == "… 44 more branches"
    assert {(w.src, w.dst) for w in lay.wires if 7 in (w.src, w.dst)} == {(0, 7), (7, 51)}
    assert lay.outgoing(7) == tuple(f"out{i}" for i in range(6, 50))
    for face, b6 in ((to_svg(g), ">b6<"), (to_dot(g), '"b6"'), (to_mermaid(g), '"b6"')):
        assert "… 44 more branches" in face and b6 not in face and b6.replace("6", "5") in face


def test_fold_false_unfolds_a_wide_fork():
    """``fold=False`` (every face takes it) draws all fifty branches on one row."""
    g = fork_of([f"b{i}" for i in range(50)])
    lay = layout(describe(g, "test", fold=False))
    assert [b.text for b in lay.boxes][1:-1] == [f"b{i}" for i in range(50)]
    assert len({b.y for b in lay.boxes[1:-1]}) == 1 and "more branches" not in draw_text(lay)
    assert to_dot(g, fold=False).count('[label="b') == 50
    assert to_svg(g, fold=False).count('class="box"') == 52


def test_a_fork_as_wide_as_one_row_reads_is_not_cut():
    """WIDE_FORK branches stay whole; one more and the rest past SHOWN_BRANCHES are one box."""
    whole = layout(describe(fork_of([f"b{i}" for i in range(WIDE_FORK)]), "test"))
    assert len(whole.boxes) == WIDE_FORK + 2
    cut = layout(describe(fork_of([f"b{i}" for i in range(WIDE_FORK + 1)]), "test"))
    assert [b.text for b in cut.boxes][1:-1] == [
        *(f"b{i}" for i in range(SHOWN_BRANCHES)), f"… {WIDE_FORK + 1 - SHOWN_BRANCHES} more branches"]


def test_alike_branches_count_in_the_rest():
    """Twenty branches whose last eight are alike: sixteen unlike ones and the ``×8 alike`` frame
    are 13 blocks, too wide; the box for the rest says the branches it stands for (fourteen)."""
    g = fork_of([f"b{i}" for i in range(12)] + ["same"] * 8)
    lay = layout(describe(g, "test"))
    assert [b.text for b in lay.boxes][1:-1] == [*(f"b{i}" for i in range(6)), "… 14 more branches"]
    assert not [f for f in lay.frames if f.kind == "fold"]
