"""A node's GPU lowering: its kind's device work, or its host lowering as a host node.

A node runs where its planes live (seed 003, "The one rule"): device planes
make GPU work (its kind's ``lower_gpu``), host planes make a host node that
runs the node's CPU lowering on the driver's thread (``GpuProgram.host_node``).  A node may not mix
the two unless its kind says so (``both_sides``: ``eagle.copy``, and the
constructs that hold other nodes, each placed on its own).
"""

from __future__ import annotations

from collections.abc import Sequence

from eagle._arrays import on_device
from eagle._edges import is_plane
from eagle._errors import EagleTypeError, EagleValueError
from eagle._kinds import GpuItems, Node, PlaneTuple, kind_of
from eagle._lower_cpu import lowered


def _sides(planes: Sequence[PlaneTuple]) -> tuple[list[str], list[str]]:
    """The names of a node's host planes and of its device planes."""
    arrays = [(name, array) for name, array, _ in planes if is_plane(array)]
    return ([name for name, a in arrays if not on_device(a)], [name for name, a in arrays if on_device(a)])


def gpu_lowered(node: Node, label: str, planes: Sequence[PlaneTuple] | None = None) -> GpuItems:
    """What the node puts in a GPU program: its kind's GPU work, or a host node.  ``planes``:
    ``node.planes()`` as the build analysis asked them (a nested node asks here)."""
    kind = kind_of(node.kind)
    planes = node.planes() if planes is None else planes
    host, device = _sides(planes)
    if host and device and not kind.both_sides:
        raise EagleValueError(f"eagle.Graph.build: node {label!r} has planes on both sides: host "
                         f"{', '.join(host)}, device {', '.join(device)}; add eagle.copy({host[0]}, "
                         "into=<a device array>) before it, so the node's planes live on one side")
    if device or (not host and kind.lowers_on_device):  # a node without planes goes by its kind
        if not kind.lowers_on_device:
            raise EagleValueError(f"eagle.Graph.build: node {label!r} of {kind.describe()} has device planes "
                             f"({', '.join(device)}) but no GPU lowering; register the kind with "
                             "lower_gpu=..., or pass NumPy arrays for a CPU build")
        items = kind.device_lowering(node.payload)
        if (not isinstance(items, GpuItems) or (items.emit is None) == (items.eager is None)
                or (items.stream is not None and items.eager is None)):
            raise EagleTypeError(f"eagle.Graph.build: lower_gpu of {kind.describe()} returned "
                            f"{items!r}; return eagle.graph.GpuItems with emit= or eager= (and stream= "
                            "only with eager=)")
        return items
    host_lowering, arrays = lowered(node, label), [a for _, a, _ in planes if is_plane(a)]
    return GpuItems(lambda gpu: gpu.host_node(host_lowering, label, arrays))
