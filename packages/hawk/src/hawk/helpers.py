"""``@hawk.func``: helper functions a kernel calls, inlined into its IR at compile time.

A helper is typed like a kernel (hawk annotations on its parameters, an optional return
annotation that its result is converted to, as a kernel's return contract is) and written in
the same language: loops, early returns, other helpers.  A call lowers the helper's body in
place, on the caller's values, so there is no separate C function, and derivatives, fusion and
the GPU see one flat kernel.  The compiled code of a kernel is that of its IR, so it changes
whenever a helper it calls does.  Recursion (direct or through other helpers) is refused,
naming the cycle.  Module numbers and closures are folded as a kernel folds them.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, ParamSpec, TypeVar

from hawk.ir import Const
from hawk.types import WEAK, Kind
from hawk.values import StructKind, StructTree, StructValue, Value, ValueKind, describe

if TYPE_CHECKING:
    from hawk.frontend import Source
    from hawk.ir import Operand


_P = ParamSpec("_P")
_R = TypeVar("_R")


class Func(Generic[_P, _R]):
    """A ``@hawk.func`` helper: called from a kernel it is inlined; called from Python it is the
    plain function.

    >>> from hawk import Scalar
    >>> @hawk.func
    ... def double(v: Scalar) -> Scalar:
    ...     return v * 2.0
    >>> double, double(1.5)
    (<hawk.func double>, 3.0)
    """

    def __init__(self, fn: Callable[_P, _R], source: Source) -> None:
        self.fn = fn
        self.source = source
        functools.update_wrapper(self, fn)

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<hawk.func {self.fn.__name__}>"


def func(fn: Callable[_P, _R]) -> Func[_P, _R]:
    """Make ``fn`` a helper that kernels (and other helpers) call; it is inlined where called.

    >>> from hawk import Param, Scalar
    >>> @hawk.func
    ... def smoothstep(e0: Param, e1: Param, x: Scalar) -> Scalar:
    ...     if x <= e0:
    ...         return 0.0
    ...     if x >= e1:
    ...         return 1.0
    ...     t = (x - e0) / (e1 - e0)
    ...     return t * t * (3.0 - 2.0 * t)
    >>> @hawk.kernel
    ... def ramp(x: Scalar) -> Scalar:
    ...     return smoothstep(0.0, 2.0, x) * 10.0
    >>> ramp(np.array([-1.0, 1.0, 1.5, 5.0]))
    array([ 0.    ,  5.    ,  8.4375, 10.    ])

    A helper may return several values (a tuple, unpacked where it is called) or a struct:

    >>> @hawk.func
    ... def polar(x: Scalar, y: Scalar) -> tuple[Scalar, Scalar]:
    ...     return hawk.math.hypot(x, y), hawk.math.atan2(y, x)
    >>> @hawk.kernel
    ... def spiral(x: Scalar, y: Scalar) -> Scalar:
    ...     r, phi = polar(x, y)
    ...     return r * phi
    >>> spiral(np.array([3.0, 0.0]), np.array([4.0, 2.0])).round(6)
    array([4.636476, 3.141593])
    """
    from hawk.frontend import parse

    source = parse(fn, sys._getframe(1).f_locals, api="hawk.func")
    for name, kind in source.params:
        if kind.role == "mutable":
            arg = next(a for a in source.tree.args.args if a.arg == name)
            raise source.refuse(arg, f"parameter {name!r} is Mutable: a helper returns its results "
                                     "(annotate it Scalar, Param, ...; the calling kernel assigns)")
    return Func(fn, source)


class Inlining:
    """The lowerer's part that inlines helper calls (:func:`func`)."""

    def inline(self, helper: Func, node: ast.Call, several: bool = False) -> Operand:
        """The helper's result where it is called: one value, a struct, or (``several``: the call
        is unpacked, ``a, b = f(x)``) a tuple of them."""
        from hawk.frontend import KernelSyntaxError

        src, name = helper.source, helper.fn.__name__
        if helper in self.helpers:
            cycle = " -> ".join(h.fn.__name__ for h in [*self.helpers[self.helpers.index(helper):], helper])
            raise self.src.refuse(node, f"{cycle}: a helper may not call itself, directly or through "
                                        "others (helpers are inlined); write the recursion as a loop")
        if node.keywords or len(node.args) != len(src.params):
            names = ", ".join(n for n, _ in src.params)
            raise self.src.refuse(node, f"{name} takes {len(src.params)} positional argument"
                                        f"{'s' * (len(src.params) != 1)}: {names}")
        args = [self.helper_value(self.expr(a), kind, f"parameter {p!r} of {name}", a)
                for a, (p, kind) in zip(node.args, src.params, strict=True)]
        saved = (self.src, self.env, self.param_slot, self.mutated, self.frame, self.loops, self.returns,
                 self.kinds)
        self.inlined += 1
        self.src, self.env, self.param_slot, self.mutated = src, dict(zip((p for p, _ in src.params), args,
                                                                          strict=True)), {}, {}
        self.kinds = dict(src.params)  # the helper's own names (a kernel's b.pos is not the helper's)
        self.frame, self.loops, self.returns = f"\1f{self.inlined}_", [], None
        self.helpers.append(helper)
        try:
            stmts = src.tree.body
            if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant):
                stmts = stmts[1:]  # the docstring
            self.block(stmts)
            values = self.returned_values(stmts[-1] if stmts else src.tree)
            if self.returns is None or self.returns.tree is None:
                raise src.refuse(src.tree, "a helper returns a value (`return expr` on every path), a "
                                           "tuple of them or a @hawk.struct")
            held = [self.helper_value(v, kind, "the result", at) for v, kind, at in
                    zip(values, self.returns.kinds, self.returns.nodes, strict=True)]
            value = self.rebuilt(self.returns.tree, held, len(src.params))
        except KernelSyntaxError as err:
            caller = saved[0]
            where = f"{caller.filename}:{node.lineno + caller.line_offset}"
            raise KernelSyntaxError(f"{err.msg} (called from {caller.fn.__name__} at {where})",
                                    (err.filename, err.lineno, err.offset, err.text)) from None
        finally:
            self.helpers.pop()
            (self.src, self.env, self.param_slot, self.mutated, self.frame, self.loops, self.returns,
             self.kinds) = saved
        if isinstance(value, tuple) and not several:
            raise self.src.refuse(node, f"{name} returns {len(value)} values: unpack them on a line of "
                                        f"their own, `{', '.join('abcdefgh'[:len(value)])} = {name}(...)`")
        return value

    def rebuilt(self, tree: object, held: list[object], first: int) -> object:
        """A helper's returned tree of leaf numbers (from ``first``) as values: a tuple, a struct
        (:class:`~hawk.values.StructTree`), a value."""
        if isinstance(tree, StructTree):
            kind = tree.cls.__hawk_kind__
            return StructValue(kind, tuple(self.rebuilt(tree[n], held, first) for n, _ in kind.fields))
        if isinstance(tree, tuple):
            return tuple(self.rebuilt(t, held, first) for t in tree)
        if isinstance(tree, (list, dict)):
            raise self.src.refuse(self.src.tree, "a helper returns a value, a tuple of values or a "
                                                 "@hawk.struct, not a list or dict (a kernel's results may "
                                                 "be those)")
        return held[tree - first]

    def unpack(self, node: ast.Assign) -> bool:
        """``a, b = f(x)`` of a helper ``f`` that returns a tuple, or ``a, b = b, a``: each name its
        value (every value computed before any name is assigned, as in Python); whether ``node``
        is that."""
        target = node.targets[0]
        call = node.value
        if len(node.targets) == 1 and isinstance(target, ast.Tuple) and isinstance(call, ast.Tuple):
            self.unpacked(target, self.values_of(call), node, "there are values")
            return True
        if not (len(node.targets) == 1 and isinstance(target, ast.Tuple) and isinstance(call, ast.Call)):
            return False
        helper = self.resolve(call.func)
        if not isinstance(helper, Func):
            return False
        self.unpacked(target, self.inline(helper, call, several=True), call, "the helper returns values")
        return True

    def values_of(self, node: ast.expr) -> object:
        """A tuple expression's values, nested tuples as tuples."""
        if isinstance(node, ast.Tuple):
            return tuple(self.values_of(e) for e in node.elts)
        return self.expr(node)

    def unpacked(self, target: ast.expr, value: object, node: ast.AST, given: str) -> None:
        if not isinstance(target, ast.Tuple):
            self.assign(target, value, node)
            return
        if not isinstance(value, tuple) or len(value) != len(target.elts):
            got = f"{len(value)} values" if isinstance(value, tuple) else describe(value)
            raise self.src.refuse(target, f"{len(target.elts)} names are assigned {got}; write as many "
                                          f"names as {given}")
        for t, v in zip(target.elts, value, strict=True):
            self.unpacked(t, v, node, given)

    def helper_value(self, value: Operand, kind: object, what: str, node: ast.AST) -> Operand:
        """A helper's argument or result held to its annotation: a per-sample value converted
        within its kind (``Scalar``: to a float), a ``Param`` the same for every sample."""
        if not isinstance(kind, Kind):  # no annotation: the value as it is
            return value
        if isinstance(value, Value) or isinstance(kind, ValueKind):
            return self.helper_vector(value, kind, what, node)
        if isinstance(value, StructValue) or isinstance(kind, StructKind):
            if not (isinstance(value, StructValue) and getattr(kind, "cls", None) is value.kind.cls):
                raise self.src.refuse(node, f"{what} is annotated {kind!r} but is given {describe(value)}; "
                                            "make the two agree")
            return value
        if kind.role == "param" and not (isinstance(value, Const) or value.uniform):
            raise self.src.refuse(node, f"{what} is annotated {kind!r} (one value for all samples) but "
                                        "is given a value that differs per sample; annotate it Scalar")
        if kind.dtype is not None:
            return self.conform(value, kind.dtype, node, f"{what} is {kind.dtype} but is given a "
                                                         f"{value.dtype} value")
        if kind.role == "param" or value.dtype in ("f32", "f64", "wf"):
            return value
        return self.conform(value, "wf" if value.dtype in WEAK else "f64", node,
                            f"{what} is a float but is given a {value.dtype} value")

    def helper_vector(self, value: object, kind: Kind, what: str, node: ast.AST) -> object:
        """A vector, matrix or quaternion argument or result held to its annotation: the same type,
        its components converted to a fixed width (``hawk.vec3[Float32]``)."""
        wanted = kind if isinstance(kind, ValueKind) else None
        if not (isinstance(value, Value) and wanted is not None and
                (wanted.family, wanted.shape) == (value.kind.family, value.kind.shape)):
            raise self.src.refuse(node, f"{what} is annotated {kind!r} but is given {describe(value)}; "
                                        "make the two agree")
        if wanted.dtype is None:
            return value
        return Value(value.kind, tuple(self.conform(c, wanted.dtype, node, f"{what} is {wanted.dtype} but a "
                                                    f"component is {c.dtype}") for c in value.comps))
