"""A kernel with cross-sample reductions, cut into per-sample phases.

``y = x - hawk.sum(x)`` cannot run one sample at a time: every sample needs
the sum first.  So a kernel with reductions r_0 … r_{m-1} runs as

    phase 0 -> reduce r_0 -> phase 1 -> reduce r_1 -> … -> final phase

Phase j computes r_j's operand and reduces each block of it at once, in
libeagle's fixed order, into one partial per block (on the CPU no plane of
values is written); libeagle then finishes the partials into a cell with the
same fixed tree; later phases read the cell.  Only the final phase stores results.  A
kernel without reductions is its own final phase.
"""

from __future__ import annotations

from dataclasses import dataclass

from hawk.ir import REDUCTIONS, Const, KernelIR, Load, Op, Slot, Stmt, Store


@dataclass(frozen=True)
class Reduction:
    """One cross-sample reduction: block partials ``partials`` -> one-cell ``cell``."""

    op: str
    partials: int  # slot index
    cell: int


@dataclass
class Phased:
    """The slots (the kernel's, then scratch planes and cells) and the phase bodies."""

    slots: list[Slot]
    phases: list[list[Stmt]]
    reductions: list[Reduction]

    @property
    def cells_only(self) -> bool:
        """The final phase stores nothing but cells, of values the same for every sample (a
        reduction's result, a flag): its sample loop has no effect (loads and ops only), so one
        call does it all."""
        return all(isinstance(s, (Op, Load)) or (isinstance(s, Store) and self.slots[s.slot].cell
                                                 and (isinstance(s.value, Const) or s.value.uniform))
                   for s in self.phases[-1])


def split(ir: KernelIR) -> Phased:
    slots = list(ir.slots)
    reductions: list[Reduction] = []
    done: dict[int, int] = {}  # id(reduction Op) -> its cell slot
    phases: list[list[Stmt]] = []
    for position, stmt in enumerate(ir.body):
        if not (isinstance(stmt, Op) and stmt.op in REDUCTIONS):
            continue
        j = len(reductions)
        slots.append(Slot(f"_{stmt.op}{j}_partials", "write", stmt.dst.dtype, reduction=stmt.op))
        slots.append(Slot(f"_{stmt.op}{j}", "write", stmt.dst.dtype, cell=True))
        reductions.append(Reduction(stmt.op, len(slots) - 2, len(slots) - 1))
        body = [s for s in _with_cells(ir.body[:position], done) if not isinstance(s, Store)]
        phases.append([*body, Store(len(slots) - 2, 0, stmt.args[0])])
        done[id(stmt)] = len(slots) - 1
    phases.append(_with_cells(ir.body, done))
    return Phased(slots, phases, reductions)


def _with_cells(body: list[Stmt], cells: dict[int, int]) -> list[Stmt]:
    """The body with each finished reduction read from its cell."""
    return [Load(s.dst, cells[id(s)]) if id(s) in cells else s for s in body]
