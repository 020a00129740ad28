"""``eagle.diff.reverse``: the reverse pass, walked last to first over a recorded run.

Each place (array) that the seeds reach and that reaches a ``wrt`` name
has an adjoint.  Walking the steps last to first, a leaf takes the adjoints
of what it wrote as cotangents, runs its derivative (a hawk kernel's vjp, a
copy, sum or row move sent back, or a ``vjps=`` function), clears the adjoints of what
it overwrote and adds the gradients into the adjoints of what it read.  The
branches of a fork were recorded in one order and are reversed in the
opposite one, so an array read by several nodes gets their contributions
added in one fixed order (never by atomics): the same bits for any number
of threads.  A choice reverses the arm that ran (the cell as the choice read
it), a loop its turns last to first, each run again from its kept state.

Only what was asked is derived: a leaf is reversed only on a path from a
``wrt`` place to a seed, and a kernel's vjp takes cotangents only for its
outputs on such a path and stores gradients only for its inputs on one (a
``Param``'s cross-sample sum only when it is asked for).  A run of
consecutive per-sample kernel reverses is one generated function
(:mod:`eagle.diff.fused`; ``fuse=False`` reverses each on its own, with the
same bits).

The pass is itself one libeagle program, built once per set of seed and
``wrt`` names and run in one native call: per-sample vjps, clears and sums
block-fuse like a forward replay.  Adjoint arrays are shared between places
whose adjoints are never needed at the same time.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from eagle.diff import fused, loop_views, memory, recompute
from eagle.diff.device import home
from eagle.diff.forward import Chose, Emitter, Kept, Looped, Snap, unbound
from eagle.diff.loops import needed_again
from eagle.diff.ops import (
    CallBack,
    Capture,
    ChoiceBack,
    Context,
    CopyBack,
    KernelBack,
    LoopBack,
    ReduceBack,
    RowBack,
    Vjp,
    Zero,
)
from eagle.diff.record import Names, Record, flatten, unflatten
from eagle.diff.steps import Leaf, Place, place
from eagle.diff.views import Link, gather, scatter
from eagle.extend import (
    CopyFlow,
    EagleKeyError,
    EagleMemoryError,
    EagleTypeError,
    EagleValueError,
    Program,
    ReduceFlow,
    RowFlow,
)
from eagle.extend import node_kind as kind_of


def reverse(record: Record, seeds: Mapping[str, Any], wrt: Sequence[str] | None = None,
            vjps: Mapping[str, Vjp] | None = None, fuse: bool = True) -> dict[str, Any]:
    """Gradients of the seeded outputs of the last run with respect to the ``wrt`` names.

    :param record: ``g.record`` of a graph built with ``record=True`` that has run.
    :param seeds: name -> cotangent of that array's value at the end of the run (for
        ``result``, a tree shaped like the result).
    :param wrt: the names to differentiate with respect to.  An array read before the graph
        writes it: its value at the start; one the graph writes first: the value it writes.
        A hand-built graph defaults to its float inputs and Params; a builder graph has no default.
    :param vjps: node label -> ``fn(primals, cotangents) -> {read name: gradient}``, run in
        place of that node's derivative (an opaque node on the reverse path needs one).
    :param fuse: reverse each run of consecutive per-sample hawk kernels as one generated
        function (:mod:`eagle.diff.fused`); False reverses every kernel on its own, with the
        same bits.
    :returns: name -> gradient, shaped like the name's array (a tree for ``result``; a
        one-cell array for a Param).

    >>> @hawk.kernel
    ... def square(v: hawk.Scalar) -> hawk.Scalar:
    ...     return v * v
    >>> @eagle.Graph.builder
    ... def model(x, record=False):
    ...     g = eagle.Graph(record=record)
    ...     g.result = square(x)
    ...     return g
    >>> g = model(np.arange(3.0), record=True)
    >>> _ = g()
    >>> eagle.diff.reverse(g.record, {"result": np.ones(3)}, wrt=("x",))
    {'x': array([0., 2., 4.])}
    """
    if not isinstance(record, Record):
        raise EagleTypeError("eagle.diff.reverse: takes g.record of a graph built with "
                             "eagle.Graph(record=True), "
                        f"got {record!r}")
    record._check()
    names = record._names()
    if wrt is None:
        if names.builder:
            raise EagleValueError("eagle.diff.reverse: a builder graph has no default gradients: pass "
                                  "wrt=(...) "
                             f"naming the arguments it could take: {', '.join(names.defaults)}")
        wrt = names.defaults
    elif isinstance(wrt, str):
        wrt = (wrt,)
    if not isinstance(seeds, Mapping) or not seeds:
        raise EagleTypeError("eagle.diff.reverse: seeds is a dict of name -> cotangent, e.g. "
                        "{'result': np.ones(n)}")
    targets = {name: names.resolve(name, "wrt") for name in wrt}
    linked = {name: record._links(name, value) for name, value in targets.items()}
    for name, value in targets.items():
        _refuse_a_number(name, value, linked[name], names)
    if record._device is not None:  # a GPU graph's reverse runs on the host: seeds given there
        seeds = {name: unflatten(value, iter([home(x) for x in flatten(value)]))
                 for name, value in seeds.items()}
    seeded = _seed_values(seeds, names, record)
    vjps = dict(vjps or {})
    labels = {record._label(leaf) for leaf in record._leaves()} if vjps else set()
    unknown = sorted(set(vjps) - labels)
    if unknown:
        raise EagleKeyError(f"eagle.diff.reverse: vjps names {', '.join(map(repr, unknown))}, which no node "
                            "of "
                       f"the graph is called; its nodes: {', '.join(sorted(labels))}")
    wanted = {link.place: link.spec for found in linked.values() for each in found for link in each}
    key = (frozenset(p for p, _ in seeded), tuple(wanted), tuple(sorted((k, id(f)) for k, f in vjps.items())),
           bool(fuse))
    if key not in record._passes:
        if len(record._passes) >= 8:  # seeds and wrt change rarely; keep the last few passes
            record._passes.pop(next(iter(record._passes)))
        record._passes[key] = Pass(record, key[0], wanted, vjps, bool(fuse))
    grads = record._passes[key].run(seeded)
    # each gradient where its array lives: on a GPU graph's device, from the host pass
    back = (lambda x, g: g) if record._device is None else record._device.twins.like
    return {name: unflatten(value, iter([back(x, gather(x, found, grads)) for x, found
                                         in zip(flatten(value), linked[name], strict=True)]))
            for name, value in targets.items()}


def _refuse_a_number(name: str, value: Any, found: list[list[Link]], names: Names) -> None:
    """A one-cell array that no plane holds may reach the graph as a kernel's Param, which takes
    its value, a number: it has no gradient, and a zero would be a silent lie."""
    for x, links_of_x in zip(flatten(value), found, strict=True):
        if names.builder and isinstance(x, np.ndarray) and x.size == 1 and links_of_x[0].rest:
            raise names.not_a_param(name, "a one-cell array no plane of the graph holds")


def _seed_values(seeds: Mapping[str, Any], names: Any, record: Record) -> list[tuple[Place, np.ndarray]]:
    out = []
    for name, value in seeds.items():
        target = names.resolve(name, "seed")
        arrays, given = flatten(target), flatten(value)
        if len(arrays) != len(given):
            raise EagleValueError(f"eagle.diff.reverse: the seed of {name!r} has {len(given)} arrays, its "
                                  "arrays "
                             f"{len(arrays)}: give a tree shaped like it")
        for array, ct, found in zip(arrays, given, record._links(name, target), strict=True):
            try:
                ct = np.broadcast_to(np.asarray(ct, dtype=array.dtype), array.shape)
            except ValueError:
                raise EagleValueError(f"eagle.diff.reverse: the seed of {name!r} has shape {np.shape(ct)}, "
                                      "its "
                                 f"array {array.shape}") from None
            out.extend(scatter(array, ct, found))
    return out


# ----------------------------------------------------------------- the pass


class Pass:
    """The reverse pass of one record for one set of seeded places, ``wrt`` places and vjps."""

    def __init__(self, record: Record, seeds: frozenset[Place], wrt: Mapping[Place, tuple[Any, ...]],
                 vjps: dict[str, Vjp], fuse: bool = True) -> None:
        self.record = record
        self.vjps = vjps
        self.fuse = fuse
        forward = record._forward
        all_leaves = list(record._leaves())
        named = record._planes
        shared = memory.pairs({p: a for p, (_, a) in named.items()})
        self.aliases = memory.aliases_of(shared)  # (of any dtype)
        self.reached, backward = _reach(all_leaves, set(wrt), set(seeds), shared)
        self.active = frozenset(self.reached & backward)
        self.groups = memory.Groups(named, shared)
        self.groups.refuse([s for s in forward.steps if s is not None], record._label, self.active)
        self.seeds = sorted(seeds & self.active, key=repr)
        self.tapes: list[Any] = []  # of loops inside reversed loops, filled by the pass itself
        trace = forward.trace
        groups = [self.ops(t) for t in reversed(trace)]
        self.captures: dict[Place, np.ndarray] = {}
        at_end = []
        specs = {**_specs(all_leaves), **wrt}
        for p in wrt:
            if p not in self.active:
                continue
            first = next((i for i, t in enumerate(trace) if p in t.step.reads | t.step.writes), None)
            if first is None or p in trace[first].step.reads:
                at_end.append(p)
            else:
                self.captures[p] = np.empty(*specs[p])
                groups[len(trace) - 1 - first].insert(0, Capture(p, self.captures[p]))
        self.at_end = at_end
        # one op per group from here: runs of kernel reverses fused, each as one op
        ops = [op for group in groups for op in group]
        groups = [[op] for op in (fused.runs(ops, self.groups.of, set(self.seeds)) if fuse else ops)]
        again = recompute.plan([op for group in groups for op in group], forward.unstored)
        if again is not None:  # what the fused forward kept in registers, run again first
            groups.insert(0, [again])
        self.ctx = Context()
        self._allocate(groups, specs)
        program = Program().stage()
        for group in groups:
            for op in group:
                op.emit(program, self.ctx)
        self.program = program.finalize()
        if record._graph.comm is not None:  # a Param's gradient sums over every rank's samples
            self.program.set_collective(record._graph.comm)
        self.zeros = {p: np.zeros(*specs[p]) for p in wrt if p not in self.active}

    def _allocate(self, groups: list[list[Any]], specs: dict[Place, tuple[Any, ...]]) -> None:
        """One adjoint array per place, shared by places whose top-level spans do not meet; places
        that share memory share one array over it (:mod:`eagle.diff.memory`), each its view.

        Each is cleared where its span starts (the seeded ones before the run),
        unless the first operation there is a vjp that writes it whole; a vjp
        that is the last to touch one does not clear it after.
        """
        key = self.groups.key
        first: dict[Place, tuple[int, Any]] = {}
        last: dict[Place, tuple[int, Any]] = {}
        for r, group in enumerate(groups):
            for op in group:
                for p in op.uses():
                    first.setdefault(key(p), (r, op))
                    last[key(p)] = (r, op)
        span = {p: [first[p][0], last[p][0]] for p in first}
        for p in self.seeds:
            span.setdefault(key(p), [-1, -1])[0] = -1
        for p in self.at_end:
            span.setdefault(key(p), [len(groups), len(groups)])[1] = len(groups)
        clear: list[tuple[int, Place]] = []
        for p, (start, end) in span.items():
            alone = p in specs  # not a group's buffer: a vjp may define it, or skip its clear
            if start >= 0:
                op = first[p][1]
                if alone and isinstance(op, (KernelBack, fused.RunBack)) and op.can_define(p):
                    op.direct.add(p)
                else:
                    clear.append((start, p))
            if alone and end < len(groups) and isinstance(last[p][1], (KernelBack, fused.RunBack)):
                last[p][1].dead.add(p)
        for start, p in sorted(clear, key=lambda sp: (-sp[0], repr(sp[1]))):
            groups[start].insert(0, Zero([p]))
        free: dict[tuple[Any, ...], list[tuple[int, np.ndarray]]] = {}
        for p, (start, end) in sorted(span.items(), key=lambda kv: (kv[1][0], repr(kv[0]))):
            spec = specs.get(p) or self.groups.spec(p)
            pool = free.setdefault((spec[0], np.dtype(spec[1]).str), [])
            slot = next((k for k, (until, _) in enumerate(pool) if until < start), None)
            array = pool.pop(slot)[1] if slot is not None else np.zeros(*spec)
            pool.append((end, array))
            self.ctx.adj[p] = array
        for p, group in self.groups.of.items():
            if group.key in self.ctx.adj:
                self.ctx.adj[p] = group.view(self.ctx.adj[group.key], group.members[p])

    # ---------------------------------------------------------- one step
    def ops(self, t: Any) -> list[Any]:
        if isinstance(t, Kept):
            return self.leaf_ops(t)
        step = t.step
        if not step.writes & self.active:
            return []
        if isinstance(t, Chose):
            return [ChoiceBack(t.cell, step.kind, step.keys, [self.body_ops(arm) for arm in t.arms])]
        return self.loop_ops(t)

    def body_ops(self, trace: list[Any]) -> list[Any]:
        return [op for t in reversed(trace) for op in self.ops(t)]

    def leaf_ops(self, kept: Kept) -> list[Any]:
        leaf = kept.step
        written = [p.place for p in leaf.planes if p.writes and p.place in self.active]
        if not written:
            return []
        if not any(leaf.sources[p] & self.reached for p in written):  # it depends on no wrt name
            return [Zero(written)]
        label = self.record._label(leaf)
        fn = self.vjps.get(label)
        if fn is not None:
            return [CallBack(leaf, label, kept.values, fn, self.active)]
        if leaf.kind == "kernel":
            return [KernelBack(leaf, kept.values, self.active)]
        flow = leaf.flow
        if isinstance(flow, CopyFlow):
            return [CopyBack(place(flow.src), place(flow.dst), self.active)]
        if isinstance(flow, ReduceFlow):
            x = place(flow.x)
            return [ReduceBack(x, place(flow.out), flow.op, kept.values.get(x), self.active)]
        if isinstance(flow, RowFlow):
            return [RowBack(flow.put, kept.values[place(flow.index)], place(flow.table), place(flow.row),
                            self.active)]
        rule = kind_of(leaf.node.kind).vjp  # the kind's own derivative
        if rule is not None:
            rule = functools.partial(rule, leaf.node.payload)
            return [CallBack(leaf, label, kept.values, rule, self.active)]
        raise EagleTypeError(f"eagle.diff.reverse: node {label!r} ({leaf.node.kind}) is on the reverse path "
                             "and "
                        f"has no derivative: pass vjps={{{label!r}: fn}}, fn(primals, cotangents) -> "
                        "{read name: gradient}")

    def loop_ops(self, looped: Looped) -> list[Any]:
        step = looped.step
        # the turns run again on arrays of their own, one memory where the originals are one
        loop_views.refuse_uncovered(step, self.aliases, lambda p: self.record._planes[p][0])
        own = loop_views.own_arrays(step, self.aliases)
        reversed_ = [bool(s.writes & self.active) for s in step.body]
        run, live = needed_again(step.body, reversed_, self.aliases)
        emitter = Emitter({**looped.outside, **own}, self.aliases)
        groups, trace = emitter.steps(step.body, frozenset(), {},
                                      skip=frozenset(k for k, r in enumerate(run) if not r))
        self.tapes += emitter.tapes
        per_step = [self.ops(t) if reversed_[k] else [] for k, t in enumerate(trace)]
        read = {id(a) for k, t in enumerate(trace) if per_step[k] for a in _arrays(t)}
        again = [item for group in groups for item in group
                 if not isinstance(item, Snap) or id(item.dst) in read]
        for leaf in unbound(again):
            label = self.record._label(leaf)
            raise EagleTypeError(f"eagle.diff.reverse: node {label!r} ({leaf.node.kind}) runs inside the "
                                 "device "
                            f"loop {step.label!r}: a loop is reversed by running each turn again from its "
                            "kept state, on arrays of the reverse pass, which this node cannot be pointed "
                            "at; make it a hawk kernel, or move it out of the loop")
        turn = [op for ops in reversed(per_step) for op in ops]
        if self.fuse:  # adjoints flow from turn to turn: any active cotangent may hold something
            turn = fused.runs(turn, self.groups.of, set(self.active))
        state = [own[p.place] if p.place in live or self.aliases.get(p.place, frozenset()) & live else None
                 for p in looped.state]
        return [LoopBack(looped.tape, state, again, turn, [emitter.tapes, emitter.kept, own])]

    # ---------------------------------------------------------- running
    def run(self, seeded: list[tuple[Place, np.ndarray]]) -> dict[Place, np.ndarray]:
        # a place seeded once, by itself, takes its seed as it is; others sum into a cleared one
        counts = Counter(p for p, _ in seeded if p in self.active)
        once = {p for p, n in counts.items() if n == 1 and p not in self.groups.of}
        for p in self.seeds:
            if p not in once:
                self.ctx.adj[self.groups.key(p)][...] = 0
        for p, ct in seeded:
            if p in once:
                np.copyto(self.ctx.adj[p], ct)
            elif p in self.active:
                self.ctx.adj[p] += ct
        self.program.run()
        if any(tape.failed for tape in self.tapes):
            raise EagleMemoryError("eagle.diff.reverse: out of memory keeping the turns of a loop inside a "
                                   "loop")
        out = dict(self.zeros)
        out.update({p: self.ctx.adj[p] for p in self.at_end})
        out.update(self.captures)
        return out


def _arrays(t: Any) -> Iterator[np.ndarray]:
    """The arrays a trace entry's reverse reads values from."""
    if isinstance(t, Kept):
        yield from t.values.values()
    elif isinstance(t, Chose):
        yield t.cell
        for arm in t.arms:
            for inner in arm:
                yield from _arrays(inner)
    else:
        yield from t.outside.values()


def _reach(all_leaves: list[Leaf], wrt: set[Place], seeds: set[Place], pairs: list[tuple[Place, Place]]
           ) -> tuple[set[Place], set[Place]]:
    """Places the wrt names reach (forward) and places that reach a seed (backward), over every
    leaf whatever the order (a loop feeds its own earlier steps), along what each written place
    has a derivative of, and across places that share memory."""
    forward, backward = set(wrt), set(seeds)
    changed = True
    while changed:
        changed = False
        for leaf in all_leaves:
            for written, sources in leaf.sources.items():
                if written not in forward and sources & forward:
                    forward.add(written)
                    changed = True
                if written in backward and not sources <= backward:
                    backward |= sources
                    changed = True
        for reach in (forward, backward):
            for p, q in pairs:
                if (p in reach) != (q in reach):
                    reach |= {p, q}
                    changed = True
    return forward, backward


def _specs(all_leaves: list[Leaf]) -> dict[Place, tuple[Any, ...]]:
    """(shape, dtype) of every float place."""
    specs: dict[Place, tuple[Any, ...]] = {}
    for leaf in all_leaves:
        for p in leaf.planes:
            specs.setdefault(p.place, (p.array.shape, p.array.dtype))
        for s in leaf.params:
            specs.setdefault(s.place, ((1,), s.dtype))
    return specs

