"""Building one graph on every rank of a communicator: the ranks agree, or all fail.

A rank whose build fails would leave the others waiting in the first
collective of the run, and ranks whose graphs differ would pair unlike
collectives.  So every rank does its local part of the build, then the
ranks exchange what happened and a digest of their graphs' shape, and every
rank raises the same error when any of them failed or the shapes differ.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from eagle._comm import Communicator
from eagle._edges import is_plane
from eagle._errors import EagleRuntimeError, EagleValueError, forked_reductions

T = TypeVar("T")


def signature(graph: Any) -> list[tuple[Any, ...]]:
    """The shape of a graph, the same on every rank: stages, labels, kinds, and each plane's
    name, role, dtype and shape apart from the sample (last) axis."""
    rows: list[tuple[Any, ...]] = []
    for s, stage in enumerate(graph._stages):
        for b, branch in enumerate(stage.branches):
            for i in branch:
                planes = tuple((name, role, str(a.dtype), a.shape[:-1]) if is_plane(a) else (name, role)
                               for name, a, role in graph._nodes[i].planes())
                rows.append((s, b, graph._labels[i], graph._nodes[i].kind, planes))
    return rows


def _digest(rows: list[tuple[Any, ...]]) -> str:
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def agree(comm: Communicator, graph: Any, local: Callable[[], T]) -> T:
    """``local()`` on this rank, once every rank's build succeeded and their graphs match."""
    try:
        result, error = local(), None
    except Exception as exc:  # noqa: BLE001 -- told to every rank, then raised here as it was
        result, error = None, exc
    rows = signature(graph)
    told = comm.allgather((None if error is None else f"{type(error).__name__}: {error}", _digest(rows)))
    if error is not None:
        raise error
    failed = [(r, message) for r, (message, _) in enumerate(told) if message]
    if failed:
        rank, message = failed[0]
        raise EagleRuntimeError(f"eagle.Graph.build: rank {rank} of {comm.size} failed to build the graph, "
                                "so "
                           f"every rank stops: {message}")
    differ = [r for r, (_, digest) in enumerate(told) if digest != told[0][1]]
    if differ:
        everyone = comm.allgather(rows)  # every rank saw the same digests: all make this call
        raise EagleValueError("eagle.Graph.build: the ranks recorded different graphs: "
                         f"{_difference(everyone, differ[0])}; every rank must record the same nodes on "
                         "planes that differ only in the sample (last) axis")
    return result


def fail_together(comm: Communicator, error: Exception) -> NoReturn:
    """Raise ``error``, a failure while recording the graph, once the other ranks, waiting in
    their builds' agreement, have been told of it."""
    comm.allgather((f"{type(error).__name__}: {error}", None))
    raise error


def _difference(everyone: list[list[tuple[Any, ...]]], rank: int) -> str:
    first, other = everyone[0], everyone[rank]
    for k, (a, b) in enumerate(zip(first, other, strict=False)):  # a shorter list: the lengths tell
        if a != b:
            return f"node {k} on rank 0 is {_row(a)}, on rank {rank} {_row(b)}"
    return f"rank 0 has {len(first)} nodes, rank {rank} has {len(other)}"


def _row(row: tuple[Any, ...]) -> str:
    stage, branch, label, kind, planes = row
    shown = ", ".join(f"{p[0]} {p[2]}{list(p[3])}" if len(p) == 4 else p[0] for p in planes)
    return f"{label!r} ({kind}; stage {stage}, branch {branch}; planes {shown})"


def refuse_forked(graph: Any, reducing: list[int]) -> None:
    """Refuse a cross-sample reduction in a fork: ranks would run the branches' collectives in
    different orders."""
    forked = {i for stage in graph._stages if stage.group for branch in stage.branches for i in branch}
    found = [graph._labels[i] for i in reducing if i in forked]
    if found:
        raise forked_reductions(found)

