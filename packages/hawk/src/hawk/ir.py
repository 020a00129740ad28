"""hawk's typed IR: three-address statements over per-sample and uniform values.

A kernel is a list of argument slots (:class:`Slot`) and a body of
statements.  Every value is a :class:`Var` (a typed local) or a
:class:`Const`.  A var is *uniform* when it is the same for every sample
(a ``Param``, a cross-sample reduction, arithmetic on those) and *varying*
otherwise.  A ``Gather`` reads a Table (an array every sample sees whole) at
computed indices.  ``If`` and ``Loop`` keep control flow structured, so a derivative can
walk it backwards and run only the arm (and the turns) that ran.  Results leave through
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
    ``select`` (cond, a, b), ``sample`` (no args: the sample's own index, int64) or a
    reduction (``sum`` ... ``all``)."""

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
class Gather:
    """``dst = slot[index[0], index[1], ...]`` of a Table slot, at computed integer indices.

    ``mode`` says what an index outside the table does: "check" records an error the launch
    raises after it runs (the read itself takes cell 0, never memory outside the table),
    "clamp" takes the nearest edge, "wrap" goes around (Python's ``%``).  ``site`` numbers the
    checked reads of a kernel (the error names the read), ``line`` is the read's source line.
    ``member``: in a fused run's IR, the launch of the run it comes from (its bounds key puts
    the members in order: the first that went wrong is the error); 0 in a kernel's own."""

    dst: Var
    slot: int
    index: tuple[Operand, ...]
    mode: str = "check"
    site: int = 0
    line: int = 0
    member: int = 0


@dataclass
class ScatterAdd:
    """``slot[index...] += value``, into a Table-shaped output slot, in eagle's fixed order.

    Each cell of the output is ``0.0 + T(c)``: ``c[i]`` the sum, in the order of the kernel's
    ScatterAdd statements, of what sample ``i`` added to that cell (-0.0, the exact identity,
    where it added nothing) and T eagle's fixed tree over sample positions.  The order depends
    on no thread count; it is how a gather's adjoint reaches its Table (``hawk.derive``), and
    a ``Scatter`` parameter's ``s[k] += v``.  ``exclusive``: ``s[k] = v`` instead, every cell
    written exactly once (the indices a permutation of the cells, checked).  ``mode``, ``site``,
    ``line`` and ``member`` as a Gather's (a checked index out of range writes nothing and raises)."""

    slot: int
    index: tuple[Operand, ...]
    value: Operand
    mode: str = "clamp"
    exclusive: bool = False
    site: int = 0
    line: int = 0
    member: int = 0


@dataclass
class If:
    cond: Var
    then: list[Stmt] = field(default_factory=list)
    orelse: list[Stmt] = field(default_factory=list)


@dataclass
class Loop:
    """``count`` turns of ``body``, ``index`` = 0, 1, … (``count``: a uniform integer; no turn
    when it is 0 or less).

    ``carried`` are the vars a turn hands to the next: each is set before the loop (by a
    ``copy`` of ``init``, a statement before the loop) and, at the end of every turn, to its
    ``update``, a var an ``Op`` of the body defines (never a carried var, so the updates may be
    made one after another).  In a kernel the front end writes, no other var of the body is read
    after the loop or in a later turn (a derived kernel's adjoints add up in place, turn after
    turn).  A sample that should stop early (``break``, a ``return``, a capped ``while``) runs its
    later turns under an ``If`` the front end writes; the count is the same for every sample.
    """

    count: Operand
    index: Var
    body: list[Stmt] = field(default_factory=list)
    carried: list[Var] = field(default_factory=list)
    init: list[Operand] = field(default_factory=list)
    update: list[Var] = field(default_factory=list)


Stmt = Op | Load | Store | Gather | ScatterAdd | If | Loop


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
    #: a matrix's per-sample shape (r, c): its plane is (r, c, n)
    shape: tuple[int, ...] = ()
    #: a Table: the shape of the array every sample reads at computed indices (None: a plane)
    table: tuple[int, ...] | None = None

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
    #: the dispatch groups the kernel declares (hawk.dispatch.Group), in source order
    groups: tuple = ()

    @property
    def reductions(self) -> list[Op]:
        return [s for s in self.body if isinstance(s, Op) and s.op in REDUCTIONS]

    @property
    def per_sample(self) -> bool:
        """Reads and writes only its own sample and reduces nothing (a Table is read whole)."""
        return not self.reductions and not any((s.cell and s.role != "read") or s.table is not None
                                               for s in self.slots)

    @property
    def own_writes(self) -> bool:
        """Writes only its own sample and reduces nothing, though it may read Tables whole: what a
        per-sample mask of its writes covers (``eagle.until_done``)."""
        return not self.reductions and not any(s.role != "read" and (s.cell or s.table is not None)
                                               for s in self.slots)


def walk(body: list[Stmt]) -> Iterator[Stmt]:
    """Every statement, nested ones included, in order."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, If):
            yield from walk(stmt.then)
            yield from walk(stmt.orelse)
        elif isinstance(stmt, Loop):
            yield from walk(stmt.body)


def reads(body: list[Stmt]) -> Iterator[Var]:
    """The vars the statements read (operands, a gather's indices, conditions, a loop's count and
    updates)."""
    for s in walk(body):
        operands = s.args if isinstance(s, Op) else (s.value,) if isinstance(s, Store) else \
            s.index if isinstance(s, Gather) else (s.value, *s.index) if isinstance(s, ScatterAdd) else \
            (s.cond,) if isinstance(s, If) else \
            (s.count, *s.update, *s.carried) if isinstance(s, Loop) else ()
        yield from (o for o in operands if isinstance(o, Var))


def defined(body: list[Stmt]) -> list[Var]:
    """The vars a body assigns, each once, in first-assignment order."""
    seen: dict[int, Var] = {}
    for stmt in walk(body):
        if isinstance(stmt, (Op, Load, Gather)):
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
            elif isinstance(s, Gather):
                at = ", ".join(map(name, s.index))
                lines.append(f"{pad}{name(s.dst)}: {s.dst.dtype} = {ir.slots[s.slot].name}[{at}] ({s.mode})")
            elif isinstance(s, Loop):
                lines.append(f"{pad}for {name(s.index)} in range({name(s.count)}):")
                emit(s.body, depth + 1)
                pairs = zip(s.carried, s.update, strict=True)
                lines.extend(f"{pad}  {name(c)} = {name(u)}" for c, u in pairs)
            elif isinstance(s, ScatterAdd):
                at = ", ".join(map(name, s.index))
                how = "=" if s.exclusive else "+="
                target = ir.slots[s.slot].name
                lines.append(f"{pad}{target}[{at}] {how} {name(s.value)} ({s.mode}, fixed order)")
            else:
                lines.append(f"{pad}if {name(s.cond)}:")
                emit(s.then, depth + 1)
                lines.append(f"{pad}else:")
                emit(s.orelse, depth + 1)

    emit(ir.body, 1)
    return "\n".join(lines)
