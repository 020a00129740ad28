"""The functions a kernel may call, as the front end sees them.

``hawk.math`` and the reductions are ordinary Python functions (they run
on NumPy arrays outside a kernel, through the reference evaluator); inside
a kernel the front end recognises them by identity through this table.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

#: function object -> (hawk op, number of arguments)
_TABLE: dict[int, tuple[str, int]] = {}
_KEEP: list[Any] = []  # the registered objects, so their ids stay theirs


def register(fn: Callable[..., Any], op: str, arity: int) -> None:
    _TABLE[id(fn)] = (op, arity)
    _KEEP.append(fn)


def lookup(fn: object) -> tuple[str, int] | None:
    return _TABLE.get(id(fn))


register(builtins.abs, "abs", 1)

#: What the refusal of an unknown call lists.
ALLOWED_CALLS = ("hawk.math.sin, cos, tan, exp, log, sqrt, abs, floor, ceil, pow, minimum, maximum, "
                 "tanh, sinh, cosh, asin, acos, atan, atan2, erf, log1p, expm1, log2, log10, exp2, hypot, "
                 "fmod, sign, clip, isnan, isfinite, "
                 "where, float32, float64, int32, uint32; hawk.sum, max, min, any, all; abs; "
                 "hawk.sample(), hawk.sample2(width); hawk.random(...), hawk.random.uniform, uniform32, "
                 "normal, bits")
