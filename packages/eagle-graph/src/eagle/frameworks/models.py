"""A framework's model as a node: what the torch and the JAX node kinds share.

A model node calls ``fn(*reads)`` (JAX: ``fn(params, *reads)``) at every
launch with the read planes seen by the framework over their own memory, and
puts what it returns, one array per written plane in the order declared,
into the written planes.  Everything here is framework-free: a
:class:`Framework` (eagle-torch's, eagle-jax's) says how its arrays view a
plane, store a result and are differentiated, and imports its framework
only when a node is made.  Both kinds are registered with the same hooks
(:data:`HOOKS`): a payload carries its framework, so nothing here asks which
framework it holds.

What a model returns is checked against the planes (count, shape, dtype:
eagle never casts or broadcasts it), and so is what the framework made of
each read plane (JAX without ``jax_enable_x64`` reads float64 as float32).

>>> from eagle.frameworks.models import spec
>>> spec(np.zeros((2, 3), np.float32))
((2, 3), 'float32')
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eagle._errors import EagleRuntimeError, EagleTypeError, EagleValueError
from eagle.extend import BoxPicture, GpuItems, Swap, as_plane, is_plane, on_device

Spec = tuple[tuple[int, ...], str]  # (shape, dtype name): how planes and results are compared
#: ``pair(results) -> [(output, cotangent or None), ...]``: what a model returned, paired
Pair = Callable[[Any], list[tuple[Any, Any]]]


def spec(array: Any) -> Spec | None:
    """``(shape, dtype name)`` of a NumPy, CuPy, torch or JAX array (None for anything else):
    the dtype names of the four agree (``float64``, ``bfloat16``).

    >>> from eagle.frameworks.models import spec
    >>> spec(np.zeros(3, np.int32)), spec([1.0])
    (((3,), 'int32'), None)
    """
    shape, dtype = getattr(array, "shape", None), getattr(array, "dtype", None)
    if shape is None or dtype is None:
        return None
    name = dtype.name if isinstance(dtype, np.dtype) else str(dtype).removeprefix("torch.")
    return tuple(int(n) for n in shape), name


def floating(array: Any) -> bool:
    """Whether ``array`` holds real floats, as eagle.diff counts them (a NumPy float kind).

    >>> from eagle.frameworks.models import floating
    >>> floating(np.zeros(2)), floating(np.zeros(2, np.int32)), floating(np.zeros(2, complex))
    (True, False, False)
    """
    try:
        return np.dtype(spec(array)[1]).kind == "f"
    except TypeError:  # bfloat16, float8: no NumPy dtype, no gradient in eagle.diff
        return False


def _said(found: Spec | None, what: Any) -> str:
    if found is None:
        return f"a {type(what).__name__}"
    return f"{found[1]} of shape {found[0]}"


class Framework(ABC):
    """How one framework runs a model node: eagle-torch and eagle-jax each implement one, and
    register their kind with :data:`HOOKS` and a ``make`` of their own.

    NumPy, as a framework whose arrays are the planes themselves:

    >>> from eagle.frameworks.models import HOOKS, Framework, make
    >>> from eagle.graph import Node, register_node_kind
    >>> class Numpy(Framework):
    ...     name = "doc_numpy"
    ...     def load(self): return np
    ...     def view(self, value): return value
    ...     def store(self, value, result, keep): np.copyto(value, result)
    ...     def pullback(self, fn, params, args, pair, accumulate): raise NotImplementedError
    ...     def gpu(self, call): raise NotImplementedError
    >>> kind = register_node_kind("doc_numpy", **HOOKS)
    >>> x, y = np.arange(3.0), np.zeros(3)
    >>> node = Node("doc_numpy", make(Numpy(), np.square, {"x": x}, {"y": y}, api="doc_numpy"))
    >>> g = eagle.Graph().add_node(node).build().launch()
    >>> y
    array([0., 1., 4.])
    """

    #: the node kind's name and the module's, ``eagle.frameworks.<name>``
    name: str
    #: what the messages call the framework's arrays
    noun: str = "arrays"
    #: ``fn`` may write its written planes itself and return None (torch); else it returns them
    writes_in_place: bool = False

    @abstractmethod
    def load(self) -> Any:
        """The framework's module, imported now; an ImportError naming what to install."""

    def plane(self, value: Any) -> Any:
        """What eagle sees of a declared plane (None: ``value`` is no plane)."""
        return value if is_plane(value) else None

    def writes_itself(self, value: Any) -> bool:
        """Whether a store into plane ``value`` goes through the framework's own in-place write
        (torch's ``copy_``, which moves the tensor's version counter); else eagle writes its
        memory, which must take it (:func:`eagle.extend.as_plane`'s write refusal)."""
        return False

    def address(self, value: Any) -> int | None:
        """Where ``value``'s memory starts, when it could move after the node is made."""
        return None

    @abstractmethod
    def view(self, value: Any) -> Any:
        """The framework's array over plane ``value``'s memory (a copy only where the framework
        cannot alias it)."""

    @abstractmethod
    def store(self, value: Any, result: Any, keep: list[Any]) -> None:
        """Put ``result`` into plane ``value``; what must outlive a device copy goes in ``keep``."""

    def version(self, array: Any) -> int | None:
        """A counter that moves when ``array`` is written in place (None: it cannot be)."""
        return None

    def hint(self, found: Spec | None) -> str:
        """A sentence's end explaining why the framework gave ``found`` (JAX's float32)."""
        return ""

    def call(self, fn: Callable[..., Any], args: Sequence[Any]) -> Any:
        return fn(*args)

    def settled(self, result: Any) -> Any:
        """``result`` computed and in memory of its own: a model's result may be a view of a plane
        (``return x`` or ``x[..., 0]``), which storing an earlier result would change."""
        return result.copy()

    def params_view(self, params: Any) -> Any:
        return params

    @abstractmethod
    def pullback(
        self, fn: Callable[..., Any], params: Any, args: Sequence[np.ndarray], pair: Pair, accumulate: Any
    ) -> list[Any]:
        """The gradient of each of ``args`` (None: not a float) of the sum of ``<cotangent,
        output>``, where ``pair(results)`` gives ``fn``'s outputs each with its cotangent (None:
        none).  ``accumulate`` (None: none) is where the parameters' gradients go, the framework's
        own way: torch, the tensors whose ``.grad`` accumulate; JAX, a function given the
        gradient of ``params``."""

    @abstractmethod
    def gpu(self, call: ModelCall) -> GpuItems:
        """The node's work in a CUDA graph (seed 001's tiers)."""

    def picture(self, call: ModelCall) -> BoxPicture:
        return BoxPicture("python", "stream")


@dataclass(frozen=True, eq=False)
class ModelCall:
    """A model node's payload."""

    framework: Framework
    fn: Callable[..., Any]
    reads: dict[str, Any]
    writes: dict[str, Any]
    #: what its messages start with: the call that made it
    api: str
    #: JAX: the pytree passed to ``fn`` first (None: none)
    params: Any = None
    #: the stream of the GPU's stream tier (None: the framework's default tier)
    stream: Any = None
    #: what eagle sees of each plane, by name
    planes: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: where each plane that could move started (``param.data = ...`` moves a tensor)
    addresses: dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def label(self) -> str:
        return getattr(self.fn, "__name__", type(self.fn).__name__)

    def values(self) -> dict[str, Any]:
        return {**self.reads, **self.writes}

    def check_addresses(self) -> None:
        """Refuse a run after a plane moved: the graph holds the old memory."""
        for name, start in self.addresses.items():
            if self.framework.address(self.values()[name]) != start:
                raise EagleRuntimeError(
                    f"{self.api}: {self.framework.noun[:-1]} {name!r} no longer lives where "
                    "the graph was built (was it re-assigned, e.g. param.data = ...?); update "
                    "it in place (param.copy_(...)), or build the graph again"
                )

    def outputs(self, results: Any) -> list[Any] | None:
        """``fn``'s results, one per written plane, each checked against its plane (None: it wrote
        its planes itself)."""
        if results is None:
            if self.framework.writes_in_place:
                return None
            raise EagleTypeError(
                f"{self.api}: {self.label} returned None; return its results, one per "
                f"written plane ({', '.join(self.writes)}), in order"
            )
        outs = list(results) if isinstance(results, (tuple, list)) else [results]
        if len(outs) != len(self.writes):
            raise EagleValueError(
                f"{self.api}: {self.label} returned {len(outs)} {self.framework.noun} for "
                f"{len(self.writes)} written planes ({', '.join(self.writes)}); return one per "
                "written plane, in order"
                + (", or None after writing them yourself" if self.framework.writes_in_place else "")
            )
        for (name, value), out in zip(self.writes.items(), outs, strict=True):
            want, got = spec(value), spec(out)
            if got != want:
                raise EagleValueError(
                    f"{self.api}: {self.label} returned {_said(got, out)} for plane {name!r}, "
                    f"which is {_said(want, value)}{self.framework.hint(got)}; return the "
                    "plane's shape and dtype (eagle neither casts nor broadcasts)"
                )
        return outs

    def views(self) -> list[Any]:
        """The read planes as the framework sees them, each checked against its plane."""
        views = []
        for name, value in self.reads.items():
            view = self.framework.view(value)
            want, got = spec(value), spec(view)
            if got != want:
                raise EagleValueError(
                    f"{self.api}: {self.framework.name} reads plane {name!r} ({_said(want, value)}) "
                    f"as {_said(got, view)}{self.framework.hint(got)}; give it a plane it "
                    "reads as it is"
                )
            views.append(view)
        return views

    def run(self, keep: list[Any]) -> None:
        """One launch's call: the read planes in, the results into the written planes."""
        fw = self.framework
        self.check_addresses()
        views = self.views()
        only_read = [
            (name, view, fw.version(view))
            for name, view in zip(self.reads, views, strict=True)
            if name not in self.writes
        ]
        args = views if self.params is None else [fw.params_view(self.params), *views]
        results = fw.call(self.fn, args)
        for name, view, version in only_read:
            if version is not None and fw.version(view) != version:
                raise EagleRuntimeError(
                    f"{self.api}: {self.label} wrote plane {name!r}, which it only reads; "
                    f"declare it in writes too (writes={{{name!r}: ...}}), or leave it be"
                )
        outs = self.outputs(results)
        keep += views
        if outs is not None:
            if len(outs) > 1:  # every result whole before the first store writes a plane
                outs = [fw.settled(out) for out in outs]
            for value, out in zip(self.writes.values(), outs, strict=True):
                fw.store(value, out, keep)


def _declared(planes: Mapping[str, Any] | None, what: str, framework: Framework, api: str) -> dict[str, Any]:
    if planes is None:
        return {}
    if not isinstance(planes, Mapping):
        raise EagleTypeError(f"{api}: declare {what} as a dict of name -> array, e.g. {what}={{'x': x}}")
    for name, value in planes.items():
        if framework.plane(value) is None:
            raise EagleTypeError(
                f"{api}: {what}[{name!r}] is a {type(value).__name__}, which is no plane: pass a "
                f"NumPy array (a device array on the GPU) or a {framework.name} array over memory"
            )
    return dict(planes)


def _refuse_misplaced(ins: dict[str, Any], outs: dict[str, Any], label: str, api: str) -> None:
    """eagle.diff hands a vjp the planes a node only reads, then those it reads and writes, and a
    helper vjp (``vjp(model)``) passes them to ``fn`` in that order: a plane read and written that
    is no float (its cotangent, which would show it, does not exist) must come after the planes
    only read, or it would reach ``fn`` in another argument's place."""
    names = list(ins)
    for k, name in enumerate(names):
        later = [n for n in names[k + 1 :] if n not in outs]
        if name in outs and not floating(ins[name]) and later:
            wanted = [n for n in names if n not in outs] + [n for n in names if n in outs]
            order = ", ".join(map(repr, wanted))
            raise EagleValueError(
                f"{api}: {label} reads and writes {name!r}, which holds no floats, before "
                f"{', '.join(map(repr, later))}, which it only reads; declare the reads in the order "
                f"{order} (and take fn's arguments so), the order eagle.diff gives a vjp its primals"
            )


def make(
    framework: Framework,
    fn: Callable[..., Any],
    reads: Mapping[str, Any] | None,
    writes: Mapping[str, Any] | None,
    *,
    api: str,
    params: Any = None,
    stream: Any = None,
) -> ModelCall:
    """The payload of a model node, its declarations checked."""
    framework.load()
    if not callable(fn):
        raise EagleTypeError(f"{api}: fn must be callable, got {type(fn).__name__}")
    label = getattr(fn, "__name__", type(fn).__name__)
    ins, outs = _declared(reads, "reads", framework, api), _declared(writes, "writes", framework, api)
    for name, value in outs.items():
        if not framework.writes_itself(value):
            as_plane(value, api, f"writes[{name!r}]", writes=True)  # a JAX array, read-only memory
    _refuse_misplaced(ins, outs, label, api)
    if not outs:
        raise EagleValueError(
            f"{api}: {label} writes no plane; declare what it writes (writes={{'y': y}}), "
            "or the graph has no reason to run it"
        )
    for name in ins.keys() & outs.keys():
        if ins[name] is not outs[name]:
            raise EagleValueError(
                f"{api}: plane name {name!r} is read as one {framework.noun[:-1]} and written "
                "as another; give them two names"
            )
    named = {**ins, **outs}
    by_id: dict[int, str] = {}
    for name, value in named.items():
        other = by_id.setdefault(id(value), name)
        if other != name:
            raise EagleValueError(
                f"{api}: planes {other!r} and {name!r} are one array; give it one name "
                "(in reads and writes, if the model reads and writes it)"
            )
    sides = {name: on_device(framework.plane(value)) for name, value in named.items()}
    if len(set(sides.values())) > 1:
        host = ", ".join(n for n, d in sides.items() if not d)
        raise EagleValueError(
            f"{api}: planes {host} live on the host and "
            f"{', '.join(n for n, d in sides.items() if d)} on a GPU; a node runs where its "
            "planes live: move them to one side, or add eagle.copy nodes between"
        )
    addresses = {name: a for name, value in named.items() if (a := framework.address(value)) is not None}
    return ModelCall(
        framework,
        fn,
        ins,
        outs,
        api,
        params,
        stream,
        {name: framework.plane(value) for name, value in named.items()},
        addresses,
    )


# ----------------------------------------------------------------- the kind's hooks


def _reads(c: ModelCall) -> list[tuple[str, Any, str]]:
    return [(name, c.planes[name], "read") for name in c.reads if name not in c.writes]


def _writes(c: ModelCall) -> list[tuple[str, Any, str]]:
    return [(name, c.planes[name], "readwrite" if name in c.reads else "write") for name in c.writes]


def _lower_cpu(c: ModelCall) -> Callable[[], None]:
    device = [name for name, plane in c.planes.items() if on_device(plane)]
    if device:
        raise EagleValueError(
            f"eagle.Graph.build: {c.framework.name} node {c.label} has device planes "
            f"({', '.join(device)}) in a CPU build; a CPU build runs host planes"
        )
    return lambda: c.run([])


def _rebuild(c: ModelCall, swap: Swap) -> ModelCall:
    """The node over swapped arrays (bind, the builder's buffer plan, a loop turn run again in a
    reverse pass)."""
    return make(
        c.framework,
        c.fn,
        {n: swap(v) for n, v in c.reads.items()},
        {n: swap(v) for n, v in c.writes.items()},
        api=c.api,
        params=c.params,
        stream=c.stream,
    )


def _vjp(c: ModelCall, primals: Mapping[str, Any], cotangents: Mapping[str, Any]) -> dict[str, Any]:
    """The kind's derivative for eagle.diff: the framework's own through ``fn`` at the kept
    primals, by plane name; the model's parameters are left alone."""

    def pair(results: Any) -> list[tuple[Any, Any]]:
        outs = c.outputs(results)
        if outs is None:
            raise EagleTypeError(
                f"{c.api} vjp: {c.label} wrote its outputs itself (returned None), so "
                f"{c.framework.name} cannot differentiate them; return the outputs instead, or "
                "pass vjps= to eagle.diff.reverse"
            )
        return [(out, cotangents.get(name)) for name, out in zip(c.writes, outs, strict=True)]

    args = [np.asarray(primals[name]) for name in c.reads]
    grads = c.framework.pullback(c.fn, c.params, args, pair, None)
    return {name: g for name, g in zip(c.reads, grads, strict=True) if g is not None}


#: The hooks of both model kinds (``registry.register_node_kind(name, make=..., **HOOKS)``).
HOOKS: dict[str, Any] = {
    "reads": _reads,
    "writes": _writes,
    "lower_cpu": _lower_cpu,
    "lower_gpu": lambda c: c.framework.gpu(c),
    "vjp": _vjp,
    "rebuild": _rebuild,
    "label": lambda c: c.label,
    "picture": lambda c: c.framework.picture(c),
}


# ----------------------------------------------------------------- vjps= helpers


def helper_vjp(
    framework: Framework, api: str, fn: Callable[..., Any], params: Any, accumulate: Any
) -> Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]:
    """``vjp(primals, cotangents) -> {read name: gradient}`` for ``vjps=``: ``fn`` run again at the
    primals, which eagle.diff lists in the order the node declared its reads (``fn``'s arguments),
    its float results paired in order with the cotangents of the float planes it writes."""

    def vjp(primals: Mapping[str, Any], cotangents: Mapping[str, Any]) -> dict[str, Any]:
        both = sorted(primals.keys() & cotangents.keys())
        if both:
            raise EagleValueError(
                f"{api}: the node reads and writes {', '.join(map(repr, both))}; a model's "
                "inputs and outputs are told apart by the order they were declared in, so "
                "give each output a plane of its own"
            )

        def pair(results: Any) -> list[tuple[Any, Any]]:
            outs = list(results) if isinstance(results, (tuple, list)) else [results]
            floats = [k for k, out in enumerate(outs) if floating(out)]
            if len(floats) != len(cotangents):
                raise EagleValueError(
                    f"{api}: {getattr(fn, '__name__', 'the model')} returned {len(floats)} float "
                    f"results for the {len(cotangents)} float planes the node writes "
                    f"({', '.join(cotangents)}); is this the node's model?"
                )
            found: list[Any] = [None] * len(outs)
            for k, ct in zip(floats, cotangents.values(), strict=True):
                found[k] = ct
            return list(zip(outs, found, strict=True))

        args = [np.asarray(p) for p in primals.values()]
        grads = framework.pullback(fn, params, args, pair, accumulate)
        return {name: g for name, g in zip(primals, grads, strict=True) if g is not None}

    return vjp
