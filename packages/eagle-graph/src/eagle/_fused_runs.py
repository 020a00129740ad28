"""The fused runs of a built graph, named: their nodes' labels and where each run lives.

The build notes each run as its member nodes (``eagle._fusion.FusionContext.runs``): runs of
the top level and runs inside the bodies of device constructs alike.  Here they are put in
the graph's order and described for ``Graph.fused`` and ``Graph.fused_runs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from eagle._kinds import Node


@dataclass(frozen=True)
class FusedRun:
    """One run of per-sample kernels the build wrote as one function.

    ``nodes``: the members' labels in order (a node inside a body by its default label);
    ``where``: ``"stage 2"``, ``"stages 2-4"``, ``"stage 3, branch 1"`` at the top level, or
    ``"body of 'loop' (stage 5)"`` inside a device construct's body (the innermost
    construct's label), or ``"inside a node's own lowering"`` for nodes a plugin's kind lowers
    without giving them as its bodies.

    >>> eagle.graph.FusedRun(("scale", "shift"), "stage 0")
    FusedRun(nodes=('scale', 'shift'), where='stage 0')
    """

    nodes: tuple[str, ...]
    where: str


def in_graph_order(runs: Sequence[tuple[Node, ...]], nodes: Sequence[Node]) -> list[tuple[Node, ...]]:
    """``runs`` in the order their first nodes come in the graph (bodies are lowered before the
    top level's runs are noted)."""
    order = {id(node): k for k, node in enumerate(n for top in nodes for n in top.walk())}
    return sorted(runs, key=lambda run: order.get(id(run[0]), len(order)))  # a kind's own: last


def describe(runs: Sequence[tuple[Node, ...]], nodes: Sequence[Node], labels: Sequence[str],
             stages: Sequence[Sequence[Sequence[int]]]) -> list[FusedRun]:
    """Each run (in graph order) with its labels and where it lives; ``stages``: the node indices
    of each stage's branches."""
    top = {id(node): i for i, node in enumerate(nodes)}
    at = {i: (s, b, len(branches)) for s, branches in enumerate(stages)
          for b, branch in enumerate(branches) for i in branch}
    parent: dict[int, Node] = {}  # a body's node -> the construct it is directly in
    for node in nodes:
        _note_parents(node, parent)

    def label(node: Node) -> str:
        i = top.get(id(node))
        return node.default_label() if i is None else labels[i]

    def where(run: tuple[Node, ...]) -> str:
        if id(run[0]) not in parent and id(run[0]) not in top:
            return "inside a node's own lowering"  # nodes a kind lowers but does not give as bodies
        if id(run[0]) in parent:
            construct = parent[id(run[0])]
            outer = construct
            while id(outer) in parent:
                outer = parent[id(outer)]
            return f"body of {label(construct)!r} (stage {at[top[id(outer)]][0]})"
        places = [at[top[id(node)]] for node in run]
        (first, branch, count), last = places[0], places[-1][0]
        if first != last:
            return f"stages {first}-{last}"
        return f"stage {first}" if count == 1 else f"stage {first}, branch {branch}"

    return [FusedRun(tuple(label(node) for node in run), where(run)) for run in in_graph_order(runs, nodes)]


def _note_parents(node: Node, parent: dict[int, Node]) -> None:
    for body in node.bodies():
        for inner in body.nodes():
            parent[id(inner)] = node
            _note_parents(inner, parent)
