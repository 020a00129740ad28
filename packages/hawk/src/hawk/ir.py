"""hawk's typed IR: three-address statements over per-sample and uniform values.

A kernel is a list of argument slots (:class:`Slot`) and a body of
statements.  Every value is a :class:`Var` (a typed local) or a
:class:`Const`.  A var is *uniform* when it is the same for every sample
(a ``Param``, a cross-sample reduction, arithmetic on those) and *varying*
otherwise.  ``If`` keeps control flow structured, so a derivative can walk
it backwards and run only the arm that ran.  Results leave through
``Store`` statements at the end of the body.

The front end (``frontend.py``) writes this IR; the C and CUDA emitters, the
NumPy reference evaluator and the derivative transforms read it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(eq=False)
class Var:
    """A typed local; compared by identity."""

    dtype: str
    uniform: bool
    name: str = ""


@dataclass(frozen=True)
class Const:
    value: float | int | bool
    dtype: str


Operand = Var | Const

#: Cross-sample reductions: a varying operand, a uniform result.
REDUCTIONS = ("sum", "max", "min", "any", "all")


@dataclass
class Op:
    """``dst = op(*args)``: arithmetic, a math function, ``cast``, ``copy``,
    ``select`` (cond, a, b) or a reduction (``sum`` ... ``all``)."""

    dst: Var
    op: str
    args: tuple[Operand, ...]


@dataclass
class Load:
    """``dst = slot[comp]`` at this sample (a uniform slot: its one value)."""

    dst: Var
    slot: int
    comp: int = 0


@dataclass
class Store:
    """``slot[comp] = value`` at this sample (a cell: once)."""

    slot: int
    comp: int
    value: Operand


@dataclass
class If:
    cond: Var
    then: list[Stmt] = field(default_factory=list)
    orelse: list[Stmt] = field(default_factory=list)


Stmt = Op | Load | Store | If


@dataclass(frozen=True)
class Slot:
    """One argument of the compiled kernel.

    ``role``: "read", "write" or "readwrite" for a plane, "value" for a
    by-value parameter.  A ``cell`` is a one-element plane (a uniform value);
    a plane of ``components`` > 1 has shape ``(components, n)``.  A slot
    with a ``reduction`` holds that reduction's block partials (one value per
    block of samples), not per-sample values.  ``shape``: a matrix's per-sample
    ``(r, c)`` (its plane is ``(r, c, n)``, row-major); empty for any other.
    """

    name: str
    role: str
    dtype: str
    components: int = 1
    cell: bool = False
    reduction: str | None = None
    shape: tuple[int, ...] = ()

    @property
    def uniform(self) -> bool:
        return self.role == "value" or self.cell


@dataclass
class KernelIR:
    """A kernel ready for a back end: its slots, its body, and the tree of
    output slots its return gives (None: no return)."""

    name: str
    slots: list[Slot]
    body: list[Stmt]
    result: object = None  # a tree of slot indices: int, tuple, list, dict

    @property
    def reductions(self) -> list[Op]:
        return [s for s in self.body if isinstance(s, Op) and s.op in REDUCTIONS]

    @property
    def per_sample(self) -> bool:
        """Reads and writes only its own sample and reduces nothing."""
        return not self.reductions and not any(s.cell and s.role != "read" for s in self.slots)


def walk(body: list[Stmt]) -> Iterator[Stmt]:
    """Every statement, nested ones included, in order."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, If):
            yield from walk(stmt.then)
            yield from walk(stmt.orelse)


def defined(body: list[Stmt]) -> list[Var]:
    """The vars a body assigns, each once, in first-assignment order."""
    seen: dict[int, Var] = {}
    for stmt in walk(body):
        if isinstance(stmt, (Op, Load)):
            seen.setdefault(id(stmt.dst), stmt.dst)
    return list(seen.values())


def render(ir: KernelIR) -> str:
    """A readable listing of the IR, for error messages and debugging."""
    names: dict[int, str] = {}

    def name(v: Operand) -> str:
        if isinstance(v, Const):
            return repr(v.value)
        return names.setdefault(id(v), f"{v.name or 'v'}{len(names)}")

    lines = [f"kernel {ir.name}(" + ", ".join(f"{s.name}: {s.role} {s.dtype}" for s in ir.slots) + ")"]

    def emit(body: list[Stmt], depth: int) -> None:
        pad = "  " * depth
        for s in body:
            if isinstance(s, Op):
                lines.append(f"{pad}{name(s.dst)}: {s.dst.dtype} = {s.op}({', '.join(map(name, s.args))})")
            elif isinstance(s, Load):
                lines.append(f"{pad}{name(s.dst)}: {s.dst.dtype} = {ir.slots[s.slot].name}[{s.comp}]")
            elif isinstance(s, Store):
                lines.append(f"{pad}{ir.slots[s.slot].name}[{s.comp}] = {name(s.value)}")
            else:
                lines.append(f"{pad}if {name(s.cond)}:")
                emit(s.then, depth + 1)
                lines.append(f"{pad}else:")
                emit(s.orelse, depth + 1)

    emit(ir.body, 1)
    return "\n".join(lines)
