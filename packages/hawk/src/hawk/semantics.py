"""What each hawk operation computes, written once in NumPy.

This is the definition the C and CUDA back ends reproduce and the
reference evaluator runs.  Where C and NumPy disagree, hawk picks one
meaning and both sides implement it:

- integer ``+ - *`` and negation wrap around (two's complement);
- integer ``//`` and ``%`` round toward minus infinity, as in Python; a zero
  divisor gives 0;
- float ``//`` is ``floor(a / b)``; float ``%`` is ``fmod`` moved to the
  sign of the divisor (NumPy's ``remainder``);
- integer ``**`` with a negative exponent gives 0;
- a float cast to an integer truncates toward zero and saturates at the
  type's limits; NaN gives 0;
- ``minimum``/``maximum`` propagate NaN, as NumPy's do;
- ``sin cos tan exp log pow`` and ``tanh sinh cosh asin acos atan atan2 erf log1p expm1
  log2 log10 exp2 hypot`` are eagle's own (:mod:`hawk.libm`), not NumPy's or the C
  library's, so that every target gives the same bits; ``fmod`` is C's, exact everywhere;
- the draws of ``hawk.random`` are Philox4x32-10 (:mod:`hawk.philox`), integer-exact.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from hawk import libm, philox
from hawk.types import NUMPY, is_float, strong


def _int_floordiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    zero = b == 0
    safe = np.where(zero, 1, b)
    with np.errstate(all="ignore"):
        return np.where(zero, 0, np.floor_divide(a, safe))


def _int_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    zero = b == 0
    with np.errstate(all="ignore"):
        return np.where(zero, 0, np.remainder(a, np.where(zero, 1, b)))


def _float_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    mod = np.fmod(a, b)
    return np.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


def _int_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    negative = b < 0
    with np.errstate(all="ignore"):
        return np.where(negative, 0, np.power(a, np.where(negative, 0, b)))


def _float_or_int(float_fn: Callable[..., Any], int_fn: Callable[..., Any]) -> Callable[..., Any]:
    def op(*args: np.ndarray) -> np.ndarray:
        return (float_fn if np.asarray(args[0]).dtype.kind == "f" else int_fn)(*args)
    return op


#: op -> f(*operands) over arrays already of the op's computation dtype.
OPS: dict[str, Callable[..., Any]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "floordiv": _float_or_int(lambda a, b: np.floor(a / b), _int_floordiv),
    "mod": _float_or_int(_float_mod, _int_mod),
    "pow": _float_or_int(lambda a, b: libm.evaluate("pow", a, b), _int_pow),
    "neg": np.negative, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "eq": np.equal, "ne": np.not_equal, "and": np.logical_and, "or": np.logical_or, "not": np.logical_not,
    **{name: functools.partial(libm.evaluate, name) for name in libm.FUNCTIONS if name != "pow"},
    "fmod": np.fmod,
    "sqrt": np.sqrt,
    "abs": np.absolute, "floor": np.floor, "ceil": np.ceil, "minimum": np.minimum, "maximum": np.maximum,
    "select": np.where, "copy": lambda a: a,
    # hawk.grid_index: the truncated quotient of float64 integers whose quotient is an int64
    "index_quotient": lambda a, b: np.trunc(a / b).astype(np.int64),
    **{op: functools.partial(philox.evaluate, op) for op in philox.DRAWS},
}


def cast_array(value: Any, source: str, target: str) -> Any:
    """hawk's conversion of ``value`` (of dtype ``source``) to ``target``."""
    out_type = NUMPY[strong(target)]
    value = np.asarray(value)
    if is_float(source) and not is_float(target) and target != "bool":
        info = np.iinfo(out_type)
        low, high = float(info.min), float(info.max)  # high may round up: compared with >=
        v = np.where(np.isnan(value), 0.0, value)
        with np.errstate(invalid="ignore"):
            inside = np.where((v > low) & (v < high), v, 0.0).astype(out_type)
        return np.where(v <= low, out_type(info.min), np.where(v >= high, out_type(info.max), inside))
    if target == "bool":
        return value != 0
    with np.errstate(over="ignore"):
        return value.astype(out_type)


def convert(value: float | int | bool, target: str) -> float | int | bool:
    """A Python number as ``target`` (a weak target keeps it as it is)."""
    if target in ("wf", "wi"):
        return value
    source = "f64" if isinstance(value, float) else "bool" if isinstance(value, bool) else "i64"
    return cast_array(value, source, target).item()
