"""Vector, matrix and quaternion values: their types and how a value is held.

A value type (``hawk.vec3``, ``hawk.mat33``, ``hawk.quat``...) is an
annotation like ``Scalar``: its width follows the plane (float64, or float32
for a float32 plane), and ``hawk.vec3[Float32]`` (``hawk.vec3f``) or
``hawk.vec3[Float64]`` (``hawk.vec3d``) fixes it.  Per sample it is stored as
component planes, the layout hawk already uses: a ``vec3`` is a ``(3, n)``
plane, a ``mat33`` a ``(3, 3, n)`` plane (row-major), a ``quat`` a
``(4, n)`` plane in Warp's order ``x, y, z, w`` (real part last).

Inside a kernel a value is a :class:`Value`: a tuple of scalar operands.
The front end lowers every operation on it to scalar IR ops, so the C and
CUDA emitters, the reference evaluator, the derivatives and fusion see only
scalars.  :func:`flatten` takes any value apart into its scalar operands and
gives the function that rebuilds it: what an ``if``'s merge (a phi per
scalar) and ``hawk.math.where`` use.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eagle.extend import EagleTypeError, EagleValueError
from hawk.types import Float32, Float64, Kind

_FAMILIES = {"vec": "vector", "mat": "matrix", "quat": "quaternion"}


@dataclass(frozen=True)
class ValueKind(Kind):
    """A vector, matrix or quaternion type; as an annotation, one value per sample.

    >>> hawk.vec3, hawk.mat33[hawk.Float32], hawk.quat.shape
    (hawk.vec3, hawk.mat33[Float32], (4,))
    """

    family: str = "vec"
    shape: tuple[int, ...] = (3,)

    @property
    def size(self) -> int:
        """The number of scalar components."""
        return math.prod(self.shape)

    @property
    def type_name(self) -> str:
        return self.family if self.family == "quat" else self.family + "".join(map(str, self.shape))

    def __getitem__(self, inner: Kind) -> ValueKind:  # type: ignore[override]
        if self.role == "in" and self.dtype is None and inner in (Float32, Float64):
            return ValueKind("in", inner.dtype, family=self.family, shape=self.shape)
        raise EagleTypeError(f"hawk: {self!r}[{inner!r}] is not a hawk type; fix a value type's width with "
                        f"hawk.{self.type_name}[Float32] or hawk.{self.type_name}[Float64]")

    def __repr__(self) -> str:
        name = f"hawk.{self.type_name}" + ("" if self.dtype is None else f"[{Kind('in', self.dtype)!r}]")
        return name if self.role == "in" else f"{Kind(self.role, None)!r}[{name}]"

    def plane(self, n: int | str = "n") -> tuple[Any, ...]:
        """The shape of its per-sample plane over ``n`` samples."""
        return (*self.shape, n)


vec2, vec3, vec4 = (ValueKind("in", None, family="vec", shape=(k,)) for k in (2, 3, 4))
mat22, mat33, mat44 = (ValueKind("in", None, family="mat", shape=(k, k)) for k in (2, 3, 4))
quat = ValueKind("in", None, family="quat", shape=(4,))
TYPES = {t.type_name: t for t in (vec2, vec3, vec4, mat22, mat33, mat44, quat)}
# the fixed-width spellings Warp users know: hawk.vec3f is hawk.vec3[Float32], hawk.vec3d float64
vec2f, vec3f, vec4f, mat22f, mat33f, mat44f, quatf = (t[Float32] for t in TYPES.values())
vec2d, vec3d, vec4d, mat22d, mat33d, mat44d, quatd = (t[Float64] for t in TYPES.values())


@dataclass(frozen=True)
class Value:
    """A vector, matrix or quaternion inside a kernel: its type and its components, row-major.

    The components are IR operands in the front end and NumPy arrays outside
    a kernel (:mod:`hawk.linalg` computes on either)."""

    kind: ValueKind
    comps: tuple[Any, ...]

    def __post_init__(self) -> None:
        assert len(self.comps) == self.kind.size, (self.kind, len(self.comps))

    @property
    def rows(self) -> list[tuple[Any, ...]]:
        """A matrix's rows (a vector: itself as one row)."""
        width = self.kind.shape[-1]
        return [self.comps[r * width:(r + 1) * width] for r in range(self.size // width)]

    @property
    def size(self) -> int:
        return self.kind.size

    def replaced(self, index: int, comp: Any) -> Value:
        """This value with component ``index`` (flat, row-major) set to ``comp``."""
        return Value(self.kind, (*self.comps[:index], comp, *self.comps[index + 1:]))


def check_plane(name: str, kind: ValueKind, arg: Any, api: str) -> None:
    """A plane passed for a value parameter: ``(*shape, n)`` of floats (of the fixed width)."""
    if tuple(arg.shape[:-1]) != kind.shape or arg.ndim != len(kind.shape) + 1:
        shown = ", ".join(map(str, kind.shape))
        raise EagleValueError(f"{api}: parameter {name!r} is {kind!r}: a plane of shape ({shown}, n); got "
                         f"{tuple(arg.shape)}")
    if arg.dtype.kind != "f" or arg.dtype.itemsize not in (4, 8) or (
            kind.dtype is not None and arg.dtype.itemsize != (4 if kind.dtype == "f32" else 8)):
        width = {"f32": "float32", "f64": "float64"}.get(kind.dtype or "", "float32 or float64")
        raise EagleTypeError(f"{api}: parameter {name!r} is {kind!r} ({width}); got {arg.dtype}: pass "
                        f"x.astype(np.{width.split()[0]})")


def kind_of(family: str, shape: tuple[int, ...]) -> ValueKind:
    """The value type of that family and shape (of any width)."""
    return ValueKind("in", None, family=family, shape=shape)


@dataclass(frozen=True)
class StructValue:
    """A struct built in a kernel (``Body(pos=p, mass=m)``): its kind and its fields' values, in
    field order."""

    kind: StructKind
    fields: tuple[Any, ...]

    def field(self, name: str) -> Any:
        return self.fields[[n for n, _ in self.kind.fields].index(name)]

    def replaced(self, name: str, value: Any) -> StructValue:
        names = [n for n, _ in self.kind.fields]
        k = names.index(name)
        return StructValue(self.kind, (*self.fields[:k], value, *self.fields[k + 1:]))


class StructTree(dict):
    """A returned struct in a result tree: its fields' leaves by field name (a dict, as the trees
    of eagle's graphs and derivatives hold it) and its ``@hawk.struct`` class."""

    def __init__(self, cls: type, items: dict[str, Any]) -> None:
        super().__init__(items)
        self.cls = cls

    def __eq__(self, other: object) -> bool:  # two returns give the same tree: the same class too
        return super().__eq__(other) and getattr(other, "cls", None) is self.cls

    __hash__ = None


def describe(value: object) -> str:
    """A value's type as a message names it."""
    if isinstance(value, Value):
        return f"a {value.kind.type_name}"
    if isinstance(value, StructValue):
        return f"a {value.kind.cls.__name__}"
    return "a scalar"


def flatten(value: Any) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """``value``'s scalar operands, and the function that builds the same kind of value from
    new ones (a scalar: itself, as a list of one).  An if merges a value with one phi per scalar
    operand; a loop carries it the same way."""
    if isinstance(value, Value):
        kind = value.kind
        return list(value.comps), lambda parts: Value(kind, tuple(parts))
    if isinstance(value, StructValue):  # its fields' operands, one after another
        pieces = [flatten(f) for f in value.fields]
        sizes = [len(p) for p, _ in pieces]

        def rebuild(parts: list[Any]) -> StructValue:
            out, at = [], 0
            for (_, make), size in zip(pieces, sizes, strict=True):
                out.append(make(parts[at:at + size]))
                at += size
            return StructValue(value.kind, tuple(out))

        return [p for part, _ in pieces for p in part], rebuild
    return [value], lambda parts: parts[0]


def shape_of(value: Any) -> object:
    """What must agree for values to merge: a value's family and shape, a struct's fields'."""
    if isinstance(value, Value):
        return value.kind.family, value.kind.shape
    if isinstance(value, StructValue):
        return value.kind.cls, tuple(map(shape_of, value.fields))
    return None


def same_shape(values: list[Any]) -> bool:
    """Whether values can merge (an if's arms, ``where``): all scalars, or one value type, or one
    struct of the same field types."""
    return len({shape_of(v) for v in values}) == 1


@dataclass(frozen=True)
class StructKind(Kind):
    """A struct as an annotation: its class and its (field, Kind) pairs."""

    cls: type = object
    fields: tuple[tuple[str, Kind], ...] = ()

    def __repr__(self) -> str:
        return self.cls.__name__ if self.role == "in" else f"Mutable[{self.cls.__name__}]"


#: ``v.x`` ... : the component a letter names (a quaternion's ``w`` is its real part, last).
LETTERS = {"x": 0, "y": 1, "z": 2, "w": 3}
