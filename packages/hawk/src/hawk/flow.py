"""Control flow in a kernel: loops, ``break``/``continue``, early ``return``, short-circuit logic.

The front end's lowerer (:class:`hawk.frontend._Lowerer`) takes these methods from :class:`Flow`.
Everything is lowered to structured IR: an ``If`` or a :class:`~hawk.ir.Loop`, never a jump.

- A loop runs a trip count that is the same for every sample (a number, a ``Param``, a one-cell
  value).  A local defined before the loop and rebound in it is *carried* (as Triton infers it)
  and keeps its dtype; a local first assigned in the body is not readable after the loop.
- ``break``, ``continue`` and ``return`` set per-sample flags (locals of the lowerer, merged at
  every ``if`` like any other); the statements after one run under an ``If`` on "this sample
  goes on".  A sample that broke runs its later turns as nothing.
- ``while cond:`` needs its cap written out: ``while hawk.capped(cond, 64):`` runs while
  ``cond`` holds, at most 64 turns (a loop of 64 turns that breaks where ``cond`` fails).
- ``a and b`` / ``a or b`` evaluate ``b`` only where it decides the result (an ``If``), so
  ``i >= 0 and t[i] > 0`` guards the read.
- A returned value is held in a local per leaf of the return tree until the end of the kernel,
  where the outputs are stored; every ``return`` gives the same tree.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from typing import Any

from eagle.extend import EagleTypeError
from hawk import frontend_values
from hawk.ir import Const, If, Loop, Op, Operand, Var, walk
from hawk.types import WEAK, Kind, promote, strong
from hawk.values import StructKind, StructValue, describe, flatten, same_shape


def capped(cond: Any, cap: int) -> Any:
    """``while hawk.capped(cond, cap):`` in a kernel: the loop runs while ``cond`` holds, at most
    ``cap`` turns (a number, a ``Param`` or a one-cell value); a ``while`` without a cap is
    refused.  Outside a kernel it is ``cond``.

    >>> from hawk import Scalar
    >>> @hawk.kernel
    ... def halvings(x: Scalar) -> Scalar:
    ...     n = 0.0
    ...     while hawk.capped(x > 1.0, 100):
    ...         x = x / 2.0
    ...         n = n + 1.0
    ...     return n
    >>> halvings(np.array([0.5, 3.0, 1000.0]))
    array([ 0.,  2., 10.])
    """
    del cap
    return cond


def capped_range(*bounds: int) -> range:
    """``for i in hawk.capped_range(n, cap):`` (or ``capped_range(start, stop, cap)``) in a kernel:
    ``i`` runs as in ``range(n)`` (``range(start, stop)``), at most ``cap`` turns, where ``n``
    (``start``, ``stop``) may differ per sample; ``cap`` is a number, a ``Param`` or a one-cell
    value.  It is ``for i in range(cap):`` with ``if i >= n: break`` first.  Outside a kernel it
    is that range.

    >>> from hawk import Int32, Scalar
    >>> @hawk.kernel
    ... def powers(x: Scalar, n: Int32) -> Scalar:
    ...     acc = 1.0
    ...     for _ in hawk.capped_range(n, 8):
    ...         acc = acc * x
    ...     return acc
    >>> powers(np.array([2.0, 2.0, 3.0]), np.array([0, 3, 20], np.int32))
    array([1.000e+00, 8.000e+00, 6.561e+03])
    >>> list(hawk.capped_range(2, 9, 3))
    [2, 3, 4]

    A loop whose turns read a Table needs a cap that is a number for that Table's gradient (a
    record per turn, :mod:`hawk.records`):

    >>> from hawk import Param, Table
    >>> @hawk.kernel
    ... def trail(x: Scalar, t: Table.clamp, k: Param[Int32]) -> Scalar:
    ...     acc = x
    ...     for j in hawk.capped_range(k, 8):
    ...         acc = acc * 0.5 + t[hawk.sample() - j]
    ...     return acc
    >>> x = np.zeros(4)
    >>> t = np.array([1.0, 2.0, 4.0, 8.0])
    >>> trail(x, t, 2)
    array([1.5, 2. , 4. , 8. ])
    >>> trail.vjp(x, t, 2, np.ones(4))["t"]      # the reads of both turns, to their cells
    array([2.5, 1.5, 1.5, 0.5])
    """
    if len(bounds) not in (2, 3):
        raise EagleTypeError("hawk.capped_range: give (n, cap) or (start, stop, cap)")
    *span, cap = bounds
    start, stop = [0, *span][-2:]
    return range(start, min(stop, start + max(cap, 0)))


@dataclass
class Unbound:
    """A name not assigned on every path to here."""

    line: int
    place: str = "one arm of the if"


@dataclass
class _LoopFlags:
    """The env keys of one loop's per-sample flags."""

    broke: str
    continued: str


@dataclass
class _Returns:
    """The first ``return`` of a kernel or helper: its tree of leaf numbers and each leaf's dtype
    fixed so far (None: only weak numbers yet), with where each was fixed."""

    tree: object
    line: int
    kinds: list[object]
    dtypes: list[str | None]
    lines: list[int]
    placeholders: list[object]  # per leaf, what the paths that have not returned yet hold
    nodes: list[ast.AST] = field(default_factory=list)


def _flag(value: object) -> bool | None:
    """A flag's value when it is known now, else None."""
    return bool(value.value) if isinstance(value, Const) else None


def targets(nodes: list[ast.stmt]) -> list[str]:
    """The env keys the statements assign (names, ``m[k]``), nested blocks included, in order."""
    keys: dict[str, None] = {}
    for node in nodes:
        for sub in ast.walk(node):
            targets = sub.targets if isinstance(sub, ast.Assign) else \
                [sub.target] if isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.For)) else []
            while any(isinstance(t, (ast.Tuple, ast.List)) for t in targets):  # a, b = ...: each name
                targets = [e for t in targets
                           for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])]
            for t in targets:
                if isinstance(t, ast.Name):
                    keys[t.id] = None
                elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and \
                        isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, int):
                    keys[f"{t.value.id}[{t.slice.value}]"] = None
    return list(keys)


def _placeholder(value: object) -> object:
    """A weak zero (False for a bool) of ``value``'s shape: what a returned leaf holds on the
    paths that have not returned yet."""
    parts, rebuild = flatten(value)
    weak = [{"b": "bool", "f": "wf"}.get(strong(p.dtype)[0], "wi") for p in parts]
    return rebuild([Const(False if d == "bool" else 0, d) for d in weak])


def _own(node: ast.AST, kinds: tuple[type, ...]) -> bool:
    """Whether ``node`` holds a statement of ``kinds`` that belongs to it (not to a loop inside)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, kinds):
            return True
        if not isinstance(child, (ast.For, ast.While)) and _own(child, kinds):
            return True
    return False


def may_exit(node: ast.stmt) -> bool:
    """Whether a statement can leave the rest of its block undone: a return anywhere in it, a
    break or continue of the enclosing loop."""
    if isinstance(node, (ast.Return, ast.Break, ast.Continue)):
        return True
    if any(isinstance(n, ast.Return) for n in ast.walk(node)):
        return True
    return not isinstance(node, (ast.For, ast.While)) and _own(node, (ast.Break, ast.Continue))


class Flow:
    """The control-flow part of the lowerer (see the module's docstring)."""

    # set up by the lowerer: frame (a prefix of its flag keys), loops, returns
    frame: str
    loops: list[_LoopFlags]
    returns: _Returns | None
    leaves: list  # the leaves of the return being lowered: (value, annotation, node)

    # ------------------------------------------------------------- blocks
    def block(self, stmts: list[ast.stmt], guard_first: bool = False) -> None:
        """Lower ``stmts``; after one that may exit (and before the first, with ``guard_first``),
        the rest runs under an ``If`` on the samples that go on."""
        for k, stmt in enumerate(stmts):
            if guard_first or (k and may_exit(stmts[k - 1])):
                alive, flags = self.alive()
                if _flag(alive) is False:
                    return  # no sample gets here: Python's dead code after a break or return
                if _flag(alive) is None:
                    self.guarded(alive, flags, stmts[k:])
                    return
            guard_first = False
            self.statement(stmt)

    def flag_keys(self) -> list[str]:
        keys = [f"{self.frame}returned"]
        if self.loops:
            keys += [self.loops[-1].broke, self.loops[-1].continued]
        return keys

    def alive(self) -> tuple[Operand, list[str]]:
        """Whether this sample goes on (not returned, not broken out, not continued), and the flag
        keys not known now."""
        unknown, out = [], Const(True, "bool")
        for key in self.flag_keys():
            value = self.env.get(key)
            if value is None or _flag(value) is False:
                continue
            if _flag(value):
                return Const(False, "bool"), []
            unknown.append(key)
            out = self.apply("and", [out, self.apply("not", [value], None)], None)
        return out, unknown

    def guarded(self, alive: Var, flags: list[str], stmts: list[ast.stmt]) -> None:
        """``stmts`` run where ``alive``; where not, one flag is set when only one was unknown."""
        stmt, before, outer = If(alive), dict(self.env), self.body
        self.depth += 1
        self.env, self.body = dict(before), stmt.then
        self.block(stmts)
        then_env = self.env
        self.depth -= 1
        else_env = dict(before)
        if len(flags) == 1:
            else_env[flags[0]] = Const(True, "bool")
        self.env, self.body = dict(before), outer
        outer.append(stmt)
        self.merge(stmt, then_env, else_env, stmts[0])

    def missing(self, key: str, line: int) -> Operand | Unbound:
        """What an arm that never assigned ``key`` holds: a returned leaf holds a placeholder (its
        sample returns later, or the kernel is refused for falling off its end)."""
        if key.startswith(f"{self.frame}leaf_") and self.returns is not None:
            return self.returns.placeholders[int(key.rsplit("_", 1)[1])]
        if key.startswith(self.frame):  # a flag: not set on that path
            return Const(False, "bool")
        return Unbound(line)

    # ------------------------------------------------------- and, or
    def short_circuit(self, node: ast.BoolOp) -> Operand:
        """``a and b``: b only where a holds (``a or b``: where a fails), as an if into a fresh var."""
        is_and = isinstance(node.op, ast.And)
        out = self.truth(self.expr(node.values[0]), node.values[0])
        for operand in node.values[1:]:
            if _flag(out) is not None:  # decided now: the rest is the result, or not looked at
                if _flag(out) is is_and:
                    out = self.truth(self.expr(operand), operand)
                continue
            stmt, outer, before = If(out), self.body, self.env
            self.depth += 1
            self.body, self.env = stmt.then if is_and else stmt.orelse, dict(before)
            value = self.truth(self.expr(operand), operand)
            self.depth -= 1
            self.body, self.env = outer, before
            outer.append(stmt)
            out = self.phi(stmt, [value, out] if is_and else [out, value])
        return out

    # ------------------------------------------------------------ loops
    def loop_statement(self, node: ast.For | ast.While) -> None:
        if node.orelse:
            raise self.src.refuse(node, "`else` on a loop is not in hawk; set a flag where the loop "
                                        "breaks and test it after the loop")
        if isinstance(node, ast.While):
            self.while_loop(node)
        else:
            self.for_loop(node)

    def for_loop(self, node: ast.For) -> None:
        call = node.iter
        fn = self.resolve(call.func) if isinstance(call, ast.Call) else None
        if isinstance(node.target, ast.Name) and fn is capped_range and not call.keywords:
            return self.capped_for(node, call)
        if not (isinstance(node.target, ast.Name) and isinstance(call, ast.Call) and not call.keywords
                and fn is builtins.range and 1 <= len(call.args) <= 3):
            raise self.src.refuse(node, "a kernel loops `for i in range(n)`, `range(a, b)` or "
                                        "`range(a, b, step)`, `for i in hawk.capped_range(n, cap)` (or "
                                        "`while hawk.capped(cond, cap):`)")
        bounds = [self.expr(a) for a in call.args[:2]]
        for bound, at in zip(bounds, call.args, strict=False):
            self.uniform_count(bound, at, "the bounds of range(...)")
        if len(bounds) == 1:
            bounds.insert(0, Const(0, "wi"))
        step_node = call.args[2] if len(call.args) == 3 else None
        step = 1
        if step_node is not None:
            value = self.expr(step_node)
            if not (isinstance(value, Const) and isinstance(value.value, int) and value.value) or \
                    isinstance(value.value, bool):
                raise self.src.refuse(step_node, "the step of range(a, b, step) is a nonzero integer "
                                                 "written out (or a number from the module)")
            step = value.value
        start, stop = bounds[0], bounds[1]
        # turns: ceil((stop - start) / step), none when that is 0 or less
        span = self.apply("sub", [stop, start] if step > 0 else [start, stop], node)
        count = self.apply("floordiv", [self.apply("add", [span, Const(abs(step) - 1, "wi")], node),
                                        Const(abs(step), "wi")], node)

        def turn(index: Var) -> None:
            value = self.apply("add", [start, self.apply("mul", [index, Const(step, "wi")], node)], node)
            self.assign(node.target, self.cast(value, promote(start.dtype, stop.dtype)), node)

        self.loop(node, node.body, count, turn)

    def capped_for(self, node: ast.For, call: ast.Call) -> None:
        """``for i in hawk.capped_range([start,] stop, cap)``: ``cap`` turns, each first breaking
        the samples whose ``i`` reached their ``stop`` (evaluated once, before the loop)."""
        if len(call.args) not in (2, 3):
            raise self.src.refuse(call, "hawk.capped_range takes (n, cap) or (start, stop, cap)")
        *span, cap = [self.expr(a) for a in call.args]
        self.uniform_count(cap, call.args[-1], "the cap of hawk.capped_range(n, cap)")
        for value, at in zip(span, call.args, strict=False):
            if strong(value.dtype)[0] not in "iu":
                raise self.src.refuse(at, "the bounds of hawk.capped_range(n, cap) are integers (cast "
                                          "a float with hawk.math.int32(...))")
        start, stop = [Const(0, "wi"), *span][-2:]
        broke = f"{self.frame}broke{len(self.loops)}"

        def turn(index: Var) -> None:
            value = self.cast(self.apply("add", [start, index], node), promote(start.dtype, stop.dtype))
            self.assign(node.target, value, node)
            past = self.apply("ge", [value, stop], node)
            self.env[broke] = self.apply("or", [self.env[broke], past], node)

        self.loop(node, node.body, cap, turn, breaks=True)

    def while_loop(self, node: ast.While) -> None:
        test = node.test
        if not (isinstance(test, ast.Call) and self.resolve(test.func) is capped and len(test.args) == 2
                and not test.keywords):
            raise self.src.refuse(node, "a `while` in a kernel states its cap: write `while "
                                        "hawk.capped(cond, 100):` (at most 100 turns), or loop "
                                        "`for i in range(n)`")
        cap = self.expr(test.args[1])
        self.uniform_count(cap, test.args[1], "the cap of hawk.capped(cond, cap)")
        stop = ast.copy_location(ast.If(ast.UnaryOp(ast.Not(), test.args[0]), [ast.Break()], []), test)
        ast.fix_missing_locations(stop)
        self.loop(node, [stop, *node.body], cap, lambda index: None, breaks=True)

    def uniform_count(self, value: Operand, node: ast.AST, what: str) -> None:
        # at decoration no plane's shape is known: whether one is a cell (the same for every sample)
        # is the call's, so a per-sample count is refused when a call lowers it
        shapeless = any(s.components == 0 for s in self.slots)
        varying = not (isinstance(value, Const) or value.uniform)
        if (varying and not shapeless) or strong(value.dtype)[0] not in "iu":
            raise self.src.refuse(node, f"{what} must be integers the same for every sample (a "
                                        "number, a Param[Int32], a one-cell plane); for a per-sample "
                                        "count, state a cap: `for i in hawk.capped_range(n, cap):`")

    def loop(self, node: ast.stmt, stmts: list[ast.stmt], count: Operand, turn: Any,
             breaks: bool = False) -> None:
        """Lower a loop of ``count`` turns whose body is ``stmts``, ``turn(index)`` first in each
        (``breaks``: it may set the loop's broke flag).

        The carried locals and their dtypes are found by lowering the body again until they
        are stable: a weak number that becomes a strong type, a uniform value that becomes
        per-sample, a leaf of a return first met in the body."""
        line = getattr(node, "lineno", 0) + self.src.line_offset
        depth = len(self.loops)
        flags = _LoopFlags(f"{self.frame}broke{depth}", f"{self.frame}continued{depth}")
        returns = any(isinstance(n, ast.Return) for n in ast.walk(node))
        leaf = f"{self.frame}leaf_"
        before = dict(self.env)
        keys = [k for k in targets([node]) if (k in before and not isinstance(before[k], Unbound))
                or k in self.mutated or k.split("[")[0] in self.param_slot]
        if breaks or _own(node, (ast.Break,)):
            before[flags.broke] = Const(False, "bool")
            keys.append(flags.broke)
        if returns:
            keys += [f"{self.frame}returned", *(k for k in before if k.startswith(leaf))]
        self.preload(node, before)
        outer, inits = self.body, {}
        types: dict[str, tuple[str, bool]] = {}
        while True:
            self.body, self.env = outer, before
            for k in keys:
                if k not in inits:
                    inits[k] = self.loop_value(k, before)
                    types[k] = [(v.dtype, isinstance(v, Const) or v.uniform) for v in flatten(inits[k])[0]]
            carried = {k: self.carried_value(k, inits[k], types[k]) for k in keys}
            index = Var("i64", True, "turn")
            body: list = []
            self.env, self.body = {**before, **carried}, body
            self.loops.append(flags)
            self.depth += 1
            turn(index)
            self.env[flags.continued] = Const(False, "bool")
            self.block(stmts, guard_first=flags.broke in before or returns)
            self.depth -= 1
            self.loops.pop()
            end = self.env
            grown = [k for k in end if k.startswith(leaf) and k not in keys and k not in before]
            if not (self.carried_types(keys, inits, end, types, node) or grown):
                break
            keys += grown
        # an update is a var an Op of the body defines (a Load may become another var when fused)
        mine = {id(s.dst) for s in walk(body) if isinstance(s, Op)} - \
            {id(v) for value in carried.values() for v in flatten(value)[0]}
        triples = [t for k, cv in carried.items()
                   for t in self.handed_on(cv, inits[k], end[k], mine, body, outer)]
        self.body = outer
        self.body += [Op(cv, "copy", (start,)) for cv, start, _ in triples]
        self.body.append(Loop(count, index, body, [t[0] for t in triples], [t[1] for t in triples],
                              [t[2] for t in triples]))
        self.env = {k: v for k, v in before.items() if k != flags.broke}
        for k in end:
            if k in carried and k != flags.broke:
                self.env[k] = carried[k]
            elif k not in before and not k.startswith("\0") and k != flags.continued:
                self.env[k] = Unbound(line, "the body of the loop")

    def carried_value(self, key: str, init: object, types: list[tuple[str, bool]]) -> object:
        """What a carried key holds in the body (at the start of a turn): one var per scalar
        operand of its value (a vector: one per component), of the types ``types``.  With
        :meth:`handed_on` and :meth:`carried_types`, the one place a loop makes carried values."""
        name = key.split("[")[0].strip("\1")
        return flatten(init)[1]([Var(d if u else strong(d), u, name) for d, u in types])

    def handed_on(self, carried: object, init: object, end: object, mine: set[int], body: list,
                  outer: list) -> list[tuple[Var, Operand, Var]]:
        """The loop's (carried var, its start, its update) triples for one carried value, one per
        scalar operand (:meth:`handed_one`)."""
        parts = zip(flatten(carried)[0], flatten(init)[0], flatten(end)[0], strict=True)
        return [self.handed_one(cv, start, update, mine, body, outer) for cv, start, update in parts]

    def handed_one(self, cv: Var, init: Operand, end: Operand, mine: set[int], body: list,
                   outer: list) -> tuple[Var, Operand, Var]:
        """One carried scalar: the start cast in the statements before the loop (``outer``), the
        update a var of the body (``mine``: what its Ops define) of the carried var's type."""
        self.body = body
        update = end
        fits = isinstance(end, Var) and end.dtype == cv.dtype and end.uniform == cv.uniform
        if not (fits and id(end) in mine):
            update = Var(cv.dtype, cv.uniform, cv.name)
            body.append(Op(update, "copy", (self.cast(end, cv.dtype),)))
        self.body = outer
        return cv, self.cast(init, cv.dtype), update

    def preload(self, node: ast.stmt, before: dict) -> None:
        """Load before the loop the parameters its body reads (a load is the same every turn)."""
        saved, self.env = self.env, before
        for sub in ast.walk(node):
            key = sub.id if isinstance(sub, ast.Name) else None
            if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and \
                    isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, int):
                key = f"{sub.value.id}[{sub.slice.value}]"
            name, _, comp = (key or "").partition("[")
            slot = self.param_slot.get(name)
            if slot is None or key in before or (not comp and self.slots[slot].components > 1) \
                    or self.slots[slot].table is not None:  # a Table or Scatter: read at its indices
                continue
            if comp and not 0 <= int(comp[:-1]) < max(self.slots[slot].components, 1):
                continue  # refused where the body reads it
            self.read(key, name, int(comp[:-1]) if comp else 0, sub)
        self.env = saved

    def loop_value(self, key: str, before: dict) -> Operand:
        """What a carried key holds as the loop starts (a parameter read now, a leaf's placeholder)."""
        if key in before and not isinstance(before[key], Unbound):
            return before[key]
        found = self.missing(key, 0)
        if not isinstance(found, Unbound):
            return found
        saved, self.env = self.env, before
        name, _, comp = key.partition("[")
        value = self.read(key, name, int(comp[:-1]) if comp else 0, None)
        self.env = saved
        return value

    def carried_types(self, keys: list[str], inits: dict, end: dict, types: dict, node: ast.AST) -> bool:
        """Widen the carried types to what the body makes (weak -> strong, uniform -> per
        sample), operand by operand; whether any changed.  A strong type that changes is
        refused, and so is a value that changes shape (a vector that becomes a number)."""
        changed = False
        for k in keys:
            value = end.get(k)
            if value is None or isinstance(value, Unbound):
                continue
            if not same_shape([inits[k], value]):
                raise self.src.refuse(node, f"the loop makes {k!r} {describe(value)}; it was "
                                            f"{describe(inits[k])} before the loop: a local carried from "
                                            "turn to turn keeps its type")
            for j, part in enumerate(flatten(value)[0]):
                changed |= self.widened(k, part, types[k], j, node)
        return changed

    def widened(self, k: str, value: Operand, types: list[tuple[str, bool]], j: int, node: ast.AST) -> bool:
        """Widen the type of operand ``j`` of carried key ``k`` to ``value``'s; whether it changed."""
        dtype, uniform = types[j]
        new = dtype
        if value.dtype != dtype and value.dtype not in WEAK:
            if dtype not in WEAK and strong(dtype) != strong(value.dtype):
                raise self.src.refuse(node, f"the loop changes {k!r} from {strong(dtype)} to "
                                            f"{strong(value.dtype)}: a local carried from turn to "
                                            "turn keeps one type; cast it where it is assigned, e.g. "
                                            f"hawk.math.float64(...), or assign it that type before "
                                            "the loop")
            new = promote(dtype, value.dtype)
        still = uniform and (isinstance(value, Const) or value.uniform)
        types[j] = (new, still)
        return (new, still) != (dtype, uniform)

    def loop_exit(self, node: ast.Break | ast.Continue) -> None:
        flags = self.loops[-1]  # (Python refuses a break outside a loop when it compiles the function)
        self.env[flags.broke if isinstance(node, ast.Break) else flags.continued] = Const(True, "bool")

    # ---------------------------------------------------------- returns
    def return_statement(self, node: ast.Return) -> None:
        """Hold the returned leaves in the frame's locals; the outputs are stored at the end."""
        line = node.lineno + self.src.line_offset
        outer, self.leaves = self.leaves, []  # a helper called in the returned tree has its own
        tree = None if node.value is None else self.output_tree(node.value, self.src.returns)
        leaves, self.leaves = self.leaves, outer
        first = self.returns
        if first is None:
            self.returns = first = _Returns(tree, line, [k for _, k, _ in leaves], [None] * len(leaves),
                                            [line] * len(leaves), [_placeholder(v) for v, _, _ in leaves],
                                            [at for _, _, at in leaves])
        elif tree != first.tree:
            shown = "nothing" if tree is None else f"`{ast.unparse(node.value)}`"
            raise self.src.refuse(node, f"this return gives {shown} but the return at line {first.line} "
                                        "gives another tree of values; every return of a kernel gives "
                                        "the same tree (the same containers, keys and number of values)")
        for k, (value, kind, at) in enumerate(leaves):
            if not same_shape([first.placeholders[k], value]):
                raise self.src.refuse(at, f"this return gives {describe(value)} but the return at line "
                                          f"{first.line} gives {describe(first.placeholders[k])}; every "
                                          "return gives the same types")
            fixed = self.leaf_dtype(value, kind)
            if fixed is not None and first.dtypes[k] not in (None, fixed):
                raise self.src.refuse(at, f"this return gives a {fixed} value but the return at line "
                                          f"{first.lines[k]} gives {first.dtypes[k]}; cast one so that "
                                          f"they agree, e.g. hawk.math.{_cast(first.dtypes[k])}(...)")
            if fixed is not None and first.dtypes[k] is None:
                first.dtypes[k], first.lines[k] = fixed, line
            self.env[f"{self.frame}leaf_{k}"] = value
        self.env[f"{self.frame}returned"] = Const(True, "bool")

    def leaf(self, node: ast.expr, kind: object) -> object:
        """A leaf of a returned tree: its value kept for the end, its number in the tree (the
        output slot it gets: after the parameters' slots); a struct: a dict of its fields' leaves."""
        value = self.expr(node)
        if isinstance(value, StructValue) or isinstance(kind, StructKind):
            return frontend_values.struct_leaves(self, node, value, kind)
        return self.held(value, kind, node)

    def held(self, value: object, kind: object, node: ast.AST) -> int:
        """``value`` kept as the next leaf of the returned tree; its number."""
        self.leaves.append((value, kind, node))
        return len(self.src.params) + len(self.leaves) - 1

    def returned_values(self, end: ast.AST) -> list[Operand]:
        """The returned leaves where the body ends; refused where a sample may reach the end
        without a return."""
        first = self.returns
        if first is None:
            return []
        if first.tree is not None and _flag(self.env.get(f"{self.frame}returned")) is not True:
            raise self.src.refuse(end, f"the return at line {first.line} gives a value, but some samples "
                                       "reach the end without a return; end with a `return` too")
        return [self.env[f"{self.frame}leaf_{k}"] for k in range(len(first.kinds))]

    def leaf_dtype(self, value: object, kind: object) -> str | None:
        """The dtype a returned value (a vector: its components' common type) fixes for its output
        (None: a weak number, or a contract that fixes it: the value is converted)."""
        dtype = promote(*(p.dtype for p in flatten(value)[0]))
        if dtype in WEAK or (isinstance(kind, Kind) and kind.dtype is not None):
            return None
        if isinstance(kind, Kind) and kind.role == "in":  # Scalar: a float32 value's width, else float64
            return "f32" if dtype == "f32" else "f64"
        return strong(dtype)


def _cast(dtype: str | None) -> str:
    return {"f32": "float32", "f64": "float64", "i32": "int32", "u32": "uint32"}.get(dtype or "", "float64")
