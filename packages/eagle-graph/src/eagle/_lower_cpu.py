"""A node's host lowering: what its kind gives for the host, and appending it to a target."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from eagle._errors import EagleTypeError, EagleValueError
from eagle._kinds import HostItems, Node, kind_of

if TYPE_CHECKING:
    from eagle._target import Target


def lowered(node: Node, label: str) -> HostItems | Callable[[], object]:
    """What the node's kind gives for the host: native items or a Python step."""
    kind = kind_of(node.kind)
    result = kind.host_lowering(node.payload, label)
    if result is None:
        fix = kind.cpu_refusal or ("register the kind with lower_cpu=... or native=..., or build it for "
                                   "the GPU")
        raise EagleValueError(f"eagle.Graph.build: node {label!r} of kind {node.kind!r} has no CPU lowering; "
                         f"{fix}")
    if not (isinstance(result, HostItems) or callable(result)):
        raise EagleTypeError(f"eagle.Graph.build: lower_cpu of kind {node.kind!r} returned "
                        f"{type(result).__name__}; return a zero-argument callable or eagle.graph.HostItems")
    return result


def emit(lowering: HostItems | Callable[[], object], program: Target) -> None:
    if isinstance(lowering, HostItems):
        lowering.emit(program)
    else:
        program.callback(lowering)


def emit_node(node: Node, program: Target, label: str | None = None) -> None:
    """Append one node's host items to a program; ``label``: its name in messages, by default
    its own (``node.default_label()``)."""
    emit(lowered(node, node.default_label() if label is None else label), program)
