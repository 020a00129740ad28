"""``hawk.math``: the functions a kernel may call.

Inside a kernel they compile to C and CUDA; outside one they run on NumPy
arrays with the same meaning (the reference semantics of
:mod:`hawk.semantics`), so a kernel's body can be tried in plain Python.
``sin cos tan exp log pow`` are eagle's own (:mod:`hawk.libm`): the same bits
in a kernel on any CPU or GPU and here, within 1 ulp of the exact value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hawk import intrinsics, libm
from hawk.semantics import OPS, cast_array
from hawk.types import of_numpy


def _as(op: str) -> str:
    return "eagle's own (the same bits as in a kernel)" if op in libm.FUNCTIONS else "as NumPy's"


def _unary(op: str) -> Any:
    def fn(x: Any) -> Any:
        with np.errstate(all="ignore"):
            return OPS[op](np.asarray(x))
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``{op}(x)`` per sample, {_as(op)}."
    intrinsics.register(fn, op, 1)
    return fn


def _binary(op: str) -> Any:
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
float32, float64, int32, uint32 = (_cast(n, d) for n, d in (("float32", "f32"), ("float64", "f64"),
                                                            ("int32", "i32"), ("uint32", "u32")))


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
    float32: ">>> hawk.math.float32(np.array([0.1]))\narray([0.1], dtype=float32)",
    float64: ">>> hawk.math.float64(np.array([3], dtype=np.int32))\narray([3.])",
    int32: ">>> hawk.math.int32(np.array([2.7, -2.7, 1e12, np.nan]))\n"
           "array([         2,         -2, 2147483647,          0], dtype=int32)",
    uint32: ">>> hawk.math.uint32(np.array([3.9, -1.0]))\narray([3, 0], dtype=uint32)",
}


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
    "ceil",
    "cos",
    "exp",
    "float32",
    "float64",
    "floor",
    "int32",
    "log",
    "maximum",
    "minimum",
    "pow",
    "sin",
    "sqrt",
    "tan",
    "uint32",
    "where",
]
