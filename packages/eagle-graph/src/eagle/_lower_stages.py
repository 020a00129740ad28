"""Lowering a graph's stages onto a target: the host program, or one CUDA graph.

Each node's lowering was made before (``_lower_cpu.lowered``, ``_lower_gpu.gpu_lowered``);
here the stages and branches become the target's, and the nodes that reduce across samples
are noted (a communicator makes them global).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from eagle._errors import EagleValueError
from eagle._fusion import emitter, groups
from eagle._gpu_program import GpuProgram
from eagle._gpu_segments import GpuSegments, HostCall
from eagle._kinds import GpuItems, Node
from eagle._lower_cpu import emit
from eagle._program import Program, compiling_after
from eagle._target import Target


def _emit_noting(target: Target, indices: Sequence[int], append: Callable[[Target], object],
                 reducing: list[int]) -> None:
    before = target.reductions
    append(target)
    if target.reductions != before:
        reducing.extend(indices)


def _emit_runs(target: Target, indices: Sequence[int], lowerings: Sequence[Any], nodes: Sequence[Node],
               append: Callable[[int, Target], object], reducing: list[int]) -> None:
    """Append the lowerings of ``indices`` (one item list of ``target``), fused runs as one function
    each (``emitter`` notes them for ``Graph.fused``), noting the nodes that reduce."""
    for group in groups(indices, lowerings):
        noted = group if len(group) == 1 else [i for i in group if lowerings[i].fuse.reduces]
        _emit_noting(target, noted, emitter(group, lowerings, nodes, append, top=True), reducing)


def lower_host(stages: list[tuple[str, list[list[int]]]], lowerings: list[Any], nodes: Sequence[Node],
               views: dict[int, tuple[Any, Any]] | None = None) -> tuple[Program, list[int]]:
    """A finalized program from (schedule, branches of node indices) per stage, and the indices
    of the nodes that reduce across samples; ``views``: the build analysis's table of the views
    it made (``Program(views=...)``), which the program's items use.  Fused runs (under
    ``eagle._fusion.fusing``) stay inside one list of items.

    work_share stages run their branches one after another, so consecutive
    ones become one list of items: libeagle then block-fuses kernel chains
    across them, and consecutive Python steps share one GIL acquisition.
    Only a branch_tasks stage keeps its branches apart.
    """
    with compiling_after() as batch:
        program, reducing = _host_items(stages, lowerings, nodes, views)
        batch.resolve()  # the fused runs not compiled before, in one translation unit
    return program.finalize(), reducing


def _host_items(stages: list[tuple[str, list[list[int]]]], lowerings: list[Any], nodes: Sequence[Node],
                views: dict[int, tuple[Any, Any]] | None) -> tuple[Program, list[int]]:
    program = Program(views)
    reducing: list[int] = []
    open_work_share = False
    pending: list[int] = []  # the nodes of the item list being written

    def flush() -> None:
        _emit_runs(program, pending, lowerings, nodes, lambda i, p: emit(lowerings[i], p), reducing)
        pending.clear()

    for schedule, branches in stages:
        tasks = schedule == "branch_tasks"
        if tasks or not open_work_share:
            flush()
            program.stage(schedule)
        open_work_share = not tasks
        for b, branch in enumerate(branches):
            if b and tasks:
                flush()
                program.branch()
            pending += branch
    flush()
    return program, reducing


def lower_device(stages: list[list[list[int]]], lowerings: list[GpuItems], labels: list[str],
                 nodes: Sequence[Node], device: int, collective: bool = False
                 ) -> tuple[GpuProgram | GpuSegments, list[str], list[int]]:
    """The GPU program of the stages (branches of node indices), not yet instantiated, each
    stage's tier, and the indices of the nodes that reduce across samples.

    The branches of a stage are branches of the CUDA graph: they depend on the stage before
    and run side by side (``"capture"``).  A host call (a ``stream=`` or ``eager=True`` node)
    cuts the graph: the program is then segments, CUDA graphs with the calls between them,
    and its stage is ``"eager_stream"`` or ``"eager_host"``.  In a graph over a communicator
    (``collective``) a reduction cuts it too: the ranks combine its partials on the host
    between two CUDA graphs (``GpuProgram._reduce_across_ranks``), so its stage is
    ``"eager_host"``.
    """
    parts: list[GpuProgram | HostCall] = []
    schedule: list[str] = []
    reducing: list[int] = []
    pending: list[int] = []  # consecutive one-branch stages: one chain of the CUDA graph

    def cut(part: GpuProgram, call: Callable[[], object]) -> None:
        parts[-1:-1] = [part, HostCall(call)]  # before the program the lowering goes on with

    def start() -> None:
        parts.append(GpuProgram(device))
        if collective:
            parts[-1].cut = cut

    def append(index: int, program: GpuProgram) -> None:
        program.label = labels[index]
        lowerings[index].emit(program)

    def flush() -> None:
        if pending:
            program = parts[-1]
            program.stage()
            _emit_runs(program, pending, lowerings, nodes, append, reducing)
            pending.clear()

    start()
    for branches in stages:
        calls = [i for branch in branches for i in branch if lowerings[i].eager is not None]
        if calls:
            items = lowerings[calls[0]]
            tier = "stream=S" if items.stream is not None else "eager=True"
            if sum(len(b) for b in branches) > 1:
                raise EagleValueError(f"eagle.Graph.build: node {labels[calls[0]]!r} runs eagerly "
                                      "(opaque(..., "
                                 f"{tier}): on the host at every launch) inside a fork; the graph is cut "
                                 "around it, so it runs alone: move it out of the parallel region")
            flush()
            parts.append(HostCall(items.eager, items.stream))
            start()
            schedule.append("eager_host" if items.stream is None else "eager_stream")
            continue
        schedule.append("capture")
        if len(branches) == 1:
            pending += branches[0]
            continue
        flush()
        program = parts[-1]
        program.stage()
        program.forked = True
        for b, branch in enumerate(branches):
            if b:
                program.branch()
            _emit_runs(program, branch, lowerings, nodes, append, reducing)
        program.forked = False
    flush()
    if collective:  # each reduction was a host call between two CUDA graphs
        stage_of = {i: s for s, branches in enumerate(stages) for branch in branches for i in branch}
        for i in reducing:
            schedule[stage_of[i]] = "eager_host"
    if len(parts) == 1:
        return parts[0], schedule, reducing
    kept = [p for p in parts if not (isinstance(p, GpuProgram) and p.empty)]
    return GpuSegments(kept, device), schedule, reducing
