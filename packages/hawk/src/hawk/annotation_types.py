"""The annotations of a kernel's parameters as a type checker reads them.

At run time ``Scalar``, ``Param``, ``Mutable`` and the rest are :class:`hawk.types.Kind` values,
which hawk reads off a kernel's signature.  A type checker reads the same names as the types a
kernel's body computes with, so ``mypy --strict`` accepts a kernel file: ``Scalar``,
``Float32`` and ``Float64`` are ``float``; ``Int32`` and ``UInt32`` are ``int``; ``Param`` and
``Mutable`` are the type inside them (``float`` when bare: ``Param[Int32]`` is an ``int``); a
``Table`` (``Table.clamp``, ``Table.wrap``) is indexed to a value and a ``Scatter`` is indexed
and assigned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Annotated, Generic, TypeAlias

    from typing_extensions import TypeVar

    _T = TypeVar("_T", default=float)
    _Index: TypeAlias = "int | tuple[int, ...]"

    Scalar: TypeAlias = float
    Float64: TypeAlias = float
    Float32: TypeAlias = float
    Int32: TypeAlias = int
    UInt32: TypeAlias = int
    Param: TypeAlias = Annotated[_T, "hawk.Param"]
    Mutable: TypeAlias = Annotated[_T, "hawk.Mutable"]

    class _Read(Generic[_T]):
        def __getitem__(self, index: _Index) -> _T: ...

    class _Written(_Read[_T]):
        def __setitem__(self, index: _Index, value: _T) -> None: ...

    class Table(_Read[_T]):
        class clamp(_Read[_T]): ...  # spelt as at run time: Table.clamp

        class wrap(_Read[_T]): ...

    class Scatter(_Written[_T]):
        class clamp(_Written[_T]): ...

        class wrap(_Written[_T]): ...
else:
    from hawk.types import Float32, Float64, Int32, Mutable, Param, Scalar, Scatter, Table, UInt32

__all__ = ["Float32", "Float64", "Int32", "Mutable", "Param", "Scalar", "Scatter", "Table", "UInt32"]
