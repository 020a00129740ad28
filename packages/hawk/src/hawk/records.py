"""The rows of a Scatter's records: one per ScatterAdd statement and turn of the loops around it.

A ``ScatterAdd`` records what each sample adds and to which cell, one row of ``n`` per
statement (:class:`hawk.tables.Scatter`), and the final phase sums a cell's records sample by
sample, each sample's rows in row order (eagle's fixed order).  Inside a counted loop a
statement runs once per turn, so it gets a row per turn: the rows of a loop's body are laid out
turn after turn, ``base + turn * rows_per_turn``, for as many turns as the loop's count, which
must be a number (its cap: ``for i in range(64)``, ``while hawk.capped(cond, 64)``,
``for i in hawk.capped_range(n, 64)``).  That is the order the loop written out turn by turn
gives its statements, so the sums have the same bits as an unrolled loop; a turn a sample does
not run (it broke, or a capped loop stopped) leaves its rows "no cell" (-1), as a statement an
``if`` skips does.  The cost is storage: ``cap * statements * samples`` records of a value and
an int64 cell each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from eagle.extend import EagleValueError
from hawk.ir import Const, If, Loop, ScatterAdd, Stmt, Var, walk


@dataclass(frozen=True)
class Row:
    """Where one ScatterAdd records: row ``base + sum(index * rows for index, rows in turns)``."""

    base: int
    turns: tuple[tuple[Var, int], ...] = ()  # (a loop's index, the rows one of its turns takes)

    def c(self, var: Callable[[Var], str]) -> str:
        """The row as a C expression (``var`` prints a loop's index)."""
        return " + ".join([str(self.base), *(f"{var(index)} * {rows}LL" for index, rows in self.turns)])


def cap(loop: Loop) -> int | None:
    """The most turns ``loop`` runs when that is a number written in the kernel (else None)."""
    count = loop.count.value if isinstance(loop.count, Const) else None
    return max(count, 0) if isinstance(count, int) and not isinstance(count, bool) else None


def layout(body: list[Stmt], target: int) -> tuple[dict[int, Row], int]:
    """id of each ScatterAdd into slot ``target`` -> its :class:`Row`, and how many rows there are."""
    rows: dict[int, Row] = {}
    return rows, _lay(body, target, 0, (), rows)


def _size(body: list[Stmt], target: int) -> int:
    return _lay(body, target, 0, (), {})


def _lay(body: list[Stmt], target: int, base: int, turns: tuple[tuple[Var, int], ...],
         rows: dict[int, Row]) -> int:
    used = 0
    for s in body:
        if isinstance(s, ScatterAdd) and s.slot == target:
            rows[id(s)] = Row(base + used, turns)
            used += 1
        elif isinstance(s, If):
            used += _lay(s.then, target, base + used, turns, rows)
            used += _lay(s.orelse, target, base + used, turns, rows)
        elif isinstance(s, Loop):
            per_turn = _size(s.body, target)
            if not per_turn:
                continue
            turns_cap = cap(s)
            if turns_cap is None:  # refused where the loop is made (capped_loops); never emitted
                raise EagleValueError("hawk.records: a ScatterAdd in a loop whose count is not a number")
            _lay(s.body, target, base + used, (*turns, (s.index, per_turn)), rows)
            used += turns_cap * per_turn
    return used


def refuse_uncapped(body: list[Stmt], holds: Callable[[Stmt], bool],
                    refuse: Callable[[str], Exception]) -> None:
    """Raise ``refuse(why)`` for a loop holding a statement ``holds`` picks whose count is not a
    number: its records need a row per turn, so a cap known before the launch."""
    for s in walk(body):
        if isinstance(s, Loop) and cap(s) is None and any(map(holds, walk(s.body))):
            raise refuse("its loop runs a value known only when it runs, and the gradient records a "
                         "row per turn: give the loop a cap written as a number, `for i in "
                         "hawk.capped_range(n, 64):` (at most 64 turns; it stores cap x reads x samples "
                         "records)")
