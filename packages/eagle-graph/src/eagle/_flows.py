"""What a node does to the data, in the closed vocabulary a kind's ``flow`` hook answers in.

eagle-diff reverses each form with one helper and knows no kind; the builder
reads from it which bodies may run again (a loop's).  The forms:

- :class:`LeafFlow`: reads and writes its planes; reversed by its kind's ``vjp`` (or ``vjps=``).
- :class:`KernelFlow`: a kernel launch, ``bound`` (a ``BoundPlan``); a kernel language that
  derives kernels (hawk) reverses it, anything else is a leaf.
- :class:`CopyFlow`: ``dst[...] = src``.  :class:`ReduceFlow`: ``out[0] = op(x)``.
- :class:`ChoiceFlow`: runs one of ``arms`` by its one-cell ``cell``: with ``keys`` None an if
  (arms: then, else), else a switch (an arm per key, then the default).
- :class:`LoopFlow`: repeats ``body``: ``kind`` ``"while"`` (cell read before each turn),
  ``"do"`` (after each) or ``"count"`` (``cell[0]`` turns), at most ``cap`` turns (-1: no cap).
- :class:`InnerFlow`: does what ``node`` does (a node another branch waits for).

A choice or loop that guards one step (``lends_label``) lends that step its own label: the
step is the node, the guard around it.
- :class:`NoFlow`: moves no data (a wait).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eagle._kinds import Node
    from eagle._regions import Body


@dataclass(frozen=True)
class LeafFlow:
    """Reads and writes its planes.

    >>> eagle.graph.node_kind("opaque").flow_of(None)
    LeafFlow()
    """


@dataclass(frozen=True)
class KernelFlow:
    bound: Any


@dataclass(frozen=True)
class CopyFlow:
    src: Any
    dst: Any


@dataclass(frozen=True)
class ReduceFlow:
    x: Any
    out: Any
    op: str


@dataclass(frozen=True)
class ChoiceFlow:
    cell: Any
    keys: tuple[int, ...] | None
    arms: tuple[Body, ...]
    lends_label: bool = False


@dataclass(frozen=True)
class LoopFlow:
    cell: Any
    kind: str
    cap: int
    body: Body
    lends_label: bool = False


@dataclass(frozen=True)
class InnerFlow:
    node: Node


@dataclass(frozen=True)
class NoFlow:
    pass


Flow = LeafFlow | KernelFlow | CopyFlow | ReduceFlow | ChoiceFlow | LoopFlow | InnerFlow | NoFlow
