"""eagle's one fixed order of a reduction (DESIGN.md §4), written out in NumPy: adjacent pairs
combined, an odd last value carried up, level after level.  The reference interpreter and the
reduce kind's reference entry use it; every lowering's reductions are held to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def tree(x: np.ndarray, combine: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Any:
    """``x`` (1-D, not empty) folded in eagle's one fixed order: adjacent pairs combined, an odd
    last value carried up unchanged, level after level (libeagle's reduce.c says why every block
    cut gives this same tree)."""
    level = np.asarray(x)
    while level.size > 1:
        pairs = level.size // 2
        combined = combine(level[0:2 * pairs:2], level[1:2 * pairs:2])
        level = np.concatenate([combined, level[2 * pairs:]]) if level.size % 2 else combined
    return level[0]


def _nan_first(pick: Callable[[Any, Any], Any]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    # max/min propagate a NaN of either side, the left one first, as libeagle's OP_MAX/OP_MIN do.
    return lambda a, b: np.where(a != a, a, np.where(b != b, b, pick(a, b)))


_COMBINE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "sum": np.add,
    "max": _nan_first(lambda a, b: np.where(a >= b, a, b)),
    "min": _nan_first(lambda a, b: np.where(a <= b, a, b)),
    "all": np.logical_and,
    "any": np.logical_or,
}


def identity(op: str, dtype: Any) -> Any:
    """What a reduction over no samples gives: the identity of ``op`` in ``dtype``."""
    dtype = np.dtype(dtype)
    if op in ("sum", "any"):
        return dtype.type(0)
    if op == "all":
        return dtype.type(1)
    if dtype.kind == "f":
        return dtype.type(-np.inf if op == "max" else np.inf)
    if dtype.kind == "b":
        return dtype.type(op == "min")
    info = np.iinfo(dtype)
    return dtype.type(info.min if op == "max" else info.max)


def fixed_order(op: str, x: Any) -> Any:
    """``op`` ("sum", "max", "min", "all", "any") over a 1-D plane, in eagle's fixed order; integer
    sums wrap, all/any give 1 or 0 in ``x``'s dtype.

    >>> from eagle.testing import fixed_order
    >>> float(fixed_order("sum", np.array([1e16, 1.0, -1e16, 1.0])))   # (1e16 + 1) + (-1e16 + 1)
    0.0
    """
    x = np.asarray(x)
    if x.size == 0:
        return identity(op, x.dtype)
    if op in ("all", "any"):
        return x.dtype.type(tree(x != 0, _COMBINE[op]))
    with np.errstate(over="ignore", invalid="ignore"):
        return x.dtype.type(tree(x, _COMBINE[op]))
