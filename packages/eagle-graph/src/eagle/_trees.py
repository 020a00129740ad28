"""Result trees (dicts, tuples and lists, nested): their leaves in order, and the tree rebuilt."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def flatten(tree: Any) -> list[Any]:
    """The leaves of ``tree``, in order (a dict's in its order).

    >>> from eagle.extend import flatten
    >>> flatten({"a": (1, [2, 3]), "b": 4})
    [1, 2, 3, 4]
    """
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in flatten(v)]
    if isinstance(tree, (tuple, list)):
        return [x for v in tree for x in flatten(v)]
    return [tree]


def unflatten(tree: Any, values: Iterator[Any]) -> Any:
    """``tree`` with its leaves replaced, in order, by the next of ``values``.

    >>> from eagle.extend import unflatten
    >>> unflatten({"a": (1, [2, 3]), "b": 4}, iter("wxyz"))
    {'a': ('w', ['x', 'y']), 'b': 'z'}
    """
    if isinstance(tree, dict):
        return {k: unflatten(v, values) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(unflatten(v, values) for v in tree)
    return next(values)
