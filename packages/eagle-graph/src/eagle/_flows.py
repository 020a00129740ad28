"""What a node does to the data, in the closed vocabulary a kind's ``flow`` hook answers in.

eagle-diff reverses each form with one helper and knows no kind; the builder
reads from it which bodies may run again (a loop's).  The forms:

- :class:`LeafFlow`: reads and writes its planes; reversed by its kind's ``vjp`` (or ``vjps=``).
- :class:`KernelFlow`: a kernel launch, ``bound`` (a ``BoundPlan``); a kernel language that
  derives kernels (hawk) reverses it, anything else is a leaf.
- :class:`CopyFlow`: ``dst[...] = src``.  :class:`ReduceFlow`: ``out[0] = op(x)``.
- :class:`RowFlow`: a row of ``table`` moved out to ``row`` (or in, ``put``) at ``index[0]``.
- :class:`ChoiceFlow`: runs one of ``arms`` by its one-cell ``cell``: with ``keys`` None an if
  (arms: then, else), else a switch (an arm per key, then the default).
- :class:`LoopFlow`: repeats ``body``: ``kind`` ``"while"`` (cell read before each turn),
  ``"do"`` (after each) or ``"count"`` (``cell[0]`` turns), at most ``cap`` turns (-1: no cap).
- :class:`InnerFlow`: does what ``node`` does (a node another branch waits for).
- :class:`NoFlow`: moves no data (a wait).

A choice or loop that guards one step (``lends_label``) lends that step its own label: the
step is the node, the guard around it.
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
    """A kernel launch: ``bound``, a BoundPlan (what a plan node is).

    >>> from eagle.graph import Node
    >>> from eagle.native import Library, compile_library
    >>> from eagle.plan import Plan
    >>> lib = Library(compile_library('''
    ... #include "eagle/eagle.h"
    ... void fill1(int64_t b, int64_t e, const eagle_arg *a)
    ... { double *x = a[0].ptr; for (int64_t i = b; i < e; ++i) x[i] = 1.0; }
    ... ''', name="doc_flow_fill"))
    >>> bound = Plan(lib.kernel("fill1"), [("x", "write")], name="fill1").bind(np.zeros(3))
    >>> Node("plan", bound).flow().bound is bound
    True
    """

    bound: Any


@dataclass(frozen=True)
class CopyFlow:
    """``dst[...] = src``.

    >>> x, y = np.zeros(2), np.ones(2)
    >>> flow = eagle.copy(x, into=y).flow()
    >>> flow.src is x, flow.dst is y
    (True, True)
    """

    src: Any
    dst: Any


@dataclass(frozen=True)
class ReduceFlow:
    """``out[0] = op(x)``.

    >>> eagle.reduce(np.arange(3.0), np.zeros(1), op="max").flow().op
    'max'
    """

    x: Any
    out: Any
    op: str


@dataclass(frozen=True)
class RowFlow:
    """``row[...] = table[index[0]]``, or ``table[index[0]] = row`` when ``put``: a row moved at a
    counted loop's index (``index`` a one-cell int32 array).

    >>> from eagle.extend import RowMove
    >>> from eagle.graph import Node
    >>> table, index, row = np.zeros((3, 2)), np.zeros(1, np.int32), np.zeros(2)
    >>> Node("row_move", RowMove(table, index, row, put=True)).flow().put
    True
    """

    table: Any
    index: Any
    row: Any
    put: bool


@dataclass(frozen=True)
class ChoiceFlow:
    """Run one of ``arms`` by ``cell[0]``: an if (``keys`` None: then, else) or a switch.

    >>> cell = np.array([1], np.uint32)
    >>> flow = eagle.skippable(lambda: None, eagle.SkipGuard.nonzero(cell)).flow()
    >>> flow.keys, [len(arm.steps) for arm in flow.arms], flow.lends_label   # the step: the else arm
    (None, [0, 1], True)
    """

    cell: Any
    keys: tuple[int, ...] | None
    arms: tuple[Body, ...]
    lends_label: bool = False


@dataclass(frozen=True)
class LoopFlow:
    """Repeat ``body`` (``kind`` "while", "do" or "count"), at most ``cap`` turns (-1: no cap).

    >>> left = np.array([2], np.uint32)
    >>> flow = eagle.repeat_while(lambda: None, left, max_iters=5).flow()
    >>> flow.kind, flow.cap
    ('while', 5)
    """

    cell: Any
    kind: str
    cap: int
    body: Body
    lends_label: bool = False


@dataclass(frozen=True)
class InnerFlow:
    """Does what ``node`` does: a node another branch waits for is the node it signals after.

    >>> from eagle.graph import Node
    >>> from eagle._regions import SignalAfter
    >>> step = eagle.reduce(np.arange(3.0), np.zeros(1))
    >>> Node("signal_after", SignalAfter(step)).flow().node is step
    True
    """

    node: Node


@dataclass(frozen=True)
class NoFlow:
    """Moves no data: a wait, which only orders its branch.

    >>> eagle.graph.node_kind("wait").flow_of(None)
    NoFlow()
    """


Flow = LeafFlow | KernelFlow | CopyFlow | ReduceFlow | RowFlow | ChoiceFlow | LoopFlow | InnerFlow | NoFlow
