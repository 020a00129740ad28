"""The colours every drawn face shares (matplotlib, SVG, Mermaid, DOT), so a role looks the same in
each: libeagle's palette (:func:`eagle.extend.picture_style`), the one its Mermaid and DOT drawers
and a C++ ``eagle::GraphView`` use."""

from __future__ import annotations

from typing import Final

from eagle.extend import ROLES, lib, picture_style

#: role -> (fill, border); an opaque op's border is also dashed.
ROLE_COLORS: Final = {role: (picture_style(lib.EAGLE_STYLE_FILL + k),
                             picture_style(lib.EAGLE_STYLE_BORDER + k)) for k, role in enumerate(ROLES)}
FRAME_FILL: Final = picture_style(lib.EAGLE_STYLE_FRAME_FILL)
FRAME_COLOR: Final = picture_style(lib.EAGLE_STYLE_FRAME)
WIRE_COLOR: Final = picture_style(lib.EAGLE_STYLE_WIRE)
LABEL_COLOR: Final = picture_style(lib.EAGLE_STYLE_LABEL)
#: Data edges that pass over nodes (drawn as curves beside the wires).
LONG_COLOR: Final = picture_style(lib.EAGLE_STYLE_LONG)
FONT: Final = picture_style(lib.EAGLE_STYLE_FONT)
