"""The build analysis: what every pass after recording reads, computed once per build.

A build asks the same questions of its nodes several times: which planes each
touches, what libeagle view each array is, which planes live on a device,
which nodes conflict.  :class:`Analysis` answers each once and keeps the
answer: the race check, the backend choice, ``Graph.edges()`` (and the
pictures through it) and the lowerings read it, and the views it made are the
ones the lowering passes to libeagle.  Later passes (fusion, the buffer plan)
hang their results on it the same way.

Edges are derived only when asked for.  The race check asks only for the edges
among the nodes of forks, so a graph without a fork derives none at build.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eagle._cuda import device_of, on_device
from eagle._edges import Edge, derive_edges, is_plane
from eagle._kinds import Node, PlaneTuple
from eagle._views import overlap, view_of

#: Per fork, its branches as lists of node indices.
Forks = Sequence[Sequence[Sequence[int]]]


class Analysis:
    """Each node's planes and their views, the device planes, the forks and the edges of one
    graph as it is now (a bind that swaps arrays makes a new one).

    ``planes[i]`` is ``nodes[i].planes()``, asked once.
    """

    def __init__(self, nodes: Sequence[Node], forks: Forks = ()) -> None:
        self.planes: list[list[PlaneTuple]] = [node.planes() for node in nodes]
        self.forks = forks
        #: (node index, plane name, array) of every device plane.
        self.device_planes: list[tuple[int, str, Any]] = [
            (i, name, array) for i, planes in enumerate(self.planes)
            for name, array, _ in planes if on_device(array)]
        # id(array) -> (array, its view): holding the array keeps its id from being reused by
        # another (a lowering may view a temporary of its own).
        self._views: dict[int, tuple[Any, Any]] = {}
        self._edges: list[Edge] | None = None
        self._fork_edges: list[Edge] | None = None

    def view(self, array: Any) -> Any:
        """The ``eagle_view *`` of ``array`` (a plane of these nodes, or what their lowering passes
        libeagle), made the first time it is asked for."""
        held = self._views.get(id(array))
        if held is None:
            held = self._views[id(array)] = (array, view_of(array))
        return held[1]

    def edges(self) -> list[Edge]:
        """Every derived edge, ``Edge(src, dst, plane, kind)``, sorted."""
        if self._edges is None:
            self._edges = derive_edges(self.planes, self.view)
        return self._edges

    def fork_edges(self) -> list[Edge]:
        """The edges whose two ends lie in one fork (others may be left out): what the race check
        reads.  None without a fork; with forks that each hold a run of consecutive nodes, those
        of the forks only: an edge into a fork's node comes from the last writer or the readers
        since it, and when those are in the fork, every access between them is too."""
        if self._fork_edges is None:
            members = [sorted(i for branch in fork for i in branch) for fork in self.forks]
            if self._edges is not None or not all(m[-1] - m[0] + 1 == len(m) for m in members if m):
                self._fork_edges = self.edges()
            else:
                inside = sorted({i for m in members for i in m})
                local = derive_edges([self.planes[i] for i in inside], self.view)
                self._fork_edges = [Edge(inside[e.src], inside[e.dst], e.plane, e.kind) for e in local]
        return self._fork_edges

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
            raise ValueError(f"eagle.Graph.build: the graph's device planes live on GPUs {sorted(devices)}; "
                             "one graph runs on one GPU: copy them to one device")
        return devices.pop()
