"""The index of a counted (or capped) device loop, as its body sees it, and the rows it moves.

``for i in range(cell):`` (or ``for t in range(T):`` over the rows of a
stacked array, or a capped loop's ``for i in range(N):``) gives the body a
:class:`LoopIndex`: a one-cell int32 array the loop sets to the turn on the
device, which a kernel reads as a one-cell plane (``i: Int32``).  ``i + 1``,
``2 * i``, ``n - i`` with Python ints are recorded as cell nodes at the start
of the loop body (the index holds still through a turn), computed every
turn; ``xs[i]`` records a move of row ``i`` into a plane of the body's own,
and ``ys[i] = v`` a move of ``v`` into that row.  Any use that needs a Python
value while recording (a test, ``int(i)``, a NumPy index) is refused, naming
what to write instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eagle.extend import CellAffine, EagleNameError, EagleTypeError, Node


class LoopIndex:
    """The turn of the device loop at ``where`` (``m * turn + k``), held in ``cell``."""

    def __init__(self, recorder: Any, cell: Any, where: str, loop: Any, m: int = 1, k: int = 0) -> None:
        self.recorder, self.cell, self.where, self.loop = recorder, cell, where, loop
        self.m, self.k = m, k

    @property
    def is_turn(self) -> bool:
        """The loop's own index, not a value computed from it."""
        return (self.m, self.k) == (1, 0)

    def affine(self, m: int, k: int, op: str) -> LoopIndex:
        """``m * self + k`` as a cell a node of the loop body writes every turn."""
        if not self.recorder.inside(self.loop):
            raise EagleTypeError(f"eagle.Graph.builder: `{op}` on the index of the device loop at "
                                 f"{self.where} "
                            "outside that loop: it counts that loop's turns only; compute with it inside "
                            "the loop body")
        cell = self.recorder.new_index_cell()
        self.recorder.hoist(self.loop, Node("cell_affine", CellAffine(self.cell, cell, m, k)))
        return LoopIndex(self.recorder, cell, self.where, self.loop, m * self.m, m * self.k + k)

    def _number(self, other: Any, op: str) -> int:
        if isinstance(other, bool) or not isinstance(other, (int, np.integer)):
            raise EagleTypeError(f"eagle.Graph.builder: `i {op} {type(other).__name__}` with the index of "
                                 "the "
                            f"device loop at {self.where}: the builder computes with it and Python ints "
                            "only (i + 1, 2 * i, n - i); for anything else pass i to a kernel (i: Int32)")
        return int(other)

    def __add__(self, other: Any) -> LoopIndex:
        return self.affine(1, self._number(other, "+"), "i + k")

    __radd__ = __add__

    def __sub__(self, other: Any) -> LoopIndex:
        return self.affine(1, -self._number(other, "-"), "i - k")

    def __rsub__(self, other: Any) -> LoopIndex:
        return self.affine(-1, self._number(other, "-"), "k - i")

    def __mul__(self, other: Any) -> LoopIndex:
        return self.affine(self._number(other, "*"), 0, "i * k")

    __rmul__ = __mul__

    def __neg__(self) -> LoopIndex:
        return self.affine(-1, 0, "-i")

    def refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise EagleNameError(f"eagle.Graph.builder: the loop variable of the device loop at {self.where} has "
                             "no "
                        "value while recording (the turns are counted on the device): pass it to a kernel "
                        "as a one-cell plane (i: Int32), read a row of a stacked array with xs[i], or "
                        "compute i + k, i * k, k - i with Python ints")

    __bool__ = __index__ = __int__ = __float__ = __array__ = refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __truediv__ = __floordiv__ = __mod__ = refuse
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<eagle.builder the index of the device loop at {self.where}>"


def kernel_arguments(kernel: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A kernel call's arguments with each loop index as its cell, which the kernel must read as a
    one-cell plane: a ``Param`` is read once, when the graph is recorded, and would not follow
    the turns."""
    if not any(isinstance(a, LoopIndex) for a in args):
        return args
    params = getattr(kernel, "params", ())
    out = []
    for k, arg in enumerate(args):
        if isinstance(arg, LoopIndex):
            name, kind = params[k] if k < len(params) else (f"#{k}", None)
            role = getattr(kind, "role", "in")
            if role == "in" and getattr(kind, "dtype", "i32") != "i32":
                raise EagleTypeError(f"{kernel.__name__}: parameter {name!r} is {kind!r}, and is passed the "
                                     "index "
                                f"of the device loop at {arg.where}, a one-cell int32 plane: annotate it "
                                "Int32 (and convert inside the kernel: hm.float64(i))")
            if role != "in":
                what = "a Param, read once while recording" if role == "param" else "written in place"
                raise EagleNameError(f"{kernel.__name__}: parameter {name!r} is {what}, and the loop "
                                     "variable of "
                                f"the device loop at {arg.where} has no value while recording (the turns are "
                                "counted on the device): annotate the parameter Int32, a one-cell plane the "
                                "kernel reads at every turn")
            if not arg.recorder.inside(arg.loop):
                raise EagleTypeError(f"{kernel.__name__}: parameter {name!r} is passed the index of the "
                                     "device "
                                f"loop at {arg.where} outside that loop: it counts that loop's turns only; "
                                "call the kernel inside the loop body")
            arg = arg.cell
        out.append(arg)
    return tuple(out)
