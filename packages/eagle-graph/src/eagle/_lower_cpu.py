"""Lowering a graph to a libeagle program: the native host schedule."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eagle._kinds import HostItems, Node, kind_of
from eagle._program import Program
from eagle._views import view_of


def lowered(node: Node, label: str) -> HostItems | Callable[[], object]:
    """What the node's kind gives for the host: native items or a Python step."""
    kind = kind_of(node.kind)
    result = kind.host_lowering(node.payload, label)
    if result is None:
        raise ValueError(f"eagle.Graph.build: node {label!r} of kind {node.kind!r} has no CPU lowering; "
                         "register the kind with lower_cpu=... or native=..., or build it for the GPU")
    if not (isinstance(result, HostItems) or callable(result)):
        raise TypeError(f"eagle.Graph.build: lower_cpu of kind {node.kind!r} returned "
                        f"{type(result).__name__}; return a zero-argument callable or eagle.graph.HostItems")
    return result


def emit(lowering: HostItems | Callable[[], object], program: Program) -> None:
    if isinstance(lowering, HostItems):
        lowering.emit(program)
    else:
        program.callback(lowering)


def emit_node(node: Node, program: Program, label: str = "step") -> None:
    """Append one node's host items to a program."""
    emit(lowered(node, label), program)


def lower(stages: list[tuple[str, list[list[int]]]], lowerings: list[Any],
          views: Callable[[Any], Any] = view_of) -> tuple[Program, list[int]]:
    """A finalized program from (schedule, branches of node indices) per stage, and the indices
    of the nodes that reduce across samples; ``views``: an array's ``eagle_view *`` (the build
    analysis's, so the program passes libeagle the views it made).

    work_share stages run their branches one after another, so consecutive
    ones become one list of items: libeagle then block-fuses kernel chains
    across them, and consecutive Python steps share one GIL acquisition.
    Only a branch_tasks stage keeps its branches apart.
    """
    program = Program(views)
    reducing: list[int] = []

    def emit_counted(index: int) -> None:
        before = program.reductions
        emit(lowerings[index], program)
        if program.reductions != before:
            reducing.append(index)

    open_work_share = False
    for schedule, branches in stages:
        if schedule == "branch_tasks":
            program.stage(schedule)
            for b, branch in enumerate(branches):
                if b:
                    program.branch()
                for index in branch:
                    emit_counted(index)
            open_work_share = False
            continue
        if not open_work_share:
            program.stage("work_share")
            open_work_share = True
        for branch in branches:
            for index in branch:
                emit_counted(index)
    return program.finalize(), reducing
