"""``hawk.math``: the functions a kernel may call.

Inside a kernel they compile to C and CUDA; outside one they run on NumPy
arrays with the same meaning (the reference semantics of
:mod:`hawk.semantics`), so a kernel's body can be tried in plain Python.
``sin cos tan exp log pow``, ``tanh sinh cosh asin acos atan atan2 erf``,
``log1p expm1 log2 log10 exp2 hypot`` are eagle's own (:mod:`hawk.libm`): the same
bits in a kernel on any CPU or GPU and here, within 1 ulp of the exact value.
``fmod sign clip isnan isfinite`` are exact.
"""

from __future__ import annotations

from typing import Any, Protocol, overload

import numpy as np

from hawk import intrinsics, libm
from hawk.semantics import OPS, cast_array
from hawk.types import of_numpy


# How a type checker reads these functions: over a kernel's float (or int) they give what the
# kernel's body computes with; over arrays, outside a kernel, what NumPy gives.
class _Unary(Protocol):
    @overload
    def __call__(self, x: float, /) -> float: ...
    @overload
    def __call__(self, x: Any, /) -> Any: ...


class _Binary(Protocol):
    @overload
    def __call__(self, a: float, b: float, /) -> float: ...
    @overload
    def __call__(self, a: Any, b: Any, /) -> Any: ...


class _ToFloat(Protocol):
    @overload
    def __call__(self, x: float, /) -> float: ...
    @overload
    def __call__(self, x: Any, /) -> Any: ...


class _ToInt(Protocol):
    @overload
    def __call__(self, x: float, /) -> int: ...
    @overload
    def __call__(self, x: Any, /) -> Any: ...


def _as(op: str) -> str:
    return "eagle's own (the same bits as in a kernel)" if op in libm.FUNCTIONS else "as NumPy's"


def _unary(op: str) -> _Unary:
    def fn(x: Any) -> Any:
        with np.errstate(all="ignore"):
            return OPS[op](np.asarray(x))
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``{op}(x)`` per sample, {_as(op)}."
    intrinsics.register(fn, op, 1)
    return fn


def _binary(op: str) -> _Binary:
    def fn(a: Any, b: Any) -> Any:
        with np.errstate(all="ignore"):
            return OPS[op](np.asarray(a), np.asarray(b))
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``{op}(a, b)`` per sample, {_as(op)} (NaN propagates through minimum/maximum)."
    intrinsics.register(fn, op, 2)
    return fn


def _cast(name: str, dtype: str) -> Any:
    def fn(x: Any) -> Any:
        x = np.asarray(x)
        return cast_array(x, of_numpy(x.dtype), dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``x`` as {name}; a float becomes an integer by truncation, saturating at the "
                  "type's limits, NaN giving 0.")
    intrinsics.register(fn, name, 1)
    return fn


sin, cos, tan, exp, log, sqrt = (_unary(op) for op in ("sin", "cos", "tan", "exp", "log", "sqrt"))
abs, floor, ceil = (_unary(op) for op in ("abs", "floor", "ceil"))
pow, minimum, maximum = (_binary(op) for op in ("pow", "minimum", "maximum"))
tanh, sinh, cosh, erf = (_unary(op) for op in ("tanh", "sinh", "cosh", "erf"))
asin, acos, atan = (_unary(op) for op in ("asin", "acos", "atan"))
log1p, expm1, log2, log10, exp2 = (_unary(op) for op in ("log1p", "expm1", "log2", "log10", "exp2"))
atan2, hypot, fmod = (_binary(op) for op in ("atan2", "hypot", "fmod"))
float32: _ToFloat
float64: _ToFloat
int32: _ToInt
uint32: _ToInt
float32, float64, int32, uint32 = (_cast(n, d) for n, d in (("float32", "f32"), ("float64", "f64"),
                                                            ("int32", "i32"), ("uint32", "u32")))


@overload
def sign(x: float) -> float: ...
@overload
def sign(x: Any) -> Any: ...
def sign(x: Any) -> Any:
    """-1, 0 or 1 per sample, in ``x``'s type, as NumPy's: ``sign(±0) = 0``, ``sign(NaN) = NaN``;
    its derivative is 0.

    >>> hawk.math.sign(np.array([-2.5, -0.0, 3.0, np.nan]))
    array([-1.,  0.,  1., nan])
    """
    return np.sign(x)


@overload
def clip(x: float, low: float, high: float) -> float: ...
@overload
def clip(x: Any, low: Any, high: Any) -> Any: ...
def clip(x: Any, low: Any, high: Any) -> Any:
    """``minimum(maximum(x, low), high)`` per sample, as NumPy's (NaN propagates); its derivative
    is 1 inside, 0 outside, and half at a bound (``minimum``/``maximum`` at a tie).

    >>> hawk.math.clip(np.array([-2.0, 0.5, 3.0]), 0.0, 1.0)
    array([0. , 0.5, 1. ])
    """
    with np.errstate(all="ignore"):
        return np.minimum(np.maximum(x, low), high)


@overload
def isnan(x: float) -> bool: ...
@overload
def isnan(x: Any) -> Any: ...
def isnan(x: Any) -> Any:
    """Whether ``x`` is NaN (False for integers); a bool, which carries no derivative.

    >>> hawk.math.isnan(np.array([1.0, np.nan, np.inf]))
    array([False,  True, False])
    """
    return np.isnan(x)


@overload
def isfinite(x: float) -> bool: ...
@overload
def isfinite(x: Any) -> Any: ...
def isfinite(x: Any) -> Any:
    """Whether ``x`` is neither ±inf nor NaN (True for integers); a bool.

    >>> hawk.math.isfinite(np.array([1.0, np.nan, -np.inf]))
    array([ True, False, False])
    """
    return np.isfinite(x)


for _fn, _op, _arity in ((sign, "sign", 1), (clip, "clip", 3), (isnan, "isnan", 1),
                         (isfinite, "isfinite", 1)):
    intrinsics.register(_fn, _op, _arity)


# An example per function, appended to its docstring (doctests: tests/test_docstrings.py runs them).
_EXAMPLES = {
    sin: ">>> hawk.math.sin(np.array([0.0, np.pi / 2]))\narray([0., 1.])",
    cos: ">>> hawk.math.cos(np.array([0.0, np.pi]))\narray([ 1., -1.])",
    tan: ">>> hawk.math.tan(np.array([0.0, np.pi / 4])).round(12)\narray([0., 1.])",
    exp: ">>> hawk.math.exp(np.array([0.0, 1.0]))\narray([1.        , 2.71828183])",
    log: ">>> hawk.math.log(np.array([1.0, np.e]))\narray([0., 1.])",
    sqrt: ">>> hawk.math.sqrt(np.array([4.0, 9.0]))\narray([2., 3.])",
    abs: ">>> hawk.math.abs(np.array([-1.5, 2.0]))\narray([1.5, 2. ])",
    floor: ">>> hawk.math.floor(np.array([-1.5, 2.5]))\narray([-2.,  2.])",
    ceil: ">>> hawk.math.ceil(np.array([-1.5, 2.5]))\narray([-1.,  3.])",
    pow: ">>> hawk.math.pow(np.array([2.0, 3.0]), 2.0)\narray([4., 9.])",
    minimum: ">>> hawk.math.minimum(np.array([1.0, np.nan]), 0.0)\narray([ 0., nan])",
    maximum: ">>> hawk.math.maximum(np.array([1.0, -1.0]), 0.0)\narray([1., 0.])",
    tanh: ">>> hawk.math.tanh(np.array([0.0, 0.5, -30.0]))\narray([ 0.        ,  0.46211716, -1.        ])",
    sinh: ">>> hawk.math.sinh(np.array([0.0, 1.0]))\narray([0.        , 1.17520119])",
    cosh: ">>> hawk.math.cosh(np.array([0.0, 1.0]))\narray([1.        , 1.54308063])",
    asin: ">>> hawk.math.asin(np.array([0.0, 1.0, 2.0]))\narray([0.        , 1.57079633,        nan])",
    acos: ">>> hawk.math.acos(np.array([1.0, 0.0, -1.0]))\narray([0.        , 1.57079633, 3.14159265])",
    atan: ">>> hawk.math.atan(np.array([0.0, 1.0, np.inf]))\narray([0.        , 0.78539816, 1.57079633])",
    atan2: ">>> hawk.math.atan2(np.array([1.0, 0.0, -0.0]), np.array([-1.0, -1.0, -1.0]))\n"
           "array([ 2.35619449,  3.14159265, -3.14159265])",
    erf: ">>> hawk.math.erf(np.array([0.0, 0.5, -3.0]))\narray([ 0.        ,  0.52049988, -0.99997791])",
    log1p: ">>> hawk.math.log1p(np.array([1e-20, -1.0]))\narray([1.e-20,   -inf])",
    expm1: ">>> hawk.math.expm1(np.array([1e-20, -np.inf]))\narray([ 1.e-20, -1.e+00])",
    log2: ">>> hawk.math.log2(np.array([8.0, 0.5]))\narray([ 3., -1.])",
    log10: ">>> hawk.math.log10(np.array([1000.0, 0.01]))\narray([ 3., -2.])",
    exp2: ">>> hawk.math.exp2(np.array([10.0, -1075.0]))\narray([1024.,    0.])",
    hypot: ">>> hawk.math.hypot(np.array([3.0, 1e300, np.inf]), np.array([4.0, 1e300, np.nan]))\n"
           "array([5.00000000e+000, 1.41421356e+300,             inf])",
    fmod: ">>> hawk.math.fmod(np.array([-7.0, 7.0]), 3.0), hawk.math.fmod(np.array([-7, 7]), 3)\n"
          "(array([-1.,  1.]), array([-1,  1]))",
    float32: ">>> hawk.math.float32(np.array([0.1]))\narray([0.1], dtype=float32)",
    float64: ">>> hawk.math.float64(np.array([3], dtype=np.int32))\narray([3.])",
    int32: ">>> hawk.math.int32(np.array([2.7, -2.7, 1e12, np.nan]))\n"
           "array([         2,         -2, 2147483647,          0], dtype=int32)",
    uint32: ">>> hawk.math.uint32(np.array([3.9, -1.0]))\narray([3, 0], dtype=uint32)",
}


@overload
def where(cond: bool, a: float, b: float) -> float: ...
@overload
def where(cond: Any, a: Any, b: Any) -> Any: ...
def where(cond: Any, a: Any, b: Any) -> Any:
    """``a`` where ``cond`` holds, else ``b``; both are computed (write an ``if`` to compute one).

    >>> hawk.math.where(np.array([True, False]), 1.0, 2.0)
    array([1., 2.])
    """
    return np.where(cond, a, b)


for _fn, _example in _EXAMPLES.items():
    _fn.__doc__ += "\n\n" + _example + "\n"


intrinsics.register(where, "where", 3)

__all__ = [
    "abs",
    "acos",
    "asin",
    "atan",
    "atan2",
    "ceil",
    "clip",
    "cos",
    "cosh",
    "erf",
    "exp",
    "exp2",
    "expm1",
    "float32",
    "float64",
    "floor",
    "fmod",
    "hypot",
    "int32",
    "isfinite",
    "isnan",
    "log",
    "log1p",
    "log2",
    "log10",
    "maximum",
    "minimum",
    "pow",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "uint32",
    "where",
]
