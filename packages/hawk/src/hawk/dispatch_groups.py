"""Per-sample ``match`` and dispatch groups: the arms a sample takes by an integer selector.

``match sel:`` with ``case 0:``, ``case 1 | 2:`` and ``case _:`` runs, per sample, the arm whose
values hold ``sel`` (none when no case does and there is no ``case _``, as in Python).
``match hawk.dispatch(sel, "material", policy="auto"):`` does the same and declares the *dispatch
group* "material", whose policy says how its arms run (:data:`eagle.plan.DISPATCH_POLICIES`):

- ``"switch"``: one kernel, a per-sample branch (an ``If`` chain over the arms);
- ``"predicated"``: every arm computed for every sample, the results selected (no branch);
  an arm that could fail or trap for a sample that does not take it is refused;
- ``"segmented"``: the samples partitioned by selector, one kernel per arm over its segment
  (:mod:`hawk.segments`);
- ``"auto"``: ``"switch"`` unless the caller chooses (``BoundPlan.with_dispatch``).

Every policy gives the same bits.  The lowering of a kernel takes the chosen policies
(:class:`Chosen`), so each policy is its own IR, compiled and cached apart.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from eagle.extend import EagleValueError
from hawk.flow import Unbound, targets
from hawk.ir import Const, Gather, Loop, Op, Operand, ScatterAdd, Stmt, walk
from hawk.types import promote, strong
from hawk.values import StructValue, Value, describe, flatten, same_shape

POLICIES = ("switch", "predicated", "segmented", "auto")


def dispatch(selector: Any, group: str, policy: str = "auto") -> Any:
    """``match hawk.dispatch(sel, "group", policy="auto"):`` in a kernel: a per-sample match over
    the integer ``sel`` that declares the dispatch group ``group`` (unique in its kernel), run as
    ``policy`` says: ``"switch"``, ``"predicated"``, ``"segmented"`` or ``"auto"``.  Outside a
    kernel it is ``selector``.

    >>> from hawk import Int32, Scalar
    >>> @hawk.kernel
    ... def shade(x: Scalar, m: Int32) -> Scalar:
    ...     y = x
    ...     match hawk.dispatch(m, "material", policy="predicated"):
    ...         case 0:
    ...             y = x * 2.0
    ...         case 1 | 2:
    ...             y = x + 10.0
    ...     return y
    >>> shade(np.ones(4), np.array([0, 1, 2, 3], np.int32))
    array([ 2., 11., 11.,  1.])
    >>> shade.plan(np.ones(4), np.array([0, 1, 2, 3], np.int32)).dispatch_groups()["material"].arms
    (0, (1, 2))
    """
    del group, policy
    return selector


#: An arm's case values: an int, a tuple of them (``case 1 | 2``), None (``case _``).
ArmValues = int | tuple[int, ...] | None


@dataclass(frozen=True)
class Group:
    """A dispatch group as the IR records it: the author's policy, the arms, the line of the
    ``match``, the slot the selector is read from (None: computed in the kernel) and what
    keeps ``"segmented"`` from running it (None: nothing)."""

    name: str
    policy: str
    arms: tuple[ArmValues, ...]
    line: int
    selector: int | None
    unsplittable: str | None = None


@dataclass(frozen=True)
class Chosen:
    """The policies a lowering runs its groups by: ``(group, policy)`` for the ``"auto"`` groups
    the caller chose a policy other than ``"switch"`` for (a group the author gave a policy runs
    by it), and for one arm kernel of a segmented group, ``(group, arm)`` (the arm's number,
    ``len(arms)`` for the samples no case takes): that match lowers to that arm alone."""

    policies: tuple[tuple[str, str], ...] = ()
    arm: tuple[str, int] | None = None

    def policy(self, group: Group) -> str:
        """The policy ``group`` runs by."""
        if group.policy != "auto":
            return group.policy
        return dict(self.policies).get(group.name, "switch")


#: every group as its author said, the "auto" ones as "switch"
SWITCH = Chosen()


def choose(groups: tuple[Group, ...], policies: dict[str, str], now: Chosen, who: str) -> Chosen:
    """The lowering's choice for ``policies`` ({group: policy}, the groups known): each "auto"
    group named by the policy given for it ("auto" runs as "switch"), the others as they run
    ``now``; a group the author gave a policy keeps it."""
    for name, policy in policies.items():
        if policy not in POLICIES:
            raise EagleValueError(f"{who}: dispatch group {name!r}: policy {policy!r} is not one of "
                             f"{', '.join(map(repr, POLICIES))}")
    picked = {g.name: policies.get(g.name, now.policy(g)) for g in groups if g.policy == "auto"}
    return Chosen(tuple(sorted((name, p) for name, p in picked.items() if p not in ("switch", "auto"))))


def match_statement(lw: Any, node: ast.Match) -> None:
    """Lower ``match``: its group (if any) recorded, then its arms as its policy says."""
    group, subject = _group(lw, node)
    selector = lw.expr(subject)
    if isinstance(selector, (Value, StructValue)) or strong(selector.dtype)[0] not in "iu":
        raise lw.src.refuse(subject, f"the selector of a match is an integer, the same type in every "
                                     f"sample; this one is {describe(selector)} (cast a float with "
                                     "hawk.math.int32(...))")
    arms = [_arm(lw, case) for case in node.cases]
    conds = [_condition(lw, selector, values, case) for values, case in zip(arms, node.cases, strict=True)]
    chosen = lw.dispatch
    if isinstance(selector, Const):  # the same number for every sample: only its arm exists
        _switch(lw, node.cases, conds, node)
    elif group is not None and chosen.arm is not None and chosen.arm[0] == group.name:
        _segment_arm(lw, node, chosen.arm[1])
    elif group is not None and chosen.policy(group) == "predicated":
        _predicated(lw, node, group, conds)
    else:
        _switch(lw, node.cases, conds, node)


def _group(lw: Any, node: ast.Match) -> tuple[Group | None, ast.expr]:
    """The group a ``match hawk.dispatch(...)`` declares (recorded in ``lw.groups``), and the
    selector's expression; (None, the subject) for a plain match."""
    subject = node.subject
    if not (isinstance(subject, ast.Call) and lw.resolve(subject.func) is dispatch):
        return None, subject
    args, keywords = subject.args, {k.arg: k.value for k in subject.keywords}
    if len(args) == 3 and "policy" not in keywords:
        keywords["policy"] = args[2]
        args = args[:2]
    if len(args) != 2 or set(keywords) - {"policy"}:
        raise lw.src.refuse(subject, 'hawk.dispatch takes (selector, "group", policy="auto")')
    name = _text(lw, args[1], "the group's name")
    policy = _text(lw, keywords["policy"], "the policy") if "policy" in keywords else "auto"
    if policy not in POLICIES:
        raise lw.src.refuse(subject, f"dispatch group {name!r}: policy {policy!r} is not one of "
                                     f"{', '.join(map(repr, POLICIES))}")
    seen = lw.group_nodes.get(name)
    if seen is not None and seen is not node:
        raise lw.src.refuse(node, f"dispatch group {name!r} is declared again (first at line "
                                  f"{seen.lineno + lw.src.line_offset}); give each match its own name")
    lw.group_nodes[name] = node
    group = Group(name, policy, tuple(_arm(lw, case) for case in node.cases),
                  node.lineno + lw.src.line_offset, *_selector(lw, args[0]))
    lw.groups[name] = group
    return group, args[0]


def _text(lw: Any, node: ast.expr, what: str) -> str:
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        raise lw.src.refuse(node, f"hawk.dispatch: {what} is a string written out")
    return node.value


def _selector(lw: Any, node: ast.expr) -> tuple[int | None, str | None]:
    """The slot a segmented group's partition reads the selector from, and what keeps the group
    from being split (None: nothing): the selector must be a per-sample plane parameter the
    kernel never assigns (the partition reads it as the call passed it), read by a match
    outside any loop."""
    name = node.id if isinstance(node, ast.Name) else None
    slot = lw.param_slot.get(name) if name is not None else None
    if slot is None or lw.slots[slot].role == "value" or lw.slots[slot].table is not None or \
            lw.slots[slot].cell:
        return None, "its selector is computed in the kernel, not read from a per-sample parameter " \
                     "(pass the selector as an In, Scalar or Mutable parameter)"
    if name in targets(lw.src.tree.body):
        return None, f"its selector {name!r} is assigned in the kernel (match on the parameter as passed)"
    if lw.loops or lw.helpers:
        return None, "its match is inside a loop or a helper (match at the kernel's top level)"
    return slot, None



def _arm(lw: Any, case: ast.match_case) -> ArmValues:
    if case.guard is not None:
        raise lw.src.refuse(case.guard, "a case of a kernel's match has no guard (`if ...`); test it "
                                        "inside the arm")
    pattern = case.pattern
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is None and pattern.name is None:
        return None
    parts = pattern.patterns if isinstance(pattern, ast.MatchOr) else [pattern]
    values = tuple(_literal(lw, p) for p in parts)
    return values if isinstance(pattern, ast.MatchOr) else values[0]


def _literal(lw: Any, pattern: ast.pattern) -> int:
    value = None
    if isinstance(pattern, ast.MatchValue):
        try:
            value = ast.literal_eval(pattern.value)
        except ValueError:
            value = None
    if not isinstance(value, int) or isinstance(value, bool):
        raise lw.src.refuse(pattern, f"the pattern `{ast.unparse(pattern)}` is not in hawk; a kernel's "
                                     "match has integer literal cases (`case 0:`, `case 1 | 2:`) and "
                                     "`case _:`")
    return value


def _condition(lw: Any, selector: Operand, values: ArmValues, case: ast.match_case) -> Operand:
    """Whether this sample takes the arm of ``values`` (given that no earlier arm took it)."""
    if values is None:
        return Const(True, "bool")
    out: Operand = Const(False, "bool")
    for value in values if isinstance(values, tuple) else (values,):
        test = lw.apply("eq", [selector, Const(value, "wi")], case.pattern)
        out = test if out == Const(False, "bool") else lw.apply("or", [out, test], case.pattern)
    return out


def _switch(lw: Any, cases: list[ast.match_case], conds: list[Operand], node: ast.AST) -> None:
    """An if chain: the first arm whose condition holds runs."""
    if not cases:
        return
    cond = conds[0]
    if isinstance(cond, Const):  # decided now (a case _, or a selector folded to a number)
        if cond.value:
            lw.block(cases[0].body)
        else:
            _switch(lw, cases[1:], conds[1:], node)
        return
    lw.branch(cond, [lambda: lw.block(cases[0].body), lambda: _switch(lw, cases[1:], conds[1:], node)], node)


def _segment_arm(lw: Any, node: ast.Match, arm: int) -> None:
    """One arm kernel of a segmented group: every sample it runs takes arm ``arm`` (none past
    the last case)."""
    if arm < len(node.cases):
        lw.block(node.cases[arm].body)


#: what an arm may not hold under "predicated": its work would run for samples that do not take it
def _hazard(stmt: Stmt) -> str | None:
    if isinstance(stmt, Gather) and stmt.mode == "check":
        return "a checked Table read (it could fail for a sample that does not take the arm)"
    if isinstance(stmt, ScatterAdd):
        return "a Scatter write"
    if isinstance(stmt, Loop):
        return "a loop"
    if isinstance(stmt, Op) and stmt.op in ("floordiv", "mod", "div") and \
            strong(stmt.dst.dtype)[0] in "iu" and not isinstance(stmt.args[1], Const):
        return "an integer division or modulo by a value that is not a constant"
    return None


def _predicated(lw: Any, node: ast.Match, group: Group, conds: list[Operand]) -> None:
    """Every arm computed for every sample, each in its own copy of the names; then each name
    the arms bind differently selected by the conditions, the first arm that holds winning."""
    before = dict(lw.env)
    ends = []
    for case in node.cases:
        line = case.pattern.lineno + lw.src.line_offset
        exits = [n for stmt in case.body for n in ast.walk(stmt)
                 if isinstance(n, (ast.Return, ast.Break, ast.Continue))]
        if exits:
            _refuse_predicated(lw, exits[0], group, line, f"a {type(exits[0]).__name__.lower()}")
        start = len(lw.body)
        lw.env = dict(before)
        lw.block(case.body)
        for stmt in walk(lw.body[start:]):
            hazard = _hazard(stmt)
            if hazard is not None:
                _refuse_predicated(lw, case.pattern, group, line, hazard)
        ends.append(lw.env)
    fallback = ends[-1] if _arm(lw, node.cases[-1]) is None else before
    chosen = [(c, env) for c, env in zip(conds, ends, strict=True) if not isinstance(c, Const)]
    line = node.lineno + lw.src.line_offset
    merged = dict(before)
    for key in dict.fromkeys(k for env in [before, *ends] for k in env):
        if key.startswith("\0"):
            continue  # a load made by one arm stays that arm's
        base = lw.arm_value(lw.body, before, key, line)  # an arm that leaves the name alone
        last = fallback.get(key, base)
        values = [env.get(key, base) for _, env in chosen]
        if any(isinstance(v, Unbound) for v in [last, *values]):
            merged[key] = Unbound(line)
            continue
        merged[key] = _selected(lw, [c for c, _ in chosen], values, last, node, key)
    lw.env = merged


def _selected(lw: Any, conds: list[Operand], values: list[object], last: object, node: ast.AST,
              key: str) -> object:
    """``values[0] if conds[0] else values[1] if conds[1] else ... else last``, part by part."""
    if not same_shape([*values, last]):
        shown = " and ".join(dict.fromkeys(describe(v) for v in [*values, last]))
        raise lw.src.refuse(node, f"{key!r} is {shown} in the arms of the match; give it one type in all")
    out = last
    for cond, value in zip(reversed(conds), reversed(values), strict=True):
        parts, rebuild = flatten(value)
        out = rebuild([a if a is b else _select(lw, cond, a, b)
                       for a, b in zip(parts, flatten(out)[0], strict=True)])
    return out


def _select(lw: Any, cond: Operand, a: Operand, b: Operand) -> Operand:
    dtype = promote(a.dtype, b.dtype)
    return lw.emit("select", [cond, lw.cast(a, dtype), lw.cast(b, dtype)], dtype)


def _refuse_predicated(lw: Any, at: ast.AST, group: Group, line: int, what: str) -> None:
    raise lw.src.refuse(at, f"dispatch group {group.name!r}: the arm at line {line} holds {what}, which "
                            "\"predicated\" would run for every sample; use policy=\"switch\" for this "
                            "group")

