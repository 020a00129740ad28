"""Node kinds: the registry, Node, and how a kind lowers to the host.

A kind supplies ``reads`` and ``writes`` (payload -> ``(plane name, array,
role)`` tuples, which is all the edge derivation sees), ``lower_cpu`` and
``lower_gpu``.  The core never special-cases a kind outside its own
definition: the built-in kinds are registered through the same call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eagle._program import Program

PlaneTuple = tuple[str, Any, str]  # (plane name, array, role)


@dataclass(frozen=True)
class HostItems:
    """What ``lower_cpu`` returns for native work: a function that appends
    libeagle items to a program.  A plain callable is a Python step instead.

    ``native`` says whether the items are native kernel calls that may run
    inside a ``branch_tasks`` stage (no Python, no conditional).
    """

    emit: Callable[[Program], object]
    native: bool = True


@dataclass(frozen=True)
class NodeKind:
    name: str
    reads: Callable[[Any], Iterable[PlaneTuple]]
    writes: Callable[[Any], Iterable[PlaneTuple]]
    lower_cpu: Callable[[Any], Callable[[], object] | HostItems] | None
    lower_gpu: Callable[[Any], object] | None

    def same_as(self, other: NodeKind) -> bool:
        return (self.reads, self.writes, self.lower_cpu, self.lower_gpu) == (
            other.reads, other.writes, other.lower_cpu, other.lower_gpu)


_REGISTRY: dict[str, NodeKind] = {}


def register_node_kind(name: str, *, reads: Callable[[Any], Iterable[PlaneTuple]],
                       writes: Callable[[Any], Iterable[PlaneTuple]],
                       lower_gpu: Callable[[Any], object] | None = None,
                       lower_cpu: Callable[[Any], Callable[[], object] | HostItems] | None = None,
                       ) -> NodeKind:
    """Register a kind of node under ``name``.

    Registering the same kind twice is fine; a different kind under a taken
    name is refused with both named.
    """
    kind = NodeKind(name, reads, writes, lower_cpu, lower_gpu)
    taken = _REGISTRY.get(name)
    if taken is not None and not taken.same_as(kind):
        raise ValueError(f"eagle.graph.register_node_kind: a different kind is already registered "
                         f"as {name!r} ({taken}); pick another name for {kind}")
    _REGISTRY.setdefault(name, kind)
    return _REGISTRY[name]


def kind_of(name: str) -> NodeKind:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"eagle.graph.Node: no node kind {name!r} is registered; "
                       f"known kinds: {', '.join(sorted(_REGISTRY))}") from None


class Node:
    """A node of a graph: a registered kind and its payload."""

    __slots__ = ("_graph", "kind", "payload")

    def __init__(self, kind: str, payload: Any) -> None:
        kind_of(kind)  # refuse an unknown kind here, not at build
        self.kind = kind
        self.payload = payload
        self._graph: object | None = None  # the graph it was added to

    def planes(self) -> list[PlaneTuple]:
        """Every (name, array, role) the node touches, reads first."""
        k = kind_of(self.kind)
        return [*k.reads(self.payload), *k.writes(self.payload)]

    def __repr__(self) -> str:
        return f"Node({self.kind!r}, {self.payload!r})"
