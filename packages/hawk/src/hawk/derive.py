"""Derivative kernels from the IR: a vjp (reverse mode) and a jvp (forward mode).

vjp.  The derived kernel re-runs the forward statements, then walks them
last to first accumulating adjoints, with each ``if`` mirrored so that only
the arm that ran is reversed (no 0 * NaN from an arm that did not run).  A
sample owns its own input gradients; a value the same for every sample (a
``Param``, a reduction) gets per-sample partial adjoints that are summed
across samples in eagle's fixed order where the sum is needed: at a
reduction, and for the gradient of a ``Param``.  Uniform adjoints that are
the same for every sample are accumulated in a separate sweep that runs
once, so nothing is added once per sample by mistake.

jvp.  The derived kernel carries a tangent beside every float value,
statement by statement; a reduction's tangent is the same reduction of the
tangents.

A loop is reversed turn by turn, last to first, each turn recomputed from the
loop's start (:meth:`_Vjp.reverse_loop`): exact for any per-sample number of
turns, with no storage, at the cost of count * (count + 1) / 2 forward turns.
In the jvp a loop carries each carried var's tangent beside it.

Both use one table of partial derivatives (:func:`_partial`): the
contribution of an operand given the derivative flowing through the op.
Values with no float type (integers, conditions) carry no derivative; the
number of turns an ``if`` takes is piecewise constant and carries none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from eagle.extend import EagleValueError
from hawk import partials, records, tables
from hawk.ir import (
    REDUCTIONS,
    Const,
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
from hawk.types import is_float, promote, result_dtype, strong


def differentiable(v: Operand) -> bool:
    return isinstance(v, Var) and is_float(v.dtype)


@dataclass
class _Builder:
    """Appends new statements to ``body`` and makes the vars they define."""

    body: list[Stmt] = field(default_factory=list)

    def op(self, op: str, *args: Operand, dtype: str | None = None) -> Var:
        if dtype is None:
            dtype = promote(args[1].dtype, args[2].dtype) if op == "select" else \
                result_dtype(op, *(a.dtype for a in args))
        uniform = op in REDUCTIONS or all(isinstance(a, Const) or a.uniform for a in args)
        dst = Var(strong(dtype) if not uniform else dtype, uniform)
        self.body.append(Op(dst, op, args))
        return dst

    def accumulate(self, target: Var, value: Operand) -> None:
        if isinstance(value, Var) and value.dtype != target.dtype:
            value = self.op("cast", value, dtype=target.dtype)
        self.body.append(Op(target, "add", (target, value)))

    def zero(self, var: Var) -> Var:
        self.body.append(Op(var, "copy", (Const(0.0, strong(var.dtype)),)))
        return var


def _partial(b: _Builder, s: Op, k: int, grad: Var) -> Operand | None:
    """The contribution to operand ``k`` of ``s`` of the derivative ``grad`` flowing through
    ``s.dst`` (``grad * d dst / d operand_k``); None for none."""
    a = s.args
    t = strong(s.dst.dtype)

    def c(value: float) -> Const:
        return Const(value, t)

    op = s.op
    if op in ("copy", "add") or (op == "sub" and k == 0):
        return grad
    if op == "sub" or op == "neg":
        return b.op("neg", grad)
    if op == "cast":
        return b.op("cast", grad, dtype=strong(a[0].dtype))
    if op == "mul":
        return b.op("mul", grad, a[1 - k])
    if op == "div":
        first = b.op("div", grad, a[1])
        return first if k == 0 else b.op("neg", b.op("div", b.op("mul", grad, s.dst), a[1]))
    if op == "mod":
        return grad if k == 0 else b.op("neg", b.op("mul", grad, b.op("floor", b.op("div", a[0], a[1]))))
    if op == "pow":
        if k == 0:
            return b.op("mul", grad, b.op("mul", a[1], b.op("pow", a[0], b.op("sub", a[1], c(1.0)))))
        positive = b.op("gt", a[0], c(0.0))
        return b.op("select", positive, b.op("mul", b.op("mul", grad, s.dst),
                                             b.op("log", b.op("select", positive, a[0], c(1.0)))), c(0.0))
    if op == "sin":
        return b.op("mul", grad, b.op("cos", a[0]))
    if op == "cos":
        return b.op("neg", b.op("mul", grad, b.op("sin", a[0])))
    if op == "tan":
        return b.op("mul", grad, b.op("add", c(1.0), b.op("mul", s.dst, s.dst)))
    if op == "exp":
        return b.op("mul", grad, s.dst)
    if op == "log":
        return b.op("div", grad, a[0])
    if op == "sqrt":
        return b.op("div", b.op("mul", grad, c(0.5)), s.dst)
    if op == "abs":
        sign = b.op("select", b.op("gt", a[0], c(0.0)), c(1.0),
                    b.op("select", b.op("lt", a[0], c(0.0)), c(-1.0), c(0.0)))
        return b.op("mul", grad, sign)
    if op in ("minimum", "maximum"):
        wins = b.op("lt" if op == "minimum" else "gt", a[k], a[1 - k])
        tie = b.op("eq", a[0], a[1])
        return b.op("select", wins, grad, b.op("select", tie, b.op("mul", grad, c(0.5)), c(0.0)))
    if op == "select":
        if k == 0:
            return None
        zero = c(0.0)
        return b.op("select", a[0], grad, zero) if k == 1 else b.op("select", a[0], zero, grad)
    if op in partials.PARTIALS:
        return partials.PARTIALS[op](b, s, k, grad)
    return None  # floor, ceil, floordiv, comparisons, logic: piecewise constant


# ------------------------------------------------------------------- vjp


@dataclass(frozen=True)
class Cotangent:
    """A cotangent input of a vjp: the primal slot it seeds."""

    name: str
    slot: int


def seeded(primal: KernelIR) -> list[Cotangent]:
    """What a vjp takes cotangents for: float outputs and float Mutables the kernel writes."""
    out, seen = [], set()
    for s in primal.body:
        if isinstance(s, Store) and is_float(primal.slots[s.slot].dtype) and s.slot not in seen:
            seen.add(s.slot)
            slot = primal.slots[s.slot]
            out.append(Cotangent(f"d_{slot.name}", s.slot))
    for k in tables.scattered(primal):  # a Scatter parameter: a cotangent of its shape
        out.append(Cotangent(f"d_{primal.slots[k].name}", k))
    return out


def inputs(primal: KernelIR) -> list[int]:
    """The primal slots that get a gradient: float arguments (Mutable ones by their old value)."""
    return [k for k, s in enumerate(primal.slots) if s.role != "write" and is_float(s.dtype)
            and k not in tables.scattered(primal)]  # a Scatter's old values are all overwritten


class _Vjp:
    def __init__(self, primal: KernelIR, cotangents: list[Cotangent], ct_slots: list[Slot],
                 wanted: list[int]) -> None:
        self.primal = primal
        self.wanted = wanted
        self.b = _Builder()
        nargs = sum(s.role != "write" for s in primal.slots)
        self.slots = [replace(s, role="read") if s.role == "readwrite" else s for s in primal.slots[:nargs]]
        self.ct_index = {c.slot: nargs + j for j, c in enumerate(cotangents)}
        self.slots += ct_slots
        self.varying: dict[int, Var] = {}  # adjoint of a varying var, or partials of a uniform one
        self.uniform: dict[int, Var] = {}  # the same-for-every-sample adjoint of a uniform var
        #: adjoint vars something was added into; any other is a symbolic zero, sent nowhere (a
        #: zero cotangent through d log = 1/x at x = 0 would make 0/0 = NaN)
        self.nonzero: set[int] = set()
        #: a wanted Table -> its gradient slot, which the gathers' adjoints scatter into
        self.table_grads = tables.gradient_slots(primal, wanted, self.slots)

    # adjoint vars: made on first use, zeroed at the top of the body
    def adj(self, v: Var, uniform_part: bool) -> Var:
        table = self.uniform if uniform_part else self.varying
        if id(v) not in table:
            table[id(v)] = Var(strong(v.dtype), uniform_part, f"d{v.name}" if v.name else "")
        return table[id(v)]

    def run(self) -> KernelIR:
        forward = [s for s in self.primal.body if not isinstance(s, Store)]
        b = self.b
        b.body.extend(forward)
        seeds = self.seed_statements()
        reverse = _Builder()
        self.b = reverse
        self.reverse_top(forward)
        grads = _Builder()
        self.b = grads
        result = self.gradients()
        zeros = _Builder()
        for table in (self.uniform, self.varying):
            for var in table.values():
                zeros.zero(var)
        forward_again = tables.without_scatters(forward)
        body = live_only([*forward_again, *zeros.body, *seeds, *reverse.body, *grads.body])
        return KernelIR(f"{self.primal.name}_vjp", self.slots, body, result)

    def seed_statements(self) -> list[Stmt]:
        saved, self.b = self.b, _Builder()
        for s in self.primal.body:
            if not (isinstance(s, Store) and s.slot in self.ct_index and differentiable(s.value)):
                continue
            ct_slot = self.ct_index[s.slot]
            ct = Var(strong(self.slots[ct_slot].dtype), self.slots[ct_slot].uniform, "ct")
            self.b.body.append(Load(ct, ct_slot, s.comp))
            self.add(self.adj(s.value, s.value.uniform and ct.uniform), ct)
        seeds, self.b = self.b.body, saved
        return seeds

    def reverse_top(self, body: list[Stmt]) -> None:
        """Segments between top-level reductions, last to first, each in two sweeps."""
        cut = len(body)
        for position in range(len(body) - 1, -1, -1):
            s = body[position]
            if isinstance(s, Op) and s.op in REDUCTIONS:
                self.sweeps(body[position + 1:cut])
                self.reduction(s)
                cut = position
        self.sweeps(body[:cut])

    def sweeps(self, body: list[Stmt]) -> None:
        self.reverse(body, uniform_sweep=True, in_varying=False)
        self.reverse(body, uniform_sweep=False, in_varying=False)

    def reverse(self, body: list[Stmt], uniform_sweep: bool, in_varying: bool) -> None:
        for s in reversed(body):
            if isinstance(s, If):
                varying = in_varying or not s.cond.uniform
                if uniform_sweep and varying:
                    continue
                outer, arms = self.b, []
                for arm in (s.then, s.orelse):
                    self.b = _Builder()
                    self.reverse(arm, uniform_sweep, varying)
                    arms.append(self.b.body)
                self.b = outer
                if arms[0] or arms[1]:
                    self.b.body.append(If(s.cond, arms[0], arms[1]))
            elif isinstance(s, Loop):
                self.reverse_loop(s, uniform_sweep, in_varying)
            elif isinstance(s, Op) and differentiable(s.dst) and s.op not in REDUCTIONS:
                if uniform_sweep and (not s.dst.uniform or in_varying):
                    continue
                self.propagate(s, self.adj(s.dst, uniform_sweep), uniform_sweep)
            elif isinstance(s, ScatterAdd) and not uniform_sweep and s.slot in self.ct_index \
                    and differentiable(s.value):
                # what a sample added to a cell gets that cell's cotangent: a gather of it
                ct = Var(strong(s.value.dtype), False, "ct")
                self.b.body.append(Gather(ct, self.ct_index[s.slot], s.index, tables.unchecked(s.mode)))
                self.add(self.adj(s.value, False), ct)
            elif isinstance(s, Gather) and not uniform_sweep and s.slot in self.table_grads \
                    and id(self.adj(s.dst, False)) in self.nonzero:
                # the adjoint of a read goes to the cell read, in the fixed order (ScatterAdd)
                grad = self.adj(s.dst, False)
                mode = tables.unchecked(s.mode)
                self.b.body.append(ScatterAdd(self.table_grads[s.slot], s.index, grad, mode))

    def reverse_loop(self, s: Loop, uniform_sweep: bool, in_varying: bool) -> None:
        """Turn t = count - 1, …, 0: the carried vars set back to their start, t turns run again,
        turn t's body run forward (its carried vars still at their values from turn t - 1), then
        reversed.  A carried var's adjoint goes to its update and starts again from 0 (the var
        before the turn is another value); the body's own adjoints start each turn from 0.  The
        uniform sweep reverses (and recomputes) only the loop's values the same for every sample."""
        pairs = list(zip(s.carried, s.update, strict=True))
        body = s.body
        if uniform_sweep:
            if in_varying or not any(c.uniform for c in s.carried):
                return
            body, pairs = _uniform_only(body), [(c, u) for c, u in pairs if c.uniform]
        # (a load is the same value every turn: its adjoint sums over the turns; a gather's is
        # the turn's own, recorded by the turn's ScatterAdd)
        own = {id(x.dst): x.dst for x in walk(body) if isinstance(x, (Op, Gather)) and differentiable(x.dst)
               and all(x.dst is not c for c, _ in pairs)}.values()

        def turn() -> None:
            for c, u in reversed(pairs):
                if differentiable(c) and id(self.adj(c, uniform_sweep)) in self.nonzero:
                    self.add(self.adj(u, uniform_sweep), self.adj(c, uniform_sweep))
                    self.b.zero(self.adj(c, uniform_sweep))
            self.reverse(body, uniform_sweep, in_varying)

        outer, before = self.b, set(self.nonzero)
        for _ in range(2):  # a dry run finds the adjoints a turn touches (carried: from the turn after)
            self.b = _Builder()
            turn()
        touched = self.nonzero - before
        self.nonzero |= touched  # accumulated across turns, never a first copy
        last = outer.op("sub", outer.op("cast", s.count, dtype="i64"), Const(1, "i64"))
        back = Var("i64", True, "back")
        self.b = _Builder()
        t = self.b.op("sub", last, back)
        starts = [(c, start) for c, start in zip(s.carried, s.init, strict=True)
                  if any(c is k for k, _ in pairs)]
        self.b.body += [Op(c, "copy", (start,)) for c, start in starts]
        self.b.body.append(Loop(t, s.index, body, [c for c, _ in starts], [start for _, start in starts],
                                [u for _, u in pairs]))
        self.b.body.append(Op(s.index, "copy", (t,)))
        self.b.body.extend(body)
        for v in own:  # (touched here, or by the dry runs of a loop around this one)
            if id(self.adj(v, uniform_sweep)) in self.nonzero:
                self.b.zero(self.adj(v, uniform_sweep))
        turn()
        outer.body.append(Loop(s.count, back, self.b.body))
        self.b = outer
        if uniform_sweep:  # the varying sweep, after this one, reads the loop's values as it left them
            outer.body += [Op(c, "copy", (start,)) for c, start in starts]
            outer.body.append(Loop(s.count, s.index, body, [c for c, _ in starts],
                                   [start for _, start in starts], [u for _, u in pairs]))

    def propagate(self, s: Op, grad: Var, uniform_sweep: bool) -> None:
        if id(grad) not in self.nonzero:
            return
        for k, arg in enumerate(s.args):
            if not differentiable(arg):
                continue
            contribution = _partial(self.b, s, k, grad)
            if contribution is not None:
                self.add(self.adj(arg, uniform_sweep), contribution)

    def add(self, target: Var, value: Operand) -> None:
        """``target += value``; the first contribution to an adjoint is a copy (0 + value but for
        the sign of a zero): a fused chain's adjoints are not one add longer per value.  A
        gradient stays the same bits: it is stored as 0 + its total, which makes every zero +0,
        and a zero adjoint only ever meets products and sums, which keep it a zero."""
        if id(target) in self.nonzero:
            self.b.accumulate(target, value)
        else:
            if isinstance(value, Var) and value.dtype != target.dtype:
                value = self.b.op("cast", value, dtype=target.dtype)
            self.b.body.append(Op(target, "copy", (value,)))
            self.nonzero.add(id(target))

    def reduction(self, s: Op) -> None:
        """r = reduce(x): the whole adjoint of r (its uniform part plus the sum of its
        per-sample partials, in the fixed order), sent back to the samples of x that made r."""
        x = s.args[0]
        if s.op not in ("sum", "max", "min") or not differentiable(x):
            return
        if not {id(self.adj(s.dst, False)), id(self.adj(s.dst, True))} & self.nonzero:
            return
        partials = self.b.op("sum", self.adj(s.dst, False), dtype=s.dst.dtype)
        spread: Operand = self.b.op("add", self.adj(s.dst, True), partials)
        if s.op != "sum":  # max, min: every sample equal to the result gets it (ties all do)
            spread = self.b.op("select", self.b.op("eq", x, s.dst), spread, Const(0.0, strong(x.dtype)))
        self.add(self.adj(x, False), spread)

    def gradients(self) -> dict[str, int]:
        """Store each input's gradient: per-sample planes directly, uniform ones summed."""
        loads: dict[tuple[int, int], list[Var]] = {}
        for s in walk(self.primal.body):
            if isinstance(s, Load) and differentiable(s.dst):
                loads.setdefault((s.slot, s.comp), []).append(s.dst)
        result = {}
        for k in self.wanted:
            slot = self.primal.slots[k]
            if k in self.table_grads:
                result[slot.name] = self.table_grads[k]
                continue
            grad_slot = Slot(f"grad_{slot.name}", "write", strong(slot.dtype), slot.components, slot.uniform,
                             shape=slot.shape)
            self.slots.append(grad_slot)
            index = len(self.slots) - 1
            result[slot.name] = index
            for comp in range(max(slot.components, 1)):
                self.b.body.append(Store(index, comp, self.total(loads.get((k, comp), []), slot)))
        return result

    def total(self, loads: list[Var], slot: Slot) -> Operand:
        t = strong(slot.dtype)
        value: Operand = Const(0.0, t)
        for v in loads:
            value = self.b.op("add", value, self.adj(v, False))
        if slot.uniform:
            if isinstance(value, Var) and not value.uniform:
                value = self.b.op("sum", value, dtype=t)
            for v in loads:
                value = self.b.op("add", value, self.adj(v, True))
        return value


def _uniform_only(body: list[Stmt]) -> list[Stmt]:
    """The statements of ``body`` that compute values the same for every sample (they read no
    other: a uniform var is made of uniform operands)."""
    out: list[Stmt] = []
    for s in body:
        if isinstance(s, (Op, Load)) and s.dst.uniform:
            out.append(s)
        elif isinstance(s, If) and s.cond.uniform:
            out.append(If(s.cond, _uniform_only(s.then), _uniform_only(s.orelse)))
        elif isinstance(s, Loop):
            pairs = [(c, u) for c, u in zip(s.carried, s.update, strict=True) if c.uniform]
            out.append(Loop(s.count, s.index, _uniform_only(s.body), [c for c, _ in pairs],
                            [i for c, i in zip(s.carried, s.init, strict=True) if c.uniform],
                            [u for _, u in pairs]))
    return out


def dependencies(primal: KernelIR) -> dict[int, frozenset[int]]:
    """Output slot -> the input slots (:func:`inputs`) its stored values carry a derivative of.

    A value depends on an input when a chain of differentiable operands (those :func:`_partial`
    gives a contribution for) joins them; a condition, a comparison, ``floor`` carry none.  A
    reverse pass uses it to leave out of its path an input no seeded output depends on: sending
    it a zero adjoint through the vjp could still make 0 * inf = NaN upstream.
    """
    sources = set(inputs(primal))
    deps: dict[int, frozenset[int]] = {}
    out: dict[int, frozenset[int]] = {}
    changed = True
    while changed:  # a fixed point, so a value used before a later assignment is still covered
        changed = False
        for s in walk(primal.body):
            if isinstance(s, (Load, Gather)) and differentiable(s.dst) and s.slot in sources:
                found = frozenset({s.slot})
            elif isinstance(s, Op) and differentiable(s.dst):
                found = frozenset().union(*(deps.get(id(a), frozenset()) for k, a in enumerate(s.args)
                                            if differentiable(a) and _carries(s, k)))
            elif isinstance(s, (Store, ScatterAdd)) and differentiable(s.value):
                changed |= _join(out, s.slot, deps.get(id(s.value), frozenset()))
                continue
            elif isinstance(s, Loop):  # a carried var: what its update depends on, turn after turn
                for c, u in zip(s.carried, s.update, strict=True):
                    changed |= _join(deps, id(c), deps.get(id(u), frozenset()))
                continue
            else:
                continue
            changed |= _join(deps, id(s.dst), found)
    stored = {s.slot for s in walk(primal.body) if isinstance(s, (Store, ScatterAdd))}
    return {slot: out.get(slot, frozenset()) for slot in sorted(stored)}


def _join(table: dict[int, frozenset[int]], key: int, found: frozenset[int]) -> bool:
    """Add ``found`` to ``table[key]``; whether that grew it."""
    before = table.get(key, frozenset())
    table[key] = before | found
    return not found <= before


def _carries(s: Op, k: int) -> bool:
    """Whether operand ``k`` of ``s`` gets a derivative: the table :func:`_partial` (or, for a
    reduction, :meth:`_Vjp.reduction`) uses, asked on a scratch builder."""
    if s.op in REDUCTIONS:
        return s.op in ("sum", "max", "min")
    return _partial(_Builder(), s, k, Var(strong(s.dst.dtype), s.dst.uniform)) is not None


def vjp(primal: KernelIR, ct_slots: list[Slot], seeds: list[Cotangent] | None = None,
        wanted: list[int] | None = None) -> KernelIR:
    """The vjp kernel of ``primal`` given its cotangent slots (in the order of ``seeds``).

    ``seeds``: the outputs that get a cotangent (:func:`seeded` by default); any other output's
    cotangent is a symbolic zero, so nothing is derived from it.  ``wanted``: the inputs
    (:func:`inputs`) whose gradient is stored, in order (all by default).  Only what reaches a
    wanted gradient is kept (:func:`live_only`): a ``Param`` not wanted has no cross-sample sum,
    so a vjp of per-sample kernel that wants no Param stays per-sample.
    """
    cotangents = seeded(primal) if seeds is None else seeds
    wanted = inputs(primal) if wanted is None else wanted
    tables_wanted = {k for k in wanted if primal.slots[k].table is not None}

    def refuse(why: str) -> Exception:
        return EagleValueError(f"hawk.kernel {primal.name}.vjp: the gradient of a Table read in a loop: "
                               f"{why}; "
                          "or ask for the gradients of the other inputs only (kernel.vjp_of(wrt=...))")

    # the adjoint of a Table read is a ScatterAdd, which records a row per turn of its loop
    records.refuse_uncapped(primal.body, lambda s: isinstance(s, Gather) and s.slot in tables_wanted, refuse)
    return _Vjp(primal, cotangents, ct_slots, wanted).run()


def live_only(body: list[Stmt]) -> list[Stmt]:
    """``body`` without the statements no ``Store`` depends on (dead code of a derived kernel:
    the forward statements of an output not seeded, the adjoints of an input not wanted).

    Vars may be assigned more than once (adjoints accumulate); a backward walk keeps a statement
    when its var is live after it.  An ``if`` is live when an arm keeps something; what is live
    before it is what either arm needs, and its condition.
    """
    kept, _ = _live(body, set())
    return kept


def _live(body: list[Stmt], live: set[int]) -> tuple[list[Stmt], set[int]]:
    out: list[Stmt] = []
    for s in reversed(body):
        if isinstance(s, (Store, ScatterAdd)):
            out.append(s)
            live.update(id(v) for v in (s.value, *getattr(s, "index", ())) if isinstance(v, Var))
        elif isinstance(s, (Op, Load, Gather)):
            if id(s.dst) not in live:
                continue
            out.append(s)
            live.discard(id(s.dst))
            if not isinstance(s, Load):
                live.update(id(a) for a in (s.args if isinstance(s, Op) else s.index) if isinstance(a, Var))
        elif isinstance(s, Loop):
            loop, live = _live_loop(s, live)
            if loop is not None:
                out.append(loop)
        else:
            then, live_then = _live(s.then, set(live))
            orelse, live_else = _live(s.orelse, set(live))
            if not then and not orelse:
                continue
            out.append(If(s.cond, then, orelse))
            live = live_then | live_else | {id(s.cond)}
    out.reverse()
    return out, live


def _live_loop(s: Loop, live: set[int]) -> tuple[Loop | None, set[int]]:
    """A loop keeps what is live after it or in the next turn (a derived loop accumulates
    adjoints in place, turn after turn) and the updates of the carried vars that are: a fixed
    point; what is live before it is what its kept body reads."""
    need = {id(c) for c in s.carried if id(c) in live}
    entry: set[int] = set()
    while True:
        body, before = _live(s.body, live | entry | {id(u) for c, u in zip(s.carried, s.update, strict=True)
                                                     if id(c) in need})
        grown = need | {id(c) for c in s.carried if id(c) in before}
        if grown == need and before == entry:
            break
        need, entry = grown, before
    if not body:
        return None, live
    kept = [k for k, c in enumerate(s.carried) if id(c) in need]
    loop = Loop(s.count, s.index, body, [s.carried[k] for k in kept], [s.init[k] for k in kept],
                [s.update[k] for k in kept])
    before.discard(id(s.index))
    count = {id(s.count)} if isinstance(s.count, Var) else set()
    return loop, before | {id(c) for c in loop.carried} | count


# ------------------------------------------------------------------- jvp


def jvp(primal: KernelIR, tangent_slots: list[Slot]) -> KernelIR:
    """The jvp kernel: the primal's work and results, then a tree ``{"result": tangent of the
    result, name: tangent of each float Mutable written}``; ``tangent_slots`` follow
    :func:`inputs` (a Param's tangent is a value)."""
    slots = list(primal.slots)
    nargs = sum(s.role != "write" for s in slots)
    slots[nargs:nargs] = tangent_slots  # tangents after the arguments, before the outputs
    shift = len(tangent_slots)

    def moved(k: int) -> int:
        return k + shift if k >= nargs else k

    tangent_of = {k: nargs + j for j, k in enumerate(inputs(primal))}
    tangents: dict[int, Var] = {}
    zeros = _Builder()

    def carry(body: list[Stmt]) -> list[Stmt]:
        b = _Builder()
        for s in body:
            if isinstance(s, Store):
                b.body.append(Store(moved(s.slot), s.comp, s.value))
                continue
            if isinstance(s, If):
                b.body.append(If(s.cond, carry(s.then), carry(s.orelse)))
                continue
            if isinstance(s, Loop):
                b.body.append(carry_loop(s, carry(s.body)))
                continue
            b.body.append(s)
            if isinstance(s, Load) and s.slot in tangent_of and differentiable(s.dst):
                t = tangent(s.dst, primal.slots[s.slot].uniform)
                b.body.append(Load(t, tangent_of[s.slot], s.comp))
            elif isinstance(s, Gather) and s.slot in tangent_of and differentiable(s.dst):
                # the tangent's cell
                b.body.append(replace(s, dst=tangent(s.dst, False), slot=tangent_of[s.slot]))
            elif isinstance(s, ScatterAdd) and is_float(primal.slots[s.slot].dtype):
                b.body.append(scattered_tangent(s))
            elif isinstance(s, Op) and differentiable(s.dst):
                step(b, s)
        return b.body

    def scattered_tangent(s: ScatterAdd) -> ScatterAdd:
        """A Scatter's tangent: the same scatter of the values' tangents, into an output of its shape."""
        slot = primal.slots[s.slot]
        if s.slot not in t_slot_of:
            slots.append(Slot(f"t_{slot.name}", "write", slot.dtype, table=slot.table))
            t_slot_of[s.slot] = len(slots) - 1
        value = tangents.get(id(s.value)) if isinstance(s.value, Var) else None
        return replace(s, slot=t_slot_of[s.slot], value=value or Const(0.0, slot.dtype),
                       mode=tables.unchecked(s.mode))

    def tangent(v: Var, uniform: bool) -> Var:
        if id(v) not in tangents:
            tangents[id(v)] = zeros.zero(Var(strong(v.dtype), uniform, f"t{v.name}" if v.name else ""))
        return tangents[id(v)]

    def carry_loop(s: Loop, body: list[Stmt]) -> Loop:
        """The loop, its carried vars' tangents carried beside them."""
        pairs = [(c, u) for c, u in zip(s.carried, s.update, strict=True) if id(c) in has]
        carried = [tangent(c, c.uniform) for c, _ in pairs]
        return Loop(s.count, s.index, body, [*s.carried, *carried],
                    [*s.init, *(tangent(c, c.uniform) for c, _ in pairs)],
                    [*s.update, *(tangent(u, u.uniform) for _, u in pairs)])

    def step(b: _Builder, s: Op) -> None:
        if s.op in REDUCTIONS:
            x = s.args[0]
            if s.op not in ("sum", "max", "min") or id(x) not in tangents:
                return
            tx = tangents[id(x)]
            if s.op != "sum":
                tx = b.op("select", b.op("eq", x, s.dst), tx, Const(0.0, strong(x.dtype)))
            b.body.append(Op(tangent(s.dst, True), "sum", (tx,)))  # a reduction of the tangents
            return
        parts = [_partial(b, s, k, tangents[id(a)]) for k, a in enumerate(s.args)
                 if isinstance(a, Var) and id(a) in tangents]
        parts = [p for p in parts if p is not None]
        if not parts:
            if id(s.dst) in has:  # assigned again (a loop's turn, an if's arm): no stale tangent
                b.body.append(Op(tangent(s.dst, s.dst.uniform), "copy", (Const(0.0, strong(s.dst.dtype)),)))
            return
        uniform = all(isinstance(p, Const) or p.uniform for p in parts)
        value = parts[0]
        for p in parts[1:]:
            value = b.op("add", value, p)
        target = tangent(s.dst, uniform and s.dst.uniform)
        if isinstance(value, Var) and value.dtype != target.dtype:
            value = b.op("cast", value, dtype=target.dtype)
        b.body.append(Op(target, "copy", (value,)))

    has = _with_tangents(primal.body, set(tangent_of))
    t_slot_of: dict[int, int] = {}  # primal output, Mutable or Scatter slot -> its tangent slot
    body = carry(primal.body)
    stores = _Builder()
    for s in primal.body:
        if isinstance(s, Store) and is_float(primal.slots[s.slot].dtype):
            slot = primal.slots[s.slot]
            if s.slot not in t_slot_of:
                slots.append(Slot(f"t_{slot.name}", "write", slot.dtype, slot.components, slot.cell,
                                  shape=slot.shape))
                t_slot_of[s.slot] = len(slots) - 1
            value = tangents.get(id(s.value)) if isinstance(s.value, Var) else None
            stores.body.append(Store(t_slot_of[s.slot], s.comp, value or Const(0.0, slot.dtype)))
    tree = {"result": _retree(primal.result, t_slot_of.get),
            **{primal.slots[k].name: t for k, t in t_slot_of.items() if primal.slots[k].role != "write"}}
    result = (_retree(primal.result, lambda k: k + shift), tree)
    return KernelIR(f"{primal.name}_jvp", slots, [*zeros.body, *body, *stores.body], result)


def _with_tangents(body: list[Stmt], seeded_slots: set[int]) -> set[int]:
    """The vars some assignment gives a tangent (a fixed point: a loop's turn feeds the next)."""
    has: set[int] = set()
    grown = True
    while grown:
        before = len(has)
        for s in walk(body):
            if isinstance(s, (Load, Gather)) and s.slot in seeded_slots and differentiable(s.dst):
                has.add(id(s.dst))
            elif isinstance(s, Op) and differentiable(s.dst) and any(
                    id(a) in has and _carries(s, k) for k, a in enumerate(s.args) if isinstance(a, Var)):
                has.add(id(s.dst))
            elif isinstance(s, Loop):
                has.update(id(c) for c, u in zip(s.carried, s.update, strict=True) if id(u) in has)
        grown = len(has) > before
    return has


def _retree(tree: object, leaf: Callable[[int], int | None]) -> object:
    """The same tree with each slot index k replaced by leaf(k)."""
    if tree is None:
        return None
    if isinstance(tree, dict):
        return {k: _retree(v, leaf) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(_retree(v, leaf) for v in tree)
    return leaf(tree)
