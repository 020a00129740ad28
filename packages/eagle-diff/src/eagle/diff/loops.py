"""What a device loop keeps of each turn, and what of a turn its reverse runs again.

A turn is reversed by running it again from the state it began with, so
the recorded run saves, at the start of every turn, each place the body
writes and may read before writing it in that turn (the loop-carried
state).  Places the body only reads are the same for every turn and are
kept once, outside the loop; places it always writes before reading them
(temporaries) are made again.  A write counts only when it surely happens
and covers the whole place (a kernel's output, a copy's target), so the
test errs towards keeping more.  A turn is run again only as far as its
reverse reads: a step nothing reads (a guard's reduction, say) is skipped.
"""

from __future__ import annotations

from eagle.diff.loop_views import Aliases, written_alias
from eagle.diff.steps import Choice, Leaf, Loop, Place, Plane, Step, write_planes


def carried(loop: Loop, aliases: Aliases | None = None) -> list[Plane]:
    """The planes whose value at the start of a turn the turn may read, in order of first read;
    a read through another view of a written place's memory (``aliases``) reads the written
    place (:mod:`eagle.diff.loop_views`)."""
    written = loop.writes
    found: dict[Place, Plane] = {}
    planes = {p.place: p for p in write_planes(loop.body)}
    _walk(loop.body, set(), written, found, aliases or {}, planes)
    return list(found.values())


def _walk(steps: list[Step], defined: set[Place], written: frozenset[Place],
          found: dict[Place, Plane], aliases: Aliases, planes: dict[Place, Plane]) -> set[Place]:
    """Record reads of ``written`` places not yet ``defined``; return what is defined after."""
    for s in steps:
        if isinstance(s, Leaf):
            for p in s.carries:
                for q in written_alias(p.place, written, aliases):
                    if q not in defined:
                        found.setdefault(q, p if q == p.place else planes[q])
            defined |= s.defines
            continue
        if s.cell.place in written and s.cell.place not in defined:
            found.setdefault(s.cell.place, s.cell)
        if isinstance(s, Choice):
            after = [_walk(arm, set(defined), written, found, aliases, planes) for arm in s.arms]
            defined = set.intersection(*after) if after else defined
        else:  # a loop may run no turn: what it defines is not sure
            _walk(s.body, set(defined), written, found, aliases, planes)
    return defined


def needed_again(steps: list[Step], reversed_: list[bool], aliases: Aliases | None = None
                 ) -> tuple[list[bool], set[Place]]:
    """Which steps of a turn its reverse needs run again, and the places it needs at the turn's
    start.  Walking back from the end of the turn: a step runs when a step that runs or a reverse
    operation reads what it writes (or another view of its memory, ``aliases``), and a choice or
    loop that is reversed always runs (its arms' values and its tape are made by running it)."""
    aliases = aliases or {}
    live: set[Place] = set()
    run = [False] * len(steps)
    for k in range(len(steps) - 1, -1, -1):
        s = steps[k]
        touched = s.writes.union(*(aliases.get(p, ()) for p in s.writes))
        if touched & live or (reversed_[k] and not isinstance(s, Leaf)):
            run[k] = True
            live = (live - (s.defines if isinstance(s, Leaf) else set())) | s.reads
        if reversed_[k]:
            live |= s.reads
    return run, live
