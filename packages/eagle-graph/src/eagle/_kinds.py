"""Node kinds: the registry, Node, and how a kind lowers to the host.

A kind supplies ``reads`` and ``writes`` (payload -> ``(plane name, array,
role)`` tuples, which is all the edge derivation sees), its lowering (``lower``,
written once against the lowering target, ``eagle._target``, or ``lower_cpu``
and ``lower_gpu``), and says what else anyone needs to know about its nodes:
the bodies it holds, its label, its picture (``eagle._pictures``), how it is
rebuilt over swapped arrays (:class:`Swap`), what it does to the data
(``eagle._flows``, which the reverse pass reverses) and how many samples it
spans.  The core, the builder, eagle-diff and eagle-viz never special-case a
kind outside its own definition: the built-in kinds are registered through
the same call, and so are the kinds of plugins (``eagle._plugins``), which
load lazily the first time a kind is not found here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from eagle._errors import EagleKeyError, EagleTypeError, EagleValueError
from eagle._flows import Flow, LeafFlow
from eagle._pictures import BoxPicture, Picture
from eagle._recording import recorded

if TYPE_CHECKING:
    from eagle._regions import Body
    from eagle._target import Target

PlaneTuple = tuple[str, Any, str]  # (plane name, array, role)


@dataclass(slots=True)  # not frozen: a build makes one per launch, and a frozen one costs 5x to make
class Fusible:
    """A lowering's offer to join a fused run of per-sample kernels (``eagle._fusion``).

    ``fuser(payloads, key, live)`` writes a whole run: the ``payload`` of each member in
    order, ``key(array)`` (one number per view: equal numbers, the very same view), and
    ``live(array)`` (whether the run must store that plane); it returns the run's emit
    function, as ``HostItems.emit`` (``GpuItems.emit`` for a GPU lowering).  Members
    join a run only with the same ``fuser``, the same ``samples``, planes (``planes()``: the
    (name, array, role) triples it touches, asked only when a run is formed) that are the very
    same views or disjoint, while the member before is not ``last`` (its per-sample work waits
    for a cross-sample reduction) and the run stays under the size cap (``size``: statements).
    ``whole()`` gives the planes it reads whole (every sample reads all of them: a hawk Table):
    it joins no run that writes one of them, and no later member may write one.
    ``scatters()`` gives the planes it writes whole after the run's samples (a hawk Scatter,
    a Table's gradient): no other member of the run may touch one of them.
    """

    fuser: Callable[[list[Any], Callable[[Any], int], Callable[[Any], bool]], Callable[[Any], object]]
    payload: Any
    samples: int
    planes: Callable[[], Sequence[PlaneTuple]]
    size: int = 1
    last: bool = False
    reduces: bool = False  # it reduces across samples (``Graph.reductions`` names it)
    whole: Callable[[], Sequence[Any]] = tuple
    scatters: Callable[[], Sequence[Any]] = tuple


@dataclass(frozen=True)
class HostItems:
    """What ``lower_cpu`` returns for native work: a function that appends
    libeagle items to a program.  A plain callable is a Python step instead.

    ``native`` says whether the items are native kernel calls that may run
    inside a ``branch_tasks`` stage (no Python, no conditional).

    >>> from eagle.graph import HostItems, Node, register_node_kind
    >>> def planes(x):
    ...     return [("x", x, "readwrite")]
    >>> def lower_cpu(x):      # one libeagle item: a Python callback that negates x
    ...     return HostItems(lambda program: program.callback(lambda: np.negative(x, out=x)),
    ...                      native=False)
    >>> kind = register_node_kind("doc_negate", reads=planes, writes=planes, lower_cpu=lower_cpu)
    >>> x = np.arange(3.0)
    >>> g = eagle.Graph().add_node(Node("doc_negate", x)).build().launch()
    >>> x
    array([-0., -1., -2.])
    """

    emit: Callable[[Target], object]
    native: bool = True
    fuse: Fusible | None = None  # the node may be fused with its neighbours (eagle._fusion)


@dataclass(frozen=True)
class NativeCall:
    """One call of a native kernel, as a kind's ``native`` lowering lists them.

    The executor runs it like any plan launch: ``kernel`` over samples
    ``[0, n)``, one EAGLE_BLOCK-aligned block at a time, from the team's
    threads in a ``work_share`` stage or in order on one thread in a
    ``branch_tasks`` branch.

    >>> from eagle.graph import NativeCall, Node, register_node_kind
    >>> from eagle.native import Library, compile_library
    >>> lib = Library(compile_library('''
    ... #include "eagle/eagle.h"
    ... void scale(int64_t b, int64_t e, const eagle_arg *a)
    ... { double *x = a[0].ptr, c = a[1].f64; for (int64_t i = b; i < e; ++i) x[i] *= c; }
    ... ''', name="doc_native_scale"))
    >>> def planes(p):
    ...     return [("x", p["x"], "readwrite")]
    >>> def calls(p):          # one native call over every sample: no Python at replay
    ...     return [NativeCall(lib.kernel("scale"), [p["x"], p["c"]], p["x"].size, per_sample=True,
    ...                        accesses=[(p["x"], "readwrite")])]
    >>> kind = register_node_kind("doc_scale", reads=planes, writes=planes, native=calls)
    >>> x = np.arange(3.0)
    >>> g = eagle.Graph().add_node(Node("doc_scale", {"x": x, "c": 10.0})).build().launch()
    >>> x
    array([ 0., 10., 20.])
    """

    #: An ``eagle_kernel_fn`` (``eagle.native.Library.kernel``): a plugin's own library, or any.
    kernel: Any
    #: The argument slots in order, as ``Program.kernel`` takes them: arrays by
    #: pointer, Python floats as f64, ints as i64, a filled ``eagle_arg *`` as it is.
    args: Sequence[Any]
    #: How many samples the call covers (1 for a call that does one serial step).
    n: int
    #: Reads and writes only its own sample, so a chain of such calls may be block-fused.
    per_sample: bool = False
    #: ``(array, role)`` pairs: what the call touches, which decides fusion.
    accesses: Sequence[tuple[Any, str]] = ()


@dataclass(frozen=True)
class GpuItems:
    """What ``lower_gpu`` returns: a function that appends the node's work to a
    GPU program (:class:`eagle._gpu_program.GpuProgram`: kernel, copy and
    host nodes, captured work, conditionals), which becomes one CUDA graph.

    Or ``eager``: a call the host makes between two CUDA graphs at every
    launch; the graph is cut around it and the device synchronised before
    and after (for code that reads back from the device: the ``eager_host``
    tier).  With ``stream`` (a CUstream handle) as well, the call's device work
    goes on that stream, which waits for the graph before it, and the graph
    after it waits for the stream: the host never waits (the ``eager_stream``
    tier).

    >>> from eagle.graph import GpuItems
    >>> items = GpuItems(eager=lambda: print("between two CUDA graphs"))
    >>> items.emit is None
    True
    >>> items.eager()
    between two CUDA graphs
    """

    emit: Callable[[Target], object] | None = None
    eager: Callable[[], object] | None = None
    stream: int | None = None  # with eager: the stream its device work goes on
    fuse: Fusible | None = None  # the node may be fused with its neighbours (eagle._fusion)


#: ``vjp(payload, primals, cotangents) -> {read plane name: gradient}``: the
#: contract of ``vjps=`` in eagle.diff, with the node's payload first.
Vjp = Callable[[Any, Mapping[str, Any], Mapping[str, Any]], Mapping[str, Any]]

#: ``lower(payload, target)``: a node's work, written once against the lowering-target protocol.
Lower = Callable[[Any, "Target"], object]

#: ``reference(payload, interpreter)``: what a node means, run one node at a time in NumPy on its
#: own planes (:func:`eagle.testing.interpret`); ``interpreter.body(b)`` runs a body the same way.
Reference = Callable[[Any, Any], None]


@dataclass(frozen=True)
class NodeKind:
    """A registered kind of node: what :func:`register_node_kind` made, as ``node_kind(name)`` finds it.

    >>> kind = eagle.graph.node_kind("copy")
    >>> kind.name, kind.describe()
    ('copy', "kind 'copy' registered in code by eagle._nodes")
    """

    name: str
    reads: Callable[[Any], Iterable[PlaneTuple]]
    writes: Callable[[Any], Iterable[PlaneTuple]]
    lower_cpu: Callable[[Any], Callable[[], object] | HostItems] | None
    lower_gpu: Callable[[Any], GpuItems] | None
    #: payload -> NativeCalls: the kernels of the kind's own shared library (issue 9).
    native: Callable[[Any], Sequence[NativeCall]] | None = None
    #: the reverse-mode rule eagle.diff uses for this kind, when it is installed.
    vjp: Vjp | None = None
    #: ``eagle.node(name, *args, **kwargs)`` builds the payload with this.
    make: Callable[..., Any] | None = None
    #: the distribution of the plugin that registered it (None: registered in code).
    plugin: str | None = field(default=None, compare=False)
    #: its nodes may have planes on both sides: they move data between host and device
    #: (eagle.copy), or hold other nodes, each placed on its own side.
    both_sides: bool = False
    #: a node of the kind enters one graph at most (a conditional: the step it guards is that
    #: graph's, placed and checked with it): (what the refusal of a second calls the node, what
    #: makes a new one), e.g. ``("conditional", "eagle.skippable")``; None: any number of graphs.
    one_graph: tuple[str, str] | None = None
    #: payload -> the bodies it holds (a construct's arms, a guarded step as a one-node body),
    #: whose nodes the graph checks like its own (:meth:`Node.walk`); None: it holds none.
    bodies: Callable[[Any], Sequence[Body]] | None = None
    #: ``refuse(payload, api, label)`` raises for a payload the graph cannot run right, its
    #: message starting with ``api`` and naming the node by ``label`` (None: its default name);
    #: called at add and at bind.
    refuse: Callable[[Any, str, str | None], None] | None = None
    #: what the node means, for the reference interpreter; None: its host lowering, run alone
    reference: Reference | None = None
    #: ``lower(payload, target)``: the node's work appended to any lowering target, the host
    #: program and a CUDA graph alike (:class:`eagle._target.Target`), instead of ``lower_cpu``
    #: and ``lower_gpu``; on the host it is no native work (it never runs as branch tasks).
    lower: Lower | None = None
    #: payload -> its label when the graph gives it no name; None: the kind's name.
    label: Callable[[Any], str] | None = None
    #: payload -> how eagle-viz draws it (eagle._pictures: a box, a frame, nothing); None: a box.
    picture: Callable[[Any], Picture] | None = None
    #: ``rebuild(payload, swap)`` -> the payload over swapped arrays (:class:`Swap`), its bodies
    #: rebuilt through ``swap.body``: what bind, the builder's merge and the reverse pass use;
    #: None: a node of the kind cannot be re-pointed (a function holding its own references).
    rebuild: Callable[[Any, Swap], Any] | None = None
    #: payload -> what it does to the data (eagle._flows: a leaf, a copy, a choice, a loop, ...),
    #: which eagle-diff reverses form by form; None: a leaf, reversed by ``vjp``.
    flow: Callable[[Any], Flow] | None = None
    #: payload -> how many samples it spans (None: unknown, so its stage work-shares); no hook:
    #: the payload's own ``samples`` attribute where it has one, as plugins written before it say.
    samples: Callable[[Any], int | None] | None = None
    #: payload -> the dispatch groups its kernels declare, by name (eagle.plan.DispatchGroup);
    #: None: it declares none (a kind holding bodies need not say: the graph walks into them).
    dispatch_groups: Callable[[Any], Mapping[str, Any]] | None = None
    #: ``with_dispatch(payload, policies)`` -> the payload with the groups named in ``policies``
    #: ({group: policy}) run by them (``Graph.build(dispatch=...)``); with ``dispatch_groups``.
    with_dispatch: Callable[[Any, Mapping[str, str]], Any] | None = None
    #: for a kind with no CPU lowering: what a node of it in a CPU build is to do instead, which
    #: the build's refusal says (None: register a CPU lowering, or build for the GPU)
    cpu_refusal: str | None = None

    def same_as(self, other: NodeKind) -> bool:
        return all(getattr(self, f.name) == getattr(other, f.name) for f in fields(self) if f.compare)

    def describe(self) -> str:
        """``kind 'scan' of plugin eagle-scan``, or where its reads function was written."""
        if self.plugin:
            return f"kind {self.name!r} of plugin {self.plugin}"
        return f"kind {self.name!r} registered in code by {_module_of(self.reads)}"

    def bodies_of(self, payload: Any) -> Sequence[Body]:
        return () if self.bodies is None else self.bodies(payload)

    def label_of(self, payload: Any) -> str:
        return self.name if self.label is None else self.label(payload)

    def picture_of(self, payload: Any) -> Picture:
        return BoxPicture() if self.picture is None else self.picture(payload)

    def flow_of(self, payload: Any) -> Flow:
        return LeafFlow() if self.flow is None else self.flow(payload)

    def samples_of(self, payload: Any) -> int | None:
        if self.samples is None:
            return getattr(payload, "samples", None)
        return self.samples(payload)

    def host_lowering(self, payload: Any, label: str) -> Callable[[], object] | HostItems | None:
        """What the host runs for a node of this kind: ``lower_cpu``'s answer, or its ``lower``
        onto the host program, else the native calls."""
        if self.lower_cpu is not None:
            return self.lower_cpu(payload)
        if self.lower is not None:
            return HostItems(lambda program: self.lower(payload, program), native=False)
        if self.native is None:
            return None
        calls = list(self.native(payload))
        for call in calls:
            _check_native_call(call, self, label)

        def emit(program: Target) -> None:
            for call in calls:
                program.kernel(call.kernel, call.args, call.n, per_sample=call.per_sample,
                               accesses=call.accesses)

        return HostItems(emit, native=True)

    @property
    def lowers_on_device(self) -> bool:
        """Whether the kind gives GPU work (``lower_gpu`` or ``lower``)."""
        return self.lower_gpu is not None or self.lower is not None

    def device_lowering(self, payload: Any) -> GpuItems:
        """What a CUDA graph runs for a node of this kind (:attr:`lowers_on_device`)."""
        if self.lower_gpu is not None:
            return self.lower_gpu(payload)
        return GpuItems(lambda gpu: self.lower(payload, gpu))


def _module_of(fn: object) -> str:
    return getattr(fn, "__module__", None) or "?"


def _check_native_call(call: object, kind: NodeKind, label: str) -> None:
    from eagle._core import ffi

    where = f"eagle.Graph.build: node {label!r}: the native lowering of {kind.describe()}"
    if not isinstance(call, NativeCall):
        raise EagleTypeError(f"{where} gave {type(call).__name__}; it returns eagle.graph.NativeCall items")
    if not (isinstance(call.kernel, ffi.CData) and ffi.typeof(call.kernel) is ffi.typeof("eagle_kernel_fn")):
        raise EagleTypeError(f"{where} gave kernel {call.kernel!r}; a kernel is an eagle_kernel_fn, e.g. "
                        "eagle.native.Library(path).kernel(symbol)")


class Swap:
    """What a kind's ``rebuild`` is given: ``swap(a)`` is the array that replaces ``a`` (``a`` itself
    when none does), ``swap.body(b)`` and ``swap.node(n)`` rebuild what a payload holds through
    the held nodes' own kinds.

    ``in_place``: a held node keeps its identity and gets the new payload (the builder's merge and
    bind, where waits and the recorder hold nodes); else held nodes and bodies are new ones.
    ``refuse(node, names)`` raises for a node whose kind has no ``rebuild`` but which holds the
    swapped planes ``names``.

    >>> x, y = np.zeros(3), np.ones(3)
    >>> swap = eagle.graph.Swap(lambda a: y if a is x else a)
    >>> node = swap.node(eagle.copy(np.arange(3.0), into=x))
    >>> node.payload.dst is y
    True
    """

    def __init__(self, replace: Callable[[Any], Any], *, in_place: bool = False,
                 refuse: Callable[[Node, list[str]], None] | None = None) -> None:
        self._replace = replace
        self.in_place = in_place
        self._refuse = refuse or _cannot_rebuild

    def __call__(self, array: Any) -> Any:
        return self._replace(array)

    def node(self, node: Node) -> Node:
        kind = kind_of(node.kind)
        if kind.rebuild is None:
            swapped = [name for name, a, _ in node.planes() if self(a) is not a]
            if swapped:
                self._refuse(node, swapped)
            return node
        payload = kind.rebuild(node.payload, self)
        if self.in_place:
            node.payload = payload
            return node
        return Node(node.kind, payload)

    def body(self, body: Body) -> Body:
        steps = [self.node(step) if isinstance(step, Node) else self._fork(step)
                 for step in body.steps]
        if self.in_place:
            return body  # its nodes (and those of its forks) have their new payloads
        return type(body)(steps)

    def _fork(self, fork: Any) -> Any:
        return type(fork)([self.body(b) for b in fork.branches])


def _cannot_rebuild(node: Node, swapped: list[str]) -> None:
    raise EagleValueError(f"eagle.graph.Swap: node {node.default_label()!r} of "
                          f"{kind_of(node.kind).describe()} "
                     f"holds {', '.join(swapped)}, which are swapped, and the kind has no rebuild=; "
                     "register it with rebuild=")


_REGISTRY: dict[str, NodeKind] = {}


@dataclass
class _Finder:
    """How :func:`kind_of` finds a kind not registered in code.  eagle._plugins installs its
    loader here when eagle is imported, so the table never imports the loader: ``find()`` loads
    the installed plugins (the first time) and returns what loading left out, for the message."""

    find: Callable[[], str] = lambda: ""


FINDER = _Finder()

#: The descriptive hooks a plugin's registry passes through by name.
HOOKS = frozenset({"one_graph", "bodies", "refuse", "label", "picture", "rebuild", "flow", "samples",
                   "cpu_refusal"})


def add_kind(kind: NodeKind, table: dict[str, NodeKind], api: str) -> NodeKind:
    """Put ``kind`` in ``table``: the same kind again is fine, a different one under its name is refused."""
    if kind.lower_cpu is not None and kind.native is not None:
        raise EagleValueError(f"{api}: {kind.describe()} gives both lower_cpu and native; give one: native "
                         "for kernels of a shared library, lower_cpu for anything else")
    if kind.lower is not None and (kind.lower_cpu, kind.lower_gpu, kind.native) != (None, None, None):
        raise EagleValueError(f"{api}: {kind.describe()} gives lower and also lower_cpu, lower_gpu or "
                              "native; "
                         "give lower alone (work written once against the target) or the others")
    taken = table.get(kind.name)
    if taken is not None and not taken.same_as(kind):
        raise EagleValueError(f"{api}: a different kind is already registered as {kind.name!r} "
                         f"({taken.describe()}); pick another name for {kind.describe()}")
    table.setdefault(kind.name, kind)
    return table[kind.name]


def register_node_kind(name: str, *, reads: Callable[[Any], Iterable[PlaneTuple]],
                       writes: Callable[[Any], Iterable[PlaneTuple]],
                       lower_gpu: Callable[[Any], GpuItems] | None = None,
                       lower_cpu: Callable[[Any], Callable[[], object] | HostItems] | None = None,
                       native: Callable[[Any], Sequence[NativeCall]] | None = None,
                       vjp: Vjp | None = None, make: Callable[..., Any] | None = None,
                       both_sides: bool = False, one_graph: tuple[str, str] | None = None,
                       bodies: Callable[[Any], Sequence[Body]] | None = None,
                       refuse: Callable[[Any, str, str | None], None] | None = None,
                       reference: Reference | None = None, lower: Lower | None = None,
                       label: Callable[[Any], str] | None = None,
                       picture: Callable[[Any], Picture] | None = None,
                       rebuild: Callable[[Any, Swap], Any] | None = None,
                       flow: Callable[[Any], Flow] | None = None,
                       samples: Callable[[Any], int | None] | None = None,
                       dispatch_groups: Callable[[Any], Mapping[str, Any]] | None = None,
                       with_dispatch: Callable[[Any, Mapping[str, str]], Any] | None = None,
                       cpu_refusal: str | None = None) -> NodeKind:
    """Register a kind of node under ``name``: what a plugin's ``register_node_kinds`` hook does, in code.

    :param reads: payload -> ``(plane name, array, role)`` tuples it reads.
    :param writes: payload -> the tuples it writes (role ``"write"`` or ``"readwrite"``).
    :param lower_gpu: payload -> :class:`GpuItems`: the node's work in a CUDA graph, when its
        planes are device arrays.  A node whose planes all live on the host runs its CPU
        lowering as a host node of the graph, with no ``lower_gpu``.
    :param lower_cpu: payload -> a zero-argument callable (a Python step) or :class:`HostItems`.
    :param native: payload -> :class:`NativeCall` items (instead of ``lower_cpu``): kernels that
        run like plan launches, also inside a ``branch_tasks`` stage.
    :param vjp: ``vjp(payload, primals, cotangents) -> {read name: gradient}`` for eagle.diff.
    :param make: builds the payload for ``eagle.node(name, ...)``.
    :param both_sides: one node may have planes on the host and on the device: it moves data
        between them (like ``eagle.copy``), or holds other nodes, each placed on its own.
    :param one_graph: ``(noun, maker)``: a node of the kind enters one graph at most; adding it
        to a second is refused, calling it the ``noun`` and naming ``maker`` to make a new one.
    :param bodies: payload -> the :class:`eagle.Body` items it holds, whose nodes the graph
        checks like its own and the builder, eagle-diff and eagle-viz walk into.
    :param refuse: ``refuse(payload, api, label)`` raises for a payload the graph cannot run
        right; its message starts with ``api`` and names the node by ``label`` (None for a
        node held inside another: its default name).
    :param reference: ``reference(payload, interpreter)``: what a node means, for the reference
        interpreter (:func:`eagle.testing.interpret`), written as plainly as it can be in NumPy.
        Without one, the interpreter runs the node's host lowering alone.
    :param lower: ``lower(payload, target)`` appends the node's work to a lowering target through
        its protocol (``stage``, ``callback``, ``copy``, ``reduce``, ``if_``, ...), the host
        program and a CUDA graph alike: written once, instead of ``lower_cpu`` and ``lower_gpu``.
    :param label: payload -> the node's label when it is added without a name (default: ``name``).
    :param picture: payload -> how eagle-viz draws it: ``BoxPicture(role, tag)``, a
        ``FramePicture`` around its bodies (or its own box), or ``NoPicture()`` (default: a box).
    :param rebuild: ``rebuild(payload, swap)`` -> the payload over swapped arrays: ``swap(a)`` is
        what replaces array ``a``, ``swap.body(b)`` rebuilds a body it holds.  ``Graph.bind`` (the
        builder) and eagle.diff use it; without it a node touching a swapped array is refused.
    :param flow: payload -> what it does to the data: ``LeafFlow()`` (the default: reversed by
        ``vjp``), ``CopyFlow``, ``ReduceFlow``, ``RowFlow``, ``ChoiceFlow(cell, keys, arms)``,
        ``LoopFlow(cell, kind, cap, body)``, ``InnerFlow(node)``, ``NoFlow()``: eagle.diff
        reverses each form, so a kind holding bodies is differentiated through them.
    :param samples: payload -> how many samples a node spans (default: the payload's
        ``samples`` attribute, else unknown); a stage of native nodes that all say so runs as
        branch tasks when they are few.
    :param dispatch_groups: payload -> ``{name: eagle.plan.DispatchGroup}``, the dispatch groups
        its kernels declare (default: none).
    :param with_dispatch: ``with_dispatch(payload, policies)`` -> the payload with those groups
        run by those policies: what ``Graph.build(dispatch=...)`` asks of a node with groups.
    :param cpu_refusal: for a kind with no CPU lowering, what a node of it in a CPU build is to
        do instead: the build refuses the node with these words.

    Registering the same kind twice is fine; a different kind under a taken
    name is refused with both named.

    >>> from eagle.graph import Node, register_node_kind
    >>> def planes(p):
    ...     return [("x", p["x"], "readwrite")]
    >>> def clip(p):           # what the host runs at every replay
    ...     return lambda: np.clip(p["x"], p["lo"], p["hi"], out=p["x"])
    >>> kind = register_node_kind("doc_clip", reads=planes, writes=planes, lower_cpu=clip)
    >>> x = np.linspace(-2.0, 2.0, 5)
    >>> g = eagle.Graph().add_node(Node("doc_clip", {"x": x, "lo": -1.0, "hi": 1.0})).build().launch()
    >>> x
    array([-1., -1.,  0.,  1.,  1.])

    A kind holding a body says so, and how it rebuilds, draws and reverses; bind, eagle.diff and
    eagle.viz work with it through these hooks alone (here: repeat the body ``count[0]`` times):

    >>> from eagle.graph import FramePicture, LoopFlow
    >>> def planes(p, reading):    # the count cell, and what the body touches
    ...     count, body = p
    ...     inner = [t for t in body.planes() if (t[2] == "read") == reading]
    ...     return [("count", count, "read"), *inner] if reading else inner
    >>> def lower(p, target):      # a loop item around the body, on the host or a GPU alike
    ...     target.loop(p[0], p[1].lower(target) or target.body(), "count", -1)
    >>> kind = register_node_kind(
    ...     "doc_repeat", reads=lambda p: planes(p, True), writes=lambda p: planes(p, False),
    ...     lower=lower, bodies=lambda p: [p[1]], rebuild=lambda p, swap: (swap(p[0]), swap.body(p[1])),
    ...     picture=lambda p: FramePicture("repeat count times", "loop", (p[1],)),
    ...     flow=lambda p: LoopFlow(p[0], "count", -1, p[1]))
    >>> y, count = np.zeros(1), np.array([3], np.uint32)
    >>> body = eagle.Body([eagle.opaque(lambda: np.add(y, 1.0, out=y), reads={"y": y}, writes={"y": y})])
    >>> node = Node("doc_repeat", (count, body))
    >>> g = eagle.Graph().add_node(node).build().launch()
    >>> y, [n.kind for n in node.walk()]
    (array([3.]), ['doc_repeat', 'opaque'])
    """
    kind = NodeKind(name, reads, writes, lower_cpu, lower_gpu, native, vjp, make, both_sides=both_sides,
                    one_graph=one_graph, bodies=bodies, refuse=refuse, reference=reference, lower=lower,
                    label=label, picture=picture, rebuild=rebuild, flow=flow, samples=samples,
                    dispatch_groups=dispatch_groups, with_dispatch=with_dispatch, cpu_refusal=cpu_refusal)
    return add_kind(kind, _REGISTRY, "eagle.graph.register_node_kind")


def kind_of(name: str) -> NodeKind:
    """The kind registered as ``name``; plugins load the first time a name is not found.

    ``eagle.graph.node_kind`` is this function.

    >>> eagle.graph.node_kind("reduce").name
    'reduce'
    >>> try:
    ...     eagle.graph.node_kind("no such kind")
    ... except KeyError as err:
    ...     print(str(err)[:60])
    "eagle.graph.Node: no node kind 'no such kind' is registered
    """
    kind = _REGISTRY.get(name)
    if kind is None:
        note = FINDER.find()
        kind = _REGISTRY.get(name)
        if kind is None:
            raise EagleKeyError(f"eagle.graph.Node: no node kind {name!r} is registered; "
                           f"known kinds: {', '.join(sorted(_REGISTRY))}{note}") from None
    return kind


def node(kind: str, *args: Any, **kwargs: Any) -> Node:
    """A node of ``kind`` whose payload the kind builds from the arguments (its ``make``).

    This is how a plugin's kind is used without importing the plugin:
    ``eagle.node("scan", x, out=y)``.

    >>> from eagle.graph import register_node_kind
    >>> def planes(p):
    ...     return [("x", p["x"], "write")]
    >>> kind = register_node_kind("doc_fill", reads=lambda p: [], writes=planes,
    ...                           lower_cpu=lambda p: lambda: p["x"].fill(p["value"]),
    ...                           make=lambda x, value=0.0: {"x": x, "value": value})
    >>> x = np.zeros(3)
    >>> g = eagle.Graph().add_node(eagle.node("doc_fill", x, value=7.0)).build().launch()
    >>> x
    array([7., 7., 7.])
    """
    found = kind_of(kind)
    if found.make is None:
        raise EagleTypeError(f"eagle.node: {found.describe()} has no make=; build its payload yourself: "
                        f"eagle.graph.Node({kind!r}, payload)")
    return recorded(Node(kind, found.make(*args, **kwargs)))


class Node:
    """A node of a graph: a registered kind and its payload.

    The node functions (:func:`eagle.opaque`, :func:`eagle.reduce`, ...) make
    them; a kind registered with :func:`register_node_kind` is made directly.

    >>> node = eagle.reduce(np.arange(3.0), np.zeros(1))
    >>> node.kind, [(name, role) for name, _, role in node.planes()]
    ('reduce', [('x', 'read'), ('out', 'write')])
    """

    __slots__ = ("_graph", "kind", "payload")

    def __init__(self, kind: str, payload: Any) -> None:
        kind_of(kind)  # refuse an unknown kind here, not at build
        self.kind = kind
        self.payload = payload
        self._graph: Callable[[], object] | None = None  # a weak reference to the graph it is in

    def planes(self) -> list[PlaneTuple]:
        """Every (name, array, role) the node touches, reads first."""
        k = kind_of(self.kind)
        return [*k.reads(self.payload), *k.writes(self.payload)]

    def walk(self) -> Iterator[Node]:
        """This node, then every node of the bodies it holds (its kind's ``bodies``), depth first."""
        yield self
        for body in self.bodies():
            for node in body.nodes():
                yield from node.walk()

    def bodies(self) -> Sequence[Body]:
        """The bodies this node holds (its kind's ``bodies``)."""
        return kind_of(self.kind).bodies_of(self.payload)

    def default_label(self) -> str:
        """Its label when added without a name: its kind's ``label``, else the kind's name.

        >>> eagle.reduce(np.arange(3.0), np.zeros(1)).default_label()
        'reduce'
        """
        return kind_of(self.kind).label_of(self.payload)

    def picture(self) -> Picture:
        """How eagle-viz draws it (its kind's ``picture``)."""
        return kind_of(self.kind).picture_of(self.payload)

    def flow(self) -> Flow:
        """What it does to the data (its kind's ``flow``)."""
        return kind_of(self.kind).flow_of(self.payload)

    def samples(self) -> int | None:
        """How many samples it spans (its kind's ``samples``); None: unknown."""
        return kind_of(self.kind).samples_of(self.payload)

    def refuse(self, api: str, label: str | None = None) -> None:
        """Raise, through its kind's ``refuse``, where this node or one it holds cannot run right."""
        kind = kind_of(self.kind)  # looked up once: this runs at every node's add
        if kind.refuse is not None:
            kind.refuse(self.payload, api, label)
        for body in kind.bodies_of(self.payload):  # then the nodes it holds, depth first, as walk()
            for node in body.nodes():
                node.refuse(api)

    def __repr__(self) -> str:
        """Its kind and payload, an array in it by its type, shape and dtype, never its elements.

        >>> eagle.reduce(np.arange(1000.0), np.zeros(1), op="max")  # doctest: +NORMALIZE_WHITESPACE
        Node('reduce', Reduce(x=ndarray(shape=(1000,), dtype=float64),
                              out=ndarray(shape=(1,), dtype=float64), op='max'))
        """
        return f"Node({self.kind!r}, {brief(self.payload)})"


def brief(value: Any) -> str:
    """``repr(value)`` with every array in it (inside dataclasses, dicts, lists and tuples) shown
    as ``ndarray(shape=(n,), dtype=float64)``: a node's repr must fit on a screen."""
    if hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, np.generic):
        return f"{type(value).__name__}(shape={tuple(value.shape)}, dtype={value.dtype})"
    if is_dataclass(value) and not isinstance(value, type):
        shown = (f"{f.name}={brief(getattr(value, f.name))}" for f in fields(value) if f.repr)
        return f"{type(value).__name__}({', '.join(shown)})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {brief(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        inner = ", ".join(brief(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value)
