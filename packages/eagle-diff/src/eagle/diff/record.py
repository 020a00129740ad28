"""The Record of a ``record=True`` graph: what its last run kept, and the names of its arrays.

``eagle.Graph.build`` hands a recorded graph's lowering to :func:`instrument`,
which adds the keeping items (snapshots, loop tapes), has the build's fused
runs store the temporaries the reverse reads (the others it recomputes:
:mod:`eagle.diff.recompute`) and makes the Record; ``g.record`` is that
Record once the graph is built.

Names.  A builder graph maps each builder argument to the array bound to
it, ``result`` to the arrays of the result tree, and each ``buffer=`` array
to its label.  A hand-built graph names its planes: ``<plane>`` where that
name means one array in the whole graph, and ``<node label>.<plane>``
always; a float ``Param`` of a kernel node is ``<node label>.<param>``.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from eagle import extend
from eagle.diff.device import DeviceRun, Twins, device_arrays, host_copies
from eagle.diff.forward import Emitter, Run, Snap, sub_program
from eagle.diff.memory import aliases
from eagle.diff.recompute import Segment, unstored
from eagle.diff.steps import (
    Leaf,
    ParamSlot,
    Place,
    Step,
    is_float,
    leaves,
    place,
    reads_of,
    step_of,
    steps_planes,
    writes_of,
)
from eagle.diff.views import Link, links
from eagle.extend import (
    EagleKeyError,
    EagleMemoryError,
    EagleRuntimeError,
    EagleTypeError,
    HostItems,
    Program,
    default_label,
    flatten,
)
from eagle.extend import unflatten as unflatten  # eagle.diff.reverse takes both from here

if TYPE_CHECKING:
    from eagle.diff._native import Tape
    from eagle.extend import Graph


@dataclass(eq=False)
class Forward:
    """A recorded graph's lowering: its steps (one per node, None for a wait) and their trace."""

    steps: list[Step | None]
    trace: list[Any]
    kept: list[np.ndarray]  # snapshots
    tapes: list[Tape]
    #: the temporaries the forward did not store, each with the segment a pass recomputes it from
    unstored: dict[Place, Segment]
    after: Program | None  # the snapshots taken after the run (Emitter.after)


def instrument(graph: Graph, lowerings: list[Any]) -> tuple[list[Any], Record]:
    """The lowerings of a record=True graph, with what a reverse pass needs kept; and its Record."""
    seen = extend.view(graph)
    steps = [step_of(node, label, default_label) for node, label in zip(seen.nodes, seen.labels,
                                                                              strict=True)]

    def host_items(step: Step, lowering: Any, items: list[Any]) -> HostItems:
        native = (isinstance(step, Leaf) and isinstance(lowering, HostItems) and lowering.native
                  and all(i.native for i in items if isinstance(i, Snap)))
        return HostItems(lambda program, items=items: _emit(items, program), native=native)

    forward, out = _laid_out(steps, lowerings, list(seen.temporaries), host_items)
    return out, Record(graph, forward)


def instrument_device(graph: Graph, lowerings: list[Any]) -> tuple[list[Any], Record]:
    """:func:`instrument` for a GPU build (``lowerings``: the nodes' GPU lowerings): the run laid
    out over host twins of the device arrays, and emitted into the CUDA graph
    (:mod:`eagle.diff.device`), whose Record copies home what the reverse pass reads."""
    seen = extend.view(graph)
    names = extend.state(graph).get("names")
    named = [] if names is None else [*names.arguments.values(), *names.buffers.values()]
    arrays = device_arrays(seen.nodes, [*named, *flatten(graph.result), *seen.temporaries])
    twins = Twins(arrays, extend.device_of(arrays[0]) if arrays else 0)
    copies, original = host_copies(seen.nodes, twins)
    steps = [step_of(node, label, default_label, twins.view)
             for node, label in zip(copies, seen.labels, strict=True)]
    run = DeviceRun(twins, original)
    forward, out = _laid_out(steps, lowerings, [twins.twin(a) for a in seen.temporaries],
                             lambda step, lowering, items: run.lowering(lowering, items),
                             stored=twins.device_of)
    return out, Record(graph, forward, run)


def _laid_out(steps: list[Step | None], lowerings: list[Any], temporaries: list[np.ndarray],
              wrap: Callable[[Step, Any, list[Any]], Any], stored: Callable[[Any], Any] = lambda a: a
              ) -> tuple[Forward, list[Any]]:
    """The recorded run of ``steps``: its Forward, and each node's lowering (``lowerings[i]``
    where nothing is kept beside it, else ``wrap(step, lowering, items)``).  ``temporaries``:
    as the steps see them; ``stored``: the graph's own array of one (what a fused run stores)."""
    for step, lowering in zip(steps, lowerings, strict=True):
        if isinstance(step, Leaf):
            step.lowering = lowering  # a signal_after's lowering signals too
    present = [s for s in steps if s is not None]
    # A place nothing in the graph writes is the user's: kept too, since it may change before
    # the reverse pass.
    external = reads_of(present) - writes_of(present)
    shared = aliases({p.place: p.array for _, p in steps_planes(present)})
    emitter = Emitter(aliases=shared, settled=frozenset(p for p in external if p not in shared))
    groups, trace = emitter.steps(steps, external, {})
    out = []
    for step, lowering, items in zip(steps, lowerings, groups, strict=True):
        if step is None or not items or (len(items) == 1 and isinstance(items[0], Run)
                                         and items[0].what is lowering):
            out.append(lowering)  # nothing kept beside it: it may join a fused run
        else:
            out.append(wrap(step, lowering, items))
    missing = unstored(steps, groups, lowerings, trace, temporaries, shared)
    if not extend.keep_stored([stored(a) for a in temporaries if place(a) not in missing]):
        missing = {}  # an unfused build stores every plane
    after = sub_program(emitter.after).finalize() if emitter.after else None
    return Forward(steps, trace, emitter.kept, emitter.tapes, missing, after), out


def _emit(items: list[Any], program: Program) -> None:
    for item in items:
        item.emit(program)


class Record:
    """What a ``record=True`` graph keeps of its last run, and the map from names to its arrays.

    ``eagle.diff.reverse(g.record, seeds, wrt=...)`` reads it.  It describes
    the last ``launch()`` (or ``g()``); binding new arrays makes a new one.

    >>> x, total = np.arange(4.0), np.zeros(1)
    >>> g = eagle.Graph(record=True).add_node(eagle.reduce(x, total), name="total").build()
    >>> g.record
    <eagle.diff.Record of 1 node, not run yet>
    >>> _ = g()
    >>> g.record.names
    ['x', 'total.x', 'out', 'total.out']
    >>> eagle.diff.reverse(g.record, {"out": np.ones(1)})
    {'x': array([1., 1., 1., 1.])}
    """

    def __init__(self, graph: Graph, forward: Forward, device: DeviceRun | None = None) -> None:
        self._graph = graph
        self._forward = forward
        #: a GPU graph's: what its launches leave on the device, copied home after each
        self._device = device
        self._ran = False
        self._passes: dict[Any, Any] = {}  # reverse passes built, by what they depend on
        self._linked: dict[str, list[list[Link]]] = {}  # name -> where its arrays meet the planes
        self._named: Names | None = None

    def __repr__(self) -> str:
        state = "ran" if self._ran else "not run yet"
        n = len(extend.view(self._graph).nodes)
        return f"<eagle.diff.Record of {n} node{'' if n == 1 else 's'}, {state}>"

    def _run(self, program: Program, n: int) -> None:
        """Replay the graph's program: a run that fails describes nothing (the core's replay hook)."""
        self._ran = False
        program.run(n)
        if self._device is not None:
            self._device.read_back()
        if self._forward.after is not None:
            self._forward.after.run()
        self._ran = True

    def _check(self) -> None:
        """Refuse a Record that describes no run of the graph as it is now."""
        if self._graph.record is not self:
            raise EagleRuntimeError("eagle.diff.reverse: this Record is of an earlier build of the graph "
                                    "(arrays "
                               "were bound since): take g.record again after running the graph")
        if not self._ran:
            raise EagleRuntimeError("eagle.diff.reverse: the graph has not run since it was built or bound "
                                    "(or "
                               "its last run failed): run it with g() or g.launch() first")
        for tape in self._forward.tapes:
            if tape.failed:
                raise EagleMemoryError("eagle.diff.reverse: the last run could not keep a device loop's "
                                       "turns "
                                  "(out of memory)")

    # --------------------------------------------------------------- looking
    @property
    def names(self) -> list[str]:
        """The names seeds and ``wrt`` may use (those of float arrays, and Params)."""
        return [name for name, value in self._names().table.items()
                if all(isinstance(x, ParamSlot) or is_float(x) for x in flatten(value))]

    def memory(self) -> dict[str, int]:
        """Bytes kept for the reverse pass: ``snapshots`` (values copied aside once per run) and
        ``loops`` (the turns' carried state, as the last run left it)."""
        return {"snapshots": sum(a.nbytes for a in self._forward.kept),
                "loops": sum(t.nbytes for t in self._forward.tapes)}

    def _label(self, leaf: Leaf) -> str:
        recorder = extend.state(self._graph).get("names")
        if recorder is not None:
            node = leaf.node if self._device is None else self._device.original.get(id(leaf.node), leaf.node)
            return recorder.labels.get(id(node), leaf.label)
        return leaf.label

    @functools.cached_property
    def _planes(self) -> dict[Place, tuple[str, np.ndarray]]:
        """Every plane of the graph's nodes and every guard cell by place, in the order of first
        use, with a name for messages."""
        planes: dict[Place, tuple[str, np.ndarray]] = {}
        for step, plane in steps_planes([s for s in self._forward.steps if s is not None]):
            planes.setdefault(plane.place, (f"{self._label(step)}.{plane.name}", plane.array))
        return planes

    def _links(self, name: str, value: Any) -> list[list[Link]]:
        """Where each array of ``name`` meets the planes (:func:`eagle.diff.views.links`), kept:
        a Record's arrays stay what they are (``bind`` makes a new one)."""
        if name not in self._linked:
            self._linked[name] = [links(name, x, self._planes) for x in flatten(value)]
        return self._linked[name]

    def _leaves(self) -> Iterator[Leaf]:
        return leaves([s for s in self._forward.steps if s is not None])

    def _names(self) -> Names:
        """The names of this build's arrays, made once (a bind makes a new Record)."""
        if self._named is None:
            recorder = extend.state(self._graph).get("names")
            self._named = (Names.of_builder(recorder, self._graph.result, self) if recorder is not None
                           else Names.of_planes(self, self._graph.result))
        return self._named

    def _host(self, value: Any, name: str) -> Any:
        """What the reverse pass reads for ``value`` (an array, or a tree of them): on a GPU graph
        a device array's twin, the host copy of its memory the last run left; else itself."""
        if self._device is None:
            return value
        twins = self._device.twins
        return unflatten(value, iter([twins.twin(x, repr(name)) if extend.on_device(x) else x
                                      for x in flatten(value)]))


NOT_A_KEY = ("eagle.diff.reverse: {name!r} is not a builder argument, 'result' or a buffer= label: gradients "
             "flow through the arrays that enter and leave the graph. For a temporary, give it a dedicated "
             "buffer: `{name} = kernel(..., buffer=True)` (or pass an array), then use that name")


PARAM_NUMBER = ("eagle.diff.reverse: {name!r} is {what}: a kernel takes it as a Param by value, one number "
                "with no array behind it (what Python did with it is not recorded), so it has no gradient. "
                "Name the Param by its node instead, wrt=('<node label>.<param>',): {params}")


class Names:
    """Name -> what it stands for: an array, a Param, or (``result``) a tree of arrays."""

    def __init__(self, table: dict[str, Any], builder: bool, missing: Callable[[str], Exception],
                 defaults: list[str]) -> None:
        self.table = table
        self.builder = builder
        self.missing = missing
        self.defaults = defaults

    @classmethod
    def of_builder(cls, recorder: Any, result: Any, record: Record) -> Names:
        table = {name: record._host(array, name) for name, array in recorder.arguments.items()}
        if result is not None:
            table.setdefault("result", record._host(result, "result"))
        for label, array in recorder.buffers.items():
            table.setdefault(label, record._host(array, label))
        for name, slot in _param_names(record).items():  # a Param is no argument's: it goes by its node
            table.setdefault(name, slot)
        defaults = [n for n in recorder.arguments if is_float(table[n])]
        return cls(table, True, lambda name: EagleKeyError(NOT_A_KEY.format(name=name)), defaults)

    @classmethod
    def of_planes(cls, record: Record, result: Any) -> Names:
        labelled = [(record._label(leaf), leaf) for leaf in record._leaves()]
        counts = Counter(label for label, _ in labelled)
        seen: Counter[str] = Counter()
        names: dict[str, list[tuple[Place, Any, str]]] = {}  # name -> (place, value, label) per use
        for label, leaf in labelled:
            # nodes that share a label are also told apart by their turn: label[0], label[1], ...
            nth = f"{label}[{seen[label]}]"
            seen[label] += 1
            for name, where, value in leaf.planes_named():
                for key in (name, f"{label}.{name}", *([f"{nth}.{name}"] if counts[label] > 1 else [])):
                    names.setdefault(key, []).append((where, value, label))
        table: dict[str, Any] = {}
        ambiguous: dict[str, list[str]] = {}
        for name, found in names.items():
            if len({w for w, _, _ in found}) == 1:
                table[name] = found[0][1]
            else:
                ambiguous[name] = sorted({label for _, _, label in found})
        if result is not None:
            table["result"] = record._host(result, "result")
        shown = ", ".join(sorted(table)[:12]) + (" ..." if len(table) > 12 else "")

        def missing(name: str) -> Exception:
            if name in ambiguous and "." in name:
                label, plane = name.rsplit(".", 1)
                first, last = f"{label}[0].{plane}", f"{label}[{counts[label] - 1}].{plane}"
                return EagleKeyError(f"eagle.diff.reverse: {name!r} names arrays of {counts[label]} nodes "
                                f"labelled {label!r}: write '{first}' ... '{last}' (in node order), or give "
                                "the nodes names of their own")
            if name in ambiguous:
                return EagleKeyError(f"eagle.diff.reverse: {name!r} names different arrays in the nodes "
                                f"{', '.join(map(repr, ambiguous[name]))}: write '<node label>.{name}'")
            return EagleKeyError(f"eagle.diff.reverse: {name!r} is not a plane of the graph: name a plane by "
                                 "its "
                            f"name in its node, or as '<node label>.<plane>'; the graph has {shown}")

        return cls(table, False, missing, _inputs(record, table))

    def not_a_param(self, name: str, what: str) -> TypeError:
        """The refusal of a number named in place of the Param it was passed as, with the names of
        the graph's Params."""
        params = [repr(n) for n, v in self.table.items() if isinstance(v, ParamSlot)]
        known = f"this graph's are {', '.join(params)}" if params else "this graph has no float Param"
        return EagleTypeError(PARAM_NUMBER.format(name=name, what=what, params=known))

    def resolve(self, name: str, what: str) -> Any:
        """The array, Param or result tree ``name`` stands for; refused with the way out."""
        if not isinstance(name, str):
            raise EagleTypeError(f"eagle.diff.reverse: {what} names are strings, got {type(name).__name__}")
        if name not in self.table:
            raise self.missing(name)
        value = self.table[name]
        for leaf in flatten(value):
            if isinstance(leaf, ParamSlot):
                if what == "seed":
                    raise EagleTypeError(f"eagle.diff.reverse: {name!r} is a Param, one number: it can be in "
                                         "wrt, "
                                    "not seeded")
            elif isinstance(leaf, (int, float, np.number)) and not isinstance(leaf, (bool, np.bool_)):
                raise self.not_a_param(name, f"a Python number ({type(leaf).__name__})")
            elif not is_float(leaf):
                kind = f"a {leaf.dtype} array" if isinstance(leaf, np.ndarray) else type(leaf).__name__
                raise EagleTypeError(f"eagle.diff.reverse: {name!r} is {kind}: gradients flow through float "
                                "arrays")
        return value


def _param_names(record: Record) -> dict[str, ParamSlot]:
    """'<node label>.<param>' for each float Param of a builder graph's kernels; where nodes share
    a label, '<node label>[k].<param>' (k in node order)."""
    labelled = [(record._label(leaf), leaf) for leaf in record._leaves() if leaf.params]
    counts = Counter(label for label, _ in labelled)
    seen: Counter[str] = Counter()
    names = {}
    for label, leaf in labelled:
        key = label if counts[label] == 1 else f"{label}[{seen[label]}]"
        seen[label] += 1
        names.update((f"{key}.{slot.name}", slot) for slot in leaf.params)
    return names


def _inputs(record: Record, table: dict[str, Any]) -> list[str]:
    """A hand-built graph's default wrt: its float input planes (read before anything writes them)
    and its kernels' float Params, by name (a plain name where it has one)."""
    by_place: dict[Place, str] = {}
    for name, value in table.items():
        if name == "result" or not isinstance(value, (np.ndarray, ParamSlot)):
            continue
        key = value.place if isinstance(value, ParamSlot) else place(value)
        if key not in by_place or ("." in by_place[key] and "." not in name):
            by_place[key] = name
    seen: set[Place] = set()
    names = []
    for leaf in record._leaves():
        for where in [p.place for p in leaf.planes if p.reads] + [s.place for s in leaf.params]:
            value = table.get(by_place.get(where, ""))
            if where not in seen and (isinstance(value, ParamSlot) or is_float(value)):
                names.append(by_place[where])
            seen.add(where)
        seen |= leaf.writes
    return list(dict.fromkeys(names))

