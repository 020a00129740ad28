"""What a device loop keeps of each turn: the state it carries from one turn to the next.

A turn is reversed by running it again from the state it began with, so
the recorded run saves, at the start of every turn, each place the body
writes and may read before writing it in that turn (the loop-carried
state).  Places the body only reads are the same for every turn and are
kept once, outside the loop; places it always writes before reading them
(temporaries) are made again.  A write counts only when it surely happens
and covers the whole place (a kernel's output, a copy's target), so the
test errs towards keeping more.
"""

from __future__ import annotations

from eagle.diff.steps import Choice, Leaf, Loop, Place, Plane, Step


def carried(loop: Loop) -> list[Plane]:
    """The planes whose value at the start of a turn the turn may read, in order of first read."""
    written = loop.writes
    found: dict[Place, Plane] = {}
    _walk(loop.body, set(), written, found)
    return list(found.values())


def _walk(steps: list[Step], defined: set[Place], written: frozenset[Place],
          found: dict[Place, Plane]) -> set[Place]:
    """Record reads of ``written`` places not yet ``defined``; return what is defined after."""
    for s in steps:
        if isinstance(s, Leaf):
            for p in s.planes:
                if p.reads and p.place in written and p.place not in defined:
                    found.setdefault(p.place, p)
            defined |= s.defines
            continue
        if s.cell.place in written and s.cell.place not in defined:
            found.setdefault(s.cell.place, s.cell)
        if isinstance(s, Choice):
            after = [_walk(arm, set(defined), written, found) for arm in s.arms]
            defined = set.intersection(*after) if after else defined
        else:  # a loop may run no turn: what it defines is not sure
            _walk(s.body, set(defined), written, found)
    return defined

