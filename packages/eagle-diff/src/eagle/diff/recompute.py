"""What a recorded forward need not store, and the reverse pass's recompute of it.

A recorded graph fuses like any build.  A *segment* is a stretch of
consecutive top-level hawk kernels that the reverse pass reverses as one
fused run (:mod:`eagle.diff.fused`: the same cap on statements, counted from
the last kernel back, as the pass walks).  A temporary (a builder's kernel
output that no one outside the graph holds) that one kernel of a segment
writes and only later kernels of the same segment read is *unstored*: the
forward's fused function keeps it in registers, and the fused reverse of the
segment recomputes it from the segment's inputs.  Every other temporary the
reverse may read is kept stored (``extend.keep_stored``).

When a pass reverses a segment otherwise (``fuse=False``, a run cut short by
what is active, or a kernel that reads an unstored value on its own), the
pass first runs the segment's kernels again, on arrays of its own, from the
values its kernels read (the same kernels on the same values: the same
bits), and its reverses read those.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eagle.diff import fused
from eagle.diff.forward import Kept, Run
from eagle.diff.ops import Context, KernelBack
from eagle.diff.steps import Leaf, Place, Step, place, rebind, steps_planes
from eagle.extend import Program, emit_node, node_kind


@dataclass(eq=False)
class Segment:
    """Consecutive top-level kernels reversed as one run, as the recorded run traced them."""

    members: list[Kept]


def unstored(steps: Sequence[Step | None], groups: Sequence[list[Any]], lowerings: Sequence[Any],
             trace: Sequence[Any], temporaries: Sequence[np.ndarray], shared: Mapping[Place, Any]
             ) -> dict[Place, Segment]:
    """The temporaries the recorded forward need not store, each with its segment; ``groups``:
    each step's items, ``trace``: the steps' trace (those not None, in order), ``shared``:
    the places that share memory with another."""
    kept = iter(trace)
    traced = [None if s is None else next(kept) for s in steps]
    temporary = {place(a) for a in temporaries}
    writers, readers = _accesses([s for s in steps if s is not None])
    out: dict[Place, Segment] = {}
    for members in _segments(steps, groups, lowerings, traced, shared):
        segment = Segment(members)
        position = {id(k.step): m for m, k in enumerate(members)}
        for m, k in enumerate(members):
            for p in k.step.planes:
                if p.role != "write" or p.place not in temporary or writers.get(_root(p.array)) != [p]:
                    continue
                reads = readers.get(_root(p.array), [])
                if all(q.place == p.place and position.get(id(leaf), -1) > m for leaf, q in reads):
                    out[p.place] = segment
    return out


def _root(array: np.ndarray) -> int:
    """What an array's memory is known by: its NumPy allocation."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return id(array)


def _accesses(steps: list[Step]) -> tuple[dict[int, list[Any]], dict[int, list[tuple[Any, Any]]]]:
    """Memory -> the planes that write it, and the (step, plane) pairs that read it, anywhere."""
    writers: dict[int, list[Any]] = {}
    readers: dict[int, list[tuple[Any, Any]]] = {}
    for step, plane in steps_planes(steps):
        if plane.writes:
            writers.setdefault(_root(plane.array), []).append(plane)
        if plane.reads:
            readers.setdefault(_root(plane.array), []).append((step, plane))
    return writers, readers


def _segments(steps: Sequence[Step | None], groups: Sequence[list[Any]], lowerings: Sequence[Any],
              traced: Sequence[Any], shared: Mapping[Place, Any]) -> Iterator[list[Kept]]:
    """The segments, cut as :func:`eagle.diff.fused.runs` cuts a pass reversing every kernel:
    walking from the last step back, a run of two or more joinable kernels of one sample count
    and at most ``fused.MAX_STATEMENTS`` statements."""
    run: list[Kept] = []
    for i in range(len(steps) - 1, -1, -1):
        step = steps[i]
        if step is None:  # a wait: the pass has no operation for it
            continue
        if not _joins(step, groups[i], lowerings[i], shared):
            if len(run) > 1:
                yield run[::-1]
            run = []
            continue
        if run and (run[0].step.node.payload.samples != step.node.payload.samples
                    or sum(fused.statements(k.step) for k in [*run, traced[i]]) > fused.MAX_STATEMENTS
                    or fused.cuts(step, [k.step for k in run])):
            if len(run) > 1:
                yield run[::-1]
            run = []
        run.append(traced[i])
    if len(run) > 1:
        yield run[::-1]


def _joins(step: Step, items: list[Any], lowering: Any, shared: Mapping[Place, Any]) -> bool:
    """Whether a top-level step may be a segment's kernel: a hawk kernel leaf with float outputs
    and no Mutable, run alone by its own lowering (nothing copied aside beside it), that the
    fused reverse takes and a recompute can point at arrays of its own."""
    return (isinstance(step, Leaf) and step.kind == "kernel" and step.needs_values
            and all(p.role != "readwrite" for p in step.planes)
            and len(items) == 1 and isinstance(items[0], Run) and items[0].what is lowering
            and getattr(lowering, "fuse", None) is not None
            and node_kind(step.node.kind).rebuild is not None and fused.leaf_joins(step, shared))


# ------------------------------------------------------------------ the pass


@dataclass(eq=False)
class Recompute:
    """The kernels of segments run again on arrays of the pass: what its reverses read of them."""

    nodes: list[Any]
    arrays: dict[Place, np.ndarray]  # the pass's own, which its program writes and reads

    def uses(self) -> set[Place]:
        return set()

    def emit(self, program: Program, ctx: Context) -> None:
        for node in self.nodes:
            emit_node(node, program)
        ctx.keep.append(self)  # the program holds pointers into the arrays, not the arrays


def plan(ops: list[Any], missing: Mapping[Place, Segment]) -> Recompute | None:
    """Point the reverses among ``ops`` (the pass's top level) that read a value the forward did
    not store (``missing``) at a recompute of it, and return that recompute (None: none needed)."""
    wanted: dict[int, tuple[Segment, set[Place]]] = {}
    readers: list[tuple[KernelBack, set[Place]]] = []
    for op in ops:
        for back, places in _reads(op):
            lost = {p for p in places if p in missing}
            if lost:
                readers.append((back, lost))
                for p in lost:
                    wanted.setdefault(id(missing[p]), (missing[p], set()))[1].add(p)
    if not readers:
        return None
    own: dict[Place, np.ndarray] = {}
    nodes = []
    for segment, places in wanted.values():
        last = max(m for m, k in enumerate(segment.members) if k.step.writes & places)
        for kept in segment.members[:last + 1]:
            for p in kept.step.planes:
                if p.writes:
                    own.setdefault(p.place, np.empty(p.array.shape, p.array.dtype))
            arrays = {**kept.values, **{p.place: own[p.place] for p in kept.step.planes if p.place in own}}
            nodes.append(rebind(kept.step, arrays))
    for back, lost in readers:
        back.values = {**back.values, **{p: own[p] for p in lost}}
    return Recompute(nodes, own)


def _reads(op: Any) -> Iterator[tuple[KernelBack, set[Place]]]:
    """(kernel reverse, the places whose values it reads) for a top-level operation."""
    if isinstance(op, KernelBack):
        yield op, set(op.values)
    elif isinstance(op, fused.RunBack):
        reads = op.reads()
        for m, back in enumerate(op.members):
            yield back, {p for k, p in reads if k == m}

