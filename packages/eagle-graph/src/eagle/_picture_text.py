"""The binding of libeagle's text drawer (libeagle/src/picture_text.c): a layout and its texts in,
the text picture out.

eagle-viz's text face reaches it as :func:`eagle.extend.picture_text`; a C++ view of a graph
(``eagle::GraphView``) calls ``eagle_picture_text`` itself, so the two print one picture.
"""

from __future__ import annotations

from collections.abc import Sequence

from eagle._core import check, ffi, lib
from eagle._errors import EagleValueError
from eagle._picture_layout import NativeLayout


def picture_text(lay: NativeLayout, header: str, nodes: Sequence[str], dashed: Sequence[bool],
                 frames: Sequence[str], exits: Sequence[str], stages: Sequence[str]) -> str:
    """The text picture of ``lay`` (from :func:`eagle.extend.lay_out`): ``header``, then the
    boxes (``nodes[node]`` their texts, ``dashed[node]`` a dashed border), the frames' titles,
    the plane names under each exit and the label of each stage, as libeagle draws them.

    >>> from eagle.extend import lay_out, picture_text
    >>> lay = lay_out([(1, 2, 0, 0), (0, 0, 0, 4), (0, 0, 1, 3)], 1, None, 1, [0, 1], [(0, 1)])
    >>> print(picture_text(lay, "two nodes", ["fill", "inc"], [False, True], [], ["x"], []))
    two nodes
    ┌───────┐
    │ fill  │
    └───┬───┘
        x
     ┌╌╌┴╌╌┐
     ╎ inc ╎
     └╌╌╌╌╌┘
    """
    if len(dashed) != len(nodes):
        raise EagleValueError(f"eagle.extend.picture_text: {len(dashed)} dashed flags for {len(nodes)} "
                              "node texts: give one flag per node")
    keep: list[object] = []  # the C strings must outlive the call

    def strings(texts: Sequence[str]) -> object:
        cells = [ffi.new("char[]", t.encode()) for t in texts]
        keep.extend(cells)
        return ffi.new("char *[]", cells) if cells else ffi.NULL

    texts = ffi.new("eagle_picture_texts *")
    keep.append(header_bytes := ffi.new("char[]", header.encode()))
    texts.header = header_bytes
    keep.append(node_texts := strings(nodes))
    texts.nodes, texts.n_nodes = node_texts, len(nodes)
    keep.append(borders := ffi.new("uint8_t[]", [1 if d else 0 for d in dashed]) if dashed else ffi.NULL)
    texts.dashed = borders
    keep.append(titles := strings(frames))
    texts.frames, texts.n_frames = titles, len(frames)
    keep.append(planes := strings(exits))
    texts.exits, texts.n_exits = planes, len(exits)
    keep.append(labels := strings(stages))
    texts.stages, texts.n_stages = labels, len(stages)
    out = ffi.new("char **")
    check(lib.eagle_picture_text(ffi.cast("eagle_layout *", lay.native), texts, out),
          "eagle.extend.picture_text")
    try:
        return ffi.string(out[0]).decode()
    finally:
        lib.eagle_free(out[0])
