"""The reference interpreter: what a recorded graph means (DESIGN.md §3½).

Nodes run one at a time in stage and add order (a fork's branches one after
another, in the order they were added), each through its kind's
``reference`` entry: hawk kernels through hawk's IR evaluator, opaque nodes
as calls, copies as ``np.copyto``, reductions in the fixed order written out
in NumPy (``eagle._fixed_order``), device conditionals and loops read from their cells when
they are reached.  A kind with no ``reference`` runs its own host lowering,
alone.  Nothing here is fast or clever: every lowering is held to it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from eagle._errors import EagleAssertionError, EagleValueError
from eagle._kinds import HostItems, Node, kind_of
from eagle._program import Program

if TYPE_CHECKING:
    from eagle._graph import Graph


class Interpreter:
    """Runs nodes one at a time; a kind's ``reference`` entry gets it to run bodies and nodes."""

    def __init__(self, logical: int | None = None) -> None:
        #: the graph's logical size (``set_logical_size``): kernels and reductions see this many samples
        self.logical = logical

    def samples(self, n: int) -> int:
        """How many of a node's ``n`` samples a replay processes."""
        return n if self.logical is None else min(n, self.logical)

    def node(self, node: Node, label: str = "step") -> None:
        kind = kind_of(node.kind)
        if kind.reference is not None:
            kind.reference(node.payload, self)
            return
        lowering = kind.host_lowering(node.payload, label)
        if lowering is None:
            raise EagleValueError(f"eagle.testing.interpret: node {label!r} of {kind.describe()} has neither "
                                  "a "
                             "reference entry nor a CPU lowering to run")
        self.lowered(lowering)

    def body(self, body: Any) -> None:
        """A :class:`eagle.Body`: its steps in order, a fork's branches one after another."""
        for node in body.nodes():
            self.node(node)

    def lowered(self, lowering: HostItems | Callable[[], object]) -> None:
        """A host lowering, run alone: a Python step called, native items as a one-stage program."""
        if not isinstance(lowering, HostItems):
            lowering()
            return
        program = Program().stage()
        lowering.emit(program)
        program = program.finalize()
        if self.logical is not None:
            program.set_logical_size(self.logical)
        program.run()


def interpret(graph: Graph, n: int = 1) -> Any:
    """Replay ``graph`` ``n`` times by the reference interpreter; what ``graph(n)`` returns.

    The graph runs on its own arrays, as a replay does; it need not be built.
    ``eagle.testing`` holds every lowering to this (same arrays in, same bits out).

    >>> from eagle.graph import opaque
    >>> from eagle.testing import interpret
    >>> x, total = np.arange(4.0), np.zeros(1)
    >>> g = eagle.Graph().add_node(opaque(lambda: np.multiply(x, 2.0, out=x), reads={"x": x},
    ...                                   writes={"x": x})).add_node(eagle.reduce(x, total))
    >>> _ = interpret(g, 2)
    >>> x, total
    (array([ 0.,  4.,  8., 12.]), array([24.]))
    """
    if graph._comm is not None:
        raise EagleValueError("eagle.testing.interpret: a graph over a communicator reduces across ranks; "
                         "interpret the one-process graph of the whole batch instead")
    interpreter = Interpreter(graph._logical)
    for _ in range(n):
        for stage in graph._stages:
            for branch in stage.branches:
                for index in branch:
                    interpreter.node(graph._nodes[index], graph._labels[index])
    return graph.result


def _host_planes(graph: Graph) -> list[np.ndarray]:
    """Every host array the graph's nodes touch, each once, but its temporaries (which hold no
    value after a run: a fused run does not store them) and read-only ones (a JAX array's: no
    node writes them, so no run changes them)."""
    seen: dict[int, np.ndarray] = {}
    temporaries = {id(a) for a in graph._temporaries}
    for node in graph._nodes:
        for _, array, _ in node.planes():
            if isinstance(array, np.ndarray) and array.flags.writeable and id(array) not in temporaries:
                seen.setdefault(id(array), array)
    return list(seen.values())


def _where(graph: Graph, array: np.ndarray) -> str:
    for label, node in zip(graph._labels, graph._nodes, strict=True):
        for name, plane, _ in node.planes():
            if plane is array:
                return f"node {label!r} plane {name!r}"
    return "a plane"


def check(graph: Graph, n: int = 1) -> None:
    """Replay the built ``graph`` ``n`` times and hold every array it touches (but the temporaries
    of a builder's graph, which no one outside sees) to the reference interpreter run from the
    same starting values, byte for byte; the graph is left as the replay left it.

    :raises AssertionError: naming each plane that differs, with the first differing element.

    >>> from eagle.graph import opaque
    >>> from eagle.testing import check
    >>> x = np.arange(4.0)
    >>> g = eagle.Graph().add_node(opaque(lambda: np.sqrt(x, out=x), reads={"x": x}, writes={"x": x}))
    >>> check(g.build(), 3)
    """
    planes = _host_planes(graph)
    before = [a.copy() for a in planes]
    graph.launch(n)
    replayed = [a.copy() for a in planes]
    for array, saved in zip(planes, before, strict=True):
        np.copyto(array, saved)
    interpret(graph, n)
    differ = []
    for array, got in zip(planes, replayed, strict=True):
        want = array.copy()
        np.copyto(array, got)  # leave the replay's state
        first = _first_difference(got, want)
        if first is not None:
            differ.append(f"{_where(graph, array)}: element {first} is {got.reshape(-1)[first].item()!r} "
                          f"after the replay, {want.reshape(-1)[first].item()!r} by the reference")
    if differ:
        raise EagleAssertionError("eagle.testing.check: the replay differs from the reference interpreter: "
                             + "; ".join(differ))


def _first_difference(a: np.ndarray, b: np.ndarray) -> int | None:
    """The flat index of the first element whose bytes differ (NaNs compared by their bits)."""
    rows_a = np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(a.size, -1)
    rows_b = np.ascontiguousarray(b).reshape(-1).view(np.uint8).reshape(b.size, -1)
    unequal = np.flatnonzero((rows_a != rows_b).any(axis=1))
    return int(unequal[0]) if unequal.size else None
