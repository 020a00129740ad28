"""Deriving the ordering edges from what each node reads and writes.

Edges are not all conflicting pairs (a chain of 10,000 nodes over one plane
has 50 million of those) but a set whose transitive closure orders every
conflicting pair, the way OpenMP runtimes track dependences: per location,
a read depends on the last writer; a write on the readers since that write,
or on the last writer when there are none.

Locations are found in two passes, neither O(n²):
  1. accesses to the very same view (address, shape, strides, item size)
     form one group, walked in node order;
  2. distinct views that share a byte (libeagle's candidate index and exact
     overlap test, on one view per group) are walked together, pair by pair,
     keeping only the edges between the two groups.
The edge set only grows under the conservative overlap answer, never misses.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from eagle._arrays import is_value
from eagle._views import MAX_DIMS, candidate_pairs, ndarray_key, view_of

MEANINGS = {
    "RAW": "data flows: read after write",
    "WAR": "must wait to overwrite: write after read",
    "WAW": "same output: write after write",
}


class Edge(NamedTuple):
    """``src`` must run before ``dst`` (indices into ``Graph.node_labels()``).

    >>> from eagle.graph import opaque
    >>> x = np.zeros(4)
    >>> g = eagle.Graph().add_node(opaque(lambda: x.fill(1.0), writes={"x": x}), name="fill")
    >>> g = g.add_node(opaque(lambda: None, reads={"x": x}), name="use")
    >>> edge = g.edges()[0]
    >>> edge, edge.meaning
    (Edge(src=0, dst=1, plane='x', kind='RAW'), 'data flows: read after write')
    """

    src: int
    dst: int
    plane: str
    kind: str  # "RAW", "WAR" or "WAW"

    @property
    def meaning(self) -> str:
        """The plain-words reading of the kind."""
        return MEANINGS[self.kind]


@dataclass(slots=True)
class Access:
    node: int
    name: str
    array: Any
    reads: bool
    writes: bool


#: What makes a declared plane an array (view_of reads these); a DLPack-only
#: array (a torch tensor, say) must carry edges like a NumPy one.  DLPack first: a CUDA torch
#: tensor that requires grad raises on its __cuda_array_interface__.
_ARRAY_PROTOCOLS = ("__dlpack__", "__array_interface__", "__cuda_array_interface__")


def is_plane(obj: Any) -> bool:
    """Whether a declared plane is memory (edges): an array, or any object with the buffer
    protocol (bytearray, memoryview, a ctypes array)."""
    if type(obj) is np.ndarray:  # the common case, asked of every plane at add and build
        return True
    if is_value(obj):
        return False
    if any(hasattr(obj, attr) for attr in _ARRAY_PROTOCOLS):
        return True
    try:
        memoryview(obj).release()
    except TypeError:
        return False
    return True


def _view_key(array: Any, view: Callable[[Any], Any] = view_of) -> tuple[Any, ...]:
    if type(array) is np.ndarray and array.ndim <= MAX_DIMS:
        return ndarray_key(array)
    v = view(array)
    n = v.ndim
    return (v.device, v.data, v.itemsize, tuple(v.shape[0:n]), tuple(v.strides[0:n]))


def same_view(a: Any, b: Any) -> bool:
    """Whether two planes are the very same view: address, shape, strides and item size."""
    return _view_key(a) == _view_key(b)


def _walk(accesses: list[Access], edges: set[Edge], between: tuple[int, int] | None,
          group_of: dict[int, int]) -> None:
    """Per-location dependences over accesses in node order; with ``between``
    only edges joining the two groups are kept."""
    last_writer: Access | None = None
    readers: list[Access] = []

    def add(src: Access, dst: Access, plane: str, kind: str) -> None:
        if src.node == dst.node:
            return
        if between and group_of[id(src)] == group_of[id(dst)]:
            return
        edges.add(Edge(src.node, dst.node, plane, kind))

    for acc in accesses:
        if acc.reads and last_writer is not None:
            add(last_writer, acc, last_writer.name, "RAW")
        if acc.writes:
            others = [r for r in readers if r.node != acc.node]
            for r in others:
                add(r, acc, acc.name, "WAR")
            if not others and last_writer is not None and not acc.reads:
                add(last_writer, acc, acc.name, "WAW")
            last_writer, readers = acc, []
        elif acc.reads:
            readers.append(acc)


_UNSEEN: Any = object()


def group_key(array: Any, view: Callable[[Any], Any]) -> tuple[Any, ...] | None:
    """The key shared by the accesses to the very view ``array`` is (device, address, item size,
    shape, strides); None for what carries no edges (a value, an empty array)."""
    if not is_plane(array) or (array.size if type(array) is np.ndarray else np.size(array)) == 0:
        return None
    return _view_key(array, view)


def derive_edges(node_planes: list[list[tuple[str, Any, str]]],
                 view: Callable[[Any], Any] = view_of, private: Container[int] = ()) -> list[Edge]:
    """The edges among nodes given, in node order, each node's (name, array, role) planes;
    ``view`` gives an array's ``eagle_view`` (a build passes its analysis's, made once).
    ``private``: ids of the buffer plan's temporaries, each a location of its own whatever
    storage it shares (the plan shares only what is never live at once)."""
    groups: dict[tuple[Any, ...], list[Access]] = {}
    keys: dict[int, tuple[Any, ...] | None] = {}  # id(array) -> its group's key; the planes hold them
    for node, planes in enumerate(node_planes):
        for name, array, role in planes:
            key = keys.get(id(array), _UNSEEN)
            if key is _UNSEEN:
                key = keys[id(array)] = ("private", id(array)) if id(array) in private \
                    else group_key(array, view)
            if key is None:
                continue
            acc = Access(node, name, array, role in ("read", "readwrite"), role in ("write", "readwrite"))
            groups.setdefault(key, []).append(acc)
    ordered = list(groups.values())
    group_of = {id(a): g for g, accs in enumerate(ordered) for a in accs}
    edges: set[Edge] = set()
    for accs in ordered:
        _walk(accs, edges, None, group_of)
    shared = [g for g, accs in enumerate(ordered) if id(accs[0].array) not in private]
    if len(shared) > 1:
        writes = [any(a.writes for a in ordered[g]) for g in shared]
        pairs = candidate_pairs([view(ordered[g][0].array) for g in shared], writes, exact=True)
        for i, j in pairs.tolist():
            g1, g2 = shared[i], shared[j]
            merged = sorted(ordered[g1] + ordered[g2], key=lambda a: a.node)  # stable: in-node order kept
            _walk(merged, edges, (g1, g2), group_of)
    return sorted(edges)
