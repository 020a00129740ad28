"""The colours every drawn face shares (matplotlib, Mermaid, DOT), so a role looks the same in each."""

from __future__ import annotations

from typing import Final

#: role -> (fill, border); an opaque op's border is also dashed.
ROLE_COLORS: Final = {
    "kernel": ("#e3eefa", "#2f5f8f"),
    "python": ("#e5f4ea", "#2e7d4f"),
    "opaque": ("#f2f2f2", "#505050"),
    "builtin": ("#fff3d6", "#9a741c"),
}
FRAME_FILL: Final = "#fff7ef"
FRAME_COLOR: Final = "#c0662a"
WIRE_COLOR: Final = "#3c3c3c"
LABEL_COLOR: Final = "#5a5a5a"
#: Data edges that pass over nodes (drawn as curves beside the wires).
LONG_COLOR: Final = "#7b5ea7"
FONT: Final = "DejaVu Sans"
