"""Fusion at build: each maximal run of per-sample kernels becomes one generated function.

A lowering that may join a run says so with a :class:`~eagle._kinds.Fusible`
(a hawk kernel launch does).  Consecutive ones in one item list of the target
(one work_share stretch, one branch of a branch_tasks stage, one body) form a
run while they cover the same samples, every plane two members share is the
very same view or provably disjoint from the other's (libeagle's rule for
block-fused execution, ``fusable`` in ``libeagle/src/program.c``), no member
writes a plane another reads whole (``Fusible.whole``: a hawk Table), no member
touches a plane another writes whole after the run (``Fusible.scatters``: a hawk
Scatter, a Table's gradient), they come
from one fuser (one kernel language), the member before does not end runs (a
cross-sample reduction is a run's last phase), and the run stays under
:data:`MAX_STATEMENTS` (compile time grows with it).  Anything else (a Python
step, a copy, an opaque, a plugin's node, a device conditional or loop) ends
the run; a construct's bodies are fused on their own.

The fuser writes the run's one function and stores only the planes that are
*live* after it: what :class:`FusionContext` says, from the build.  A plane is dead
after a run only if it is a temporary (not a result, a buffer, an argument or
anything a user holds: ``extend.declare_temporaries``, then the buffer plan's
storage), no later node reads it (``Analysis.read_after``, for a run of
top-level nodes) and no node outside the run reads its memory, anywhere in
the graph (a loop body's next turn included).  When in doubt, it is live.

``EAGLE_FUSE=0`` in the environment, or ``Graph.build(fuse=False)``, turns
fusion off: each kernel then runs as its own items (the same bits).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from eagle._edges import group_key
from eagle._kinds import Fusible, Node
from eagle._views import _root, overlap, view_of

#: The most IR statements one fused function holds: compile time grows faster than the run past
#: a few hundred statements, and replay gains little from longer runs.  Measured by
#: benchmarks/bench_fusion_cap.py on the noise example's 16 octaves (78 statements each; 2 shared
#: vCPUs at load 6-11; medians): one fused function compiled cold (gcc -O3) takes 3.0 s at 80
#: statements and 4.8 s at 158 (bodies under hawk.emit.INTERLEAVED_BELOW = 200 are interleaved),
#: 1.0 s at 236, 1.2 s at 392, 1.8 s at 626, 4.0 s at 1250.  A frame's replay, interleaved rounds,
#: 1 and 2 threads, over the cap at 400 (runs of 5, 5, 5 and one launch alone): at 640 (runs of
#: 8, 8) 1.02-1.25x at 128², 0.97-1.04x at 256², 1.00-1.01x at 512²; at 800 (10, 6) 0.72-1.18x;
#: at 1600 (one run of 16) 0.67-0.86x at 128², 0.93-1.10x at 512² (above 1: the longer cap is
#: faster).  So 400: the compile stays near its floor (each new run shape compiles once per
#: machine, and under the sanitizers of CI), and only small pictures gain, a few percent, past it.
MAX_STATEMENTS = 400


def enabled(fuse: bool | None) -> bool:
    """Whether a build fuses: ``fuse`` when given, else unless ``EAGLE_FUSE=0``."""
    return (os.environ.get("EAGLE_FUSE", "1") != "0") if fuse is None else bool(fuse)


def _memory(array: Any) -> int:
    """What a plane's memory is known by: its NumPy allocation, else the array it views (the
    buffer plan's storage of a device temporary: temporaries sharing it are one memory), else
    the object itself."""
    if isinstance(array, np.ndarray):
        return id(_root(array))
    while getattr(array, "base", None) is not None:
        array = array.base
    return id(array)


def _owned(array: Any) -> bool:
    """Whether NumPy knows the plane's allocation: planes of two such allocations share no byte."""
    return isinstance(array, np.ndarray) and _root(array).flags.owndata


class FusionContext:
    """Which planes a fused run must store, for one lowering of a graph.

    :param nodes: the graph's top-level nodes (their bodies are walked).
    :param temporaries: the arrays no one outside the graph sees.
    :param key: a plane's view key, ``group_key(array, view_of)`` (the build's ``Analysis.key``).
    :param read_after: ``(array, position)`` -> whether a top-level node after ``position``
        reads it (``Analysis.read_after``): asked of a top-level run, beside the readers
        anywhere outside the run (which alone decide a run in a body).
    """

    def __init__(self, nodes: Sequence[Node], temporaries: Sequence[Any],
                 key: Callable[[Any], Any] = lambda array: group_key(array, view_of),
                 read_after: Callable[[Any, int], bool] | None = None) -> None:
        #: a plane's view key (``eagle._edges.group_key``): the build analysis's, worked out once
        self.key = key
        self.read_after = read_after
        self.temporaries = {id(a): a for a in temporaries}
        #: memory of a temporary -> the leaf nodes that read it
        self.readers: dict[int, set[int]] = {}
        #: the fused runs, top level and bodies, as tuples of their nodes (noted by :func:`emitter`)
        self.runs: list[tuple[Node, ...]] = []
        if not self.temporaries:
            return
        wanted = {_memory(a) for a in temporaries}
        for top in nodes:
            for node in top.walk():
                if node.bodies():
                    continue  # a construct's planes are its bodies' nodes'
                for _, array, role in node.planes():
                    memory = _memory(array)
                    if role != "write" and memory in wanted:
                        self.readers.setdefault(memory, set()).add(id(node))

    def keep(self, arrays: Sequence[Any]) -> None:
        """Store ``arrays`` after any run that writes them: an extension reads them after the
        run (eagle.diff's reverse pass)."""
        for array in arrays:
            self.temporaries.pop(id(array), None)

    def live(self, array: Any, members: set[int], position: int | None = None) -> bool:
        """Whether ``array``, written by the run of nodes ``members`` (ids) that ends at top-level
        ``position`` (None: in a body), is read after it."""
        if id(array) not in self.temporaries:
            return True
        if position is not None and self.read_after is not None and self.read_after(array, position):
            return True
        return not self.readers.get(_memory(array), set()) <= members


#: The liveness of the graph being lowered; None: no fusion (a launch outside a build, fuse=False).
_current: ContextVar[FusionContext | None] = ContextVar("eagle_fusion", default=None)


@contextmanager
def fusing(liveness: FusionContext | None) -> Iterator[None]:
    """Lower with fusion (``liveness`` None: without) inside the ``with``."""
    token = _current.set(liveness)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> FusionContext | None:
    return _current.get()


def runs(lowerings: Sequence[Any], key: Callable[[Any], Any]) -> list[list[int]]:
    """The lowerings cut into runs (indices): a fused run of two or more, or one alone; ``key``:
    a plane's view key."""
    out: list[list[int]] = []
    run = _Run(key)
    for i, lowering in enumerate(lowerings):
        part = getattr(lowering, "fuse", None)
        if part is not None:
            planes = run.planes(part)
            if run.takes(part, planes):
                run.add(part, planes)
                out[-1].append(i)
                continue
        run = _Run(key)
        if part is not None:
            run.add(part, planes)  # the views are keyed alike in every run
        out.append([i])
    return out


#: A member's plane as a run weighs it: (view key, array, written); the key None: no bytes.
_Plane = tuple[Any, Any, bool]


class _Run:
    """The run being formed: its members' fuser, samples, size, and the views it touches (each
    once: the very same view overlaps what it overlaps)."""

    def __init__(self, key: Callable[[Any], Any]) -> None:
        self.key = key
        self.parts: list[Fusible] = []
        self.size = 0
        self.keys: dict[Any, list[Any]] = {}  # view key -> [array, written by a member]
        self.by_memory: dict[int, list[list[Any]]] = {}  # memory -> its views' entries
        self.loose: list[list[Any]] = []  # entries of views whose allocation NumPy does not know
        self.whole: list[Any] = []  # planes a member reads whole: no member writes them
        self.scattered: list[Any] = []  # planes a member writes whole after the run: no other touches them

    def planes(self, part: Fusible) -> list[_Plane]:
        key = self.key
        return [(key(array), array, role != "read") for _, array, role in part.planes()]

    def takes(self, part: Fusible, planes: list[_Plane]) -> bool:
        if not self.parts:
            return False
        head, last = self.parts[0], self.parts[-1]
        if last.last or part.fuser is not head.fuser or part.samples != head.samples \
                or self.size + part.size > MAX_STATEMENTS:
            return False
        if not all(key is None or key in self.keys or self._apart(array, writes)
                   for key, array, writes in planes):
            return False
        # a plane read whole is read by every sample: a write of it in the same run (before, or
        # after in the same block pass) would change what later samples read
        whole = part.whole()
        written = [array for array, writes in self.keys.values() if writes]
        if any(overlap(a, b) for a in whole for b in written) or \
                any(writes and overlap(array, b) for _, array, writes in planes for b in self.whole):
            return False
        # a Scatter's plane is written after every sample of the run: a member after would read
        # it before it is written, one before would share its memory in the one function
        scatters = part.scatters()
        touched = [array for array, _ in self.keys.values()]
        return not any(overlap(a, b) for a in scatters for b in touched) and \
            not any(overlap(array, b) for _, array, _ in planes for b in self.scattered)

    def _apart(self, array: Any, writes: bool) -> bool:
        """Whether a view no member touched shares no byte with any plane of the run that it or
        the other writes."""
        others = ([e for es in self.by_memory.values() for e in es] if not _owned(array)
                  else self.by_memory.get(_memory(array), []) + self.loose)
        return not any((writes or written) and overlap(array, other) for other, written in others)

    def add(self, part: Fusible, planes: list[_Plane]) -> None:
        self.parts.append(part)
        self.size += part.size
        self.whole += part.whole()
        self.scattered += part.scatters()
        for key, array, writes in planes:
            if key is None:
                continue
            entry = self.keys.get(key)
            if entry is not None:
                entry[1] = entry[1] or writes
                continue
            entry = self.keys[key] = [array, writes]
            self.by_memory.setdefault(_memory(array), []).append(entry)
            if not _owned(array):
                self.loose.append(entry)


def groups(indices: Sequence[int], lowerings: Sequence[Any]) -> list[list[int]]:
    """``indices`` (of one item list, in order) cut into fused runs and single lowerings; all
    single outside :func:`fusing`."""
    if current() is None or len(indices) < 2:
        return [[i] for i in indices]
    return [[indices[k] for k in run] for run in runs([lowerings[i] for i in indices], current().key)]


def emitter(group: Sequence[int], lowerings: Sequence[Any], nodes: Sequence[Node],
            append: Callable[[int, Any], object], top: bool = False) -> Callable[[Any], object]:
    """What appends ``group`` (indices into ``lowerings`` and ``nodes``) to a target: a fused
    run's one function, or ``append(index, target)`` for a lowering alone; ``top``: the indices
    are the graph's top-level positions."""
    if len(group) == 1:
        return lambda target: append(group[0], target)
    liveness = current()
    run = group
    liveness.runs.append(tuple(nodes[i] for i in run))
    parts = [lowerings[i].fuse for i in run]
    keys: dict[Any, int] = {}

    def key(array: Any) -> int:
        view = liveness.key(array)  # None for an empty plane: each its own
        return keys.setdefault(("empty", id(array)) if view is None else view, len(keys))

    end = run[-1] if top else None
    members: set[int] = set()  # ids of the run's nodes, walked when a temporary asks

    def live(array: Any) -> bool:
        if not members and id(array) in liveness.temporaries:
            members.update(id(node) for i in run for node in nodes[i].walk())
        return liveness.live(array, members, end)

    return parts[0].fuser([p.payload for p in parts], key, live)
