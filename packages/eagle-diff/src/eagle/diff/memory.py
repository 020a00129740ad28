"""Places that share memory without being one view: one adjoint over their bytes.

A buffer written whole and then read through ``b[1:]``, or ``x[:3]`` read
before the whole of ``x`` is rewritten in place: two places, one memory.
Their adjoints must be one too, or what the reader adds never reaches the
writer.  The places of such a group get one adjoint buffer spanning the
bytes they cover, and each place's adjoint is the view of that buffer that
the place is of its memory: an element's adjoint is the same cell whichever
view adds to it or clears it.  The recorded run keeps values by the same
rule: a write to one place counts as a write to every place sharing its
memory (:func:`pairs` feeds the emitter).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eagle.diff.steps import Place, Step, is_float, leaves
from eagle.diff.views import extent
from eagle.extend import EagleValueError, candidate_pairs


def pairs(arrays: Mapping[Place, np.ndarray]) -> list[tuple[Place, Place]]:
    """The pairs of places (of ``arrays``) that share memory, in the order of their extents.

    libeagle's candidate index finds them, as it finds the graph's edges, with the exact
    overlap test uncapped (what ``np.shares_memory`` answers)."""
    spans = sorted(((extent(a), p, a) for p, a in arrays.items() if a.size), key=lambda span: span[0])
    found = candidate_pairs([a for _, _, a in spans], [True] * len(spans), exact=True, max_work=-1)
    return [(spans[i][1], spans[j][1]) for i, j in found.tolist()]


def aliases(arrays: Mapping[Place, np.ndarray]) -> dict[Place, frozenset[Place]]:
    """Place -> the other places sharing its memory (only those that have some)."""
    return aliases_of(pairs(arrays))


def aliases_of(found: Iterable[tuple[Place, Place]]) -> dict[Place, frozenset[Place]]:
    """:func:`aliases` of the pairs :func:`pairs` found."""
    out: dict[Place, set[Place]] = {}
    for p, q in found:
        out.setdefault(p, set()).add(q)
        out.setdefault(q, set()).add(p)
    return {p: frozenset(qs) for p, qs in out.items()}


@dataclass(eq=False)
class Group:
    """Places sharing memory, with the bytes [lo, hi) they span."""

    key: Place
    lo: int
    dtype: np.dtype
    size: int  # elements of the buffer
    members: dict[Place, np.ndarray] = field(default_factory=dict)
    unmapped: str = ""  # why one buffer cannot hold its members' adjoints (refused if it is needed)

    def view(self, buffer: np.ndarray, array: np.ndarray) -> np.ndarray:
        """The adjoint of member ``array``: the part of ``buffer`` its elements are of the memory."""
        start = (array.ctypes.data - self.lo) // self.dtype.itemsize
        return np.lib.stride_tricks.as_strided(buffer[start:], array.shape, array.strides)


class Groups:
    """The groups of a graph's float places that share memory (places of other dtypes have no
    adjoint), each refused by name where the pass needs one and one adjoint cannot serve it."""

    def __init__(self, named: Mapping[Place, tuple[str, np.ndarray]], shared: Iterable[tuple[Place, Place]]
                 ) -> None:
        self.named = named
        parent: dict[Place, Place] = {}

        def root(p: Place) -> Place:
            while parent.get(p, p) != p:
                p = parent[p]
            return p

        seen: dict[Place, None] = {}
        for p, q in shared:
            if is_float(named[p][1]) and is_float(named[q][1]):
                parent[root(p)] = root(q)
                seen.update({p: None, q: None})
        members: dict[Place, list[Place]] = {}
        for p in seen:
            members.setdefault(root(p), []).append(p)
        self.of: dict[Place, Group] = {}
        for places in members.values():
            group = self._group(sorted(places, key=lambda p: extent(named[p][1])))
            for p in places:
                self.of[p] = group

    def _group(self, places: list[Place]) -> Group:
        arrays = [self.named[p][1] for p in places]
        lo = min(extent(a)[0] for a in arrays)
        hi = max(extent(a)[1] for a in arrays)
        first = arrays[0]
        unmapped = ""
        for p, a in zip(places, arrays, strict=True):
            aligned = (extent(a)[0] - lo) % a.itemsize == 0 and all(s % a.itemsize == 0 for s in a.strides)
            if a.dtype != first.dtype or not aligned:
                unmapped = UNMAPPED.format(a=self.named[places[0]][0], b=self.named[p][0], da=first.dtype,
                                           db=a.dtype)
        key = ("memory", lo, hi, first.dtype.str)
        members = dict(zip(places, arrays, strict=True))
        return Group(key, lo, first.dtype, (hi - lo) // first.itemsize, members, unmapped)

    def key(self, p: Place) -> Place:
        """The place whose adjoint array holds p's: its group's buffer, or p itself."""
        group = self.of.get(p)
        return p if group is None else group.key

    def spec(self, key: Place) -> tuple[tuple[int, ...], np.dtype]:
        """(shape, dtype) of a group's buffer, by its key."""
        group = next(g for g in self.of.values() if g.key == key)
        return (group.size,), group.dtype

    def refuse(self, steps: list[Step], labels: Any, active: frozenset[Place]) -> None:
        """One adjoint serves a group when every step is reversed in order over it: refused are a
        node that reads one place of a group and writes another (its reverse would read what it
        clears) and views of one memory of two dtypes (a device loop's views:
        :func:`eagle.diff.loop_views.refuse_uncovered`)."""
        for group in set(self.of.values()):
            if group.unmapped and group.members.keys() & active:
                raise EagleValueError(group.unmapped)
        for leaf in leaves(steps):
            for r in leaf.reads:
                for w in leaf.writes:
                    if r != w and r in self.of and self.of[r] is self.of.get(w) and r in active:
                        raise EagleValueError(READ_ONE_WRITE_ANOTHER.format(node=labels(leaf),
                                                                            r=self.named[r][0],
                                                                            w=self.named[w][0]))


UNMAPPED = ("eagle.diff.reverse: the planes {a} and {b} share memory but not whole elements ({da} and {db}, "
            "or a view starting inside an element): a gradient is kept per element; use views of one "
            "dtype that start on an element")
READ_ONE_WRITE_ANOTHER = ("eagle.diff.reverse: node {node!r} reads {r} and writes {w}, which share memory "
                          "without being one view of it: write the result to an array of its own")

