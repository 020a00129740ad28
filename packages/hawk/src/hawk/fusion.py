"""Fusing a run of kernel launches into one kernel: the IR of a fused run.

A run of launches, each a :class:`~hawk.ir.KernelIR` with its arguments, in
the order they run, becomes one KernelIR that does what they do in that
order, sample by sample:

- **slots are unified** by the caller's key of each plane argument: launches
  that pass the same view (equal keys) share one slot of the fused kernel;
  by-value slots stay each their own.  The caller guarantees that planes of
  different keys share no byte (libeagle's rule for a fused run: identical
  views or disjoint ones), so no two slots alias;
- **stores forward**: a ``Load`` of a slot that an earlier launch of the run
  stored at this sample takes the stored value (a register), not memory;
- **dead stores go**: of several stores to one plane only the last is kept
  (a sample's plane holds the last value written), and a plane that
  ``live(key)`` says nothing after the run reads, and that the run does not
  read from memory itself, is not stored at all; a slot then neither loaded
  from memory nor stored is dropped;
- **reductions stay** as the ``Op`` s they are: ``hawk.phases.split(ir,
  shared=True)`` cuts the fused body into phases, so that reductions whose
  operands do not depend on one another (a reverse pass's ``Param``
  gradients) share one phase, and one barrier.

Each launch's vars are copied, so two launches of one kernel (one IR) stay
apart.  The fused statements are the launches' own, in their order, through
the same emitter: the fused kernel gives the bits of the launches run one
after another (no reassociation, no contraction).

Call it as::

    fused = hawk.fusion.fuse([(ir_a, keys_a), (ir_b, keys_b)], live=lambda key: ..., name="run")
    fused.ir        # the fused KernelIR: phases.split(fused.ir, shared=True), then emit.source(...)
    fused.origins   # per fused slot: (launch index, slot index) whose argument fills it
    fused.sites     # per checked access of the fused kernel: (launch index, its site there)

where ``keys_x[k]`` is the key of slot ``k`` of launch x's IR (a plane's view
identity; None for a by-value slot).  A launch whose IR stores inside an
``if`` cannot be fused: :func:`fusible` says so first.

Checked Table reads and Scatters join a run too:

- **checked accesses** are numbered across the run (launch by launch) and keep
  the launch they come from (``member``): the run's one bounds cell then holds
  the first bad access of the first launch that went wrong, which
  :mod:`hawk.run_checks` raises as that launch's own error;
- **a Scatter** (``s[k] += v``, ``s[k] = v``, a Table's gradient) keeps its
  per-sample records in the run's loop, and its sort-and-sum runs after the
  run's samples (``phases.split`` gives the fused kernel the finish).  Its
  plane is written whole after the run, so no other launch of the run may
  touch it (eagle's run rule, ``Fusible.scatters``; refused here too).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace

from eagle.extend import EagleValueError
from hawk import tables
from hawk.ir import (
    Gather,
    If,
    KernelIR,
    Load,
    Loop,
    Op,
    Operand,
    ScatterAdd,
    Slot,
    Stmt,
    Store,
    Var,
    walk,
)
from hawk.types import strong

#: One launch of a run: its IR and the key of each of its slots (None: a by-value slot).
Member = tuple[KernelIR, Sequence[Hashable | None]]


@dataclass
class Fused:
    """A fused run: the kernel, and where each of its slots' arguments come from."""

    ir: KernelIR
    origins: list[tuple[int, int]]  # per slot of ir: (launch index, that launch's slot index)
    sites: list[tuple[int, int]] = field(default_factory=list)  # per checked site: (launch, its site)


def fusible(ir: KernelIR) -> bool:
    """Whether a launch of ``ir`` may join a fused run: its stores are at the top of its body
    (where the front end puts results and Mutables), so forwarding sees every one."""
    nested = [top for top in ir.body if isinstance(top, (If, Loop))]
    return not any(isinstance(s, Store) for s in walk(nested))


def size(ir: KernelIR) -> int:
    """The statements of ``ir``, nested ones included: what a fused function's compile time grows with."""
    return sum(1 for _ in walk(ir.body))


def fuse(members: Sequence[Member], live: Callable[[Hashable], bool], name: str) -> Fused:
    """One kernel doing what ``members`` do in order; ``live(key)``: whether a plane is read after
    the run (by a later node, as a result, a buffer, a Mutable argument, a cell: anything outside
    the run; when in doubt, say yes)."""
    slots: list[Slot] = []
    origins: list[tuple[int, int]] = []
    keys: list[Hashable | None] = []
    by_key: dict[Hashable, int] = {}
    body: list[Stmt] = []
    stored: dict[tuple[int, int], Operand] = {}  # (fused slot, comp) -> the value stored last
    sites: list[tuple[int, int]] = []
    scattered: set[Hashable] = set()  # the planes a launch scatters into: no other touches them
    for m, (ir, member_keys) in enumerate(members):
        if not fusible(ir):
            raise EagleValueError(f"hawk.fusion.fuse: kernel {ir.name!r} stores inside an if; it cannot be "
                                  "fused")
        where: list[int] = []
        outputs = [k for k, slot in enumerate(ir.slots) if slot.table is not None and slot.role != "read"]
        for k, (slot, plane_key) in enumerate(zip(ir.slots, member_keys, strict=True)):
            if plane_key is not None and (plane_key in scattered or (k in outputs
                                          and any(plane_key == key[0] for key in by_key))):
                raise EagleValueError(f"hawk.fusion.fuse: kernel {ir.name!r}: plane {slot.name!r} is a "
                                      "Scatter's "
                                 "output in this run and is used by another launch of it; give the "
                                 "launches different planes, or run them apart")
            # a plane read as a Table and the same plane read per sample are two read-only slots
            key = None if plane_key is None else (plane_key, slot.table is not None)
            if key is not None and key in by_key:
                j = by_key[key]
                slots[j] = _joined(slots[j], slot)
            else:
                j = len(slots)
                slots.append(_named(slot, {s.name for s in slots}, m))
                origins.append((m, k))
                keys.append(key)
                if key is not None:
                    by_key[key] = j
            where.append(j)
        scattered.update(member_keys[k] for k in outputs)
        body += _Copier(where, stored, m, len(sites)).body(ir.body)
        sites += [(m, site) for site in range(tables.sites(ir))]
    body = _without_dead_stores(body, [key is None or live(key[0]) for key in keys])
    return replace(_compacted(KernelIR(name, slots, body), origins), sites=sites)


def _named(slot: Slot, taken: set[str], member: int) -> Slot:
    """``slot`` under a name no slot of the fused kernel has (its launch's number appended)."""
    name = slot.name if slot.name not in taken else f"{slot.name}_{member}"
    while name in taken:
        name += "_"
    return replace(slot, name=name)


def _joined(a: Slot, b: Slot) -> Slot:
    """One slot for two launches' uses of one plane: read by one, written by another -> readwrite."""
    if (a.dtype, a.components, a.cell, a.table) != (b.dtype, b.components, b.cell, b.table):
        raise EagleValueError(f"hawk.fusion.fuse: planes {a.name!r} and {b.name!r} have one key but differ "
                         "in dtype, components or cell; give them different keys")
    role = a.role if a.role == b.role else "readwrite"
    return replace(a, role=role, reduction=None)


class _Copier:
    """A launch's statements with fresh vars, slot numbers of the fused kernel, and loads of
    what the run stored at this sample replaced by the stored value."""

    def __init__(self, where: list[int], stored: dict[tuple[int, int], Operand], member: int,
                 first_site: int) -> None:
        self.where = where
        self.stored = stored
        self.member = member
        self.first_site = first_site  # the run's number of the launch's checked site 0
        self.vars: dict[int, Operand] = {}
        self.copied: set[int] = set()  # ids of the vars given a copy

    def operand(self, o: Operand) -> Operand:
        return self.vars.get(id(o), o) if isinstance(o, Var) else o

    def fresh(self, v: Var) -> Var:
        """The copy of ``v``: one per var, which every assignment of it (an if's arms) writes."""
        if id(v) not in self.copied:
            self.vars[id(v)] = Var(v.dtype, v.uniform, v.name)
            self.copied.add(id(v))
        return self.vars[id(v)]  # type: ignore[return-value]

    def checked(self, s: Gather | ScatterAdd) -> dict[str, int]:
        """A checked access's site in the run's numbering, and its launch."""
        return {"site": self.first_site + s.site, "member": self.member} if s.mode == "check" else {}

    def body(self, stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, Load):
                slot = (self.where[s.slot], s.comp)
                value = self.stored.get(slot)
                if value is None:
                    out.append(Load(self.fresh(s.dst), slot[0], s.comp))
                elif isinstance(value, Var) and strong(value.dtype) == strong(s.dst.dtype) \
                        and value.uniform == s.dst.uniform:
                    self.vars[id(s.dst)] = value
                else:  # a constant, or another type: assigned as the store would convert it
                    out.append(Op(self.fresh(s.dst), "copy", (value,)))
            elif isinstance(s, Op):
                args = tuple(self.operand(a) for a in s.args)
                out.append(Op(self.fresh(s.dst), s.op, args))
            elif isinstance(s, Store):
                value = self.operand(s.value)
                slot = (self.where[s.slot], s.comp)
                self.stored[slot] = value
                out.append(Store(slot[0], s.comp, value))
            elif isinstance(s, Loop):
                count, index = self.operand(s.count), self.fresh(s.index)
                body = self.body(s.body)  # before the updates: they are vars the body defines
                out.append(Loop(count, index, body, [self.fresh(c) for c in s.carried],
                                [self.operand(v) for v in s.init], [self.fresh(u) for u in s.update]))
            elif isinstance(s, Gather):  # a Table's memory: no run stores to it (eagle cuts the run)
                out.append(replace(s, dst=self.fresh(s.dst), slot=self.where[s.slot],
                                   index=tuple(map(self.operand, s.index)), **self.checked(s)))
            elif isinstance(s, ScatterAdd):
                out.append(replace(s, slot=self.where[s.slot], index=tuple(map(self.operand, s.index)),
                                   value=self.operand(s.value), **self.checked(s)))
            else:
                cond = self.operand(s.cond)
                out.append(If(cond, self.body(s.then), self.body(s.orelse)))
        return out


def _without_dead_stores(body: list[Stmt], live: list[bool]) -> list[Stmt]:
    """The body with only the last store of each plane component, and none to a dead plane.  A
    plane the run reads from memory before storing it is live whatever ``live`` says: its next
    run (a replay, a loop's next turn) reads what this one stores."""
    loaded = {s.slot for s in walk(body) if isinstance(s, (Load, Gather))}
    live = [alive or k in loaded for k, alive in enumerate(live)]
    last: dict[tuple[int, int], int] = {}
    for position, s in enumerate(body):
        if isinstance(s, Store):
            last[(s.slot, s.comp)] = position
    return [s for position, s in enumerate(body)
            if not isinstance(s, Store) or (live[s.slot] and last[(s.slot, s.comp)] == position)]


def _compacted(ir: KernelIR, origins: list[tuple[int, int]]) -> Fused:
    """``ir`` without the slots it no longer touches, each kept slot's role what the body does."""
    loaded = {s.slot for s in walk(ir.body) if isinstance(s, (Load, Gather))}
    stored = {s.slot for s in walk(ir.body) if isinstance(s, Store)}
    scatters = {s.slot for s in walk(ir.body) if isinstance(s, ScatterAdd)}  # a Scatter keeps its role
    kept = [k for k in range(len(ir.slots)) if k in loaded or k in stored or k in scatters]
    number = {k: j for j, k in enumerate(kept)}
    slots = []
    for k in kept:
        s = ir.slots[k]
        role = s.role if s.role == "value" or k in scatters else (
            "readwrite" if k in loaded and k in stored else "write" if k in stored else "read")
        slots.append(replace(s, role=role))
    return Fused(KernelIR(ir.name, slots, _renumbered(ir.body, number)), [origins[k] for k in kept])


def _renumbered(body: list[Stmt], number: dict[int, int]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, Load):
            out.append(Load(s.dst, number[s.slot], s.comp))
        elif isinstance(s, (Gather, ScatterAdd)):
            out.append(replace(s, slot=number[s.slot]))
        elif isinstance(s, Store):
            out.append(Store(number[s.slot], s.comp, s.value))
        elif isinstance(s, If):
            out.append(If(s.cond, _renumbered(s.then, number), _renumbered(s.orelse, number)))
        elif isinstance(s, Loop):
            out.append(Loop(s.count, s.index, _renumbered(s.body, number), s.carried, s.init, s.update))
        else:
            out.append(s)
    return out
