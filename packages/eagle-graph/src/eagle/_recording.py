"""The one recording channel: what records the step being written now (the graph builder).

A single context variable holds the active :class:`Recording`.  Every
consumer reads it here: ``eagle.Graph()`` hands itself to it (the builder
adopts its graph), the node functions (``eagle.copy``, ``eagle.opaque``, ...)
hand it their node where it is written, and a hawk kernel call goes to its
``call``.  A recording that only takes kernel calls overrides ``call`` alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

from eagle._errors import EagleRuntimeError, EagleTypeError

# A leaf module (the graph and the node functions import it): graphs and nodes are typed Any here.
Graph = Node = Any


class Recording:
    """What a recorder implements; the defaults ignore what it does not take.

    >>> from eagle.extend import Recording, recording
    >>> class Kinds(Recording):
    ...     def __init__(self):
    ...         self.seen = []
    ...     def add_node(self, node, name):
    ...         self.seen.append(node.kind)
    >>> with recording(Kinds()) as kinds:
    ...     node = eagle.reduce(np.arange(3.0), np.zeros(1))
    ...     step = eagle.opaque(lambda: None)
    >>> kinds.seen
    ['reduce', 'opaque']
    """

    def call(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A kernel called while recording (hawk): return what the call stands for."""
        name = getattr(kernel, "__name__", kernel)
        raise EagleTypeError(f"{name}: the active recording ({type(self).__name__}) takes no kernel calls: "
                        "call the kernel outside it, or give the recording a call method")

    def adopt(self, graph: Graph) -> None:
        """A Graph made while recording."""

    def add_node(self, node: Node, name: str | None) -> None:
        """A node made while recording, where it is written (``name``: given by ``g.add_node``)."""

    def withdraw(self, node: Node) -> None:
        """``node`` was taken as another node's step (``eagle.skippable(node, ...)``): it runs there only."""

    def parallel(self) -> Any:
        """A fork opened on the recorded graph (``g.parallel()``)."""
        raise EagleRuntimeError(f"eagle.Graph.parallel: {type(self).__name__}, recording this graph, records "
                                "no "
                           "forks: use add_group, or record with @eagle.Graph.builder")


_active: ContextVar[Recording | None] = ContextVar("eagle_recording", default=None)

R = TypeVar("R", bound=Recording)


def active() -> Recording | None:
    """The recording now, or None: nodes and kernel calls are not recorded."""
    return _active.get()


@contextlib.contextmanager
def recording(recorder: R) -> Iterator[R]:
    """Make ``recorder`` the active recording inside the ``with``.

    >>> from eagle.extend import Recording, active, recording
    >>> with recording(Recording()) as r:
    ...     active() is r
    True
    >>> active() is None
    True
    """
    if not isinstance(recorder, Recording):
        raise EagleTypeError("eagle.extend.recording: takes an eagle.extend.Recording (subclass it), got "
                        f"{type(recorder).__name__}")
    token = _active.set(recorder)
    try:
        yield recorder
    finally:
        _active.reset(token)


def recorded(node: Node) -> Node:
    """``node``, handed to the active recording (if any) where it is written."""
    recorder = _active.get()
    if recorder is not None:
        recorder.add_node(node, None)
    return node


def withdrawn(node: Node) -> Node:
    """``node``, taken back from the active recording: another node holds it as its step."""
    recorder = _active.get()
    if recorder is not None:
        recorder.withdraw(node)
    return node
