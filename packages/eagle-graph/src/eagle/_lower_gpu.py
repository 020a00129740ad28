"""Lowering a graph to a libeagle GPU program: one CUDA graph, instantiated once.

A node runs where its planes live (seed 003, "The one rule"): device planes
make GPU work (its kind's ``lower_gpu``), host planes make a host node that
runs the node's CPU lowering on the driver's thread.  A node may not mix
the two unless its kind says so (``both_sides``: ``eagle.copy``, and the
constructs that hold other nodes, each placed on its own).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eagle._core import check, lib
from eagle._cuda import on_device
from eagle._edges import is_plane
from eagle._gpu_program import GpuProgram
from eagle._kinds import GpuItems, Node, kind_of
from eagle._lower_cpu import emit, lowered
from eagle._program import Program


def _sides(node: Node) -> tuple[list[str], list[str]]:
    """The names of the node's host planes and of its device planes."""
    planes = [(name, array) for name, array, _ in node.planes() if is_plane(array)]
    return ([name for name, a in planes if not on_device(a)], [name for name, a in planes if on_device(a)])


def gpu_lowered(node: Node, label: str) -> GpuItems:
    """What the node puts in a GPU program: its kind's GPU work, or a host node."""
    kind = kind_of(node.kind)
    host, device = _sides(node)
    if host and device and not kind.both_sides:
        raise ValueError(f"eagle.Graph.build: node {label!r} has planes on both sides: host "
                         f"{', '.join(host)}, device {', '.join(device)}; add eagle.copy({host[0]}, "
                         "into=<a device array>) before it, so the node's planes live on one side")
    if device or (not host and kind.lower_gpu is not None):  # a node without planes goes by its kind
        if kind.lower_gpu is None:
            raise ValueError(f"eagle.Graph.build: node {label!r} of {kind.describe()} has device planes "
                             f"({', '.join(device)}) but no GPU lowering; register the kind with "
                             "lower_gpu=..., or pass NumPy arrays for a CPU build")
        items = kind.lower_gpu(node.payload)
        if not isinstance(items, GpuItems) or (items.emit is None) == (items.eager is None):
            raise TypeError(f"eagle.Graph.build: lower_gpu of {kind.describe()} returned "
                            f"{items!r}; return eagle.graph.GpuItems with emit= or eager=")
        return items
    return _host_node(lowered(node, label), label, [a for _, a, _ in node.planes() if is_plane(a)])


def _host_node(host_lowering: Any, label: str, planes: list[Any]) -> GpuItems:
    """The node's CPU lowering as a host program run by a host node at every replay."""
    def emit_host(gpu: GpuProgram) -> None:
        if gpu.in_body:
            raise ValueError(f"eagle.Graph.build: node {label!r} is a host node (its planes live on the "
                             "host) inside a device if or loop body: CUDA does not allow host functions "
                             "in a conditional body; move it out of the body (a copy there is fine, from "
                             "pinned memory)")
        program = Program().stage()
        emit(host_lowering, program)
        gpu.host_program(program.finalize(), touches=planes)

    return GpuItems(emit_host)


def emit_node(node: Node, gpu: GpuProgram, label: str = "step") -> None:
    """Append a node's work inside a construct (where the graph cannot be cut)."""
    items = gpu_lowered(node, label)
    if items.emit is None:
        raise ValueError(f"eagle.Graph.build: node {label!r} runs eagerly (opaque(..., eager=True)) inside a "
                         "device if or loop body; the graph is cut around an eager node, which a body "
                         "cannot be: move it out of the body")
    gpu.label = label
    items.emit(gpu)


def lower(stages: list[list[list[int]]], lowerings: list[GpuItems], labels: list[str],
          device: int) -> tuple[GpuProgram | GpuSegments, list[int]]:
    """The GPU program of the stages (branches of node indices), not yet instantiated, and the
    indices of the nodes that reduce across samples.

    The branches of a stage are branches of the CUDA graph: they depend on the stage before
    and run side by side.  An eager node cuts the graph: the program is then segments, CUDA
    graphs with the eager calls between them.
    """
    parts: list[GpuProgram | Callable[[], object]] = [GpuProgram(device)]
    reducing: list[int] = []
    for branches in stages:
        eager = [i for branch in branches for i in branch if lowerings[i].eager is not None]
        if eager:
            if sum(len(b) for b in branches) > 1:
                raise ValueError(f"eagle.Graph.build: node {labels[eager[0]]!r} runs eagerly "
                                 "(opaque(..., eager=True)) inside a fork; the graph is cut around an "
                                 "eager node, so it runs alone: move it out of the parallel region")
            parts += [lowerings[eager[0]].eager, GpuProgram(device)]
            continue
        program = parts[-1]
        program.stage()
        for b, branch in enumerate(branches):
            if b:
                program.branch()
            for index in branch:
                before = program.reductions
                program.label = labels[index]
                lowerings[index].emit(program)
                if program.reductions != before:
                    reducing.append(index)
    if len(parts) == 1:
        return parts[0], reducing
    return GpuSegments([p for p in parts if not (isinstance(p, GpuProgram) and p.empty)], device), reducing


class GpuSegments:
    """CUDA graphs with eager host calls between them, run in order at every replay: what a graph
    with ``opaque(fn, eager=True)`` lowers to.  A replay waits for each graph before the call
    after it, so ``enqueue`` runs to the end too."""

    def __init__(self, parts: list[GpuProgram | Callable[[], object]], device: int) -> None:
        self.parts, self.device = parts, device
        self.programs = [p for p in parts if isinstance(p, GpuProgram)]
        self.reductions = sum(p.reductions for p in self.programs)

    def finalize(self) -> GpuSegments:
        for program in self.programs:
            program.finalize()
        return self

    def run(self, replays: int = 1) -> GpuSegments:
        for _ in range(replays):
            for part in self.parts:
                if isinstance(part, GpuProgram):
                    part.run(1)  # waits for the graph
                else:
                    part()
                    check(lib.eagle_cuda_synchronize(self.device), "eagle.Graph.launch")  # and for fn's work
        return self

    enqueue = run

    def synchronize(self) -> GpuSegments:
        return self

    def set_logical_size(self, n: int) -> GpuSegments:
        for program in self.programs:
            program.set_logical_size(n)
        return self

    def rebind(self, mapping: dict[int, Any]) -> bool:
        if not all(p._patchable(mapping) for p in self.programs):
            return False
        for program in self.programs:
            program._rebind(mapping)
        return True

    def stats(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for program in self.programs:
            for name, count in program.stats().items():
                totals[name] = totals.get(name, 0) + count
        return totals
