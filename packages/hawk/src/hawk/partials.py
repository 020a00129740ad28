"""The partial derivatives of the ``hawk.math`` functions beyond ``sin cos tan exp log pow``:
the contribution ``grad * d dst / d operand_k`` of :func:`hawk.derive._partial`.

Values where a function is not differentiable: ``hypot`` at the origin gives 0 (as ``abs`` at
0); ``fmod`` takes ``d/db = -trunc(a / b)`` (the quotient's rounding decides at a jump);
``atan2`` at the origin and ``asin``/``acos`` at ±1 give what the formula gives (NaN, ±inf).
The functions lowered to other ops (:mod:`hawk.composites`) take their ops' derivatives:
``sign`` 0, ``clip`` 1 inside, 0 outside and half at a bound (``minimum``/``maximum``'s tie).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from hawk.ir import Const, Op, Operand, Var
from hawk.types import strong


def _c(s: Op, value: float) -> Const:
    return Const(value, strong(s.dst.dtype))


def _one_minus_square(b: Any, s: Op, x: Operand) -> Var:
    """(1 - x)(1 + x): 1 - x^2 without its cancellation near ±1."""
    return b.op("mul", b.op("sub", _c(s, 1.0), x), b.op("add", _c(s, 1.0), x))


def _scaled(factor: float) -> Callable[[Any, Op, int, Var], Var]:
    """grad * dst * factor (exp2: ln 2)."""
    return lambda b, s, k, grad: b.op("mul", b.op("mul", grad, s.dst), _c(s, factor))


def _over(denominator: Callable[[Any, Op], Operand]) -> Callable[[Any, Op, int, Var], Var]:
    return lambda b, s, k, grad: b.op("div", grad, denominator(b, s))


def _atan2(b: Any, s: Op, k: int, grad: Var) -> Var:
    """d/dy = x / h^2, d/dx = -y / h^2, h = hypot(y, x) (divided twice: no overflow of h^2)."""
    y, x = s.args
    h = b.op("hypot", y, x)
    share = b.op("div", b.op("div", grad, h), h)
    return b.op("mul", share, x) if k == 0 else b.op("neg", b.op("mul", share, y))


def _hypot(b: Any, s: Op, k: int, grad: Var) -> Var:
    at_origin = b.op("eq", s.dst, _c(s, 0.0))
    ratio = b.op("div", s.args[k], b.op("select", at_origin, _c(s, 1.0), s.dst))
    return b.op("mul", grad, ratio)


def _fmod(b: Any, s: Op, k: int, grad: Var) -> Var:
    if k == 0:
        return grad
    q = b.op("div", s.args[0], s.args[1])
    whole = b.op("select", b.op("lt", q, _c(s, 0.0)), b.op("ceil", q), b.op("floor", q))
    return b.op("neg", b.op("mul", grad, whole))


def _erf(b: Any, s: Op, k: int, grad: Var) -> Var:
    """grad * 2 / sqrt(pi) * exp(-x^2)."""
    x = s.args[0]
    gauss = b.op("exp", b.op("neg", b.op("mul", x, x)))
    return b.op("mul", grad, b.op("mul", _c(s, 2.0 / math.sqrt(math.pi)), gauss))


PARTIALS: dict[str, Callable[[Any, Op, int, Var], Operand]] = {
    "expm1": lambda b, s, k, grad: b.op("mul", grad, b.op("add", s.dst, _c(s, 1.0))),
    "exp2": _scaled(math.log(2.0)),
    "log1p": _over(lambda b, s: b.op("add", _c(s, 1.0), s.args[0])),
    "log2": _over(lambda b, s: b.op("mul", s.args[0], _c(s, math.log(2.0)))),
    "log10": _over(lambda b, s: b.op("mul", s.args[0], _c(s, math.log(10.0)))),
    "sinh": lambda b, s, k, grad: b.op("mul", grad, b.op("cosh", s.args[0])),
    "cosh": lambda b, s, k, grad: b.op("mul", grad, b.op("sinh", s.args[0])),
    "tanh": lambda b, s, k, grad: b.op("mul", grad, _one_minus_square(b, s, s.dst)),
    "atan": _over(lambda b, s: b.op("add", _c(s, 1.0), b.op("mul", s.args[0], s.args[0]))),
    "asin": _over(lambda b, s: b.op("sqrt", _one_minus_square(b, s, s.args[0]))),
    "acos": lambda b, s, k, grad: b.op("neg", PARTIALS["asin"](b, s, k, grad)),
    "erf": _erf,
    "atan2": _atan2,
    "hypot": _hypot,
    "fmod": _fmod,
}
