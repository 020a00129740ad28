"""Swapping one array for another in recorded nodes: how a rebound name is merged in
place, how an argument gets the graph's own copy, and how ``bind`` re-points a graph."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from eagle.extend import Body, ChoiceFlow, EagleValueError, InnerFlow, LoopFlow, Node, Swap, is_plane

Mapping = dict[int, np.ndarray]  # id(old array) -> new array


def swap(value: Any, mapping: Mapping) -> Any:
    return mapping.get(id(value), value) if is_plane(value) else value


def views(arrays: Iterator[Any], pairs: list[tuple[Any, Any]]) -> Mapping:
    """For each of ``arrays`` that is a view (a row, a slice) inside an old array of ``pairs``
    (old, new), the same view of the new array: what ``bind`` puts in its place."""
    found: Mapping = {}
    for view in arrays:
        if not isinstance(view, np.ndarray) or id(view) in found:
            continue
        for old, new in pairs:
            if view is not old and isinstance(old, np.ndarray) and _within(view, old):
                found[id(view)] = _same_view(view, old, new)
                break
    return found


def _within(view: np.ndarray, old: np.ndarray) -> bool:
    (low, high), (old_low, old_high) = _bytes(view), _bytes(old)
    return view.size > 0 and old_low <= low and high <= old_high


def _bytes(a: np.ndarray) -> tuple[int, int]:
    """The first byte ``a`` touches and the one past its last."""
    start = a.__array_interface__["data"][0]
    reach = [(n - 1) * stride for n, stride in zip(a.shape, a.strides, strict=True)]
    return start + sum(r for r in reach if r < 0), start + sum(r for r in reach if r > 0) + a.itemsize


class _Interface:
    """An array interface over another array's memory; holds that array alive."""

    def __init__(self, interface: dict[str, Any], owner: Any) -> None:
        self.__array_interface__ = interface
        self.owner = owner


def _same_view(view: np.ndarray, old: np.ndarray, new: Any) -> np.ndarray:
    """The view of ``new`` at ``view``'s byte offset and strides in ``old``; refused unless both are
    contiguous alike (then every element of the view maps to the same element)."""
    alike = (isinstance(new, np.ndarray) and old.flags.c_contiguous and new.flags.c_contiguous
             and new.strides == old.strides)
    if not alike:
        raise EagleValueError("eagle.Graph.bind: the graph reads a view (a row or slice, shape "
                              f"{view.shape}) of "
                         f"an argument of shape {old.shape}; a view is re-pointed only between contiguous "
                         "arrays of one layout: pass contiguous arrays (np.ascontiguousarray), or call the "
                         "builder again")
    offset = view.__array_interface__["data"][0] - old.__array_interface__["data"][0]
    interface = dict(view.__array_interface__)
    interface["data"] = (new.__array_interface__["data"][0] + offset, not new.flags.writeable)
    interface["strides"] = view.strides
    return np.asarray(_Interface(interface, new))


def in_body(body: Body, mapping: Mapping, label: str) -> None:
    """Swap arrays in the nodes of ``body`` (in place: the nodes keep their identity)."""
    _swapper(mapping, label).body(body)


def in_node(node: Node, mapping: Mapping, label: str) -> None:
    """Swap arrays in one node (in place; a construct's bodies too), through its kind's ``rebuild``."""
    _swapper(mapping, label).node(node)


class Unpatchable(EagleValueError):
    """A node whose kind cannot be re-pointed holds an array to replace: ``bind`` calls the
    builder again instead (seed 000); a merge while recording refuses."""


def _swapper(mapping: Mapping, label: str) -> Swap:
    def refuse(node: Node, planes: list[str]) -> None:
        raise Unpatchable(f"eagle.Graph.builder: node {label!r} of kind {node.kind!r} holds "
                         f"{', '.join(planes)}, an array the builder must replace (a name rebound inside a "
                         "device construct, or a bound argument), and its kind cannot be re-pointed (an "
                         "opaque function keeps its own references): pass it arrays the builder does not "
                         "rebind, or register the kind with rebuild=")

    return Swap(lambda a: swap(a, mapping), in_place=True, refuse=refuse)


def in_tree(tree: Any, mapping: Mapping) -> Any:
    """A result tree (dicts, tuples, lists of arrays) with its arrays swapped."""
    if isinstance(tree, dict):
        return {k: in_tree(v, mapping) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(in_tree(v, mapping) for v in tree)
    return swap(tree, mapping)


def untouched_after(body: Body, producer: Node, array: Any) -> bool:
    """Whether no node recorded after ``producer`` in ``body`` touches ``array``, and ``producer``
    is in no loop of ``body`` (whose next turn would run the nodes before it again)."""
    order = [(n, looped) for step in body.nodes() for n, looped in _walk(step, False)]
    at = next(k for k, (n, _) in enumerate(order) if n is producer)
    return not order[at][1] and not any(_touches(n, array) for n, _ in order[at + 1:])


def _walk(node: Node, looped: bool) -> Iterator[tuple[Node, bool]]:
    """``node`` and the nodes inside it, in record order, each with whether a loop holds it."""
    yield node, looped
    looped = looped or isinstance(node.flow(), LoopFlow)
    for body in node.bodies():
        for step in body.nodes():
            yield from _walk(step, looped)


def _touches(node: Node, array: Any) -> bool:
    """A construct's own plane is its cell (the nodes inside are walked on their own)."""
    flow = node.flow()
    if isinstance(flow, InnerFlow):
        return False
    planes = [flow.cell] if isinstance(flow, (ChoiceFlow, LoopFlow)) else [a for _, a, _ in node.planes()]
    return any(a is array or (isinstance(a, np.ndarray) and isinstance(array, np.ndarray)
                              and np.may_share_memory(a, array)) for a in planes)


def contains(body: Body, target: Node) -> bool:
    """Whether ``target`` was recorded in ``body`` (in a fork, a construct, or signalled)."""
    return any(n is target for node in body.nodes() for n in node.walk())


def renames_cleanly(body: Body, old: Any, new: Any) -> bool:
    """Whether every launch in ``body`` that touches ``old`` still runs right with ``old`` renamed
    ``new``: one that is not per-sample (a kernel reading a Table) must not come to write a plane
    it reads, as the launch's own overlap rule (``refuse_overlap``) says."""
    for step in body.nodes():
        for node, _ in _walk(step, False):
            bound = getattr(node, "payload", None)
            if not hasattr(bound, "refuse_overlap") or not any(a is old for _, a, _ in node.planes()):
                continue
            try:
                bound.rebuilt(lambda a: new if a is old else a).refuse_overlap("")
            except ValueError:
                return False
    return True
