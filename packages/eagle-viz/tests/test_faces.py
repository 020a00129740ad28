"""The four faces agree: each lists the same nodes, links and frames, for every test graph, built or not."""

from __future__ import annotations

import html
import re
import subprocess

import pytest

from eagle.viz import describe, draw_text, layout, to_dot, to_mermaid
from eagle.viz._layout import Layout, link_text
from eagle.viz._model import walk

BOX_DRAWING = re.compile(r"[\u2500-\u257f]")


def expected(lay: Layout) -> tuple[list[str], list[tuple[str, str, str]], list[tuple[str, tuple[str, ...]]]]:
    """Box texts, links (source, destination, label) and frames (label, box texts) of the model.

    A device construct and a wait are graph nodes without a box: the construct's nodes are boxes.
    Frames are listed in the order they open (an outer frame before the frames inside it).
    """
    texts = lay.texts
    links = sorted((texts[k.src], texts[k.dst], link_text(k)) for k in lay.links)  # texts may repeat
    frames, boxes = [], []
    for stage in lay.model.stages:
        open_frames: list[tuple[int, str, list[str]]] = []
        for event, part in walk(stage.block):
            if event == "open":
                open_frames.append((len(frames), part.label, []))
                frames.append(None)
            elif event == "box":
                boxes.append(texts[part.node])
                for _, _, members in open_frames:
                    members.append(texts[part.node])
            else:
                at, label, members = open_frames.pop()
                frames[at] = (label, tuple(members))
    return boxes, links, frames


def unquote(text: str) -> str:
    """Mermaid's entity codes (#quot;, #35;) read back."""
    return html.unescape(re.sub(r"#(\w+);", lambda m: f"&{m.group(1)};" if m.group(1).isalpha()
                                else f"&#{m.group(1)};", text))


def faces_graph(graph, build):
    if build and graph.backend is None:  # a builder's graph comes built
        graph.build()
    return graph, layout(describe(graph, "test"))


@pytest.mark.parametrize("build", [False, True], ids=["recorded", "built"])
def test_text_lists_every_node_plane_and_frame(any_graph, build):
    """Every box text once, every frame label on a frame's top, every node's planes under it."""
    graph, lay = faces_graph(any_graph, build)
    nodes, _, frames = expected(lay)
    text = str(graph)
    rows = "\n".join(line for y, line in enumerate(text.splitlines()[1:])  # the rows box texts are on
                     if any(b.y + 1 == y for b in lay.boxes))
    boxed = [m.group(1) for m in re.finditer(r"(?<=[│╎]) +([^\s│╎][^│╎]*?) +(?=[│╎])", rows)
             if not BOX_DRAWING.search(m.group(1))]
    assert sorted(boxed) == sorted(nodes)
    tops = [line for line in text.splitlines() if re.search("╭[─┼]", line)]  # a long link bends ╭┄
    assert [label for label, _ in frames] == [re.search(r"[─┼] (.+?) [─┼]", line).group(1) for line in tops]
    for k in lay.links:
        if k.planes:  # its planes head the label under its source (the label is cut to the box)
            under = next(p.text for p in lay.planes if p.node == k.src)
            assert under.rstrip("…") and ", ".join(lay.outgoing(k.src)).startswith(under.rstrip("…"))
            assert under in text


@pytest.mark.parametrize("build", [False, True], ids=["recorded", "built"])
def test_mermaid_lists_the_same(any_graph, build):
    """Mermaid's nodes, arrows and subgraphs are the model's nodes, links and frames."""
    graph, lay = faces_graph(any_graph, build)
    nodes, links, frames = expected(lay)
    text = graph.to_mermaid()
    assert text.startswith("flowchart TD\n")
    names = {int(i): unquote(t) for i, t in re.findall(r'^\s*n(\d+)\["(.*?)"\]', text, re.M)}
    assert sorted(names.values()) == sorted(nodes)
    arrows = sorted((names[int(a)], names[int(b)], unquote(label or ""))
                    for a, label, b in re.findall(r'^\s*n(\d+) (?:-->\|"(.*?)"\||-\.->) n(\d+)$', text, re.M))
    assert arrows == links
    found, stack = [], []  # in the order the subgraphs open, as expected() lists frames
    for line in text.splitlines():
        if m := re.match(r'\s*subgraph f\d+\["(.*)"\]$', line):
            stack.append((len(found), unquote(m.group(1)), []))
            found.append(None)
        elif line.strip() == "end":
            at, label, members = stack.pop()
            found[at] = (label, tuple(members))
        elif (m := re.match(r"\s*n(\d+)\[", line)) and stack:
            for _, _, members in stack:
                members.append(names[int(m.group(1))])
    assert found == frames


@pytest.mark.parametrize("build", [False, True], ids=["recorded", "built"])
def test_dot_lists_the_same(any_graph, build):
    """DOT's nodes, edges and clusters are the model's nodes, links and frames."""
    graph, lay = faces_graph(any_graph, build)
    nodes, links, frames = expected(lay)
    text = graph.to_dot()
    found = re.findall(r'^\s*n(\d+) \[label="(.*?)", ', text, re.M)
    names = {int(i): t.replace('\\"', '"') for i, t in found}
    assert sorted(names.values()) == sorted(nodes)
    edges = sorted((names[int(a)], names[int(b)], label or "")
                   for a, b, label in re.findall(r'^\s*n(\d+) -> n(\d+) \[(?:label="(.*?)"|style=dashed)\];$',
                                                 text, re.M))
    assert edges == links
    clusters = re.findall(r'subgraph cluster_f\d+ \{\n\s*label="(.*?)";', text)
    assert clusters == [label for label, _ in frames]


def test_dot_agrees_as_graphviz_reads_it(any_graph, dot):
    """Graphviz itself reads as many nodes and drawn edges as the model has nodes and links, and
    places each rank's boxes left to right in the layout's order (the invisible edges hold it)."""
    lay = layout(describe(any_graph, "test"))
    text = any_graph.to_dot()
    plain = subprocess.run([dot, "-Tplain"], input=text, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    x = {line.split()[1]: float(line.split()[2]) for line in plain if line.startswith("node ")}
    assert len(x) == len(lay.boxes)
    drawn = [line for line in plain if line.startswith("edge ") and line.split()[-2] != "invis"]
    assert len(drawn) == len(lay.links)
    for rank in re.findall(r"\{ rank=same; (.*?) \}", text):
        names = [name.rstrip(";") for name in rank.split()]
        assert [x[n] for n in names] == sorted(x[n] for n in names), (rank, x)


@pytest.mark.parametrize("build", [False, True], ids=["recorded", "built"])
def test_matplotlib_draws_the_same(any_graph, build, mpl):
    """The figure's box texts, arrows, plane labels and frame labels are the layout's."""
    from matplotlib.patches import FancyArrowPatch

    graph, lay = faces_graph(any_graph, build)
    nodes, links, frames = expected(lay)
    ax = graph.plot().axes[0]
    by_z: dict[float, list[str]] = {}
    for t in ax.texts:
        by_z.setdefault(t.get_zorder(), []).append(t.get_text())
    assert sorted(by_z.get(4, [])) == sorted(nodes)
    assert sorted(by_z.get(5, [])) == sorted(label for label, _ in frames)
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == len(links) == len(lay.links)
    labels = sorted([p.wired for p in lay.planes if p.wired]
                    + [link_text(k) for k in lay.links if not k.adjacent])
    assert sorted(by_z.get(6, [])) == labels


def test_text_face_is_drawn_from_the_layout(any_graph):
    """str(g) is draw_text of the one layout: there is no second formatter."""
    assert str(any_graph) == draw_text(layout(describe(any_graph, "test")))
    assert to_mermaid(any_graph) == any_graph.to_mermaid() and to_dot(any_graph) == any_graph.to_dot()
