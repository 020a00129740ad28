"""libeagle's drawers (libeagle/src/picture_text.c, picture_faces.c) through their bindings,
eagle.extend.picture_text, picture_mermaid and picture_dot: a layout drawn as text, as Mermaid and as
DOT, and every input that does not fit the layout refused by status, never drawn."""

from __future__ import annotations

import pytest

from eagle._core import ffi, lib
from eagle.extend import (
    CoreError,
    EagleValueError,
    lay_out,
    picture_dot,
    picture_mermaid,
    picture_style,
    picture_text,
)

#: A sequence of two boxes, fill then inc, one plane passed on: (kind, count, node, width) rows.
TWO = [(1, 2, 0, 0), (0, 0, 0, 4), (0, 0, 1, 3)]


def two() -> object:
    return lay_out(TWO, 1, [7], 1, [0, 1], [(0, 1)])


def test_a_layout_drawn_with_its_texts():
    """Boxes centred on their text, the plane names under the exit, the wire ticking both borders, the
    stage label beside the first box, a dashed border where asked, trailing blanks dropped."""
    text = picture_text(two(), "head", ["fill", "inc"], ["kernel", "opaque"], [], ["x"], ["stage 0"])
    assert text.splitlines() == [
        "head",
        "stage 0 ┌───────┐",
        "        │ fill  │",
        "        └───┬───┘",
        "            x",
        "         ┌╌╌┴╌╌┐",
        "         ╎ inc ╎",
        "         └╌╌╌╌╌┘",
    ]


def test_a_frame_and_a_long_link():
    """A frame titled around a box, and a data edge past the node between drawn dotted into its box."""
    blocks = [(1, 3, 0, 0), (0, 0, 0, 1), (3, 1, -1, 4), (0, 0, 1, 1), (0, 0, 2, 1)]
    lay = lay_out(blocks, 1, None, 1, [0, 1, 2], [(0, 1), (0, 2)])
    assert any(not adjacent and points for _, _, _, adjacent, points in lay.links)
    text = picture_text(lay, "h", ["a", "b", "c"], ["builtin"] * 3, ["loop"], ["x"] * len(lay.exits), [])
    assert "╭ loop ╮" in text.replace("─", "")
    assert "▸" in text or "◂" in text
    assert any(c in text for c in "┄┆╭╮╰╯")


def call(lay: object, texts: object, out: object = None) -> int:
    return lib.eagle_picture_text(lay, texts, out if out is not None else ffi.new("char **"))


def texts_for(lay: object, nodes: int = 2, exits: int = 1, header: object = None) -> tuple[object, list]:
    """Texts for ``lay`` with the counts given, and what owns their memory (keep it alive)."""
    strings = [ffi.new("char[]", b"n") for _ in range(max(nodes, exits))]
    keep = [*strings, header if header is not None else ffi.new("char[]", b"h"),
            ffi.new("char *[]", strings[:nodes]) if nodes else ffi.NULL,
            ffi.new("char *[]", strings[:exits]) if exits else ffi.NULL]
    t = ffi.new("eagle_picture_texts *")
    t.header, t.nodes, t.n_nodes, t.exits, t.n_exits = keep[-3], keep[-2], nodes, keep[-1], exits
    return t, keep


def native() -> object:
    return ffi.cast("eagle_layout *", two().native)


def test_null_pointers_are_refused_by_status():
    lay = two()
    t, _keep = texts_for(native())
    assert call(ffi.NULL, t) == lib.EAGLE_ERR_ARG
    assert call(ffi.cast("eagle_layout *", lay.native), ffi.NULL) == lib.EAGLE_ERR_ARG
    assert lib.eagle_picture_text(ffi.cast("eagle_layout *", lay.native), t, ffi.NULL) == lib.EAGLE_ERR_ARG
    headless, _more = texts_for(native(), header=ffi.NULL)
    assert call(ffi.cast("eagle_layout *", lay.native), headless) == lib.EAGLE_ERR_ARG
    assert ffi.string(lib.eagle_last_error()).decode() == \
        "eagle_picture_text: a NULL layout, texts or header: pass the layout eagle_layout_run made and " \
        "texts with a header"


def test_texts_that_do_not_fit_the_layout_are_refused():
    lay = two()
    cdata = ffi.cast("eagle_layout *", lay.native)
    t, _keep = texts_for(cdata, exits=0)  # the layout has one exit
    out = ffi.new("char **")
    assert call(cdata, t, out) == lib.EAGLE_ERR_ARG and out[0] == ffi.NULL
    assert "0 frame titles and 0 exit texts for a layout of 0 frames and 1 exits" in \
        ffi.string(lib.eagle_last_error()).decode()
    short, _more = texts_for(cdata, nodes=1)  # box 1 is node 1: past one node text
    assert call(cdata, short) == lib.EAGLE_ERR_ARG
    assert "box 1 is of node 1, past the 1 node texts" in ffi.string(lib.eagle_last_error()).decode()
    with pytest.raises(CoreError, match=r"eagle\.extend\.picture_text: eagle_picture_text: the text of box 0 "
                                        r"\(node 0\) is 12 columns, wider than the box"):
        picture_text(lay, "h", ["a long label", "inc"], ["kernel"] * 2, [], ["x"], [])
    with pytest.raises(CoreError, match="stage row 0 is of stage 0, past the 0 stage labels"):
        picture_text(lay, "h", ["fill", "inc"], ["kernel"] * 2, [], ["x"], [])
    with pytest.raises(EagleValueError, match=r"picture_text: 1 roles for 2 node texts, or a role not in"):
        picture_text(lay, "h", ["fill", "inc"], ["kernel"], [], ["x"], ["s"])


def test_a_layout_with_inconsistent_counts_is_refused():
    """A count above 0 with no array, a negative count, a box or a wire past the layout's cells, a
    link past its points: each EAGLE_ERR_ARG, nothing drawn."""
    t, _keep = texts_for(native())
    label = ffi.new("char[]", b"s")
    stages = ffi.new("char *[]", [label])
    t.stages, t.n_stages = stages, 1
    for change in ("boxes", "negative", "box_off", "narrow", "link_points"):
        lay = two()
        cdata = ffi.cast("eagle_layout *", lay.native)
        if change == "boxes":
            cdata.boxes = ffi.NULL
        elif change == "negative":
            cdata.n_points = -1
        elif change == "box_off":
            cdata.boxes[1].y = cdata.height - 1
        elif change == "narrow":
            cdata.width = 3
        else:
            cdata.wires[0].n = cdata.n_points + 1
        out = ffi.new("char **")
        assert call(cdata, t, out) == lib.EAGLE_ERR_ARG, change
        assert out[0] == ffi.NULL
        if change in ("boxes", "negative"):  # what to change: the engine's layout as it made it
            assert ffi.string(lib.eagle_last_error()).decode().endswith(
                "a NULL array for a count above 0: pass the layout eagle_layout_run made, unchanged")
    t.n_stages = -1
    lay = two()
    assert call(ffi.cast("eagle_layout *", lay.native), t) == lib.EAGLE_ERR_ARG
    assert ffi.string(lib.eagle_last_error()).decode().endswith(
        "NULL texts for a count above 0: give each count the length of its array")


def test_a_long_link_ending_off_the_canvas_is_refused_before_any_cell_is_written():
    """The end of a long link moved off the canvas (above its first row, below its last): each
    EAGLE_ERR_ARG naming the link, nothing drawn, and no cell outside the canvas written (the arrow's
    cell is found from the end: the sanitizer session sees a write before or past the cells)."""
    blocks = [(1, 3, 0, 0), (0, 0, 0, 1), (3, 1, -1, 4), (0, 0, 1, 1), (0, 0, 2, 1)]
    for row in ("above", "below"):
        lay = lay_out(blocks, 1, None, 1, [0, 1, 2], [(0, 1), (0, 2)])
        cdata = ffi.cast("eagle_layout *", lay.native)
        k = next(k for k in range(cdata.n_links) if not cdata.links[k].adjacent and cdata.links[k].n > 1)
        end = cdata.points[cdata.links[k].first + cdata.links[k].n - 1]
        end.y = -1 if row == "above" else cdata.height
        t, _keep = texts_for(cdata, nodes=3, exits=cdata.n_exits)
        frame = ffi.new("char[]", b"loop")
        frames = ffi.new("char *[]", [frame])
        t.frames, t.n_frames = frames, 1
        out = ffi.new("char **")
        assert call(cdata, t, out) == lib.EAGLE_ERR_ARG, row
        assert out[0] == ffi.NULL
        assert ffi.string(lib.eagle_last_error()).decode() == \
            f"eagle_picture_text: link {k} lies outside the layout's cells", row


def test_text_that_is_not_utf8_is_refused():
    lay = two()
    bad = ffi.new("char[]", b"\xff\xfe")
    t, keep = texts_for(ffi.cast("eagle_layout *", lay.native))
    t.nodes[0] = bad
    assert call(ffi.cast("eagle_layout *", lay.native), t) == lib.EAGLE_ERR_ARG
    assert "node text 0 is not UTF-8" in ffi.string(lib.eagle_last_error()).decode()
    del keep


def faces_texts(nodes: int = 2, pairs: int = 1, notes: int = 1, roles: object = None) -> tuple[object, list]:
    """Texts for two()'s Mermaid and DOT faces with the counts given, and what owns their memory."""
    strings = [ffi.new("char[]", b"n") for _ in range(max(nodes, pairs, notes))]
    keep = [*strings, ffi.new("char[]", b"h"), ffi.new("char *[]", strings[:nodes]),
            ffi.new("char *[]", strings[:pairs]) if pairs else ffi.NULL,
            ffi.new("char *[]", strings[:notes]) if notes else ffi.NULL]
    t = ffi.new("eagle_picture_texts *")
    t.header, t.nodes, t.n_nodes, t.pairs, t.n_pairs, t.notes, t.n_stages = \
        keep[-4], keep[-3], nodes, keep[-2], pairs, keep[-1], notes
    if roles is not None:
        keep.append(roles)
        t.roles = roles
    return t, keep


def test_the_faces_of_a_layout():
    """Mermaid: the boxes in tree order with their roles' classes, the link labelled by its pair, the
    classes of every role; DOT: a node per box coloured by role (an opaque one dashed), the link, and
    each row of boxes one rank."""
    lay = two()
    mermaid = picture_mermaid(lay, "h", ["fill", "<inc>"], ["kernel", "python"], [], ["stage 0"], ["x"])
    assert mermaid.splitlines()[:6] == ["flowchart TD", "  %% h", "  %% stage 0", '  n0["fill"]:::kernel',
                                        '  n1["#lt;inc#gt;"]:::python', '  n0 -->|"x"| n1']
    dot = picture_dot(lay, 'say "h"', ["fill", "inc"], ["kernel", "opaque"], [], ["stage 0"], [""])
    lines = dot.splitlines()
    assert lines[1].startswith('  graph [label="say \\"h\\"", labelloc=t, fontname="DejaVu Sans"')
    fill = picture_style(lib.EAGLE_STYLE_FILL + lib.EAGLE_ROLE_OPAQUE)
    assert f'  n1 [label="inc", fillcolor="{fill}", color="#505050", style="rounded,filled,dashed"];' in lines
    assert "  n0 -> n1 [style=dashed];" in lines  # a pair with no planes: it only orders
    assert lines[-3:] == ["  { rank=same; n0; }", "  { rank=same; n1; }", "}"]
    with pytest.raises(EagleValueError, match=r"picture_style: no palette entry 14"):
        picture_style(lib.EAGLE_STYLE_COUNT)


def test_the_faces_refuse_what_does_not_fit_the_layout():
    """NULL pointers, counts that differ from the layout's input, a role past the palette, a tree that
    is not the layout's: each EAGLE_ERR_ARG, nothing written."""
    lay = two()
    source, native = ffi.cast("eagle_layout_input *", lay.source), ffi.cast("eagle_layout *", lay.native)
    for draw in (lib.eagle_picture_mermaid, lib.eagle_picture_dot):
        t, _keep = faces_texts()
        out = ffi.new("char **")
        assert draw(ffi.NULL, native, t, out) == lib.EAGLE_ERR_ARG and out[0] == ffi.NULL
        assert draw(source, ffi.NULL, t, out) == lib.EAGLE_ERR_ARG
        assert draw(source, native, ffi.NULL, out) == lib.EAGLE_ERR_ARG
        assert draw(source, native, t, ffi.NULL) == lib.EAGLE_ERR_ARG
        for wrong in (faces_texts(pairs=0), faces_texts(notes=0), faces_texts(nodes=1),
                      faces_texts(roles=ffi.new("int32_t[]", [0, lib.EAGLE_ROLE_COUNT]))):
            assert draw(source, native, wrong[0], out) == lib.EAGLE_ERR_ARG and out[0] == ffi.NULL
        framed = lay_out([(1, 2, 0, 0), (3, 1, -1, 1), (0, 0, 0, 4), (0, 0, 1, 3)], 1, None, 1, [0, 1],
                         [(0, 1)])  # a frame two()'s layout has no row for
        assert draw(ffi.cast("eagle_layout_input *", framed.source), native, t, out) == lib.EAGLE_ERR_ARG
        assert ffi.string(lib.eagle_last_error()).decode().endswith("stage 0 is not one tree of the layout's")
