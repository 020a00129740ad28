"""``hawk.math`` functions a kernel lowers to other IR ops: ``sign clip isnan isfinite`` and the
integer ``fmod``.

They need no back end, reference or derivative of their own: the ops they are made of have
them.  Each gives NumPy's value: ``sign(±0) = 0``, ``sign(NaN) = NaN``, ``clip(x, lo, hi) =
minimum(maximum(x, lo), hi)`` (NaN propagates), ``fmod`` takes the sign of the dividend (an
integer one by zero gives 0).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from hawk.ir import Const, Operand
from hawk.types import is_float, promote, result_dtype


def _where(lowering: Any, cond: Operand, a: Operand, b: Operand) -> Operand:
    dtype = promote(a.dtype, b.dtype)
    return lowering.emit("select", [cond, lowering.cast(a, dtype), lowering.cast(b, dtype)], dtype)


def sign(lowering: Any, args: list[Operand], node: ast.Call) -> Operand:
    """-1, 0 or 1 in x's type; a float's ±0 gives +0 and NaN NaN (its derivative: 0)."""
    x = args[0]
    if x.dtype == "bool":
        raise lowering.src.refuse(node, "hawk.math.sign: x is a bool, which NumPy gives no sign; write "
                                        "hawk.math.int32(x)")
    apply = lowering.apply
    zero = Const(0, "wi")
    if is_float(x.dtype):
        nan_or_zero = apply("mul", [x, Const(0.0, "wf")], node)
        rest = _where(lowering, apply("eq", [x, zero], node), Const(0.0, "wf"), nan_or_zero)
        return _where(lowering, apply("gt", [x, zero], node), Const(1, "wi"),
                      _where(lowering, apply("lt", [x, zero], node), Const(-1, "wi"), rest))
    negative = Const(0, "wi") if x.dtype.startswith("u") else Const(-1, "wi")
    inner = _where(lowering, apply("lt", [x, zero], node), negative, zero)
    return lowering.cast(_where(lowering, apply("gt", [x, zero], node), Const(1, "wi"), inner), x.dtype)


def clip(lowering: Any, args: list[Operand], node: ast.Call) -> Operand:
    x, low, high = args
    return lowering.apply("minimum", [lowering.apply("maximum", [x, low], node), high], node)


def isnan(lowering: Any, args: list[Operand], node: ast.Call) -> Operand:
    """x != x (never for an integer, per sample as x is)."""
    x = args[0]
    return lowering.apply("ne", [x, x], node)


def isfinite(lowering: Any, args: list[Operand], node: ast.Call) -> Operand:
    """x - x == 0: NaN for inf and NaN (x == x for an integer: always, per sample as x is)."""
    x = args[0]
    if not is_float(x.dtype):
        return lowering.apply("eq", [x, x], node)
    return lowering.apply("eq", [lowering.apply("sub", [x, x], node), Const(0.0, "wf")], node)


def fmod(lowering: Any, args: list[Operand], node: ast.Call) -> Operand:
    """The fmod op for floats; for integers Python's % moved to the dividend's sign."""
    a, b = args
    try:
        out = result_dtype("fmod", a.dtype, b.dtype)
    except TypeError:
        raise lowering.src.refuse(node, f"hawk.math.fmod is not defined for {a.dtype} and {b.dtype} "
                                        "(as in NumPy)") from None
    if is_float(out):
        return lowering.apply("fmod", args, node)
    m = lowering.apply("mod", args, node)
    if out.startswith("u") or out == "bool":
        return m
    apply, zero = lowering.apply, Const(0, "wi")
    signs_differ = apply("ne", [apply("lt", [m, zero], node), apply("lt", [a, zero], node)], node)
    moved = apply("and", [apply("ne", [m, zero], node), signs_differ], node)
    return _where(lowering, moved, apply("sub", [m, b], node), m)


#: hawk op -> its lowering
LOWERINGS: dict[str, Callable[[Any, list[Operand], ast.Call], Operand]] = {
    "sign": sign, "clip": clip, "isnan": isnan, "isfinite": isfinite, "fmod": fmod}
