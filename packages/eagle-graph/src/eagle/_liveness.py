"""Liveness over the build's order: where each array is first written, last read, last touched.

Positions are top-level node indices (``Graph.node_labels()``).  A construct (a device if, switch
or loop) is one position: whatever its bodies touch is touched there, so a body's arrays live for
the whole construct, across every turn of a loop.  The nodes of a fork run at the same time, so
every array a fork touches is touched over the fork's whole span.  The buffer plan reads this;
so can any pass that needs "is this array read after here?" (fusion's dead stores).

>>> from eagle.graph import opaque
>>> x, t, y = np.zeros(2), np.zeros(2), np.zeros(2)
>>> nodes = [opaque(lambda: None, reads={"x": x}, writes={"t": t}),
...          opaque(lambda: None, reads={"t": t}, writes={"y": y})]
>>> live = Liveness([n.planes() for n in nodes])
>>> live.span(t), live.read_after(t, 0), live.read_after(t, 1)
((0, 1), True, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eagle._kinds import PlaneTuple

#: Per fork, its branches as lists of node indices.
Forks = Sequence[Sequence[Sequence[int]]]


@dataclass(slots=True)
class Span:
    """Where one array is touched: ``first`` and ``last`` positions, ``last_read`` (-1: never
    read), and whether it is written at ``first`` and read there (the order inside one position
    is not known)."""

    first: int
    last: int
    last_read: int
    written_first: bool
    read_first: bool


class Liveness:
    """First and last touches of every array the nodes' planes hold, keyed by ``id(array)``.

    :param planes: each top-level node's ``(name, array, role)`` planes, in order.
    :param forks: the forks' branches (node indices): a fork's arrays span the whole fork.
    """

    def __init__(self, planes: Sequence[Sequence[PlaneTuple]], forks: Forks = ()) -> None:
        self._spread = {i: (min(m), max(m)) for fork in forks
                        for m in [[i for branch in fork for i in branch]] if m for i in m}
        self._spans: dict[int, Span] = {}
        for i, node_planes in enumerate(planes):
            low, high = self.extent(i)
            for _, array, role in node_planes:
                reads, writes = role != "write", role != "read"
                span = self._spans.get(id(array))
                if span is None:
                    self._spans[id(array)] = Span(low, high, high if reads else -1, writes, reads)
                    continue
                if low < span.first:  # a fork reaching back before what was seen: it comes first
                    span.first, span.written_first, span.read_first = low, writes, reads
                elif low == span.first:
                    span.written_first |= writes
                    span.read_first |= reads
                span.last = max(span.last, high)
                if reads:
                    span.last_read = max(span.last_read, high)

    def extent(self, position: int) -> tuple[int, int]:
        """The positions over which what the node at ``position`` touches is touched: its own, or
        its fork's whole span."""
        return self._spread.get(position, (position, position))

    def span(self, array: Any) -> tuple[int, int] | None:
        """``(first, last)`` position touching ``array``; None where no node does."""
        s = self._spans.get(id(array))
        return None if s is None else (s.first, s.last)

    def of(self, array: Any) -> Span | None:
        """The whole :class:`Span` of ``array`` (None where no node touches it)."""
        return self._spans.get(id(array))

    def read_after(self, array: Any, position: int) -> bool:
        """Whether a node after ``position`` reads ``array`` (where the graph's nodes are all
        that read it: a result, a buffer or an argument is read after the run too; ask
        ``Analysis.read_after``, which knows the temporaries)."""
        s = self._spans.get(id(array))
        return s is not None and s.last_read > position
