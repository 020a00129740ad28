"""``@hawk.struct``: a dataclass of typed fields, passed to a kernel as a group of planes.

A struct parameter is, for the compiler, one parameter per field, named
``b.pos``, ``b.mass`` ... (the names its derivatives' gradients and
cotangents take too); a call passes one instance of the dataclass whose
fields hold the planes, and the kernel reads them as ``b.pos``.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eagle.extend import EagleTypeError
from hawk.frontend import Source
from hawk.kernel import Kernel
from hawk.types import Kind
from hawk.values import StructKind, ValueKind


def struct(cls: type) -> type:
    """Make ``cls`` a dataclass whose fields (scalars, vectors, matrices) a kernel takes as planes.

    >>> @hawk.struct
    ... class Body:
    ...     pos: hawk.vec3
    ...     mass: hawk.Scalar
    >>> @hawk.kernel
    ... def dropped(b: Body) -> hawk.vec3:
    ...     return b.pos + hawk.vec3(0.0, -9.8, 0.0) * b.mass
    >>> dropped(Body(pos=np.zeros((3, 2)), mass=np.array([1.0, 2.0])))[1]
    array([ -9.8, -19.6])
    """
    if not dataclasses.is_dataclass(cls):
        cls = dataclass(cls)
    hints = typing.get_type_hints(cls)
    fields = []
    for f in dataclasses.fields(cls):
        kind = hints[f.name]
        if not isinstance(kind, Kind) or kind.role != "in" or isinstance(kind, StructKind):
            raise EagleTypeError(f"hawk.struct: {cls.__name__}.{f.name} is annotated {kind!r}; a field is a "
                            "per-sample type: Scalar, Float32 ..., hawk.vec3, hawk.mat33, hawk.quat ...")
        fields.append((f.name, kind))
    cls.__hawk_kind__ = StructKind("in", None, cls=cls, fields=tuple(fields))
    return cls


def _grouped(kind: Kind) -> bool:
    """A parameter spread into several: a struct, a ``Param`` of a value type (``Param[hawk.vec3]``)."""
    return isinstance(kind, StructKind) or (isinstance(kind, ValueKind) and kind.role == "param")


def spread_params(source: Source) -> tuple[Source, tuple[tuple[str, Kind], ...]]:
    """``source`` with each struct parameter one parameter per field and each ``Param`` of a value
    type one ``Param`` per component (``g.0``, ``g.1`` ...), and the parameters as written
    (empty: none of those)."""
    if not any(_grouped(k) for _, k in source.params):
        return source, ()
    structs = {name: kind for name, kind in source.params if _grouped(kind)}
    return dataclasses.replace(source, params=expanded(source.params), structs=structs), source.params


def expanded(params: Sequence[tuple[str, Kind]]) -> tuple[tuple[str, Kind], ...]:
    """The parameters with each struct one parameter per field (``b.pos``); a Mutable struct's
    fields are Mutable."""
    out: list[tuple[str, Kind]] = []
    for name, kind in params:
        if isinstance(kind, ValueKind) and kind.role == "param":
            out += [(f"{name}.{k}", Kind("param", kind.dtype)) for k in range(kind.size)]
        elif isinstance(kind, StructKind):
            out += [(f"{name}.{field}", dataclasses.replace(k, role=kind.role) if kind.role != "in" else k)
                    for field, k in kind.fields]
        else:
            out.append((name, kind))
    return tuple(out)


def components(name: str, kind: ValueKind, arg: Any, api: str) -> list[Any]:
    """A ``Param`` of a value type's argument as its components (Python floats; float32 numbers
    for a ``[Float32]`` one): a tuple, list or array of real numbers of the value's shape (or flat)."""
    try:
        array = np.asarray(arg)
    except (TypeError, ValueError):
        array = np.empty(0, object)
    if array.dtype.kind not in "iuf" or array.shape not in (kind.shape, (kind.size,)):
        shown = " x ".join(map(str, kind.shape))
        raise EagleTypeError(f"{api}: parameter {name!r} is {kind!r}: pass {kind.size} real numbers (a "
                             "tuple, "
                        f"list or array of shape {shown}), one value for all samples; got {arg!r}")
    number = np.float32 if kind.dtype == "f32" else float
    return [number(c) for c in array.reshape(-1).tolist()]


class StructKernel(Kernel):
    """A kernel with struct parameters (or ``Param`` value types): a call's struct instances are
    spread into their fields' planes, a ``Param[hawk.vec3]``'s numbers into its components
    (arguments already spread, as its derivatives take them, pass as they are)."""

    def __init__(self, *args: Any, structs: Sequence[tuple[str, StructKind]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.structs = tuple(structs)

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}: {k!r}" for n, k in self.structs)
        return f"<hawk.kernel {self.__name__}({shown})>"

    def spread(self, args: tuple[Any, ...], api: str) -> tuple[Any, ...]:
        if len(args) != len(self.structs):
            return args  # spread already (or wrong: the checks name what is missing)
        out: list[Any] = []
        for (name, kind), arg in zip(self.structs, args, strict=True):
            if isinstance(kind, ValueKind) and kind.role == "param":
                out += components(name, kind, arg, api)
                continue
            if not isinstance(kind, StructKind):
                out.append(arg)
                continue
            if not isinstance(arg, kind.cls):
                raise EagleTypeError(f"{api}: parameter {name!r} is a {kind.cls.__name__}; pass an instance "
                                     "of it "
                                f"(its fields the planes), got {type(arg).__name__}")
            out += [getattr(arg, field) for field, _ in kind.fields]
        return tuple(out)

    def _signature(self, args: tuple[Any, ...], api: str, eager: bool = False) -> Any:
        return super()._signature(self.spread(args, api), api, eager)

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return super()._call(self.spread(args, f"hawk.kernel {self.__name__}"), kwargs)
