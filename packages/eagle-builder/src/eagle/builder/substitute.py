"""Swapping one array for another in recorded nodes: how a rebound name is merged in
place, how an argument gets the graph's own copy, and how ``bind`` re-points a graph."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from eagle._edges import is_plane
from eagle._kinds import Node
from eagle._nodes import Copy, Opaque
from eagle._regions import Body, DeviceIf, DeviceLoop, DeviceSwitch, Fork, SignalAfter, Wait
from eagle.plan import BoundPlan

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
        raise ValueError(f"eagle.Graph.bind: the graph reads a view (a row or slice, shape {view.shape}) of "
                         f"an argument of shape {old.shape}; a view is re-pointed only between contiguous "
                         "arrays of one layout: pass contiguous arrays (np.ascontiguousarray), or call the "
                         "builder again")
    offset = view.__array_interface__["data"][0] - old.__array_interface__["data"][0]
    interface = dict(view.__array_interface__)
    interface["data"] = (new.__array_interface__["data"][0] + offset, not new.flags.writeable)
    interface["strides"] = view.strides
    return np.asarray(_Interface(interface, new))


def in_body(body: Body, mapping: Mapping, label: str) -> None:
    for node in leaves(body):
        in_node(node, mapping, label)


def in_node(node: Node, mapping: Mapping, label: str) -> None:
    """Swap arrays in one node (in place; a construct's bodies too)."""
    p = node.payload
    if isinstance(p, BoundPlan):
        p.args = [swap(a, mapping) for a in p.args]
        if hasattr(p, "outputs"):
            p.outputs = [swap(a, mapping) for a in p.outputs]
    elif isinstance(p, Copy):
        node.payload = Copy(swap(p.src, mapping), swap(p.dst, mapping))
    elif isinstance(p, (DeviceIf, DeviceSwitch, DeviceLoop)):
        p.cell = swap(p.cell, mapping)
        bodies = [p.then, p.orelse] if isinstance(p, DeviceIf) else [*p.arms.values(), p.default] \
            if isinstance(p, DeviceSwitch) else [p.body]
        for body in bodies:
            in_body(body, mapping, label)
    elif isinstance(p, SignalAfter):
        in_node(p.inner, mapping, label)
    elif isinstance(p, Opaque):
        touched = [n for n, a in [*p.reads.items(), *p.writes.items()] if id(a) in mapping]
        if touched:
            raise ValueError(f"eagle.Graph.builder: the opaque node {label!r} declares {', '.join(touched)}, "
                             "an array the builder must replace (a name rebound inside a device construct, "
                             "or a bound argument); an opaque function keeps its own reference: pass it "
                             "arrays the builder does not rebind")
    elif not isinstance(p, Wait):
        planes = [n for n, a, _ in node.planes() if id(a) in mapping]
        if planes:
            raise ValueError(f"eagle.Graph.builder: node {label!r} of kind {node.kind!r} holds {planes}, "
                             "which the builder must replace, and the builder cannot re-point that kind")


def in_tree(tree: Any, mapping: Mapping) -> Any:
    """A result tree (dicts, tuples, lists of arrays) with its arrays swapped."""
    if isinstance(tree, dict):
        return {k: in_tree(v, mapping) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(in_tree(v, mapping) for v in tree)
    return swap(tree, mapping)


def leaves(body: Body) -> Iterator[Node]:
    """The nodes of a body and of its forks, in order."""
    for step in body.steps:
        if isinstance(step, Fork):
            for branch in step.branches:
                yield from leaves(branch)
        else:
            yield step


def untouched_after(body: Body, producer: Node, array: Any) -> bool:
    """Whether no node recorded after ``producer`` in ``body`` touches ``array``, and ``producer``
    is in no device loop of ``body`` (whose next turn would run the nodes before it again)."""
    order = [(n, looped) for step in leaves(body) for n, looped in _walk(step, False)]
    at = next(k for k, (n, _) in enumerate(order) if n is producer)
    return not order[at][1] and not any(_touches(n, array) for n, _ in order[at + 1:])


def _walk(node: Node, looped: bool) -> Iterator[tuple[Node, bool]]:
    """``node`` and the nodes inside it, in record order, each with whether a device loop holds it."""
    yield node, looped
    p = node.payload
    if isinstance(p, SignalAfter):
        yield from _walk(p.inner, looped)
    elif isinstance(p, (DeviceIf, DeviceSwitch, DeviceLoop)):
        bodies = [p.then, p.orelse] if isinstance(p, DeviceIf) else [*p.arms.values(), p.default] \
            if isinstance(p, DeviceSwitch) else [p.body]
        for inner in bodies:
            for step in leaves(inner):
                yield from _walk(step, looped or isinstance(p, DeviceLoop))


def _touches(node: Node, array: Any) -> bool:
    """A construct's own plane is its cell (the nodes inside are walked on their own)."""
    p = node.payload
    if isinstance(p, SignalAfter):
        return False
    construct = isinstance(p, (DeviceIf, DeviceSwitch, DeviceLoop))
    planes = [p.cell] if construct else [a for _, a, _ in node.planes()]
    return any(a is array or (isinstance(a, np.ndarray) and isinstance(array, np.ndarray)
                              and np.may_share_memory(a, array)) for a in planes)


def contains(body: Body, target: Node) -> bool:
    """Whether ``target`` was recorded in ``body`` (in a fork, a construct, or signalled)."""
    for node in leaves(body):
        if node is target or _inside(node, target):
            return True
    return False


def _inside(node: Node, target: Node) -> bool:
    p = node.payload
    if isinstance(p, SignalAfter):
        return p.inner is target or _inside(p.inner, target)
    if isinstance(p, DeviceIf):
        return contains(p.then, target) or contains(p.orelse, target)
    if isinstance(p, DeviceSwitch):
        return any(contains(b, target) for b in [*p.arms.values(), p.default])
    if isinstance(p, DeviceLoop):
        return contains(p.body, target)
    return False
