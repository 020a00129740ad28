"""The binding of libeagle's drawers (libeagle/src/picture_text.c, picture_faces.c): a layout and
its texts in, the text picture, the Mermaid flowchart or the DOT graph out, and the palette they
share.

eagle-viz's faces reach them as :func:`eagle.extend.picture_text`, :func:`~eagle.extend.picture_mermaid`
and :func:`~eagle.extend.picture_dot`; a C++ view of a graph (``eagle::GraphView``) calls the C
functions itself, so the two draw one picture.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from eagle._core import check, ffi, lib
from eagle._errors import EagleValueError
from eagle._picture_layout import NativeLayout
from eagle._pictures import ROLES


def picture_style(which: int) -> str:
    """The palette's entry ``which`` (``lib.EAGLE_STYLE_*``): a colour, or the font.

    >>> from eagle.extend import lib, picture_style
    >>> picture_style(lib.EAGLE_STYLE_FILL + lib.EAGLE_ROLE_KERNEL), picture_style(lib.EAGLE_STYLE_FONT)
    ('#e3eefa', 'DejaVu Sans')
    """
    found = lib.eagle_picture_style(which)
    if found == ffi.NULL:
        raise EagleValueError(f"eagle.extend.picture_style: no palette entry {which}: give one of "
                              f"0 .. {lib.EAGLE_STYLE_COUNT - 1} (lib.EAGLE_STYLE_*)")
    return str(ffi.string(found).decode())


def picture_text(lay: NativeLayout, header: str, nodes: Sequence[str], roles: Sequence[str],
                 frames: Sequence[str], exits: Sequence[str], stages: Sequence[str]) -> str:
    """The text picture of ``lay`` (from :func:`eagle.extend.lay_out`): ``header``, then the
    boxes (``nodes[node]`` their texts, ``roles[node]`` one of ``eagle.extend.ROLES``: an opaque
    op's border is dashed), the frames' titles, the plane names under each exit and the label of
    each stage, as libeagle draws them.

    >>> from eagle.extend import lay_out, picture_text
    >>> lay = lay_out([(1, 2, 0, 0), (0, 0, 0, 4), (0, 0, 1, 3)], 1, None, 1, [0, 1], [(0, 1)])
    >>> print(picture_text(lay, "two nodes", ["fill", "inc"], ["kernel", "opaque"], [], ["x"], []))
    two nodes
    ┌───────┐
    │ fill  │
    └───┬───┘
        x
     ┌╌╌┴╌╌┐
     ╎ inc ╎
     └╌╌╌╌╌┘
    """
    texts = _Texts("eagle.extend.picture_text", header, nodes, roles, frames)
    texts.strings("exits", "n_exits", exits)
    texts.strings("stages", "n_stages", stages)
    return texts.draw(lambda out: lib.eagle_picture_text(_native(lay), texts.c, out))


def picture_mermaid(lay: NativeLayout, header: str, nodes: Sequence[str], roles: Sequence[str],
                    frames: Sequence[str], notes: Sequence[str], pairs: Sequence[str]) -> str:
    """The Mermaid ``flowchart TD`` of ``lay``: the boxes and frames in the picture tree's order,
    ``notes[s]`` the comment before stage ``s``, each link labelled ``pairs[pair]`` (``""``: a
    dashed arrow), the roles' classes and the frames' styles.

    >>> from eagle.extend import lay_out, picture_mermaid
    >>> lay = lay_out([(1, 2, 0, 0), (0, 0, 0, 4), (0, 0, 1, 3)], 1, None, 1, [0, 1], [(0, 1)])
    >>> print(picture_mermaid(lay, "two", ["fill", "inc"], ["kernel"] * 2, [], ["stage 0"], ["x"]))
    flowchart TD
      %% two
      %% stage 0
      n0["fill"]:::kernel
      n1["inc"]:::kernel
      n0 -->|"x"| n1
      classDef kernel fill:#e3eefa,stroke:#2f5f8f
      classDef python fill:#e5f4ea,stroke:#2e7d4f
      classDef opaque fill:#f2f2f2,stroke:#505050,stroke-dasharray:5 4
      classDef builtin fill:#fff3d6,stroke:#9a741c
    <BLANKLINE>
    """
    return _face(lib.eagle_picture_mermaid, "eagle.extend.picture_mermaid", lay, header, nodes, roles,
                 frames, notes, pairs)


def picture_dot(lay: NativeLayout, header: str, nodes: Sequence[str], roles: Sequence[str],
                frames: Sequence[str], notes: Sequence[str], pairs: Sequence[str]) -> str:
    """The Graphviz DOT graph of ``lay``, as :func:`picture_mermaid` takes it: the boxes and frames
    (clusters) in order, the links, and each row of the layout's boxes as one rank held in the
    layout's order.

    >>> from eagle.extend import lay_out, picture_dot
    >>> lay = lay_out([(1, 2, 0, 0), (0, 0, 0, 4), (0, 0, 1, 3)], 1, None, 1, [0, 1], [(0, 1)])
    >>> dot = picture_dot(lay, "two", ["fill", "inc"], ["kernel"] * 2, [], ["stage 0"], ["x"])
    >>> dot.splitlines()[0], '  n0 -> n1 [label="x"];' in dot.splitlines()
    ('digraph eagle {', True)
    """
    return _face(lib.eagle_picture_dot, "eagle.extend.picture_dot", lay, header, nodes, roles, frames,
                 notes, pairs)


def _face(draw: Callable[..., int], api: str, lay: NativeLayout, header: str, nodes: Sequence[str],
          roles: Sequence[str], frames: Sequence[str], notes: Sequence[str], pairs: Sequence[str]) -> str:
    texts = _Texts(api, header, nodes, roles, frames)
    texts.strings("notes", "n_stages", notes)
    texts.strings("pairs", "n_pairs", pairs)
    return texts.draw(lambda out: draw(ffi.cast("eagle_layout_input *", lay.source), _native(lay), texts.c,
                                       out))


def _native(lay: NativeLayout) -> object:
    return ffi.cast("eagle_layout *", lay.native)


class _Texts:
    """An ``eagle_picture_texts`` and the C memory it points to (kept alive with it)."""

    def __init__(self, api: str, header: str, nodes: Sequence[str], roles: Sequence[str],
                 frames: Sequence[str]) -> None:
        if len(roles) != len(nodes) or any(r not in ROLES for r in roles):
            raise EagleValueError(f"{api}: {len(roles)} roles for {len(nodes)} node texts, or a role "
                                  f"not in {ROLES}: give one of those per node")
        self.api = api
        self.c = ffi.new("eagle_picture_texts *")
        self.keep: list[object] = [ffi.new("char[]", header.encode())]
        self.c.header = self.keep[0]
        self.strings("nodes", "n_nodes", nodes)
        numbers = ffi.new("int32_t[]", [ROLES.index(r) for r in roles]) if roles else ffi.NULL
        self.keep.append(numbers)
        self.c.roles = numbers
        self.strings("frames", "n_frames", frames)

    def strings(self, field: str, count: str, texts: Sequence[str]) -> None:
        cells = [ffi.new("char[]", t.encode()) for t in texts]
        array = ffi.new("char *[]", cells) if cells else ffi.NULL
        self.keep += [*cells, array]
        setattr(self.c, field, array)
        setattr(self.c, count, len(texts))

    def draw(self, call: Callable[[object], int]) -> str:
        out = ffi.new("char **")
        check(call(out), self.api)
        try:
            return str(ffi.string(out[0]).decode())
        finally:
            lib.eagle_free(out[0])
