"""Parameter annotations and the dtype rules of hawk.

A kernel parameter is annotated with its role and type:

- ``Scalar``: one float per sample; float64, or float32 when the plane is float32.
- ``Float32``, ``Float64``, ``Int32``, ``UInt32``: one value per sample of that dtype.
- ``Param``: one value for all samples, passed by value; a Python number
  that promotes like one (``x_f32 * p`` stays float32).  ``Param[Int32]``
  and friends fix its dtype.
- ``Mutable[T]``: a per-sample plane of ``T`` the kernel writes in place; a
  ``Mutable`` assigned a cross-sample value (``hawk.sum(...)``) is one cell.
- ``Table``: an array of any shape shared by all samples, read at computed integer
  indices (``t[i]``, ``t[i, j]``); a float one (``Table[Int32]`` fixes the dtype).  An
  index out of range is an error the call raises (``Table``), or is clamped to the edge
  (``Table.clamp``) or wrapped around (``Table.wrap``).
- ``Scatter``: a float array of any shape the samples write at computed indices, whole:
  ``s[k] += v`` sums (each cell in eagle's fixed order), ``s[k] = v`` places (every cell
  written exactly once, checked).

A per-sample plane of shape ``(k, n)`` gives the kernel ``k`` values per
sample, read and written as ``x[0]`` … ``x[k-1]``.

Promotion follows NumPy (NEP 50): :func:`result_dtype` asks NumPy itself,
with Python numbers and untyped ``Param`` values as "weak" scalars.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from eagle.extend import EagleTypeError, EagleValueError

#: The dtypes a hawk value can have.  "wf"/"wi" are weak (Python) floats and
#: ints: they take the type of the other operand, as in NumPy.
DTYPES = ("f64", "f32", "i64", "i32", "u64", "u32", "bool")
WEAK = ("wf", "wi")
NUMPY = {"f64": np.float64, "f32": np.float32, "i64": np.int64, "i32": np.int32,
         "u64": np.uint64, "u32": np.uint32, "bool": np.bool_, "wf": np.float64, "wi": np.int64}
FLOATS = ("f64", "f32", "wf")


def of_numpy(dtype: np.dtype) -> str:
    """The hawk name of a NumPy dtype, or ValueError."""
    for name in DTYPES:
        if np.dtype(NUMPY[name]) == dtype:
            return name
    raise EagleValueError(f"hawk has no type for {dtype}; use float64, float32, int32 or uint32 planes")


def strong(dtype: str) -> str:
    """A weak type as the dtype it is stored in."""
    return {"wf": "f64", "wi": "i64"}.get(dtype, dtype)


def is_float(dtype: str) -> bool:
    return dtype in FLOATS


def _operand(dtype: str) -> object:
    if dtype == "wf":
        return 1.0
    if dtype == "wi":
        return 1
    return np.ones(1, NUMPY[dtype])


#: hawk operations and the NumPy ufunc whose result type they take.
UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
          "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "neg": np.negative,
          "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
          "eq": np.equal, "ne": np.not_equal, "and": np.logical_and, "or": np.logical_or,
          "not": np.logical_not, "sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp,
          "log": np.log, "sqrt": np.sqrt, "abs": np.absolute, "floor": np.floor, "ceil": np.ceil,
          "minimum": np.minimum, "maximum": np.maximum, "fmod": np.fmod, "expm1": np.expm1,
          "exp2": np.exp2, "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "sinh": np.sinh,
          "cosh": np.cosh, "tanh": np.tanh, "atan": np.arctan, "atan2": np.arctan2, "asin": np.arcsin,
          "acos": np.arccos, "hypot": np.hypot,
          "erf": np.sin}  # NumPy has no erf: typed as every float function is


@functools.cache
def result_dtype(op: str, *dtypes: str) -> str:
    """The dtype NumPy gives ``op`` over operands of these hawk dtypes.

    Weak operands on both sides stay weak (``2 * 3.0`` is a weak float).
    Raises TypeError where NumPy has no loop (``bool - bool``).
    """
    with np.errstate(all="ignore"):
        out = np.asarray(UFUNCS[op](*[_operand(d) for d in dtypes])).dtype
    if all(d in WEAK for d in dtypes) and out != np.bool_:
        return "wf" if out.kind == "f" else "wi"
    return of_numpy(out)


def promote(*dtypes: str) -> str:
    """The common type of values that meet (both arms of an if, ``where``)."""
    return functools.reduce(lambda a, b: result_dtype("add", a, b), dtypes)


# ------------------------------------------------------------- annotations


@dataclass(frozen=True)
class Kind:
    """What an annotation says: the role and, where fixed, the dtype."""

    role: str  # "in" (per-sample, read), "param" (by value), "mutable" (per-sample, in place), "table"
    dtype: str | None  # None: a float whose width follows the plane (Scalar) or the call (Param)
    bounds: str = "check"  # a Table's out-of-range indices: "check", "clamp" or "wrap"

    def __getitem__(self, inner: Kind) -> Kind:
        inner = getattr(inner, "__hawk_kind__", inner)  # a @hawk.struct class: its StructKind
        if self.role == "mutable" and self.dtype is None and isinstance(inner, Kind) and inner.role == "in":
            return dataclasses.replace(inner, role="mutable")  # a value type (hawk.vec3) stays one
        if self.role in ("param", "table") and self.dtype is None and type(inner) is Kind \
                and inner.role == "in" and inner.dtype:
            return Kind(self.role, inner.dtype, self.bounds)
        if self is Param and hasattr(inner, "family") and inner.role == "in":  # Param[hawk.vec3]
            return dataclasses.replace(inner, role="param")
        if self is Param and type(inner) is not Kind and isinstance(inner, Kind):
            raise EagleTypeError(f"hawk: Param[{inner!r}]: a Param is a number or a vector, matrix or "
                            "quaternion (Param[hawk.vec3]); pass a struct's fields as Params of their own")
        raise EagleTypeError(f"hawk: {self!r}[{inner!r}] is not a hawk type; write Mutable[Scalar], "
                        "Mutable[UInt32], Param[Int32], Table[Int32] and the like")

    @property
    def clamp(self) -> Kind:
        """A Table whose out-of-range indices take the nearest edge (``Table.clamp``)."""
        return self._bounded("clamp")

    @property
    def wrap(self) -> Kind:
        """A Table whose out-of-range indices go around, as Python's ``%`` (``Table.wrap``)."""
        return self._bounded("wrap")

    def _bounded(self, bounds: str) -> Kind:
        if self.role not in ("table", "scatter") or self.bounds != "check":
            raise EagleTypeError(f"hawk: {self!r}.{bounds} is not a hawk type; write Table.{bounds}, "
                            f"Table.{bounds}[Int32] or Scatter.{bounds}")
        return Kind(self.role, self.dtype, bounds)

    def __repr__(self) -> str:
        names = {(k.role, k.dtype): n for n, k in _NAMED.items()}
        if self.role == "scatter":
            return "Scatter" + ("" if self.bounds == "check" else f".{self.bounds}")
        if self.role == "table":
            mode = "" if self.bounds == "check" else f".{self.bounds}"
            return f"Table{mode}" + ("" if self.dtype is None else f"[{names['in', self.dtype]}]")
        if (self.role, self.dtype) in names:
            return names[self.role, self.dtype]
        return f"{self.role.capitalize()}[{names['in', self.dtype]}]"


Scalar = Kind("in", None)
Float64 = Kind("in", "f64")
Float32 = Kind("in", "f32")
Int32 = Kind("in", "i32")
UInt32 = Kind("in", "u32")
Param = Kind("param", None)
Mutable = Kind("mutable", None)
Table = Kind("table", None)
Scatter = Kind("scatter", None)
_NAMED = {"Scalar": Scalar, "Float64": Float64, "Float32": Float32, "Int32": Int32, "UInt32": UInt32,
          "Param": Param, "Mutable": Mutable}
