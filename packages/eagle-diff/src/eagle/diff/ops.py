"""The operations of a reverse pass, each emitting its libeagle items.

An operation reads and writes *adjoints*: one array per place, which the
pass allocates (:class:`Context`).  A leaf's operation takes the adjoints of
what the leaf wrote as cotangents, clears them, and adds its gradients into
the adjoints of what it read; a choice's reverses the arm that ran; a loop's
reverses its turns.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eagle.diff import _native
from eagle.diff.steps import Leaf, Place, place
from eagle.extend import EagleKeyError, EagleTypeError, Program

#: ``fn(primals, cotangents) -> {read name: gradient}``: a node's derivative given by hand.
Vjp = Callable[[dict[str, Any], dict[str, Any]], Mapping[str, Any]]


class Context:
    """What operations emit with: the adjoint array of each place, and shared scratch."""

    def __init__(self) -> None:
        self.adj: dict[Place, np.ndarray] = {}
        self._scratch: dict[tuple[Any, ...], list[np.ndarray]] = {}
        self._zeros: dict[tuple[Any, ...], np.ndarray] = {}
        self.keep: list[Any] = []

    def scratch(self, like: list[np.ndarray]) -> list[np.ndarray]:
        """Arrays shaped like ``like``, distinct from each other, shared with other calls: a
        vjp's gradients, added into adjoints right after it."""
        used: Counter[tuple[Any, ...]] = Counter()
        out = []
        for a in like:
            key = (a.shape, a.dtype.str)
            pool = self._scratch.setdefault(key, [])
            if used[key] == len(pool):
                pool.append(np.empty(a.shape, a.dtype))
            out.append(pool[used[key]])
            used[key] += 1
        return out

    def zeros(self, like: np.ndarray) -> np.ndarray:
        """A zero cotangent (never written)."""
        key = (like.shape, like.dtype.str)
        if key not in self._zeros:
            self._zeros[key] = np.zeros(like.shape, like.dtype)
        return self._zeros[key]


@dataclass(eq=False)
class Zero:
    places: list[Place]

    def uses(self) -> set[Place]:
        return set(self.places)

    def emit(self, program: Program, ctx: Context) -> None:
        for p in self.places:
            _native.zero(program, ctx.adj[p])


@dataclass(eq=False)
class Capture:
    """Copy an adjoint aside: the gradient of a place as its first writer left it."""

    place: Place
    into: np.ndarray

    def uses(self) -> set[Place]:
        return {self.place}

    def emit(self, program: Program, ctx: Context) -> None:
        _native.copy(program, ctx.adj[self.place], self.into)


@dataclass(eq=False)
class KernelBack:
    """A hawk kernel's vjp: cotangents from the adjoints it wrote, gradients into those it read.

    ``direct``: places whose adjoint this is the first to touch, so the vjp
    writes its gradient straight into it (no clear, no sum); ``dead``: written
    places whose adjoint nothing reads after this, so it is not cleared.
    """

    leaf: Leaf
    values: dict[Place, np.ndarray]
    active: frozenset[Place]
    direct: set[Place] = field(default_factory=set)
    dead: set[Place] = field(default_factory=set)

    def uses(self) -> set[Place]:
        return set((self.leaf.float_writes | self.leaf.float_reads) & self.active)

    def can_define(self, p: Place) -> bool:
        """Whether the vjp can write p's adjoint whole: p is one read plane of the leaf, not written."""
        reading = [q for q in self.leaf.planes if q.reads and q.place == p]
        return len(reading) == 1 and p not in self.leaf.writes

    def emit(self, program: Program, ctx: Context) -> None:
        bound = self.leaf.node.payload
        kernel = bound.plan.source
        count = len(kernel.params)
        params = bound.plan.params
        slot = {p.name: k for k, p in enumerate(params)}
        params_of = {s.name: s.place for s in self.leaf.params}

        def target(name: str) -> Place | None:
            """The place of an argument: its plane's, its float Param's; None for another value."""
            if name in params_of or params[slot[name]].role == "value":
                return params_of.get(name)
            return place(bound.args[slot[name]])

        # only the active: an inactive input gets no gradient (a Param not asked for, no
        # cross-sample sum), an inactive output no cotangent (a symbolic zero)
        seeded = [p.name for p in self.leaf.planes if p.writes and p.place in self.active]
        wrt = [name for name, _ in kernel.params if name in slot and target(name) in self.active]
        vjp = kernel.vjp_of(wrt, seeded)
        args = [a if params[k].role == "value" else self.values[place(a)]
                for k, a in enumerate(bound.args[:count])]
        cts = [ctx.adj[place(bound.args[slot[name[len("d_"):]]])] for name, _ in vjp.params[count:]]
        probe = vjp.plan(*args, *cts)  # compiles once; tells the gradients' shapes
        of = {id(g): name for name, g in probe.result().items()}
        names = [of[id(g)] for g in probe.outputs]
        into = [ctx.adj[target(name)] if target(name) in self.direct else s
                for name, s in zip(names, ctx.scratch(probe.outputs), strict=True)]
        back = vjp.plan(*args, *cts, buffer=into)
        back.emit(program)
        ctx.keep.append(back)
        for p in self.leaf.planes:
            if p.writes and p.place in self.active and p.place not in self.dead:
                _native.zero(program, ctx.adj[p.place])
        for name, grad in zip(names, into, strict=True):
            if target(name) not in self.direct:
                _native.accumulate(program, grad, ctx.adj[target(name)])


@dataclass(eq=False)
class CopyBack:
    src: Place
    dst: Place
    active: frozenset[Place]

    def uses(self) -> set[Place]:
        return {self.src, self.dst} & self.active

    def emit(self, program: Program, ctx: Context) -> None:
        if self.src in self.active:
            _native.accumulate(program, ctx.adj[self.dst], ctx.adj[self.src])
        _native.zero(program, ctx.adj[self.dst])


@dataclass(eq=False)
class ReduceBack:
    """``out = op(x)``: a sum's adjoint to every sample, a max's to the samples equal to it."""

    x: Place
    out: Place
    op: str
    value: np.ndarray | None  # x as the reduce read it (max)
    active: frozenset[Place]

    def uses(self) -> set[Place]:
        return {self.x, self.out} & self.active

    def emit(self, program: Program, ctx: Context) -> None:
        if self.x in self.active and self.op == "sum":
            _native.spread(program, ctx.adj[self.out], ctx.adj[self.x])
        elif self.x in self.active and self.op in ("max", "min"):
            _native.extremum(program, self.value, ctx.adj[self.out], ctx.adj[self.x], self.op == "max")
        _native.zero(program, ctx.adj[self.out])


@dataclass(eq=False)
class CallBack:
    """A ``vjps=`` function run in place of a node's derivative, as a callback of the pass."""

    leaf: Leaf
    label: str
    values: dict[Place, np.ndarray]
    fn: Vjp
    active: frozenset[Place]

    def uses(self) -> set[Place]:
        return set((self.leaf.float_writes | self.leaf.float_reads) & self.active)

    def emit(self, program: Program, ctx: Context) -> None:
        program.callback(lambda: self.call(ctx))

    def call(self, ctx: Context) -> None:
        leaf = self.leaf
        primals = {p.name: _readonly(self.values.get(p.place, p.array)) for p in leaf.planes if p.reads}
        primals.update({s.name: s.value for s in leaf.params})
        cotangents = {p.name: ctx.adj[p.place].copy() if p.place in self.active else ctx.zeros(p.array)
                      for p in leaf.planes if p.writes and p.place in leaf.float_writes}
        grads = self.fn(primals, cotangents)
        if not isinstance(grads, Mapping):
            raise EagleTypeError(f"eagle.diff.reverse: the vjp of {self.label!r} returned "
                                 f"{type(grads).__name__}; "
                            "return a dict {read name: gradient}")
        reads = {p.name: p.place for p in leaf.planes if p.reads} | {s.name: s.place for s in leaf.params}
        extra = sorted(set(grads) - set(reads))
        if extra:
            raise EagleKeyError(f"eagle.diff.reverse: the vjp of {self.label!r} returned gradients for "
                           f"{', '.join(map(repr, extra))}, which the node does not read; it reads "
                           f"{', '.join(map(repr, reads))}")
        for p in leaf.planes:
            if p.writes and p.place in self.active:
                ctx.adj[p.place][...] = 0
        for name, grad in grads.items():
            target = reads[name]
            if target in self.active:
                adj = ctx.adj[target]
                adj += np.broadcast_to(np.asarray(grad, adj.dtype), adj.shape)


@dataclass(eq=False)
class RowBack:
    """A row move sent back: a row moved out gives its cotangent to row ``index[0]`` of the table;
    a row moved in takes that row's cotangent, which the table's row then no longer has."""

    put: bool
    index: np.ndarray  # the index as the move read it
    table: Place
    row: Place
    active: frozenset[Place]

    def uses(self) -> set[Place]:
        return {self.table, self.row} & self.active

    def emit(self, program: Program, ctx: Context) -> None:
        program.callback(lambda: self.call(ctx))

    def call(self, ctx: Context) -> None:
        t = int(self.index.reshape(-1)[0])
        table = ctx.adj[self.table] if self.table in self.active else None
        row = ctx.adj[self.row] if self.row in self.active else None
        if self.put and table is not None:
            if row is not None:
                row += table[t]
            table[t] = 0
        elif not self.put and row is not None:
            if table is not None:
                table[t] += row
            row[...] = 0


@dataclass(eq=False)
class ChoiceBack:
    cell: np.ndarray
    kind: str
    keys: list[int]
    arms: list[list[Any]]

    def uses(self) -> set[Place]:
        return set().union(*(op.uses() for arm in self.arms for op in arm))

    def emit(self, program: Program, ctx: Context) -> None:
        subs = [_sub(arm, ctx) for arm in self.arms]
        if self.kind == "if":
            program.if_(self.cell, subs[0], subs[1])
        else:
            program.switch(self.cell, dict(zip(self.keys, subs[:-1], strict=True)), subs[-1])


@dataclass(eq=False)
class LoopBack:
    """The turns last to first: each restored from the tape, run again, then reversed."""

    tape: _native.Tape
    state: list[np.ndarray | None]  # where the tape's state is restored to (None: not needed)
    again: list[Any]  # the turn's items, run again on the loop's own arrays
    turn: list[Any]  # the turn's reverse
    kept: list[Any] = field(default_factory=list)  # tapes of loops inside, their snapshots

    def uses(self) -> set[Place]:
        return set().union(*(op.uses() for op in self.turn))

    def emit(self, program: Program, ctx: Context) -> None:
        self.tape.rewind(program)
        body = Program().stage()
        self.tape.restore(body, self.state)
        for item in self.again:
            item.emit(body)
        for op in self.turn:
            op.emit(body, ctx)
        program.loop(self.tape.count, body, "count", -1)
        ctx.keep.append(self.kept)


def _sub(ops: list[Any], ctx: Context) -> Program:
    program = Program().stage()
    for op in ops:
        op.emit(program, ctx)
    return program


def _readonly(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view
