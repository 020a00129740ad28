"""Counted loops unrolled in the IR, for the statements that keep one value per sample and site.

A ``ScatterAdd`` keeps what each sample adds, one slot per statement (its site), until the
final phase sums the contributions in eagle's fixed order; inside a loop it would keep only
the last turn's.  So a loop holding one (a ``Scatter`` written in a loop; the adjoint of a Table
read in a loop records a row per turn instead, :mod:`hawk.records`) is unrolled first: each
turn is a copy of the body with vars of its own, the index a number and the carried vars the
previous turn's updates, which is what a :class:`~hawk.ir.Loop` promises (only carried vars
cross turns).  Only a count that is a
number, at most :data:`MAX_TURNS`, can be unrolled; anything else is refused by the caller's
message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from hawk.ir import Const, Gather, If, Load, Loop, Op, Operand, ScatterAdd, Stmt, Store, Var, walk

#: the most turns a loop is unrolled to
MAX_TURNS = 256


def unrolled(body: list[Stmt], holds: Callable[[Stmt], bool],
             refuse: Callable[[str], Exception]) -> list[Stmt]:
    """``body`` with every loop that holds a statement ``holds`` picks unrolled (inner loops
    first); ``refuse(why)`` is raised for one whose count is not a number up to MAX_TURNS.  The
    statements after an unrolled loop read its carried vars' last values in their place (a var is
    not assigned again, so that a derivative sees one value per var)."""
    out: list[Stmt] = []
    finals = _Turn({}, fresh=False)  # the carried vars of the loops unrolled so far -> their last values
    for s in body:
        s = finals.copied([s])[0] if finals.names else s
        if isinstance(s, If):
            out.append(If(s.cond, unrolled(s.then, holds, refuse), unrolled(s.orelse, holds, refuse)))
        elif isinstance(s, Loop):
            loop = replace(s, body=unrolled(s.body, holds, refuse))
            if any(map(holds, walk(loop.body))):
                out += _turns(loop, finals.names, refuse)
            else:
                out.append(loop)
        else:
            out.append(s)
    return out


def _turns(loop: Loop, finals: dict[int, Operand], refuse: Callable[[str], Exception]) -> list[Stmt]:
    """The turns of ``loop``, one copy of its body each; ``finals`` gets its carried vars' last values."""
    count = loop.count.value if isinstance(loop.count, Const) else None
    if not isinstance(count, int) or count > MAX_TURNS:
        shown = "a value known only when it runs" if count is None else f"{count} turns"
        raise refuse(f"its loop runs {shown}; the loop must be unrolled (a count written as a number, "
                     f"at most {MAX_TURNS})")
    out: list[Stmt] = []
    carried: dict[int, Operand] = {}
    for turn in range(max(count, 0)):
        copy = _Turn({id(loop.index): Const(turn, loop.index.dtype), **carried})
        out += copy.copied(loop.body)
        carried = {id(c): copy.read(u) for c, u in zip(loop.carried, loop.update, strict=True)}
    finals.update(carried)
    return out


class _Turn:
    """One turn's copy: ``names`` maps the id of a var to what it is in this turn (the index,
    the carried vars, and the new var of each one the turn assigns)."""

    def __init__(self, names: dict[int, Operand], fresh: bool = True) -> None:
        self.names = names
        self.fresh = fresh  # False: only the reads change
        self.made: set[int] = set()  # ids of the vars this turn has assigned

    def read(self, v: Operand) -> Operand:
        return self.names.get(id(v), v) if isinstance(v, Var) else v

    def assign(self, v: Var) -> Var:
        """The turn's var for ``v``: new at its first assignment, the same at the next (the arms
        of an if set one var)."""
        if not self.fresh:
            return v
        if id(v) not in self.made:
            self.made.add(id(v))
            self.names[id(v)] = Var(v.dtype, v.uniform, v.name)
        return self.names[id(v)]

    def copied(self, body: list[Stmt]) -> list[Stmt]:
        read, assign = self.read, self.assign
        out: list[Stmt] = []
        for s in body:
            if isinstance(s, Op):
                args = tuple(map(read, s.args))
                out.append(Op(assign(s.dst), s.op, args))
            elif isinstance(s, Load):
                out.append(Load(assign(s.dst), s.slot, s.comp))
            elif isinstance(s, Store):
                out.append(Store(s.slot, s.comp, read(s.value)))
            elif isinstance(s, Gather):
                index = tuple(map(read, s.index))
                out.append(replace(s, dst=assign(s.dst), index=index))
            elif isinstance(s, ScatterAdd):
                out.append(replace(s, index=tuple(map(read, s.index)), value=read(s.value)))
            elif isinstance(s, If):
                out.append(If(read(s.cond), self.copied(s.then), self.copied(s.orelse)))
            else:  # a loop inside: its carried vars were set by copies just before it
                count, carried, init = read(s.count), [read(c) for c in s.carried], [read(i) for i in s.init]
                index = assign(s.index)
                inner = self.copied(s.body)
                out.append(Loop(count, index, inner, carried, init, [read(u) for u in s.update]))
        return out
