"""Issue 25: every edge drawn, in every face.  Waits and planes that start or end inside a device
construct's body (an ``if``, a loop, a ``match`` arm) are links like any other, and a link the
routing rules cannot place still gets a route (around the boxes): no picture loses an edge, on
builder graphs and on adversarial ones (many long links, nested frames, wide forks)."""

from __future__ import annotations

import itertools
import random
import re
from functools import partial

import numpy as np
import pytest

import eagle
import hawk
from eagle.extend import Wait
from eagle.graph import Node, opaque
from eagle.viz import describe, draw_text, layout, to_dot, to_mermaid, to_svg
from eagle.viz._layout import BOX_ROWS, Layout, columns_for, plane_name
from eagle.viz._mpl import ASPECT, CELL_H, CELL_W
from eagle.viz._palette import LONG_COLOR
from hawk import Mutable, Scalar, UInt32


@hawk.kernel
def scale_velocity(v: Scalar) -> Scalar:
    return 0.5 * v


@hawk.kernel
def shift(v: Scalar) -> Scalar:
    return v + 1.0


@hawk.kernel
def total(a: Scalar, b: Scalar) -> Scalar:
    return a + b


@hawk.kernel
def moving(x: Scalar, flag: Mutable[UInt32]) -> None:
    flag = hawk.math.uint32(hawk.sum(abs(x) > 1e-3))


@eagle.Graph.builder
def wait_in_if(x, flag):
    """A fork inside a device if: the second branch waits for the first."""
    g = eagle.Graph()
    v = scale_velocity(x)
    if flag:
        with g.parallel() as p:
            with p.branch():
                w = shift(v)
            with p.branch() as b:
                b.wait(w)
                u = scale_velocity(v)
        v = total(w, u)
    g.result = v
    return g


@eagle.Graph.builder
def wait_in_loop(x, more):
    """The same fork inside a capped device loop."""
    g = eagle.Graph()
    v = scale_velocity(x)
    for _ in range(20):
        if not more:
            break
        with g.parallel() as p:
            with p.branch():
                w = shift(v)
            with p.branch() as b:
                b.wait(w)
                u = scale_velocity(v)
        v = total(w, u)
        moving(v, more)
    g.result = v
    return g


@eagle.Graph.builder
def wait_in_match(x, mode):
    """The same fork in one arm of a match."""
    g = eagle.Graph()
    v = scale_velocity(x)
    match mode:
        case 0:
            with g.parallel() as p:
                with p.branch():
                    w = shift(v)
                with p.branch() as b:
                    b.wait(w)
                    u = scale_velocity(v)
            v = total(w, u)
        case _:
            v = shift(v)
    g.result = v
    return g


@eagle.Graph.builder
def wait_into_if(x, flag):
    """A branch's wait inside its device if: the if's first node waits for the other branch."""
    g = eagle.Graph()
    v = scale_velocity(x)
    with g.parallel() as p:
        with p.branch():
            w = shift(v)
        with p.branch() as b:
            if flag:
                b.wait(w)
                u = scale_velocity(v)
            else:
                u = shift(v)
    g.result = total(w, u)
    return g


@eagle.Graph.builder
def skip_within(x, flag):
    """Inside an if, ``a`` skips two nodes to the total."""
    g = eagle.Graph()
    v = scale_velocity(x)
    if flag:
        a = shift(v)
        b = scale_velocity(a)
        c = shift(b)
        v = total(a, c)
    g.result = v
    return g


@eagle.Graph.builder
def skip_in_and_out(x, flag):
    """v skips the if into the node after it; the if's result skips two shifts into the total."""
    g = eagle.Graph()
    v = scale_velocity(x)
    if flag:
        a = shift(v)
        b = scale_velocity(a)
        a = total(a, b)
    else:
        a = scale_velocity(v)
    c = shift(v)
    c = shift(c)
    g.result = total(a, c)
    return g


def wait_for_a_body_node() -> eagle.Graph:
    """A branch (made by hand) that waits for a node inside another branch's device if."""
    x, a, b, cell = np.zeros(4), np.zeros(4), np.zeros(4), np.ones(1, np.uint32)
    inner = opaque(partial(np.copyto, a, 1.0), reads={"x": x}, writes={"a": a})
    iff = Node("device_if", eagle.DeviceIf(cell, eagle.Body([inner]), eagle.Body([])))
    g = eagle.Graph().add_node(opaque(partial(np.copyto, x, 0.0), writes={"x": x}), name="source")
    g.add_group([iff, [Node("wait", Wait(inner, "a")), opaque(partial(np.copyto, b, 2.0), reads={"x": x},
                                                               writes={"b": b})]],
                names=["guarded", ["wait", "after"]])
    return g


def segments(points):
    return list(itertools.pairwise(points))


def crosses(seg, box) -> bool:
    """Whether an axis-parallel segment of cells enters the cells of a box."""
    (x0, y0), (x1, y1) = seg
    bx0, by0, bx1, by1 = box.x, box.y, box.x + box.w - 1, box.y + BOX_ROWS - 1
    return min(x0, x1) <= bx1 and max(x0, x1) >= bx0 and min(y0, y1) <= by1 and max(y0, y1) >= by0


def wanted(lay: Layout) -> list[tuple[set[int], set[int], str | None]]:
    """What the model asks to be drawn, read off the model alone (not the engine's rule): for each
    data edge, flow inside a construct and wait, the boxes that may stand for its two ends (a node's
    own box; a construct's, the boxes inside it) and the plane the link must carry (None: a wait)."""
    model = lay.model
    alias = model.alias
    drawn = {b.node for b in lay.boxes}
    inside: dict[int, set[int]] = {}
    for node in model.nodes:
        inside.setdefault(alias.get(node.owner, node.owner), set()).add(alias.get(node.index, node.index))

    def boxes(node: int) -> set[int]:
        node = alias.get(node, node)
        return {node} if node in drawn else inside.get(node, set()) & drawn

    ends = [(e.src, e.dst, e.plane) for e in model.edges if e.kind in ("RAW", "WAW")]
    ends += list(model.flows)
    out = [(boxes(s), boxes(d), plane_name(model.nodes[s], p)) for s, d, p in ends
           if alias.get(s, s) != alias.get(d, d)]
    out += [(boxes(s), boxes(d), None) for s, d in model.waits]
    return [(s, d, p) for s, d, p in out if s and d]  # a node that draws no box (a graph's wait)


def drawn_by(link, want: tuple[set[int], set[int], str | None]) -> bool:
    srcs, dsts, plane = want
    return link.src in srcs and link.dst in dsts and (plane is None or plane in link.planes)


def assert_links_as_asked(lay: Layout) -> None:
    """Each data edge, flow and wait of the model is drawn by a link (a wire or a long link) between
    its two ends, carrying its plane; each long link draws one of them."""
    wants = wanted(lay)
    for want in wants:
        assert any(drawn_by(k, want) for k in lay.links), f"nothing draws {want}: {lay.links}"
    for link in lay.links:
        if not link.adjacent:
            assert any(drawn_by(link, want) for want in wants), f"{link} draws nothing asked for"


#: What a long link's cell shows: a long link's dots or bends (its own, or one it shares the cell
#: with), or a line it crosses at right angles (horizontally, vertically): a wire, a frame's border.
_DOTS = "┄┆╭╮╯╰"
_ACROSS = ("│╎┼├┤", "─╌┼┬┴")


def route_cells(points) -> list[tuple[int, int]]:
    """The cells of a route through its corners, in order."""
    cells = [points[0]]
    for (x0, y0), (x1, y1) in segments(points):
        dx, dy = (x1 > x0) - (x1 < x0), (y1 > y0) - (y1 < y0)
        cells += [(x0 + k * dx, y0 + k * dy) for k in range(1, max(abs(x1 - x0), abs(y1 - y0)) + 1)]
    return cells


def assert_route_shown(link, lines: list[str], names: set[tuple[int, int]]) -> None:
    """Every cell of a long link's route shows it in the text face: a long link's dots or bends, or a
    line it crosses at right angles, never a line it runs along or text; its last cell the arrowhead.
    The one text a link may cross (down, never along) is a row of plane names (``names``: its cells),
    where only that crosses the gap between two branches under a frame."""
    def at(x: int, y: int) -> str:
        return lines[y][x] if y < len(lines) and x < len(lines[y]) else " "

    cells = route_cells(link.points)
    picture = "\n".join(lines)
    assert at(*cells[-1]) in "▸◂", f"no arrowhead for {link} in\n{picture}"
    for k, (x, y) in enumerate(cells[:-1]):
        here = at(x, y)
        ahead = cells[k + 1]
        behind = cells[k - 1] if k else (x - 1 if ahead[0] < x else x + 1, y)  # out of the box's side
        bend = behind[0] != ahead[0] and behind[1] != ahead[1]
        shown = _DOTS if bend else _DOTS + _ACROSS[ahead[1] != y]
        if not k:  # out of its box's side, where another link may end
            shown += "▸◂"
        if not bend and ahead[0] == x and (x, y) in names:
            continue
        assert here in shown, f"{link} at {(x, y)} is unseen ({here!r}) in\n{picture}"


def assert_every_link_drawn(g: eagle.Graph, lay: Layout | None = None) -> Layout:
    """Every long link the model asks for has a route around the boxes and is drawn in the text,
    SVG, DOT and Mermaid faces (and matplotlib's, where it is installed); every wire too."""
    lay = lay or layout(describe(g, "test"))
    longs = [k for k in lay.links if not k.adjacent]
    assert_links_as_asked(lay)
    for link in longs:
        assert link.points, f"no route for {link}"
        for seg in segments(link.points):
            for box in lay.boxes:
                assert not crosses(seg, box), f"{link} crosses box {box.text!r} at {seg}"
    lines = draw_text(lay).splitlines()[1:]  # under the header
    names = {(p.x - len(p.text) // 2 + k, p.y) for p in lay.planes for k in range(len(p.text))}
    for link in longs:
        assert_route_shown(link, lines, names)
    svg = to_svg(g)
    assert svg.count('class="long"') == len(longs) and svg.count('class="wire"') == len(lay.wires)
    dot, mermaid = to_dot(g), to_mermaid(g)
    for link in lay.links:
        assert re.search(rf"^  n{link.src} -> n{link.dst} \[(label=|style=dashed)", dot, re.M), link
        assert re.search(rf"^  n{link.src} (-->|-\.->) ?(\|.*\| )?n{link.dst}$", mermaid, re.M), link
    return lay


def assert_plot_draws_every_link(g: eagle.Graph) -> None:
    model = describe(g, "test")
    lay = layout(model, columns=columns_for(model, ASPECT, CELL_W / CELL_H))
    ax = g.plot().axes[0]
    assert sum(line.get_color() == LONG_COLOR for line in ax.lines) == sum(not k.adjacent for k in lay.links)


def one_long_link(g: eagle.Graph) -> tuple[str, str, tuple[str, ...]]:
    lay = assert_every_link_drawn(g)
    (link,) = [k for k in lay.links if not k.adjacent]
    return lay.texts[link.src], lay.texts[link.dst], link.planes


@pytest.mark.parametrize("make", [wait_in_if, wait_in_loop, wait_in_match], ids=["if", "loop", "match"])
def test_a_wait_inside_a_body_is_drawn_in_every_face(make):
    """The fork's wait inside a device if, loop or match arm: a dotted arrow from shift to
    scale_velocity, in every face, around the boxes (in the loop, the total's v also flows back
    into the next turn's shift and scale_velocity)."""
    g = make(np.arange(4.0), np.ones(1, np.uint32))
    lay = assert_every_link_drawn(g)
    longs = {(lay.texts[k.src], lay.texts[k.dst], k.planes) for k in lay.links if not k.adjacent}
    back = {("total", "shift", ("v",)), ("total", "scale_velocity", ("v",))}
    assert longs == {("shift", "scale_velocity", ()), *(back if make is wait_in_loop else ())}
    text = str(g)
    assert re.search(r"│ shift │┄+", text) and "│▸│" in text, text


def test_a_wait_at_the_start_of_an_if_is_drawn_into_it():
    """``b.wait(w)`` as the first step of a branch's if: the arrow ends at the if's first node."""
    g = wait_into_if(np.arange(4.0), np.ones(1, np.uint32))
    assert one_long_link(g) == ("shift → w", "scale_velocity", ())


def test_a_wait_for_a_node_inside_a_body_leaves_that_node():
    """A branch waiting for the node inside another branch's if: the arrow leaves that node's box."""
    g = wait_for_a_body_node()
    lay = layout(describe(g, "test"))
    assert [(lay.texts[k.src], lay.texts[k.dst]) for k in lay.links if not k.adjacent] == [
        ("opaque", "after")]
    assert_every_link_drawn(g, lay)


def test_a_plane_that_skips_nodes_inside_a_body_is_drawn():
    """``a`` read by the total two nodes on, inside the if: a long link the graph's edges (which see
    the if as one node) do not have."""
    g = skip_within(np.arange(4.0), np.ones(1, np.uint32))
    assert one_long_link(g) == ("shift", "total", ("a",))


@eagle.Graph.builder
def carried(x, more):
    """A loop whose first node reads what its last wrote the turn before."""
    g = eagle.Graph()
    v = scale_velocity(x)
    w = shift(v)
    for _ in range(20):
        if not more:
            break
        u = scale_velocity(w)
        u = shift(u)
        w = total(u, v)
        moving(w, more)
    g.result = w
    return g


def test_a_plane_carried_into_a_loops_next_turn_is_drawn():
    """w, written by the loop's total and read by its first node the next turn: a link back up the
    body, besides the wires down it."""
    g = carried(np.arange(4.0), np.ones(1, np.uint32))
    lay = assert_every_link_drawn(g)
    longs = {(lay.texts[k.src], lay.texts[k.dst], k.planes) for k in lay.links if not k.adjacent}
    # the other: v, read by the loop's total, drawn into the construct's first box
    assert longs == {("total", "scale_velocity", ("v",)), ("scale_velocity → v", "scale_velocity", ("v",))}


def test_planes_into_and_out_of_a_body_are_drawn():
    """v past the if into the first shift after it, and the if's result past both shifts into the
    total: each a long link (leaving the construct's last box: a construct has one node's edges)."""
    g = skip_in_and_out(np.arange(4.0), np.ones(1, np.uint32))
    lay = assert_every_link_drawn(g)
    longs = {(lay.texts[k.src], lay.texts[k.dst], k.planes) for k in lay.links if not k.adjacent}
    assert longs == {("scale_velocity → v", "shift → c", ("v",)), ("scale_velocity", "total", ("out",)),
                     ("shift", "total", ("a",))}


def test_the_plot_draws_the_links_of_bodies(mpl):
    for g in (wait_in_if(np.arange(4.0), np.ones(1, np.uint32)),
              skip_in_and_out(np.arange(4.0), np.ones(1, np.uint32))):
        assert_plot_draws_every_link(g)


def guarded(*steps) -> Node:
    return Node("device_if", eagle.DeviceIf(np.ones(1, np.uint32), eagle.Body(list(steps)), eagle.Body([])))


def op(reads: dict, writes: dict) -> Node:
    return opaque(partial(np.copyto, next(iter(writes.values())), 1.0), reads=reads, writes=writes)


def test_a_flow_into_a_nested_if_is_drawn():
    """An if's body [w (writes p), x, an inner if's body [y1, y2 (reads p)]]: p from w to y2 is a
    long link, though the wire x -> y1 joins nodes of the same graph node."""
    src, p, q, r, s = (np.zeros(2) for _ in range(5))
    w, x, y1, y2 = op({"src": src}, {"p": p}), op({"p": p}, {"q": q}), op({"q": q}, {"r": r}), \
        op({"p": p}, {"s": s})
    g = eagle.Graph().add_node(op({}, {"src": src}), name="source")
    g.add_node(guarded(w, x, guarded(y1, y2)))
    lay = assert_every_link_drawn(g)
    model = lay.model
    w_, y2_ = (model.nodes[k].index for k in (2, 6))
    assert [(k.src, k.dst, k.planes) for k in lay.links if not k.adjacent] == [(w_, y2_, ("p",))]


def test_an_edge_into_an_if_whose_body_is_only_an_if_is_drawn():
    """An edge into an if whose body holds only an inner if: a long link into the inner if's box."""
    src, a, b, r = (np.zeros(2) for _ in range(4))
    g = eagle.Graph().add_node(op({}, {"src": src}), name="source")
    g.add_node(op({"src": src}, {"a": a}), name="n1")
    g.add_node(op({"src": src}, {"r": r}), name="n")
    g.add_node(guarded(guarded(op({"a": a}, {"b": b}))), name="outer")
    lay = assert_every_link_drawn(g)
    assert (lay.texts[1], lay.texts[5], ("a",)) in {(lay.texts[k.src], lay.texts[k.dst], k.planes)
                                                     for k in lay.links if not k.adjacent}


def test_a_wait_for_a_nested_if_leaves_its_last_box():
    """A branch waiting for an if inside another branch's if: the arrow leaves the inner if's last box."""
    x, a, b = np.zeros(2), np.zeros(2), np.zeros(2)
    inner = guarded(op({"x": x}, {"a": a}))
    g = eagle.Graph().add_node(op({}, {"x": x}), name="source")
    g.add_group([guarded(inner), [Node("wait", Wait(inner, "a")), op({"x": x}, {"b": b})]],
                names=["guarded", ["wait", "after"]])
    lay = assert_every_link_drawn(g)
    assert [(lay.texts[k.src], lay.texts[k.dst], k.planes) for k in lay.links if not k.adjacent] == [
        ("opaque", "after", ())]


def test_a_plane_between_adjacent_nodes_of_a_body_is_labelled():
    """x -> y inside an if passes p: the wire carries p (a labelled arrow in DOT and Mermaid, p under x
    in the text), not a dashed wait."""
    src, p, q = np.zeros(2), np.zeros(2), np.zeros(2)
    g = eagle.Graph().add_node(op({}, {"src": src}), name="source")
    g.add_node(guarded(op({"src": src}, {"p": p}), op({"p": p}, {"q": q})))
    lay = assert_every_link_drawn(g)
    assert [(k.src, k.dst, k.planes) for k in lay.links if k.src == 2] == [(2, 3, ("p",))]
    assert re.search(r"^  n2 -> n3 \[label=\"p\"", to_dot(g), re.M), to_dot(g)
    assert re.search(r"^  n2 -->\|\"p\"\| n3$", to_mermaid(g), re.M), to_mermaid(g)
    assert re.search(r"^ +│ +p +│$", str(g), re.M), str(g)


class Adversary:
    """Graphs of opaque ops that read planes written far up: many long links across nested frames
    (skip guards, device ifs around forks, loops) and wide forks."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.planes: list[np.ndarray] = []
        self.cell = np.ones(1, np.uint32)

    def node(self) -> Node:
        """An op writing a new plane and reading up to three earlier ones."""
        out = np.zeros(2)
        picked = self.rng.sample(range(len(self.planes)), min(len(self.planes), self.rng.randint(1, 3)))
        reads = {f"w{k + 1}": self.planes[k] for k in picked}
        self.planes.append(out)
        return opaque(partial(np.copyto, out, 1.0), reads=reads, writes={f"w{len(self.planes)}": out})

    def body(self, depth: int) -> eagle.Body:
        if depth and self.rng.random() < 0.2:  # a body that is only a construct: no box of its own
            return eagle.Body([self.construct(depth - 1)])
        steps: list = [self.node()]
        if depth and self.rng.random() < 0.6:
            steps.append(eagle.Fork([eagle.Body([self.node(), self.node()]), eagle.Body([self.node()])]))
        if depth and self.rng.random() < 0.5:
            steps.append(self.construct(depth - 1))
        steps.append(self.node())
        return eagle.Body(steps)

    def construct(self, depth: int) -> Node:
        if self.rng.random() < 0.5:
            return Node("device_if", eagle.DeviceIf(self.cell, self.body(depth), self.body(depth)))
        return Node("device_loop", eagle.DeviceLoop(self.cell, "while", 5, self.body(depth)))

    def graph(self, stages: int) -> eagle.Graph:
        g = eagle.Graph().add_node(self.node())
        for _ in range(stages):
            kind = self.rng.choice(["node", "fork", "wide", "skip", "construct"])
            if kind == "node":
                g.add_node(self.node())
            elif kind in ("fork", "wide"):
                g.add_group([self.node() if self.rng.random() < 0.6 else [self.node(), self.node()]
                             for _ in range(self.rng.randint(2, 4) if kind == "fork" else 9)])
            elif kind == "skip":
                g.add_node(eagle.skippable(self.node(), eagle.SkipGuard.nonzero(self.cell)))
            else:
                g.add_node(self.construct(2))
        return g


@pytest.mark.parametrize("seed", range(4))
def test_adversarial_graphs_lose_no_link(seed):
    """Random graphs thick with long links: every link the model asks for is drawn in every face,
    none crosses a box, in one column and flowed into three, folded or not."""
    g = Adversary(seed).graph(10)
    for fold, columns in ((True, 1), (False, 1), (True, 3)):
        lay = layout(describe(g, "test", fold=fold), columns=columns)
        assert len([k for k in lay.links if not k.adjacent]) > 10
        if fold and columns == 1:
            assert_every_link_drawn(g, lay)
        else:  # the other faces draw the one-column folded layout: the routes alone
            assert_links_as_asked(lay)
            for link in (k for k in lay.links if not k.adjacent):
                assert link.points, link
                for seg in segments(link.points):
                    assert not any(crosses(seg, box) for box in lay.boxes), link
