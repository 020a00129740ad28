"""The refusal of siblings that race: two branches of one fork touching one plane,
one of them writing it, with nothing ordering them.

A wait orders them: a branch that waits for node ``s`` of another branch runs
the nodes after its wait after ``s`` and everything before ``s`` in that
branch.
"""

from __future__ import annotations

from collections.abc import Sequence

from eagle._analysis import Analysis, Forks
from eagle._errors import SiblingRace
from eagle._kinds import Node


def refuse_sibling_races(nodes: Sequence[Node], labels: Sequence[str], forks: Forks,
                         api: str = "eagle.Graph.build") -> None:
    """Raise SiblingRace for the first edge between two branches of one fork that no wait orders.

    ``forks``: per fork, its branches as lists of indices into ``nodes``.
    """
    refuse_races(Analysis(nodes, forks), nodes, labels, api)


def refuse_races(analysis: Analysis, nodes: Sequence[Node], labels: Sequence[str],
                 api: str = "eagle.Graph.build") -> None:
    """:func:`refuse_sibling_races` over the nodes and forks of a build's analysis."""
    forks = analysis.forks
    edges = analysis.fork_edges() if forks else []
    if not edges:
        return
    place = {i: (f, b, position) for f, branches in enumerate(forks)
             for b, branch in enumerate(branches) for position, i in enumerate(branch)}
    ordered = _waits(nodes, forks, place)
    for edge in edges:
        a, b = place.get(edge.src), place.get(edge.dst)
        if not (a and b and a[0] == b[0] and a[1] != b[1]):
            continue
        if (edge.src, edge.dst) in ordered:
            continue
        pa, pb = analysis.racing_planes(edge.src, edge.dst, edge.plane)
        la, lb = labels[edge.src], labels[edge.dst]
        raise SiblingRace(
            f"{api}: {la!r} (node {edge.src}) and {lb!r} (node {edge.dst}) are siblings "
            f"of one fork/join group but overlap ({edge.kind}): {la!r} plane {pa!r} and {lb!r} plane "
            f"{pb!r} share memory; give each branch its own plane or put them in one branch")


def _waits(nodes: Sequence[Node], forks: Forks,
           place: dict[int, tuple[int, int, int]]) -> set[tuple[int, int]]:
    """(earlier, later) pairs of node indices that a wait orders."""
    index = {id(node): i for i, node in enumerate(nodes)}
    ordered = set()
    for f, branches in enumerate(forks):
        for branch in branches:
            for position, i in enumerate(branch):
                if nodes[i].kind != "wait":
                    continue
                writer = index.get(id(nodes[i].payload.writer))
                if writer is None or place[writer][0] != f:
                    continue
                _, wb, wpos = place[writer]
                ordered.update((j, k) for j in branches[wb][:wpos + 1] for k in branch[position + 1:])
    return ordered
