"""A run of kernel reverses as one generated function.

Consecutive per-sample hawk kernels on the reverse path reverse as one vjp
kernel: :func:`hawk.fusion.fuse` joins the run's forward IRs (slots by
place, stores forwarded to the loads after them, intermediates in
registers), :func:`hawk.derive.vjp` derives it, and the kernel recomputes
the run's forward from the values its kernels read, then walks the adjoints
last to first.  Nothing the forward stored inside the run is read back, and
the requested ``Param`` gradients are reductions of that one kernel that
wait for nothing: one phase, one barrier for the run, not one per kernel.

Same bits as reversing the kernels one by one: the statements are theirs,
through the same emitter; a place the run reads from before the run is a
slot of its own per kernel and per argument, so each kernel's gradient of
it is summed in that kernel's own order and added into the adjoint in the
order the kernels reverse (last to first), as the unfused pass adds them;
each ``Param`` is its own fixed-order sum.  Only the cotangents of places
whose adjoint may already hold something (the seeds, and what a reverse
earlier in the pass touched) are read: any other is a symbolic zero.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from typing import Any

from eagle.diff import _native
from eagle.diff.ops import Context, KernelBack
from eagle.diff.steps import Leaf, Place, place
from eagle.extend import Program
from hawk import derive, fusion
from hawk.ir import Gather, If, KernelIR, Load, Loop, Op, ScatterAdd, Slot, Stmt, Store, Var, walk
from hawk.kernel import from_ir
from hawk.types import is_float

#: Statements of the run's forward IRs a fused reverse takes at most.  Each iteration of the fused
#: sample loop carries one vector of samples through the run's forward and then its adjoints, one
#: chain of dependent operations; a loop body longer than about half the core's reorder window
#: cannot overlap the next iteration and waits on that chain.  Measured (medians, 2 threads, the
#: reverse program alone): the 100-kernel chain of benchmarks/bench_diff.py at 4,096 samples 499 us
#: at 400 statements, 287 at 60, 223 at 30, unfused 374; at 262,144: 92, 60, 59 and 123 ms; the
#: 20-kernel logistic chain of benchmarks/run.py at 65,536: 912 us at 120, 667 at 60, 536 at 30,
#: unfused 958; the 20-kernel scale/shift chain: 65 us at 60 and more, 74 at 30, unfused 242.
MAX_STATEMENTS = 30


def joins(op: Any, shared: Any) -> bool:
    """Whether ``op`` may join a fused run: a hawk kernel's reverse whose kernel is per-sample (but
    for the Tables it reads) and fusible, none of whose planes shares memory with another place
    (``shared``: the pass's memory groups, whose adjoints are views of one buffer)."""
    return isinstance(op, KernelBack) and leaf_joins(op.leaf, shared)


def leaf_joins(leaf: Leaf, shared: Any) -> bool:
    """Whether a hawk kernel leaf's reverse may join a fused run (:func:`joins`)."""
    ir = leaf.node.payload.plan.compiled.ir
    nested = [s for top in ir.body if isinstance(top, (If, Loop)) for s in walk([top]) if isinstance(s, Load)]
    return (_per_sample_but_tables(ir) and fusion.fusible(ir) and not nested
            and not any(p.place in shared for p in leaf.planes))


def _per_sample_but_tables(ir: KernelIR) -> bool:
    """Per-sample but for the Tables it reads: their gradients are the fused vjp's Scatters, each
    Table of each kernel a slot of its own (read from before the run; :attr:`RunBack.whole`
    keeps a run reading one written inside it apart)."""
    return ir.per_sample or (not ir.reductions and not any(isinstance(s, ScatterAdd) for s in walk(ir.body))
                             and all(s.role == "read" or (s.table is None and not s.cell) for s in ir.slots))


def statements(leaf: Leaf) -> int:
    """The statements a kernel leaf adds to a fused run (its cap is :data:`MAX_STATEMENTS`)."""
    return fusion.size(leaf.node.payload.plan.compiled.ir)


def runs(ops: list[Any], shared: Any, incoming: set[Place]) -> list[Any]:
    """``ops`` (in reverse order) with every run of two or more joinable kernel reverses over one
    sample count replaced by one :class:`RunBack`; ``incoming``: the places whose adjoint may hold
    something before the first of ``ops`` (grown as the walk goes)."""
    out: list[Any] = []
    run: list[KernelBack] = []

    def close() -> None:
        fused = RunBack(run[::-1], run[0].active, frozenset(incoming)) if len(run) > 1 else None
        if fused is not None and fused.whole:
            out.append(fused)
        else:
            out.extend(run)
        for op in run:
            incoming.update(op.uses())
        run.clear()

    for op in ops:
        if joins(op, shared):
            n = op.leaf.node.payload.samples
            if run and (run[0].leaf.node.payload.samples != n
                        or sum(statements(r.leaf) for r in [*run, op]) > MAX_STATEMENTS
                        or cuts(op.leaf, [r.leaf for r in run])):
                close()
            run.append(op)
            continue
        close()
        out.append(op)
        incoming.update(op.uses())
    close()
    return out


def cuts(leaf: Leaf, later: list[Leaf]) -> bool:
    """Whether a run walked backwards is cut before kernel ``leaf``: it writes a place a ``later``
    kernel of the run reads as a Table, whose adjoint would reach that place after the run, past
    the reverse of its writer."""
    return bool(_planes(leaf, "written") & set().union(*(_planes(k, "table") for k in later)))


def _planes(leaf: Leaf, which: str) -> set[Place]:
    """The places a kernel leaf reads as a Table ("table") or writes ("written")."""
    bound = leaf.node.payload
    slots = bound.plan.compiled.ir.slots
    return {place(arg) for arg, s in zip(bound.args, slots, strict=False)
            if ((s.table is not None and s.role == "read") if which == "table"
                else s.role in ("write", "readwrite"))}


@dataclass(eq=False)
class RunBack:
    """The reverse of ``members`` (hawk kernel reverses, in forward order) as one vjp kernel.

    ``direct`` and ``dead`` as for :class:`~eagle.diff.ops.KernelBack`.
    """

    members: list[KernelBack]
    active: frozenset[Place]
    incoming: frozenset[Place]
    direct: set[Place] = field(default_factory=set)
    dead: set[Place] = field(default_factory=set)

    def __post_init__(self) -> None:
        written: set[Place] = set()
        parts = []
        for m, op in enumerate(self.members):
            bound = op.leaf.node.payload
            ir = bound.plan.compiled.ir
            keys: list[Hashable | None] = []
            for k, (slot, arg) in enumerate(zip(ir.slots, bound.args, strict=False)):
                if slot.role == "value":
                    keys.append(None)
                    continue
                p = place(arg)
                # read from before the run: a slot per kernel and argument, so each gradient of it
                # is its own, added in the unfused order
                keys.append((p, m, k) if slot.role == "read" and p not in written else p)
                if slot.role != "read":
                    written.add(p)
            parts.append((_loads_first(ir), keys))
        self.written = frozenset(written)
        fused = fusion.fuse(parts, lambda key: key in self.active and key in self.incoming,
                            "_".join(dict.fromkeys(op.leaf.node.payload.plan.name for op in self.members)))
        # the arguments first (a vjp keeps the forward's slot numbers for them), the outputs after;
        # slot names of their own: the kernel's parameters and gradients go by them
        order = sorted(range(len(fused.ir.slots)), key=lambda j: fused.ir.slots[j].role == "write")
        number = {old: new for new, old in enumerate(order)}
        slots = [replace(fused.ir.slots[j], name=f"{fused.ir.slots[j].name}_{j}") for j in order]
        self.forward = KernelIR(fused.ir.name, slots, _renumbered(fused.ir.body, number))
        self.origins = [fused.origins[j] for j in order]
        self.targets = [self.target(j) for j in range(len(self.origins))]
        # a plane loaded from memory is one a kernel of the run reads (else its value is not kept)
        self.whole = all(self.members[m].leaf.node.payload.plan.compiled.ir.slots[k].role != "write"
                         for (m, k), s in zip(self.origins, self.forward.slots, strict=True)
                         if s.role in ("read", "readwrite"))
        self.outputs = [j for j, s in enumerate(self.forward.slots) if s.role != "read" and s.role != "value"
                        and is_float(s.dtype) and self.targets[j] in self.active]

    def target(self, j: int) -> Place | None:
        """The place fused slot ``j`` stands for: its plane's, its float Param's (None for a
        value of another type, which has no gradient)."""
        m, k = self.origins[j]
        op = self.members[m]
        bound = op.leaf.node.payload
        slot = bound.plan.compiled.ir.slots[k]
        if slot.role == "value":
            return next((s.place for s in op.leaf.params if s.name == slot.name), None)
        return place(bound.args[k])

    def value(self, j: int) -> Any:
        """What fills fused slot ``j`` of the vjp: a Param's value, or the plane as its kernel read it."""
        m, k = self.origins[j]
        op = self.members[m]
        arg = op.leaf.node.payload.args[k]
        return arg if self.forward.slots[j].role == "value" else op.values[place(arg)]

    def reads(self) -> set[tuple[int, Place]]:
        """(member, place) of every plane the vjp takes as its kernel read it (:meth:`value`)."""
        return {(m, place(self.members[m].leaf.node.payload.args[k]))
                for (m, k), s in zip(self.origins, self.forward.slots, strict=True)
                if s.role in ("read", "readwrite")}

    def uses(self) -> set[Place]:
        grads = {self.targets[j] for j in derive.inputs(self.forward)}
        return {self.targets[j] for j in self.outputs} | (grads & self.active)

    def can_define(self, p: Place) -> bool:
        """Whether the vjp can write p's adjoint whole: one slot's gradient, a place the run does
        not write."""
        return p not in self.written and sum(self.targets[j] == p for j in derive.inputs(self.forward)) == 1

    def emit(self, program: Program, ctx: Context) -> None:
        slots = self.forward.slots
        wanted = [j for j in derive.inputs(self.forward) if self.targets[j] in self.active]
        seeds = [c for c in derive.seeded(self.forward) if c.slot in self.outputs]
        ct_slots = [Slot(c.name, "read", slots[c.slot].dtype, slots[c.slot].components, slots[c.slot].cell)
                    for c in seeds]
        vjp = from_ir(derive.vjp(self.forward, ct_slots, seeds, wanted), derivative="vjp")
        args = [self.value(j) for j, s in enumerate(slots) if s.role != "write"]
        cts = [ctx.adj[self.targets[c.slot]] for c in seeds]
        grads = {slots[j].name: self.targets[j] for j in wanted}
        probe = vjp.plan(*args, *cts)  # compiles once; tells the gradients' shapes
        of = {id(g): name for name, g in probe.result().items()}
        names = [of[id(g)] for g in probe.outputs]
        into = [ctx.adj[grads[name]] if grads[name] in self.direct else s
                for name, s in zip(names, ctx.scratch(probe.outputs), strict=True)]
        back = vjp.plan(*args, *cts, buffer=into)
        back.emit(program)
        ctx.keep.append(back)
        for p in sorted({self.targets[j] for j in self.outputs}, key=repr):
            if p not in self.dead:
                _native.zero(program, ctx.adj[p])
        # the unfused order: the kernels last to first, each's arguments in order
        order = {name: (-self.origins[j][0], self.origins[j][1]) for j, name in
                 ((j, slots[j].name) for j in wanted)}
        for name, grad in sorted(zip(names, into, strict=True), key=lambda ng: order[ng[0]]):
            if grads[name] not in self.direct:
                _native.accumulate(program, grad, ctx.adj[grads[name]])


def _loads_first(ir: KernelIR) -> KernelIR:
    """``ir`` with its plane loads first, each value then taken through a copy, the copies in
    reverse slot order.  Fused, a load of what the run stored is that stored value; through its
    copy, each argument's adjoint is still its own, and the reverse walk adds them into the stored
    value's adjoint kernel by kernel, each kernel's in slot order: the order the unfused pass adds
    each kernel's gradients into the adjoint array."""
    loads = [s for s in ir.body if isinstance(s, Load) and ir.slots[s.slot].role != "value"]
    raw = {id(s): Var(s.dst.dtype, s.dst.uniform, s.dst.name) for s in loads}
    copies = [Op(s.dst, "copy", (raw[id(s)],)) for s in sorted(loads, key=lambda s: (-s.slot, -s.comp))]
    rest = [s for s in ir.body if id(s) not in raw]
    return KernelIR(ir.name, ir.slots, [*(Load(raw[id(s)], s.slot, s.comp) for s in loads), *copies, *rest],
                    ir.result)


def _renumbered(body: list[Stmt], number: dict[int, int]) -> list[Stmt]:
    """``body`` with slot ``k`` read and written as slot ``number[k]``."""

    def moved(s: Stmt) -> Stmt:
        if isinstance(s, If):
            return If(s.cond, [moved(x) for x in s.then], [moved(x) for x in s.orelse])
        if isinstance(s, Loop):
            return replace(s, body=[moved(x) for x in s.body])
        if isinstance(s, (Load, Store, Gather)):  # a Table's read moves with its slot too
            return replace(s, slot=number[s.slot])
        return s

    return [moved(s) for s in body]
