"""A device loop whose body writes one view of a memory and reads another (a flat plane and,
as the same bytes, a 2-D Table of it): what its reverse keeps and where it runs turns again.

A turn is reversed by running it again from the state it began with (:mod:`eagle.diff.loops`),
on arrays of the reverse pass.  When two places of the body are one memory, those arrays must
be one memory too, laid out as the originals are: a write through one view is then seen by a
read through the other, as in the recorded run.  So the places of the body that share memory
with a place it writes get views of one buffer per memory, at the same byte offsets and strides
(:func:`own_arrays`).  What the tape saves at a turn's start is the bytes of the places the body
writes (:func:`eagle.diff.loops.carried` counts a read through another view as a read of the
written place), so every view the body reads must lie inside one written place's bytes;
:func:`uncovered` finds the one that does not, which the pass refuses by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

from eagle.diff.steps import Loop, Place, read_planes, write_planes
from eagle.diff.views import extent
from eagle.extend import EagleValueError

Aliases = Mapping[Place, Iterable[Place]]


def written_alias(place: Place, written: frozenset[Place], aliases: Aliases) -> list[Place]:
    """The places the loop writes that ``place`` is read through: itself, or those sharing its
    memory (a read of another view of written bytes reads the written place's state)."""
    if place in written:
        return [place]
    return sorted((q for q in aliases.get(place, ()) if q in written), key=repr)


def own_arrays(loop: Loop, aliases: Aliases) -> dict[Place, np.ndarray]:
    """An array of the reverse pass for every place ``loop`` writes, and for every place it reads
    that shares memory with one it writes: views of one buffer per memory, at the originals'
    byte offsets and strides."""
    arrays: dict[Place, np.ndarray] = {}
    for p in [*write_planes(loop.body), *read_planes(loop.body)]:
        if p.place not in arrays and (p.writes or written_alias(p.place, loop.writes, aliases)):
            arrays[p.place] = p.array
    parent = {p: p for p in arrays}

    def root(p: Place) -> Place:
        while parent[p] != p:
            p = parent[p]
        return p

    for p in arrays:
        for q in aliases.get(p, ()):
            if q in arrays:
                parent[root(p)] = root(q)
    members: dict[Place, list[Place]] = {}
    for p in arrays:
        members.setdefault(root(p), []).append(p)
    out: dict[Place, np.ndarray] = {}
    for places in members.values():
        spans = [extent(arrays[p]) for p in places]
        lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
        buffer = np.empty(hi - lo, np.uint8)
        for p in places:
            a = arrays[p]
            out[p] = np.ndarray(a.shape, a.dtype, buffer=buffer, offset=a.ctypes.data - lo, strides=a.strides)
    return out


def uncovered(loop: Loop, aliases: Aliases) -> tuple[Place, Place] | None:
    """(a place the body reads or writes, a written place sharing its memory) where the first's
    bytes are not all inside one contiguous place the body writes: the tape, which keeps the
    written places' bytes, would not hold all it reads.  None when every view is covered."""
    writes = {p.place: p.array for p in write_planes(loop.body)}
    for p in [*read_planes(loop.body), *write_planes(loop.body)]:
        shared = [q for q in aliases.get(p.place, ()) if q in writes]
        if not shared:
            continue
        lo, hi = extent(p.array)
        if not any(writes[q].flags.c_contiguous and extent(writes[q])[0] <= lo and hi <= extent(writes[q])[1]
                   for q in [*shared, *([p.place] if p.place in writes else [])]):
            return p.place, shared[0]
    return None


def refuse_uncovered(loop: Loop, aliases: Aliases, name: Callable[[Place], str]) -> None:
    """The pass's error for a loop whose turns could not be run again exactly (:func:`uncovered`)."""
    found = uncovered(loop, aliases)
    if found is not None:
        r, w = found
        raise EagleValueError(f"eagle.diff.reverse: the device loop {loop.label!r} writes {name(w)} and "
                              "touches "
                         "another view of its memory: a loop is reversed by running its turns again from "
                         f"the bytes its written planes held at a turn's start, and {name(r)} is not all "
                         "inside one contiguous plane the loop writes; inside a loop, read and write that "
                         "memory through views inside one contiguous plane the loop writes")
