"""A kernel with cross-sample reductions, cut into per-sample phases.

``y = x - hawk.sum(x)`` cannot run one sample at a time: every sample needs
the sum first.  So a kernel runs as

    phase 0 -> reduce -> phase 1 -> … -> reduce -> final phase

A kernel's own launch gives each reduction a phase, in order.  A fused run
(``split(ir, shared=True)``) gives each *level* one: a reduction's level is
how many reductions its operand waits for (``hawk.sum(x)``: 0;
``hawk.sum(x - hawk.sum(x))``: 1), and the reductions of one level, which
do not wait for one another, share a phase (one pass, one barrier: a
reverse pass's ``Param`` gradients).  Phase j computes the operands of its
reductions and reduces each block of them at once, in libeagle's fixed order,
into one partial per block (on the CPU no plane of values is written);
libeagle then finishes the partials into cells with the same fixed tree;
later phases read the cells.  A store that does not wait for the last level
is made by the last reduction phase, unless the final phase still reads
that plane: so a kernel whose reductions only fill cells (a gradient's
``Param`` sums) leaves its final phase only the cells to store.  Every phase
keeps only the statements its stores need.  A kernel without reductions is
its own final phase.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

from hawk import tables
from hawk.ir import (
    REDUCTIONS,
    Const,
    Gather,
    If,
    KernelIR,
    Load,
    Loop,
    Op,
    ScatterAdd,
    Slot,
    Stmt,
    Store,
    Var,
    reads,
    walk,
)


@dataclass(frozen=True)
class Reduction:
    """One cross-sample reduction: block partials ``partials`` -> one-cell ``cell``, computed by
    phase ``phase``."""

    op: str
    partials: int  # slot index
    cell: int
    phase: int = 0


@dataclass
class Phased:
    """The slots (the kernel's, then scratch planes and cells) and the phase bodies."""

    slots: list[Slot]
    phases: list[list[Stmt]]
    reductions: list[Reduction]
    #: Table-shaped outputs summed after the final phase (:mod:`hawk.tables`)
    scatters: list[tables.Scatter] = dataclasses.field(default_factory=list)

    @functools.cached_property  # asked at every launch a build lowers; a Phased is never changed
    def cells_only(self) -> bool:
        """The final phase stores nothing but cells, of values the same for every sample (a
        reduction's result, a flag): its sample loop has no effect (loads and ops only), so one
        call does it all."""
        return all(isinstance(s, (Op, Load)) or (isinstance(s, Gather) and s.mode != "check")
                   or (isinstance(s, Store) and self.slots[s.slot].cell
                       and (isinstance(s.value, Const) or s.value.uniform))
                   for s in self.phases[-1])


def split(ir: KernelIR, shared: bool = False) -> Phased:
    """The phases of ``ir``: with ``shared``, a phase per level (reductions that wait for no other
    share one: a fused run's); else a phase per reduction, in order (a kernel's own)."""
    slots = list(ir.slots)
    depth = _depths(ir.body, shared)
    found = [s for s in ir.body if isinstance(s, Op) and s.op in REDUCTIONS]
    levels = 1 + max((depth[id(s.dst)] - 1 for s in found), default=-1)
    reductions: list[Reduction] = []
    cells: dict[int, int] = {}  # id(reduction Op) -> its cell slot
    partials: dict[int, int] = {}  # id(reduction Op) -> its partials slot
    for j, stmt in enumerate(found):
        slots.append(Slot(f"_{stmt.op}{j}_partials", "write", stmt.dst.dtype, reduction=stmt.op))
        slots.append(Slot(f"_{stmt.op}{j}", "write", stmt.dst.dtype, cell=True))
        partials[id(stmt)], cells[id(stmt)] = len(slots) - 2, len(slots) - 1
        reductions.append(Reduction(stmt.op, len(slots) - 2, len(slots) - 1, depth[id(stmt.dst)] - 1))
    if tables.sites(ir):  # checked Table reads: the cell of the first that went out of range
        slots.append(Slot(tables.BOUNDS, "readwrite", "i64", table=(4,)))
    scatters = tables.scatter_scratch(ir, slots)
    stores = [s for s in ir.body if isinstance(s, Store)]
    # a cell is stored by the final phase, which runs over an empty batch too
    final = [s for s in stores if levels == 0 or slots[s.slot].cell or depth.get(id(s.value), 0) >= levels]
    early = [s for s in stores if s not in final]
    # An early store is made by the last reduction phase, unless the final phase reads its plane
    # (it recomputes from memory, which must still hold what the kernel started from).
    while True:
        body = _needed(_at_level(ir.body, levels, depth, cells, partials, scatter=True), final)
        read = {s.slot for s in walk(body) if isinstance(s, (Load, Gather))}
        late = [s for s in early if s.slot in read]
        if not late:
            break
        final += late
        early = [s for s in early if s not in late]
    phases = [_needed(_at_level(ir.body, j, depth, cells, partials),
                      _partial_stores(ir.body, j, depth, partials) + (early if j == levels - 1 else []))
              for j in range(levels)]
    return Phased(slots, [*phases, body], reductions, scatters)


def _depths(body: list[Stmt], shared: bool) -> dict[int, int]:
    """id(var) -> the first phase that can compute it: one after the phase of each reduction it
    waits for (an if's vars wait for its condition).  A reduction's phase is its operand's
    (``shared``), or its place among the reductions."""
    depth: dict[int, int] = {}
    count = [0]

    def of(x: object) -> int:
        return depth.get(id(x), 0) if isinstance(x, Var) else 0

    def visit(stmts: list[Stmt], floor: int) -> None:
        for s in stmts:
            if isinstance(s, Op):
                d = max([floor, *(of(a) for a in s.args)])
                if s.op in REDUCTIONS:
                    d = (d if shared else count[0]) + 1
                    count[0] += 1
                depth[id(s.dst)] = max(depth.get(id(s.dst), 0), d)
            elif isinstance(s, Load):
                depth[id(s.dst)] = max(depth.get(id(s.dst), 0), floor)
            elif isinstance(s, Gather):
                depth[id(s.dst)] = max([depth.get(id(s.dst), 0), floor, *(of(i) for i in s.index)])
            elif isinstance(s, If):
                inner = max(floor, of(s.cond))
                visit(s.then, inner)
                visit(s.orelse, inner)
            elif isinstance(s, Loop):  # no reduction inside: one level for all it computes
                inner = max([floor, of(s.count), *map(of, s.carried)])
                visit(s.body, inner)
                top = max([inner, *(of(x.dst) for x in walk(s.body) if isinstance(x, (Op, Load)))])
                visit(s.body, top)  # all of it at the highest level any of it waits for
                for v in [s.index, *s.carried]:
                    depth[id(v)] = max(depth.get(id(v), 0), top)

    visit(body, 0)
    return depth


def _at_level(body: list[Stmt], level: int, depth: dict[int, int], cells: dict[int, int],
              partials: dict[int, int], scatter: bool = False) -> list[Stmt]:
    """What phase ``level`` can compute, without stores: statements waiting for at most ``level``
    reductions, the finished reductions read from their cells; ``scatter``: with the ScatterAdds
    (the final phase's)."""
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, ScatterAdd):
            if scatter:
                out.append(s)
            continue
        if isinstance(s, Store):
            continue
        if isinstance(s, If):
            if depth.get(id(s.cond), 0) <= level:
                out.append(If(s.cond, _at_level(s.then, level, depth, cells, partials, scatter),
                              _at_level(s.orelse, level, depth, cells, partials, scatter)))
        elif isinstance(s, Loop):
            if depth.get(id(s.index), 0) <= level:  # (its records are the final phase's)
                out.append(s if scatter else dataclasses.replace(s, body=tables.without_scatters(s.body)))
        elif depth.get(id(s.dst), 0) <= level:
            out.append(Load(s.dst, cells[id(s)]) if id(s) in cells else s)
    return out


def _partial_stores(body: list[Stmt], level: int, depth: dict[int, int],
                    partials: dict[int, int]) -> list[Store]:
    """The block-partial stores of the reductions phase ``level`` computes."""
    return [Store(partials[id(s)], 0, s.args[0]) for s in body
            if id(s) in partials and depth[id(s.dst)] - 1 == level]


def _checked(s: Stmt) -> bool:
    """A checked Table read: kept though its value is not needed, since out of range it is the
    launch's error (the reference evaluator raises it wherever it stands)."""
    return isinstance(s, Gather) and s.mode == "check"


def _needed(body: list[Stmt], stores: list[Store]) -> list[Stmt]:
    """``body`` with ``stores`` appended, keeping only the statements they need."""
    needed = {id(s.value) for s in stores if isinstance(s.value, Var)}

    def keep(stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in reversed(stmts):
            if isinstance(s, If):
                then, orelse = keep(s.then), keep(s.orelse)
                if then or orelse:
                    needed.add(id(s.cond))
                    out.append(If(s.cond, then, orelse))
            elif isinstance(s, Loop):  # kept whole, with all it reads, when it sets a needed var
                if any(id(v) in needed for v in [*s.carried, *(x.dst for x in walk(s.body)
                                                                if isinstance(x, (Op, Load)))]) \
                        or any(_checked(x) or isinstance(x, ScatterAdd) for x in walk(s.body)):  # or records
                    needed.update(id(v) for v in reads([s]))
                    out.append(s)
            elif isinstance(s, ScatterAdd):
                needed.update(id(a) for a in (s.value, *s.index) if isinstance(a, Var))
                out.append(s)
            elif id(s.dst) in needed or _checked(s):
                if isinstance(s, (Op, Gather)):
                    operands = s.args if isinstance(s, Op) else s.index
                    needed.update(id(a) for a in operands if isinstance(a, Var))
                out.append(s)
        return out[::-1]

    return [*keep(body), *stores]
