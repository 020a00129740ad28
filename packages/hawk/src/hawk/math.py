"""``hawk.math``: the functions a kernel may call.

Inside a kernel they compile to C and CUDA; outside one they run on NumPy
arrays with the same meaning (the reference semantics of
:mod:`hawk.semantics`), so a kernel's body can be tried in plain Python.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hawk import intrinsics
from hawk.semantics import OPS, cast_array
from hawk.types import of_numpy


def _unary(op: str) -> Any:
    def fn(x: Any) -> Any:
        with np.errstate(all="ignore"):
            return OPS[op](np.asarray(x))
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``{op}(x)`` per sample, as NumPy's."
    intrinsics.register(fn, op, 1)
    return fn


def _binary(op: str) -> Any:
    def fn(a: Any, b: Any) -> Any:
        with np.errstate(all="ignore"):
            return OPS[op](np.asarray(a), np.asarray(b))
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``{op}(a, b)`` per sample, as NumPy's (NaN propagates through minimum/maximum)."
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


def where(cond: Any, a: Any, b: Any) -> Any:
    """``a`` where ``cond`` holds, else ``b``; both are computed (write an ``if`` to compute one)."""
    return np.where(cond, a, b)


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
