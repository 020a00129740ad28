"""The build analysis: what every pass after recording reads, computed once per build.

A build asks the same questions of its nodes several times: which planes each
touches, what libeagle view each array is, which planes live on a device,
which nodes conflict.  :class:`Analysis` answers each once and keeps the
answer on the built graph: the race check, the backend choice, the GPU
lowering's device, ``Graph.edges()`` (and the pictures through it) read it,
and the views it made are the ones the host lowering passes to libeagle.  It
is the place for what later passes work out per build (fusion, the buffer
plan).

The buffer plan's temporaries (``temporaries``: arrays only the graph's nodes hold) and the
liveness of every plane (``liveness``, ``eagle._liveness``) are here for every pass after it:
``read_after(array, position)`` says whether anything after a top-level position reads an array
(a temporary only when a later node does; anything else is read after the run too).

Edges are derived only when asked for.  The race check asks only for the edges
between the branches of a fork, so a graph without a fork, or whose forks' branches
share no memory, derives none at build; ``Graph.edges()`` derives all of them, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eagle._cuda import device_of, on_device
from eagle._edges import Edge, derive_edges, group_key, is_plane
from eagle._errors import EagleValueError
from eagle._kinds import Node, PlaneTuple
from eagle._liveness import Forks, Liveness
from eagle._views import candidate_pairs, overlap, view_of


class Analysis:
    """Each node's planes and their views, the device planes, the forks and the edges of one
    graph as it is now (a bind that swaps arrays makes a new one).

    ``planes[i]`` is ``nodes[i].planes()``, asked once; ``temporaries``: the buffer plan's arrays
    (``eagle._buffers``), which only the nodes hold.
    """

    def __init__(self, nodes: Sequence[Node], forks: Forks = (), temporaries: Sequence[Any] = ()) -> None:
        self.planes: list[list[PlaneTuple]] = [node.planes() for node in nodes]
        self.forks = forks
        #: id(array) of each temporary: no result, buffer, argument or anything a user holds.
        self.temporaries: frozenset[int] = frozenset(id(a) for a in temporaries)
        self._liveness: Liveness | None = None
        #: (node index, plane name, array) of every device plane.
        self.device_planes: list[tuple[int, str, Any]] = [
            (i, name, array) for i, planes in enumerate(self.planes)
            for name, array, _ in planes if on_device(array)]
        #: id(array) -> (array, its ``eagle_view *``): the views made so far, which the host
        #: program shares (``Program(views=...)``).  Holding the array keeps its id from being
        #: reused by another (a lowering may view a temporary of its own).
        self.views: dict[int, tuple[Any, Any]] = {}
        self._keys: dict[int, tuple[Any, tuple[Any, ...] | None]] = {}  # id(array) -> (it, its group key)
        self._edges: list[Edge] | None = None
        self._fork_edges: list[Edge] | None = None

    def view(self, array: Any) -> Any:
        """The ``eagle_view *`` of ``array`` (a plane of these nodes, or what their lowering passes
        libeagle), made the first time it is asked for."""
        held = self.views.get(id(array))
        if held is None:
            held = self.views[id(array)] = (array, view_of(array))
        return held[1]

    def key(self, array: Any) -> tuple[Any, ...] | None:
        """The group key of ``array``'s view (``eagle._edges.group_key``), worked out once."""
        held = self._keys.get(id(array))
        if held is None:
            held = self._keys[id(array)] = (array, group_key(array, self.view))
        return held[1]

    @property
    def liveness(self) -> Liveness:
        """First write, last read and last touch of every plane, over the top-level positions."""
        if self._liveness is None:
            self._liveness = Liveness(self.planes, self.forks)
        return self._liveness

    def read_after(self, array: Any, position: int) -> bool:
        """Whether ``array`` is read after top-level node ``position``: for a temporary, whether
        a later node reads it; anything else is read after the run (a result, a buffer, an
        argument, a Mutable, a cell), so True."""
        return id(array) not in self.temporaries or self.liveness.read_after(array, position)

    def edges(self) -> list[Edge]:
        """Every derived edge, ``Edge(src, dst, plane, kind)``, sorted: between the recorded
        arrays, whatever storage the buffer plan lets temporaries share."""
        if self._edges is None:
            self._edges = derive_edges(self.planes, self.view, self.temporaries)
        return self._edges

    def fork_edges(self) -> list[Edge]:
        """Every edge that joins two branches of one fork (others may be there too): what the
        race check reads.  With forks that each hold a run of consecutive nodes, derived over
        the nodes of the forks whose branches share memory only: an edge into a fork's node
        comes from the last writer or the readers since it, and when those are in the fork,
        every access between them is too."""
        if self._fork_edges is None:
            members = [sorted([i for branch in fork for i in branch]) for fork in self.forks]
            if self._edges is not None or not all(m[-1] - m[0] + 1 == len(m) for m in members if m):
                self._fork_edges = self.edges()
            else:
                inside = sorted({i for f in self._contended() for i in members[f]})
                local = derive_edges([self.planes[i] for i in inside], self.view, self.temporaries)
                self._fork_edges = [Edge(inside[e.src], inside[e.dst], e.plane, e.kind) for e in local]
        return self._fork_edges

    def _contended(self) -> list[int]:
        """The forks where two branches touch memory in common, one of them writing it: only
        there can an edge join siblings (every edge joins two accesses of one memory, one a
        write).  Exact where it matters: the overlap test keeps a pair it cannot rule out."""
        touched: list[dict[tuple[Any, ...], tuple[set[int], bool]]] = []  # per fork: key -> branches, writes
        first: dict[tuple[Any, ...], Any] = {}  # key -> an array of that view
        written: dict[tuple[Any, ...], bool] = {}
        for fork in self.forks:
            keys: dict[tuple[Any, ...], tuple[set[int], bool]] = {}
            for b, branch in enumerate(fork):
                for i in branch:
                    for _, array, role in self.planes[i]:
                        key = self.key(array)
                        if key is None:
                            continue
                        branches, writes = keys.get(key, (set(), False))
                        branches.add(b)
                        keys[key] = (branches, writes or role != "read")
                        first.setdefault(key, array)
                        written[key] = written.get(key, False) or role != "read"
            touched.append(keys)
        order = list(first)
        partners: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
        if len(order) > 1:
            pairs = candidate_pairs([self.view(first[key]) for key in order], [written[key] for key in order])
            for i, j in pairs.tolist():
                partners.setdefault(order[i], []).append(order[j])
                partners.setdefault(order[j], []).append(order[i])
        return [f for f, keys in enumerate(touched) if _siblings_share(keys, partners)]

    def racing_planes(self, a: int, b: int, fallback: str) -> tuple[str, str]:
        """The names of a written plane of node ``a`` or ``b`` and a plane of the other sharing
        memory with it (``fallback`` for both where none is found)."""
        for na, xa, ra in self.planes[a]:
            for nb, xb, rb in self.planes[b]:
                if "write" in ra + rb and is_plane(xa) and is_plane(xb) \
                        and overlap(self.view(xa), self.view(xb)):
                    return na, nb
        return fallback, fallback

    def device(self) -> int:
        """The one GPU every device plane lives on.

        :raises ValueError: they live on several.
        """
        devices = {device_of(array) for _, _, array in self.device_planes}
        if len(devices) > 1:
            raise EagleValueError("eagle.Graph.build: the graph's device planes live on GPUs "
                                  f"{sorted(devices)}; "
                             "one graph runs on one GPU: copy them to one device")
        return devices.pop()


def _siblings_share(keys: dict[tuple[Any, ...], tuple[set[int], bool]],
                    partners: dict[tuple[Any, ...], list[tuple[Any, ...]]]) -> bool:
    """Whether two branches of one fork touch one view (one writing it) or two views that may
    overlap (the candidate pairs, which hold a write)."""
    for key, (branches, writes) in keys.items():
        if writes and len(branches) > 1:
            return True
        for other in partners.get(key, ()):
            if other in keys and (len(branches | keys[other][0]) > 1):
                return True
    return False
