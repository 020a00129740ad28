"""The binding of libeagle's layout engine (libeagle/src/layout.c): a picture tree in, cells out.

eagle-viz reaches it as :func:`eagle.extend.lay_out`; a C++ view of a graph
calls ``eagle_layout_run`` itself.  The arrays cross as NumPy int32 rows, so a
10,000-node graph costs one C call and a few list conversions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from eagle._core import check, ffi, lib

#: The block kinds of the picture tree (``EAGLE_LAYOUT_*``).
BOX: Final = 0
SEQ: Final = 1
FORK: Final = 2
FRAME: Final = 3


@dataclass(frozen=True)
class NativeLayout:
    """What ``eagle_layout_run`` returns, as lists of int rows (see eagle.h, section layout).

    ``boxes``: (node, x, y, w); ``frames``: (block, x, y, w, h, first_box, n_boxes);
    ``exits``: (node, x, y, room); ``stages``: (stage, x, y, w); ``wires`` and ``links``:
    (src, dst, pair, adjacent, points), ``points`` a tuple of (x, y) corners.  ``native``: the
    ``eagle_layout *`` itself (freed with this object), which :func:`eagle.extend.picture_text`
    draws; ``source``: the ``eagle_layout_input *`` it was laid out from (with ``held``, the
    memory that points to), which the DOT and Mermaid drawers walk.
    """

    width: int
    height: int
    boxes: list[list[int]]
    frames: list[list[int]]
    exits: list[list[int]]
    stages: list[list[int]]
    wires: list[tuple[int, int, int, int, tuple[tuple[int, int], ...]]]
    links: list[tuple[int, int, int, int, tuple[tuple[int, int], ...]]]
    native: object = field(repr=False, compare=False)
    source: object = field(repr=False, compare=False)
    held: tuple[object, ...] = field(repr=False, compare=False)


def lay_out(blocks: Sequence[tuple[int, int, int, int]], stages: int, label_widths: Sequence[int] | None,
            columns: int, owners: Sequence[int], pairs: Sequence[tuple[int, int]]) -> NativeLayout:
    """Lay out a picture tree with libeagle: ``blocks`` are (kind, count, node, width) rows in
    preorder, the ``stages`` trees one after another; ``owners[node]`` the node whose edges a
    box has; ``pairs`` the (src, dst) that carry data or a wait, each an owner (its last box, its
    first) or a node inside a construct (its own box): long links where no wire draws them, every
    one routed around the boxes (a link no route reaches raises :class:`CoreError`).

    >>> from eagle.extend import lay_out
    >>> lay = lay_out([(1, 2, 0, 0), (0, 0, 0, 4), (0, 0, 1, 3)], 1, None, 1, [0, 1], [(0, 1)])
    >>> lay.boxes, lay.width, lay.height
    ([[0, 0, 0, 9], [1, 1, 4, 7]], 9, 7)
    """
    block_rows = np.ascontiguousarray(np.asarray(blocks, np.int32).reshape(-1, 4))
    owner_rows = np.ascontiguousarray(np.asarray(owners, np.int32).reshape(-1))
    pair_rows = np.ascontiguousarray(np.asarray(pairs, np.int32).reshape(-1, 2))
    widths = None if label_widths is None else np.ascontiguousarray(np.asarray(label_widths, np.int32))
    keep = []  # the buffers must outlive the call
    inp = ffi.new("eagle_layout_input *")
    inp.blocks = _pointer(block_rows, "eagle_layout_block *", keep)
    inp.n_blocks = len(block_rows)
    inp.n_stages = stages
    inp.label_w = ffi.NULL if widths is None else _pointer(widths, "int32_t *", keep)
    inp.columns = columns
    inp.owners = _pointer(owner_rows, "int32_t *", keep)
    inp.n_nodes = len(owner_rows)
    inp.pairs = _pointer(pair_rows, "eagle_layout_pair *", keep)
    inp.n_pairs = len(pair_rows)
    out = ffi.new("eagle_layout **")
    status = lib.eagle_layout_run(inp, out)
    if status:
        lib.eagle_layout_free(out[0])
        check(status, "eagle.extend.lay_out")
    return _read(ffi.gc(out[0], lib.eagle_layout_free), inp, tuple(keep))


def _pointer(rows: np.ndarray, ctype: str, keep: list) -> object:
    if rows.size == 0:
        return ffi.NULL
    keep.append(rows)
    return ffi.cast(ctype, ffi.from_buffer(rows))


def _rows(pointer: object, n: int, width: int) -> np.ndarray:
    if n == 0:
        return np.zeros((0, width), np.int32)
    return np.frombuffer(ffi.buffer(pointer, 4 * width * n), np.int32).reshape(n, width)


def _read(lay: object, source: object, held: tuple[object, ...]) -> NativeLayout:
    xy = _rows(lay.points, lay.n_points, 2)
    points = list(zip(xy[:, 0].tolist(), xy[:, 1].tolist(), strict=True))  # one tuple per corner, once

    def paths(pointer: object, n: int) -> list[tuple[int, int, int, int, tuple[tuple[int, int], ...]]]:
        return [(s, d, p, a, tuple(points[first:first + k]))
                for s, d, p, a, first, k in _rows(pointer, n, 6).tolist()]

    return NativeLayout(lay.width, lay.height, _rows(lay.boxes, lay.n_boxes, 4).tolist(),
                        _rows(lay.frames, lay.n_frames, 7).tolist(),
                        _rows(lay.exits, lay.n_exits, 4).tolist(),
                        _rows(lay.stages, lay.n_stages, 4).tolist(), paths(lay.wires, lay.n_wires),
                        paths(lay.links, lay.n_links), lay, source, held)
